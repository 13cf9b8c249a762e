//! The app builds the open project's search index in the background, in
//! its data folder, says how far it is, and `search_files` uses it once it
//! is ready (`indexed: true`), with the same results as without it; a
//! watch keeps it true, so searches skip the walk.

use corral_app::state::AppState;
use corral_app::store::Store;
use corral_session::index::IndexStatus;
use corral_session::{Call, Consent, RunContext};
use corral_testkit::Project;
use serde_json::{json, Value};
use std::time::{Duration, Instant};

fn search(state: &AppState, query: &str) -> Value {
    let session = state.session().unwrap();
    let call = Call::new("search_files", json!({"query": query}));
    tauri::async_runtime::block_on(session.call(call, Consent::None, RunContext::default()))
        .unwrap()
}

#[test]
fn the_index_is_built_in_the_background_and_searches_use_it_once_ready() {
    let kit = Project::new();
    for i in 0..200 {
        kit.write(
            &format!("src/file{i}.txt"),
            format!("line one of {i}\nneedle_{i} here\n"),
        );
    }
    let project = kit.root().to_path_buf();
    let state = AppState::new(Store::without_keychain(kit.config_dir(), kit.data_dir()));
    state.open_project(&project).unwrap();
    let until = Instant::now() + Duration::from_secs(30);
    let ready = loop {
        match state.session().unwrap().index_status() {
            IndexStatus::Ready { files, ms } => break (files, ms),
            IndexStatus::Failed { message } => panic!("the index failed: {message}"),
            IndexStatus::Building { listed, indexed } => {
                assert!(indexed <= listed.max(indexed));
                assert!(Instant::now() < until, "still building: {listed} listed");
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(ready.0, 200);
    assert!(kit.data_dir().join("search-index").is_dir());
    assert!(
        !project.join(".corral").exists(),
        "nothing written in the project"
    );

    let found = search(&state, "needle_17 ");
    assert_eq!(found["indexed"], true, "{found}");
    let matches = found["matches"].as_array().unwrap();
    assert_eq!(matches.len(), 1, "{found}");
    assert_eq!(matches[0]["path"], "src/file17.txt");
    // A file written after the build is found too (searched directly).
    std::fs::write(project.join("src/late.txt"), "needle_17 late\n").unwrap();
    let found = search(&state, "needle_17 ");
    let paths: Vec<&str> = found["matches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["path"].as_str().unwrap())
        .collect();
    assert_eq!(paths, ["src/file17.txt", "src/late.txt"]);
    // Both searches skipped the walk: a watch vouched for every other file.
    let live = state
        .session()
        .unwrap()
        .live_index()
        .expect("a watch keeps the index");
    assert_eq!(live.walk_free_queries(), 2);
    // Closing the project ends the watch.
    state.close_project();
    assert!(state.session().ok().and_then(|s| s.live_index()).is_none());
}
