//! The project's hooks through `corral-cli exec`: scripts written as
//! Claude Code's docs write them (jq on stdin, exit 2 with stderr, JSON on
//! stdout) block, allow and change calls across several events, and the
//! next request to the scripted server carries what they said. The hooks
//! run in the real sandbox; a project's hooks run only when trusted.

use crate::common::{Home, Scripted};
use serde_json::{json, Value};

fn sandbox() -> bool {
    let there = corral_sandbox::namespaces_available();
    if !there {
        eprintln!("note: no namespaces here; skipping a hook test");
    }
    there
}

/// Writes the project's `.claude/settings.json` with these hooks, each
/// script kept in `.claude/hooks/NAME.sh` and named as the docs name them.
fn project_hooks(home: &Home, hooks: Value, scripts: &[(&str, &str)]) {
    let folder = home.project().join(".claude/hooks");
    std::fs::create_dir_all(&folder).unwrap();
    for (name, body) in scripts {
        std::fs::write(
            folder.join(format!("{name}.sh")),
            format!("#!/bin/sh\n{body}\n"),
        )
        .unwrap();
    }
    let settings = json!({ "hooks": hooks });
    std::fs::write(
        home.project().join(".claude/settings.json"),
        serde_json::to_string_pretty(&settings).unwrap(),
    )
    .unwrap();
}

fn command(name: &str) -> Value {
    json!([{ "type": "command", "command": format!("sh \"$CLAUDE_PROJECT_DIR\"/.claude/hooks/{name}.sh") }])
}

/// Refuses `rm`, as the docs' command validator does: reason on stderr, exit 2.
const NO_RM: &str = r#"cmd=$(jq -r '.tool_input.command')
case "$cmd" in rm*) echo "Do not delete files here: $cmd" >&2; exit 2;; esac
exit 0"#;

/// Adds context to every prompt: plain stdout, exit 0.
const PROMPT_CONTEXT: &str =
    r#"echo "The ticket tracker is at tracker.example; today's focus is billing.""#;

/// After each read, JSON with `additionalContext`.
const AFTER_READ: &str = r#"file=$(jq -r '.tool_input.file_path')
jq -n --arg f "$file" '{hookSpecificOutput: {hookEventName: "PostToolUse", additionalContext: ("Remember that " + $f + " is generated.")}}'"#;

#[test]
fn hooks_block_a_command_and_add_context_to_the_prompt_and_a_result() {
    if !sandbox() {
        return;
    }
    let server = Scripted::start(json!([
        { "tools": [{ "name": "exec_shell", "input": { "command": "rm", "args": ["a.txt"] } }] },
        { "tools": [{ "name": "read_file", "input": { "path": "a.txt" } }] },
        { "text": "It stays." },
    ]));
    let home = Home::new(&server.base_url());
    project_hooks(
        &home,
        json!({
            "PreToolUse": [{ "matcher": "Bash", "hooks": command("no-rm") }],
            "UserPromptSubmit": [{ "hooks": command("context") }],
            "PostToolUse": [{ "matcher": "Read", "hooks": command("after-read") }],
        }),
        &[
            ("no-rm", NO_RM),
            ("context", PROMPT_CONTEXT),
            ("after-read", AFTER_READ),
        ],
    );
    let run = home.exec(&[
        "--json",
        "--mode",
        "full_auto",
        "--trust-project-hooks",
        "Remove a.txt",
    ]);
    let requests = server.finish();
    assert_eq!(run.code, 0, "{}", run.stderr);
    // The prompt went with the hook's context.
    let first = requests[0]["messages"].to_string();
    assert!(first.contains("Remove a.txt"), "{first}");
    assert!(first.contains("today's focus is billing"), "{first}");
    // The command was refused, with the hook's stderr as the model's result.
    assert!(home.project().join("a.txt").exists());
    let second = requests[1]["messages"].to_string();
    assert!(
        second.contains("Do not delete files here: rm a.txt"),
        "{second}"
    );
    let events = run.events();
    let refused = events
        .iter()
        .find(|e| e["type"] == "tool_result" && e["name"] == "exec_shell")
        .unwrap();
    assert_eq!(refused["status"], "denied", "{refused}");
    // The read ran, and the PostToolUse context came with its result.
    let third = requests[2]["messages"].to_string();
    assert!(third.contains("hello from a.txt"), "{third}");
    let file = home.project().join("a.txt").display().to_string();
    assert!(
        third.contains(&format!("Remember that {file} is generated.")),
        "{third}"
    );
}

/// Approves every write, and moves a note under `drafts/`, by Claude's fields.
const MOVE_NOTES: &str = r#"input=$(cat)
file=$(printf '%s' "$input" | jq -r '.tool_input.file_path')
case "$file" in
  *.md) ;;
  *) echo '{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow"}}'; exit 0;;
esac
name=$(basename "$file")
printf '%s' "$input" | jq --arg f "$CLAUDE_PROJECT_DIR/drafts/$name" '{hookSpecificOutput: {hookEventName: "PreToolUse", permissionDecision: "allow", permissionDecisionReason: "drafts are fine", updatedInput: (.tool_input + {file_path: $f})}}'"#;

#[test]
fn a_hook_allows_a_write_in_ask_mode_and_moves_it_but_never_answers_for_the_agents_config() {
    if !sandbox() {
        return;
    }
    let server = Scripted::start(json!([
        { "tools": [{ "name": "write_file", "input": { "path": "notes.md", "content": "draft\n" } }] },
        { "tools": [{ "name": "write_file", "input": { "path": ".claude/settings.local.json", "content": "{}" } }] },
    ]));
    let home = Home::new(&server.base_url());
    project_hooks(
        &home,
        json!({ "PreToolUse": [{ "matcher": "Write", "hooks": command("move") }] }),
        &[("move", MOVE_NOTES)],
    );
    // No terminal: a call that asks stops the run (exit 3).
    let run = home.exec(&[
        "--json",
        "--mode",
        "ask",
        "--trust-project-hooks",
        "Write notes",
    ]);
    let requests = server.finish();
    // The first write ran without asking, where the hook moved it.
    assert_eq!(
        std::fs::read_to_string(home.project().join("drafts/notes.md")).unwrap(),
        "draft\n"
    );
    assert!(!home.project().join("notes.md").exists());
    let events = run.events();
    let call = |n: usize| {
        events
            .iter()
            .filter(|e| e["type"] == "tool_result")
            .nth(n)
            .cloned()
            .unwrap()
    };
    assert_eq!(call(0)["status"], "done", "{}", run.stdout);
    assert!(requests[1]["messages"]
        .to_string()
        .contains("drafts/notes.md"));
    // The second one is in the agent's configuration: the hook's allow
    // does not answer for the user, so it asked, and no one could answer.
    assert_eq!(run.code, 3, "{}", run.stderr);
    assert!(events
        .iter()
        .any(|e| e["type"] == "approval_asked" && e["name"] == "write_file"));
    assert!(!home.project().join(".claude/settings.local.json").exists());
}

/// Keeps the agent going once: `decision: block` unless a Stop hook already did.
const NOT_DONE: &str = r#"active=$(jq -r '.stop_hook_active')
if [ "$active" = "true" ]; then exit 0; fi
echo '{"decision": "block", "reason": "Run the tests before you stop."}'"#;

/// Refuses every call, to show what does not run when untrusted.
const DENY_ALL: &str = r#"echo '{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": "nothing today"}}'"#;

#[test]
fn a_stop_hook_keeps_the_turn_going_and_untrusted_hooks_do_not_run() {
    if !sandbox() {
        return;
    }
    let hooks = json!({
        "Stop": [{ "hooks": command("not-done") }],
        "PreToolUse": [{ "hooks": command("deny-all") }],
    });
    let scripts = [("not-done", NOT_DONE), ("deny-all", DENY_ALL)];

    // Trusted: the Stop hook sends the model back to work once.
    let server = Scripted::start(json!([{ "text": "Done." }, { "text": "Tests pass. Done." }]));
    let home = Home::new(&server.base_url());
    project_hooks(&home, hooks.clone(), &scripts);
    let run = home.exec(&["--trust-project-hooks", "Fix it"]);
    let requests = server.finish();
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stdout, "Tests pass. Done.\n");
    assert!(requests[1]["messages"]
        .to_string()
        .contains("Run the tests before you stop."));

    // Not trusted (no flag, and never trusted in the window): neither hook runs.
    let server = Scripted::start(json!([
        { "tools": [{ "name": "read_file", "input": { "path": "a.txt" } }] },
        { "text": "Read it." },
    ]));
    let home = Home::new(&server.base_url());
    project_hooks(&home, hooks, &scripts);
    let run = home.exec(&["--json", "Read a.txt"]);
    let requests = server.finish();
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(requests.len(), 2);
    let second = requests[1]["messages"].to_string();
    assert!(second.contains("hello from a.txt"), "{second}");
    assert!(!second.contains("nothing today"), "{second}");
}
