#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::disallowed_methods
)]
//! What a sandboxed `exec_shell` costs over bare bubblewrap, per profile
//! (target: within 2 ms), with criterion.
//!
//! Each profile's group times the same program three ways, and the gap:
//! - `raw`: `std::process::Command`, output piped, no sandbox;
//! - `bare_bwrap`: bwrap with `--ro-bind / / --dev /dev --proc /proc
//!   --unshare-net --unshare-pid --die-with-parent`, the project bound
//!   writable, running it;
//! - `exec_shell`: the whole call (allowlist, argument rules, profile,
//!   environment, TMPDIR, the allowlist view, the secret and git walks,
//!   the seccomp filter, cgroups and rlimits, process group, reader
//!   threads; with the network, the proxy's gate);
//! - `gap`: an `exec_shell` and right after it a bare bwrap, the time of
//!   each iteration their difference: the mean gap of pairs.
//!
//! The build and network groups run `touch`, which starts no other
//! program: it gets none of the home's toolchains nor Corral's caches.
//! `build_toolchains` runs `make`, which can start any program, in the
//! build profile: it gets them all (three more binds on a machine with
//! rustup and pyenv).
//!
//! The gap is what our sandbox costs beyond bubblewrap itself (measure it
//! on an idle machine: load from elsewhere slows a sandboxed start several
//! times over); `exec_shell` minus `bare_bwrap` says the same only when
//! both batches saw the same machine. The project is a git repository of
//! 200 files in 10 folders with a `.env`, so the read-only profile's
//! secret walk and the build profile's nested-`.git` walk have something
//! to walk.
//!
//! Run: `cargo bench -p corral-sandbox --bench shell` (a filter such as
//! `-- read_only` picks one group).

mod common;

use common::{bare_bwrap, find, project, which, CASES};
use corral_fs::ProjectRoot;
use corral_sandbox::exec_shell;
use criterion::{criterion_group, criterion_main, Criterion, SamplingMode};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn bench(c: &mut Criterion) {
    let dir = project();
    let root = ProjectRoot::open(dir.path()).unwrap();
    let bwrap = ["/usr/bin/bwrap", "/bin/bwrap", "/usr/local/bin/bwrap"]
        .iter()
        .find(|p| Path::new(p).exists())
        .expect("bwrap");
    assert!(
        corral_sandbox::namespaces_available(),
        "bubblewrap cannot make namespaces here: nothing to compare"
    );
    for case in &CASES {
        let (group, name, args) = (case.group, case.program, case.args);
        if find(name).is_none() {
            eprintln!("note: {name} is not installed; no {group} group");
            continue;
        }
        let path = which(name);
        let (input, run) = (case.input(), case.run());
        let first = exec_shell(&root, &input, &run).unwrap();
        assert_eq!(first.exit_code, Some(0), "{first:?}");
        assert!(first.sandboxed, "{first:?}");
        assert_eq!(
            serde_json::to_value(first.profile).unwrap(),
            serde_json::Value::from(case.profile),
            "{first:?}"
        );

        let bare = || bare_bwrap(bwrap, dir.path(), &path, args);
        let ours = || {
            let out = exec_shell(&root, &input, &run).unwrap();
            assert_eq!(out.exit_code, Some(0));
        };

        let mut g = c.benchmark_group(format!("shell/{group}"));
        g.sample_size(40).measurement_time(Duration::from_secs(6));
        g.bench_function("raw", |b| {
            b.iter(|| {
                let out = Command::new(&path)
                    .args(args)
                    .current_dir(dir.path())
                    .stdin(Stdio::null())
                    .output()
                    .unwrap();
                assert!(out.status.success());
            })
        });
        g.bench_function("bare_bwrap", |b| b.iter(&bare));
        g.bench_function("exec_shell", |b| b.iter(&ours));
        // Each iteration one `exec_shell` and right after it one bare
        // bwrap; the time reported is the sum of their differences, so
        // criterion's estimate is the mean gap of pairs that saw the same
        // moment of the machine (one side's batch and the other's, run
        // seconds apart, can differ by more than the gap). Every sample
        // has as many pairs (flat sampling); one whose pairs sum to less
        // than nothing counts as a nanosecond, so the estimate can only
        // err high.
        g.sampling_mode(SamplingMode::Flat);
        g.bench_function("gap", |b| {
            b.iter_custom(|iters| {
                let mut gap = 0.0;
                for _ in 0..iters {
                    let started = Instant::now();
                    ours();
                    let sandboxed = started.elapsed().as_secs_f64();
                    let started = Instant::now();
                    bare();
                    gap += sandboxed - started.elapsed().as_secs_f64();
                }
                Duration::from_secs_f64(gap.max(1e-9))
            })
        });
        g.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
