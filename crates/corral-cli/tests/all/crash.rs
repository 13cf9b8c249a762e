//! A `write_file` killed with SIGKILL at any moment leaves the old content or
//! the new one, never a torn file.

use std::io::Write;
use std::process::Stdio;
use std::time::Duration;

#[test]
fn kill_9_during_large_writes_never_tears_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("big.txt");
    let old = "o".repeat(8 * 1024 * 1024);
    let new = "n".repeat(12 * 1024 * 1024);
    std::fs::write(&target, &old).unwrap();
    let input = serde_json::json!({"path": "big.txt", "content": new}).to_string();

    let (mut saw_old, mut saw_new) = (0, 0);
    // 24 kills spread over the first ~170 ms, then, on a machine slow enough
    // that no write finished by then (a loaded CI runner), later ones until
    // one lands after the rename.
    for round in 0..36u64 {
        if round >= 24 && saw_new > 0 {
            break;
        }
        let mut child = crate::common::corral_cli()
            // The write alone: tests/checkpoint.rs kills checkpoints.
            .args([
                "call",
                "--no-checkpoint",
                "--root",
                dir.path().to_str().unwrap(),
                "write_file",
            ])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        let _ = stdin.write_all(input.as_bytes());
        drop(stdin);
        // Kill at a spread of moments: while parsing, writing, syncing, renaming.
        let delay = if round < 24 {
            5 + round * 7
        } else {
            200 * (round - 23)
        };
        std::thread::sleep(Duration::from_millis(delay));
        let _ = child.kill();
        let _ = child.wait();
        let now = std::fs::read(&target).unwrap();
        assert!(
            now == old.as_bytes() || now == new.as_bytes(),
            "round {round}: torn file of {} bytes",
            now.len()
        );
        if now == new.as_bytes() {
            saw_new += 1;
            std::fs::write(&target, &old).unwrap();
        } else {
            saw_old += 1;
        }
    }
    // The kills must land both before and after the rename, or the test proves nothing.
    assert!(
        saw_old > 0 && saw_new > 0,
        "old {saw_old} times, new {saw_new} times"
    );
    // Leftover temp files from killed writes are named so they are recognizable.
    for entry in std::fs::read_dir(dir.path()).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        assert!(
            name == "big.txt" || (name.starts_with(".big.txt.corral-") && name.ends_with(".tmp")),
            "{name}"
        );
    }
}

/// Live processes whose command line contains `marker` (the sandbox's PID
/// namespace hides a command's real pid from itself). A zombie has ended:
/// where nothing reaps orphans, as in some containers, it stays one.
fn processes_with(marker: &str) -> Vec<u32> {
    let me = std::process::id();
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|&pid| pid != me)
        .filter(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .is_ok_and(|stat| !stat.rsplit(") ").next().unwrap_or("").starts_with('Z'))
        })
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|c| String::from_utf8_lossy(&c).contains(marker))
        })
        .collect()
}

#[test]
fn a_command_dies_with_its_caller_even_by_kill_9() {
    let dir = tempfile::tempdir().unwrap();
    let marker = format!("corral-crash-probe-{}", std::process::id());
    let script = format!(
        "/* {marker} */ require('fs').writeFileSync('started', ''); setInterval(() => {{}}, 1000)"
    );
    let input = serde_json::json!({"command": "node", "args": ["-e", script]}).to_string();
    let mut cli = crate::common::corral_cli()
        .args([
            "call",
            "--root",
            dir.path().to_str().unwrap(),
            "exec_shell",
            &input,
        ])
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let started = dir.path().join("started");
    let mut waited = 0;
    while !started.exists() {
        assert!(waited < 200, "the command never started");
        std::thread::sleep(Duration::from_millis(50));
        waited += 1;
    }
    // node, and the sandbox around it, name the marker in their argv.
    assert!(!processes_with(&marker).is_empty());
    cli.kill().unwrap(); // SIGKILL: no exit hook of the caller runs
    cli.wait().unwrap();
    for _ in 0..100 {
        if processes_with(&marker).is_empty() {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    panic!(
        "the command outlived its caller: {:?}",
        processes_with(&marker)
    );
}
