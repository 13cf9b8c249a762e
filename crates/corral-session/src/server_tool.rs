//! One tool of one of the user's MCP servers, as the session's registry
//! holds it: its spec (with the window's display hints), its input read
//! against its input schema, and the paths it names. A server that runs
//! on this machine works on the project's files, so the paths its tools
//! are given are judged, and refused, as Corral's own tools' are: outside
//! the project, through a symlink leading out, into `.git/`, a secret.

use corral_tools::display::{ResultView, Subject, ToolDisplay};
use corral_tools::policy::{Decision, Mode, Risk};
use corral_tools::spec::ToolSpec;
use corral_tools::tool::Assessment;
use corral_tools::{Error, ErrorCode, ProjectRoot};
use serde_json::{Map, Value};

/// Between a server's name and its tool's in the name the model sees.
pub const SEPARATOR: &str = "__";

/// The last word of an argument's name that says it is a path (`path`,
/// `file_path`, `targetFile`, `dir`, `folders`).
const PATH_WORDS: &[&str] = &[
    "path",
    "paths",
    "file",
    "files",
    "filename",
    "filenames",
    "filepath",
    "dir",
    "dirs",
    "directory",
    "directories",
    "folder",
    "folders",
];

/// One tool of a running server.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerTool {
    /// The server's name.
    pub server: String,
    /// The tool's name on its server.
    pub tool: String,
    /// The name the model calls it by (`SERVER__TOOL`).
    pub name: String,
    pub description: String,
    /// Its input schema (an object schema).
    pub schema: Value,
    /// The user marked it read-only: it runs without asking, in every mode.
    pub read_only: bool,
    /// Its server is trusted: its calls run without asking (not in
    /// read-only mode).
    pub trusted: bool,
    /// The arguments that name paths of the project (by their names), when
    /// its server runs on this machine; none for a server at a URL, whose
    /// paths are not the project's.
    pub path_arguments: Vec<String>,
}

impl ServerTool {
    /// The tool `tool` of `server`, with the arguments of its schema that
    /// name paths when the server runs on this machine (`local`).
    pub fn new(
        server: &str,
        tool: &str,
        description: String,
        schema: Value,
        local: bool,
    ) -> ServerTool {
        let path_arguments = if local {
            schema
                .get("properties")
                .and_then(Value::as_object)
                .map(|props| {
                    props
                        .keys()
                        .filter(|name| names_a_path(name))
                        .cloned()
                        .collect()
                })
                .unwrap_or_default()
        } else {
            Vec::new()
        };
        ServerTool {
            server: server.to_string(),
            tool: tool.to_string(),
            name: format!("{server}{SEPARATOR}{tool}"),
            description,
            schema,
            read_only: false,
            trusted: false,
            path_arguments,
        }
    }

    /// The risk the model's client and the window see: a tool marked
    /// read-only, or of a trusted server, runs without asking.
    pub fn risk(&self) -> Risk {
        if self.read_only || self.trusted {
            Risk::Read
        } else {
            Risk::Shell
        }
    }

    /// Whether a call can change the project: any tool not marked read-only
    /// (its server runs in the project and may write there).
    pub fn changes_project(&self) -> bool {
        !self.read_only
    }

    /// The server's own rule for a call, before its paths are judged: a
    /// tool marked read-only runs in every mode; in read-only mode nothing
    /// else does; a trusted server's tools run; any other call asks, in
    /// every mode (it acts beyond the project's fence).
    pub fn rule(&self, mode: Mode) -> Decision {
        let (server, tool) = (&self.server, &self.tool);
        if self.read_only {
            Decision::Allow
        } else if mode == Mode::ReadOnly {
            Decision::Deny {
                reason: format!(
                    "read-only mode: `{tool}` of the MCP server `{server}` is not marked read-only"
                ),
            }
        } else if self.trusted {
            Decision::Allow
        } else {
            Decision::Ask {
                reason: format!(
                    "`{tool}` is a tool of the MCP server `{server}`, which acts beyond the project's fence"
                ),
            }
        }
    }

    /// What the model and the window are given.
    pub fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: self.name.clone(),
            description: format!("[MCP server `{}`] {}", self.server, self.description),
            input_schema: self.schema.clone(),
            risk: self.risk(),
            display: ToolDisplay {
                subject: Subject::Arguments,
                result: ResultView::Json,
                server: Some(self.server.clone()),
                label: Some(self.tool.clone()),
            },
        }
    }

    /// The input read against the tool's schema: an object, with the
    /// properties it requires, each declared property of its declared type.
    pub fn parse(&self, input: &Value) -> Result<Map<String, Value>, Error> {
        let invalid = |why: String| {
            Error::invalid_input(format!("invalid input for {}: {why}", self.name))
                .hint(format!("Check {}'s input schema.", self.name))
                .detail("tool", self.name.as_str())
        };
        let input = match input {
            Value::Null => Map::new(),
            Value::Object(map) => map.clone(),
            other => return Err(invalid(format!("expected an object, not {}", kind(other)))),
        };
        let required = self.schema.get("required").and_then(Value::as_array);
        for field in required.into_iter().flatten().filter_map(Value::as_str) {
            if !input.contains_key(field) {
                return Err(invalid(format!("missing field `{field}`")));
            }
        }
        let props = self.schema.get("properties").and_then(Value::as_object);
        for (field, value) in &input {
            let Some(declared) = props.and_then(|p| p.get(field)).and_then(|s| s.get("type"))
            else {
                continue;
            };
            let types: Vec<&str> = match declared {
                Value::String(one) => vec![one.as_str()],
                Value::Array(many) => many.iter().filter_map(Value::as_str).collect(),
                _ => continue,
            };
            if !types.is_empty() && !types.iter().any(|t| is_of_type(value, t)) {
                return Err(invalid(format!(
                    "`{field}` is {}, expected {}",
                    kind(value),
                    types.join(" or ")
                )));
            }
        }
        Ok(input)
    }

    /// What the policy needs to know of a call: the paths it names. With
    /// `precheck`, a path that leads out of the project (by its text or
    /// through a symlink), that cannot be resolved (a loop), or that a tool
    /// which may write puts into `.git/` refuses the call, as a file tool
    /// would be refused.
    pub fn assess(
        &self,
        root: &ProjectRoot,
        input: &Map<String, Value>,
        precheck: bool,
    ) -> Result<Assessment, Error> {
        let mut paths = Vec::new();
        for field in &self.path_arguments {
            match input.get(field) {
                Some(Value::String(path)) => paths.push(path.clone()),
                Some(Value::Array(items)) => {
                    paths.extend(items.iter().filter_map(Value::as_str).map(str::to_string))
                }
                _ => {}
            }
        }
        if precheck {
            for path in &paths {
                self.precheck(root, path)?;
            }
        }
        Ok(Assessment {
            paths,
            read_only: self.read_only,
            ..Assessment::default()
        })
    }

    fn precheck(&self, root: &ProjectRoot, path: &str) -> Result<(), Error> {
        let located = root.locate(path)?;
        let real = located
            .real
            .clone()
            .map_err(|e| e.detail("tool", self.name.as_str()))?;
        let into_git = located.lexical.is_git_internal() || real.is_git_internal();
        if into_git && !self.read_only {
            let shown = located.lexical.display();
            return Err(Error::new(
                ErrorCode::PathProtected,
                format!(
                    "`{shown}` is inside `.git/`; git internals are never written by the agent's tools"
                ),
            )
            .hint("Use git through exec_shell to change the repository.")
            .detail("path", shown)
            .detail("tool", self.name.as_str()));
        }
        Ok(())
    }
}

/// Whether an argument's name says it is a path: its last word (split at
/// `_`, `-` and camel case) is one of [`PATH_WORDS`].
fn names_a_path(name: &str) -> bool {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut last_lower = false;
    for c in name.chars() {
        let boundary = c == '_' || c == '-' || (c.is_uppercase() && last_lower);
        if boundary && !word.is_empty() {
            words.push(std::mem::take(&mut word));
        }
        if c != '_' && c != '-' {
            word.extend(c.to_lowercase());
        }
        last_lower = c.is_lowercase();
    }
    words.push(word);
    words
        .last()
        .is_some_and(|last| PATH_WORDS.contains(&last.as_str()))
}

fn is_of_type(value: &Value, ty: &str) -> bool {
    match ty {
        "string" => value.is_string(),
        "number" => value.is_number(),
        "integer" => value.is_i64() || value.is_u64(),
        "boolean" => value.is_boolean(),
        "array" => value.is_array(),
        "object" => value.is_object(),
        "null" => value.is_null(),
        // A type this check does not know is the server's to judge.
        _ => true,
    }
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn arguments_name_paths_by_their_last_word() {
        for name in [
            "path",
            "file_path",
            "filePath",
            "targetFile",
            "dir",
            "output-folder",
            "paths",
            "FILENAME",
        ] {
            assert!(names_a_path(name), "{name}");
        }
        for name in ["profile", "text", "pathway", "query", "url", "file_count"] {
            assert!(!names_a_path(name), "{name}");
        }
    }

    #[test]
    fn only_a_local_servers_tool_has_path_arguments() {
        let schema = json!({"type": "object", "properties": {
            "path": {"type": "string"}, "text": {"type": "string"}, "out_dir": {"type": "string"}}});
        let local = ServerTool::new("fs", "write", String::new(), schema.clone(), true);
        assert_eq!(local.path_arguments, ["out_dir", "path"]);
        assert_eq!(local.name, "fs__write");
        let remote = ServerTool::new("fs", "write", String::new(), schema, false);
        assert!(remote.path_arguments.is_empty());
    }

    #[test]
    fn the_input_is_read_against_the_schema() {
        let schema = json!({"type": "object", "required": ["text"], "properties": {
            "text": {"type": "string"}, "n": {"type": ["integer", "null"]}}});
        let tool = ServerTool::new("s", "echo", String::new(), schema, true);
        assert!(tool
            .parse(&json!({"text": "hi", "n": 2, "extra": true}))
            .is_ok());
        assert!(tool.parse(&json!({"text": "hi", "n": null})).is_ok());
        for (input, says) in [
            (json!({}), "missing field `text`"),
            (json!({"text": 3}), "`text` is a number, expected string"),
            (
                json!({"text": "a", "n": 1.5}),
                "`n` is a number, expected integer or null",
            ),
            (json!("text"), "expected an object, not a string"),
        ] {
            let err = tool.parse(&input).unwrap_err();
            assert_eq!(err.code, ErrorCode::InvalidInput, "{input}");
            assert_eq!(err.message, format!("invalid input for s__echo: {says}"));
        }
        // No input is an empty object (for a tool that requires nothing).
        let free = ServerTool::new("s", "cwd", String::new(), json!({"type": "object"}), true);
        assert_eq!(free.parse(&Value::Null).unwrap(), Map::new());
    }
}
