//! A remote project in the window: the app on Tauri's mock runtime opens
//! a folder through a real sshd on 127.0.0.1 (corral-testkit's, with keys
//! made for the test), and its commands are answered by `corral-cli
//! serve` there, the output of a command streamed to the window's channel.
//! The "remote" is this machine, so what changed there can be read here.

use crate::window::{app_on, App};
use corral_testkit::sshd::{Sshd, HOST};
use corral_testkit::Project;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

/// The tests that run ssh, one at a time: each points the process's
/// `CORRAL_SSH_CONFIG` at its own sshd.
static SSH: Mutex<()> = Mutex::new(());

/// A running sshd the app's ssh reaches, for as long as the guard lives.
fn sshd() -> (MutexGuard<'static, ()>, Sshd) {
    let guard = SSH.lock().unwrap_or_else(PoisonError::into_inner);
    let sshd = Sshd::start();
    std::env::set_var(corral_remote::CONFIG_VAR, sshd.config());
    (guard, sshd)
}

/// This build's corral-cli, beside the test binary (`cargo test` builds
/// the workspace's binaries with its tests).
fn corral_cli() -> PathBuf {
    let deps = std::env::current_exe().unwrap();
    let cli = deps.parent().unwrap().parent().unwrap().join("corral-cli");
    assert!(
        cli.exists(),
        "{} is missing: build it with `cargo build -p corral-cli`",
        cli.display()
    );
    cli
}

fn ok(app: &App, cmd: &str, args: Value) -> Value {
    app.invoke(cmd, args)
        .unwrap_or_else(|e| panic!("{cmd}: {e}"))
}

#[test]
fn a_remote_project_opens_after_asking_and_its_commands_run_there() {
    let (_one_at_a_time, sshd) = sshd();
    // A project hook there, waiting for the user's trust here.
    let hook = |said: &str| {
        json!({"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": format!("echo {said}")}]}]}})
            .to_string()
    };
    let there = Project::new()
        .file("notes.txt", "one\n")
        .file(".claude/settings.json", hook("hook-ran-there"));
    let app = app_on(Project::new());
    app.state().use_cli(corral_cli());
    let name = format!("{HOST}:{}", there.root().display());

    // corral-cli is not there: the window is asked, and nothing is copied.
    let asked = app
        .invoke("open_project", json!({"path": name}))
        .unwrap_err();
    assert_eq!(asked["code"], "approval_required", "{asked}");
    assert!(
        asked["details"]["folder"]
            .as_str()
            .unwrap()
            .ends_with("remote-cache/corral/bin"),
        "{asked}"
    );
    let installed = sshd.installed(env!("CARGO_PKG_VERSION"));
    assert!(!installed.exists());
    assert_eq!(ok(&app, "project_info", json!({})), Value::Null);

    // The user agreed: copied, and open there.
    let info = ok(
        &app,
        "open_project",
        json!({"path": name, "install_remote": true}),
    );
    assert!(installed.exists());
    assert_eq!(info["name"], name.as_str());
    let root = format!("ssh://{HOST}{}", there.root().display());
    assert_eq!(info["root"], root.as_str());
    assert_eq!(ok(&app, "project_info", json!({}))["root"], root.as_str());
    let recent = ok(&app, "recent_projects", json!({}));
    assert_eq!(recent[0]["root"], root.as_str(), "{recent}");

    // A write asks; its preview comes from there, and it runs there with
    // the user's answer.
    let input = json!({"path": "notes.txt", "content": "two\n"});
    let ticket = ok(
        &app,
        "check_call",
        json!({"tool": "write_file", "input": input, "conversation": "c1"}),
    );
    assert_eq!(ticket["decision"], "ask", "{ticket}");
    assert!(ticket.to_string().contains("+two"), "the diff: {ticket}");
    assert_eq!(there.read("notes.txt").as_deref(), Some("one\n"));
    let written = ok(
        &app,
        "run_call",
        json!({"ticket": ticket["ticket"], "approval": {"scope": "once"}}),
    );
    assert!(written.is_object(), "{written}");
    assert_eq!(there.read("notes.txt").as_deref(), Some("two\n"));

    // A command's output reaches the window's channel as it runs there.
    let node = json!({"command": "node", "args": ["-e", "console.log('from ' + process.cwd())"]});
    let ticket = ok(
        &app,
        "check_call",
        json!({"tool": "exec_shell", "input": node, "conversation": "c1"}),
    );
    let ran = ok(
        &app,
        "run_call",
        json!({"ticket": ticket["ticket"], "run_id": "r1", "approval": {"scope": "once"},
            "on_output": "__CHANNEL__:41"}),
    );
    assert_eq!(ran["exit_code"], 0, "{ran}");
    let streamed = app.streamed(41);
    assert!(streamed.starts_with("from "), "{streamed:?}");

    // Outside the root is refused there.
    let outside = app
        .invoke(
            "call_tool",
            json!({"name": "read_file", "input": {"path": "../../etc/passwd"}}),
        )
        .unwrap_err();
    assert_eq!(outside["code"], "path_outside_root", "{outside}");

    // The write's checkpoint was taken there, and is listed from there.
    let checkpoints = ok(&app, "list_checkpoints", json!({}));
    let write = checkpoints
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["tool"] == "write_file");
    assert_eq!(write.unwrap()["label"], "notes.txt", "{checkpoints}");

    // A program added here for this folder is allowed there (it asks, in
    // ask mode, where before it was not allowed at all).
    let perl = json!({"name": "exec_shell", "input": {"command": "perl", "args": ["-e", "1"]}});
    let refused = app.invoke("call_tool", perl.clone()).unwrap_err();
    assert_eq!(refused["code"], "command_not_allowed", "{refused}");
    ok(
        &app,
        "save_programs",
        json!({"global": [], "project": ["perl"]}),
    );
    let asks = app.invoke("call_tool", perl).unwrap_err();
    assert_eq!(asks["code"], "approval_required", "{asks}");

    // The project's hook is trusted here for the text shown from there,
    // and then runs there; a text it no longer holds is not trusted.
    let prompt = json!({"request": {"event": "UserPromptSubmit", "prompt": "hi"}});
    let status = ok(&app, "hook_status", json!({}));
    let waiting = &status["untrusted"][0];
    assert_eq!(waiting["file"], ".claude/settings.json", "{status}");
    let ran = ok(&app, "run_hooks", prompt.clone());
    assert!(!ran.to_string().contains("hook-ran-there"), "{ran}");
    let stale = app
        .invoke(
            "trust_hooks",
            json!({"file": ".claude/settings.json", "text": hook("other")}),
        )
        .unwrap_err();
    assert_eq!(stale["code"], "stale_file", "{stale}");
    let status = ok(
        &app,
        "trust_hooks",
        json!({"file": ".claude/settings.json", "text": waiting["text"]}),
    );
    assert_eq!(status["untrusted"], json!([]), "{status}");
    let ran = ok(&app, "run_hooks", prompt);
    assert!(ran.to_string().contains("hook-ran-there"), "{ran}");
    let kept = app.state().store.trusted_hooks(std::path::Path::new(&root));
    assert_eq!(
        kept.len(),
        1,
        "the trust is kept here under the ssh:// name"
    );

    // What answers only for a folder here says so, naming the remote.
    let here_only = app.state().session().err().unwrap();
    assert_eq!(here_only.code, corral_tools::ErrorCode::NotFound);
    assert!(
        here_only
            .message
            .contains("not available on a remote project"),
        "{here_only:?}"
    );

    // The conversation is kept here, under the remote's ssh:// name.
    let appended = ok(
        &app,
        "append_entry",
        json!({"entry": {
            "message": {"role": "user", "content": [{"type": "text", "text": "hi"}]},
            "items": [{"kind": "user", "id": "u1", "text": "hi"}]}}),
    );
    let conversations = ok(&app, "list_conversations", json!({}));
    assert_eq!(conversations.as_array().unwrap().len(), 1, "{appended}");

    // The mode saved in Settings holds there too: in full_auto a write
    // runs without asking.
    let write = json!({"name": "write_file", "input": {"path": "auto.txt", "content": "auto\n"}});
    let asks = app.invoke("call_tool", write.clone()).unwrap_err();
    assert_eq!(asks["code"], "approval_required", "{asks}");
    ok(
        &app,
        "save_settings",
        json!({"settings": {"provider": "anthropic", "base_url": "", "model": "m",
            "max_tokens": 100, "mode": "full_auto"}}),
    );
    ok(&app, "call_tool", write);
    assert_eq!(there.read("auto.txt").as_deref(), Some("auto\n"));
    assert_eq!(ok(&app, "project_info", json!({}))["root"], root.as_str());

    ok(&app, "close_project", json!({}));
    assert_eq!(ok(&app, "project_info", json!({})), Value::Null);
}

/// Kills the ssh carrying the session of the folder `root` there, as a
/// lost connection would end it, and waits until it is gone.
fn drop_connection(root: &Path) {
    let carrying = || -> Vec<String> {
        let mut found = Vec::new();
        for entry in std::fs::read_dir("/proc").unwrap().flatten() {
            let comm = std::fs::read_to_string(entry.path().join("comm")).unwrap_or_default();
            let line = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
            let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
            if comm.trim() == "ssh"
                && String::from_utf8_lossy(&line).contains(&*root.to_string_lossy())
                && !stat.contains(") Z ")
            {
                found.push(entry.file_name().to_string_lossy().into_owned());
            }
        }
        found
    };
    let ssh = carrying();
    assert_eq!(ssh.len(), 1, "one ssh carries the session: {ssh:?}");
    std::process::Command::new("kill")
        .args(["-KILL", &ssh[0]])
        .status()
        .unwrap();
    let until = Instant::now() + Duration::from_secs(10);
    while !carrying().is_empty() {
        assert!(Instant::now() < until, "the ssh outlived its kill");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn always_allow_saves_the_rule_here_and_the_remote_session_holds_it() {
    let (_one_at_a_time, _sshd) = sshd();
    let there = Project::new();
    let app = app_on(Project::new());
    app.state().use_cli(corral_cli());
    let name = format!("{HOST}:{}", there.root().display());
    ok(
        &app,
        "open_project",
        json!({"path": name, "install_remote": true}),
    );
    let key = format!("ssh://{HOST}{}", there.root().display());
    let rules_here = || app.state().store.shell_grants(Path::new(&key)).1;
    // Right after a drop, a request may still go to the ssh that ended
    // and fail `interrupted`, as a lost connection's requests do; the next
    // one connects anew. Only that first failure is forgiven.
    let check = |file: &str| {
        let touch = json!({"command": "touch", "args": [file]});
        let args = json!({"tool": "exec_shell", "input": touch, "conversation": "c1"});
        match app.invoke("check_call", args.clone()) {
            Err(e) if e["details"]["interrupted"] == true => ok(&app, "check_call", args),
            other => other.unwrap_or_else(|e| panic!("check_call: {e}")),
        }
    };

    // The command asks, and proposes its rule.
    let ticket = check("a.txt");
    assert_eq!(ticket["decision"], "ask", "{ticket}");
    assert_eq!(ticket["proposed_rule"], "touch", "{ticket}");

    // A rule other than the one proposed is refused, here: nothing saved,
    // nothing run.
    let wider = app
        .invoke(
            "run_call",
            json!({"ticket": ticket["ticket"], "approval": {"scope": "always", "rule": "touch a.txt b.txt"}}),
        )
        .unwrap_err();
    assert_eq!(wider["code"], "invalid_input", "{wider}");
    assert!(rules_here().is_empty());
    assert!(there.read("a.txt").is_none());

    // "Always": the rule is saved here, under the ssh:// name, and the
    // call runs there.
    ok(
        &app,
        "run_call",
        json!({"ticket": ticket["ticket"], "approval": {"scope": "always", "rule": "touch"}}),
    );
    assert_eq!(there.read("a.txt").as_deref(), Some(""));
    let saved = rules_here();
    assert_eq!(saved.len(), 1, "{saved:?}");
    assert_eq!(saved[0].to_string(), "touch");

    // The next call of that shape is not asked, and runs.
    let ticket = check("b.txt");
    assert_eq!(ticket["decision"], "allow", "{ticket}");
    ok(&app, "run_call", json!({"ticket": ticket["ticket"]}));
    assert_eq!(there.read("b.txt").as_deref(), Some(""));

    // A call that is not a command proposes no rule: "always" is refused.
    let write = json!({"path": "w.txt", "content": "w"});
    let ticket = ok(
        &app,
        "check_call",
        json!({"tool": "write_file", "input": write, "conversation": "c1"}),
    );
    let refused = app
        .invoke(
            "run_call",
            json!({"ticket": ticket["ticket"], "approval": {"scope": "always", "rule": "write_file"}}),
        )
        .unwrap_err();
    assert_eq!(refused["code"], "invalid_input", "{refused}");
    assert!(there.read("w.txt").is_none());
    assert_eq!(rules_here().len(), 1);

    // The connection drops; the session there is new, and holds the rule.
    drop_connection(there.root());
    let ticket = check("c.txt");
    assert_eq!(ticket["decision"], "allow", "{ticket}");
    ok(&app, "run_call", json!({"ticket": ticket["ticket"]}));
    assert_eq!(there.read("c.txt").as_deref(), Some(""));
}

/// A name that resolves nowhere: only the proxy's judgement of it counts.
const DOMAIN: &str = "elsewhere.invalid";

/// Waits (up to 60 s) for the `n`th question of kind `kind` on the
/// window's channel `channel`.
fn question(app: &App, channel: u32, kind: &str, n: usize) -> Value {
    let until = Instant::now() + Duration::from_secs(60);
    loop {
        let heard: Vec<Value> = app
            .received(channel)
            .into_iter()
            .filter(|q| q["kind"] == kind)
            .collect();
        if let Some(question) = heard.get(n) {
            return question.clone();
        }
        assert!(Instant::now() < until, "no {kind} question #{n}: {heard:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_remote_command_asks_the_window_about_a_domain() {
    if !corral_testkit::fenced(&["/usr/bin/python3"]) {
        return;
    }
    let (_one_at_a_time, _sshd) = sshd();
    let there = Project::new();
    let app = app_on(Project::new());
    app.state().use_cli(corral_cli());
    let name = format!("{HOST}:{}", there.root().display());
    ok(
        &app,
        "open_project",
        json!({"path": name, "install_remote": true}),
    );
    ok(
        &app,
        "save_programs",
        json!({"global": [], "project": ["python3"]}),
    );
    ok(
        &app,
        "domain_questions",
        json!({"on_question": "__CHANNEL__:61"}),
    );
    // A fetch of the domain through the proxy there (python reads
    // `http_proxy`), approved once with the network.
    let fetch = |conversation: &str| {
        let code = format!(
            "import urllib.request\ntry:\n    urllib.request.urlopen('http://{DOMAIN}/', timeout=30)\nexcept Exception as e:\n    print('failed', e)"
        );
        let input = json!({"command": "python3", "args": ["-c", code]});
        let ticket = ok(
            &app,
            "check_call",
            json!({"tool": "exec_shell", "input": input, "conversation": conversation}),
        );
        assert_eq!(ticket["decision"], "ask", "{ticket}");
        app.invoke_in_background(
            "run_call",
            json!({"ticket": ticket["ticket"], "approval": {"scope": "once", "network": true}}),
        )
    };
    let refused = |out: &Value| {
        let stderr = out["stderr"].as_str().unwrap_or_default();
        stderr.contains(&format!("corral proxy: refused GET http://{DOMAIN}"))
            && stderr.contains("the user did not allow it")
    };

    // Asked in the window, with its conversation; refused, the command's
    // connection is refused there and its output says so.
    let running = fetch("c1");
    let asked = question(&app, 61, "asked", 0);
    assert_eq!(asked["conversation"], "c1", "{asked}");
    assert_eq!(asked["domain"], DOMAIN, "{asked}");
    assert_eq!(
        ok(
            &app,
            "answer_domain",
            json!({"id": asked["id"], "allow": false})
        ),
        true
    );
    let out = running.join().unwrap().unwrap();
    assert_eq!(out["profile"], "network", "{out}");
    assert!(refused(&out), "{out}");
    assert_eq!(question(&app, 61, "closed", 0)["id"], asked["id"]);

    // The conversation is not asked again; another one is, and allowed,
    // the proxy there goes on to resolve the name (which resolves nowhere).
    let out = fetch("c1").join().unwrap().unwrap();
    assert!(refused(&out), "{out}");
    let running = fetch("c2");
    let asked = question(&app, 61, "asked", 1);
    assert_eq!(asked["conversation"], "c2", "{asked}");
    ok(
        &app,
        "answer_domain",
        json!({"id": asked["id"], "allow": true}),
    );
    let out = running.join().unwrap().unwrap();
    assert!(!refused(&out), "{out}");
    assert!(
        out["stderr"]
            .as_str()
            .unwrap()
            .contains("could not resolve"),
        "{out}"
    );

    // A dropped connection refuses what was waiting: the call is
    // interrupted, and the window's question taken down.
    let running = fetch("c3");
    let asked = question(&app, 61, "asked", 2);
    drop_connection(there.root());
    let lost = running.join().unwrap().unwrap_err();
    assert_eq!(lost["details"]["interrupted"], true, "{lost}");
    assert_eq!(question(&app, 61, "closed", 2)["id"], asked["id"]);
    assert_eq!(
        ok(
            &app,
            "answer_domain",
            json!({"id": asked["id"], "allow": true})
        ),
        false
    );

    // The session there after the drop asks the window too.
    let running = fetch("c4");
    let asked = question(&app, 61, "asked", 3);
    assert_eq!(asked["conversation"], "c4", "{asked}");
    ok(
        &app,
        "answer_domain",
        json!({"id": asked["id"], "allow": false}),
    );
    assert!(refused(&running.join().unwrap().unwrap()));
}

/// A remote project's tasks are made and run there: its worktree in the
/// remote's data folder, its commands in its session there (never the
/// project's folder), its conversations kept here under a key of its
/// own, and merged there.
#[test]
fn a_remote_project_s_task_runs_and_lands_there() {
    let (_one_at_a_time, sshd) = sshd();
    let there = Project::new().file("a.txt", "one\n").git();
    let app = app_on(Project::new());
    app.state().use_cli(corral_cli());
    let name = format!("{HOST}:{}", there.root().display());
    ok(
        &app,
        "open_project",
        json!({"path": name, "install_remote": true}),
    );
    ok(
        &app,
        "save_settings",
        json!({"settings": {"provider": "anthropic", "base_url": "", "model": "m",
        "max_tokens": 100, "mode": "full_auto"}}),
    );
    let made = ok(&app, "task_new", json!({"name": "remote fix"}));
    assert_eq!(made["branch"], "corral/remote-fix", "{made}");
    let place = PathBuf::from(made["path"].as_str().unwrap());
    assert!(
        place.starts_with(sshd.path("remote-data")),
        "{}",
        place.display()
    );

    let write = json!({"task": "remote-fix", "name": "write_file",
        "input": {"path": "a.txt", "content": "fixed there\n"}});
    let wrote = match app.invoke("call_tool", write.clone()) {
        Err(e) if e["details"]["interrupted"] == true => ok(&app, "call_tool", write),
        other => other.unwrap_or_else(|e| panic!("call_tool: {e}")),
    };
    assert!(wrote.is_object(), "{wrote}");
    assert_eq!(
        std::fs::read_to_string(place.join("a.txt")).unwrap(),
        "fixed there\n"
    );
    assert_eq!(there.read("a.txt").as_deref(), Some("one\n"));

    // Its conversation is kept here, apart from the project's.
    let appended = ok(
        &app,
        "append_entry",
        json!({"task": "remote-fix", "entry": {"kind": "user", "id": "u1", "text": "fix it there"}}),
    );
    assert_eq!(ok(&app, "list_conversations", json!({})), json!([]));
    let listed = ok(&app, "task_list", json!({}));
    assert_eq!(
        listed["tasks"][0]["conversation"], appended["conversation"],
        "{listed}"
    );
    assert_eq!(listed["tasks"][0]["size"]["files"], 1, "{listed}");

    let merged = ok(&app, "task_merge", json!({"task": "remote-fix"}));
    assert_eq!(merged["removed"], true, "{merged}");
    assert_eq!(there.read("a.txt").as_deref(), Some("fixed there\n"));
    assert!(!place.exists());
}

#[test]
fn a_malformed_remote_name_is_refused_before_ssh_runs() {
    let app = app_on(Project::new());
    for name in [
        "ssh://-oProxyCommand=touch$IFS/tmp/x/p",
        "ssh://box/../etc",
        "ssh://box:99999/p",
        "box;rm:/p",
    ] {
        let refused = app
            .invoke("open_project", json!({"path": name}))
            .unwrap_err();
        assert_eq!(refused["code"], "invalid_input", "{name}: {refused}");
        assert!(
            refused["message"]
                .as_str()
                .unwrap()
                .contains("is not a remote folder Corral can open"),
            "{name}: {refused}"
        );
    }
    assert_eq!(ok(&app, "project_info", json!({})), Value::Null);
}
