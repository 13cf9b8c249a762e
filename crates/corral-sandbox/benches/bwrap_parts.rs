#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::disallowed_methods
)]
//! What each part of the sandbox's bwrap command line costs bwrap itself,
//! without any of Corral's own work: bare bwrap (as the other benches run
//! it), the build profile's command line for `touch` as `exec_shell` makes
//! it (the system folders, namespaces, a private `/tmp`, `/run` and home,
//! the run's TMPDIR, the project, its `.git` read-only, the hold of two
//! absent agent folders, `/` remounted read-only), and that line without
//! each part but the system folders in turn. Each round runs every variant once, in turn; the
//! medians of the rounds are printed, in milliseconds. The hold's folders
//! are removed after each run that made them, inside its time, as
//! `exec_shell` does.
//!
//! Run: `cargo bench -p corral-sandbox --bench bwrap_parts -- [ROUNDS]`
//! (200 by default).

// Its project and programs; not the timed commands' table.
#[allow(dead_code)]
mod common;

use common::{bare_bwrap, project, which};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// The parts of the build profile's command line, by name.
fn parts(project: &Path, tmpdir: &Path, home: &Path) -> Vec<(&'static str, Vec<String>)> {
    let p = |path: &Path| path.display().to_string();
    let s = |words: &[&str]| words.iter().map(|w| w.to_string()).collect::<Vec<_>>();
    let hold = |name: &str| {
        let path = p(&project.join(name));
        vec![
            "--perms".into(),
            "0555".into(),
            "--tmpfs".into(),
            path.clone(),
            "--remount-ro".into(),
            path,
        ]
    };
    vec![
        (
            "namespaces",
            s(&[
                "--new-session",
                "--unshare-ipc",
                "--unshare-uts",
                "--unshare-cgroup-try",
                "--cap-drop",
                "ALL",
            ]),
        ),
        (
            "system folders",
            s(&[
                "--ro-bind",
                "/etc",
                "/etc",
                "--ro-bind",
                "/usr",
                "/usr",
                "--symlink",
                "usr/bin",
                "/bin",
                "--symlink",
                "usr/sbin",
                "/sbin",
                "--symlink",
                "usr/lib",
                "/lib",
                "--symlink",
                "usr/lib64",
                "/lib64",
            ]),
        ),
        (
            "/tmp, /run, home",
            [
                s(&[
                    "--tmpfs",
                    "/tmp",
                    "--dir",
                    "/run",
                    "--symlink",
                    "../run",
                    "/var/run",
                ]),
                vec!["--dir".into(), p(home)],
            ]
            .concat(),
        ),
        ("TMPDIR", vec!["--bind".into(), p(tmpdir), p(tmpdir)]),
        (
            ".git read-only",
            vec![
                "--ro-bind".into(),
                p(&project.join(".git")),
                p(&project.join(".git")),
            ],
        ),
        (
            "hold of 2 absent",
            [hold(".claude"), hold(".codex")].concat(),
        ),
        ("/ read-only", s(&["--remount-ro", "/"])),
    ]
}

/// The build profile's command line without the part named `without`.
fn line(project: &Path, tmpdir: &Path, home: &Path, without: Option<&str>) -> Vec<String> {
    let mut args: Vec<String> = ["--die-with-parent", "--unshare-pid", "--unshare-net"]
        .iter()
        .map(|w| w.to_string())
        .collect();
    let p = project.display().to_string();
    for (name, part) in parts(project, tmpdir, home) {
        if Some(name) != without {
            args.extend(part);
        }
        if name == "TMPDIR" {
            args.extend(["--dev", "/dev", "--proc", "/proc"].map(String::from));
            args.extend(["--bind".into(), p.clone(), p.clone()]);
        }
    }
    args
}

fn main() {
    let words: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let rounds: usize = words.first().map_or(200, |n| n.parse().expect("ROUNDS"));
    let dir = project();
    let scratch = tempfile::tempdir().unwrap();
    let (tmpdir, home) = (scratch.path().join("tmp"), Path::new("/home/bench"));
    std::fs::create_dir(&tmpdir).unwrap();
    let (bwrap, touch) = (which("bwrap"), which("touch"));
    // The system folders stay in every variant: the child needs them.
    let names: Vec<&str> = parts(dir.path(), &tmpdir, home)
        .iter()
        .map(|(name, _)| *name)
        .filter(|name| *name != "system folders")
        .collect();
    let mut variants: Vec<(String, Option<Vec<String>>)> = vec![("bare bwrap".into(), None)];
    variants.push((
        "build line".into(),
        Some(line(dir.path(), &tmpdir, home, None)),
    ));
    for name in &names {
        variants.push((
            format!("  without {name}"),
            Some(line(dir.path(), &tmpdir, home, Some(name))),
        ));
    }
    let mut times: Vec<Vec<f64>> = vec![Vec::new(); variants.len()];
    for _ in 0..rounds {
        for (i, (_, args)) in variants.iter().enumerate() {
            let started = Instant::now();
            match args {
                None => bare_bwrap(&bwrap, dir.path(), &touch, &["a.txt"]),
                Some(args) => {
                    let status = Command::new(&bwrap)
                        .args(args)
                        .args(["--chdir", &dir.path().display().to_string(), "--"])
                        .args([touch.as_str(), "a.txt"])
                        .stdin(Stdio::null())
                        .stdout(Stdio::null())
                        .status()
                        .unwrap();
                    assert!(status.success(), "{args:?}");
                    for held in [".claude", ".codex"] {
                        let _ = std::fs::remove_dir(dir.path().join(held));
                    }
                }
            }
            times[i].push(started.elapsed().as_secs_f64() * 1000.0);
        }
    }
    let medians: Vec<f64> = times.into_iter().map(median).collect();
    let (bare, full) = (medians[0], medians[1]);
    println!("{rounds} rounds, medians (ms):");
    for ((name, _), m) in variants.iter().zip(&medians) {
        println!(
            "{name:<28} {m:6.2}   over bare {:+.2}   over the build line {:+.2}",
            m - bare,
            m - full
        );
    }
}
