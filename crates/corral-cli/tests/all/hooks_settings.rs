//! The project's hook settings as the real `corral-cli serve` reads them:
//! beneath the project's root handle. A FIFO at `.claude/settings.json`
//! is a problem of `hook_status`'s answer, given at once, and serve goes
//! on answering; a settings file linked out of the project is a problem
//! too, and its hooks never run, even with the project's hooks trusted.

use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::Duration;

/// The longest serve may take to answer one request here.
const ANSWER_WITHIN: Duration = Duration::from_secs(30);

/// `corral-cli serve` on its pipes, its lines read on a thread so that a
/// request never answered fails the test instead of hanging it.
struct Serve {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
}

impl Serve {
    fn start(root: &Path) -> Serve {
        let mut child = crate::common::corral_cli()
            .args(["serve", "--root"])
            .arg(root)
            .args(["--mode", "ask", "--no-lsp", "--no-checkpoint"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in stdout.lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut serve = Serve {
            child,
            stdin,
            lines,
        };
        let ready = serve.read("the first line");
        assert!(ready.get("ready").is_some(), "{ready}");
        serve
    }

    fn read(&mut self, waiting_for: &str) -> Value {
        let line = self.lines.recv_timeout(ANSWER_WITHIN).unwrap_or_else(|e| {
            panic!("serve gave no {waiting_for} within {ANSWER_WITHIN:?}: {e}")
        });
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line:?}"))
    }

    /// Sends a request and gives its answer (`ok` or `error`).
    fn ask(&mut self, id: u64, command: &str, args: Value) -> Value {
        let request = json!({"id": id, "command": command, "args": args});
        writeln!(self.stdin, "{request}").unwrap();
        self.stdin.flush().unwrap();
        let answer = self.read(&format!("answer to {request}"));
        assert_eq!(answer["id"], id, "{answer}");
        answer
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn hook(command: &str) -> String {
    json!({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": command}]}]}}).to_string()
}

fn problems(status: &Value) -> Vec<&str> {
    status["problems"]
        .as_array()
        .unwrap_or_else(|| panic!("no problems in {status}"))
        .iter()
        .map(|p| p.as_str().unwrap())
        .collect()
}

#[test]
fn a_fifo_for_the_projects_settings_is_a_problem_and_serve_answers_on() {
    let project = tempfile::tempdir().unwrap();
    let app = project.path();
    std::fs::write(app.join("a.txt"), "hello\n").unwrap();
    std::fs::create_dir(app.join(".claude")).unwrap();
    let made = std::process::Command::new("mkfifo")
        .arg(app.join(".claude/settings.json"))
        .status()
        .unwrap();
    assert!(made.success());
    std::fs::write(app.join(".claude/settings.local.json"), hook("echo local")).unwrap();
    let mut serve = Serve::start(app);

    let status = serve.ask(1, "hook_status", json!({}));
    let status = &status["ok"];
    assert_eq!(
        problems(status),
        ["invalid_input: `.claude/settings.json` is not a regular file (a device, socket or pipe); its hooks are not read"],
        "{status}"
    );
    // The other file is read as ever: its hooks wait for trust.
    assert_eq!(
        status["untrusted"][0]["file"],
        ".claude/settings.local.json"
    );
    assert_eq!(status["untrusted"][0]["hooks"][0]["command"], "echo local");

    // And serve answers the next request, and the next.
    let read = serve.ask(
        2,
        "call_tool",
        json!({"name": "read_file", "input": {"path": "a.txt"}}),
    );
    assert_eq!(read["ok"]["content"], "hello\n", "{read}");
    let again = serve.ask(3, "hook_status", json!({}));
    assert_eq!(problems(&again["ok"]).len(), 1, "{again}");
}

#[test]
fn settings_linked_out_of_the_project_are_a_problem_and_their_hooks_never_run() {
    let tmp = tempfile::tempdir().unwrap();
    let app = tmp.path().join("app");
    let outside = tmp.path().join("outside");
    std::fs::create_dir_all(app.join(".claude")).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("settings.json"), hook("echo outside-abs")).unwrap();
    std::fs::write(
        outside.join("settings.local.json"),
        hook("echo outside-rel"),
    )
    .unwrap();
    // One link absolute, one relative climbing out.
    std::os::unix::fs::symlink(
        outside.join("settings.json"),
        app.join(".claude/settings.json"),
    )
    .unwrap();
    std::os::unix::fs::symlink(
        "../../outside/settings.local.json",
        app.join(".claude/settings.local.json"),
    )
    .unwrap();
    let mut serve = Serve::start(&app);

    // Every project hook trusted, whatever its text: still none is read.
    let status = serve.ask(1, "use_settings", json!({"trust_project_hooks": true}));
    let status = &status["ok"];
    assert_eq!(status["events"], json!([]), "{status}");
    assert_eq!(status["untrusted"], json!([]), "{status}");
    assert_eq!(
        problems(status),
        [
            "path_outside_root: `.claude/settings.json` resolves outside the project folder; its hooks are not read",
            "path_outside_root: `.claude/settings.local.json` resolves outside the project folder; its hooks are not read",
        ],
        "{status}"
    );
    let ran = serve.ask(2, "run_hooks", json!({"request": {"event": "Stop"}}));
    assert_eq!(ran["ok"]["ran"], json!([]), "{ran}");

    // The same folder, linked whole: refused the same way.
    std::fs::remove_file(app.join(".claude/settings.json")).unwrap();
    std::fs::remove_file(app.join(".claude/settings.local.json")).unwrap();
    std::fs::remove_dir(app.join(".claude")).unwrap();
    std::os::unix::fs::symlink("../outside", app.join(".claude")).unwrap();
    let status = serve.ask(3, "hook_status", json!({}));
    let status = &status["ok"];
    assert_eq!(status["events"], json!([]), "{status}");
    let problems = problems(status);
    assert_eq!(problems.len(), 2, "{status}");
    assert!(
        problems
            .iter()
            .all(|p| p.starts_with("path_outside_root: ")),
        "{status}"
    );
    let ran = serve.ask(4, "run_hooks", json!({"request": {"event": "Stop"}}));
    assert_eq!(ran["ok"]["ran"], json!([]), "{ran}");
}
