//! Every command of the table is answered by `ProjectCommands` over a real
//! session, and nothing else is: a name it answers but the table lacks
//! would be a command no host lists.

#![allow(clippy::unwrap_used, clippy::disallowed_methods)]

use corral_host::{ProjectCommands, COMMANDS};
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
    for command in COMMANDS {
        // Arguments that do not fit are an answer too (`invalid_input`):
        // only an unknown name is not.
        if let Err(e) = invoke(&commands, command.name, json!({})) {
            assert!(
                !e.message.contains(UNKNOWN),
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
    }
    assert!(seen.contains("run_call") && seen.contains("checkpoint_notice"));
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
