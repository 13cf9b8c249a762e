//! An open project has one inotify instance, feeding both the file tree
//! and the live search index, and closing the project ends it. Alone in
//! its test binary: the count of inotify instances is the process's.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods)]

use corral_session::index::IndexStatus;
use corral_session::{Fixed, Options, Session};
use corral_tools::search::{self, IndexConfig, SearchFilesInput};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The inotify instances this process holds open.
fn inotify_instances() -> usize {
    std::fs::read_dir("/proc/self/fd")
        .unwrap()
        .flatten()
        .filter(|fd| {
            std::fs::read_link(fd.path())
                .is_ok_and(|target| target.as_os_str() == "anon_inode:inotify")
        })
        .count()
}

fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
    let until = Instant::now() + Duration::from_secs(30);
    while !done() {
        assert!(Instant::now() < until, "still waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn one_watch_feeds_the_tree_and_the_index_and_ends_with_the_project() {
    let tmp = tempfile::tempdir().unwrap();
    let project = tmp.path().join("project");
    std::fs::create_dir_all(project.join("src/deep")).unwrap();
    std::fs::write(project.join("src/deep/a.txt"), "needle_old\n").unwrap();
    let before = inotify_instances();

    let options = Options {
        search_index: Some(IndexConfig::new(tmp.path().join("index"))),
        build_index: true,
        watch_tree: true,
        ..Options::default()
    };
    let session = Session::open(&project, Arc::new(Fixed::default()), options).unwrap();
    wait_for("the tree's watch", || session.tree_watcher_ready());
    wait_for("the index", || match session.index_status() {
        IndexStatus::Ready { .. } => true,
        IndexStatus::Failed { message } => panic!("the index failed: {message}"),
        IndexStatus::Building { .. } => false,
    });
    assert_eq!(inotify_instances(), before + 1, "one watch per project");

    // A new file: the tree hears of its folder, the index finds it
    // without a walk.
    std::fs::write(project.join("src/deep/new.txt"), "needle_new\n").unwrap();
    wait_for("the tree to hear of the new file", || {
        session.tree_changes(0).folders == ["src/deep"]
    });
    let live = session.live_index().expect("the watch keeps the index");
    let config = IndexConfig::new(tmp.path().join("index")).watched_by(live.clone());
    let input = SearchFilesInput {
        query: "needle_".into(),
        regex: None,
        case_insensitive: None,
        glob: None,
        path: None,
        max_results: None,
    };
    let found = search::search_files_indexed(session.root(), &input, &config).unwrap();
    let paths: Vec<&str> = found.matches.iter().map(|m| m.path.as_str()).collect();
    assert_eq!(paths, ["src/deep/a.txt", "src/deep/new.txt"]);
    assert_eq!(
        live.walk_free_queries(),
        1,
        "the watch vouched for the index"
    );
    assert_eq!(inotify_instances(), before + 1);

    drop((live, config));
    drop(session);
    wait_for("the watch to end", || inotify_instances() == before);
}
