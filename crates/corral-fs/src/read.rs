//! `read_file`: a window of a text file's lines.

use super::read_regular;
use crate::error::{Error, Result};
use crate::root::ProjectRoot;
use crate::text::{cut_line, decode};
use serde::{Deserialize, Serialize};

/// Lines returned by one call at most.
pub const MAX_LINES: usize = 2000;
/// Bytes of content returned by one call at most.
pub const MAX_BYTES: usize = 256 * 1024;
/// Characters of one line before it is cut.
pub const MAX_LINE_CHARS: usize = 2000;

/// Input of `read_file`.
#[derive(Debug, Clone, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadFileInput {
    /// File path relative to the project root.
    pub path: String,
    /// First line to read, 1-based (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_line: Option<usize>,
    /// Last line to read, inclusive (default: up to 2000 lines from start_line).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_line: Option<usize>,
}

/// Output of `read_file`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize, ts_rs::TS)]
pub struct ReadFileOutput {
    pub path: String,
    /// The lines, with their original line endings (a BOM is not included).
    pub content: String,
    pub start_line: usize,
    pub end_line: usize,
    pub total_lines: usize,
    /// More lines follow `end_line`, or a line was cut.
    pub truncated: bool,
    /// Where to continue, when truncated.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub hint: Option<String>,
}

/// Reads a window of a text file.
pub fn read_file(root: &ProjectRoot, input: &ReadFileInput) -> Result<ReadFileOutput> {
    let rel = root.resolve(&input.path)?;
    let shown = rel.display();
    let start = input.start_line.unwrap_or(1);
    if start == 0 {
        return Err(
            Error::invalid_input("start_line is 1-based; 0 is not a line").detail("start_line", 0),
        );
    }
    if let Some(end) = input.end_line {
        if end < start {
            return Err(Error::invalid_input(format!(
                "end_line {end} is before start_line {start}"
            ))
            .detail("start_line", start)
            .detail("end_line", end));
        }
    }
    let (bytes, _) = read_regular(root, &rel)?;
    let text = decode(bytes, &shown)?;
    // Counted and walked lazily: a 64 MiB file of empty lines must not
    // become 64 million slices.
    let lines = || text.body.split_inclusive('\n');
    let total = lines().count();
    if start > total.max(1) {
        return Err(Error::invalid_input(format!(
            "start_line {start} is past the end of `{shown}` ({total} lines)"
        ))
        .detail("path", shown)
        .detail("total_lines", total));
    }
    let wanted_end = input
        .end_line
        .unwrap_or(usize::MAX)
        .min(total)
        .min(start.saturating_add(MAX_LINES - 1));

    let mut content = String::new();
    let mut end = start.saturating_sub(1);
    let mut cut = false;
    for line in lines().take(wanted_end).skip(start - 1) {
        let shown_line = cut_line(line, MAX_LINE_CHARS);
        cut |= shown_line.len() != line.len();
        if content.len() + shown_line.len() > MAX_BYTES && end >= start {
            break;
        }
        content.push_str(&shown_line);
        end += 1;
    }
    let more = end < input.end_line.unwrap_or(total).min(total);
    let hint = more.then(|| {
        format!(
            "Showing lines {start}-{end} of {total}. Call read_file with start_line={} to continue.",
            end + 1
        )
    });
    Ok(ReadFileOutput {
        path: shown,
        content,
        start_line: start,
        end_line: end,
        total_lines: total,
        truncated: more || cut,
        hint,
    })
}
