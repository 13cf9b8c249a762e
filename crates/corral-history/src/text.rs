//! What is read out of a stored message: its first line, the text search
//! finds it by, and the message with long tool results left out.

use corral_llm::{Block, Message, Role};
use corral_protocol::{Error, ErrorCode};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;

/// Tool input strings longer than this are cut before indexing.
const INDEXED_INPUT_CHARS: usize = 2_000;

/// A stored message read only as far as eliding needs: its blocks as raw JSON.
#[derive(Deserialize)]
struct MessageBlocks<'a> {
    #[serde(borrow)]
    content: Vec<&'a RawValue>,
}

/// What says whether a block is a tool result, and which one.
#[derive(Deserialize)]
struct BlockHead<'a> {
    #[serde(rename = "type", borrow)]
    kind: std::borrow::Cow<'a, str>,
    #[serde(default, borrow)]
    tool_use_id: Option<std::borrow::Cow<'a, str>>,
    #[serde(default, borrow)]
    content: Option<&'a RawValue>,
}

/// The message with each tool result over `limit` bytes emptied, and their ids.
///
/// The stored text is spliced, not parsed into a `Message` and written
/// again: a long result is only scanned (never unescaped or copied), and
/// everything else stays byte for byte as stored.
pub(crate) fn elide(
    text: String,
    limit: usize,
) -> Result<(Option<String>, Option<Vec<String>>), Error> {
    let Ok(message) = serde_json::from_str::<MessageBlocks>(&text) else {
        return Ok((Some(text), None));
    };
    let base = text.as_ptr() as usize;
    // Byte ranges of `text` to replace with `""`, in order.
    let mut cuts: Vec<(usize, usize)> = Vec::new();
    let mut elided = Vec::new();
    for block in &message.content {
        if block.get().len() <= limit {
            continue; // its result, if any, is shorter still
        }
        let Ok(head) = serde_json::from_str::<BlockHead>(block.get()) else {
            continue;
        };
        let (Some(id), Some(content)) = (head.tool_use_id, head.content) else {
            continue;
        };
        if head.kind != "tool_result" || !longer_than(content.get(), limit) {
            continue;
        }
        let start = content.get().as_ptr() as usize - base;
        cuts.push((start, start + content.get().len()));
        elided.push(id.into_owned());
    }
    if elided.is_empty() {
        return Ok((Some(text), None));
    }
    let mut out = String::with_capacity(
        text.len() - cuts.iter().map(|(a, b)| b - a).sum::<usize>() + 2 * cuts.len(),
    );
    let mut at = 0;
    for (start, end) in cuts {
        out.push_str(&text[at..start]);
        out.push_str("\"\"");
        at = end;
    }
    out.push_str(&text[at..]);
    Ok((Some(out), Some(elided)))
}

/// Whether a JSON string (`raw`, quotes and escapes included) holds more
/// than `limit` bytes once read. An escape stands for at least one byte in
/// at most six, so only a string within that band is read to tell.
fn longer_than(raw: &str, limit: usize) -> bool {
    let inner = raw.len().saturating_sub(2);
    if inner <= limit {
        return false;
    }
    if inner > limit.saturating_mul(6) {
        return true;
    }
    serde_json::from_str::<std::borrow::Cow<str>>(raw).is_ok_and(|text| text.len() > limit)
}

pub(crate) fn raw(text: String) -> Result<Box<RawValue>, Error> {
    RawValue::from_string(text)
        .map_err(|e| Error::new(ErrorCode::Io, format!("a stored entry cannot be read: {e}")))
}

pub(crate) fn role_name(role: Role) -> &'static str {
    match role {
        Role::User => "user",
        Role::Assistant => "assistant",
    }
}

/// Cuts to at most `max` characters.
pub(crate) fn cut(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", text[..at].trim_end()),
        None => text.to_string(),
    }
}

/// The first non-empty line of the message's text blocks.
pub(crate) fn first_text_line(message: &Message) -> Option<String> {
    message.content.iter().find_map(|block| match block {
        Block::Text { text } => text
            .lines()
            .map(str::trim)
            .find(|l| !l.is_empty())
            .map(str::to_string),
        _ => None,
    })
}

/// What search finds a message by: its text, the names of the tools it
/// calls and the strings of their input (paths, commands, patterns).
/// Tool results are not indexed.
pub(crate) fn search_text(message: &Message) -> String {
    let mut out = String::new();
    for block in &message.content {
        match block {
            Block::Text { text } => push_line(&mut out, text),
            Block::ToolUse { name, input, .. } => {
                push_line(&mut out, name);
                for value in input.values() {
                    push_strings(&mut out, value);
                }
            }
            Block::ToolResult { .. } | Block::Image { .. } => {}
        }
    }
    out
}

fn push_line(out: &mut String, text: &str) {
    if text.trim().is_empty() {
        return;
    }
    if !out.is_empty() {
        out.push('\n');
    }
    out.push_str(text);
}

fn push_strings(out: &mut String, value: &Value) {
    match value {
        Value::String(s) => push_line(out, &cut(s, INDEXED_INPUT_CHARS)),
        Value::Array(values) => values.iter().for_each(|v| push_strings(out, v)),
        Value::Object(map) => map.values().for_each(|v| push_strings(out, v)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn titles_are_cut_by_characters() {
        assert_eq!(cut("héllo wörld", 5), "héllo…");
        assert_eq!(cut("short", 80), "short");
    }
}
