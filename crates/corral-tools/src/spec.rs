//! Tool specs: the single registry of what the LLM sees (name, description,
//! JSON Schema of the input, risk). The app and the CLI both read it from
//! here; the schemas are generated from the input structs, so they cannot
//! drift from what the tools accept.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// How risky a tool is; the policy starts from this.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Risk {
    Read,
    Write,
    Shell,
}

/// One tool as the LLM sees it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    pub input_schema: Value,
    pub risk: Risk,
}

/// The tools, by name.
pub const TOOL_NAMES: [&str; 8] = [
    "read_file",
    "write_file",
    "edit_file",
    "delete_file",
    "list_directory",
    "glob",
    "search_files",
    "exec_shell",
];

/// The risk of a tool, if it exists.
pub fn risk_of(name: &str) -> Option<Risk> {
    match name {
        "read_file" | "list_directory" | "glob" | "search_files" => Some(Risk::Read),
        "write_file" | "edit_file" | "delete_file" => Some(Risk::Write),
        "exec_shell" => Some(Risk::Shell),
        _ => None,
    }
}

fn schema<T: schemars::JsonSchema>() -> Value {
    let mut value = serde_json::to_value(schemars::schema_for!(T)).unwrap_or(Value::Null);
    if let Some(obj) = value.as_object_mut() {
        obj.remove("$schema");
        obj.remove("title");
    }
    value
}

fn description(name: &str) -> &'static str {
    match name {
        "read_file" => {
            "Read a UTF-8 text file in the project. Returns the lines with their original \
            line endings. Large files come in windows of at most 2000 lines or 256 KiB: when \
            `truncated` is true, call again with the start_line the hint names. Binary files fail \
            with not_text. Read a file before editing it."
        }
        "write_file" => {
            "Create a file or replace its whole content, atomically. Missing parent \
            folders are created. Prefer edit_file for changes to an existing file. Paths are \
            relative to the project root; files under .git/ cannot be written."
        }
        "edit_file" => {
            "Replace an exact string in a text file. old_string must match exactly once \
            (copy it from read_file output, including indentation), unless replace_all is true. \
            Line endings, BOM and trailing newline are kept. Returns a unified diff. A miss fails \
            with no_match, several matches with ambiguous_match listing their lines."
        }
        "delete_file" => "Delete one file (not a folder) in the project.",
        "list_directory" => {
            "List a folder's entries (files, folders, symlinks with sizes), \
            depth 1 to 5. Skips .git/; lists node_modules/ and target/ without descending."
        }
        "glob" => {
            "Find files whose path matches a glob pattern such as `src/**/*.rs`, or `*.md` \
            (a pattern without `/` matches file names at any depth), newest first, at most \
            500. Respects .gitignore, skips hidden files unless the pattern names them."
        }
        "search_files" => {
            "Search file contents with a regular expression (or a literal string \
            with regex=false), like ripgrep. Respects .gitignore, skips binary and hidden files, \
            and files that look like secrets (read those with read_file, which asks the user). \
            Returns matches as {path, line, column, text}; narrow with glob or path."
        }
        "exec_shell" => {
            "Run one allowlisted program (git cargo npm yarn pnpm node bun ls find grep \
            mkdir rm mv cp touch) with an argument list, in the project root, without a shell: \
            no pipes, redirections or globs. Returns stdout, stderr, exit_code; long output keeps \
            its head and tail. Default timeout 30 s, max 600 s."
        }
        _ => "",
    }
}

/// Every tool spec, in a stable order.
pub fn specs() -> Vec<ToolSpec> {
    use crate::{fs, search, shell};
    TOOL_NAMES
        .iter()
        .map(|&name| {
            let input_schema = match name {
                "read_file" => schema::<fs::ReadFileInput>(),
                "write_file" => schema::<fs::WriteFileInput>(),
                "edit_file" => schema::<fs::EditFileInput>(),
                "delete_file" => schema::<fs::DeleteFileInput>(),
                "list_directory" => schema::<fs::ListDirectoryInput>(),
                "glob" => schema::<search::GlobInput>(),
                "search_files" => schema::<search::SearchFilesInput>(),
                _ => schema::<shell::ExecShellInput>(),
            };
            ToolSpec {
                name: name.to_string(),
                description: description(name)
                    .split_whitespace()
                    .collect::<Vec<_>>()
                    .join(" "),
                input_schema,
                risk: risk_of(name).unwrap_or(Risk::Shell),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_tool_has_an_object_schema_and_a_description() {
        let specs = specs();
        assert_eq!(specs.len(), TOOL_NAMES.len());
        for spec in specs {
            assert_eq!(spec.input_schema["type"], "object", "{}", spec.name);
            assert!(spec.description.len() > 20, "{}", spec.name);
            assert!(spec.input_schema.get("$schema").is_none());
        }
    }

    #[test]
    fn read_file_schema_names_its_fields() {
        let spec = specs().into_iter().find(|s| s.name == "read_file").unwrap();
        assert_eq!(spec.input_schema["required"], serde_json::json!(["path"]));
        assert!(spec.input_schema["properties"]["start_line"].is_object());
        assert_eq!(spec.risk, Risk::Read);
    }

    #[test]
    fn numeric_limits_are_in_the_schemas() {
        let prop = |tool: &str, field: &str| {
            let spec = specs().into_iter().find(|s| s.name == tool).unwrap();
            spec.input_schema["properties"][field].clone()
        };
        for (tool, field, min, max) in [
            ("list_directory", "depth", 1, 5),
            ("search_files", "max_results", 1, 1000),
            ("exec_shell", "timeout_secs", 1, 600),
        ] {
            let schema = prop(tool, field);
            assert_eq!(schema["minimum"], min, "{tool}.{field}: {schema}");
            assert_eq!(schema["maximum"], max, "{tool}.{field}: {schema}");
        }
    }
}
