//! `corral-cli call` takes the app's checkpoints, `corral-cli checkpoint`
//! lists, compares and restores them, and SIGKILL at any moment of a
//! checkpoint or a restore leaves the project as it was before or after
//! (once the store is next opened) and the store readable.

use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

fn cli(args: &[&str]) -> (i32, Value) {
    let out = crate::common::corral_cli()
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    let value = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    (out.status.code().unwrap(), value)
}

fn ok(args: &[&str]) -> Value {
    let (code, value) = cli(args);
    assert_eq!(code, 0, "{args:?}: {value}");
    value
}

/// Every file under `dir` with its bytes.
fn files(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                out.insert(
                    path.strip_prefix(dir).unwrap().to_path_buf(),
                    std::fs::read(&path).unwrap(),
                );
            }
        }
    }
    out
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
}

#[test]
fn call_takes_checkpoints_and_checkpoint_lists_diffs_and_restores() {
    let s = Setup::new();
    std::fs::write(s.root.join("a.txt"), "one\n").unwrap();
    ok(&s.args(&["call", "read_file", r#"{"path":"a.txt"}"#]));
    ok(&s.args(&[
        "call",
        "write_file",
        r#"{"path":"a.txt","content":"two\n"}"#,
    ]));
    ok(&s.args(&[
        "call",
        "exec_shell",
        r#"{"command":"touch","args":["b.txt"]}"#,
    ]));
    ok(&s.args(&["call", "exec_shell", r#"{"command":"ls","args":["."]}"#]));
    ok(&s.args(&[
        "call",
        "--no-checkpoint",
        "write_file",
        r#"{"path":"c.txt","content":"c\n"}"#,
    ]));

    let list = ok(&s.args(&["checkpoint", "list"]));
    let list = list.as_array().unwrap();
    let tools: Vec<&str> = list.iter().map(|c| c["tool"].as_str().unwrap()).collect();
    assert_eq!(tools, ["write_file", "exec_shell"], "reads take none");
    assert_eq!(list[1]["label"], "touch b.txt");
    assert_eq!(list[1]["files_changed"]["modified"], 1);
    assert!(list[0]["time"].as_u64().unwrap() > 1_600_000_000_000);
    let first = list[0]["id"].as_str().unwrap();

    let diff = ok(&s.args(&["checkpoint", "diff", first]));
    assert_eq!(diff["to"], first);
    let changes = diff["changes"].as_array().unwrap();
    let paths: Vec<&str> = changes
        .iter()
        .map(|c| c["path"].as_str().unwrap())
        .collect();
    assert_eq!(paths, ["a.txt", "b.txt", "c.txt"]);
    assert_eq!(
        changes[0]["diff"],
        "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-two\n+one\n"
    );

    let one = ok(&s.args(&["checkpoint", "restore", first, "--path", "a.txt"]));
    assert_eq!(one["counts"]["modified"], 1);
    assert_eq!(
        std::fs::read_to_string(s.root.join("a.txt")).unwrap(),
        "one\n"
    );
    assert!(s.root.join("b.txt").exists());
    let all = ok(&s.args(&["checkpoint", "restore", first]));
    assert!(!s.root.join("b.txt").exists() && !s.root.join("c.txt").exists());
    let undo = all["undo"].as_str().unwrap();
    ok(&s.args(&["checkpoint", "restore", undo]));
    assert!(s.root.join("b.txt").exists() && s.root.join("c.txt").exists());

    let (code, err) = cli(&s.args(&["checkpoint", "restore", "999"]));
    assert_eq!((code, err["code"].as_str()), (1, Some("not_found")));
    // The store lives under the data folder, never in the project.
    assert!(s.store.join("checkpoints").is_dir());
    let (code, err) = cli(&[
        "checkpoint",
        "list",
        "--root",
        s.root.to_str().unwrap(),
        "--store",
        s.root.join("inside").to_str().unwrap(),
    ]);
    assert_eq!((code, err["code"].as_str()), (1, Some("invalid_input")));
}

#[test]
fn undo_call_puts_back_what_one_call_changed_and_nothing_else() {
    let s = Setup::new();
    std::fs::write(s.root.join("a.txt"), "a0\n").unwrap();
    std::fs::write(s.root.join("b.txt"), "b0\n").unwrap();
    for (path, content) in [("a.txt", "a1"), ("b.txt", "b1"), ("a.txt", "a3")] {
        let input = serde_json::json!({"path": path, "content": content}).to_string();
        ok(&s.args(&["call", "write_file", &input]));
    }
    let list = ok(&s.args(&["checkpoint", "list"]));
    let ids: Vec<&str> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids.len(), 3);

    // The first call's a.txt was changed again by the third: named.
    let plan = ok(&s.args(&["checkpoint", "undo-call", ids[0], "--dry-run"]));
    assert_eq!(plan["until"], ids[1]);
    assert_eq!(plan["paths"], serde_json::json!(["a.txt"]));
    assert_eq!(plan["changed_later"], serde_json::json!(["a.txt"]));
    assert_eq!(
        std::fs::read_to_string(s.root.join("a.txt")).unwrap(),
        "a3",
        "a dry run changes nothing"
    );

    let plan = ok(&s.args(&["checkpoint", "undo-call", ids[1], "--dry-run"]));
    assert_eq!(plan["changed_later"], serde_json::json!([]));
    assert_eq!(plan["plan"]["changes"][0]["path"], "b.txt");
    let undone = ok(&s.args(&["checkpoint", "undo-call", ids[1]]));
    assert_eq!(undone["restored"], ids[1]);
    assert_eq!(undone["counts"]["modified"], 1);
    assert_eq!(
        std::fs::read_to_string(s.root.join("b.txt")).unwrap(),
        "b0\n"
    );
    assert_eq!(std::fs::read_to_string(s.root.join("a.txt")).unwrap(), "a3");
    // And that undo is undone like a restore.
    ok(&s.args(&["checkpoint", "restore", undone["undo"].as_str().unwrap()]));
    assert_eq!(std::fs::read_to_string(s.root.join("b.txt")).unwrap(), "b1");

    let (code, err) = cli(&s.args(&["checkpoint", "undo-call", "999"]));
    assert_eq!((code, err["code"].as_str()), (1, Some("not_found")));
}

/// Kills `args` at `after`; returns whether it had already exited.
fn run_and_kill(args: &[&str], after: Duration) -> bool {
    let mut child = crate::common::corral_cli()
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(after);
    let finished = child.try_wait().unwrap().is_some();
    let _ = child.kill();
    let _ = child.wait();
    finished
}

/// Runs `args`, and kills it `after` the moment `marker` appears (or
/// when it has ended without it).
fn kill_when(args: &[&str], marker: &Path, after: Duration) {
    let mut child = crate::common::corral_cli()
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while !marker.exists() && child.try_wait().unwrap().is_none() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_micros(200));
    }
    std::thread::sleep(after);
    let _ = child.kill();
    let _ = child.wait();
}

/// How long a command takes, run to the end.
fn timed(args: &[&str]) -> Duration {
    let started = Instant::now();
    ok(args);
    started.elapsed()
}

/// A project big enough that a first checkpoint or a restore takes a while.
fn fill(root: &Path, tag: &str) {
    for i in 0..300 {
        let dir = root.join(format!("d{}", i % 10));
        std::fs::create_dir_all(&dir).unwrap();
        let body = format!("{tag} {i}\n").repeat(4000);
        std::fs::write(dir.join(format!("f{i}.txt")), body).unwrap();
    }
}

fn store_readable(s: &Setup) -> usize {
    let list = ok(&s.args(&["checkpoint", "list"]));
    let list = list.as_array().unwrap();
    for cp in list.iter().rev().take(2) {
        // Every tree and every blob a diff needs reads back and checks out.
        ok(&s.args(&["checkpoint", "diff", cp["id"].as_str().unwrap()]));
    }
    list.len()
}

#[test]
fn kill_9_during_a_checkpoint_leaves_the_project_and_a_readable_store() {
    let s = Setup::new();
    fill(&s.root, "data");
    let before = files(&s.root);
    let write = r#"{"path":"marker.txt","content":"written\n"}"#;
    let call = s.args(&["call", "write_file", write]);
    let full = timed(&call);
    let mut after = before.clone();
    after.insert(PathBuf::from("marker.txt"), b"written\n".to_vec());

    let (mut mid, mut done) = (0, 0);
    for round in 0..16u32 {
        // A fresh store each time: the checkpoint copies everything.
        std::fs::remove_dir_all(&s.store).unwrap();
        let _ = std::fs::remove_file(s.root.join("marker.txt"));
        // From the start to past the end (as long as the timed run took,
        // and half as long again).
        let at = full * round / 10;
        run_and_kill(&call, at);
        let mut now = files(&s.root);
        // A write killed before its rename leaves its temp file (as
        // crash.rs shows); that is the write's, not the checkpoint's.
        now.retain(|path, _| !path.to_string_lossy().starts_with(".marker.txt.corral-"));
        assert!(
            now == before || now == after,
            "round {round}: the project is torn"
        );
        let checkpoints = store_readable(&s);
        let objects = std::fs::read_dir(s.store.join("checkpoints"))
            .unwrap()
            .flatten()
            .map(|p| p.path().join("objects"))
            .filter(|p| p.is_dir())
            .map(|p| std::fs::read_dir(p).unwrap().count())
            .sum::<usize>();
        if now == after {
            done += 1;
            assert_eq!(checkpoints, 1, "the write ran after its checkpoint");
        } else if checkpoints == 0 && objects > 0 {
            mid += 1; // killed while the checkpoint was being written
        }
    }
    // The kills must land while the checkpoint is written, or the test
    // proves nothing (how many let the call finish depends on the load).
    assert!(mid > 0, "mid-checkpoint {mid}, completed {done}");
}

#[test]
fn kill_9_during_a_restore_leaves_before_or_after_once_the_store_opens() {
    let s = Setup::new();
    fill(&s.root, "old");
    let old = files(&s.root);
    let list = |s: &Setup| ok(&s.args(&["checkpoint", "list"]));
    ok(&s.args(&[
        "call",
        "write_file",
        r#"{"path":"d0/f0.txt","content":"x"}"#,
    ]));
    let id = list(&s)[0]["id"].as_str().unwrap().to_string();
    let modify = |root: &Path| {
        // Every file changed by one line (their diffs stay cheap to show).
        for i in 0..300 {
            let path = root.join(format!("d{}/f{i}.txt", i % 10));
            let body = format!("changed {i}\n{}", format!("old {i}\n").repeat(4000));
            std::fs::write(path, body).unwrap();
        }
        std::fs::write(root.join("d0/extra.txt"), "created later\n").unwrap();
        std::fs::remove_file(root.join("d1/f1.txt")).unwrap();
    };
    modify(&s.root);
    let new = files(&s.root);
    let restore = s.args(&["checkpoint", "restore", &id]);
    let full = timed(&restore);
    assert_eq!(files(&s.root), old);

    let journal_path = std::fs::read_dir(s.store.join("checkpoints"))
        .unwrap()
        .flatten()
        .next()
        .unwrap()
        .path()
        .join("journal.json");
    let (mut rolled, mut before, mut after) = (0, 0, 0);
    // 12 rounds, and more (up to 40) on a machine so loaded that none of
    // them caught the restore mid-way yet.
    for round in 0..40u32 {
        if round >= 12 && rolled > 0 && after > 0 {
            break;
        }
        modify(&s.root);
        assert_eq!(files(&s.root), new);
        if round < 3 {
            // While the checkpoint before the restore is taken.
            run_and_kill(&restore, full * round / 6);
        } else {
            // Once the journal is written, that is while the project is
            // being changed: from at once to a few milliseconds in (the
            // machine's load makes fixed times miss the moment).
            kill_when(
                &restore,
                &journal_path,
                Duration::from_millis(u64::from((round - 3) % 9) * 3),
            );
        }
        let journal = journal_path.exists();
        // Opening the store finishes a restore that was under way.
        store_readable(&s);
        let now = files(&s.root);
        if journal {
            rolled += 1;
        }
        if now == old {
            after += 1;
        } else if now == new {
            before += 1;
            assert!(
                !journal,
                "round {round}: a journal was left and not finished"
            );
        } else {
            panic!("round {round}: the project is neither before nor after");
        }
    }
    assert!(
        rolled > 0 && after > 0,
        "rolled forward {rolled}, after {after}, before {before}"
    );
}

#[test]
fn verify_names_the_damaged_objects_and_a_stuck_journal_is_set_aside_with_a_warning() {
    let s = Setup::new();
    std::fs::write(s.root.join("a.txt"), "one\n").unwrap();
    ok(&s.args(&[
        "call",
        "write_file",
        r#"{"path":"a.txt","content":"two\n"}"#,
    ]));
    ok(&s.args(&["call", "write_file", r#"{"path":"b.txt","content":"b\n"}"#]));
    let list = ok(&s.args(&["checkpoint", "list"]));
    let ids: Vec<&str> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap())
        .collect();
    let report = ok(&s.args(&["checkpoint", "verify"]));
    assert_eq!(report["whole"], serde_json::json!(ids));
    assert_eq!(report["damaged"], serde_json::json!([]));

    // The blob of `one\n`, which only the first checkpoint needs, cut short.
    let store = std::fs::read_dir(s.store.join("checkpoints"))
        .unwrap()
        .flatten()
        .next()
        .unwrap()
        .path();
    let mut objects = std::fs::read_dir(store.join("objects"))
        .unwrap()
        .flatten()
        .flat_map(|fan| std::fs::read_dir(fan.path()).unwrap().flatten());
    let one = objects
        .find(|object| std::fs::read(object.path()).unwrap() == b"one\n")
        .unwrap()
        .path();
    std::fs::write(&one, "on").unwrap();
    let (code, err) = cli(&s.args(&["checkpoint", "verify"]));
    assert_eq!((code, err["code"].as_str()), (1, Some("io")), "{err}");
    let report = &err["details"]["report"];
    assert_eq!(
        report["damaged"][0]["checkpoints"],
        serde_json::json!([ids[0]])
    );
    assert_eq!(report["damaged"][0]["path"], "a.txt");
    assert_eq!(report["whole"], serde_json::json!([ids[1]]));
    let (code, err) = cli(&s.args(&["checkpoint", "restore", ids[0]]));
    assert_eq!((code, err["code"].as_str()), (1, Some("io")), "{err}");
    assert_eq!(std::fs::read(s.root.join("a.txt")).unwrap(), b"two\n");

    // A journal naming a path in `.git`: set aside, said on stderr, and
    // the store opens.
    let journal = serde_json::json!({"restore": ids[1], "path": ".git/x", "undo": ids[1]});
    std::fs::write(store.join("journal.json"), journal.to_string()).unwrap();
    let out = crate::common::corral_cli()
        .args(s.args(&["checkpoint", "list"]))
        .output()
        .unwrap();
    assert!(out.status.success());
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.contains("warning:"), "{stderr}");
    assert!(stderr.contains("journal-unfinished-"), "{stderr}");
    assert!(!store.join("journal.json").exists());
}
