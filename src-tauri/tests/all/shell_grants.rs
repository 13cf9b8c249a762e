//! The shell's grants in the app: "always allow" saves a rule that lets a
//! command run without asking after a restart (it is kept in the app's
//! config, not in the project) but never covers a path outside, a secret
//! or the network; added programs ask; the network is granted by one
//! approval of one call. Real commands in the real sandbox.

use corral_app::state::AppState;
use corral_app::store::Store;
use corral_session::approvals::{Answer, Scope};
use corral_session::grants::Grant;
use corral_session::{Call, Consent, RunContext};
use corral_testkit::Project;
use corral_tools::dispatch::PolicyCheck;
use corral_tools::policy::Decision;
use corral_tools::shell::SavedRule;
use serde_json::{json, Value};
use std::net::TcpListener;

/// A node project with a test script and a secret-like `.env`.
fn fixture() -> Project {
    Project::new()
        .file(
            "package.json",
            r#"{"name":"t","version":"1.0.0","scripts":{"test":"node -e \"console.log('tested')\""}}"#,
        )
        .file(".env", "KEY=1\n")
}

/// A fresh app (as after a restart) on the fixture's folders, the project open.
fn start(f: &Project) -> AppState {
    let state = AppState::new(Store::without_keychain(f.config_dir(), f.data_dir()));
    state.open_project(f.root()).unwrap();
    state
}

fn shell(command: &str, args: &[&str]) -> Value {
    json!({"command": command, "args": args})
}

/// Runs a command no one is asked about.
fn run(state: &AppState, input: Value) -> Result<Value, Value> {
    let session = state.session().unwrap();
    let call = Call::new("exec_shell", input);
    tauri::async_runtime::block_on(session.call(call, Consent::None, RunContext::default()))
        .map_err(|e| e.to_json())
}

/// Checks a call (in `conversation`) and runs its ticket with the user's
/// answer, as the window does.
fn answered(
    state: &AppState,
    tool: &str,
    input: Value,
    conversation: Option<&str>,
    answer: Answer,
) -> Result<Value, Value> {
    let session = state.session().unwrap();
    tauri::async_runtime::block_on(corral_testkit::answered(
        &session,
        tool,
        input,
        conversation,
        answer,
    ))
}

/// Runs a command in conversation `c1` with no answer: only its grants let it run.
fn run_granted(state: &AppState, input: Value) -> Result<Value, Value> {
    let call = Call::new("exec_shell", input).in_conversation("c1");
    let session = state.session().unwrap();
    tauri::async_runtime::block_on(session.call(call, Consent::None, RunContext::default()))
        .map_err(|e| e.to_json())
}

/// The policy's check of a command, outside any conversation.
fn check(state: &AppState, input: &Value) -> PolicyCheck {
    let ticket = state
        .session()
        .unwrap()
        .check(Call::new("exec_shell", input.clone()));
    ticket.unwrap().check.check
}

/// "Always allow" with the rule the user confirmed.
fn always(rule: &str) -> Answer {
    Answer {
        scope: Scope::Always,
        rule: Some(rule.into()),
        ..Answer::once()
    }
}

/// The exact argv of a command, as a grant.
fn exact(input: &Value) -> Grant {
    serde_json::from_value(
        json!({"kind": "command", "command": input["command"], "args": input["args"]}),
    )
    .unwrap()
}

fn fenced() -> bool {
    corral_testkit::fenced(&["/usr/bin/npm", "/usr/bin/perl"])
}

#[test]
fn an_always_rule_survives_a_restart_and_covers_only_its_own_calls() {
    if !fenced() {
        return;
    }
    let f = fixture();
    let state = start(&f);
    let npm_test = shell("npm", &["test"]);
    let asked = check(&state, &npm_test);
    assert!(matches!(asked.decision, Decision::Ask { .. }), "{asked:?}");
    // Only the rule shown (the one the call proposes) is saved.
    for shown in [None, Some("npm"), Some("npm test --x")] {
        let answer = Answer {
            rule: shown.map(str::to_string),
            ..always("")
        };
        let err = answered(&state, "exec_shell", npm_test.clone(), None, answer).unwrap_err();
        assert_eq!(err["code"], "invalid_input", "{shown:?}");
    }
    assert!(state.store.shell_config(Some(f.root())).rules.is_empty());
    let write = json!({"path": "a.txt", "content": "x"});
    assert!(answered(&state, "write_file", write, None, always("a.txt")).is_err());
    assert!(!f.root().join("a.txt").exists());
    answered(
        &state,
        "exec_shell",
        npm_test.clone(),
        None,
        always("npm test"),
    )
    .unwrap();
    drop(state);
    // Kept in the app's config, never in the project.
    let names: Vec<_> = std::fs::read_dir(f.root())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names.len(), 2, "{names:?}");

    let state = start(&f);
    let allowed = check(&state, &npm_test);
    assert_eq!(allowed.decision, Decision::Allow, "{allowed:?}");
    assert_eq!(allowed.rule.as_deref(), Some("npm test"));
    let out = run(&state, npm_test).unwrap();
    assert!(out["stdout"].as_str().unwrap().contains("tested"), "{out}");
    assert_eq!(out["profile"], "build");

    for input in [
        shell("npm", &["test", "--", "--config", "../x"]),
        shell("npm", &["test", "--", ".env"]),
        shell("npm", &["run", "test"]),
    ] {
        let asked = check(&state, &input);
        assert!(
            matches!(asked.decision, Decision::Ask { .. }),
            "{input}: {asked:?}"
        );
        assert_eq!(asked.rule, None);
        let err = run(&state, input.clone()).unwrap_err();
        assert_eq!(err["code"], "approval_required", "{input}: {err}");
    }

    // Settings list the rule and remove it.
    let config = state.store.shell_config(Some(f.root()));
    assert_eq!(config.rules, vec![SavedRule::parse("npm test").unwrap()]);
    state.store.remove_rule(f.root(), &config.rules[0]).unwrap();
    let asked = check(&state, &shell("npm", &["test"]));
    assert!(matches!(asked.decision, Decision::Ask { .. }), "{asked:?}");
}

#[test]
fn added_programs_ask_and_the_network_comes_only_with_an_approval_of_that_call() {
    if !fenced() {
        return;
    }
    let f = fixture();
    let state = start(&f);
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    // perl: a program the user adds (python3 is a known one).
    let connect = shell(
        "perl",
        &[
            "-MIO::Socket::INET",
            "-e",
            &format!("IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => {port}, Timeout => 5) or die \"connect: $!\\n\"; print \"connected\\n\""),
        ],
    );
    let err = state
        .session()
        .unwrap()
        .check(Call::new("exec_shell", connect.clone()))
        .unwrap_err();
    assert_eq!(err.code, corral_tools::ErrorCode::CommandNotAllowed);
    state
        .store
        .save_programs(vec!["perl".into()], None)
        .unwrap();
    let asked = check(&state, &connect);
    assert!(matches!(asked.decision, Decision::Ask { .. }), "{asked:?}");

    // Approved without the network: it runs, the connection is refused,
    // and the result says how to allow it.
    let out = answered(
        &state,
        "exec_shell",
        connect.clone(),
        Some("c1"),
        Answer::conversation(exact(&connect)),
    )
    .unwrap();
    assert_eq!(out["profile"], "build", "{out}");
    assert!(out["network_refused"].is_string(), "{out}");

    // Approved once with the network: it runs in the network profile,
    // whose only way out is the egress proxy (the host's own loopback
    // stays out of reach).
    let out = answered(
        &state,
        "exec_shell",
        connect.clone(),
        None,
        Answer::with_network(),
    )
    .unwrap();
    assert_eq!(out["profile"], "network", "{out}");
    assert_ne!(out["exit_code"], 0, "{out}");
    listener.set_nonblocking(true).unwrap();
    assert!(listener.accept().is_err(), "a connection reached the host");

    // The conversation's grant covers that command again, without the network.
    let out = run_granted(&state, connect).unwrap();
    assert_eq!(out["profile"], "build", "{out}");

    // An install names the network and a grant covering it does not let it run.
    let install = shell("npm", &["ci"]);
    let pattern = Grant::Command {
        command: "npm".into(),
        args: vec![],
        more: true,
    };
    // Given with a call it covers that needs no network.
    let version = shell("npm", &["--version"]);
    answered(
        &state,
        "exec_shell",
        version,
        Some("c1"),
        Answer::conversation(pattern),
    )
    .unwrap();
    let check = state
        .session()
        .unwrap()
        .check(Call::new("exec_shell", install).in_conversation("c1"))
        .unwrap()
        .check;
    assert_eq!(check.grant, None, "{check:?}");
    let check = check.check;
    assert!(check.network, "{check:?}");
    match check.decision {
        Decision::Ask { reason } => assert!(reason.contains("network"), "{reason}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn background_commands_are_listed_and_stop_when_the_project_closes() {
    if !fenced() {
        return;
    }
    let f = fixture();
    let state = start(&f);
    let mut settings = state.store.settings();
    settings.mode = corral_tools::policy::Mode::FullAuto;
    state.store.save_settings(&settings).unwrap();
    let script = "setInterval(() => require('fs').appendFileSync('alive', 'x'), 50)";
    let started = run(
        &state,
        json!({"command": "node", "args": ["-e", script], "background": true}),
    )
    .unwrap();
    let run_id = started["run_id"].as_str().unwrap().to_string();
    let listed = state.session().unwrap().background().list();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].run_id, run_id);
    let marker = f.root().join("alive");
    let until = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while std::fs::metadata(&marker).map(|m| m.len()).unwrap_or(0) < 3 {
        assert!(
            std::time::Instant::now() < until,
            "the command did not start"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    state.close_project();
    let len = std::fs::metadata(&marker).unwrap().len();
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert_eq!(
        std::fs::metadata(&marker).unwrap().len(),
        len,
        "a background command outlived its project"
    );
}

#[test]
fn the_model_is_told_of_the_programs_the_user_added() {
    let f = fixture();
    let state = start(&f);
    let exec_shell = |state: &AppState| {
        state
            .session()
            .unwrap()
            .tool_specs()
            .into_iter()
            .find(|s| s.name == "exec_shell")
            .unwrap()
            .description
    };
    assert!(!exec_shell(&state).contains("The user added"));
    state
        .store
        .save_programs(vec!["ruby".into()], Some((f.root(), vec!["deno".into()])))
        .unwrap();
    assert!(
        exec_shell(&state).ends_with("each call asks): ruby deno."),
        "{}",
        exec_shell(&state)
    );
    // Another project sees the programs added for every project only.
    let other = f.root().parent().unwrap().join("other");
    std::fs::create_dir(&other).unwrap();
    state.open_project(&other).unwrap();
    assert!(exec_shell(&state).ends_with("each call asks): ruby."));
}
