//! The project's commands are listed in one place, the table
//! (`src/table.rs`): no other source file of the repository holds a list
//! of them, as the app's router and serve's and exec's dispatch once did.
//! A list is a bracketed run (`[...]`, an array or slice) naming two or
//! more of them; a `match` arm or a single call by name is not one.

#![allow(clippy::unwrap_used, clippy::disallowed_methods)]

use corral_host::COMMANDS;
use std::path::{Path, PathBuf};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The source files to look through: Rust, TypeScript and Svelte, not
/// tests (a test may expect calls in an order), not dependencies, not
/// build output.
fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if matches!(
            name.as_str(),
            "target" | "node_modules" | "dist" | ".git" | ".venv" | "artifacts" | "tests"
        ) {
            continue;
        }
        if path.is_dir() {
            sources(&path, out);
        } else if !name.contains(".test.")
            && (name.ends_with(".rs") || name.ends_with(".ts") || name.ends_with(".svelte"))
        {
            out.push(path);
        }
    }
}

/// The bracketed runs of `text` (innermost brackets) naming two or more
/// of the table's commands as quoted strings.
fn lists_in(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut open = Vec::new();
    for (at, c) in text.char_indices() {
        match c {
            '[' => open.push(at),
            ']' => {
                let Some(start) = open.pop() else { continue };
                let run = &text[start..=at];
                let named: Vec<&str> = COMMANDS
                    .iter()
                    .map(|c| c.name)
                    .filter(|name| run.contains(&format!("\"{name}\"")))
                    .collect();
                if named.len() >= 2 {
                    found.push(named.join(", "));
                }
            }
            _ => {}
        }
    }
    found
}

#[test]
fn no_source_file_lists_the_projects_commands_but_the_table() {
    let root = repo();
    let mut files = Vec::new();
    for dir in ["crates", "src-tauri", "ui/src", "e2e/lib"] {
        sources(&root.join(dir), &mut files);
    }
    assert!(files.len() > 100, "{} files", files.len());
    let table = root.join("crates/corral-host/src/table.rs");
    // Generated from the table (and checked to be) by the app's tests.
    let generated = root.join("ui/src/lib/commands.ts");
    let mut lists = Vec::new();
    for file in files {
        if file == table || file == generated {
            continue;
        }
        let text = std::fs::read_to_string(&file).unwrap();
        for list in lists_in(&text) {
            lists.push(format!(
                "{}: {list}",
                file.strip_prefix(&root).unwrap().display()
            ));
        }
    }
    assert!(
        lists.is_empty(),
        "lists of the project's commands outside the table:\n{}",
        lists.join("\n")
    );
}

#[test]
fn a_list_of_two_commands_is_found() {
    assert_eq!(
        lists_in(r#"const SERVED: &[&str] = &["tool_specs", "check_call"];"#),
        ["tool_specs, check_call"]
    );
    assert!(lists_in(r#"match c { "tool_specs" => 1, "check_call" => 2 }"#).is_empty());
}
