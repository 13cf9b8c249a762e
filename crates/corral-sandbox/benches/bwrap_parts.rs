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
//! medians of the rounds are printed, in milliseconds (each round starts
//! one variant further on). The hold's folders
//! are removed after each run that made them, inside its time, as
//! `exec_shell` does.
//!
//! With `toolchains`, the line is the one for a program that starts others
//! (`make`, `cargo`, `npm`): the home's toolchain parts found here, each
//! bound read-only at its own path (`~/.cargo/bin`, rustup's home whole,
//! `~/.pyenv`, bun's, volta's and go's `bin`: the usual ones of the
//! sandbox's list), and a cache folder bound writable, each a part of its
//! own.
//!
//! Run: `cargo bench -p corral-sandbox --bench bwrap_parts -- [ROUNDS]
//! [toolchains]` (200 rounds by default).

// Its project and programs; not the timed commands' table.
#[allow(dead_code)]
mod common;

use common::{bare_bwrap, project, which};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// The usual toolchain parts of the home that exist here.
fn toolchains() -> Vec<PathBuf> {
    let home = std::env::var_os("HOME").map(PathBuf::from).unwrap();
    let var = |name: &str, default: &str| {
        std::env::var_os(name)
            .map(PathBuf::from)
            .unwrap_or_else(|| home.join(default))
    };
    [
        var("CARGO_HOME", ".cargo").join("bin"),
        var("RUSTUP_HOME", ".rustup"),
        home.join(".pyenv"),
        home.join(".bun/bin"),
        home.join(".volta/bin"),
        home.join("go/bin"),
    ]
    .into_iter()
    .filter(|part| part.is_dir())
    .collect()
}

/// The parts of the build profile's command line, by name; with
/// `toolchains`, the home's toolchain parts and the caches too, read from
/// `caches`.
fn parts(
    project: &Path,
    tmpdir: &Path,
    home: &Path,
    toolchains: Option<&Path>,
) -> Vec<(String, Vec<String>)> {
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
    let parts: Vec<(&str, Vec<String>)> = vec![
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
    ];
    let mut parts: Vec<(String, Vec<String>)> =
        parts.into_iter().map(|(n, a)| (n.to_string(), a)).collect();
    if let Some(caches) = toolchains {
        // Before the TMPDIR, as `exec_shell` orders them.
        let at = parts.iter().position(|(n, _)| n == "TMPDIR").unwrap();
        let mut added: Vec<(String, Vec<String>)> = self::toolchains()
            .into_iter()
            .map(|part| (p(&part), vec!["--ro-bind".into(), p(&part), p(&part)]))
            .collect();
        added.push(("caches".into(), vec!["--bind".into(), p(caches), p(caches)]));
        parts.splice(at..at, added);
    }
    parts
}

/// The build profile's command line without the part named `without`.
fn line(all: &[(String, Vec<String>)], project: &Path, without: Option<&str>) -> Vec<String> {
    let mut args: Vec<String> = ["--die-with-parent", "--unshare-pid", "--unshare-net"]
        .iter()
        .map(|w| w.to_string())
        .collect();
    let p = project.display().to_string();
    for (name, part) in all {
        if Some(name.as_str()) != without {
            args.extend(part.iter().cloned());
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
    let with_toolchains = words.get(1).is_some_and(|w| w == "toolchains");
    let dir = project();
    let scratch = tempfile::tempdir().unwrap();
    let (tmpdir, home) = (scratch.path().join("tmp"), Path::new("/home/bench"));
    let caches = scratch.path().join("caches");
    std::fs::create_dir(&tmpdir).unwrap();
    std::fs::create_dir(&caches).unwrap();
    let (bwrap, touch) = (which("bwrap"), which("touch"));
    let all = parts(
        dir.path(),
        &tmpdir,
        home,
        with_toolchains.then_some(caches.as_path()),
    );
    let full = if with_toolchains {
        "line with toolchains"
    } else {
        "build line"
    };
    let mut variants: Vec<(String, Option<Vec<String>>)> = vec![("bare bwrap".into(), None)];
    variants.push((full.into(), Some(line(&all, dir.path(), None))));
    // The system folders stay in every variant: the child needs them.
    for (name, _) in all.iter().filter(|(name, _)| name != "system folders") {
        variants.push((
            format!("  without {name}"),
            Some(line(&all, dir.path(), Some(name))),
        ));
    }
    let mut times: Vec<Vec<f64>> = vec![Vec::new(); variants.len()];
    for round in 0..rounds {
        // Each round starts at the next variant, so none always follows
        // the same one (what a run leaves to the kernel after it, its
        // namespaces' teardown, weighs on the run after).
        for i in (0..variants.len()).map(|k| (k + round) % variants.len()) {
            let args = &variants[i].1;
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
    let (bare, whole) = (medians[0], medians[1]);
    println!("{rounds} rounds, medians (ms):");
    for ((name, _), m) in variants.iter().zip(&medians) {
        println!(
            "{name:<40} {m:6.2}   over bare {:+.2}   over the {full} {:+.2}",
            m - bare,
            m - whole
        );
    }
}
