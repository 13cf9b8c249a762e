//! What a grant covers, held by `Approvals`: an argv or a pattern that
//! must cover its own call, a file or a folder judged where it really
//! leads, the very call; only in the conversation it was given in, until
//! revoked or the conversation ends; never a secret-like file. Each is
//! judged on the facts of a call as a ticket keeps them (its input parsed
//! once); `tickets.rs` tests the answers that come with a ticket.

use corral_session::approvals::Approvals;
use corral_session::grants::{CallFacts, Grant, GrantEntry};
use corral_tools::dispatch::{self, CallContext};
use corral_tools::shell::ExecShellInput;
use corral_tools::{Error, ProjectRoot};
use serde_json::{json, Value};

fn root() -> (tempfile::TempDir, ProjectRoot) {
    let dir = tempfile::tempdir().unwrap();
    let root = ProjectRoot::open(dir.path()).unwrap();
    (dir, root)
}

/// `f` of the call's facts as a ticket keeps them: its input parsed once
/// and assessed (an MCP server's tool has none but its name and input).
fn facts_of<R>(
    r: &ProjectRoot,
    tool: &str,
    input: &Value,
    f: impl FnOnce(&CallFacts<'_>) -> R,
) -> R {
    let Ok(registered) = dispatch::tool(tool) else {
        return f(&CallFacts {
            tool,
            input,
            registry: false,
            paths: &[],
            command: None,
            secret: false,
        });
    };
    let parsed = registered.parse(input).unwrap();
    let facts = registered
        .assess_parsed(r, &parsed, &CallContext::default(), false)
        .unwrap();
    let command = parsed
        .get::<ExecShellInput>()
        .map(|c| (c.command.as_str(), c.args.as_slice()));
    f(&CallFacts {
        tool,
        input,
        registry: true,
        paths: &facts.paths,
        command,
        secret: dispatch::asks_every_time(r, &facts),
    })
}

fn covered(
    a: &Approvals,
    r: &ProjectRoot,
    conversation: Option<&str>,
    tool: &str,
    input: &Value,
) -> Option<GrantEntry> {
    facts_of(r, tool, input, |call| a.covering(r, conversation, call))
}

fn give(
    a: &mut Approvals,
    r: &ProjectRoot,
    conversation: &str,
    tool: &str,
    input: &Value,
    given: Grant,
) -> Result<GrantEntry, Error> {
    facts_of(r, tool, input, |call| a.grant(r, conversation, call, given))
}

fn node(code: &str) -> Value {
    json!({"command": "node", "args": ["-e", code]})
}

fn exact(call: &Value) -> Grant {
    let args = call["args"].as_array().unwrap();
    Grant::Command {
        command: call["command"].as_str().unwrap().to_string(),
        args: args
            .iter()
            .map(|a| a.as_str().unwrap().to_string())
            .collect(),
        more: false,
    }
}

fn write(path: &str) -> Value {
    json!({"path": path, "content": "x"})
}

#[test]
fn a_command_grant_covers_its_argv_and_nothing_else() {
    let (_dir, r) = root();
    let mut a = Approvals::default();
    let shown = node("console.log(1)");
    give(&mut a, &r, "c1", "exec_shell", &shown, exact(&shown)).unwrap();
    assert!(covered(&a, &r, Some("c1"), "exec_shell", &shown).is_some());
    // The same program with other code, other or more arguments: asked.
    for other in [
        node("require('fs').rmSync('src',{recursive:true})"),
        json!({"command": "node", "args": ["-e", "console.log(1)", "x"]}),
        json!({"command": "node", "args": ["-e"]}),
        json!({"command": "node", "args": ["tick.js"]}),
        json!({"command": "npm", "args": ["-e", "console.log(1)"]}),
    ] {
        assert!(
            covered(&a, &r, Some("c1"), "exec_shell", &other).is_none(),
            "{other}"
        );
        assert!(covered(&a, &r, Some("c1"), "exec_shell", &other).is_none());
    }
    // The timeout or background do not change what runs.
    let later = json!({"command": "node", "args": ["-e", "console.log(1)"], "timeout_secs": 5});
    assert!(covered(&a, &r, Some("c1"), "exec_shell", &later).is_some());
}

#[test]
fn a_pattern_covers_what_it_shows_and_must_cover_its_own_call() {
    let (_dir, r) = root();
    let mut a = Approvals::default();
    let test = json!({"command": "cargo", "args": ["test", "-p", "a"]});
    let pattern = Grant::Command {
        command: "cargo".into(),
        args: vec!["test".into()],
        more: true,
    };
    give(&mut a, &r, "c1", "exec_shell", &test, pattern).unwrap();
    let other = json!({"command": "cargo", "args": ["test", "--lib"]});
    assert!(covered(&a, &r, Some("c1"), "exec_shell", &other).is_some());
    let run = json!({"command": "cargo", "args": ["run"]});
    assert!(covered(&a, &r, Some("c1"), "exec_shell", &run).is_none());
    // A pattern that does not cover the call it comes with is refused.
    let wrong = Grant::Command {
        command: "cargo".into(),
        args: vec!["build".into()],
        more: true,
    };
    let err = give(&mut a, &r, "c1", "exec_shell", &test, wrong).unwrap_err();
    assert_eq!(err.code, corral_tools::ErrorCode::InvalidInput);
    let empty = Grant::Command {
        command: String::new(),
        args: vec![],
        more: true,
    };
    assert!(give(&mut a, &r, "c1", "exec_shell", &test, empty).is_err());
    // A command grant is for commands only.
    let as_write = Grant::Command {
        command: "x".into(),
        args: vec![],
        more: true,
    };
    assert!(give(&mut a, &r, "c1", "write_file", &write("x"), as_write).is_err());
}

#[test]
fn a_path_grant_covers_that_file_for_that_tool_only() {
    let (dir, r) = root();
    let mut a = Approvals::default();
    let grant = Grant::Path {
        tool: "write_file".into(),
        path: "./notes.txt".into(),
    };
    let entry = give(&mut a, &r, "c1", "write_file", &write("notes.txt"), grant).unwrap();
    assert_eq!(
        entry.grant,
        Grant::Path {
            tool: "write_file".into(),
            path: "notes.txt".into()
        },
        "held as the normalized path"
    );
    let again = json!({"path": "notes.txt", "content": "other"});
    assert!(covered(&a, &r, Some("c1"), "write_file", &again).is_some());
    for other in ["src/greet.js", "notes.txt.bak", "src/notes.txt"] {
        assert!(
            covered(&a, &r, Some("c1"), "write_file", &write(other)).is_none(),
            "{other}"
        );
    }
    let edit = json!({"path": "notes.txt", "old_string": "a", "new_string": "b"});
    assert!(covered(&a, &r, Some("c1"), "edit_file", &edit).is_none());
    assert!(covered(
        &a,
        &r,
        Some("c1"),
        "delete_file",
        &json!({"path": "notes.txt"})
    )
    .is_none());

    // notes.txt swapped for a link to another file: no longer what was granted.
    std::fs::create_dir(dir.path().join("src")).unwrap();
    std::fs::write(dir.path().join("src/greet.js"), "x").unwrap();
    std::os::unix::fs::symlink("src/greet.js", dir.path().join("notes.txt")).unwrap();
    assert!(covered(&a, &r, Some("c1"), "write_file", &again).is_none());

    // A path grant must name the call's own path.
    let elsewhere = Grant::Path {
        tool: "write_file".into(),
        path: "a.txt".into(),
    };
    assert!(give(&mut a, &r, "c1", "write_file", &write("b.txt"), elsewhere).is_err());
    let outside = Grant::Path {
        tool: "write_file".into(),
        path: "../x".into(),
    };
    assert!(give(&mut a, &r, "c1", "write_file", &write("../x"), outside).is_err());
}

#[test]
fn a_folder_grant_covers_what_is_inside_it() {
    let (dir, r) = root();
    std::fs::create_dir_all(dir.path().join("src/lib")).unwrap();
    std::fs::create_dir(dir.path().join("srcs")).unwrap();
    std::os::unix::fs::symlink("..", dir.path().join("src/up")).unwrap();
    let mut a = Approvals::default();
    let grant = Grant::Folder {
        tool: "write_file".into(),
        folder: "src".into(),
    };
    give(
        &mut a,
        &r,
        "c1",
        "write_file",
        &write("src/lib/a.js"),
        grant,
    )
    .unwrap();
    for inside in ["src/a.js", "src/lib/b.js", "src/new/c.js"] {
        assert!(
            covered(&a, &r, Some("c1"), "write_file", &write(inside)).is_some(),
            "{inside}"
        );
    }
    // Beside it, by a look-alike prefix, or out of it through a link: asked.
    for outside in ["srcs/a.js", "a.js", "src/up/a.js", "src/../a.js"] {
        assert!(
            covered(&a, &r, Some("c1"), "write_file", &write(outside)).is_none(),
            "{outside}"
        );
    }
    // The picked folder must hold the call's path.
    let beside = Grant::Folder {
        tool: "write_file".into(),
        folder: "srcs".into(),
    };
    assert!(give(&mut a, &r, "c1", "write_file", &write("src/a.js"), beside).is_err());
}

#[test]
fn grants_belong_to_their_conversation_and_are_listed_revoked_and_ended() {
    let (_dir, r) = root();
    let mut a = Approvals::default();
    let shown = node("console.log(1)");
    let first = give(&mut a, &r, "c1", "exec_shell", &shown, exact(&shown)).unwrap();
    let file = Grant::Path {
        tool: "write_file".into(),
        path: "notes.txt".into(),
    };
    let second = give(&mut a, &r, "c1", "write_file", &write("notes.txt"), file).unwrap();
    // The same grant twice is held once.
    let same = give(&mut a, &r, "c1", "exec_shell", &shown, exact(&shown)).unwrap();
    assert_eq!(same, first);
    assert_eq!(a.grants("c1"), vec![first.clone(), second.clone()]);

    // Another conversation, or none named, has none of them.
    assert!(a.grants("c2").is_empty());
    assert!(covered(&a, &r, Some("c2"), "exec_shell", &shown).is_none());
    assert!(covered(&a, &r, None, "exec_shell", &shown).is_none());
    assert!(covered(&a, &r, Some("c2"), "exec_shell", &shown).is_none());
    assert!(give(&mut a, &r, "", "exec_shell", &shown, exact(&shown)).is_err());

    a.revoke("c1", &first.id);
    assert_eq!(a.grants("c1"), vec![second.clone()]);
    assert!(covered(&a, &r, Some("c1"), "exec_shell", &shown).is_none());
    assert!(covered(&a, &r, Some("c1"), "write_file", &write("notes.txt")).is_some());

    a.end("c1");
    assert!(a.grants("c1").is_empty());
    assert!(covered(&a, &r, Some("c1"), "write_file", &write("notes.txt")).is_none());
}

#[test]
fn a_call_grant_is_that_very_input_and_server_ones_go_with_their_servers() {
    let (_dir, r) = root();
    let mut a = Approvals::default();
    let input = json!({"text": "a"});
    let grant = Grant::Call {
        tool: "srv__echo".into(),
        input: input.clone(),
    };
    give(&mut a, &r, "c1", "srv__echo", &input, grant).unwrap();
    assert!(covered(
        &a,
        &r,
        Some("c1"),
        "srv__echo",
        &json!({"text": "a", "x": null})
    )
    .is_some());
    assert!(covered(&a, &r, Some("c1"), "srv__echo", &json!({"text": "b"})).is_none());
    assert!(covered(&a, &r, Some("c1"), "srv__other", &input).is_none());
    // What was given for a server's tool goes with the servers, whatever
    // its name; a grant of Corral's own tools stays.
    let plain = json!({"note": "n"});
    let unnamed = Grant::Call {
        tool: "plain".into(),
        input: plain.clone(),
    };
    give(&mut a, &r, "c1", "plain", &plain, unnamed).unwrap();
    let listing = json!({"path": "."});
    let own = Grant::Call {
        tool: "list_directory".into(),
        input: listing.clone(),
    };
    let kept = give(&mut a, &r, "c1", "list_directory", &listing, own).unwrap();
    assert_eq!(a.grants("c1").len(), 3);
    a.forget_servers();
    assert_eq!(a.grants("c1"), vec![kept]);
}

#[test]
fn nothing_on_a_secret_is_granted_beyond_the_call() {
    let (dir, r) = root();
    let mut a = Approvals::default();
    let secret = json!({"path": ".env", "content": "KEY=2\n"});
    let grant = Grant::Path {
        tool: "write_file".into(),
        path: ".env".into(),
    };
    assert!(give(&mut a, &r, "c1", "write_file", &secret, grant).is_err());
    let cp = json!({"command": "cp", "args": [".env", "leak.txt"]});
    assert!(give(&mut a, &r, "c1", "exec_shell", &cp, exact(&cp)).is_err());

    // A folder grant does not reach the secrets inside it.
    let all = Grant::Folder {
        tool: "write_file".into(),
        folder: ".".into(),
    };
    give(&mut a, &r, "c1", "write_file", &write("a.txt"), all).unwrap();
    assert!(covered(&a, &r, Some("c1"), "write_file", &write("b.txt")).is_some());
    for path in [
        ".env",
        "config/.env.local",
        "certs/server.pem",
        "keys\\id_rsa",
        "api-token.txt",
    ] {
        assert!(
            covered(&a, &r, Some("c1"), "write_file", &write(path)).is_none(),
            "{path}"
        );
    }
    // Nor a link to one.
    std::fs::write(dir.path().join(".env"), "KEY=1\n").unwrap();
    std::os::unix::fs::symlink(".env", dir.path().join("notes.txt")).unwrap();
    assert!(covered(&a, &r, Some("c1"), "write_file", &write("notes.txt")).is_none());

    // A pattern does not reach a command naming a secret.
    let pattern = Grant::Command {
        command: "cp".into(),
        args: vec![],
        more: true,
    };
    let copy = json!({"command": "cp", "args": ["a", "b"]});
    give(&mut a, &r, "c1", "exec_shell", &copy, pattern).unwrap();
    assert!(covered(&a, &r, Some("c1"), "exec_shell", &cp).is_none());
}

#[test]
fn no_grant_reaches_what_another_program_runs_by_itself() {
    let (dir, r) = root();
    std::fs::create_dir_all(dir.path().join(".vscode")).unwrap();
    std::fs::write(dir.path().join(".vscode/tasks.json"), "{}").unwrap();
    std::os::unix::fs::symlink(".vscode/tasks.json", dir.path().join("tasks.json")).unwrap();
    let mut a = Approvals::default();
    let all = Grant::Folder {
        tool: "write_file".into(),
        folder: ".".into(),
    };
    give(&mut a, &r, "c1", "write_file", &write("a.txt"), all).unwrap();
    assert!(covered(&a, &r, Some("c1"), "write_file", &write("b.txt")).is_some());
    for path in [
        ".claude/commands/deploy.md",
        ".claude/agents/helper.md",
        "pkg/.claude/settings.json",
        ".vscode/tasks.json",
        ".mcp.json",
        "pkg/.cursor/mcp.json",
        ".envrc",
        // a link to one, by where it leads
        "tasks.json",
    ] {
        assert!(
            covered(&a, &r, Some("c1"), "write_file", &write(path)).is_none(),
            "{path}"
        );
    }
    // Nor may one be granted for itself.
    let own = Grant::Path {
        tool: "write_file".into(),
        path: ".mcp.json".into(),
    };
    assert!(give(&mut a, &r, "c1", "write_file", &write(".mcp.json"), own).is_err());
}

#[test]
fn a_folder_that_a_link_leads_elsewhere_is_not_granted() {
    let (dir, r) = root();
    std::fs::create_dir_all(dir.path().join("vendor")).unwrap();
    std::fs::create_dir_all(dir.path().join("src")).unwrap();
    std::os::unix::fs::symlink("..", dir.path().join("vendor/pkg")).unwrap();
    let mut a = Approvals::default();
    let grant = Grant::Folder {
        tool: "write_file".into(),
        folder: "vendor/pkg".into(),
    };
    let err = give(
        &mut a,
        &r,
        "c1",
        "write_file",
        &write("vendor/pkg/src/greet.js"),
        grant,
    )
    .unwrap_err();
    assert!(err.message.contains("through a link"), "{err:?}");
    assert!(covered(
        &a,
        &r,
        Some("c1"),
        "write_file",
        &write("vendor/pkg/src/greet.js")
    )
    .is_none());
    assert!(covered(&a, &r, Some("c1"), "write_file", &write("src/greet.js")).is_none());
}
