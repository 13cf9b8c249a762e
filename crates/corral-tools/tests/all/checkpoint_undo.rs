//! One call undone alone, through `dispatch::call` on real folders: its
//! own changes go back, later changes to its paths are named and kept, a
//! folder it made keeps what was put in it later, and an undo found half
//! done is finished for that call only.

use crate::checkpoint::{has_node, Fixture};
use corral_tools::checkpoint::ChangeStatus;
use pretty_assertions::assert_eq;
use serde_json::json;

#[test]
fn one_call_is_undone_alone_and_later_changes_to_its_paths_are_named() {
    assert!(has_node(), "these tests run commands with node");
    let f = Fixture::new();
    f.write("a.txt", "a0\n");
    f.write("b.txt", "b0\n");
    let write = |path: &str, content: &str| {
        f.call(
            "t1",
            "write_file",
            json!({"path": path, "content": content}),
        )
        .unwrap();
    };
    write("a.txt", "a1\n");
    write("b.txt", "b1\n");
    let script = "const fs = require('fs');\
        fs.writeFileSync('a.txt', 'a3\\n');\
        fs.writeFileSync('c.txt', 'c3\\n');";
    let out = f
        .call(
            "t1",
            "exec_shell",
            json!({"command": "node", "args": ["-e", script]}),
        )
        .unwrap();
    assert_eq!(out["exit_code"], 0, "{out}");
    let calls = f.list();
    assert_eq!(calls.len(), 3);
    let (one, two, three) = (&calls[0].id, &calls[1].id, &calls[2].id);

    // What each undo would do, before it is done.
    let plan = f.store.call_undo_diff(&f.root, two).unwrap();
    assert_eq!(
        (
            plan.until.as_str(),
            plan.paths.clone(),
            plan.changed_later.clone()
        ),
        (
            three.as_str(),
            vec!["b.txt".to_string()],
            Vec::<String>::new()
        )
    );
    let planned: Vec<(&str, ChangeStatus)> = plan
        .plan
        .changes
        .iter()
        .map(|c| (c.path.as_str(), c.status))
        .collect();
    assert_eq!(planned, [("b.txt", ChangeStatus::Modified)]);
    assert_eq!(plan.plan.changes[0].after.as_deref(), Some("b0\n"));
    // Call 1 changed a.txt, and call 3 changed it again: undoing call 1
    // loses that later change too, and says so.
    let plan = f.store.call_undo_diff(&f.root, one).unwrap();
    assert_eq!(plan.paths, ["a.txt"]);
    assert_eq!(plan.changed_later, ["a.txt"]);
    // The last call ends at the project as it is.
    let plan = f.store.call_undo_diff(&f.root, three).unwrap();
    assert_eq!(plan.until, "current");
    assert_eq!(plan.paths, ["a.txt", "c.txt"]);
    assert!(plan.changed_later.is_empty());

    // Undoing call 2 puts b.txt back and leaves call 3's a.txt and c.txt.
    let before_undo = f.state();
    let undone = f.store.undo_call(&f.root, two).unwrap();
    assert_eq!(std::fs::read(f.path("a.txt")).unwrap(), b"a3\n");
    assert_eq!(std::fs::read(f.path("b.txt")).unwrap(), b"b0\n");
    assert_eq!(std::fs::read(f.path("c.txt")).unwrap(), b"c3\n");
    let restored: Vec<&str> = undone.changes.iter().map(|c| c.path.as_str()).collect();
    assert_eq!(restored, ["b.txt"]);
    assert_eq!(undone.restored, *two);
    // It is undone like any restore, through the one checkpoint it took.
    f.store.restore(&f.root, &undone.undo, None).unwrap();
    assert_eq!(f.state(), before_undo);

    // Undoing the last call: a.txt back to a1 (call 1's), c.txt gone.
    f.store.undo_call(&f.root, three).unwrap();
    assert_eq!(std::fs::read(f.path("a.txt")).unwrap(), b"a1\n");
    assert_eq!(std::fs::read(f.path("b.txt")).unwrap(), b"b1\n");
    assert!(!f.path("c.txt").exists());
    assert!(f.store.undo_call(&f.root, "12345").is_err());
}

#[test]
fn undoing_a_call_that_made_a_folder_keeps_what_was_put_in_it_later() {
    let f = Fixture::new();
    f.call(
        "t1",
        "write_file",
        json!({"path": "gen/x.txt", "content": "x\n"}),
    )
    .unwrap();
    f.call(
        "t1",
        "write_file",
        json!({"path": "z.txt", "content": "z\n"}),
    )
    .unwrap();
    f.write("gen/y.txt", "by hand\n");
    let gen = f.list()[0].id.clone();
    let plan = f.store.call_undo_diff(&f.root, &gen).unwrap();
    assert_eq!(plan.paths, ["gen", "gen/x.txt"]);
    let undone = f.store.undo_call(&f.root, &gen).unwrap();
    assert!(!f.path("gen/x.txt").exists());
    assert_eq!(std::fs::read(f.path("gen/y.txt")).unwrap(), b"by hand\n");
    assert_eq!(std::fs::read(f.path("z.txt")).unwrap(), b"z\n");
    assert_eq!(undone.skipped.len(), 1);
    assert_eq!(undone.skipped[0].path, "gen");
    assert!(
        undone.skipped[0].reason.contains("does not touch"),
        "{}",
        undone.skipped[0].reason
    );
}

#[test]
fn an_undo_of_one_call_found_half_done_is_finished_for_that_call_only() {
    let f = Fixture::new();
    f.write("a.txt", "a0\n");
    f.write("b.txt", "b0\n");
    for (path, content) in [("a.txt", "a1\n"), ("b.txt", "b1\n"), ("a.txt", "a3\n")] {
        f.call(
            "t1",
            "write_file",
            json!({"path": path, "content": content}),
        )
        .unwrap();
    }
    let calls = f.list();
    // As a process killed right after writing its journal leaves it.
    let journal = json!({
        "restore": calls[1].id,
        "path": null,
        "undo": calls[2].id,
        "until": calls[2].id,
    });
    std::fs::write(
        f.store.path().join("journal.json"),
        serde_json::to_vec(&journal).unwrap(),
    )
    .unwrap();
    let after = f.list();
    assert!(!f.store.path().join("journal.json").exists());
    assert_eq!(std::fs::read(f.path("a.txt")).unwrap(), b"a3\n");
    assert_eq!(std::fs::read(f.path("b.txt")).unwrap(), b"b0\n");
    assert_eq!(after.len(), calls.len() + 1, "one checkpoint before it");
}

#[test]
fn ignored_entries_below_the_top_are_recorded_by_name_and_a_restore_leaves_them() {
    let f = Fixture::new();
    f.write("pkg/.gitignore", "build/\n*.log\n");
    f.write("pkg/lib.rs", "pub fn a() {}\n");
    f.write("pkg/build/out.o", "object one\n");
    f.write("pkg/debug.log", "log one\n");
    f.write("pkg/deep/er/cache/.gitignore", "*\n!.gitignore\n");
    f.write("pkg/deep/er/cache/blob.bin", "cached\n");
    let cp = f.checkpoint("start");
    let used = f.store.usage(&f.root).unwrap();
    // What an ignored entry holds is never read: changing it costs nothing.
    f.write("pkg/build/out.o", "object two, much longer than before\n");
    f.write("pkg/deep/er/cache/blob.bin", "cached again\n");
    let same = f.checkpoint("same");
    assert_eq!(f.store.usage(&f.root).unwrap(), used, "no object written");
    assert_eq!(same.files_changed.total(), 0);

    // The agent un-ignores build/, makes a new ignored log, removes one.
    f.write("pkg/.gitignore", "*.log\n");
    f.write("pkg/new.log", "new\n");
    std::fs::remove_file(f.path("pkg/debug.log")).unwrap();
    let plan = f.store.diff(&f.root, &cp.id, None).unwrap();
    let changed: Vec<&str> = plan.changes.iter().map(|c| c.path.as_str()).collect();
    assert_eq!(
        changed,
        ["pkg/.gitignore"],
        "build/ was ignored then: not a change"
    );
    let skipped: Vec<(&str, &str)> = plan
        .skipped
        .iter()
        .map(|s| (s.path.as_str(), s.reason.as_str()))
        .collect();
    assert_eq!(
        skipped,
        [
            (
                "pkg/build",
                "ignored, not kept: the ignore rules left it out when the checkpoint was taken; left as it is"
            ),
            (
                "pkg/debug.log",
                "ignored, not kept: there when the checkpoint was taken; nothing of it was kept to bring back"
            ),
            (
                "pkg/new.log",
                "ignored, not kept: not there when the checkpoint was taken; left as it is"
            ),
        ]
    );

    let restored = f.store.restore(&f.root, &cp.id, None).unwrap();
    assert_eq!(restored.skipped, plan.skipped);
    assert_eq!(
        std::fs::read(f.path("pkg/.gitignore")).unwrap(),
        b"build/\n*.log\n"
    );
    // Never removed, never rewritten: the restore left them as they are.
    assert_eq!(
        std::fs::read(f.path("pkg/build/out.o")).unwrap(),
        b"object two, much longer than before\n"
    );
    assert_eq!(std::fs::read(f.path("pkg/new.log")).unwrap(), b"new\n");
    assert!(!f.path("pkg/debug.log").exists());
    assert_eq!(
        std::fs::read(f.path("pkg/deep/er/cache/blob.bin")).unwrap(),
        b"cached again\n"
    );
}
