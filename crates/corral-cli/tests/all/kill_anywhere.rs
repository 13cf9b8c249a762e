//! A property over SIGKILL: a `write_file` (with its checkpoint) or a
//! restore killed at any moment, followed by the next call (another write
//! into the same folder, or any use of the checkpoints), leaves the whole
//! tree — every file, link, folder, mode, and no temp file — exactly as
//! before the killed call or as after it. The moments are drawn from a
//! seeded generator over the whole length of the call (the seed is in
//! every failure message, `CORRAL_KILL_SEED` replays it).

use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant};

use tree::{differences, snapshot as tree};

/// The kit's folder state, by path (this suite does not depend on the kit).
#[path = "../../../corral-testkit/src/tree.rs"]
mod tree;

/// xorshift64*: enough to spread kill moments, and replayable.
struct Moments(u64);

impl Moments {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// A moment in `0..=span`.
    fn within(&mut self, span: Duration) -> Duration {
        let micros = span.as_micros().max(1) as u64;
        Duration::from_micros(self.next() % (micros + 1))
    }
}

fn seed() -> u64 {
    std::env::var("CORRAL_KILL_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos() as u64
                | 1
        })
}

struct Setup {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    store: PathBuf,
}

impl Setup {
    fn new() -> Setup {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("app");
        let store = tmp.path().join("data");
        std::fs::create_dir(&root).unwrap();
        Setup {
            _tmp: tmp,
            root,
            store,
        }
    }

    fn args<'a>(&'a self, extra: &[&'a str]) -> Vec<&'a str> {
        let mut args = extra.to_vec();
        args.extend([
            "--root",
            self.root.to_str().unwrap(),
            "--store",
            self.store.to_str().unwrap(),
        ]);
        args
    }

    /// Starts `extra`, with `input` on its stdin (a call's JSON too long
    /// for an argument).
    fn start(&self, extra: &[&str], input: &str) -> std::process::Child {
        let mut child = crate::common::corral_cli()
            .args(self.args(extra))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        let input = input.to_string();
        std::thread::spawn(move || {
            let _ = std::io::Write::write_all(&mut stdin, input.as_bytes());
        });
        child
    }

    /// Runs to the end; returns how long it took.
    fn run(&self, extra: &[&str], input: &str) -> Duration {
        let started = Instant::now();
        let out = self.start(extra, input).wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{extra:?}: {}",
            String::from_utf8_lossy(&out.stdout)
        );
        started.elapsed()
    }

    /// Runs, and kills it with SIGKILL `after` (if it is still running).
    fn kill(&self, extra: &[&str], input: &str, after: Duration) {
        let mut child = self.start(extra, input);
        std::thread::sleep(after);
        let _ = child.kill();
        let _ = child.wait();
    }
}

/// Runs `trials` kills of `call` from the tree `prepare` makes, each
/// followed by `next`: the tree must then be the one `next` alone leaves
/// (before), or the one `call` and `next` leave (after). Both must be
/// seen, or the kills proved nothing.
fn property(
    name: &str,
    trials: u32,
    s: &Setup,
    prepare: &dyn Fn(),
    call: (&[&str], &str),
    next: (&[&str], &str),
) {
    prepare();
    s.run(next.0, next.1);
    let before = tree(&s.root);
    prepare();
    let full = s.run(call.0, call.1);
    s.run(next.0, next.1);
    let after = tree(&s.root);
    assert_ne!(before, after, "{name}: the call changed nothing");
    let seed = seed();
    let mut moments = Moments(seed);
    let (mut saw_before, mut saw_after) = (0, 0);
    // From the start to half as long again as a whole run. Under load a
    // killed run may take far longer than the one measured (or far less):
    // while one outcome is still unseen, a few more trials widen (or
    // narrow) the span, so both are met however busy the machine is.
    let mut span = full * 3 / 2;
    let mut trial = 0;
    while trial < trials || ((saw_before == 0 || saw_after == 0) && trial < trials * 3) {
        if trial >= trials {
            span = if saw_after == 0 { span * 2 } else { span / 2 };
        }
        prepare();
        let at = moments.within(span);
        s.kill(call.0, call.1, at);
        s.run(next.0, next.1);
        let now = tree(&s.root);
        if now == before {
            saw_before += 1;
        } else if now == after {
            saw_after += 1;
        } else {
            panic!(
                "{name}, seed {seed}, trial {trial}, killed at {at:?} of {full:?}: neither before nor after: {:?} / {:?}",
                differences(&before, &now),
                differences(&after, &now)
            );
        }
        trial += 1;
    }
    eprintln!("{name}: before {saw_before}, after {saw_after} (seed {seed})");
    assert!(
        saw_before > 0 && saw_after > 0,
        "{name}, seed {seed}: before {saw_before}, after {saw_after}"
    );
}

#[test]
fn a_write_killed_anywhere_leaves_before_or_after_once_the_next_call_ran() {
    let s = Setup::new();
    let old = "o".repeat(8 << 20);
    let new = serde_json::json!({"path": "d/big.txt", "content": "n".repeat(12 << 20)}).to_string();
    let next = r#"{"path":"d/next.txt","content":"the next call\n"}"#;
    let prepare = || {
        std::fs::create_dir_all(s.root.join("d")).unwrap();
        std::fs::write(s.root.join("d/big.txt"), &old).unwrap();
        let _ = std::fs::remove_file(s.root.join("d/next.txt"));
    };
    property(
        "write_file",
        24,
        &s,
        &prepare,
        (&["call", "write_file"], &new),
        (&["call", "write_file"], next),
    );
}

#[test]
fn a_restore_killed_anywhere_leaves_before_or_after_once_the_store_opens() {
    let s = Setup::new();
    for i in 0..300 {
        let dir = s.root.join(format!("d{}", i % 10));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join(format!("f{i}.txt")),
            format!("old {i}\n").repeat(4000),
        )
        .unwrap();
    }
    s.run(
        &["call", "write_file"],
        r#"{"path":"d0/f0.txt","content":"x"}"#,
    );
    let list = crate::common::corral_cli()
        .args(s.args(&["checkpoint", "list"]))
        .output()
        .unwrap();
    let list: serde_json::Value = serde_json::from_slice(&list.stdout).unwrap();
    let id = list[0]["id"].as_str().unwrap().to_string();
    let prepare = || {
        for i in 0..300 {
            let path = s.root.join(format!("d{}/f{i}.txt", i % 10));
            if i % 7 == 0 {
                let _ = std::fs::remove_file(path);
            } else {
                std::fs::write(path, format!("changed {i}\n")).unwrap();
            }
        }
        std::fs::create_dir_all(s.root.join("d0/made")).unwrap();
        std::fs::write(s.root.join("d0/made/extra.txt"), "created later\n").unwrap();
        std::fs::set_permissions(s.root.join("d3"), std::fs::Permissions::from_mode(0o700))
            .unwrap();
    };
    property(
        "restore",
        20,
        &s,
        &prepare,
        (&["checkpoint", "restore", &id], ""),
        (&["checkpoint", "list"], ""),
    );
}
