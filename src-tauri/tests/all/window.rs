//! The app on Tauri's mock runtime with a window, as the commands' suites
//! drive it: commands invoked as the window invokes them, a tool called
//! with or without the user's answer, and what each `Channel` received.

use corral_app::state::AppState;
use corral_app::store::Store;
use corral_testkit::Project;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tauri::ipc::{CallbackFn, InvokeBody, InvokeResponseBody};
use tauri::test::{get_ipc_response, mock_builder, mock_context, noop_assets, INVOKE_KEY};
use tauri::webview::InvokeRequest;
use tauri::{Manager, WebviewWindow, WebviewWindowBuilder};

/// What arrived on each channel, by the channel's id (the webview side of
/// a `Channel` argument `"__CHANNEL__:<id>"`): each message with its index.
pub(crate) type Channels = Arc<Mutex<HashMap<u32, Vec<(usize, Value)>>>>;

/// The app with a window, on a fixture project (open it with `open`).
pub(crate) struct App {
    /// The fixture project, with the app's config and data folders.
    pub(crate) kit: Project,
    /// The project folder.
    pub(crate) project: std::path::PathBuf,
    pub(crate) app: tauri::App<tauri::test::MockRuntime>,
    pub(crate) webview: WebviewWindow<tauri::test::MockRuntime>,
    pub(crate) channels: Channels,
}

/// The app on a project holding `hello.txt`.
pub(crate) fn app() -> App {
    app_on(Project::new().file("hello.txt", "hello\n"))
}

/// The app on `kit`'s project, keeping its config and data in `kit`'s.
pub(crate) fn app_on(kit: Project) -> App {
    let project = kit.root().to_path_buf();
    let store = Store::without_keychain(kit.config_dir(), kit.data_dir());
    let channels = Channels::default();
    let sink = channels.clone();
    // A command's `Channel` argument sends to the webview by evaluating a
    // script, which the mock runtime drops; Tauri's channel interceptor is
    // the hook that sees each message instead.
    let builder = mock_builder().channel_interceptor(move |_webview, channel, index, body| {
        let message = match body {
            InvokeResponseBody::Json(json) => serde_json::from_str(json).unwrap(),
            InvokeResponseBody::Raw(bytes) => json!(bytes),
        };
        sink.lock()
            .unwrap()
            .entry(channel.0)
            .or_default()
            .push((index, message));
        true
    });
    let app = corral_app::builder(builder)
        .manage(AppState::new(store))
        .build(mock_context(noop_assets()))
        .unwrap();
    let webview = WebviewWindowBuilder::new(&app, "main", Default::default())
        .build()
        .unwrap();
    App {
        kit,
        project,
        app,
        webview,
        channels,
    }
}

pub(crate) fn request(cmd: &str, args: Value) -> InvokeRequest {
    InvokeRequest {
        cmd: cmd.into(),
        callback: CallbackFn(0),
        error: CallbackFn(1),
        // Linux serves the app from the `tauri://` protocol: a local origin.
        url: "tauri://localhost".parse().unwrap(),
        body: InvokeBody::Json(args),
        headers: Default::default(),
        invoke_key: INVOKE_KEY.to_string(),
    }
}

/// `call_tool`'s arguments for a tool call written flat, as the model's
/// input with the app's own `approval`, `conversation`, `run_id` and
/// `on_output` beside it.
pub(crate) fn tool_args(name: &str, flat: Value) -> Value {
    let mut input = flat.as_object().cloned().unwrap_or_default();
    let mut args = json!({"name": name});
    for key in ["approval", "conversation", "run_id", "on_output"] {
        if let Some(value) = input.remove(key) {
            args[key] = value;
        }
    }
    args["input"] = Value::Object(input);
    args
}

impl App {
    /// The app closed (its project first, as quitting does) and started
    /// again on the same project, config and data (not opened yet).
    pub(crate) fn restart(self) -> App {
        self.app.state::<AppState>().close_project();
        let App {
            kit, app, webview, ..
        } = self;
        drop(webview);
        drop(app);
        app_on(kit)
    }

    /// Calls a tool as the window does: one `call_tool`, or with the
    /// user's `approval`, `check_call` then `run_call` with the answer (in
    /// the conversation the answer names, if the call names none).
    pub(crate) fn tool(&self, name: &str, flat: Value) -> Result<Value, Value> {
        let mut args = tool_args(name, flat);
        let Some(approval) = args.as_object_mut().unwrap().remove("approval") else {
            return self.invoke("call_tool", args);
        };
        let conversation = args
            .get("conversation")
            .or_else(|| approval.get("conversation"))
            .cloned();
        let mut check = json!({"tool": name, "input": args["input"]});
        if let Some(conversation) = conversation {
            check["conversation"] = conversation;
        }
        let ticket = self.invoke("check_call", check)?;
        self.run_ticket(&ticket, approval)
    }

    /// Runs a checked call's ticket with the user's answer.
    pub(crate) fn run_ticket(&self, ticket: &Value, approval: Value) -> Result<Value, Value> {
        self.invoke(
            "run_call",
            json!({"ticket": ticket["ticket"], "approval": approval}),
        )
    }

    pub(crate) fn tool_in_background(
        &self,
        name: &str,
        flat: Value,
    ) -> std::thread::JoinHandle<Result<Value, Value>> {
        self.invoke_in_background("call_tool", tool_args(name, flat))
    }

    pub(crate) fn invoke(&self, cmd: &str, args: Value) -> Result<Value, Value> {
        get_ipc_response(&self.webview, request(cmd, args))
            .map(|body| body.deserialize::<Value>().unwrap())
    }

    /// Invokes a command from another thread, as the webview does while it
    /// goes on with other calls.
    pub(crate) fn invoke_in_background(
        &self,
        cmd: &str,
        args: Value,
    ) -> std::thread::JoinHandle<Result<Value, Value>> {
        let webview = self.webview.clone();
        let request = request(cmd, args);
        std::thread::spawn(move || {
            get_ipc_response(&webview, request).map(|body| body.deserialize::<Value>().unwrap())
        })
    }

    /// The messages that arrived on a channel so far, checked to be in
    /// the order they were sent.
    pub(crate) fn received(&self, channel: u32) -> Vec<Value> {
        let received = self
            .channels
            .lock()
            .unwrap()
            .get(&channel)
            .cloned()
            .unwrap_or_default();
        let indices: Vec<usize> = received.iter().map(|(index, _)| *index).collect();
        assert_eq!(indices, (0..received.len()).collect::<Vec<_>>());
        received.into_iter().map(|(_, message)| message).collect()
    }

    /// The text a shell run streamed on a channel so far.
    pub(crate) fn streamed(&self, channel: u32) -> String {
        self.received(channel)
            .iter()
            .map(|event| event["data"].as_str().unwrap().to_string())
            .collect()
    }

    /// Waits (up to 10 s) until the text streamed on a channel passes `done`.
    pub(crate) fn wait_for_output<T>(&self, channel: u32, done: impl Fn(&str) -> Option<T>) -> T {
        let started = Instant::now();
        loop {
            let text = self.streamed(channel);
            if let Some(value) = done(&text) {
                return value;
            }
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "still waiting; streamed so far: {text:?}"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    pub(crate) fn open(&self) {
        self.invoke("open_project", json!({"path": self.project}))
            .unwrap();
    }

    /// Opens the project with the mode set to `full_auto` (commands run
    /// without approval tokens).
    pub(crate) fn open_in_full_auto(&self) {
        self.open();
        self.invoke(
            "save_settings",
            json!({"settings": {"provider": "anthropic", "base_url": "", "model": "m",
            "max_tokens": 100, "mode": "full_auto"}}),
        )
        .unwrap();
    }

    pub(crate) fn state(&self) -> tauri::State<'_, AppState> {
        self.webview.state::<AppState>()
    }
}
