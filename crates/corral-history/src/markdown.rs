//! A conversation as Markdown, for export: each message under its role,
//! each tool call with its input, each result as text a person can read
//! (a file's content, a command's output and exit code, an error's
//! message and hint), every block fenced so nothing in it is read as
//! Markdown.

use corral_llm::{Block, Message, Role};
use serde_json::Value;
use std::collections::HashMap;
use std::fmt::Write;

/// Longest tool result written whole; the rest is cut with a note.
const RESULT_CHARS: usize = 100_000;

/// What the export says about the conversation above its messages. Its
/// own type, filled in by `history`, so this module needs nothing of the
/// store that calls it.
#[derive(Debug, Clone, Copy)]
pub struct Header<'a> {
    /// Empty for a conversation without a title yet.
    pub title: &'a str,
    /// The project folder.
    pub project: &'a str,
    /// The model of the last reply; empty when none replied.
    pub model: &'a str,
    pub input_tokens: i64,
    pub output_tokens: i64,
}

/// The conversation as Markdown: `summary` above, then each message; one
/// the history could not read (`Err`: why) is a line saying so, in its
/// place.
pub fn render(summary: &Header<'_>, messages: &[Result<Message, String>]) -> String {
    let mut out = String::new();
    let title = if summary.title.is_empty() {
        "Conversation"
    } else {
        summary.title
    };
    let _ = writeln!(out, "# {}\n", one_line(title));
    let _ = writeln!(out, "- Project: `{}`", one_line(summary.project));
    if !summary.model.is_empty() {
        let _ = writeln!(out, "- Model: {}", one_line(summary.model));
    }
    let _ = writeln!(
        out,
        "- Tokens: {} in, {} out\n",
        summary.input_tokens, summary.output_tokens
    );
    // Tool names by call id, to title each result.
    let mut names: HashMap<&str, &str> = HashMap::new();
    for message in messages {
        let message = match message {
            Ok(message) => message,
            Err(why) => {
                let _ = writeln!(
                    out,
                    "*(A message of this conversation could not be read from the history: {}.)*\n",
                    one_line(why)
                );
                continue;
            }
        };
        let heading = match message.role {
            Role::User
                if message
                    .content
                    .iter()
                    .all(|b| matches!(b, Block::ToolResult { .. })) =>
            {
                "### Tool results"
            }
            Role::User => "## User",
            Role::Assistant => "## Assistant",
        };
        let _ = writeln!(out, "{heading}\n");
        for block in &message.content {
            match block {
                Block::Text { text } => {
                    let _ = writeln!(out, "{}\n", text.trim_end());
                }
                Block::ToolUse { id, name, input } => {
                    names.insert(id, name);
                    let _ = writeln!(out, "**Tool call:** `{}`\n", one_line(name));
                    write_fenced(&mut out, "json", &pretty(&Value::Object(input.clone())));
                }
                Block::ToolResult {
                    tool_use_id,
                    content,
                    is_error,
                } => {
                    let name = names.get(tool_use_id.as_str()).copied().unwrap_or("tool");
                    let label = if *is_error { "Error" } else { "Result" };
                    let _ = writeln!(out, "**{label} of** `{}`:\n", one_line(name));
                    write_result(&mut out, content);
                }
                Block::Image { media_type, data } => {
                    let bytes = data.len() / 4 * 3;
                    let _ = writeln!(
                        out,
                        "*(an image: {}, about {} KiB)*\n",
                        one_line(media_type),
                        bytes.div_ceil(1024)
                    );
                }
            }
        }
    }
    out
}

/// A tool result: the fields a person reads, else the JSON pretty-printed,
/// else the text as it is.
fn write_result(out: &mut String, content: &str) {
    let Ok(Value::Object(map)) = serde_json::from_str::<Value>(content) else {
        write_fenced(out, "", &cut(content));
        return;
    };
    let text = |key: &str| map.get(key).and_then(Value::as_str);
    if let (Some(code), Some(message)) = (text("code"), text("message")) {
        // The standardized error.
        let _ = writeln!(out, "`{}`: {}\n", one_line(code), one_line(message));
        if let Some(hint) = text("hint").filter(|h| !h.is_empty()) {
            let _ = writeln!(out, "Hint: {}\n", one_line(hint));
        }
        return;
    }
    if let Some(command) = text("command") {
        // exec_shell.
        let args = map
            .get("args")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .map(|v| v.as_str().unwrap_or_default().to_string())
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .unwrap_or_default();
        let exit = map
            .get("exit_code")
            .and_then(Value::as_i64)
            .map_or_else(|| "none".to_string(), |c| c.to_string());
        let _ = writeln!(
            out,
            "`$ {}` — exit code {exit}\n",
            one_line(format!("{command} {args}").trim_end())
        );
        for stream in ["stdout", "stderr"] {
            if let Some(s) = text(stream).filter(|s| !s.is_empty()) {
                let _ = writeln!(out, "{stream}:\n");
                write_fenced(out, "", &cut(s));
            }
        }
        return;
    }
    if let (Some(path), Some(body)) = (text("path"), text("content")) {
        // read_file.
        let _ = writeln!(out, "`{}`:\n", one_line(path));
        write_fenced(out, "", &cut(body));
        return;
    }
    write_fenced(out, "json", &cut(&pretty(&Value::Object(map.clone()))));
}

fn pretty(value: &Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_default()
}

/// A fenced block whose fence is longer than any run of backticks inside.
fn write_fenced(out: &mut String, lang: &str, body: &str) {
    let mut longest = 0;
    let mut run = 0;
    for c in body.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    let fence = "`".repeat((longest + 1).max(3));
    let _ = writeln!(
        out,
        "{fence}{lang}\n{}\n{fence}\n",
        body.trim_end_matches('\n')
    );
}

fn cut(text: &str) -> String {
    match text.char_indices().nth(RESULT_CHARS) {
        Some((at, _)) => format!(
            "{}\n[… {} more characters not exported]",
            &text[..at],
            text[at..].chars().count()
        ),
        None => text.to_string(),
    }
}

/// Inline text on one line (a heading, a code span).
fn one_line(text: &str) -> String {
    text.replace(['\n', '\r'], " ").replace('`', "'")
}

/// For tests: an object from pairs.
/// The name of the file a conversation titled `title` is exported to: the
/// title's letters, digits, `-` and `_` (at most 60, anything else a `-`),
/// else `conversation`, with `.md`.
pub fn file_name(title: &str) -> String {
    let stem: String = title
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .take(60)
        .collect();
    match stem.trim_matches('-') {
        "" => "conversation.md".to_string(),
        stem => format!("{stem}.md"),
    }
}

#[cfg(test)]
fn object(pairs: &[(&str, Value)]) -> serde_json::Map<String, Value> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_export_is_named_after_its_title_in_safe_characters() {
        assert_eq!(file_name("Fix the build!"), "Fix-the-build.md");
        assert_eq!(file_name("../etc/passwd"), "etc-passwd.md");
        assert_eq!(file_name("été_1-2"), "été_1-2.md");
        assert_eq!(file_name(" ? "), "conversation.md");
        assert_eq!(file_name(""), "conversation.md");
        let long = "x".repeat(100);
        assert_eq!(file_name(&long), format!("{}.md", "x".repeat(60)));
    }

    fn summary() -> Header<'static> {
        Header {
            project: "/p/app",
            title: "Fix the build",
            model: "m1",
            input_tokens: 10,
            output_tokens: 20,
        }
    }

    #[test]
    fn tool_calls_and_results_are_readable() {
        let messages = vec![
            Message::user("Fix the build"),
            Message {
                role: Role::Assistant,
                content: vec![
                    Block::text("Reading it."),
                    Block::ToolUse {
                        id: "t1".into(),
                        name: "read_file".into(),
                        input: object(&[("path", json!("src/main.rs"))]),
                    },
                    Block::ToolUse {
                        id: "t2".into(),
                        name: "exec_shell".into(),
                        input: object(&[("command", json!("cargo")), ("args", json!(["build"]))]),
                    },
                    Block::ToolUse {
                        id: "t3".into(),
                        name: "edit_file".into(),
                        input: object(&[("path", json!("a.md"))]),
                    },
                ],
            },
            Message {
                role: Role::User,
                content: vec![
                    Block::ToolResult {
                        tool_use_id: "t1".into(),
                        content: json!({"path": "src/main.rs", "content": "fn main() {\n```\n}\n"}).to_string(),
                        is_error: false,
                    },
                    Block::ToolResult {
                        tool_use_id: "t2".into(),
                        content: json!({"command": "cargo", "args": ["build"], "stdout": "", "stderr": "error[E0425]", "exit_code": 101}).to_string(),
                        is_error: false,
                    },
                    Block::ToolResult {
                        tool_use_id: "t3".into(),
                        content: json!({"code": "no_match", "message": "not found", "hint": "read it first"}).to_string(),
                        is_error: true,
                    },
                ],
            },
        ];
        let md = render(
            &summary(),
            &messages.into_iter().map(Ok).collect::<Vec<_>>(),
        );
        assert!(md.starts_with("# Fix the build\n"), "{md}");
        assert!(md.contains("## User\n\nFix the build"), "{md}");
        assert!(md.contains("**Tool call:** `read_file`"), "{md}");
        assert!(md.contains("\"path\": \"src/main.rs\""), "{md}");
        // A file holding a fence gets a longer fence.
        assert!(md.contains("````\nfn main() {\n```\n}\n````"), "{md}");
        assert!(md.contains("`$ cargo build` — exit code 101"), "{md}");
        assert!(md.contains("stderr:\n\n```\nerror[E0425]\n```"), "{md}");
        assert!(
            md.contains(
                "**Error of** `edit_file`:\n\n`no_match`: not found\n\nHint: read it first"
            ),
            "{md}"
        );
    }
}
