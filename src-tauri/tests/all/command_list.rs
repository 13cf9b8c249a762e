//! Every command the window invokes is listed once: the project's in
//! `corral-host`'s table (which every host serves), the window's own in
//! `corral_app::commands::COMMANDS` (the list that registers them with
//! Tauri); `every_command` is both. The UI's typed command
//! map (`ui/src/lib/commands.ts`) and the command tables of `docs/ipc.md`
//! are generated from it: this test regenerates both and fails when a
//! committed file differs. Run it with `UPDATE_COMMANDS=1` to rewrite them
//! after changing the list.

use corral_app::commands::{every_command, Command};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

const TS_HEADER: &str = "// Generated from the command lists (crates/corral-host/src/table.rs, src-tauri/src/commands/mod.rs) by\n// src-tauri/tests/all/command_list.rs; do not edit.\n// After changing the list: UPDATE_COMMANDS=1 cargo test -p corral --test all -- command_list::\n";
const SECTION_START: &str = "<!-- commands: ";
const SECTION_END: &str = "<!-- end of commands -->";
/// TypeScript's own names, not types of the app.
const TS_BUILTINS: [&str; 3] = ["Record", "Channel", "ArrayBuffer"];

fn repo_file(relative: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(relative)
}

/// The TypeScript object type of a command's arguments.
fn args_type(command: &Command) -> String {
    match command.args {
        "" => "Record<string, never>".to_owned(),
        args => format!("{{ {args} }}"),
    }
}

/// The app's type names the list mentions, for the generated import.
fn type_names() -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for command in every_command() {
        let text = format!("{} {}", command.args, command.result);
        let words = text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'));
        for word in words {
            let is_type = word.starts_with(|c: char| c.is_ascii_uppercase());
            if is_type && !TS_BUILTINS.contains(&word) {
                names.insert(word.to_owned());
            }
        }
    }
    names
}

fn commands_ts() -> String {
    let mut out = String::from(TS_HEADER);
    out.push_str("import type { Channel } from \"@tauri-apps/api/core\";\n");
    let names: Vec<String> = type_names().into_iter().collect();
    out.push_str(&format!(
        "import type {{ {} }} from \"./types\";\n\n",
        names.join(", ")
    ));
    out.push_str("/** Every command of the app: its arguments and what it resolves to (docs/ipc.md). */\nexport type Commands = {\n");
    for command in every_command() {
        out.push_str(&format!(
            "  {}: {{ args: {}; result: {} }};\n",
            command.name,
            args_type(command),
            command.result
        ));
    }
    out.push_str("};\n\n/** The name of each command the app registers, in the list's order. */\nexport const COMMAND_NAMES = [\n");
    for command in every_command() {
        out.push_str(&format!("  \"{}\",\n", command.name));
    }
    out.push_str("] as const satisfies readonly (keyof Commands)[];\n\nexport type CommandName = keyof Commands;\n");
    out
}

/// A Markdown table cell: a `|` would end it.
fn cell(text: &str) -> String {
    text.replace('|', "\\|")
}

fn table(section: &str) -> String {
    let mut out = String::from("| command | args | resolves to |\n|---|---|---|\n");
    for command in every_command().filter(|c| c.section == section) {
        let args = match command.args {
            "" => "—".to_owned(),
            args => format!("`{args}`"),
        };
        let doc: Vec<&str> = command.doc.iter().map(|line| line.trim()).collect();
        let resolves = match doc.join(" ") {
            doc if doc.is_empty() => format!("`{}`", command.result),
            doc => format!("`{}` — {doc}", command.result),
        };
        out.push_str(&format!(
            "| `{}` | {} | {} |\n",
            command.name,
            cell(&args),
            cell(&resolves)
        ));
    }
    out
}

fn sections() -> Vec<&'static str> {
    let mut sections: Vec<&str> = Vec::new();
    for command in every_command() {
        if !sections.contains(&command.section) {
            sections.push(command.section);
        }
    }
    sections
}

/// `docs/ipc.md` with each section's table between its markers replaced by
/// the generated one; an error names a marker missing or left over.
fn ipc_md(committed: &str) -> Result<String, String> {
    let mut out = String::new();
    let mut rest = committed;
    let mut seen = Vec::new();
    while let Some(start) = rest.find(SECTION_START) {
        let after = &rest[start + SECTION_START.len()..];
        let name_end = after.find(" -->").ok_or("a section marker is not closed")?;
        let section = &after[..name_end];
        let body = &after[name_end + " -->\n".len()..];
        let end = body
            .find(SECTION_END)
            .ok_or(format!("the section {section:?} has no end marker"))?;
        if !sections().contains(&section) {
            return Err(format!(
                "docs/ipc.md has a section {section:?} no command is in"
            ));
        }
        out.push_str(&rest[..start]);
        out.push_str(&format!("{SECTION_START}{section} -->\n"));
        out.push_str(&table(section));
        out.push_str(SECTION_END);
        seen.push(section);
        rest = &body[end + SECTION_END.len()..];
    }
    out.push_str(rest);
    let missing: Vec<&str> = sections()
        .into_iter()
        .filter(|s| !seen.contains(s))
        .collect();
    match missing.is_empty() {
        true => Ok(out),
        false => Err(format!("docs/ipc.md has no table for {missing:?}")),
    }
}

/// Compares `path` with what the list generates, or rewrites it under
/// `UPDATE_COMMANDS`.
fn check(relative: &str, fresh: &str) -> std::io::Result<()> {
    let path = repo_file(relative);
    if std::env::var_os("UPDATE_COMMANDS").is_some() {
        std::fs::write(&path, fresh)?;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == fresh,
        "{relative} is not what the command list generates; rerun with UPDATE_COMMANDS=1 and commit it"
    );
    Ok(())
}

#[test]
fn the_ui_command_map_is_generated_from_the_list() {
    check("ui/src/lib/commands.ts", &commands_ts()).unwrap();
}

#[test]
fn the_command_tables_of_ipc_md_are_generated_from_the_list() {
    let committed = std::fs::read_to_string(repo_file("docs/ipc.md")).unwrap();
    let fresh = ipc_md(&committed).unwrap();
    check("docs/ipc.md", &fresh).unwrap();
}

#[test]
fn every_command_is_listed_once() {
    let mut names = BTreeSet::new();
    for command in every_command() {
        assert!(
            names.insert(command.name),
            "{} is listed twice",
            command.name
        );
    }
    assert!(names.contains("call_tool") && names.contains("model_info"));
}

/// Nothing outside the generated tables names a command the app does not
/// register: a table row written by hand elsewhere in `docs/ipc.md` must
/// name a listed command too.
#[test]
fn ipc_md_documents_no_command_that_is_not_registered() {
    let committed = std::fs::read_to_string(repo_file("docs/ipc.md")).unwrap();
    let registered: BTreeSet<&str> = every_command().map(|c| c.name).collect();
    let documented: Vec<&str> = committed
        .lines()
        .filter_map(|line| line.strip_prefix("| `"))
        .filter_map(|rest| rest.split('`').next())
        .collect();
    assert!(documented.len() >= every_command().count());
    let unknown: Vec<&&str> = documented
        .iter()
        .filter(|name| !registered.contains(**name))
        .collect();
    assert!(
        unknown.is_empty(),
        "documented but not registered: {unknown:?}"
    );
}

#[test]
fn a_stale_or_missing_table_is_caught() {
    let docs = format!("# x\n{SECTION_START}Project -->\n| `gone` | — | `null` |\n{SECTION_END}\n");
    assert!(ipc_md(&docs).unwrap_err().contains("has no table for"));
    let unknown = format!("{SECTION_START}Nowhere -->\n{SECTION_END}\n");
    assert!(ipc_md(&unknown).unwrap_err().contains("no command is in"));
}
