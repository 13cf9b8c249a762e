//! `corral-cli mcp` driven by an independent client: the official Python
//! MCP SDK (`stdio_client` + `ClientSession`, pinned in
//! tests/mcp/requirements.txt, installed by `scripts/setup.sh --test`).

use serde_json::Value;
use std::path::Path;
use std::process::Command;

fn python() -> std::path::PathBuf {
    let venv = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/.venv/bin/python");
    assert!(
        venv.exists(),
        "the MCP test client is missing: run `scripts/setup.sh --test` ({} not found)",
        venv.display()
    );
    venv
}

#[test]
fn the_official_python_client_lists_and_calls_the_tools_under_the_policy() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("project");
    std::fs::create_dir(&root).unwrap();
    std::fs::write(root.join("a.txt"), "inside\n").unwrap();
    std::fs::write(tmp.path().join("outside.txt"), "outside secret\n").unwrap();
    let report = client("client.py", &[root.as_os_str(), "read_only".as_ref()]);
    let stdout = report.to_string();
    assert_eq!(report["server"], "corral");

    // Every registered tool, with its schema, description and risk hints.
    let tools = report["tools"].as_array().unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    let registry: Vec<String> = corral_tools::spec::specs()
        .into_iter()
        .map(|s| s.name)
        .collect();
    assert_eq!(names, registry);
    let tool = |name: &str| tools.iter().find(|t| t["name"] == name).unwrap();
    assert_eq!(tool("read_file")["schema_type"], "object");
    assert_eq!(tool("read_file")["read_only"], true);
    assert_eq!(tool("write_file")["destructive"], true);
    assert!(tool("exec_shell")["description"].as_str().unwrap().len() > 20);

    let calls = &report["calls"];
    assert_eq!(calls["read"]["is_error"], false);
    assert_eq!(calls["read"]["structured"]["content"], "inside\n");
    // Read-only mode: the write is denied by the policy, as a tool error
    // carrying the standardized error, and nothing is written.
    assert_eq!(calls["write"]["is_error"], true);
    assert_eq!(calls["write"]["structured"]["code"], "denied");
    assert!(!root.join("b.txt").exists());
    assert_eq!(calls["outside"]["is_error"], true);
    assert_eq!(calls["outside"]["structured"]["code"], "path_outside_root");
    assert!(!stdout.contains("outside secret"));
    assert_eq!(calls["unknown"]["structured"]["code"], "invalid_input");
    // The text content is the same JSON, for clients that only read text.
    let text: Value = serde_json::from_str(calls["write"]["text"][0].as_str().unwrap()).unwrap();
    assert_eq!(text, calls["write"]["structured"]);
}

#[test]
fn a_bad_root_is_a_standardized_error_on_stderr_and_nothing_on_stdout() {
    let out = crate::common::corral_cli()
        .args(["mcp", "--root", "/nonexistent/corral-mcp-test"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    let error: Value = serde_json::from_slice(&out.stderr).unwrap();
    assert_eq!(error["code"], "not_found");
}

/// The MCP Inspector's CLI mode (pinned in tests/mcp/package.json, installed
/// by `scripts/setup.sh --test`), a second client written by others.
fn inspector(root: &Path, method: &[&str]) -> Value {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp");
    let bin = dir.join("node_modules/.bin/mcp-inspector");
    assert!(
        bin.exists(),
        "the MCP Inspector is missing: run `scripts/setup.sh --test` ({} not found)",
        bin.display()
    );
    // The Inspector gives the server it starts only a few variables of
    // its own environment (HOME, PATH, ...); the data folder is passed on.
    let mut data_home = std::ffi::OsString::from("XDG_DATA_HOME=");
    data_home.push(crate::common::data_home());
    let out = Command::new(bin)
        .arg("--cli")
        .arg("-e")
        .arg(data_home)
        .arg(env!("CARGO_BIN_EXE_corral-cli"))
        .args(["mcp", "--root"])
        .arg(root)
        .args(method)
        .current_dir(&dir)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "inspector failed: {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(&stdout).unwrap()
}

#[test]
fn the_mcp_inspector_lists_the_tools_and_calls_one() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("a.txt"), "hi\n").unwrap();
    let listed = inspector(tmp.path(), &["--method", "tools/list"]);
    let names: Vec<&str> = listed["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    let registry: Vec<String> = corral_tools::spec::specs()
        .into_iter()
        .map(|s| s.name)
        .collect();
    assert_eq!(names, registry);
    assert_eq!(listed["tools"][0]["inputSchema"]["type"], "object");

    let read = inspector(
        tmp.path(),
        &[
            "--method",
            "tools/call",
            "--tool-name",
            "read_file",
            "--tool-arg",
            "path=a.txt",
        ],
    );
    assert_eq!(read["isError"], false);
    assert_eq!(read["structuredContent"]["content"], "hi\n");
    // The default mode asks for writes, and the server cannot ask anyone.
    let write = inspector(
        tmp.path(),
        &[
            "--method",
            "tools/call",
            "--tool-name",
            "write_file",
            "--tool-arg",
            "path=b.txt",
            "--tool-arg",
            "content=x",
        ],
    );
    assert_eq!(write["isError"], true);
    assert_eq!(write["structuredContent"]["code"], "approval_required");
    assert!(write["structuredContent"]["hint"]
        .as_str()
        .unwrap()
        .contains("--mode"));
    assert!(!tmp.path().join("b.txt").exists());
}

/// Runs `tests/mcp/asks.py` (a client that answers elicitation with
/// `answer`) on a fresh project; returns the report, the project and the
/// checkpoint folder.
fn asking_client(answer: &str) -> (Value, tempfile::TempDir) {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("project");
    std::fs::create_dir(&root).unwrap();
    std::fs::write(root.join("a.txt"), "inside\n").unwrap();
    let store = tmp.path().join("store");
    let report = client(
        "asks.py",
        &[root.as_os_str(), store.as_os_str(), answer.as_ref()],
    );
    (report, tmp)
}

/// Runs the Python client `script` (in tests/mcp/) against this build of
/// `corral-cli` with `args`; returns the JSON report it prints.
fn client(script: &str, args: &[&std::ffi::OsStr]) -> Value {
    let script = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/mcp")
        .join(script);
    let out = Command::new(python())
        .env("XDG_DATA_HOME", crate::common::data_home())
        .arg(script)
        .arg(env!("CARGO_BIN_EXE_corral-cli"))
        .args(args)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "client failed: {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(&stdout).unwrap()
}

#[test]
fn a_call_that_asks_is_asked_of_the_clients_user_and_runs_only_accepted() {
    let (report, tmp) = asking_client("accept");
    let root = tmp.path().join("project");
    let asked = report["asked"].as_array().unwrap();
    assert_eq!(asked.len(), 2, "the write and the command ask: {report}");
    let message = asked[0]["message"].as_str().unwrap();
    assert!(
        message.contains("write_file") && message.contains("asked.txt"),
        "{message}"
    );
    assert!(asked[1]["message"].as_str().unwrap().contains("exec_shell"));
    assert_eq!(
        asked[0]["schema"]["properties"]["approve"]["type"],
        "boolean"
    );
    assert_eq!(report["write"]["is_error"], false, "{report}");
    assert_eq!(
        std::fs::read_to_string(root.join("asked.txt")).unwrap(),
        "yes\n"
    );
    // The write was checkpointed first, in the folder given.
    let listed = crate::common::corral_cli()
        .args(["checkpoint", "list", "--root"])
        .arg(&root)
        .arg("--store")
        .arg(tmp.path().join("store"))
        .output()
        .unwrap();
    let listed: Value = serde_json::from_slice(&listed.stdout).unwrap();
    let tools: Vec<&str> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["tool"].as_str().unwrap())
        .collect();
    assert!(tools.contains(&"write_file"), "{listed}");

    let (declined, tmp) = asking_client("decline");
    assert_eq!(declined["write"]["is_error"], true);
    assert_eq!(
        declined["write"]["structured"]["code"], "denied",
        "{declined}"
    );
    assert!(!tmp.path().join("project/asked.txt").exists());
}

#[test]
fn a_commands_output_streams_as_progress_notifications() {
    if !Path::new("/usr/bin/node").exists() {
        eprintln!("note: no node here; skipping");
        return;
    }
    // `node` asks in the default mode: the client accepts.
    let (report, _tmp) = asking_client("accept");
    assert_eq!(report["shell"]["is_error"], false, "{report}");
    let progress = report["progress"].as_array().unwrap();
    let streamed: String = progress
        .iter()
        .map(|p| p["message"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(streamed, "tick 1\ntick 2\ntick 3\n", "{report}");
    let counts: Vec<f64> = progress
        .iter()
        .map(|p| p["progress"].as_f64().unwrap())
        .collect();
    assert!(counts.windows(2).all(|w| w[0] < w[1]), "{counts:?}");
    assert_eq!(*counts.last().unwrap(), streamed.len() as f64);
}

#[test]
fn the_question_shows_each_value_whole_and_marked_or_is_not_asked() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("project");
    std::fs::create_dir(&root).unwrap();
    let report = client("hostile_question.py", &[root.as_os_str()]);
    let payload = r#"import("node:fs").then((fs) => fs.rmSync("src", { recursive: true }))"#;
    let asked: Vec<&str> = report["asked"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.as_str().unwrap())
        .collect();
    assert_eq!(asked.len(), 2, "the too-long write is not asked: {report}");
    // The payload after 300 spaces, and after 6,000 braille blanks, is in the question whole.
    assert!(
        asked[0].contains(&format!("content: count = 10⟨300 spaces⟩{payload}↵\n")),
        "{}",
        asked[0]
    );
    assert!(
        asked[1].contains(&format!(
            r#"args: ["-e","console.log(\"hi\")⟨U+2800 ×6000⟩;{}"]"#,
            payload.replace('"', "\\\"")
        )),
        "{}",
        asked[1]
    );
    for key in ["spaces", "braille"] {
        assert_eq!(
            report["results"][key]["structured"]["code"], "denied",
            "{report}"
        );
    }
    let refused = &report["results"]["too_long"]["structured"];
    assert_eq!(refused["code"], "approval_required", "{report}");
    assert!(
        refused["message"]
            .as_str()
            .unwrap()
            .contains("was not asked about"),
        "{refused}"
    );
    assert!(refused["details"]["question_chars"].as_u64().unwrap() > 16_000);
    assert!(!root.join("table.js").exists() && !root.join("config.js").exists());
}

/// Runs `tests/mcp/domains.py` (commands with the network meeting a domain
/// off the allowlist) with a client that answers `answer`; the server gets
/// `server_args` too. Returns the report.
fn domain_client(answer: &str, server_args: &[&str]) -> Value {
    let tmp = tempfile::tempdir().unwrap();
    let mut args: Vec<&std::ffi::OsStr> = vec![tmp.path().as_os_str(), answer.as_ref()];
    args.extend(server_args.iter().map(std::ffi::OsStr::new));
    client("domains.py", &args)
}

/// A command's stderr in the report (the proxy logs each connection there).
fn stderr_of(report: &Value, call: usize) -> String {
    let result = &report["calls"][call];
    assert_eq!(result["is_error"], false, "{result}");
    result["structured"]["stderr"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[test]
fn a_domain_off_the_allowlist_is_asked_of_the_client_once_per_session() {
    if !corral_tools::shell::namespaces_available() {
        eprintln!("note: no namespaces here; skipping");
        return;
    }
    let report = domain_client("accept", &["--allow-domain", "allowed.invalid"]);
    // One question for two connections at once and a second command.
    let asked = report["asked"].as_array().unwrap();
    assert_eq!(asked.len(), 1, "{report}");
    let message = asked[0]["message"].as_str().unwrap();
    assert!(message.contains("`elsewhere.invalid`"), "{message}");
    assert!(!message.contains("allowed.invalid"), "{message}");
    // Allowed: the proxy goes on to resolve the names (nowhere).
    for call in [0, 1] {
        let stderr = stderr_of(&report, call);
        assert!(!stderr.contains("refused"), "{stderr}");
        assert!(stderr.contains("elsewhere.invalid"), "{stderr}");
        assert!(stderr.contains("could not resolve"), "{stderr}");
    }
    assert!(stderr_of(&report, 0).contains("allowed.invalid"));

    // Declined: refused, and not asked again in the session.
    let report = domain_client("decline", &["--allow-domain", "allowed.invalid"]);
    assert_eq!(report["asked"].as_array().unwrap().len(), 1, "{report}");
    for call in [0, 1] {
        let stderr = stderr_of(&report, call);
        assert!(
            stderr.contains("refused GET http://elsewhere.invalid")
                && stderr.contains("the user did not allow it"),
            "{stderr}"
        );
    }
}

#[test]
fn a_client_that_cannot_be_asked_gets_the_refusal_naming_the_flag() {
    if !corral_tools::shell::namespaces_available() {
        eprintln!("note: no namespaces here; skipping");
        return;
    }
    let report = domain_client("none", &[]);
    assert!(report["asked"].as_array().unwrap().is_empty(), "{report}");
    let stderr = stderr_of(&report, 0);
    assert!(
        stderr.contains("refused GET http://elsewhere.invalid")
            && stderr.contains("`corral-cli call` or `mcp`: --allow-domain NAME"),
        "{stderr}"
    );
    let refused = report["calls"][0]["structured"]["network_refused"]
        .as_str()
        .unwrap_or_default();
    assert!(refused.contains("--allow-domain"), "{report}");
}

#[test]
fn a_bad_allow_domain_stops_the_server_with_a_standardized_error() {
    let out = crate::common::corral_cli()
        .args(["mcp", "--root", "/tmp", "--allow-domain", "*.com"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    let error: Value = serde_json::from_slice(&out.stderr).unwrap();
    assert_eq!(error["code"], "invalid_input");
    assert_eq!(error["details"]["domain"], "*.com");
}

/// The client leaves (its end of stdin closes: it quit or was killed)
/// while a command runs: the server and the command are gone within 2 s,
/// not at the command's time limit.
#[test]
fn a_client_that_leaves_mid_command_ends_everything_at_once() {
    use serde_json::json;
    use std::io::{BufRead, BufReader, Write};
    use std::time::{Duration, Instant};
    let root = tempfile::tempdir().unwrap();
    let marker = format!("corral-mcp-left-{}", std::process::id());
    let mut server = crate::common::corral_cli()
        .args([
            "mcp",
            "--mode",
            "full_auto",
            "--no-lsp",
            "--no-checkpoint",
            "--root",
        ])
        .arg(root.path())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = server.stdin.take().unwrap();
    let mut lines = BufReader::new(server.stdout.take().unwrap()).lines();
    let mut send = |message: Value| writeln!(stdin, "{message}").unwrap();
    send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "leaving", "version": "1"}}}),
    );
    let answered: Value = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
    assert_eq!(answered["id"], 1, "{answered}");
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    send(
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "exec_shell", "arguments": {"command": "python3",
        "args": ["-c", "import time; time.sleep(60)", &marker], "timeout_secs": 120}}}),
    );
    let reading = std::thread::spawn(move || lines.count());
    let started = Instant::now();
    while crate::ssh::processes("python3", &marker).is_empty() {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the command never started"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    drop(stdin);
    let left = Instant::now();
    loop {
        if server.try_wait().unwrap().is_some() {
            break;
        }
        assert!(
            left.elapsed() < Duration::from_secs(2),
            "the server lives on"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(crate::ssh::processes("python3", &marker), Vec::<u32>::new());
    reading.join().unwrap();
}
