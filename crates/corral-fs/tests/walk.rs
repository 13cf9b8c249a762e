//! What each use of the project walk lists, on one fixture tree: an
//! ignored file and folder, hidden files, git's folder and its exclude
//! file, a link leading out, a nested repository, secret-like files,
//! installed packages and build output.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods)]

use corral_fs::walk::{ProjectWalk, Use};
use pretty_assertions::assert_eq;
use std::fs;
use std::path::{Path, PathBuf};

/// The fixture beside a folder outside it; returns (temp dir, root).
fn fixture() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let outside = tmp.path().join("outside");
    fs::create_dir(&outside).unwrap();
    fs::write(outside.join("theirs.txt"), "").unwrap();
    let root = tmp.path().join("project");
    let files = [
        (".gitignore", "ignored.txt\nbuild/\n"),
        ("ignored.txt", ""),
        ("build/out.txt", ""),
        (".hidden.txt", ""),
        (".env", "KEY=1\n"),
        ("server.key", ""),
        (".git/HEAD", "ref: refs/heads/main\n"),
        (".git/info/exclude", "excluded.txt\n"),
        ("excluded.txt", ""),
        ("nested/.git/HEAD", "ref: refs/heads/main\n"),
        ("nested/lib.rs", ""),
        ("node_modules/pkg/index.js", ""),
        ("target/debug/app", ""),
        ("src/main.rs", ""),
    ];
    for (path, text) in files {
        let path = root.join(path);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
    }
    std::os::unix::fs::symlink(&outside, root.join("link-out")).unwrap();
    (tmp, root)
}

/// What a walk lists, relative to the root and sorted; folders end in `/`.
fn listed(walk: ProjectWalk, root: &Path) -> Vec<String> {
    let mut out: Vec<String> = walk
        .build()
        .map(|entry| entry.expect("the fixture reads cleanly"))
        .filter(|entry| entry.depth() > 0)
        .map(|entry| {
            let rel = entry.path().strip_prefix(root).unwrap();
            let slash = if entry.file_type().unwrap().is_dir() {
                "/"
            } else {
                ""
            };
            format!("{}{slash}", rel.display())
        })
        .collect();
    out.sort();
    out
}

/// The serial and the parallel walk list the same.
fn both(use_: Use, root: &Path) -> Vec<String> {
    let serial = listed(ProjectWalk::new(root, use_), root);
    let found = std::sync::Mutex::new(Vec::new());
    ProjectWalk::new(root, use_).build_parallel().run(|| {
        let found = &found;
        Box::new(move |entry| {
            let entry = entry.unwrap();
            if entry.depth() > 0 {
                let rel = entry.path().strip_prefix(root).unwrap().to_path_buf();
                found.lock().unwrap().push(rel);
            }
            ignore::WalkState::Continue
        })
    });
    let mut parallel: Vec<PathBuf> = found.into_inner().unwrap();
    parallel.sort();
    let names: Vec<String> = serial
        .iter()
        .map(|s| s.trim_end_matches('/').to_string())
        .collect();
    let mut names_sorted: Vec<PathBuf> = names.iter().map(PathBuf::from).collect();
    names_sorted.sort();
    assert_eq!(
        parallel, names_sorted,
        "{use_:?}: parallel and serial differ"
    );
    serial
}

#[test]
fn a_search_leaves_out_ignored_and_hidden_entries_and_git() {
    let (_tmp, root) = fixture();
    assert_eq!(
        both(Use::Search, &root),
        [
            "link-out",
            "nested/",
            "nested/lib.rs",
            "node_modules/",
            "node_modules/pkg/",
            "node_modules/pkg/index.js",
            "server.key",
            "src/",
            "src/main.rs",
            "target/",
            "target/debug/",
            "target/debug/app",
        ]
    );
}

#[test]
fn a_snapshot_keeps_hidden_files_but_not_ignored_ones_nor_git() {
    let (_tmp, root) = fixture();
    // `.GIT` is git's folder too on a case-insensitive disk.
    fs::create_dir(root.join("src/.GIT")).unwrap();
    fs::write(root.join("src/.GIT/HEAD"), "").unwrap();
    assert_eq!(
        both(Use::Snapshot, &root),
        [
            ".env",
            ".gitignore",
            ".hidden.txt",
            "link-out",
            "nested/",
            "nested/lib.rs",
            "node_modules/",
            "node_modules/pkg/",
            "node_modules/pkg/index.js",
            "server.key",
            "src/",
            "src/main.rs",
            "target/",
            "target/debug/",
            "target/debug/app",
        ]
    );
}

#[test]
fn the_watch_sees_hidden_entries_but_not_git_packages_or_build_output() {
    let (_tmp, root) = fixture();
    // A file named like a bulk folder is listed: only folders are skipped.
    fs::write(root.join("src/target"), "").unwrap();
    assert_eq!(
        both(Use::Watch, &root),
        [
            ".env",
            ".gitignore",
            ".hidden.txt",
            "link-out",
            "nested/",
            "nested/lib.rs",
            "server.key",
            "src/",
            "src/main.rs",
            "src/target",
        ]
    );
}

#[test]
fn the_masks_see_ignored_and_hidden_entries_and_list_git_without_entering_it() {
    let (_tmp, root) = fixture();
    assert_eq!(
        both(Use::Mask, &root),
        [
            ".env",
            ".git/",
            ".gitignore",
            ".hidden.txt",
            "build/",
            "build/out.txt",
            "excluded.txt",
            "ignored.txt",
            "link-out",
            "nested/",
            "nested/.git/",
            "nested/lib.rs",
            "server.key",
            "src/",
            "src/main.rs",
        ]
    );
}

#[test]
fn a_search_for_links_sees_everything_but_git() {
    let (_tmp, root) = fixture();
    assert_eq!(
        both(Use::Links, &root),
        [
            ".env",
            ".gitignore",
            ".hidden.txt",
            "build/",
            "build/out.txt",
            "excluded.txt",
            "ignored.txt",
            "link-out",
            "nested/",
            "nested/lib.rs",
            "node_modules/",
            "node_modules/pkg/",
            "node_modules/pkg/index.js",
            "server.key",
            "src/",
            "src/main.rs",
            "target/",
            "target/debug/",
            "target/debug/app",
        ]
    );
}

#[test]
fn a_narrowed_walk_keeps_the_rules_of_its_use() {
    let (_tmp, root) = fixture();
    let walk = ProjectWalk::new(&root, Use::Search)
        .keeping(|entry| entry.file_name() != "node_modules" && entry.file_name() != "target");
    assert_eq!(
        listed(walk, &root),
        [
            "link-out",
            "nested/",
            "nested/lib.rs",
            "server.key",
            "src/",
            "src/main.rs"
        ]
    );
}

#[test]
fn a_walk_from_a_folder_below_the_root_reads_the_ignore_files_above_it_for_a_search_only() {
    let (_tmp, root) = fixture();
    fs::write(root.join("src/ignored.txt"), "").unwrap();
    let below = |use_| {
        let mut names: Vec<String> = ProjectWalk::new(&root.join("src"), use_)
            .build()
            .flatten()
            .filter(|e| e.depth() > 0)
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    };
    assert_eq!(below(Use::Search), ["main.rs"]);
    // The tree's watch of a new folder reads no ignore file above it (the
    // watcher asks the root's `.gitignore` itself).
    assert_eq!(below(Use::Watch), ["ignored.txt", "main.rs"]);
}
