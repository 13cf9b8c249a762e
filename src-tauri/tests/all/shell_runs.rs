//! Commands run through the app: output streamed through the call's
//! channel up to its limit, Stop (also one that overtakes its command),
//! and every command ended when the app exits.

use crate::window::app;
use serde_json::{json, Value};
use std::time::{Duration, Instant};

/// Whether a live process's command line contains `marker` (the sandbox's
/// PID namespace hides a command's real pid from itself).
fn running_with(marker: &str) -> bool {
    std::fs::read_dir("/proc").unwrap().flatten().any(|e| {
        let pid = e.file_name();
        let pid = pid.to_string_lossy();
        pid.parse::<u32>().is_ok_and(alive)
            && std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|c| String::from_utf8_lossy(&c).contains(marker))
    })
}

/// Whether a process is running (a zombie is not).
fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| !s.rsplit(") ").next().unwrap_or("").starts_with('Z'))
        .unwrap_or(false)
}

#[test]
fn a_shell_run_streams_its_output_through_the_channel() {
    let app = app();
    app.open_in_full_auto();
    // Prints `one`, then waits for the test to create `go` before `two`.
    let script = "console.log('one'); const t = setInterval(() => { \
                  if (require('fs').existsSync('go')) { console.log('two'); clearInterval(t); } }, 20)";
    let run = app.tool_in_background(
        "exec_shell",
        json!({"command": "node", "args": ["-e", script], "run_id": "run-1",
               "on_output": "__CHANNEL__:7"}),
    );
    app.wait_for_output(7, |text| (text == "one\n").then_some(()));
    assert!(
        !run.is_finished(),
        "the first chunk arrived while the command still ran"
    );
    std::fs::write(app.project.join("go"), "").unwrap();
    let out = run.join().unwrap().unwrap();
    assert_eq!(out["exit_code"], 0, "{out}");
    assert_eq!(out["stdout"], "one\ntwo\n");
    let chunks = app.received(7);
    assert_eq!(app.streamed(7), "one\ntwo\n");
    assert!(chunks.iter().all(|c| c["stream"] == "stdout"), "{chunks:?}");
    assert!(chunks.len() >= 2, "output arrived as it came: {chunks:?}");
}

#[test]
fn live_output_stops_at_its_limit_and_says_so() {
    use corral_session::live_output::LIVE_OUTPUT_LIMIT;
    let app = app();
    app.open_in_full_auto();
    // 12 MiB of output, in 1 MiB writes.
    let script =
        "const s = 'x'.repeat(1 << 20); for (let i = 0; i < 12; i++) process.stdout.write(s)";
    let out = app
        .tool(
            "exec_shell",
            json!({"command": "node", "args": ["-e", script], "run_id": "run-big",
                   "on_output": "__CHANNEL__:11"}),
        )
        .unwrap();
    assert_eq!(out["exit_code"], 0, "{}", out["stderr"]);
    assert!(out["stdout_truncated_bytes"].as_u64().unwrap() > 0);
    let streamed = app.streamed(11);
    let cut = streamed
        .rfind("\n[live output stopped")
        .expect("the marker");
    let (body, marker) = streamed.split_at(cut);
    assert!(
        body.len() <= LIVE_OUTPUT_LIMIT && body.len() > LIVE_OUTPUT_LIMIT / 2,
        "{} bytes streamed",
        body.len()
    );
    assert!(body.bytes().all(|b| b == b'x'));
    assert!(marker.contains("after 8 MiB"), "{marker}");
}

#[test]
fn a_stop_that_arrives_before_its_command_still_stops_it() {
    let app = app();
    app.open_in_full_auto();
    app.invoke("cancel", json!({"run_id": "run-early"}))
        .unwrap();
    let started = std::time::Instant::now();
    let err = app
        .tool(
            "exec_shell",
            json!({"command": "node", "args": ["-e", "setTimeout(() => {}, 20000)"],
                   "run_id": "run-early", "on_output": "__CHANNEL__:12"}),
        )
        .unwrap_err();
    assert_eq!(err["code"], "cancelled", "{err}");
    // The command would run 20 s.
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
}

#[test]
fn cancel_stops_a_running_shell_command() {
    let app = app();
    app.open_in_full_auto();
    let run = app.tool_in_background(
        "exec_shell",
        json!({"command": "node", "args": ["-e", "console.log(process.pid); setTimeout(() => {}, 30411)"],
               "run_id": "run-2", "on_output": "__CHANNEL__:8"}),
    );
    let _ = app.wait_for_output(8, |text| text.trim().parse::<u32>().ok());
    assert!(running_with("30411"));
    let started = Instant::now();
    assert_eq!(
        app.invoke("cancel", json!({"run_id": "run-2"})).unwrap(),
        Value::Null
    );
    let err = run.join().unwrap().unwrap_err();
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "cancel did not stop the run"
    );
    assert_eq!(err["code"], "cancelled", "{err}");
    assert!(!running_with("30411"), "the command outlived its cancel");
    // The run id is free again.
    assert_eq!(
        app.invoke("cancel", json!({"run_id": "run-2"})).unwrap(),
        Value::Null
    );
}

#[test]
fn stop_all_on_exit_ends_running_commands_and_their_children() {
    let app = app();
    app.open_in_full_auto();
    // A command that starts a grandchild and prints its pid, then waits.
    let script =
        "const c = require('child_process').spawn('sleep', ['60.432'], {stdio: 'ignore'}); \
                  console.log(c.pid); setTimeout(() => {}, 30000)";
    let run = app.tool_in_background(
        "exec_shell",
        json!({"command": "node", "args": ["-e", script], "run_id": "run-exit",
               "on_output": "__CHANNEL__:9"}),
    );
    let _ = app.wait_for_output(9, |text| text.trim().parse::<u32>().ok());
    assert!(running_with("60.432"));
    let left = app.state().stop_all(Duration::from_secs(5));
    assert_eq!(left, 0, "a run was still registered after stop_all");
    assert!(
        !running_with("60.432"),
        "the command's child outlived stop_all"
    );
    assert_eq!(run.join().unwrap().unwrap_err()["code"], "cancelled");
}
