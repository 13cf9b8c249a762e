//! `corral-cli call --index DIR`: `search_files` keeps its trigram index in
//! DIR (outside the project) and returns what it returns without one.

use serde_json::Value;
use std::path::Path;

fn search(root: &Path, index: Option<&Path>, input: &str) -> Value {
    let mut cmd = crate::common::corral_cli();
    cmd.arg("call").arg("--root").arg(root);
    if let Some(index) = index {
        cmd.arg("--index").arg(index);
    }
    let out = cmd.arg("search_files").arg(input).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn call_with_an_index_folder_uses_it_and_finds_the_same() {
    let project = tempfile::tempdir().unwrap();
    let store = tempfile::tempdir().unwrap();
    std::fs::create_dir(project.path().join("src")).unwrap();
    std::fs::write(project.path().join("src/a.rs"), "fn needle() {}\n").unwrap();
    std::fs::write(project.path().join("b.txt"), "hay\nNeedle\n").unwrap();
    let index = store.path().join("index");
    let input = r#"{"query":"needle","case_insensitive":true}"#;

    let plain = search(project.path(), None, input);
    let indexed = search(project.path(), Some(&index), input);
    assert_eq!(plain["indexed"], false);
    assert_eq!(indexed["indexed"], true);
    assert_eq!(indexed["matches"], plain["matches"]);
    assert_eq!(indexed["truncated"], plain["truncated"]);
    assert_eq!(plain["matches"].as_array().unwrap().len(), 2);
    // The index is in the folder given, nothing new in the project.
    assert_eq!(std::fs::read_dir(&index).unwrap().count(), 1);
    let mut names: Vec<_> = std::fs::read_dir(project.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, ["b.txt", "src"]);

    // A file written after the build is found without a rebuild.
    std::fs::write(project.path().join("c.txt"), "needle again\n").unwrap();
    let again = search(project.path(), Some(&index), input);
    assert_eq!(again["indexed"], true);
    assert_eq!(again["matches"].as_array().unwrap().len(), 3);
}
