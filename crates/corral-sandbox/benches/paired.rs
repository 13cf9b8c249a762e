#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::disallowed_methods
)]
//! The sandbox's cost over bare bubblewrap as paired runs: each sample is
//! one `exec_shell` and, right after it, one bare bwrap running the same
//! program, so both see the same moment of the machine. On a shared
//! virtual machine the time of a bare bwrap moves by more than the 2 ms
//! target from one criterion batch to the next (the `shell` bench runs
//! each side as a batch of its own); the median of paired differences
//! does not move with it.
//!
//! Run: `cargo bench -p corral-sandbox --bench paired -- [GROUP] [RUNS]`
//! (a group of the `shell` bench: `read_only`, `build`, `network` or
//! `build_toolchains`; 150 runs by default). It prints the medians of
//! each side and of the differences, in milliseconds.

mod common;

use common::{bare_bwrap, project, which, CASES};
use corral_fs::ProjectRoot;
use corral_sandbox::exec_shell;
use std::time::{Duration, Instant};

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn main() {
    // `cargo bench` passes `--bench`; the rest are ours.
    let words: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let group = words.first().map_or("build", String::as_str);
    let runs: usize = words.get(1).map_or(150, |n| n.parse().expect("RUNS"));
    let Some(case) = CASES.iter().find(|case| case.group == group) else {
        let groups: Vec<&str> = CASES.iter().map(|case| case.group).collect();
        panic!("no group {group}: {}", groups.join(", "));
    };
    let (name, args) = (case.program, case.args);
    let dir = project();
    let root = ProjectRoot::open(dir.path()).unwrap();
    let (input, run) = (case.input(), case.run());
    let bwrap = which("bwrap");
    let path = which(name);
    // Past the walks' settling time, so they are kept as in a session.
    std::thread::sleep(Duration::from_millis(1200));
    for _ in 0..5 {
        let out = exec_shell(&root, &input, &run).unwrap();
        assert!(out.sandboxed, "{out:?}");
        assert_eq!(
            serde_json::to_value(out.profile).unwrap(),
            serde_json::Value::from(case.profile),
            "{out:?}"
        );
    }
    std::thread::sleep(Duration::from_millis(1200));
    let (mut ours, mut bare, mut gaps) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..runs {
        let started = Instant::now();
        let out = exec_shell(&root, &input, &run).unwrap();
        assert_eq!(out.exit_code, Some(0), "{out:?}");
        let sandboxed = started.elapsed().as_secs_f64() * 1000.0;
        let started = Instant::now();
        bare_bwrap(&bwrap, dir.path(), &path, args);
        let plain = started.elapsed().as_secs_f64() * 1000.0;
        ours.push(sandboxed);
        bare.push(plain);
        gaps.push(sandboxed - plain);
    }
    println!(
        "{group} ({name}), {runs} pairs: exec_shell {:.2}, bare bwrap {:.2}, gap {:+.2} (medians, ms)",
        median(ours),
        median(bare),
        median(gaps)
    );
}
