//! Every command of the table is answered by what it says serves it
//! (`ProjectCommands` over a real session, `ModelCommands` over a real
//! history and settings store), and nothing else is: a name they answer
//! but the table lacks would be a command no host lists.

#![allow(clippy::unwrap_used, clippy::disallowed_methods)]

use corral_host::{Model, ModelCommands, ProjectCommands, Serves, COMMANDS};
use corral_session::{Fixed, Options, Session};
use corral_tools::ErrorCode;
use serde_json::{json, Value};
use std::sync::Arc;

/// The message `invoke` answers a name it does not know with.
const UNKNOWN: &str = "is not a command of the project's session";

fn commands(project: &std::path::Path) -> ProjectCommands {
    let session = Session::open(project, Arc::new(Fixed::default()), Options::default()).unwrap();
    ProjectCommands::new(Arc::new(session), Arc::default())
}

/// The model's and the history's commands over a store and a history in
/// `data`, for `project`.
fn model_commands(data: &std::path::Path, project: Option<&str>) -> ModelCommands {
    let store = corral_config::Store::without_keychain(data.join("config"), data.join("data"));
    ModelCommands {
        model: Arc::new(Model { store, fixed: None }),
        history: Arc::new(corral_history::History::new(&data.join("data"))),
        project: project.map(str::to_string),
        runs: Arc::default(),
        new_id: None,
    }
}

/// No stream's events are wanted.
const NO_EVENTS: Option<&dyn Fn(Value)> = None;

fn block_on<T>(future: impl std::future::Future<Output = T>) -> T {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(future)
}

/// Runs `invoke` on a runtime of its own.
fn invoke(
    commands: &ProjectCommands,
    name: &str,
    args: Value,
) -> Result<Value, corral_tools::Error> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(commands.invoke(name, args, None))
}

#[test]
fn every_command_of_the_table_is_answered() {
    let project = tempfile::tempdir().unwrap();
    std::fs::write(project.path().join("a.txt"), "alpha\n").unwrap();
    let commands = commands(project.path());
    let data = tempfile::tempdir().unwrap();
    let model = model_commands(data.path(), Some("/p"));
    for command in COMMANDS {
        // Arguments that do not fit are an answer too (`invalid_input`):
        // only an unknown name is not.
        let answer = match command.serves {
            Serves::Session => invoke(&commands, command.name, json!({})),
            // Not a stream: no server listens here.
            Serves::Model if command.name == "llm_stream" => continue,
            Serves::Model => block_on(model.invoke(command.name, json!({}), NO_EVENTS)),
            Serves::Window => panic!("{} is the window's own", command.name),
        };
        if let Err(e) = answer {
            assert!(
                !e.message.contains("is not a command"),
                "{} is in the table but not answered: {}",
                command.name,
                e.message
            );
        }
    }
}

#[test]
fn a_name_outside_the_table_is_not_answered() {
    let project = tempfile::tempdir().unwrap();
    let commands = commands(project.path());
    for name in [
        "use_settings",
        "domain_questions",
        "open_project",
        "llm_stream",
    ] {
        let e = invoke(&commands, name, json!({})).unwrap_err();
        assert_eq!(e.code, ErrorCode::NotFound, "{name}");
        assert!(e.message.contains(UNKNOWN), "{name}: {}", e.message);
    }
}

#[test]
fn the_table_lists_each_command_once_with_a_section() {
    let mut seen = std::collections::BTreeSet::new();
    for command in COMMANDS {
        assert!(seen.insert(command.name), "{} twice", command.name);
        assert!(!command.section.is_empty());
        assert_ne!(command.serves, Serves::Window, "{}", command.name);
    }
    assert!(seen.contains("run_call") && seen.contains("checkpoint_notice"));
    assert!(seen.contains("llm_stream") && seen.contains("append_entry"));
}

/// What the session answers is not the model's, nor the other way round.
#[test]
fn each_part_answers_only_its_own() {
    let project = tempfile::tempdir().unwrap();
    let commands = commands(project.path());
    let data = tempfile::tempdir().unwrap();
    let model = model_commands(data.path(), Some("/p"));
    for command in COMMANDS {
        let e = match command.serves {
            Serves::Session => {
                block_on(model.invoke(command.name, json!({}), NO_EVENTS)).unwrap_err()
            }
            Serves::Model => invoke(&commands, command.name, json!({})).unwrap_err(),
            Serves::Window => panic!("{} is the window's own", command.name),
        };
        assert_eq!(
            e.code,
            ErrorCode::NotFound,
            "{}: {}",
            command.name,
            e.message
        );
    }
}

/// An entry appended is in the conversation opened after; without a
/// project neither is possible.
#[test]
fn the_history_commands_keep_the_conversation() {
    let data = tempfile::tempdir().unwrap();
    let model = model_commands(data.path(), Some("/work/p"));
    let entry = json!({ "items": [{ "kind": "note", "text": "hello there" }] });
    let appended =
        block_on(model.invoke("append_entry", json!({ "entry": entry }), NO_EVENTS)).unwrap();
    let id = appended["conversation"].as_str().unwrap().to_string();
    let opened =
        block_on(model.invoke("open_conversation", json!({ "id": id }), NO_EVENTS)).unwrap();
    assert!(opened.to_string().contains("hello there"), "{opened}");

    let none = model_commands(data.path(), None);
    let e = block_on(none.invoke("open_conversation", json!({ "id": id }), NO_EVENTS)).unwrap_err();
    assert_eq!(e.code, ErrorCode::NoProjectOpen);
}

#[test]
fn a_read_answers_the_same_as_the_tool_runs_it() {
    let project = tempfile::tempdir().unwrap();
    std::fs::write(project.path().join("a.txt"), "alpha\n").unwrap();
    let commands = commands(project.path());
    let read = invoke(
        &commands,
        "call_tool",
        json!({ "name": "read_file", "input": { "path": "a.txt" } }),
    )
    .unwrap();
    assert!(read.to_string().contains("alpha"), "{read}");
}
