#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::disallowed_methods
)]
//! Spawn overhead of `exec_shell` (allowlist, rules, env, TMPDIR, process
//! group, reader threads, and the sandbox: bubblewrap's namespaces, or
//! Landlock where they cannot be made) over a raw `std::process::Command`
//! of the same program with piped output, and over bare bwrap (`--ro-bind
//! / / --dev /dev --proc /proc --unshare-net --unshare-pid`, the project
//! bound writable) running it:
//! the last column is what our sandbox (the allowlist view, the seccomp
//! filter, limits, masks) costs beyond bwrap itself. `ls -la` and `git
//! --version` run in the read-only profile (which also looks for secrets
//! to mask), `touch` in build.
//!
//! Run: `cargo bench -p corral-tools --bench shell` (plain timing loop, no
//! extra dependency; `ITERS=500` to change the sample count).

use corral_tools::shell::{exec_shell, ExecShellInput, ShellRun};
use corral_tools::ProjectRoot;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn which(name: &str) -> String {
    for dir in ["/usr/local/bin", "/usr/bin", "/bin"] {
        let p = format!("{dir}/{name}");
        if std::path::Path::new(&p).exists() {
            return p;
        }
    }
    panic!("{name} not found");
}

fn stats(mut samples: Vec<Duration>) -> (f64, f64, f64) {
    samples.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let median = ms(samples[samples.len() / 2]);
    let p90 = ms(samples[samples.len() * 9 / 10]);
    let mean = samples.iter().map(|d| ms(*d)).sum::<f64>() / samples.len() as f64;
    (median, p90, mean)
}

fn main() {
    // `cargo bench` passes `--bench`; a filter argument is ignored.
    let iters: usize = std::env::var("ITERS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200);
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "a\n").unwrap();
    let root = ProjectRoot::open(dir.path()).unwrap();
    println!("exec_shell overhead, {iters} runs each, interleaved (ms)");
    println!(
        "{:<16} {:>22} {:>22} {:>22} {:>10} {:>10}",
        "program",
        "raw median/p90/mean",
        "bare bwrap median/p90/mean",
        "exec_shell median/p90/mean",
        "vs raw",
        "vs bwrap"
    );
    let bwrap = ["/usr/bin/bwrap", "/bin/bwrap", "/usr/local/bin/bwrap"]
        .iter()
        .find(|p| std::path::Path::new(p).exists())
        .expect("bwrap");
    println!(
        "sandbox: {}",
        if corral_tools::shell::namespaces_available() {
            "namespaces"
        } else {
            "Landlock"
        }
    );
    for (name, args) in [
        ("git", vec!["--version"]),
        ("ls", vec!["-la"]),
        ("touch", vec!["a.txt"]),
    ] {
        let path = which(name);
        let input = ExecShellInput {
            command: name.to_string(),
            args: args.iter().map(|s| s.to_string()).collect(),
            timeout_secs: None,
            background: false,
        };
        let run = ShellRun::default();
        let mut raw = Vec::with_capacity(iters);
        let mut bare = Vec::with_capacity(iters);
        let mut ours = Vec::with_capacity(iters);
        for i in 0..iters + 20 {
            let t = Instant::now();
            let out = Command::new(&path)
                .args(&args)
                .current_dir(dir.path())
                .stdin(Stdio::null())
                .output()
                .unwrap();
            let d_raw = t.elapsed();
            assert!(out.status.success());
            let t = Instant::now();
            let out = Command::new(bwrap)
                .args(["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"])
                .args(["--unshare-net", "--unshare-pid", "--die-with-parent"])
                // The project writable, as in the build profile (`touch`).
                .arg("--bind")
                .arg(dir.path())
                .arg(dir.path())
                .arg("--")
                .arg(&path)
                .args(&args)
                .current_dir(dir.path())
                .stdin(Stdio::null())
                .output()
                .unwrap();
            let d_bare = t.elapsed();
            assert!(out.status.success());
            let t = Instant::now();
            let out = exec_shell(&root, &input, &run).unwrap();
            let d_ours = t.elapsed();
            assert_eq!(out.exit_code, Some(0));
            assert!(out.sandboxed);
            if i >= 20 {
                raw.push(d_raw);
                bare.push(d_bare);
                ours.push(d_ours);
            }
        }
        let (rm, rp, ra) = stats(raw);
        let (bm, bp, ba) = stats(bare);
        let (om, op, oa) = stats(ours);
        println!(
            "{:<16} {:>6.2} / {:>5.2} / {:>5.2}   {:>6.2} / {:>5.2} / {:>5.2}   {:>6.2} / {:>5.2} / {:>5.2}   {:>+7.2}   {:>+7.2}",
            format!("{name} {}", args.join(" ")),
            rm,
            rp,
            ra,
            bm,
            bp,
            ba,
            om,
            op,
            oa,
            om - rm,
            om - bm
        );
    }
}
