//! What a grant covers, held by `Approvals`: an argv or a pattern that
//! must cover its own call, a file or a folder judged where it really
//! leads, the very call; only in the conversation it was given in, until
//! revoked or the conversation ends; never a secret-like file. Once tokens
//! are single-use and bound to their input; only one given with the
//! network carries it.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods)]

use corral_session::approvals::Approvals;
use corral_session::grants::Grant;
use corral_tools::policy::Approval;
use corral_tools::ProjectRoot;
use serde_json::{json, Value};

fn root() -> (tempfile::TempDir, ProjectRoot) {
    let dir = tempfile::tempdir().unwrap();
    let root = ProjectRoot::open(dir.path()).unwrap();
    (dir, root)
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
fn once_tokens_are_single_use_and_bound_to_the_input() {
    let (_dir, r) = root();
    let mut a = Approvals::default();
    let input = json!({"path": "a.txt", "content": "x"});
    let token = a.approve("write_file", &input, false);
    let other = json!({"path": "b.txt", "content": "x"});
    assert_eq!(
        a.take(&r, None, "write_file", &other, Some(&token)),
        Approval::None
    );
    assert_eq!(
        a.take(&r, None, "delete_file", &input, Some(&token)),
        Approval::None
    );
    let with_null = json!({"path": "a.txt", "content": "x", "extra": null});
    assert_eq!(
        a.take(&r, None, "write_file", &with_null, Some(&token)),
        Approval::Granted
    );
    assert_eq!(
        a.take(&r, None, "write_file", &input, Some(&token)),
        Approval::None
    );
    assert_eq!(
        a.take(&r, None, "write_file", &input, Some("forged")),
        Approval::None
    );
}

#[test]
fn a_command_grant_covers_its_argv_and_nothing_else() {
    let (_dir, r) = root();
    let mut a = Approvals::default();
    let shown = node("console.log(1)");
    a.grant(&r, "c1", "exec_shell", &shown, exact(&shown))
        .unwrap();
    assert!(a.covering(&r, Some("c1"), "exec_shell", &shown).is_some());
    // The same program with other code, other or more arguments: asked.
    for other in [
        node("require('fs').rmSync('src',{recursive:true})"),
        json!({"command": "node", "args": ["-e", "console.log(1)", "x"]}),
        json!({"command": "node", "args": ["-e"]}),
        json!({"command": "node", "args": ["tick.js"]}),
        json!({"command": "npm", "args": ["-e", "console.log(1)"]}),
    ] {
        assert!(
            a.covering(&r, Some("c1"), "exec_shell", &other).is_none(),
            "{other}"
        );
        assert_eq!(
            a.take(&r, Some("c1"), "exec_shell", &other, None),
            Approval::None
        );
    }
    // The timeout or background do not change what runs.
    let later = json!({"command": "node", "args": ["-e", "console.log(1)"], "timeout_secs": 5});
    assert_eq!(
        a.take(&r, Some("c1"), "exec_shell", &later, None),
        Approval::Granted
    );
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
    a.grant(&r, "c1", "exec_shell", &test, pattern).unwrap();
    let other = json!({"command": "cargo", "args": ["test", "--lib"]});
    assert!(a.covering(&r, Some("c1"), "exec_shell", &other).is_some());
    let run = json!({"command": "cargo", "args": ["run"]});
    assert!(a.covering(&r, Some("c1"), "exec_shell", &run).is_none());
    // A pattern that does not cover the call it comes with is refused.
    let wrong = Grant::Command {
        command: "cargo".into(),
        args: vec!["build".into()],
        more: true,
    };
    let err = a.grant(&r, "c1", "exec_shell", &test, wrong).unwrap_err();
    assert_eq!(err.code, corral_tools::ErrorCode::InvalidInput);
    let empty = Grant::Command {
        command: String::new(),
        args: vec![],
        more: true,
    };
    assert!(a.grant(&r, "c1", "exec_shell", &test, empty).is_err());
    // A command grant is for commands only.
    let as_write = Grant::Command {
        command: "x".into(),
        args: vec![],
        more: true,
    };
    assert!(a
        .grant(&r, "c1", "write_file", &write("x"), as_write)
        .is_err());
}

#[test]
fn a_path_grant_covers_that_file_for_that_tool_only() {
    let (dir, r) = root();
    let mut a = Approvals::default();
    let grant = Grant::Path {
        tool: "write_file".into(),
        path: "./notes.txt".into(),
    };
    let entry = a
        .grant(&r, "c1", "write_file", &write("notes.txt"), grant)
        .unwrap();
    assert_eq!(
        entry.grant,
        Grant::Path {
            tool: "write_file".into(),
            path: "notes.txt".into()
        },
        "held as the normalized path"
    );
    let again = json!({"path": "notes.txt", "content": "other"});
    assert!(a.covering(&r, Some("c1"), "write_file", &again).is_some());
    for other in ["src/greet.js", "notes.txt.bak", "src/notes.txt"] {
        assert!(
            a.covering(&r, Some("c1"), "write_file", &write(other))
                .is_none(),
            "{other}"
        );
    }
    let edit = json!({"path": "notes.txt", "old_string": "a", "new_string": "b"});
    assert!(a.covering(&r, Some("c1"), "edit_file", &edit).is_none());
    assert!(a
        .covering(&r, Some("c1"), "delete_file", &json!({"path": "notes.txt"}))
        .is_none());

    // notes.txt swapped for a link to another file: no longer what was granted.
    std::fs::create_dir(dir.path().join("src")).unwrap();
    std::fs::write(dir.path().join("src/greet.js"), "x").unwrap();
    std::os::unix::fs::symlink("src/greet.js", dir.path().join("notes.txt")).unwrap();
    assert!(a.covering(&r, Some("c1"), "write_file", &again).is_none());

    // A path grant must name the call's own path.
    let elsewhere = Grant::Path {
        tool: "write_file".into(),
        path: "a.txt".into(),
    };
    assert!(a
        .grant(&r, "c1", "write_file", &write("b.txt"), elsewhere)
        .is_err());
    let outside = Grant::Path {
        tool: "write_file".into(),
        path: "../x".into(),
    };
    assert!(a
        .grant(&r, "c1", "write_file", &write("../x"), outside)
        .is_err());
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
    a.grant(&r, "c1", "write_file", &write("src/lib/a.js"), grant)
        .unwrap();
    for inside in ["src/a.js", "src/lib/b.js", "src/new/c.js"] {
        assert!(
            a.covering(&r, Some("c1"), "write_file", &write(inside))
                .is_some(),
            "{inside}"
        );
    }
    // Beside it, by a look-alike prefix, or out of it through a link: asked.
    for outside in ["srcs/a.js", "a.js", "src/up/a.js", "src/../a.js"] {
        assert!(
            a.covering(&r, Some("c1"), "write_file", &write(outside))
                .is_none(),
            "{outside}"
        );
    }
    // The picked folder must hold the call's path.
    let beside = Grant::Folder {
        tool: "write_file".into(),
        folder: "srcs".into(),
    };
    assert!(a
        .grant(&r, "c1", "write_file", &write("src/a.js"), beside)
        .is_err());
}

#[test]
fn grants_belong_to_their_conversation_and_are_listed_revoked_and_ended() {
    let (_dir, r) = root();
    let mut a = Approvals::default();
    let shown = node("console.log(1)");
    let first = a
        .grant(&r, "c1", "exec_shell", &shown, exact(&shown))
        .unwrap();
    let file = Grant::Path {
        tool: "write_file".into(),
        path: "notes.txt".into(),
    };
    let second = a
        .grant(&r, "c1", "write_file", &write("notes.txt"), file)
        .unwrap();
    // The same grant twice is held once.
    let same = a
        .grant(&r, "c1", "exec_shell", &shown, exact(&shown))
        .unwrap();
    assert_eq!(same, first);
    assert_eq!(a.grants("c1"), vec![first.clone(), second.clone()]);

    // Another conversation, or none named, has none of them.
    assert!(a.grants("c2").is_empty());
    assert!(a.covering(&r, Some("c2"), "exec_shell", &shown).is_none());
    assert!(a.covering(&r, None, "exec_shell", &shown).is_none());
    assert_eq!(
        a.take(&r, Some("c2"), "exec_shell", &shown, None),
        Approval::None
    );
    assert!(a
        .grant(&r, "", "exec_shell", &shown, exact(&shown))
        .is_err());

    a.revoke("c1", &first.id);
    assert_eq!(a.grants("c1"), vec![second.clone()]);
    assert_eq!(
        a.take(&r, Some("c1"), "exec_shell", &shown, None),
        Approval::None
    );
    assert!(a
        .covering(&r, Some("c1"), "write_file", &write("notes.txt"))
        .is_some());

    a.end("c1");
    assert!(a.grants("c1").is_empty());
    assert!(a
        .covering(&r, Some("c1"), "write_file", &write("notes.txt"))
        .is_none());
}

#[test]
fn a_call_grant_is_that_very_input_and_mcp_ones_go_with_their_servers() {
    let (_dir, r) = root();
    let mut a = Approvals::default();
    let input = json!({"text": "a"});
    let grant = Grant::Call {
        tool: "srv__echo".into(),
        input: input.clone(),
    };
    a.grant(&r, "c1", "srv__echo", &input, grant).unwrap();
    assert!(a
        .covering(
            &r,
            Some("c1"),
            "srv__echo",
            &json!({"text": "a", "x": null})
        )
        .is_some());
    assert!(a
        .covering(&r, Some("c1"), "srv__echo", &json!({"text": "b"}))
        .is_none());
    assert!(a.covering(&r, Some("c1"), "srv__other", &input).is_none());
    a.forget_mcp();
    assert!(a.grants("c1").is_empty());
}

#[test]
fn only_a_once_token_given_with_network_carries_it() {
    let (_dir, r) = root();
    let mut a = Approvals::default();
    let call = json!({"command": "npm", "args": ["ci"]});
    let token = a.approve("exec_shell", &call, true);
    assert_eq!(
        a.take_grant(&r, None, "exec_shell", &call, Some(&token)),
        (Approval::Granted, true)
    );
    a.grant(&r, "c1", "exec_shell", &call, exact(&call))
        .unwrap();
    // The grant covers the command, without the network.
    assert_eq!(
        a.take_grant(&r, Some("c1"), "exec_shell", &call, None),
        (Approval::Granted, false)
    );
    let token = a.approve("exec_shell", &call, false);
    assert_eq!(
        a.take_grant(&r, None, "exec_shell", &call, Some(&token)),
        (Approval::Granted, false)
    );
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
    assert!(a.grant(&r, "c1", "write_file", &secret, grant).is_err());
    let cp = json!({"command": "cp", "args": [".env", "leak.txt"]});
    assert!(a.grant(&r, "c1", "exec_shell", &cp, exact(&cp)).is_err());

    // A folder grant does not reach the secrets inside it.
    let all = Grant::Folder {
        tool: "write_file".into(),
        folder: ".".into(),
    };
    a.grant(&r, "c1", "write_file", &write("a.txt"), all)
        .unwrap();
    assert!(a
        .covering(&r, Some("c1"), "write_file", &write("b.txt"))
        .is_some());
    for path in [
        ".env",
        "config/.env.local",
        "certs/server.pem",
        "keys\\id_rsa",
        "api-token.txt",
    ] {
        assert!(
            a.covering(&r, Some("c1"), "write_file", &write(path))
                .is_none(),
            "{path}"
        );
    }
    // Nor a link to one.
    std::fs::write(dir.path().join(".env"), "KEY=1\n").unwrap();
    std::os::unix::fs::symlink(".env", dir.path().join("notes.txt")).unwrap();
    assert!(a
        .covering(&r, Some("c1"), "write_file", &write("notes.txt"))
        .is_none());

    // A pattern does not reach a command naming a secret.
    let pattern = Grant::Command {
        command: "cp".into(),
        args: vec![],
        more: true,
    };
    let copy = json!({"command": "cp", "args": ["a", "b"]});
    a.grant(&r, "c1", "exec_shell", &copy, pattern).unwrap();
    assert!(a.covering(&r, Some("c1"), "exec_shell", &cp).is_none());

    // A once token for exactly that secret-like call still works, once.
    let token = a.approve("write_file", &secret, false);
    assert_eq!(
        a.take(&r, None, "write_file", &secret, Some(&token)),
        Approval::Granted
    );
    assert_eq!(
        a.take(&r, None, "write_file", &secret, Some(&token)),
        Approval::None
    );
}
