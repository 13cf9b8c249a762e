//! `edit_file`: exact string replacement that keeps the file's bytes.
//!
//! A CRLF file stays CRLF (the model usually sends `\n`; both sides are
//! matched with LF and written back with CRLF), a BOM stays, the trailing
//! newline is whatever the replacement leaves.

use super::{
    base_of, check_base, check_write_size, read_regular, write_atomic, Expect, Fingerprint, Preview,
};
use crate::error::{Error, ErrorCode, Result};
use crate::root::{ProjectRoot, RelPath};
use crate::text::{decode, is_crlf, Text};
use serde::{Deserialize, Serialize};

/// Input of `edit_file`.
#[derive(Debug, Clone, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EditFileInput {
    /// File path relative to the project root.
    pub path: String,
    /// Exact text to replace, including whitespace and indentation. Must match once unless replace_all.
    pub old_string: String,
    /// The replacement text.
    pub new_string: String,
    /// Replace every occurrence instead of requiring exactly one (default false).
    #[serde(default)]
    pub replace_all: bool,
}

/// Output of `edit_file`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
pub struct EditFileOutput {
    pub path: String,
    pub replacements: usize,
    /// Unified diff of the change.
    pub diff: String,
}

/// Replaces text in a file: exactly the bytes [`preview_edit`] shows.
pub fn edit_file(root: &ProjectRoot, input: &EditFileInput) -> Result<EditFileOutput> {
    edit_file_over(root, input, None)
}

/// [`edit_file`], with `base` ([`Preview::base`] of the approved preview):
/// only of that very file, else `stale_file` and nothing written.
pub fn edit_file_over(
    root: &ProjectRoot,
    input: &EditFileInput,
    base: Option<&str>,
) -> Result<EditFileOutput> {
    let loaded = load(root, input)?;
    check_base(&loaded.shown, base, &loaded.base)?;
    let planned = plan(&loaded.shown, &loaded.text, input)?;
    write_atomic(
        root,
        &loaded.rel,
        &planned.bytes,
        &Expect::Version(loaded.fingerprint),
    )?;
    Ok(EditFileOutput {
        path: loaded.shown,
        replacements: planned.replacements,
        diff: planned.diff,
    })
}

/// What [`edit_file`] would write, without writing it: the same checks,
/// the same bytes, or the same error.
pub fn preview_edit(root: &ProjectRoot, input: &EditFileInput) -> Result<Preview> {
    let loaded = load(root, input)?;
    let planned = plan(&loaded.shown, &loaded.text, input)?;
    let before = String::from_utf8(loaded.text.into_bytes());
    let after = String::from_utf8(planned.bytes);
    match (before, after) {
        (Ok(before), Ok(after)) => Ok(Preview::new(loaded.shown, before, after, loaded.base)),
        // Both were decoded from or built of UTF-8 strings.
        _ => Err(Error::new(
            ErrorCode::Io,
            format!("the edit of `{}` could not be shown", loaded.shown),
        )),
    }
}

/// A file to edit, read and decoded once.
struct Loaded {
    rel: RelPath,
    shown: String,
    text: Text,
    fingerprint: Fingerprint,
    /// [`base_of`] its bytes.
    base: String,
}

/// The refusals of an edit that its input alone decides, before the file
/// is read or a checkpoint is taken.
pub fn refuse_edit(root: &ProjectRoot, input: &EditFileInput) -> Result<RelPath> {
    let rel = root.resolve(&input.path)?;
    let shown = rel.display();
    if input.old_string.is_empty() {
        return Err(Error::invalid_input("old_string is empty")
            .hint("To create or replace a whole file, use write_file."));
    }
    if input.old_string == input.new_string {
        return Err(Error::invalid_input(
            "old_string and new_string are the same; nothing would change",
        ));
    }
    check_write_size(&shown, input.new_string.len())?;
    if rel.is_git_internal() {
        return Err(super::git_protected(&shown));
    }
    Ok(rel)
}

/// Checks the input and reads the file it names.
fn load(root: &ProjectRoot, input: &EditFileInput) -> Result<Loaded> {
    let rel = refuse_edit(root, input)?;
    let shown = rel.display();
    let (bytes, fingerprint) = read_regular(root, &rel)?;
    let base = base_of(Some(&bytes));
    let text = decode(bytes, &shown)?;
    Ok(Loaded {
        rel,
        shown,
        text,
        fingerprint,
        base,
    })
}

/// An edit worked out on a file's text before anything is written.
struct Planned {
    /// The file's new bytes: BOM, line endings and all.
    bytes: Vec<u8>,
    replacements: usize,
    /// The diff the tool reports (of the text with CRLF read as LF, as the
    /// model sent it).
    diff: String,
}

/// The one place an edit is computed; writing and previewing both use it.
fn plan(shown: &str, text: &Text, input: &EditFileInput) -> Result<Planned> {
    let crlf = is_crlf(&text.body);
    let (body, old, new) = if crlf {
        (
            text.body.replace("\r\n", "\n"),
            input.old_string.replace("\r\n", "\n"),
            input.new_string.replace("\r\n", "\n"),
        )
    } else {
        (
            text.body.clone(),
            input.old_string.clone(),
            input.new_string.clone(),
        )
    };

    // Counted, not collected: a 1-byte old_string in a 64 MiB file would be
    // 64 million offsets. Only the lines an error lists are located.
    let count = body.matches(old.as_str()).count();
    if count == 0 {
        return Err(no_match(shown, &body, &old));
    }
    if count > 1 && !input.replace_all {
        let starts: Vec<usize> = body
            .match_indices(old.as_str())
            .take(MAX_LISTED_LINES)
            .map(|(at, _)| at)
            .collect();
        let lines = lines_of(&body, &starts);
        let mut list = lines
            .iter()
            .take(MAX_LISTED_LINES)
            .map(usize::to_string)
            .collect::<Vec<_>>()
            .join(", ");
        if count > MAX_LISTED_LINES {
            list.push_str(", …");
        }
        return Err(Error::new(
            ErrorCode::AmbiguousMatch,
            format!("old_string matches {count} times in `{shown}` (lines {list})"),
        )
        .detail("path", shown)
        .detail("count", count)
        .detail("lines", lines));
    }
    // The size of the result before building it: a short old_string
    // replaced everywhere by a long new_string could ask for gigabytes.
    let projected =
        (body.len() - count * old.len()).saturating_add(count.saturating_mul(new.len()));
    check_write_size(shown, projected)?;
    let replaced = body.replace(old.as_str(), &new);
    let diff = crate::diff::unified(shown, &body, &replaced);
    let out_body = if crlf {
        replaced.replace('\n', "\r\n")
    } else {
        replaced
    };
    let bytes = Text {
        bom: text.bom,
        body: out_body,
    }
    .into_bytes();
    check_write_size(shown, bytes.len())?;
    Ok(Planned {
        bytes,
        replacements: count,
        diff,
    })
}

/// Most match lines an `ambiguous_match` lists.
const MAX_LISTED_LINES: usize = 50;

/// The 1-based line of each of `starts` (ascending byte offsets), in one
/// pass over the text.
fn lines_of(body: &str, starts: &[usize]) -> Vec<usize> {
    let mut lines = Vec::with_capacity(starts.len().min(MAX_LISTED_LINES));
    let (mut line, mut counted) = (1, 0);
    for &at in starts.iter().take(MAX_LISTED_LINES) {
        line += body.as_bytes()[counted..at]
            .iter()
            .filter(|&&b| b == b'\n')
            .count();
        counted = at;
        lines.push(line);
    }
    lines
}

/// A miss: say where the first line of `old_string`, trimmed, does appear,
/// since the usual cause is different indentation or a stale read.
fn no_match(shown: &str, body: &str, old: &str) -> Error {
    let probe = old
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("");
    let similar: Vec<usize> = if probe.is_empty() {
        Vec::new()
    } else {
        body.lines()
            .enumerate()
            .filter(|(_, line)| line.contains(probe))
            .map(|(i, _)| i + 1)
            .take(20)
            .collect()
    };
    let mut err = Error::new(
        ErrorCode::NoMatch,
        format!("old_string was not found in `{shown}`"),
    )
    .detail("path", shown);
    if !similar.is_empty() {
        let list = similar
            .iter()
            .map(usize::to_string)
            .collect::<Vec<_>>()
            .join(", ");
        err = err
            .hint(format!(
                "Its first line appears (ignoring indentation) on lines {list}; read those lines again and copy old_string exactly."
            ))
            .detail("similar_lines", similar);
    }
    err
}
