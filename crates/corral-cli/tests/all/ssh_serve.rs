//! What a remote session adds to the calls, against a real sshd on
//! 127.0.0.1 (ssh.rs starts it): a bounded wait for the connection (and a
//! port that never speaks), the checkpoint panel's commands answered
//! there, the settings sent from here the only ones there (and exec
//! sending those kept here for the folder), a
//! background server's port forwarded here over the same connection, and
//! none for ports a hostile remote lists for a run not started here.

use super::ssh::{processes, project, wait_for, Sshd};
use super::ssh_session::{corral_cli_binary, open, runtime};
use crate::common::{Home, Scripted};
use corral_remote::{Remote, RemoteSession};
use serde_json::{json, Value};
use std::net::TcpListener;
use std::os::unix::fs::PermissionsExt;
use std::time::{Duration, Instant};

#[test]
fn a_host_that_accepts_and_never_speaks_fails_within_the_limit() {
    // The kernel accepts the connection for the listener held here; nothing
    // ever answers ssh's greeting.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let mut remote = Remote::parse(&format!("ssh://127.0.0.1:{port}/srv/app"))
        .unwrap()
        .unwrap();
    remote.config = Some("/dev/null".into());
    remote.connect_timeout = Duration::from_secs(2);
    let started = Instant::now();
    let error = RemoteSession::open(remote, vec![], None)
        .err()
        .expect("no session with a host that never speaks");
    let took = started.elapsed();
    assert!(took < Duration::from_secs(8), "took {took:?}");
    assert_eq!(error.code, corral_tools::ErrorCode::Io, "{error:?}");
    assert!(error.retryable, "{error:?}");
    assert!(error.message.contains("127.0.0.1"), "{error:?}");
    drop(listener);
}

#[test]
fn a_remote_that_never_says_ready_is_given_up_within_the_limit() {
    let sshd = Sshd::start();
    let there = project();
    // A corral-cli of this version that never answers: it reads its stdin
    // until the connection ends.
    let fake = sshd.path("remote-bin/corral-cli");
    std::fs::write(
        &fake,
        format!(
            "#!/bin/sh\nif [ \"$1\" = --version ]; then echo 'corral-cli {}'; exit 0; fi\nexec cat >/dev/null\n",
            env!("CARGO_PKG_VERSION")
        ),
    )
    .unwrap();
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut remote = Remote::parse(&format!("ssh://corral-test{}", there.path().display()))
        .unwrap()
        .unwrap();
    remote.config = Some(sshd.path("ssh_config"));
    remote.connect_timeout = Duration::from_secs(2);
    let started = Instant::now();
    let error = RemoteSession::open(remote, vec![], Some(corral_cli_binary()))
        .err()
        .expect("no session when serve never says it is ready");
    let took = started.elapsed();
    assert!(
        took >= Duration::from_secs(4) && took < Duration::from_secs(10),
        "took {took:?}"
    );
    assert!(error.retryable, "{error:?}");
    assert_eq!(error.details["timed_out"], true, "{error:?}");
    assert!(error.message.contains("corral-test"), "{error:?}");
    // Nothing is left waiting, here or there.
    let root = there.path().display().to_string();
    wait_for("the ssh to end", || processes("ssh", &root).is_empty());
}

#[test]
fn the_checkpoint_panel_lists_diffs_and_restores_a_remote_projects_checkpoints() {
    let sshd = Sshd::start();
    let there = project();
    let session = open(&sshd, there.path(), "full_auto");
    let rt = runtime();
    let invoke = |command: &str, args: Value| rt.block_on(session.invoke(command, args, None));
    let before = std::fs::read_to_string(there.path().join("README.md")).unwrap();
    let edited = invoke(
        "call_tool",
        json!({"name": "write_file", "input": {"path": "README.md", "content": "# Changed there\n"},
            "turn_id": "t1", "call_id": "c1"}),
    )
    .unwrap();
    assert_eq!(edited["created"], false, "{edited}");
    assert_eq!(
        std::fs::read_to_string(there.path().join("README.md")).unwrap(),
        "# Changed there\n"
    );

    let listed = invoke("list_checkpoints", json!({})).unwrap();
    let listed = listed.as_array().unwrap();
    assert_eq!(listed.len(), 1, "{listed:?}");
    assert_eq!(listed[0]["tool"], "write_file");
    assert_eq!(listed[0]["turn"], "t1");
    let id = listed[0]["id"].as_str().unwrap();
    let diff = invoke("checkpoint_diff", json!({"id": id})).unwrap();
    assert!(diff.to_string().contains("README.md"), "{diff}");
    let undo = invoke("call_undo_diff", json!({"id": id})).unwrap();
    assert!(undo.to_string().contains("README.md"), "{undo}");

    let restored = invoke("restore_checkpoint", json!({"id": id})).unwrap();
    assert_eq!(restored["restored"], id, "{restored}");
    assert_eq!(
        std::fs::read_to_string(there.path().join("README.md")).unwrap(),
        before,
        "the file on the remote is as it was"
    );
    // The restore took a checkpoint first, there; restoring it undoes it.
    let undone = invoke("restore_checkpoint", json!({"id": restored["undo"]})).unwrap();
    assert_eq!(undone["restored"], restored["undo"], "{undone}");
    assert_eq!(
        std::fs::read_to_string(there.path().join("README.md")).unwrap(),
        "# Changed there\n"
    );
    assert_eq!(invoke("checkpoint_notice", json!({})).unwrap(), Value::Null);

    // `corral-cli checkpoint … --root ssh://…` runs where the store is.
    let name = format!("ssh://corral-test{}", there.path().display());
    let cli = |words: &[&str]| {
        let out = sshd
            .cli()
            .arg("checkpoint")
            .args(words)
            .args(["--root", &name])
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{stdout} {}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_str::<Value>(&stdout).unwrap()
    };
    let listed = cli(&["list"]);
    assert_eq!(listed, invoke("list_checkpoints", json!({})).unwrap());
    assert_eq!(listed.as_array().unwrap().len(), 3, "{listed}");
    let restored = cli(&["restore", id]);
    assert_eq!(restored["restored"], id, "{restored}");
    assert_eq!(
        std::fs::read_to_string(there.path().join("README.md")).unwrap(),
        before
    );

    // An unknown checkpoint and arguments that do not fit are explained.
    let unknown = invoke("restore_checkpoint", json!({"id": "nope"})).unwrap_err();
    assert_ne!(unknown.message, "", "{unknown:?}");
    let bad = invoke("checkpoint_diff", json!({"path": "README.md"})).unwrap_err();
    assert_eq!(bad.code, corral_tools::ErrorCode::InvalidInput, "{bad:?}");
}

/// Kills the session's ssh: serve there ends, and the next call reconnects.
fn drop_connection(folder: &std::path::Path) {
    let root = folder.display().to_string();
    let ssh = processes("ssh", &root);
    assert_eq!(ssh.len(), 1, "one ssh carries the session");
    std::process::Command::new("kill")
        .args(["-KILL", &ssh[0].to_string()])
        .status()
        .unwrap();
    wait_for("the ssh to end", || processes("ssh", &root).is_empty());
}

#[test]
fn the_programs_rules_and_hook_trust_given_here_are_the_only_ones_there() {
    if !corral_sandbox::namespaces_available() || !std::path::Path::new("/usr/bin/perl").exists() {
        eprintln!("note: no namespaces or no perl here; skipping");
        return;
    }
    let sshd = Sshd::start();
    let there = project();
    // The project's hooks: one file the user trusts here, one not.
    std::fs::create_dir(there.path().join(".claude")).unwrap();
    let hook = |said: &str| {
        json!({"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": format!("echo {said}")}]}]}})
            .to_string()
    };
    let trusted_text = hook("trusted-context");
    std::fs::write(there.path().join(".claude/settings.json"), &trusted_text).unwrap();
    std::fs::write(
        there.path().join(".claude/settings.local.json"),
        hook("untrusted-context"),
    )
    .unwrap();
    let session = open(&sshd, there.path(), "full_auto");
    let rt = runtime();
    let invoke = |command: &str, args: Value| rt.block_on(session.invoke(command, args, None));
    // Right after a drop, a request may still go to the ssh that ended
    // and fail `interrupted` (as a lost connection's requests do); the
    // next one connects anew. Only that first failure is forgiven.
    let invoke_after_drop = |command: &str, args: Value| match invoke(command, args.clone()) {
        Err(e) if e.details.get("interrupted") == Some(&json!(true)) => invoke(command, args),
        other => other,
    };
    let perl = json!({"name": "exec_shell", "input": {"command": "perl", "args": ["-e", "print qq(from perl)"]}});
    let prompt = json!({"request": {"event": "UserPromptSubmit", "prompt": "hi"}});

    // Nothing sent yet: perl is not allowed, no project hook runs.
    let refused = invoke("call_tool", perl.clone()).unwrap_err();
    assert_eq!(
        refused.code,
        corral_tools::ErrorCode::CommandNotAllowed,
        "{refused:?}"
    );
    let status = invoke("hook_status", json!({})).unwrap();
    assert_eq!(status["untrusted"].as_array().unwrap().len(), 2, "{status}");
    let ran = invoke("run_hooks", prompt.clone()).unwrap();
    assert_eq!(ran["context"], json!([]), "{ran}");

    let settings = json!({"programs": ["perl"], "rules": [],
        "trusted_hooks": {".claude/settings.json": trusted_text}});
    let status = rt
        .block_on(session.invoke_kept("use_settings", settings))
        .unwrap();
    let untrusted: Vec<&str> = status["untrusted"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["file"].as_str().unwrap())
        .collect();
    assert_eq!(untrusted, [".claude/settings.local.json"], "{status}");
    let check = |settings_sent: &str| {
        let ran = invoke_after_drop("call_tool", perl.clone())
            .unwrap_or_else(|e| panic!("{settings_sent}: {e:?}"));
        assert_eq!(ran["stdout"], "from perl", "{settings_sent}: {ran}");
        let ran = invoke("run_hooks", prompt.clone())
            .unwrap_or_else(|e| panic!("{settings_sent}: {e:?}"));
        let context = ran["context"].to_string();
        assert!(
            context.contains("trusted-context"),
            "{settings_sent}: {ran}"
        );
        assert!(
            !context.contains("untrusted-context"),
            "{settings_sent}: {ran}"
        );
    };
    check("sent");
    // A new serve after a dropped connection is sent them again first.
    drop_connection(there.path());
    check("sent again");

    // A text other than the one trusted is not trusted there.
    std::fs::write(there.path().join(".claude/settings.json"), hook("changed")).unwrap();
    let ran = invoke("run_hooks", prompt).unwrap();
    assert!(!ran["context"].to_string().contains("changed"), "{ran}");
    // Settings that are not settings are refused.
    let bad = invoke("use_settings", json!({"programs": "perl"})).unwrap_err();
    assert_eq!(bad.code, corral_tools::ErrorCode::InvalidInput, "{bad:?}");
}

/// A GET of `path` on 127.0.0.1:`port`; the whole reply.
fn get(port: u16, path: &str) -> std::io::Result<String> {
    use std::io::{Read, Write};
    let mut conn = std::net::TcpStream::connect(("127.0.0.1", port))?;
    conn.set_read_timeout(Some(Duration::from_secs(10)))?;
    write!(conn, "GET {path} HTTP/1.0\r\nHost: localhost\r\n\r\n")?;
    let mut reply = String::new();
    conn.read_to_string(&mut reply)?;
    Ok(reply)
}

#[test]
fn a_remote_background_servers_port_is_forwarded_here_until_it_stops() {
    if !corral_sandbox::namespaces_available() {
        eprintln!("note: no namespaces here; skipping the forward test");
        return;
    }
    let sshd = Sshd::start();
    let there = project();
    let session = open(&sshd, there.path(), "full_auto");
    let rt = runtime();
    let invoke = |command: &str, args: Value| rt.block_on(session.invoke(command, args, None));
    let server = json!({"command": "python3", "args": ["-m", "http.server", "0", "--bind", "127.0.0.1"], "background": true});
    let started = invoke("call_tool", json!({"name": "exec_shell", "input": server})).unwrap();
    let run_id = started["run_id"].as_str().unwrap().to_string();
    let mut listed = Value::Null;
    wait_for("the server's port, forwarded here", || {
        listed = invoke("list_processes", json!({})).unwrap();
        listed[0]["ports"][0]["reach_at"].is_u64()
    });
    let port = listed[0]["ports"][0]["port"].as_u64().unwrap();
    let here = u16::try_from(listed[0]["ports"][0]["reach_at"].as_u64().unwrap()).unwrap();
    // This machine is the remote too: the remote holds the command's port
    // number for its own forward, so this side's is another.
    assert_ne!(u64::from(here), port, "{listed}");
    let reply = get(here, "/README.md").unwrap();
    assert!(reply.starts_with("HTTP/1.0 200"), "{reply}");
    assert!(reply.ends_with("# Demo\nSays hello.\n"), "{reply}");
    // Asked again, the same forward.
    let output = invoke("process_output", json!({"run_id": run_id})).unwrap();
    assert_eq!(output["ports"][0]["reach_at"], here, "{output}");

    let stopped = invoke("stop_process", json!({"run_id": run_id})).unwrap();
    assert_eq!(stopped["running"], false, "{stopped}");
    wait_for("the local port closed", || get(here, "/").is_err());
}

#[test]
fn a_forward_ends_with_the_session() {
    if !corral_sandbox::namespaces_available() {
        eprintln!("note: no namespaces here; skipping the forward test");
        return;
    }
    let sshd = Sshd::start();
    let there = project();
    let session = open(&sshd, there.path(), "full_auto");
    let rt = runtime();
    let invoke = |command: &str, args: Value| rt.block_on(session.invoke(command, args, None));
    let server = json!({"command": "python3", "args": ["-m", "http.server", "0", "--bind", "127.0.0.1"], "background": true});
    invoke("call_tool", json!({"name": "exec_shell", "input": server})).unwrap();
    let mut listed = Value::Null;
    wait_for("the server's port, forwarded here", || {
        listed = invoke("list_processes", json!({})).unwrap();
        listed[0]["ports"][0]["reach_at"].is_u64()
    });
    let here = u16::try_from(listed[0]["ports"][0]["reach_at"].as_u64().unwrap()).unwrap();
    assert!(get(here, "/").is_ok());
    drop(session);
    wait_for("the local port closed", || get(here, "/").is_err());
}

/// A port of 127.0.0.1 free here now.
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[test]
fn a_hostile_remote_listing_ports_for_a_run_not_started_here_gets_no_forward() {
    if !std::path::Path::new("/usr/bin/python3").exists() {
        eprintln!("note: no python3 here; skipping");
        return;
    }
    let sshd = Sshd::start();
    let there = project();
    // A port free here: forwarded, this side would listen on it (the
    // same number when free), so it stays free here only if nothing is.
    let theirs = free_port();
    // A port the "remote" serves (this machine is the remote too).
    let service = TcpListener::bind("127.0.0.1:0").unwrap();
    let ours = service.local_addr().unwrap().port();
    // A corral-cli there that says it is ready, then answers every
    // request with ports: those of a run this side never started, and,
    // once this side started one in the background, that run's too.
    let fake = sshd.path("remote-bin/corral-cli");
    std::fs::write(
        &fake,
        format!(
            r#"#!/usr/bin/python3
import json, sys
if sys.argv[1:2] == ["--version"]:
    print("corral-cli {version}")
    sys.exit(0)
def look(run, port):
    return {{"run_id": run, "command": "x", "args": [], "output": "", "next_byte": 0,
        "first_kept_byte": 0, "running": True, "stopped": False, "elapsed_ms": 1,
        "ports": [{{"port": port, "reach_at": port}}]}}
print(json.dumps({{"ready": {{"version": "{version}", "root": "/"}}}}), flush=True)
for line in sys.stdin:
    request = json.loads(line)
    command, args = request["command"], request["args"]
    if command == "call_tool" and args.get("name") == "exec_shell":
        ok = {{"run_id": "bg-ours", "command": "x", "args": []}}
    elif command == "list_processes":
        ok = [look("bg-theirs", {theirs}), look("bg-ours", {ours})]
    elif command in ("process_output", "stop_process"):
        ok = look("bg-theirs", {theirs})
    else:
        ok = [look("bg-theirs", {theirs})]
    print(json.dumps({{"id": request["id"], "ok": ok}}), flush=True)
"#,
            version = env!("CARGO_PKG_VERSION"),
        ),
    )
    .unwrap();
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let session = open(&sshd, there.path(), "full_auto");
    let rt = runtime();
    let invoke = |command: &str, args: Value| rt.block_on(session.invoke(command, args, None));

    // Before this side started anything: no address in any answer, and
    // nothing listens here on the port named.
    let asked = [
        ("list_processes", json!({})),
        ("process_output", json!({"run_id": "bg-theirs"})),
        ("mcp_status", json!({})),
    ];
    for (command, args) in asked {
        let answer = invoke(command, args).unwrap();
        assert!(
            !answer.to_string().contains("reach_at"),
            "{command}: {answer}"
        );
    }
    assert!(
        TcpListener::bind(("127.0.0.1", theirs)).is_ok(),
        "something listens here on {theirs}"
    );

    // A background command started here has its port forwarded; the
    // other run in the same list still has none.
    let input = json!({"command": "python3", "args": ["-m", "http.server"], "background": true});
    let started = invoke("call_tool", json!({"name": "exec_shell", "input": input})).unwrap();
    assert_eq!(started["run_id"], "bg-ours", "{started}");
    let listed = invoke("list_processes", json!({})).unwrap();
    assert_eq!(listed[0]["run_id"], "bg-theirs", "{listed}");
    assert!(listed[0]["ports"][0].get("reach_at").is_none(), "{listed}");
    let here = u16::try_from(listed[1]["ports"][0]["reach_at"].as_u64().unwrap()).unwrap();
    std::net::TcpStream::connect(("127.0.0.1", here)).unwrap();
    service.accept().unwrap();
    // An answer about bg-ours that speaks for bg-theirs forwards nothing.
    let output = invoke("process_output", json!({"run_id": "bg-ours"})).unwrap();
    assert!(output["ports"][0].get("reach_at").is_none(), "{output}");
    assert!(
        TcpListener::bind(("127.0.0.1", theirs)).is_ok(),
        "something listens here on {theirs}"
    );
    drop(session);
    wait_for("the local port closed", || {
        std::net::TcpStream::connect(("127.0.0.1", here)).is_err()
    });
}

#[test]
fn exec_on_a_remote_root_sends_the_programs_and_hook_trust_kept_here_for_it() {
    if !corral_sandbox::namespaces_available() || !std::path::Path::new("/usr/bin/perl").exists() {
        eprintln!("note: no namespaces or no perl here; skipping");
        return;
    }
    let sshd = Sshd::start();
    let server = Scripted::start(json!([
        { "tools": [{ "name": "exec_shell", "input": { "command": "perl", "args": ["-e", "print qq(perl ran there)"] } }] },
        { "text": "Done." },
    ]));
    let home = Home::new(&server.base_url());
    let there = project();
    std::fs::create_dir(there.path().join(".claude")).unwrap();
    let text = json!({"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "echo trusted here, run there"}]}]}})
        .to_string();
    std::fs::write(there.path().join(".claude/settings.json"), &text).unwrap();
    // What the window keeps for the remote folder, under its ssh:// name.
    let root = format!("ssh://corral-test{}", there.path().display());
    let store = corral_config::Store::without_keychain(
        home.dir.path().join("config/dev.corral.desktop"),
        home.dir.path().join("data/dev.corral.desktop"),
    );
    let key = std::path::PathBuf::from(&root);
    store
        .save_programs(vec![], Some((&key, vec!["perl".into()])))
        .unwrap();
    store
        .trust_hooks(&key, ".claude/settings.json", &text)
        .unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_corral-cli"))
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
        .args(["--no-lsp", "--json", "Run perl"])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let requests = server.finish();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let first = requests[0]["messages"].to_string();
    assert!(first.contains("trusted here, run there"), "{first}");
    let second = requests[1]["messages"].to_string();
    assert!(second.contains("perl ran there"), "{second}");
}

#[test]
fn checkpoint_on_a_remote_without_corral_cli_says_how_to_put_it_there() {
    let sshd = Sshd::start();
    let there = project();
    let out = sshd
        .cli()
        .args(["checkpoint", "list", "--root"])
        .arg(format!("corral-test:{}", there.path().display()))
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let error: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(error["code"], "approval_required", "{error}");
    assert!(
        error["hint"]
            .as_str()
            .unwrap()
            .contains("call --install-remote"),
        "{error}"
    );
}
