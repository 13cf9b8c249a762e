//! What a checkpoint's scan trusts from the last one (the stat cache, one
//! `lstat` per folder's name instead of per path) never hides a change:
//! each test takes a checkpoint, changes the project the way that could
//! fool such a shortcut, and checks the change is seen.
#![allow(clippy::unwrap_used, clippy::disallowed_methods)]

use corral_checkpoint::{NewCheckpoint, Store, DEFAULT_CAP_BYTES};
use corral_fs::ProjectRoot;
use std::path::Path;
use std::time::{Duration, SystemTime};

struct Fixture {
    _tmp: tempfile::TempDir,
    project: std::path::PathBuf,
    root: ProjectRoot,
    store: Store,
}

fn fixture(files: &[(&str, &str)]) -> Fixture {
    let tmp = tempfile::tempdir().unwrap();
    let project = tmp.path().join("project");
    std::fs::create_dir(&project).unwrap();
    for (path, text) in files {
        write_old(&project.join(path), text);
    }
    let root = ProjectRoot::open(&project).unwrap();
    let store = Store::open(&tmp.path().join("store"), DEFAULT_CAP_BYTES).unwrap();
    Fixture {
        _tmp: tmp,
        project,
        root,
        store,
    }
}

/// Writes `text` with an mtime a minute back: old enough for the stat
/// cache to keep it.
fn write_old(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
    set_mtime(path, SystemTime::now() - Duration::from_secs(60));
}

fn set_mtime(path: &Path, time: SystemTime) {
    std::fs::File::options()
        .write(true)
        .open(path)
        .unwrap()
        .set_modified(time)
        .unwrap();
}

impl Fixture {
    fn checkpoint(&self) -> String {
        self.store
            .checkpoint(&self.root, NewCheckpoint::manual("test"))
            .unwrap()
            .id
    }

    /// The paths that differ between checkpoint `id` and the project now.
    fn changed(&self, id: &str) -> Vec<String> {
        let mut paths: Vec<String> = self
            .store
            .diff(&self.root, id, None)
            .unwrap()
            .changes
            .into_iter()
            .map(|c| c.path)
            .collect();
        paths.sort();
        paths
    }

    /// The paths that differ between two checkpoints.
    fn between(&self, from: &str, to: &str) -> Vec<String> {
        let mut paths: Vec<String> = self
            .store
            .compare(&self.root, from, Some(to))
            .unwrap()
            .changes
            .into_iter()
            .map(|c| c.path)
            .collect();
        paths.sort();
        paths
    }
}

#[test]
fn a_file_rewritten_with_the_same_size_and_mtime_is_seen() {
    let f = fixture(&[("src/a.txt", "one\n"), ("src/b.txt", "two\n")]);
    let first = f.checkpoint();
    // The second checkpoint reads nothing: both files are in the cache.
    let second = f.checkpoint();
    assert!(f.between(&first, &second).is_empty());
    let path = f.project.join("src/a.txt");
    let mtime = std::fs::metadata(&path).unwrap().modified().unwrap();
    std::fs::write(&path, "ONE\n").unwrap();
    set_mtime(&path, mtime);
    // Same size, same mtime: the ctime (and the folder's listing) differ.
    assert_eq!(f.changed(&second), ["src/a.txt"]);
    let third = f.checkpoint();
    assert_eq!(f.between(&second, &third), ["src/a.txt"]);
    f.store.restore(&f.root, &second, None).unwrap();
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "one\n");
}

#[test]
fn a_file_rewritten_in_the_same_second_as_the_checkpoint_is_seen() {
    let f = fixture(&[]);
    let path = f.project.join("young.txt");
    std::fs::write(&path, "aaaa\n").unwrap();
    let first = f.checkpoint();
    std::fs::write(&path, "bbbb\n").unwrap();
    let second = f.checkpoint();
    assert_eq!(f.between(&first, &second), ["young.txt"]);
}

#[test]
fn a_file_changed_in_a_folder_whose_mtime_did_not_change_is_seen() {
    let f = fixture(&[("d/a.txt", "one\n"), ("d/b.txt", "two\n")]);
    let first = f.checkpoint();
    let folder_mtime = std::fs::metadata(f.project.join("d"))
        .unwrap()
        .modified()
        .unwrap();
    // Written in place: the folder's entries (and so its mtime) stay.
    std::fs::write(f.project.join("d/b.txt"), "two, longer\n").unwrap();
    assert_eq!(
        std::fs::metadata(f.project.join("d"))
            .unwrap()
            .modified()
            .unwrap(),
        folder_mtime
    );
    let second = f.checkpoint();
    assert_eq!(f.between(&first, &second), ["d/b.txt"]);
}

#[test]
fn a_file_added_or_removed_in_an_unchanged_folder_is_seen() {
    let f = fixture(&[("d/a.txt", "one\n"), ("e/b.txt", "two\n")]);
    let first = f.checkpoint();
    write_old(&f.project.join("d/new.txt"), "new\n");
    std::fs::remove_file(f.project.join("e/b.txt")).unwrap();
    let second = f.checkpoint();
    assert_eq!(f.between(&first, &second), ["d/new.txt", "e/b.txt"]);
}

#[test]
fn a_folder_replaced_by_a_symlink_is_seen_and_never_followed() {
    let f = fixture(&[("d/a.txt", "one\n"), ("other/a.txt", "other\n")]);
    let first = f.checkpoint();
    std::fs::remove_dir_all(f.project.join("d")).unwrap();
    std::os::unix::fs::symlink("other", f.project.join("d")).unwrap();
    let second = f.checkpoint();
    let changed = f.between(&first, &second);
    assert!(changed.contains(&"d/a.txt".to_string()), "{changed:?}");
    assert!(changed.iter().any(|p| p == "d"), "{changed:?}");
    // Back: the folder and its file, not the link's target.
    f.store.restore(&f.root, &first, None).unwrap();
    assert!(f.project.join("d").symlink_metadata().unwrap().is_dir());
    assert_eq!(
        std::fs::read_to_string(f.project.join("d/a.txt")).unwrap(),
        "one\n"
    );
    assert_eq!(
        std::fs::read_to_string(f.project.join("other/a.txt")).unwrap(),
        "other\n"
    );
}

#[test]
fn a_file_replaced_by_a_folder_or_a_link_is_seen() {
    let f = fixture(&[("a", "file\n"), ("b", "file\n")]);
    let first = f.checkpoint();
    std::fs::remove_file(f.project.join("a")).unwrap();
    write_old(&f.project.join("a/inner.txt"), "inner\n");
    std::fs::remove_file(f.project.join("b")).unwrap();
    std::os::unix::fs::symlink("a", f.project.join("b")).unwrap();
    let second = f.checkpoint();
    let changed = f.between(&first, &second);
    for path in ["a", "a/inner.txt", "b"] {
        assert!(changed.iter().any(|p| p == path), "{path}: {changed:?}");
    }
}

#[test]
fn an_ignored_file_made_kept_by_a_gitignore_change_is_seen() {
    let f = fixture(&[
        (".gitignore", "*.log\nbuild/\n"),
        ("d/keep.txt", "keep\n"),
        ("d/run.log", "log\n"),
        ("build/out.txt", "out\n"),
    ]);
    let first = f.checkpoint();
    // Ignored entries are recorded by name only: their changes are not
    // the checkpoint's.
    write_old(&f.project.join("d/run.log"), "log, changed\n");
    let second = f.checkpoint();
    assert!(f.between(&first, &second).is_empty());
    assert_eq!(f.store.get(&second).unwrap().files, 2);
    write_old(&f.project.join(".gitignore"), "build/\n");
    let third = f.checkpoint();
    // Now kept: counted, and brought back by a restore.
    assert_eq!(f.store.get(&third).unwrap().files, 3);
    std::fs::remove_file(f.project.join("d/run.log")).unwrap();
    assert_eq!(f.changed(&third), ["d/run.log"]);
    f.store.restore(&f.root, &third, None).unwrap();
    assert_eq!(
        std::fs::read_to_string(f.project.join("d/run.log")).unwrap(),
        "log, changed\n"
    );
    // A nested ignore file, in a folder whose other entries did not change,
    // leaves `keep.txt` out: a restore of the fourth leaves it be.
    write_old(&f.project.join("d/.gitignore"), "keep.txt\n");
    let fourth = f.checkpoint();
    assert_eq!(f.store.get(&fourth).unwrap().files, 3);
    write_old(&f.project.join("d/keep.txt"), "changed\n");
    assert!(f.changed(&fourth).is_empty());
    std::fs::remove_file(f.project.join("d/.gitignore")).unwrap();
    f.store.restore(&f.root, &third, None).unwrap();
    assert_eq!(
        std::fs::read_to_string(f.project.join("d/keep.txt")).unwrap(),
        "keep\n"
    );
}

#[test]
fn kept_and_ignored_names_interleaved_in_many_folders_are_each_right() {
    let mut files = vec![(".gitignore".to_string(), "*.o\n".to_string())];
    for d in 0..20 {
        for i in 0..30 {
            let ext = if i % 3 == 0 { "o" } else { "c" };
            files.push((format!("d{d:02}/f{i:02}.{ext}"), format!("{d} {i}\n")));
        }
    }
    let borrowed: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, t)| (p.as_str(), t.as_str()))
        .collect();
    let f = fixture(&borrowed);
    let first = f.checkpoint();
    let info = f.store.get(&first).unwrap();
    assert_eq!(info.files, 1 + 20 * 20);
    // Every kept file is restored, no ignored one is touched.
    for d in 0..20 {
        for i in 0..30 {
            let ext = if i % 3 == 0 { "o" } else { "c" };
            std::fs::remove_file(f.project.join(format!("d{d:02}/f{i:02}.{ext}"))).unwrap();
        }
    }
    assert_eq!(f.changed(&first).len(), 20 * 20);
    f.store.restore(&f.root, &first, None).unwrap();
    for d in 0..20 {
        for i in 0..30 {
            let path = f.project.join(format!(
                "d{d:02}/f{i:02}.{}",
                if i % 3 == 0 { "o" } else { "c" }
            ));
            assert_eq!(path.exists(), i % 3 != 0, "{}", path.display());
        }
    }
}

#[test]
fn a_cache_of_another_project_state_is_never_trusted_for_a_new_inode() {
    // Same path, same size, same mtime, but another file (a rename over it).
    let f = fixture(&[("a.txt", "aaaa\n"), ("b.txt", "bbbb\n")]);
    let first = f.checkpoint();
    let mtime = std::fs::metadata(f.project.join("a.txt"))
        .unwrap()
        .modified()
        .unwrap();
    set_mtime(&f.project.join("b.txt"), mtime);
    std::fs::rename(f.project.join("b.txt"), f.project.join("a.txt")).unwrap();
    let second = f.checkpoint();
    assert_eq!(f.between(&first, &second), ["a.txt", "b.txt"]);
}
