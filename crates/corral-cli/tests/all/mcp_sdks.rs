//! MCP 2026-07-28 and the versions before it, both ways, with the official
//! SDKs of both lines as real processes (pinned in tests/mcp: the Python
//! SDK 2.x in `.venv` and 1.x in `v1/.venv`, the TypeScript SDK 2.x
//! `@modelcontextprotocol/client`/`server` and 1.x `@modelcontextprotocol/sdk`
//! in `ts/`, all installed by `scripts/setup.sh --test`).
//!
//! - Each SDK's client against `corral-cli mcp`: the version agreed on
//!   (2026-07-28 for a 2.x client, which probes `server/discover`;
//!   2025-11-25 for a 1.x client's `initialize`), the tools, a read, and
//!   two writes the default mode asks about, answered by the client's user
//!   through elicitation (an `input_required` round on 2026-07-28, a
//!   request from the server before): approved, the file is written;
//!   declined, it is `denied` and nothing is written.
//! - Corral's client (the session's `McpHub`, in the real sandbox) against
//!   each SDK's server: the version agreed on as both ends see it, and a
//!   call's real result; and against the Python SDK 2.x over streamable
//!   HTTP.

#![allow(clippy::unwrap_used, clippy::disallowed_methods)]

use corral_session::mcp::{McpHub, McpServerConfig, McpState};
use corral_tools::shell::CancelToken;
use corral_tools::ProjectRoot;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

const MODERN: &str = "2026-07-28";
const HANDSHAKE: &str = "2025-11-25";

fn mcp_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp")
}

/// A file the setup installs, or a failure saying to run it.
fn installed(path: PathBuf) -> PathBuf {
    assert!(
        path.exists(),
        "the MCP SDKs are missing: run `scripts/setup.sh --test` ({} not found)",
        path.display()
    );
    path
}

/// The Python of the SDK 2.x venv.
fn python2() -> PathBuf {
    installed(mcp_dir().join(".venv/bin/python"))
}

/// The Python of the SDK 1.x venv.
fn python1() -> PathBuf {
    installed(mcp_dir().join("v1/.venv/bin/python"))
}

/// A TypeScript SDK script in `ts/`, once `npm ci` installed its packages.
fn ts_script(name: &str) -> PathBuf {
    installed(mcp_dir().join("ts/node_modules/@modelcontextprotocol/sdk"));
    installed(mcp_dir().join("ts/node_modules/@modelcontextprotocol/client"));
    installed(mcp_dir().join("ts/node_modules/@modelcontextprotocol/server"));
    mcp_dir().join("ts").join(name)
}

/// Runs a client `program script` against this build of `corral-cli mcp`
/// (default mode: writes ask) on a fresh project holding `a.txt`; returns
/// its report and the temp folder.
fn client_run(program: &Path, script: &Path) -> (Value, tempfile::TempDir) {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("project");
    std::fs::create_dir(&root).unwrap();
    std::fs::write(root.join("a.txt"), "inside\n").unwrap();
    let out = Command::new(program)
        .env("XDG_DATA_HOME", crate::common::data_home())
        .arg(script)
        .arg(env!("CARGO_BIN_EXE_corral-cli"))
        .arg(&root)
        .current_dir(mcp_dir())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{} failed: {stdout}\n{}",
        script.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    (serde_json::from_str(&stdout).unwrap(), tmp)
}

/// What every client must have seen, on the version `protocol`.
fn assert_scenario(report: &Value, tmp: &tempfile::TempDir, protocol: &str) {
    let root = tmp.path().join("project");
    assert_eq!(report["protocol"], protocol, "{report}");
    assert_eq!(report["server"], "corral");
    let registry: Vec<String> = corral_tools::spec::specs()
        .into_iter()
        .map(|s| s.name)
        .collect();
    assert_eq!(report["tools"], json!(registry));
    assert_eq!(report["read"]["is_error"], false, "{report}");
    assert_eq!(report["read"]["structured"]["content"], "inside\n");
    // Approved by the client's user: written.
    assert_eq!(report["yes"]["is_error"], false, "{report}");
    assert_eq!(
        std::fs::read_to_string(root.join("yes.txt")).unwrap(),
        "approved\n"
    );
    // Declined: denied, and nothing written.
    assert_eq!(report["no"]["is_error"], true, "{report}");
    assert_eq!(report["no"]["structured"]["code"], "denied");
    assert!(!root.join("no.txt").exists());
    // Each write was asked about once, naming its file.
    let questions = report["questions"].as_array().unwrap();
    assert_eq!(questions.len(), 2, "{report}");
    assert!(questions[0].as_str().unwrap().contains("yes.txt"));
    assert!(questions[1].as_str().unwrap().contains("no.txt"));
}

#[test]
fn the_python_sdk_2_client_speaks_2026_07_28_and_answers_in_input_required_rounds() {
    let (report, tmp) = client_run(&python2(), &mcp_dir().join("sdk_client.py"));
    assert!(report["sdk"].as_str().unwrap().starts_with("python 2."));
    assert_scenario(&report, &tmp, MODERN);
}

#[test]
fn the_python_sdk_1_client_speaks_2025_11_25_and_answers_elicitation_requests() {
    let (report, tmp) = client_run(&python1(), &mcp_dir().join("sdk_client.py"));
    assert!(report["sdk"].as_str().unwrap().starts_with("python 1."));
    assert_scenario(&report, &tmp, HANDSHAKE);
}

#[test]
fn the_typescript_sdk_2_client_speaks_2026_07_28() {
    let (report, tmp) = client_run(Path::new("node"), &ts_script("client2.mjs"));
    assert_scenario(&report, &tmp, MODERN);
}

#[test]
fn the_typescript_sdk_1_client_speaks_2025_11_25() {
    let (report, tmp) = client_run(Path::new("node"), &ts_script("client1.mjs"));
    assert_scenario(&report, &tmp, HANDSHAKE);
}

#[test]
fn on_2026_07_28_progress_streams_and_an_answer_holds_only_for_the_call_asked_about() {
    let (report, tmp) = client_run(&python2(), &mcp_dir().join("modern.py"));
    let root = tmp.path().join("project");
    let progress = &report["progress"];
    assert_eq!(progress["protocol"], MODERN, "{report}");
    assert_eq!(progress["is_error"], false, "{report}");
    let streamed: String = progress["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.as_str().unwrap())
        .collect();
    assert_eq!(streamed, "one\ntwo\n");
    // A client that declared no elicitation cannot be asked.
    assert_eq!(report["unasked"]["protocol"], MODERN);
    assert_eq!(report["unasked"]["code"], "approval_required");
    assert!(report["unasked"]["hint"]
        .as_str()
        .unwrap()
        .contains("--mode"));
    assert!(!root.join("unasked.txt").exists());
    // The question comes as an `input_required` result, never a request.
    assert_eq!(report["asked"]["input_required"], true, "{report}");
    assert_eq!(report["asked"]["requests"], json!(["approve"]));
    assert!(report["asked"]["message"]
        .as_str()
        .unwrap()
        .contains("honest.txt"));
    // An answer is taken only with the state given, for the call asked
    // about, once.
    assert_eq!(report["forged"]["code"], "invalid_input", "{report}");
    assert_eq!(report["swapped"]["code"], "invalid_input", "{report}");
    assert!(!root.join("swapped.txt").exists());
    assert_eq!(report["honest"]["is_error"], false, "{report}");
    assert_eq!(
        std::fs::read_to_string(root.join("honest.txt")).unwrap(),
        "honest\n"
    );
    assert_eq!(report["replayed"]["code"], "invalid_input", "{report}");
}

/// `corral-cli mcp`'s answer to `request`, the first line a client sends.
fn first_answer(request: Value) -> Value {
    use std::io::{BufRead, Write};
    let tmp = tempfile::tempdir().unwrap();
    let mut child = crate::common::corral_cli()
        .args(["mcp", "--root"])
        .arg(tmp.path())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    writeln!(stdin, "{request}").unwrap();
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    drop(stdin);
    child.wait().unwrap();
    serde_json::from_str(&line).unwrap()
}

#[test]
fn the_server_answers_each_version_in_its_own_lifecycle() {
    // `initialize` agrees on the version an older client asks for.
    for version in ["2025-06-18", HANDSHAKE] {
        let answer = first_answer(json!({
            "jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {
                "protocolVersion": version,
                "capabilities": {},
                "clientInfo": {"name": "test", "version": "1"},
            },
        }));
        assert_eq!(answer["result"]["protocolVersion"], version, "{answer}");
        assert_eq!(answer["result"]["serverInfo"]["name"], "corral");
    }
    // `server/discover` names every version, 2026-07-28 among them.
    let answer = first_answer(json!({
        "jsonrpc": "2.0", "id": 1, "method": "server/discover",
        "params": {"_meta": {
            "io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "1"},
            "io.modelcontextprotocol/clientCapabilities": {},
        }},
    }));
    let supported = answer["result"]["supportedVersions"].as_array().unwrap();
    for version in ["2025-06-18", HANDSHAKE, MODERN] {
        assert!(supported.contains(&json!(version)), "{answer}");
    }
    assert!(answer["result"]["capabilities"]["tools"].is_object());
    // No logging, no tasks: nothing deprecated or optional is offered.
    assert_eq!(
        answer["result"]["capabilities"]
            .as_object()
            .unwrap()
            .keys()
            .collect::<Vec<_>>(),
        ["tools"]
    );
}

/// A server of Corral's client: `program` with `args`, untrusted, in a
/// folder of its own, under the sandbox.
fn server(name: &str, program: &Path, args: &[PathBuf]) -> McpServerConfig {
    McpServerConfig {
        name: name.into(),
        command: program.display().to_string(),
        url: None,
        args: args.iter().map(|a| a.display().to_string()).collect(),
        env: Vec::new(),
        network: false,
        in_project: false,
        trusted: false,
        read_only_tools: Vec::new(),
        timeout_secs: Some(60),
    }
}

/// A project for Corral's client, holding the Python SDK server's script:
/// the sandbox shows a server its own install prefix (the venv), not the
/// rest of this checkout.
fn project_with_python_server() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let script = tmp.path().join(".fixture/sdk_server.py");
    std::fs::create_dir_all(tmp.path().join(".fixture")).unwrap();
    std::fs::copy(mcp_dir().join("sdk_server.py"), &script).unwrap();
    (tmp, script)
}

/// Starts `servers` in a hub on `project`; for each, with the version
/// expected: the version the hub agreed on, what the server's `protocol`
/// tool says it saw, and `echo`'s real result.
fn assert_servers(project: &Path, servers: Vec<McpServerConfig>, expected: &[(&str, &str, &str)]) {
    let root = Arc::new(ProjectRoot::open(project).unwrap());
    let hub = McpHub::new(root, servers.into_iter().map(|s| (s, Vec::new())).collect());
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        hub.start_all().await;
        let status = hub.status();
        for (name, agreed, seen) in expected {
            let server = status.iter().find(|s| s.name == *name).unwrap();
            assert_eq!(server.state, McpState::Running, "{server:?}");
            assert_eq!(server.tools, ["echo", "protocol"], "{server:?}");
            assert_eq!(
                hub.protocol_version(name).await.as_deref(),
                Some(*agreed),
                "{name}"
            );
            let cancel = CancelToken::default();
            let said = hub.call(name, "protocol", json!({}), &cancel).await;
            let said = said.unwrap();
            assert_eq!(said["content"][0]["text"], *seen, "{name}: {said}");
            let echoed = hub
                .call(name, "echo", json!({"text": "from Corral"}), &cancel)
                .await
                .unwrap();
            assert_eq!(echoed["content"][0]["text"], "echo: from Corral", "{name}");
            assert_eq!(echoed["is_error"], false, "{name}");
        }
        hub.stop_all().await;
    });
}

// The TypeScript servers run as programs (`#!/usr/bin/env node`), so the
// sandbox shows them their folder, `node_modules` and all, as it shows an
// npm-installed server its prefix.

#[test]
fn corrals_client_speaks_2026_07_28_to_the_new_sdks_servers() {
    let (project, script) = project_with_python_server();
    let servers = vec![
        server("py2", &python2(), &[script]),
        server("ts2", &ts_script("server2.mjs"), &[]),
    ];
    // Each names 2026-07-28 in its view of the call itself.
    assert_servers(
        project.path(),
        servers,
        &[("py2", MODERN, MODERN), ("ts2", MODERN, MODERN)],
    );
}

#[test]
fn corrals_client_falls_back_to_initialize_with_the_old_sdks_servers() {
    let (project, script) = project_with_python_server();
    let servers = vec![
        server("py1", &python1(), &[script]),
        server("ts1", &ts_script("server1.mjs"), &[]),
    ];
    assert_servers(
        project.path(),
        servers,
        &[("py1", HANDSHAKE, HANDSHAKE), ("ts1", HANDSHAKE, HANDSHAKE)],
    );
}

/// The Python SDK 2.x's server over streamable HTTP (the test kit's
/// fixture: `shout`, behind a bearer token), stopped when dropped.
struct HttpServer(std::process::Child);

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn corrals_client_speaks_2026_07_28_over_streamable_http() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let script = mcp_dir().join("../../../corral-testkit/fixtures/mcp_http_server.py");
    let _server = HttpServer(
        Command::new(python2())
            .arg(script)
            .arg(port.to_string())
            .arg("the-token")
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap(),
    );
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let tmp = tempfile::tempdir().unwrap();
    let root = Arc::new(ProjectRoot::open(tmp.path()).unwrap());
    let config = McpServerConfig {
        command: String::new(),
        url: Some(format!("http://127.0.0.1:{port}/mcp")),
        env: vec!["BEARER_TOKEN".into()],
        ..server("remote", Path::new(""), &[])
    };
    let vars = vec![("BEARER_TOKEN".to_string(), "the-token".to_string())];
    let hub = McpHub::new(root, vec![(config, vars)]);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        hub.start_all().await;
        assert_eq!(
            hub.status()[0].state,
            McpState::Running,
            "{:?}",
            hub.status()
        );
        assert_eq!(
            hub.protocol_version("remote").await.as_deref(),
            Some(MODERN)
        );
        let shouted = hub
            .call(
                "remote",
                "shout",
                json!({"text": "hello"}),
                &CancelToken::default(),
            )
            .await
            .unwrap();
        assert_eq!(shouted["content"][0]["text"], "HELLO", "{shouted}");
        hub.stop_all().await;
    });
}
