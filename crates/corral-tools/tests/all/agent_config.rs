//! The project's agent configuration (`.claude/`, `.codex/`): the file
//! tools change it only with an approval that names it, in every mode,
//! whether the file exists or not, and also through a link. (Commands are
//! held by the sandbox: corral-sandbox's `agent_config.rs`.)

use crate::common::Project;
use corral_tools::dispatch::{call, CallContext};
use corral_tools::policy::{Approval, Mode};
use serde_json::{json, Value};
use std::os::unix::fs::symlink;

fn refused(p: &Project, tool: &str, input: Value) -> String {
    let full = CallContext::new(Mode::FullAuto, Approval::None);
    let err = call(&p.root, tool, input.clone(), &full).unwrap_err();
    assert_eq!(
        err.code.as_str(),
        "approval_required",
        "{tool} {input}: {err:?}"
    );
    let reason = err.details["reason"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(reason.contains("agent configuration"), "{reason}");
    reason
}

#[test]
fn full_auto_asks_before_creating_an_absent_settings_file() {
    let p = Project::new();
    let input = json!({"path": ".claude/settings.json", "content": "{\"hooks\":{}}"});
    let reason = refused(&p, "write_file", input.clone());
    assert!(reason.contains(".claude/settings.json"), "{reason}");
    assert!(!p.path(".claude").exists());
    for path in [
        ".claude/settings.local.json",
        ".claude/commands/review.md",
        ".claude/skills/pdf/SKILL.md",
        ".claude/agents/explore.md",
        ".codex/config.toml",
        "pkg/.claude/settings.json",
    ] {
        refused(&p, "write_file", json!({"path": path, "content": "x"}));
        assert!(!p.path(path).exists(), "{path}");
    }
    // An approval that names it lets it through; elsewhere writes go on.
    let approved = CallContext::new(Mode::FullAuto, Approval::Granted);
    call(&p.root, "write_file", input, &approved).unwrap();
    assert!(p.path(".claude/settings.json").exists());
    let full = CallContext::new(Mode::FullAuto, Approval::None);
    call(
        &p.root,
        "write_file",
        json!({"path": "claude.md", "content": "x"}),
        &full,
    )
    .unwrap();
}

#[test]
fn present_config_is_neither_edited_nor_deleted_without_asking() {
    let p = Project::new();
    p.write(".claude/settings.json", "{\"hooks\":{}}");
    p.write(".claude/commands/review.md", "Review $ARGUMENTS");
    refused(
        &p,
        "edit_file",
        json!({"path": ".claude/settings.json", "old_string": "{}", "new_string": "{\"x\":1}"}),
    );
    refused(
        &p,
        "delete_file",
        json!({"path": ".claude/commands/review.md"}),
    );
    assert!(p.path(".claude/commands/review.md").exists());
    let settings = std::fs::read_to_string(p.path(".claude/settings.json")).unwrap();
    assert_eq!(settings, "{\"hooks\":{}}");
}

#[test]
fn a_link_to_the_config_is_judged_as_the_config() {
    let p = Project::new();
    std::fs::create_dir(p.path(".claude")).unwrap();
    symlink(".claude", p.path("cfg")).unwrap();
    refused(
        &p,
        "write_file",
        json!({"path": "cfg/settings.json", "content": "{}"}),
    );
    assert!(!p.path(".claude/settings.json").exists());
}

/// Other programs' auto-run files (`.vscode/tasks.json`, `.mcp.json`,
/// `.cursor/mcp.json`, `.gemini/settings.json`...) ask as the agent's
/// configuration does, at any depth and through a link, naming what runs
/// them.
#[test]
fn other_programs_auto_run_files_ask_in_every_mode() {
    let p = Project::new();
    let auto_edit = CallContext::new(Mode::AutoEdit, Approval::None);
    std::fs::create_dir_all(p.path(".vscode")).unwrap();
    std::fs::write(p.path(".vscode/tasks.json"), "{}").unwrap();
    symlink(".vscode/tasks.json", p.path("tasks.json")).unwrap();
    for (path, runs_it) in [
        (".vscode/tasks.json", "folderOpen"),
        ("tasks.json", "folderOpen"),
        (".mcp.json", "MCP servers"),
        (".cursor/mcp.json", "Cursor"),
        (".gemini/settings.json", "Gemini"),
        ("pkg/.zed/settings.json", "Zed"),
        // asked as a secret-like file first
        (".envrc", "secret"),
        (".devcontainer/devcontainer.json", "Dev Containers"),
    ] {
        let input = json!({"path": path, "content": "{\"x\":1}"});
        for ctx in [
            &auto_edit,
            &CallContext::new(Mode::FullAuto, Approval::None),
        ] {
            let err = call(&p.root, "write_file", input.clone(), ctx).unwrap_err();
            assert_eq!(err.code.as_str(), "approval_required", "{path}: {err:?}");
            let reason = err.details["reason"].as_str().unwrap_or_default();
            assert!(reason.contains(runs_it), "{path}: {reason}");
        }
    }
    assert_eq!(
        std::fs::read_to_string(p.path(".vscode/tasks.json")).unwrap(),
        "{}"
    );
    assert!(!p.path(".mcp.json").exists());
}
