//! Claude Code's tool names and input fields, and Corral's, both ways,
//! so the hooks in Claude's docs work unchanged: a matcher `Bash` matches
//! `exec_shell`, and the hook reads the command line in
//! `tool_input.command` and a file in `tool_input.file_path`.
//!
//! | Claude | Corral | fields |
//! |---|---|---|
//! | `Bash` | `exec_shell` | `command`: the whole line (Corral's program and `args`, quoted as a shell would) |
//! | `Edit` | `edit_file` | `file_path`: the absolute path (Corral's `path`) |
//! | `Write` | `write_file` | `file_path` |
//! | `Read` | `read_file` | `file_path` |
//! | `Grep` | `search_files` | as Corral's |
//! | `Glob` | `glob` | as Corral's |
//! | `WebFetch` | `web_fetch` | as Corral's (`url`; Claude's `prompt` is not Corral's) |

use serde_json::{Map, Value};
use std::path::Path;

const NAMES: [(&str, &str); 7] = [
    ("Bash", "exec_shell"),
    ("Edit", "edit_file"),
    ("Write", "write_file"),
    ("Read", "read_file"),
    ("Grep", "search_files"),
    ("Glob", "glob"),
    ("WebFetch", "web_fetch"),
];

/// Claude's name for one of Corral's tools, if it has one.
pub fn claude_name(corral: &str) -> Option<&'static str> {
    NAMES
        .iter()
        .find(|(_, c)| *c == corral)
        .map(|(claude, _)| *claude)
}

fn has_file_path(corral: &str) -> bool {
    matches!(corral, "edit_file" | "write_file" | "read_file")
}

/// The input a hook sees: Corral's, with Claude's fields added (for
/// `exec_shell`, `command` is the whole line; the program stays in
/// `program`).
pub fn claude_input(corral: &str, input: &Value, root: &Path) -> Value {
    let Value::Object(fields) = input else {
        return input.clone();
    };
    let mut out = fields.clone();
    if corral == "exec_shell" {
        let program = fields.get("command").and_then(Value::as_str).unwrap_or("");
        let args: Vec<&str> = fields
            .get("args")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let words = std::iter::once(program).chain(args.iter().copied());
        let line = shlex::try_join(words).unwrap_or_else(|_| program.to_string());
        out.insert("program".into(), Value::String(program.into()));
        out.insert("command".into(), Value::String(line));
    }
    if has_file_path(corral) {
        if let Some(path) = fields.get("path").and_then(Value::as_str) {
            let full = root.join(path);
            out.insert(
                "file_path".into(),
                full.to_string_lossy().into_owned().into(),
            );
        }
    }
    Value::Object(out)
}

/// Corral's input from one a hook gave back (`updatedInput`), in either
/// form: Claude's fields win where the hook changed them. A command line
/// is split as a shell would split it; one that needs a shell (`|`,
/// `&&`, `$(...)`) cannot be run as an argv and is an error.
pub fn corral_input(corral: &str, updated: &Value, root: &Path) -> Result<Value, String> {
    let Value::Object(fields) = updated else {
        return Err("updatedInput is not an object".into());
    };
    let mut out: Map<String, Value> = fields.clone();
    if corral == "exec_shell" {
        out.remove("program");
        if let Some(line) = fields.get("command").and_then(Value::as_str) {
            let words = shlex::split(line)
                .filter(|w| !w.is_empty())
                .ok_or_else(|| format!("the command line {line:?} cannot be split into words"))?;
            let special = ["|", "||", "&&", ";", ">", ">>", "<", "&"];
            if let Some(op) = words.iter().find(|w| special.contains(&w.as_str())) {
                return Err(format!(
                    "the command line {line:?} needs a shell ({op}); Corral runs one program"
                ));
            }
            let (program, args) = words.split_first().ok_or("the command line is empty")?;
            out.insert("command".into(), Value::String(program.clone()));
            out.insert(
                "args".into(),
                args.iter().cloned().map(Value::String).collect(),
            );
        }
    }
    if has_file_path(corral) {
        if let Some(file) = out.remove("file_path") {
            let file = file.as_str().ok_or("file_path is not a string")?;
            let rel = Path::new(file)
                .strip_prefix(root)
                .map(|p| p.to_string_lossy().into_owned())
                .unwrap_or_else(|_| file.to_string());
            out.insert("path".into(), Value::String(rel));
        }
    }
    Ok(Value::Object(out))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    #[test]
    fn a_command_is_one_line_for_the_hook_and_an_argv_back() {
        let root = Path::new("/p");
        let input = json!({"command": "git", "args": ["commit", "-m", "a b"]});
        let seen = claude_input("exec_shell", &input, root);
        assert_eq!(seen["command"], "git commit -m 'a b'");
        assert_eq!(seen["program"], "git");
        let back = corral_input("exec_shell", &seen, root).unwrap();
        assert_eq!(back, input);
        let changed = json!({"command": "git commit -m 'c d' --no-verify"});
        let back = corral_input("exec_shell", &changed, root).unwrap();
        assert_eq!(back["command"], "git");
        assert_eq!(back["args"], json!(["commit", "-m", "c d", "--no-verify"]));
        let err = corral_input("exec_shell", &json!({"command": "ls | wc"}), root).unwrap_err();
        assert!(err.contains("needs a shell"), "{err}");
    }

    #[test]
    fn a_file_is_file_path_for_the_hook_and_path_back() {
        let root = Path::new("/p");
        let input = json!({"path": "src/a.rs", "content": "x"});
        let seen = claude_input("write_file", &input, root);
        assert_eq!(seen["file_path"], "/p/src/a.rs");
        let mut updated = seen.clone();
        updated["file_path"] = json!("/p/src/b.rs");
        let back = corral_input("write_file", &updated, root).unwrap();
        assert_eq!(back, json!({"path": "src/b.rs", "content": "x"}));
        assert_eq!(claude_name("exec_shell"), Some("Bash"));
        assert_eq!(claude_name("web_fetch"), Some("WebFetch"));
        assert_eq!(claude_name("update_plan"), None);
    }
}
