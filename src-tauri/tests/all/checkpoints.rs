//! The app's checkpoint commands through Tauri's IPC test tooling: a
//! changing `call_tool` takes a checkpoint tagged with its turn and call,
//! reads take none, and the window can list, preview and restore them.

use crate::window::{app_on, App};
use corral_testkit::{faults, Project};
use serde_json::{json, Value};

/// The app on a project holding `a.txt`.
fn app() -> App {
    app_on(Project::new().file("a.txt", "one\n"))
}

/// A command that must succeed.
fn ok(app: &App, cmd: &str, args: Value) -> Value {
    app.invoke(cmd, args)
        .unwrap_or_else(|e| panic!("{cmd}: {e}"))
}

#[test]
fn changing_calls_are_checkpointed_and_the_window_restores_them() {
    let app = app();
    assert_eq!(
        app.invoke("list_checkpoints", json!({})).unwrap_err()["code"],
        "no_project_open"
    );
    ok(&app, "open_project", json!({"path": app.kit.root()}));
    ok(
        &app,
        "save_settings",
        json!({"settings": {"provider": "anthropic", "base_url": "https://api.anthropic.com", "model": "m", "max_tokens": 100, "mode": "full_auto"}}),
    );

    let call = |name: &str, input: Value, call_id: &str| {
        ok(
            &app,
            "call_tool",
            json!({"name": name, "input": input, "turn_id": "turn-1", "call_id": call_id}),
        )
    };
    call("read_file", json!({"path": "a.txt"}), "card-0");
    call(
        "write_file",
        json!({"path": "a.txt", "content": "two\n"}),
        "card-1",
    );
    call(
        "write_file",
        json!({"path": "b.txt", "content": "new\n"}),
        "card-2",
    );
    let list = ok(&app, "list_checkpoints", json!({}));
    let list = list.as_array().unwrap();
    assert_eq!(list.len(), 2, "the read took none: {list:?}");
    assert_eq!(list[0]["turn"], "turn-1");
    assert_eq!(list[0]["call_id"], "card-1");
    assert_eq!(list[0]["turn_start"], true);
    assert_eq!(list[1]["call_id"], "card-2");
    let first = list[0]["id"].as_str().unwrap();

    // What the turn did, and what a restore to its start would do.
    let turn = ok(&app, "compare_checkpoints", json!({"from": first}));
    assert_eq!(
        turn["counts"],
        json!({"added": 1, "modified": 1, "removed": 0})
    );
    let plan = ok(&app, "checkpoint_diff", json!({"id": first}));
    let a = plan["changes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["path"] == "a.txt")
        .unwrap()
        .clone();
    assert_eq!(
        (a["before"].as_str(), a["after"].as_str()),
        (Some("two\n"), Some("one\n"))
    );
    assert_eq!(
        app.kit.read("a.txt").as_deref(),
        Some("two\n"),
        "a preview changes nothing"
    );

    let restored = ok(&app, "restore_checkpoint", json!({"id": first}));
    assert_eq!(app.kit.read("a.txt").as_deref(), Some("one\n"));
    assert_eq!(app.kit.read("b.txt"), None);
    ok(
        &app,
        "restore_checkpoint",
        json!({"id": restored["undo"], "path": "b.txt"}),
    );
    assert_eq!(app.kit.read("b.txt").as_deref(), Some("new\n"));
    assert_eq!(app.kit.read("a.txt").as_deref(), Some("one\n"));

    // One call undone alone: card-2's b.txt goes, a.txt stays as it is.
    let second = list[1]["id"].as_str().unwrap();
    let plan = ok(&app, "call_undo_diff", json!({"id": second}));
    assert_eq!(plan["paths"], json!(["b.txt"]));
    assert_eq!(plan["changed_later"], json!([]));
    assert_eq!(plan["plan"]["changes"][0]["status"], "removed");
    let undone = ok(&app, "undo_call", json!({"id": second}));
    assert_eq!(undone["counts"]["removed"], 1);
    assert_eq!(app.kit.read("b.txt"), None);
    assert_eq!(app.kit.read("a.txt").as_deref(), Some("one\n"));
    ok(&app, "restore_checkpoint", json!({"id": undone["undo"]}));
    assert_eq!(app.kit.read("b.txt").as_deref(), Some("new\n"));

    // The store is in the app's data folder, not in the project.
    assert!(app.kit.data_dir().join("checkpoints").is_dir());
    assert!(!app.kit.root().join("checkpoints").exists());
    let err = app
        .invoke("restore_checkpoint", json!({"id": "nope"}))
        .unwrap_err();
    assert_eq!(err["code"], "not_found");
}

#[test]
fn a_journal_that_cannot_be_finished_is_shown_once() {
    let app = app();
    ok(&app, "open_project", json!({"path": app.kit.root()}));
    ok(
        &app,
        "save_settings",
        json!({"settings": {"provider": "anthropic", "base_url": "https://api.anthropic.com", "model": "m", "max_tokens": 100, "mode": "full_auto"}}),
    );
    assert_eq!(ok(&app, "checkpoint_notice", json!({})), Value::Null);
    ok(
        &app,
        "call_tool",
        json!({"name": "write_file", "input": {"path": "a.txt", "content": "two\n"}}),
    );
    let list = ok(&app, "list_checkpoints", json!({}));
    let first = list[0]["id"].as_str().unwrap().to_string();
    // A killed restore of one path that now leads into `.git`.
    let store = faults::checkpoint_store(&app.kit.data_dir());
    faults::leave_journal(
        &store,
        &json!({"restore": first, "path": ".git/x", "undo": first}),
    );

    let notice = ok(&app, "checkpoint_notice", json!({}));
    let notice = notice.as_str().unwrap();
    assert!(notice.contains("could not be finished"), "{notice}");
    assert!(notice.contains(&first), "{notice}");
    assert!(notice.contains("journal-unfinished-"), "{notice}");
    assert!(!store.join("journal.json").exists());
    assert_eq!(
        ok(&app, "checkpoint_notice", json!({})),
        Value::Null,
        "once"
    );
    assert_eq!(app.kit.read("a.txt").as_deref(), Some("two\n"));
}
