//! How the window shows a call of a tool, as its spec says: what the call
//! is about, how its result is summed up, and whose tool it is. The
//! window reads these hints and never a tool's name, so a tool of the
//! user's MCP servers and one of Corral's own are drawn by the same code.

use serde::{Deserialize, Serialize};

/// The display hints of one tool.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
pub struct ToolDisplay {
    /// What a call is about, in a few words on its card.
    pub subject: Subject,
    /// How its result is summed up and previewed.
    pub result: ResultView,
    /// The MCP server whose tool it is; none for Corral's own tools.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub server: Option<String>,
    /// The tool's own name on its server (the model sees it prefixed with
    /// the server's); none for Corral's own tools.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub label: Option<String>,
}

/// What a call is about, read from its input.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
#[ts(rename = "ToolSubject")]
pub enum Subject {
    /// Its `path` (with `start_line`-`end_line` when given), or nothing.
    #[default]
    Path,
    /// Its `path`, or the project (`.`).
    Folder,
    /// The command line of `command` and `args`.
    Command,
    /// Its `query`, and `in` its `path` when given.
    Query,
    /// Its `pattern`, and `in` its `path` when given.
    Pattern,
    /// Its `url`.
    Url,
    /// Its text and number arguments in a line (a tool Corral does not know).
    Arguments,
}

/// How a result is summed up on the card and previewed when opened.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
#[ts(rename = "ToolResultView")]
pub enum ResultView {
    /// The lines read of a file, and their text.
    FileContent,
    /// A file created or written, and its size.
    Written,
    /// The replacements made, and their diff.
    Edited,
    /// A file deleted.
    Deleted,
    /// A folder's entries.
    Entries,
    /// The files found.
    Files,
    /// The lines that matched.
    Matches,
    /// The plan's steps done.
    Plan,
    /// A command's output, exit code and sandbox, shown in an output panel.
    Output,
    /// A language servers' report: errors and warnings by file.
    Diagnostics,
    /// A web page's text (its `content`), and how much of it.
    Page,
    /// No summary; the result as JSON.
    #[default]
    Json,
}
