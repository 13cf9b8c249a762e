#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::disallowed_methods
)]
//! Hooks run for real: shell scripts in a temp project, in the sandbox,
//! written the way Claude Code's docs write them (jq on stdin, exit 2,
//! JSON on stdout), restated in our own words.

use corral_fs::ProjectRoot;
use corral_hooks::{run_event, Event, EventInput, HookSet, Source, Verdict};
use serde_json::{json, Value};
use std::time::{Duration, Instant};

fn sandbox() -> bool {
    let there = corral_sandbox::namespaces_available();
    if !there {
        eprintln!("note: no namespaces here; skipping a hook test");
    }
    there
}

struct Project {
    dir: tempfile::TempDir,
    root: ProjectRoot,
}

fn project() -> Project {
    let dir = tempfile::tempdir().unwrap();
    let root = ProjectRoot::open(dir.path()).unwrap();
    Project { dir, root }
}

/// A set of one hook for `event`.
fn hooks(event: &str, matcher: &str, command: &str, timeout: u64) -> HookSet {
    let mut set = HookSet::default();
    let settings = json!({"hooks": {event: [{"matcher": matcher, "hooks": [
        {"type": "command", "command": command, "timeout": timeout}]}]}});
    set.add_text(&settings.to_string(), Source::User, "test");
    assert!(set.problems.is_empty(), "{:?}", set.problems);
    set
}

fn tool_call(tool: &str, input: Value) -> EventInput {
    EventInput {
        session_id: "s1".into(),
        tool_name: Some(tool.into()),
        tool_input: Some(input),
        ..EventInput::default()
    }
}

/// Refuses `rm`, as the docs' command validator refuses commands it
/// does not like: reason on stderr, exit 2.
const NO_RM: &str = r#"cmd=$(jq -r '.tool_input.command'); case "$cmd" in rm*) echo "rm is not allowed here: $cmd" >&2; exit 2;; esac; exit 0"#;

#[test]
fn a_hook_blocks_a_command_with_exit_2_and_its_stderr_is_the_reason() {
    if !sandbox() {
        return;
    }
    let p = project();
    let set = hooks("PreToolUse", "Bash", NO_RM, 30);
    let rm = tool_call(
        "exec_shell",
        json!({"command": "rm", "args": ["-rf", "src"]}),
    );
    let out = run_event(&p.root, &set, Event::PreToolUse, &rm);
    assert_eq!(out.verdict, Verdict::Deny, "{out:?}");
    assert_eq!(
        out.block.as_deref(),
        Some("rm is not allowed here: rm -rf src")
    );
    let ls = tool_call("exec_shell", json!({"command": "ls", "args": []}));
    let out = run_event(&p.root, &set, Event::PreToolUse, &ls);
    assert_eq!((out.verdict, out.block), (Verdict::None, None));
    assert_eq!(out.runs.len(), 1);
    // Not a Bash call: the hook does not run.
    let read = tool_call("read_file", json!({"path": "a.txt"}));
    assert!(run_event(&p.root, &set, Event::PreToolUse, &read)
        .runs
        .is_empty());
}

#[test]
fn a_hook_allows_and_changes_a_call_with_json() {
    if !sandbox() {
        return;
    }
    let p = project();
    // Sees Claude's fields (file_path), answers allow with the path moved.
    let script = r#"f=$(jq -r '.tool_input.file_path'); jq -n --arg f "${f%.txt}.md" '{hookSpecificOutput: {hookEventName: "PreToolUse", permissionDecision: "allow", permissionDecisionReason: "docs are markdown", updatedInput: {file_path: $f, content: "changed"}}}'"#;
    let set = hooks("PreToolUse", "Write|Edit", script, 30);
    let call = tool_call("write_file", json!({"path": "docs/a.txt", "content": "x"}));
    let out = run_event(&p.root, &set, Event::PreToolUse, &call);
    assert_eq!(out.verdict, Verdict::Allow, "{out:?}");
    assert_eq!(out.reason.as_deref(), Some("docs are markdown"));
    assert_eq!(
        out.updated_input,
        Some(json!({"path": "docs/a.md", "content": "changed"}))
    );
    // The same hook by Corral's own name.
    let set = hooks("PreToolUse", "write_file", script, 30);
    let out = run_event(&p.root, &set, Event::PreToolUse, &call);
    assert_eq!(out.verdict, Verdict::Allow, "{out:?}");
}

#[test]
fn the_hook_sees_claudes_stdin() {
    if !sandbox() {
        return;
    }
    let p = project();
    let set = hooks(
        "PreToolUse",
        "",
        "cat > \"$CLAUDE_PROJECT_DIR/seen.json\"",
        30,
    );
    let call = tool_call(
        "exec_shell",
        json!({"command": "git", "args": ["status", "--short"]}),
    );
    let out = run_event(&p.root, &set, Event::PreToolUse, &call);
    assert!(out.notices.is_empty(), "{out:?}");
    let seen: Value =
        serde_json::from_str(&std::fs::read_to_string(p.dir.path().join("seen.json")).unwrap())
            .unwrap();
    assert_eq!(seen["hook_event_name"], "PreToolUse");
    assert_eq!(seen["tool_name"], "Bash");
    assert_eq!(seen["tool_input"]["command"], "git status --short");
    assert_eq!(seen["session_id"], "s1");
    assert_eq!(seen["cwd"], p.root.path().to_str().unwrap());
}

#[test]
fn prompt_stop_and_post_tool_events_say_their_part() {
    if !sandbox() {
        return;
    }
    let p = project();
    let set = hooks(
        "UserPromptSubmit",
        "",
        r#"echo "The build uses $(jq -r .prompt | wc -w) words""#,
        30,
    );
    let prompt = EventInput {
        prompt: Some("fix the bug".into()),
        ..EventInput::default()
    };
    let out = run_event(&p.root, &set, Event::UserPromptSubmit, &prompt);
    assert_eq!(
        out.additional_context,
        ["The build uses 3 words"],
        "{out:?}"
    );

    let set = hooks(
        "Stop",
        "",
        r#"echo '{"decision": "block", "reason": "run the tests first"}'"#,
        30,
    );
    let out = run_event(&p.root, &set, Event::Stop, &EventInput::default());
    assert_eq!(out.block.as_deref(), Some("run the tests first"));

    let set = hooks(
        "PostToolUse",
        "Edit",
        r#"jq -e '.tool_response.ok' >/dev/null || { echo 'the edit failed' >&2; exit 2; }"#,
        30,
    );
    let mut edit = tool_call("edit_file", json!({"path": "a.rs"}));
    edit.tool_response = Some(json!({"ok": false}));
    let out = run_event(&p.root, &set, Event::PostToolUse, &edit);
    assert_eq!(out.block.as_deref(), Some("the edit failed"), "{out:?}");
    assert_eq!(out.verdict, Verdict::None);

    let set = hooks(
        "SessionStart",
        "",
        r#"echo '{"continue": false, "stopReason": "not today"}'"#,
        30,
    );
    let out = run_event(&p.root, &set, Event::SessionStart, &EventInput::default());
    assert_eq!(out.stop.as_deref(), Some("not today"));
}

#[test]
fn a_hook_past_its_time_is_stopped_and_the_call_goes_on() {
    if !sandbox() {
        return;
    }
    let p = project();
    let set = hooks("PreCompact", "", "sleep 30; exit 2", 1);
    let started = Instant::now();
    let out = run_event(&p.root, &set, Event::PreCompact, &EventInput::default());
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    assert!(out.runs[0].timed_out);
    assert_eq!(out.block, None);
    assert!(out.notices[0].contains("ran out of time"), "{out:?}");
}

#[test]
fn a_hook_is_fenced_by_the_sandbox() {
    if !sandbox() {
        return;
    }
    let p = project();
    let outside = tempfile::tempdir().unwrap();
    let escape = outside.path().join("escaped");
    let plant = format!(
        "mkdir -p .claude && echo '{{}}' > .claude/settings.json; echo x > {}; echo x > inside; exit 1",
        escape.display()
    );
    let set = hooks("Stop", "", &plant, 30);
    let out = run_event(&p.root, &set, Event::Stop, &EventInput::default());
    assert!(out.notices[0].contains("failed (code 1)"), "{out:?}");
    assert!(!p.dir.path().join(".claude/settings.json").exists());
    assert!(!escape.exists());
    assert!(p.dir.path().join("inside").exists(), "{out:?}");
}
