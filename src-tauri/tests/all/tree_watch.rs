//! The file tree's watcher: files made and deleted in a temp project are
//! reported (as their folders) within a second; nothing inside `.git/` or
//! an ignored folder, nothing outside the root through a symlink, and
//! nothing once the project is closed.

use corral_app::state::AppState;
use corral_app::store::Store;
use corral_session::watch::{TreeChanges, TreeWatcher};
use corral_testkit::{wait_until, Project};
use std::time::{Duration, Instant};

fn project() -> Project {
    let project = Project::new()
        .folder("src/deep")
        .folder(".git/objects")
        .folder("node_modules/left-pad")
        .folder("build")
        .file(".gitignore", "build/\n");
    std::os::unix::fs::symlink(project.outside(), project.root().join("out")).unwrap();
    project
}

fn ready(watcher: &TreeWatcher) {
    wait_until(5, "the watcher to be ready", || watcher.is_ready());
}

/// Polls until `folder` is reported after `since`; panics after 1 s.
fn reported_within_a_second(
    changes: impl Fn(u64) -> TreeChanges,
    since: u64,
    folder: &str,
) -> TreeChanges {
    let started = Instant::now();
    loop {
        let now = changes(since);
        if now.folders.iter().any(|f| f == folder) {
            return now;
        }
        assert!(
            started.elapsed() < Duration::from_secs(1),
            "`{folder}` not reported within a second: {now:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn quiet_for(changes: impl Fn(u64) -> TreeChanges, since: u64, what: &str) {
    std::thread::sleep(Duration::from_millis(600));
    let now = changes(since);
    assert_eq!(
        (now.counter, now.folders.len(), now.all),
        (since, 0, false),
        "{what}: {now:?}"
    );
}

#[test]
fn creations_and_deletions_are_reported_by_folder() {
    let dir = project();
    let root = std::fs::canonicalize(dir.root()).unwrap();
    let watcher = TreeWatcher::start(&root).unwrap();
    ready(&watcher);
    let log = watcher.changes();
    let changes = |since| log.since(since);

    std::fs::write(root.join("made.txt"), "x").unwrap();
    let first = reported_within_a_second(changes, 0, ".");
    assert!(!first.all);

    std::fs::write(root.join("src/deep/inner.rs"), "x").unwrap();
    let second = reported_within_a_second(changes, first.counter, "src/deep");
    assert_eq!(second.folders, vec!["src/deep".to_string()]);

    // A folder made after the start is watched too.
    std::fs::create_dir(root.join("src/new")).unwrap();
    reported_within_a_second(changes, second.counter, "src");
    std::thread::sleep(Duration::from_millis(300));
    let third = changes(second.counter).counter;
    std::fs::write(root.join("src/new/a.txt"), "x").unwrap();
    let fourth = reported_within_a_second(changes, third, "src/new");

    std::fs::remove_file(root.join("made.txt")).unwrap();
    let fifth = reported_within_a_second(changes, fourth.counter, ".");

    // Inside .git/, node_modules/, an ignored folder, or through a symlink
    // to a folder outside: nothing.
    std::fs::write(root.join(".git/objects/blob"), "x").unwrap();
    std::fs::write(root.join("node_modules/left-pad/index.js"), "x").unwrap();
    std::fs::write(root.join("build/out.o"), "x").unwrap();
    std::fs::write(dir.outside().join("secret.txt"), "x").unwrap();
    quiet_for(changes, fifth.counter, "ignored places");

    // An old counter (or one from another project) re-lists everything.
    assert!(changes(fifth.counter + 7).all);

    // Once the watcher is gone, nothing more.
    drop(watcher);
    std::fs::write(root.join("after.txt"), "x").unwrap();
    quiet_for(changes, fifth.counter, "after the close");
}

#[test]
fn the_open_project_watches_until_it_closes() {
    let dir = project();
    let state = AppState::new(Store::without_keychain(dir.config_dir(), dir.data_dir()));
    let root = dir.root().to_path_buf();
    state.open_project(&root).unwrap();
    wait_until(5, "the tree's watcher", || {
        state.session().is_ok_and(|s| s.tree_watcher_ready())
    });
    let changes = |since| state.session().unwrap().tree_changes(since);
    std::fs::write(root.join("made-by-agent.txt"), "x").unwrap();
    let seen = reported_within_a_second(changes, 0, ".");

    state.close_project();
    std::fs::write(root.join("later.txt"), "x").unwrap();
    std::thread::sleep(Duration::from_millis(600));
    assert_eq!(
        state
            .session()
            .map(|s| s.tree_changes(seen.counter))
            .unwrap_err()
            .code,
        corral_tools::ErrorCode::NoProjectOpen
    );
}
