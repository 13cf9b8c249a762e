//! The app's commands through Tauri's own IPC test tooling (mock runtime,
//! real commands, real temp folders).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::disallowed_methods
)]

use corral_app::state::AppState;
use corral_app::store::Store;
use serde_json::{json, Value};
use std::sync::{Arc, Mutex};
use tauri::ipc::{CallbackFn, Channel, InvokeBody};
use tauri::test::{get_ipc_response, mock_builder, mock_context, noop_assets, INVOKE_KEY};
use tauri::webview::InvokeRequest;
use tauri::{Manager, WebviewWindow, WebviewWindowBuilder};

struct App {
    _tmp: tempfile::TempDir,
    project: std::path::PathBuf,
    _app: tauri::App<tauri::test::MockRuntime>,
    webview: WebviewWindow<tauri::test::MockRuntime>,
}

fn app() -> App {
    let tmp = tempfile::tempdir().unwrap();
    let project = tmp.path().join("project");
    std::fs::create_dir(&project).unwrap();
    std::fs::write(project.join("hello.txt"), "hello\n").unwrap();
    let store = Store::without_keychain(tmp.path().join("config"), tmp.path().join("data"));
    let app = corral_app::builder(mock_builder())
        .manage(AppState::new(store))
        .build(mock_context(noop_assets()))
        .unwrap();
    let webview = WebviewWindowBuilder::new(&app, "main", Default::default())
        .build()
        .unwrap();
    App {
        _tmp: tmp,
        project,
        _app: app,
        webview,
    }
}

impl App {
    fn invoke(&self, cmd: &str, args: Value) -> Result<Value, Value> {
        let request = InvokeRequest {
            cmd: cmd.into(),
            callback: CallbackFn(0),
            error: CallbackFn(1),
            // Linux serves the app from the `tauri://` protocol: a local origin.
            url: "tauri://localhost".parse().unwrap(),
            body: InvokeBody::Json(args),
            headers: Default::default(),
            invoke_key: INVOKE_KEY.to_string(),
        };
        get_ipc_response(&self.webview, request).map(|body| body.deserialize::<Value>().unwrap())
    }

    fn open(&self) {
        self.invoke("open_project", json!({"path": self.project}))
            .unwrap();
    }

    /// Opens the project with the mode set to `full_auto` (commands run
    /// without approval tokens).
    fn open_in_full_auto(&self) {
        self.open();
        self.invoke(
            "save_settings",
            json!({"settings": {"provider": "anthropic", "base_url": "", "model": "m",
            "max_tokens": 100, "mode": "full_auto"}}),
        )
        .unwrap();
    }

    fn state(&self) -> tauri::State<'_, AppState> {
        self.webview.state::<AppState>()
    }
}

#[test]
fn tools_need_an_open_project() {
    let app = app();
    let err = app
        .invoke("read_file", json!({"path": "hello.txt"}))
        .unwrap_err();
    assert_eq!(err["code"], "no_project_open", "{err}");
    assert_eq!(app.invoke("project_info", json!({})).unwrap(), Value::Null);
}

#[test]
fn a_tool_succeeds_with_the_llm_input_passed_straight_through() {
    let app = app();
    app.open();
    let out = app
        .invoke("read_file", json!({"path": "hello.txt", "start_line": 1}))
        .unwrap();
    assert_eq!(out["content"], "hello\n");
    assert_eq!(out["total_lines"], 1);
    let info = app.invoke("project_info", json!({})).unwrap();
    assert_eq!(info["name"], "project");
    let recent = app.invoke("recent_projects", json!({})).unwrap();
    assert_eq!(recent[0]["name"], "project");
}

#[test]
fn a_failure_is_the_standardized_error() {
    let app = app();
    app.open();
    let err = app
        .invoke("read_file", json!({"path": "../secret"}))
        .unwrap_err();
    assert_eq!(
        err,
        json!({"code": "path_outside_root", "message": "`../secret` resolves outside the project folder",
               "hint": "Use a path inside the project, relative to its root.", "retryable": false,
               "details": {"path": "../secret"}})
    );
}

#[test]
fn policy_asks_and_only_a_user_approval_token_lets_the_write_through() {
    let app = app();
    app.open();
    let input = json!({"path": "new.txt", "content": "x"});
    let decision = app
        .invoke(
            "check_policy",
            json!({"tool": "write_file", "input": input}),
        )
        .unwrap();
    assert_eq!(decision["decision"], "ask");
    let err = app.invoke("write_file", input.clone()).unwrap_err();
    assert_eq!(err["code"], "approval_required");
    let mut forged = input.clone();
    forged["approval"] = json!("not-a-token");
    assert_eq!(
        app.invoke("write_file", forged).unwrap_err()["code"],
        "approval_required"
    );
    assert!(!app.project.join("new.txt").exists());

    let token = app
        .invoke(
            "approve_call",
            json!({"tool": "write_file", "input": input, "scope": "once"}),
        )
        .unwrap();
    let mut approved = input.clone();
    approved["approval"] = token.clone();
    assert_eq!(
        app.invoke("write_file", approved.clone()).unwrap()["created"],
        true
    );
    assert_eq!(std::fs::read(app.project.join("new.txt")).unwrap(), b"x");
    // The token was used up.
    assert_eq!(
        app.invoke("write_file", approved).unwrap_err()["code"],
        "approval_required"
    );

    // A session grant turns later asks into allows.
    app.invoke(
        "approve_call",
        json!({"tool": "write_file", "input": input, "scope": "session"}),
    )
    .unwrap();
    let other = json!({"path": "other.txt", "content": "y"});
    let decision = app
        .invoke(
            "check_policy",
            json!({"tool": "write_file", "input": other}),
        )
        .unwrap();
    assert_eq!(decision["decision"], "allow");
    app.invoke("write_file", other).unwrap();
}

#[test]
fn tool_specs_come_from_the_registry() {
    let app = app();
    let specs = app.invoke("tool_specs", json!({})).unwrap();
    assert_eq!(specs.as_array().unwrap().len(), 8);
    assert_eq!(specs[7]["name"], "exec_shell");
    assert_eq!(specs[7]["risk"], "shell");
}

#[test]
fn settings_never_send_the_key_back() {
    let app = app();
    let saved = app
        .invoke(
            "save_settings",
            json!({"settings": {"provider": "openai", "base_url": "http://127.0.0.1:9/v1", "model": "m",
                   "max_tokens": 100, "mode": "auto_edit", "api_key": "sk-very-secret"}}),
        )
        .unwrap();
    assert_eq!(saved["has_api_key"], true);
    assert_eq!(saved["mode"], "auto_edit");
    let got = app.invoke("get_settings", json!({})).unwrap();
    assert!(!got.to_string().contains("sk-very-secret"), "{got}");
    assert_eq!(got["provider"], "openai");
}

#[test]
fn conversations_are_saved_per_project() {
    let app = app();
    app.open();
    app.invoke(
        "save_conversation",
        json!({"conversation": {"messages": [1, 2]}}),
    )
    .unwrap();
    assert_eq!(
        app.invoke("load_conversation", json!({})).unwrap(),
        json!({"messages": [1, 2]})
    );
}

fn collecting_channel() -> (
    Channel<corral_app::commands::tools::ShellEvent>,
    Arc<Mutex<Vec<Value>>>,
) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    let channel = Channel::new(move |body| {
        sink.lock()
            .unwrap()
            .push(body.deserialize::<Value>().unwrap());
        Ok(())
    });
    (channel, seen)
}

#[test]
fn a_shell_run_streams_its_output_through_the_channel() {
    let app = app();
    app.open_in_full_auto();
    let (channel, seen) = collecting_channel();
    let input = json!({"command": "node", "args": ["-e", "console.log('one'); setTimeout(() => console.log('two'), 200)"]});
    let state = app.state();
    let out = tauri::async_runtime::block_on(corral_app::commands::tools::run_shell(
        &state, input, None, "run-1", channel,
    ))
    .unwrap();
    assert_eq!(out["exit_code"], 0);
    let chunks = seen.lock().unwrap().clone();
    let streamed: String = chunks.iter().map(|c| c["data"].as_str().unwrap()).collect();
    assert_eq!(streamed, "one\ntwo\n");
    assert!(chunks.iter().all(|c| c["stream"] == "stdout"));
    assert!(chunks.len() >= 2, "output arrived as it came: {chunks:?}");
}

#[test]
fn cancel_stops_a_running_shell_command() {
    let app = app();
    app.open_in_full_auto();
    let (channel, _seen) = collecting_channel();
    let input = json!({"command": "node", "args": ["-e", "setTimeout(() => {}, 20000)"]});
    let started = std::time::Instant::now();
    let canceller = {
        let webview = app.webview.clone();
        std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(400));
            webview.state::<AppState>().cancel("run-2");
        })
    };
    let state = app.state();
    let result = tauri::async_runtime::block_on(corral_app::commands::tools::run_shell(
        &state, input, None, "run-2", channel,
    ));
    canceller.join().unwrap();
    assert!(
        started.elapsed().as_secs() < 10,
        "cancel did not stop the run"
    );
    match result {
        Ok(out) => assert_ne!(out["exit_code"], 0, "{out}"),
        Err(e) => assert_eq!(e.code.as_str(), "cancelled"),
    }
}

#[test]
fn stop_all_on_exit_ends_running_commands_and_their_children() {
    let app = app();
    app.open_in_full_auto();
    // A command that starts a grandchild and prints its pid, then waits.
    let script = "const c = require('child_process').spawn('sleep', ['30'], {stdio: 'ignore'}); \
                  console.log(c.pid); setTimeout(() => {}, 30000)";
    let (channel, seen) = collecting_channel();
    let runner = {
        let webview = app.webview.clone();
        std::thread::spawn(move || {
            let state = webview.state::<AppState>();
            let input = json!({"command": "node", "args": ["-e", script]});
            tauri::async_runtime::block_on(corral_app::commands::tools::run_shell(
                &state, input, None, "run-exit", channel,
            ))
        })
    };
    let started = std::time::Instant::now();
    let pid = loop {
        let text: String = seen
            .lock()
            .unwrap()
            .iter()
            .map(|c| c["data"].as_str().unwrap().to_string())
            .collect();
        if let Ok(pid) = text.trim().parse::<u32>() {
            break pid;
        }
        assert!(started.elapsed().as_secs() < 10, "no pid printed: {text:?}");
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    let alive = |pid: u32| {
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .map(|s| !s.rsplit(") ").next().unwrap_or("").starts_with('Z'))
            .unwrap_or(false)
    };
    assert!(alive(pid));
    let left = app.state().stop_all(std::time::Duration::from_secs(5));
    assert_eq!(left, 0, "a run was still registered after stop_all");
    assert!(!alive(pid), "the command's child outlived stop_all");
    let result = runner.join().unwrap();
    assert_eq!(result.unwrap_err().code.as_str(), "cancelled");
}

#[test]
fn a_remote_origin_cannot_reach_the_commands() {
    let app = app();
    app.open();
    let request = InvokeRequest {
        cmd: "read_file".into(),
        callback: CallbackFn(0),
        error: CallbackFn(1),
        url: "https://attacker.invalid/page".parse().unwrap(),
        body: InvokeBody::Json(json!({"path": "hello.txt"})),
        headers: Default::default(),
        invoke_key: INVOKE_KEY.to_string(),
    };
    let err = get_ipc_response(&app.webview, request).unwrap_err();
    assert!(
        err.as_str().unwrap_or_default().contains("not allowed"),
        "{err}"
    );
}

#[test]
fn an_approval_of_the_models_raw_input_matches_the_command_call() {
    let app = app();
    app.open();
    std::fs::write(app.project.join("a.txt"), "one\n").unwrap();
    // The model sent no replace_all; the command sees it as absent, not false.
    let input = json!({"path": "a.txt", "old_string": "one", "new_string": "two"});
    let token = app
        .invoke(
            "approve_call",
            json!({"tool": "edit_file", "input": input, "scope": "once"}),
        )
        .unwrap();
    let mut call = input.clone();
    call["approval"] = token;
    assert_eq!(app.invoke("edit_file", call).unwrap()["replacements"], 1);
    assert_eq!(std::fs::read(app.project.join("a.txt")).unwrap(), b"two\n");
}
