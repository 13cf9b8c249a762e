//! What the one-shot hosts refuse, with the standardized error: a command
//! in the background (`corral-cli call` and the MCP server end with their
//! call or session's request, so they offer none), and a call that can
//! change the project when there is no data folder for its checkpoint.

use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};

/// `corral-cli call` in `root` (`flags` after it); its exit code and the
/// JSON it printed.
fn call(
    command: &mut Command,
    root: &Path,
    flags: &[&str],
    tool: &str,
    input: Value,
) -> (i32, Value) {
    let out = command
        .args(["call", "--root"])
        .arg(root)
        .args(flags)
        .args([tool, &input.to_string()])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let value = serde_json::from_str(&stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out.status.code().unwrap(), value)
}

fn in_background() -> Value {
    json!({"command": "ls", "background": true})
}

#[test]
fn call_refuses_a_command_in_the_background() {
    let tmp = tempfile::tempdir().unwrap();
    let (code, out) = call(
        &mut crate::common::corral_cli(),
        tmp.path(),
        &[],
        "exec_shell",
        in_background(),
    );
    assert_eq!(code, 1, "{out}");
    assert_eq!(out["code"], "invalid_input", "{out}");
    assert_eq!(out["message"], "background commands are not available here");
    // The same command in the foreground runs.
    let (code, out) = call(
        &mut crate::common::corral_cli(),
        tmp.path(),
        &[],
        "exec_shell",
        json!({"command": "ls"}),
    );
    assert_eq!(code, 0, "{out}");
}

#[test]
fn a_change_with_no_data_folder_for_its_checkpoint_is_refused_and_a_read_runs() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("a.txt"), "one\n").unwrap();
    let homeless = || {
        let mut command = Command::new(env!("CARGO_BIN_EXE_corral-cli"));
        command.env_remove("HOME").env_remove("XDG_DATA_HOME");
        command
    };
    let write = json!({"path": "a.txt", "content": "two\n"});
    let (code, out) = call(
        &mut homeless(),
        tmp.path(),
        &[],
        "write_file",
        write.clone(),
    );
    assert_eq!(code, 1, "{out}");
    assert_eq!(out["code"], "invalid_input", "{out}");
    assert!(
        out["message"]
            .as_str()
            .unwrap()
            .starts_with("there is no data folder for the checkpoints"),
        "{out}"
    );
    assert_eq!(out["hint"], "Pass --store DIR, or --no-checkpoint.");
    assert_eq!(
        std::fs::read_to_string(tmp.path().join("a.txt")).unwrap(),
        "one\n"
    );
    // A read needs no checkpoint; --no-checkpoint lets the write through.
    let (code, out) = call(
        &mut homeless(),
        tmp.path(),
        &[],
        "read_file",
        json!({"path": "a.txt"}),
    );
    assert_eq!((code, &out["content"]), (0, &json!("one\n")), "{out}");
    let (code, out) = call(
        &mut homeless(),
        tmp.path(),
        &["--no-checkpoint"],
        "write_file",
        write,
    );
    assert_eq!(code, 0, "{out}");
}

#[test]
fn the_mcp_server_refuses_a_command_in_the_background() {
    let tmp = tempfile::tempdir().unwrap();
    let mut server = crate::common::corral_cli()
        .args(["mcp", "--mode", "full_auto", "--root"])
        .arg(tmp.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut to = server.stdin.take().unwrap();
    let mut from = BufReader::new(server.stdout.take().unwrap());
    let mut send = |message: Value| writeln!(to, "{message}").unwrap();
    let mut answer = |id: u64| -> Value {
        loop {
            let mut line = String::new();
            assert!(from.read_line(&mut line).unwrap() > 0, "the server ended");
            let message: Value = serde_json::from_str(&line).unwrap();
            if message["id"] == id {
                return message;
            }
        }
    };
    send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "refusals", "version": "1"}}}),
    );
    answer(1);
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let call = |id: u64, input: Value| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
               "params": {"name": "exec_shell", "arguments": input}})
    };
    send(call(2, in_background()));
    let refused = answer(2)["result"].clone();
    assert_eq!(refused["isError"], true, "{refused}");
    assert_eq!(
        refused["structuredContent"]["code"], "invalid_input",
        "{refused}"
    );
    assert_eq!(
        refused["structuredContent"]["message"],
        "background commands are not available here"
    );
    send(call(3, json!({"command": "ls"})));
    let ran = answer(3)["result"].clone();
    assert_eq!(ran["isError"], false, "{ran}");
    drop(to);
    server.wait().unwrap();
}
