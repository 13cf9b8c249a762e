//! Checkpoints and restore on real folders, through `dispatch::call` as the
//! app and the CLI call it: every change the agent makes, shell commands
//! included, can be undone.
use corral_tools::checkpoint::{self, ChangeStatus, Checkpoint, NewCheckpoint, Store};
use corral_tools::dispatch::{self, CallContext};
use corral_tools::policy::{Approval, Mode};
use corral_tools::{Error, ProjectRoot};
use pretty_assertions::assert_eq;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// `<tmp>/app` is the project, `<tmp>/data` the data folder that holds its
/// store, `<tmp>/outside` what the project must never reach.
pub(crate) struct Fixture {
    tmp: tempfile::TempDir,
    pub(crate) root: ProjectRoot,
    pub(crate) store: Arc<Store>,
}

impl Fixture {
    pub(crate) fn new() -> Fixture {
        Fixture::with_cap(checkpoint::DEFAULT_CAP_BYTES)
    }

    pub(crate) fn with_cap(cap: u64) -> Fixture {
        let tmp = tempfile::tempdir().unwrap();
        for dir in ["app", "data", "outside"] {
            std::fs::create_dir(tmp.path().join(dir)).unwrap();
        }
        std::fs::write(tmp.path().join("outside/secret.txt"), "outside\n").unwrap();
        let root = ProjectRoot::open(tmp.path().join("app")).unwrap();
        let path = checkpoint::store_path(&tmp.path().join("data"), &root);
        let store = Arc::new(Store::open(&path, cap).unwrap());
        Fixture { tmp, root, store }
    }

    /// A checkpoint taken by hand, tagged `tag`.
    pub(crate) fn checkpoint(&self, tag: &str) -> Checkpoint {
        self.store
            .checkpoint(&self.root, NewCheckpoint::manual(tag))
            .unwrap()
    }

    pub(crate) fn path(&self, rel: &str) -> PathBuf {
        self.tmp.path().join("app").join(rel)
    }

    pub(crate) fn outside(&self, rel: &str) -> PathBuf {
        self.tmp.path().join("outside").join(rel)
    }

    pub(crate) fn write(&self, rel: &str, bytes: impl AsRef<[u8]>) {
        let path = self.path(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, bytes).unwrap();
    }

    pub(crate) fn chmod(&self, rel: &str, mode: u32) {
        std::fs::set_permissions(self.path(rel), std::fs::Permissions::from_mode(mode)).unwrap();
    }

    /// One tool call as the app makes it: full_auto, with the checkpoint hook.
    pub(crate) fn call(&self, turn: &str, name: &str, input: Value) -> Result<Value, Error> {
        let mut ctx = CallContext::new(Mode::FullAuto, Approval::Granted);
        ctx.checkpoint = Some(checkpoint::Hook {
            store: self.store.clone(),
            turn: Some(turn.to_string()),
            call_id: Some(format!("call-{name}")),
        });
        dispatch::call(&self.root, name, input, &ctx)
    }

    pub(crate) fn list(&self) -> Vec<Checkpoint> {
        self.store.list(&self.root).unwrap()
    }

    pub(crate) fn state(&self) -> State {
        state(&self.path(""))
    }
}

/// Everything in a folder but `.git/`: each path's kind, permissions and
/// bytes (a link's target for a link).
pub(crate) type State = BTreeMap<String, (char, u32, Vec<u8>)>;

pub(crate) fn state(dir: &Path) -> State {
    let mut out = State::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let entry = entry.unwrap();
            let path = entry.path();
            let rel = path.strip_prefix(dir).unwrap().display().to_string();
            if rel == ".git" {
                continue;
            }
            let meta = std::fs::symlink_metadata(&path).unwrap();
            let mode = meta.permissions().mode() & 0o7777;
            let ft = meta.file_type();
            if ft.is_symlink() {
                let target = std::fs::read_link(&path).unwrap();
                out.insert(
                    rel,
                    ('l', 0, target.as_os_str().as_encoded_bytes().to_vec()),
                );
            } else if ft.is_dir() {
                out.insert(rel, ('d', mode, Vec::new()));
                stack.push(path);
            } else {
                out.insert(rel, ('f', mode, std::fs::read(&path).unwrap()));
            }
        }
    }
    out
}

pub(crate) fn has_node() -> bool {
    ["/usr/local/bin/node", "/usr/bin/node", "/bin/node"]
        .iter()
        .any(|p| Path::new(p).exists())
}

#[test]
fn a_turn_of_edits_writes_deletes_and_commands_is_undone_and_redone() {
    assert!(has_node(), "these tests run commands with node");
    let f = Fixture::new();
    f.write("src/lib.rs", "pub fn one() -> u32 {\n    1\n}\n");
    f.write("notes.txt", "first notes\n");
    f.write("old.txt", "to be deleted\n");
    f.write("config.json", "{\"debug\": false}\n");
    f.write("data.bin", [0u8, 1, 2, 255, 0, 7]);
    f.write("script.sh", "#!/bin/sh\necho hi\n");
    f.chmod("script.sh", 0o755);
    f.write("private.txt", "mine\n");
    f.chmod("private.txt", 0o600);
    f.write("assets/logo.bin", [9u8; 3000]);
    f.write("assets/deep/tool.sh", "#!/bin/sh\n");
    f.chmod("assets/deep/tool.sh", 0o700);
    f.write(".env", "KEY=1\n");
    std::fs::create_dir(f.path("empty")).unwrap();
    let before = f.state();

    f.call(
        "t1",
        "edit_file",
        json!({"path": "src/lib.rs", "old_string": "    1\n", "new_string": "    2\n"}),
    )
    .unwrap();
    f.call(
        "t1",
        "write_file",
        json!({"path": "notes.txt", "content": "rewritten\n"}),
    )
    .unwrap();
    f.call("t1", "delete_file", json!({"path": "old.txt"}))
        .unwrap();
    // Reads change nothing and take no checkpoint.
    f.call("t1", "read_file", json!({"path": "notes.txt"}))
        .unwrap();
    f.call("t1", "list_directory", json!({"path": "."}))
        .unwrap();
    let script = "const fs = require('fs');\
        fs.writeFileSync('gen/out.txt', 'generated\\n');\
        fs.writeFileSync('config.json', '{\"debug\": true}\\n');\
        fs.rmSync('data.bin');\
        fs.chmodSync('private.txt', 0o644);\
        fs.writeFileSync('.env', 'KEY=2\\n');\
        fs.rmdirSync('empty');";
    std::fs::create_dir(f.path("gen")).unwrap();
    let out = f
        .call(
            "t1",
            "exec_shell",
            json!({"command": "node", "args": ["-e", script]}),
        )
        .unwrap();
    assert_eq!(out["exit_code"], 0, "{out}");
    let out = f
        .call(
            "t1",
            "exec_shell",
            json!({"command": "rm", "args": ["-r", "assets"]}),
        )
        .unwrap();
    assert_eq!(out["exit_code"], 0, "{out}");
    let after = f.state();
    assert!(!after.contains_key("assets") && after.contains_key("gen/out.txt"));

    let list = f.list();
    let tools: Vec<&str> = list.iter().map(|c| c.tool.as_str()).collect();
    assert_eq!(
        tools,
        [
            "edit_file",
            "write_file",
            "delete_file",
            "exec_shell",
            "exec_shell"
        ]
    );
    assert!(list[0].turn_start && list[1..].iter().all(|c| !c.turn_start));
    assert_eq!(list[0].label, "src/lib.rs");
    assert_eq!(list[4].label, "rm -r assets");
    assert_eq!(
        list[1].files_changed.modified, 1,
        "the edit, seen by the next one"
    );
    assert_eq!(list[0].call_id.as_deref(), Some("call-edit_file"));

    // What a restore to the turn's start would do, before doing it.
    let plan = f.store.diff(&f.root, &list[0].id, None).unwrap();
    let by_path: BTreeMap<&str, ChangeStatus> = plan
        .changes
        .iter()
        .map(|c| (c.path.as_str(), c.status))
        .collect();
    assert_eq!(by_path["gen/out.txt"], ChangeStatus::Removed);
    assert_eq!(by_path["old.txt"], ChangeStatus::Added);
    assert_eq!(by_path["src/lib.rs"], ChangeStatus::Modified);
    assert_eq!(by_path["assets/deep/tool.sh"], ChangeStatus::Added);
    let lib = plan
        .changes
        .iter()
        .find(|c| c.path == "src/lib.rs")
        .unwrap();
    assert_eq!(
        lib.diff,
        "--- a/src/lib.rs\n+++ b/src/lib.rs\n@@ -1,3 +1,3 @@\n pub fn one() -> u32 {\n-    2\n+    1\n }\n"
    );
    assert!(
        plan.changes
            .iter()
            .find(|c| c.path == "data.bin")
            .unwrap()
            .binary
    );
    assert_eq!(
        plan.changes
            .iter()
            .find(|c| c.path == "private.txt")
            .unwrap()
            .mode_change,
        Some([0o644, 0o600])
    );
    assert_eq!(f.state(), after, "a diff changes nothing");

    let restored = f.store.restore(&f.root, &list[0].id, None).unwrap();
    assert_eq!(
        f.state(),
        before,
        "every byte, mode and deleted file is back"
    );
    assert!(restored.skipped.is_empty(), "{:?}", restored.skipped);
    assert_eq!(restored.counts, plan.counts);

    // The restore took a checkpoint first: restoring it redoes the turn.
    f.store.restore(&f.root, &restored.undo, None).unwrap();
    assert_eq!(f.state(), after);
}

#[test]
fn symlinks_come_back_as_links_and_planted_links_go_without_touching_their_targets() {
    let f = Fixture::new();
    f.write("src/a.txt", "a\n");
    f.write("src/b.txt", "b\n");
    std::os::unix::fs::symlink("src/a.txt", f.path("to_a")).unwrap();
    std::os::unix::fs::symlink("src", f.path("src_link")).unwrap();
    std::os::unix::fs::symlink("/usr/share/absolute", f.path("abs")).unwrap();
    std::os::unix::fs::symlink("missing/target", f.path("dangling")).unwrap();
    let before = f.state();
    let outside_before = state(&f.outside(""));
    let cp = f.checkpoint("start");

    // Links removed, replaced by files and folders; links planted that
    // lead out, one of them where a folder was.
    std::fs::remove_file(f.path("to_a")).unwrap();
    std::fs::write(f.path("to_a"), "now a file\n").unwrap();
    std::fs::remove_file(f.path("src_link")).unwrap();
    std::fs::create_dir(f.path("src_link")).unwrap();
    std::fs::write(f.path("src_link/inner.txt"), "x").unwrap();
    std::fs::remove_file(f.path("abs")).unwrap();
    std::os::unix::fs::symlink(f.outside("secret.txt"), f.path("planted")).unwrap();
    std::os::unix::fs::symlink(f.outside(""), f.path("planted_dir")).unwrap();
    std::fs::rename(f.path("src"), f.path("src_moved")).unwrap();
    std::os::unix::fs::symlink(f.outside(""), f.path("src")).unwrap();

    let restored = f.store.restore(&f.root, &cp.id, None).unwrap();
    assert!(restored.skipped.is_empty(), "{:?}", restored.skipped);
    // `src_moved` goes too: the checkpoint has no such folder.
    assert_eq!(f.state(), before);
    assert_eq!(
        std::fs::read_link(f.path("to_a")).unwrap(),
        Path::new("src/a.txt")
    );
    assert_eq!(
        state(&f.outside("")),
        outside_before,
        "nothing outside was touched"
    );
    assert_eq!(
        std::fs::read(f.outside("secret.txt")).unwrap(),
        b"outside\n"
    );
}

#[test]
fn an_ignored_target_folder_costs_the_store_nothing_and_is_never_removed() {
    let plain = Fixture::new();
    let big = Fixture::new();
    for f in [&plain, &big] {
        f.write(".gitignore", "target/\n");
        f.write("src/main.rs", "fn main() {}\n");
        f.write("Cargo.toml", "[package]\nname = \"x\"\n");
    }
    // A 1 GB sparse file and a thousand small ones, all ignored.
    std::fs::create_dir_all(big.path("target/debug/deps")).unwrap();
    let file = std::fs::File::create(big.path("target/debug/huge.rlib")).unwrap();
    file.set_len(1 << 30).unwrap();
    for i in 0..1000 {
        big.write(&format!("target/debug/deps/{i}.o"), format!("object {i}"));
    }
    let a = plain.checkpoint("a");
    let b = big.checkpoint("b");
    assert_eq!((a.files, b.files), (3, 3));
    assert!(
        b.too_large.is_empty(),
        "ignored files are not even looked at"
    );
    let (used_plain, used_big) = (
        plain.store.usage(&plain.root).unwrap(),
        big.store.usage(&big.root).unwrap(),
    );
    // The root tree names `target` as ignored: a few bytes, no content.
    assert!(
        used_big <= used_plain + 64,
        "{used_big} bytes against {used_plain}"
    );

    // The agent un-ignores it; a restore to before does not remove the
    // folder the checkpoint knew was there, ignored.
    big.write(".gitignore", "");
    let restored = big.store.restore(&big.root, &b.id, None).unwrap();
    assert_eq!(restored.counts.removed, 0, "{:?}", restored.changes);
    assert_eq!(std::fs::read(big.path(".gitignore")).unwrap(), b"target/\n");
    assert_eq!(
        std::fs::metadata(big.path("target/debug/huge.rlib"))
            .unwrap()
            .len(),
        1 << 30
    );
    assert!(big.path("target/debug/deps/999.o").exists());
}

#[test]
fn one_path_is_restored_alone() {
    let f = Fixture::new();
    f.write("a.txt", "a1\n");
    f.write("b.txt", "b1\n");
    f.write("dir/x.txt", "x1\n");
    f.write("dir/y.txt", "y1\n");
    let cp = f.checkpoint("start");
    f.write("a.txt", "a2\n");
    f.write("b.txt", "b2\n");
    std::fs::remove_dir_all(f.path("dir")).unwrap();

    let plan = f.store.diff(&f.root, &cp.id, Some("a.txt")).unwrap();
    assert_eq!(plan.changes.len(), 1);
    assert_eq!(plan.changes[0].path, "a.txt");
    let one = f.store.restore(&f.root, &cp.id, Some("a.txt")).unwrap();
    assert_eq!(std::fs::read(f.path("a.txt")).unwrap(), b"a1\n");
    assert_eq!(std::fs::read(f.path("b.txt")).unwrap(), b"b2\n");
    assert_eq!(one.path.as_deref(), Some("a.txt"));
    assert_eq!(one.changes.len(), 1);

    // The restore of one path is undone like a whole one: its undo
    // checkpoint has the project as it was just before.
    f.write("b.txt", "b3\n");
    let undone = f.store.restore(&f.root, &one.undo, Some("a.txt")).unwrap();
    assert_eq!(std::fs::read(f.path("a.txt")).unwrap(), b"a2\n");
    assert_eq!(std::fs::read(f.path("b.txt")).unwrap(), b"b3\n");
    f.store.restore(&f.root, &undone.undo, None).unwrap();
    assert_eq!(std::fs::read(f.path("a.txt")).unwrap(), b"a1\n");
    assert_eq!(std::fs::read(f.path("b.txt")).unwrap(), b"b3\n");
    f.store.restore(&f.root, &one.undo, None).unwrap();
    assert_eq!(std::fs::read(f.path("a.txt")).unwrap(), b"a2\n");
    assert_eq!(std::fs::read(f.path("b.txt")).unwrap(), b"b2\n");

    // A file inside a removed folder: the folder comes back with it only.
    f.store.restore(&f.root, &cp.id, Some("dir/x.txt")).unwrap();
    assert_eq!(std::fs::read(f.path("dir/x.txt")).unwrap(), b"x1\n");
    assert!(!f.path("dir/y.txt").exists());
    assert_eq!(f.list().iter().filter(|c| c.tool == "restore").count(), 5);

    for bad in ["../x", ".git/config", "/etc/passwd"] {
        assert!(
            f.store.restore(&f.root, &cp.id, Some(bad)).is_err(),
            "{bad}"
        );
    }
    assert_eq!(
        f.store
            .restore(&f.root, "12345", None)
            .unwrap_err()
            .code
            .as_str(),
        "not_found"
    );
    assert_eq!(
        f.store
            .restore(&f.root, "../../x", None)
            .unwrap_err()
            .code
            .as_str(),
        "not_found"
    );
}

#[test]
fn hidden_files_are_kept_and_git_is_never_touched() {
    let f = Fixture::new();
    f.write(".git/HEAD", "ref: refs/heads/main\n");
    f.write(".env", "KEY=1\n");
    f.write(".github/workflows/ci.yml", "on: push\n");
    let cp = f.checkpoint("start");
    assert_eq!(cp.files, 2);
    f.write(".git/HEAD", "ref: refs/heads/other\n");
    f.write(".git/new", "x");
    f.write(".env", "KEY=2\n");
    std::fs::remove_dir_all(f.path(".github")).unwrap();
    let plan = f.store.diff(&f.root, &cp.id, None).unwrap();
    assert!(plan.changes.iter().all(|c| !c.path.starts_with(".git/")));
    f.store.restore(&f.root, &cp.id, None).unwrap();
    assert_eq!(std::fs::read(f.path(".env")).unwrap(), b"KEY=1\n");
    assert!(f.path(".github/workflows/ci.yml").exists());
    assert_eq!(
        std::fs::read(f.path(".git/HEAD")).unwrap(),
        b"ref: refs/heads/other\n"
    );
    assert!(f.path(".git/new").exists());
}

#[test]
fn the_walk_keeps_what_search_sees_and_hidden_files() {
    let f = Fixture::new();
    f.write(".gitignore", "*.log\nbuild/\n!keep.log\n");
    f.write(".ignore", "secret-notes/\n");
    f.write("a.log", "x");
    f.write("keep.log", "x");
    f.write("build/out.js", "x");
    f.write("secret-notes/n.txt", "x");
    f.write("src/.gitignore", "gen.rs\n");
    f.write("src/gen.rs", "x");
    f.write("src/main.rs", "x");
    f.write("src/.hidden.rs", "x");
    f.write("docs/guide.md", "x");
    let cp = f.checkpoint("start");
    // Remove everything but the ignore files: a restore's plan lists the
    // files the checkpoint kept.
    for rel in [
        "a.log",
        "keep.log",
        "build",
        "secret-notes",
        "src/gen.rs",
        "src/main.rs",
        "src/.hidden.rs",
        "docs",
    ] {
        let path = f.path(rel);
        if path.is_dir() {
            std::fs::remove_dir_all(path).unwrap();
        } else {
            std::fs::remove_file(path).unwrap();
        }
    }
    let plan = f.store.diff(&f.root, &cp.id, None).unwrap();
    let mut kept: Vec<&str> = plan
        .changes
        .iter()
        .filter(|c| c.status == ChangeStatus::Added)
        .map(|c| c.path.as_str())
        .collect();
    kept.sort();
    assert_eq!(
        kept,
        ["docs/guide.md", "keep.log", "src/.hidden.rs", "src/main.rs"]
    );
    // The same files glob (ripgrep's rules) finds, hidden ones aside.
    f.store.restore(&f.root, &cp.id, None).unwrap();
    let found = f.call("t", "glob", json!({"pattern": "**/*"})).unwrap();
    let mut globbed: Vec<&str> = found["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    globbed.sort();
    assert_eq!(globbed, ["docs/guide.md", "keep.log", "src/main.rs"]);
    // The ignored ones the restore did not bring back.
    assert!(!f.path("a.log").exists() && !f.path("build").exists());
}

#[test]
fn files_over_64_mib_are_recorded_not_kept_and_a_restore_says_so() {
    let f = Fixture::new();
    f.write("small.txt", "s\n");
    let big = std::fs::File::create(f.path("video.mp4")).unwrap();
    big.set_len(65 * 1024 * 1024).unwrap();
    let cp = f.checkpoint("start");
    assert_eq!(cp.too_large, ["video.mp4"]);
    assert!(f.store.usage(&f.root).unwrap() < 4096);
    std::fs::remove_file(f.path("video.mp4")).unwrap();
    let plan = f.store.diff(&f.root, &cp.id, None).unwrap();
    assert!(plan.changes[0].too_large);
    assert!(
        plan.skipped[0].reason.contains("too large"),
        "{:?}",
        plan.skipped
    );
    let restored = f.store.restore(&f.root, &cp.id, None).unwrap();
    assert_eq!(restored.skipped.len(), 1);
    assert_eq!(restored.skipped[0].path, "video.mp4");
    assert!(!f.path("video.mp4").exists());

    // A large file created after the checkpoint has no copy anywhere: it
    // is left in place rather than removed for good.
    let late = std::fs::File::create(f.path("late.iso")).unwrap();
    late.set_len(70 * 1024 * 1024).unwrap();
    let restored = f.store.restore(&f.root, &cp.id, None).unwrap();
    assert!(f.path("late.iso").exists());
    assert!(restored
        .skipped
        .iter()
        .any(|s| s.path == "late.iso" && s.reason.contains("left in place")));
}

#[test]
fn the_oldest_checkpoints_go_past_the_cap_and_the_rest_still_restore() {
    let f = Fixture::with_cap(64 * 1024);
    let mut ids = Vec::new();
    for i in 0..12u8 {
        // 16 KiB of new content each time, replacing the last.
        f.write("f.bin", vec![i; 16 * 1024]);
        ids.push(f.checkpoint(&format!("{i}")).id);
    }
    let kept: Vec<String> = f.list().into_iter().map(|c| c.id).collect();
    assert!(kept.len() < ids.len(), "some were dropped");
    assert_eq!(kept.last(), ids.last(), "the newest is always kept");
    assert_eq!(&ids[ids.len() - kept.len()..], &kept[..], "oldest first");
    let used = f.store.usage(&f.root).unwrap();
    assert!(used <= 64 * 1024 + 16 * 1024 + 8 * 1024, "{used}");
    // Objects of dropped checkpoints are gone; the kept ones are whole.
    let oldest = &kept[0];
    std::fs::remove_dir_all(f.path("")).ok();
    std::fs::create_dir(f.path("")).unwrap();
    let root = ProjectRoot::open(f.path("")).unwrap();
    f.store.restore(&root, oldest, None).unwrap();
    let n = f.list().iter().find(|c| &c.id == oldest).unwrap().files;
    assert_eq!(state(&f.path("")).len(), n);
    assert_eq!(
        f.store
            .diff(&root, &ids[0], None)
            .unwrap_err()
            .code
            .as_str(),
        "not_found"
    );
}

#[test]
fn a_checkpoint_that_cannot_be_taken_stops_the_call() {
    let f = Fixture::new();
    f.write("a.txt", "a\n");
    // The store's record folder replaced by a file: no record can be written.
    let records = f.store.path().join("snapshots");
    std::fs::remove_dir_all(&records).unwrap();
    std::fs::write(&records, "").unwrap();
    let err = f
        .call(
            "t",
            "write_file",
            json!({"path": "a.txt", "content": "b\n"}),
        )
        .unwrap_err();
    assert!(err.message.contains("no checkpoint"), "{}", err.message);
    assert_eq!(
        std::fs::read(f.path("a.txt")).unwrap(),
        b"a\n",
        "nothing ran"
    );
    // A read needs none.
    f.call("t", "read_file", json!({"path": "a.txt"})).unwrap();
}

#[test]
fn a_store_inside_the_project_is_refused() {
    let f = Fixture::new();
    let err = Store::for_project(&f.path("data"), &f.root).unwrap_err();
    assert_eq!(err.code.as_str(), "invalid_input");
    assert!(err.message.contains("inside the project"));
    let err = Store::open(&f.tmp.path().join("repo/.git/ckpt"), 1 << 20).unwrap_err();
    assert!(err.message.contains(".git"));
}

#[test]
fn unchanged_checkpoints_write_nothing_and_compare_says_what_a_turn_did() {
    let f = Fixture::new();
    for i in 0..50 {
        f.write(&format!("src/m{i}.rs"), format!("mod m{i};\n"));
    }
    let first = f.checkpoint("1");
    let used = f.store.usage(&f.root).unwrap();
    let second = f.checkpoint("2");
    assert_eq!(f.store.usage(&f.root).unwrap(), used, "no object written");
    assert_eq!(second.files_changed.total(), 0);
    f.write("src/m3.rs", "changed\n");
    f.write("src/new.rs", "new\n");
    let turn = f.store.compare(&f.root, &first.id, None).unwrap();
    assert_eq!(
        (turn.counts.added, turn.counts.modified, turn.counts.removed),
        (1, 1, 0)
    );
    assert_eq!(turn.to, "current");
    let third = f.checkpoint("3");
    let between = f
        .store
        .compare(&f.root, &second.id, Some(&third.id))
        .unwrap();
    assert_eq!(between.counts, turn.counts);
    assert_eq!(third.files_changed, turn.counts);
}

#[test]
fn a_damaged_older_checkpoint_never_stops_a_new_one() {
    let f = Fixture::new();
    f.write("a.txt", "one\n");
    let old = f.checkpoint("old");
    // Every object of the store removed: the old checkpoint is damaged.
    std::fs::remove_dir_all(f.store.path().join("objects")).unwrap();
    std::fs::create_dir(f.store.path().join("objects")).unwrap();
    std::fs::remove_file(f.store.path().join("stat-cache")).unwrap();
    f.write("a.txt", "two\n");
    f.call(
        "t",
        "write_file",
        json!({"path": "b.txt", "content": "b\n"}),
    )
    .unwrap();
    let new = f.list().pop().unwrap();
    assert_ne!(new.id, old.id);
    // The new one restores; the damaged one says so.
    f.write("a.txt", "three\n");
    f.store.restore(&f.root, &new.id, None).unwrap();
    assert_eq!(std::fs::read(f.path("a.txt")).unwrap(), b"two\n");
    let err = f.store.diff(&f.root, &old.id, None).unwrap_err();
    assert!(err.message.contains("damaged"), "{}", err.message);
}
