//! The long-lived remote session: corral-remote's `RemoteSession` speaking
//! to `corral-cli serve` over a real sshd on 127.0.0.1 (ssh.rs starts
//! it), as the window and `exec` do for a remote project.

use super::ssh::{processes, project, wait_for, Sshd};
use crate::common::{Home, Scripted};
use corral_remote::{Remote, RemoteSession};
use serde_json::{json, Value};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};

pub fn corral_cli_binary() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_corral-cli"))
}

/// A session on `folder` through the test's sshd, corral-cli copied there
/// when missing; in `mode`, its checkpoints in the remote's data folder.
pub fn open(sshd: &Sshd, folder: &std::path::Path, mode: &str) -> RemoteSession {
    // The multiplexed connection first, by another command: the session's
    // ssh is then the only one naming the folder.
    let mut first = Remote::parse("corral-test:/").unwrap().unwrap();
    first.config = Some(sshd.path("ssh_config"));
    let made = first.command(&["true"]).unwrap().status().unwrap();
    assert!(made.success());
    let mut remote = Remote::parse(&format!("ssh://corral-test{}", folder.display()))
        .unwrap()
        .unwrap();
    // The ssh this side runs reads the test's config.
    remote.config = Some(sshd.path("ssh_config"));
    let serve = ["--mode", mode, "--no-lsp"].map(String::from).to_vec();
    RemoteSession::open(remote, serve, Some(corral_cli_binary())).unwrap()
}

#[test]
fn a_missing_corral_cli_is_copied_only_when_the_caller_says_the_user_agreed() {
    let sshd = Sshd::start();
    let there = project();
    let mut remote = Remote::parse(&format!("corral-test:{}", there.path().display()))
        .unwrap()
        .unwrap();
    remote.config = Some(sshd.path("ssh_config"));
    let installed = sshd
        .path("remote-cache/corral/bin")
        .join(format!("corral-cli-{}", env!("CARGO_PKG_VERSION")));
    let refused = RemoteSession::open(remote.clone(), vec![], None)
        .err()
        .expect("no session without corral-cli there");
    assert_eq!(
        refused.code,
        corral_tools::ErrorCode::ApprovalRequired,
        "{refused:?}"
    );
    assert!(!installed.exists());
    let session = RemoteSession::open(remote, vec![], Some(corral_cli_binary())).unwrap();
    assert!(installed.exists());
    let specs = runtime()
        .block_on(session.invoke("tool_specs", json!({}), None))
        .unwrap();
    assert!(!specs.as_array().unwrap().is_empty());
}

/// The fixture MCP server copied into `project` (a server's sandbox has a
/// /tmp of its own), as the app's settings name it.
pub fn fixture_server(project: &std::path::Path) -> Value {
    let script = project.join(".fixture/mcp_server.py");
    std::fs::create_dir_all(script.parent().unwrap()).unwrap();
    std::fs::copy(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../corral-testkit/fixtures/mcp_server.py"),
        &script,
    )
    .unwrap();
    json!({ "name": "fixture", "command": "/usr/bin/python3", "args": [script],
        "timeout_secs": 5, "trusted": true })
}

pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

#[test]
fn the_session_checks_runs_and_streams_the_projects_calls_over_one_connection() {
    let sshd = Sshd::start();
    let there = project();
    let session = open(&sshd, there.path(), "ask");
    let rt = runtime();
    let invoke = |command: &str, args: Value| rt.block_on(session.invoke(command, args, None));

    let specs = invoke("tool_specs", json!({})).unwrap();
    let names: Vec<&str> = specs
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| s["name"].as_str())
        .collect();
    assert!(
        names.contains(&"read_file") && names.contains(&"exec_shell"),
        "{names:?}"
    );

    let read = invoke(
        "call_tool",
        json!({"name": "read_file", "input": {"path": "README.md"}}),
    )
    .unwrap();
    assert!(
        read["content"].as_str().unwrap().contains("Says hello."),
        "{read}"
    );

    // A write asks in `ask`; it runs with the user's answer, checkpointed there.
    let input = json!({"path": "notes.txt", "content": "over ssh\n"});
    let ticket = invoke("check_call", json!({"tool": "write_file", "input": input})).unwrap();
    assert_eq!(ticket["decision"], "ask", "{ticket}");
    let refused = invoke("call_tool", json!({"name": "write_file", "input": input})).unwrap_err();
    assert_eq!(refused.code, corral_tools::ErrorCode::ApprovalRequired);
    assert!(!there.path().join("notes.txt").exists());
    let written = invoke(
        "run_call",
        json!({"ticket": ticket["ticket"], "approval": {"scope": "once"}}),
    )
    .unwrap();
    assert_eq!(written["created"], true, "{written}");
    assert_eq!(
        std::fs::read_to_string(there.path().join("notes.txt")).unwrap(),
        "over ssh\n"
    );
    assert!(
        std::fs::read_dir(sshd.path("remote-data")).unwrap().count() > 0,
        "the checkpoint was taken in the remote's data folder"
    );

    // A grant of a conversation lasts as long as the session does.
    let node = json!({"command": "node", "args": ["-e", "for (const n of [1, 2, 3]) console.log('line ' + n)"]});
    let ticket = invoke(
        "check_call",
        json!({"tool": "exec_shell", "input": node, "conversation": "c1"}),
    )
    .unwrap();
    let grant = json!({"kind": "command", "command": "node", "args": node["args"]});
    let seen = Arc::new(Mutex::new(String::new()));
    let on_event = {
        let seen = seen.clone();
        move |event: Value| {
            assert_eq!(event["stream"], "stdout", "{event}");
            seen.lock()
                .unwrap()
                .push_str(event["data"].as_str().unwrap());
        }
    };
    let ran = rt
        .block_on(session.invoke(
            "run_call",
            json!({"ticket": ticket["ticket"], "run_id": "r1",
                "approval": {"scope": "conversation", "conversation": "c1", "grant": grant}}),
            Some(&on_event),
        ))
        .unwrap();
    assert_eq!(ran["exit_code"], 0, "{ran}");
    assert_eq!(*seen.lock().unwrap(), "line 1\nline 2\nline 3\n");
    let grants = invoke("conversation_grants", json!({"conversation": "c1"})).unwrap();
    assert_eq!(grants.as_array().unwrap().len(), 1, "{grants}");
    let again = invoke(
        "check_call",
        json!({"tool": "exec_shell", "input": node, "conversation": "c1"}),
    )
    .unwrap();
    assert_eq!(again["decision"], "allow", "{again}");

    // The index is built there and kept live by its watch; the folders
    // changed on disk are told.
    let ready = || invoke("search_index_status", json!({})).unwrap()["state"] == "ready";
    wait_for("the remote's index", ready);
    let counter = invoke("tree_changes", json!({"since": 0})).unwrap()["counter"].clone();
    std::fs::write(
        there.path().join("src/lib.rs"),
        "pub fn remotely_indexed() {}\n",
    )
    .unwrap();
    wait_for("the change told", || {
        let changes = invoke("tree_changes", json!({"since": counter})).unwrap();
        changes["folders"]
            .as_array()
            .unwrap()
            .contains(&json!("src"))
    });
    wait_for("the new file searchable", || {
        let found = invoke(
            "call_tool",
            json!({"name": "search_files", "input": {"query": "remotely_indexed"}}),
        )
        .unwrap();
        found.to_string().contains("src/lib.rs")
    });

    // One ssh carries all of it.
    let root = there.path().display().to_string();
    assert_eq!(processes("ssh", &root).len(), 1);
}

#[test]
fn a_path_outside_the_root_is_refused_through_the_session() {
    let sshd = Sshd::start();
    let there = project();
    std::fs::write(there.path().parent().unwrap().join("secret.txt"), "no").ok();
    let session = open(&sshd, there.path(), "full_auto");
    let rt = runtime();
    use corral_tools::ErrorCode::{ArgumentNotAllowed, PathOutsideRoot};
    for (command, args, code) in [
        (
            "call_tool",
            json!({"name": "read_file", "input": {"path": "../secret.txt"}}),
            PathOutsideRoot,
        ),
        (
            "check_call",
            json!({"tool": "write_file", "input": {"path": "/etc/corral-test", "content": "x"}}),
            PathOutsideRoot,
        ),
        // A command's argument rules say which argument, and why.
        (
            "call_tool",
            json!({"name": "exec_shell", "input": {"command": "ls", "args": ["/etc"]}}),
            ArgumentNotAllowed,
        ),
    ] {
        let refused = rt.block_on(session.invoke(command, args.clone(), None));
        let error = refused.expect_err(&args.to_string());
        assert_eq!(error.code, code, "{args}: {error:?}");
        if code == ArgumentNotAllowed {
            assert_eq!(
                error.details["reason"], "the path is outside the project folder",
                "{error:?}"
            );
        }
    }
    assert!(!std::path::Path::new("/etc/corral-test").exists());
}

#[test]
fn a_connection_killed_during_a_command_reports_it_interrupted_ends_it_there_and_the_next_call_reconnects(
) {
    let sshd = Sshd::start();
    let there = project();
    let session = open(&sshd, there.path(), "full_auto");
    let rt = runtime();
    let servers = json!({ "servers": [{ "config": fixture_server(there.path()), "vars": [] }] });
    let status = rt
        .block_on(session.invoke_kept("use_mcp_servers", servers))
        .unwrap();
    assert_eq!(status[0]["state"], "running", "{status}");
    // A background command, as the Processes panel shows it.
    let background_marker = format!("corral-session-background-{}", std::process::id());
    let background = json!({"command": "node", "args": ["-e", "setInterval(() => console.log('still here'), 100)", &background_marker], "background": true});
    let started = rt
        .block_on(session.invoke(
            "call_tool",
            json!({"name": "exec_shell", "input": background}),
            None,
        ))
        .unwrap();
    let run_id = started["run_id"].as_str().unwrap().to_string();
    let listed = rt
        .block_on(session.invoke("list_processes", json!({}), None))
        .unwrap();
    assert_eq!(listed[0]["run_id"], run_id.as_str(), "{listed}");
    wait_for("the background command's output", || {
        let output = rt
            .block_on(session.invoke("process_output", json!({"run_id": run_id}), None))
            .unwrap();
        output["output"].as_str().unwrap().contains("still here")
    });
    let root = there.path().display().to_string();
    let marker = format!("corral-session-drop-{}", std::process::id());
    let input = json!({"command": "node", "args": ["-e", "setInterval(() => console.log('tick'), 100)", &marker], "timeout_secs": 120});
    let ticks = Arc::new(Mutex::new(0));
    let on_event = {
        let ticks = ticks.clone();
        move |_: Value| *ticks.lock().unwrap() += 1
    };
    let running = session.invoke(
        "call_tool",
        json!({"name": "exec_shell", "input": input, "run_id": "long"}),
        Some(&on_event),
    );
    let streamed = ticks.clone();
    let killer = std::thread::spawn(move || {
        wait_for("the command's output", || *streamed.lock().unwrap() > 0);
        assert!(!processes("node", &marker).is_empty());
        let ssh = processes("ssh", &root);
        assert_eq!(ssh.len(), 1, "one ssh carries the session");
        Command::new("kill")
            .args(["-KILL", &ssh[0].to_string()])
            .status()
            .unwrap();
        marker
    });
    let error = rt.block_on(running).unwrap_err();
    let marker = killer.join().unwrap();
    assert_eq!(error.code, corral_tools::ErrorCode::Io, "{error:?}");
    assert!(error.retryable);
    assert_eq!(error.details["interrupted"], true, "{error:?}");
    assert!(error.message.contains("failed or was lost"), "{error:?}");
    // serve saw its stdin close, cancelled the command and stopped its
    // background command.
    wait_for("the remote command to end", || {
        processes("node", &marker).is_empty()
    });
    wait_for("the background command to end", || {
        processes("node", &background_marker).is_empty()
    });

    // The next call connects anew, to a session given the servers again.
    let status = rt
        .block_on(session.invoke("mcp_status", json!({}), None))
        .unwrap();
    assert_eq!(status[0]["name"], "fixture", "{status}");
    assert_eq!(status[0]["state"], "running", "{status}");
    let read = rt
        .block_on(session.invoke(
            "call_tool",
            json!({"name": "read_file", "input": {"path": "README.md"}}),
            None,
        ))
        .unwrap();
    assert!(read["content"].as_str().unwrap().contains("Says hello."));

    // Stop in the Processes panel reaches a background command there.
    let background = json!({"command": "node", "args": ["-e", "setInterval(() => {}, 100)", &background_marker], "background": true});
    let started = rt
        .block_on(session.invoke(
            "call_tool",
            json!({"name": "exec_shell", "input": background}),
            None,
        ))
        .unwrap();
    let stopped = rt
        .block_on(session.invoke("stop_process", json!({"run_id": started["run_id"]}), None))
        .unwrap();
    assert_eq!(stopped["running"], false, "{stopped}");
    wait_for("the stopped command to end", || {
        processes("node", &background_marker).is_empty()
    });
}

#[test]
fn exec_runs_its_task_on_a_remote_root_with_the_model_and_history_here() {
    let sshd = Sshd::start();
    let server = Scripted::start(json!([
        { "tools": [{ "name": "write_file", "input": { "path": "b.txt", "content": "written there\n" } }] },
        { "tools": [{ "name": "read_file", "input": { "path": "../secret.txt" } }] },
        { "tools": [{ "name": "fixture__echo", "input": { "text": "from over there" } }] },
        { "text": "Written." },
    ]));
    let home = Home::new(&server.base_url());
    let there = project();
    std::fs::write(there.path().parent().unwrap().join("secret.txt"), "no").ok();
    // The user's MCP server, added in the app: it runs on the remote.
    let servers = json!({ "servers": [fixture_server(there.path())] });
    let config = home.dir.path().join("config/dev.corral.desktop/mcp.json");
    std::fs::write(config, servers.to_string()).unwrap();
    let root = format!("ssh://corral-test{}", there.path().display());
    let out = Command::new(env!("CARGO_BIN_EXE_corral-cli"))
        .env("HOME", home.dir.path())
        .env("XDG_CONFIG_HOME", home.dir.path().join("config"))
        .env("XDG_DATA_HOME", home.dir.path().join("data"))
        .env("CORRAL_NO_KEYCHAIN", "1")
        .env(corral_remote::CONFIG_VAR, sshd.path("ssh_config"))
        .args([
            "exec",
            "--root",
            &root,
            "--mode",
            "full_auto",
            "--install-remote",
        ])
        .args(["--no-lsp", "--json", "Write b.txt"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let requests = server.finish();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let events: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let results: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"] == "tool_result")
        .collect();
    assert_eq!(results.len(), 3, "{events:?}");
    assert_eq!(results[0]["status"], "done", "{}", results[0]);
    assert_eq!(
        std::fs::read_to_string(there.path().join("b.txt")).unwrap(),
        "written there\n"
    );
    // The remote refused the path outside its root.
    assert!(
        results[1].to_string().contains("path_outside_root"),
        "{}",
        results[1]
    );
    assert_eq!(results[2]["status"], "done", "{}", results[2]);
    assert!(
        results[2].to_string().contains("from over there"),
        "{}",
        results[2]
    );
    assert!(requests[0].to_string().contains("fixture__echo"));
    assert_eq!(requests.len(), 4);
    // The checkpoint is the remote's; the conversation is kept here, under
    // the remote folder's name.
    assert!(std::fs::read_dir(sshd.path("remote-data")).unwrap().count() > 0);
    let listed = home.history().list(&root).unwrap();
    assert_eq!(listed.len(), 1, "{listed:?}");
}
