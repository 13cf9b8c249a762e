//! A remote project in the window: the app on Tauri's mock runtime opens
//! a folder through a real sshd on 127.0.0.1 (corral-testkit's, with keys
//! made for the test), and its commands are answered by `corral-cli
//! serve` there, the output of a command streamed to the window's channel.
//! The "remote" is this machine, so what changed there can be read here.

use crate::window::{app_on, App};
use corral_testkit::sshd::{Sshd, HOST};
use corral_testkit::Project;
use serde_json::{json, Value};
use std::path::PathBuf;

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
    let sshd = Sshd::start();
    // The only test of this binary that runs ssh: the others never read it.
    std::env::set_var(corral_remote::CONFIG_VAR, sshd.config());
    let there = Project::new().file("notes.txt", "one\n");
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

    // What answers only for a folder here says so, naming the remote.
    let rule = json!({"rule": {"program": "node", "args": []}});
    let refused = app.invoke("remove_rule", rule).unwrap_err();
    assert_eq!(refused["code"], "not_found", "{refused}");
    assert!(
        refused["message"]
            .as_str()
            .unwrap()
            .contains("not available on a remote project"),
        "{refused}"
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

    ok(&app, "close_project", json!({}));
    assert_eq!(ok(&app, "project_info", json!({})), Value::Null);
}
