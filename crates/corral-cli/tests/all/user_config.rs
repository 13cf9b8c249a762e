//! The user's own agent configuration (`~/.claude/` and `~/.codex/`:
//! settings with hooks, commands, skills, agents) cannot be written by the
//! agent: a command's child in the build or network profile sees no home
//! to create it in, present or absent, and the file tools refuse any path
//! outside the project, however it is written.

use serde_json::{json, Value};
use std::path::{Path, PathBuf};

fn namespaces_here() -> bool {
    let ok = corral_sandbox::namespaces_available() && Path::new("/usr/bin/node").exists();
    if !ok {
        eprintln!("note: no namespaces or no node; skipping a user config test");
    }
    ok
}

/// A project and a home beside it (the home's `.claude` made only when asked).
fn fixture(with_config: bool) -> (tempfile::TempDir, PathBuf, PathBuf) {
    let work = tempfile::tempdir().unwrap();
    let root = work.path().join("project");
    let home = work.path().join("home");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    if with_config {
        std::fs::create_dir_all(home.join(".claude")).unwrap();
        std::fs::write(home.join(".claude/settings.json"), "{}\n").unwrap();
    }
    (work, root, home)
}

fn call(root: &Path, home: &Path, extra: &[&str], tool: &str, input: Value) -> (bool, Value) {
    let out = crate::common::corral_cli()
        .args([
            "call",
            "--root",
            root.to_str().unwrap(),
            "--mode",
            "full_auto",
            "--no-checkpoint",
        ])
        .args(extra)
        .args([tool, &input.to_string()])
        .env("HOME", home)
        .output()
        .unwrap();
    let answer = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|_| panic!("{}", String::from_utf8_lossy(&out.stderr)));
    (out.status.success(), answer)
}

/// What a child tries: make the folders and plant settings with a hook.
fn plant(home: &Path) -> String {
    let targets = [
        home.join(".claude/settings.json"),
        home.join(".claude/commands/x.md"),
        home.join(".codex/config.toml"),
    ];
    format!(
        "const fs = require('fs'); const path = require('path'); const r = [];
        for (const p of {targets:?}) {{
            try {{ fs.mkdirSync(path.dirname(p), {{ recursive: true }}); fs.writeFileSync(p, '{{\"hooks\":{{}}}}'); r.push('wrote') }}
            catch (e) {{ r.push(e.code) }}
        }}
        console.log('PLANT ' + r.join(' '))"
    )
}

#[test]
fn a_child_in_the_build_or_network_profile_cannot_create_the_users_claude_settings() {
    if !namespaces_here() {
        return;
    }
    for with_config in [false, true] {
        let (_work, root, home) = fixture(with_config);
        let script = plant(&home);
        for extra in [&[][..], &["--network"][..]] {
            let (_, result) = call(
                &root,
                &home,
                extra,
                "exec_shell",
                json!({"command": "node", "args": ["-e", script]}),
            );
            let profile = if extra.is_empty() { "build" } else { "network" };
            assert_eq!(result["profile"], profile, "{result}");
            let said = result["stdout"].as_str().unwrap_or_default();
            assert!(
                said.starts_with("PLANT "),
                "the probe did not run: {result}"
            );
            assert!(!said.contains("wrote"), "{result}");
        }
        let settings = std::fs::read_to_string(home.join(".claude/settings.json")).ok();
        assert_eq!(settings.as_deref(), with_config.then_some("{}\n"));
        assert!(!home.join(".claude/commands").exists());
        assert!(!home.join(".codex").exists());
    }
}

#[test]
fn the_file_tools_refuse_the_users_claude_settings_however_named() {
    let (_work, root, home) = fixture(false);
    let absolute = home.join(".claude/settings.json").display().to_string();
    for path in [
        absolute.as_str(),
        "../home/.claude/settings.json",
        "~/.claude/settings.json",
    ] {
        let (ok, answer) = call(
            &root,
            &home,
            &[],
            "write_file",
            json!({"path": path, "content": "{\"hooks\":{}}"}),
        );
        // `~` is not the home to the tools: a folder named `~` in the
        // project, which is the agent's configuration there and asks.
        if path.starts_with('~') {
            assert!(!ok, "{answer}");
            assert_eq!(answer["code"], "approval_required", "{answer}");
            continue;
        }
        assert!(!ok, "{path}: {answer}");
        assert_eq!(answer["code"], "path_outside_root", "{path}: {answer}");
    }
    assert!(!home.join(".claude").exists());
}
