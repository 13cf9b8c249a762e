//! `write_file`: create or replace a whole file, atomically.

use super::{check_write_size, current_text, git_protected, write_atomic, Preview};
use crate::error::Result;
use crate::root::ProjectRoot;
use serde::{Deserialize, Serialize};

/// Input of `write_file`.
#[derive(Debug, Clone, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WriteFileInput {
    /// File path relative to the project root. Missing parent folders are created.
    pub path: String,
    /// The complete new content of the file.
    pub content: String,
}

/// Output of `write_file`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
pub struct WriteFileOutput {
    pub path: String,
    pub bytes: usize,
    /// The file did not exist before.
    pub created: bool,
}

/// Writes a whole file.
pub fn write_file(root: &ProjectRoot, input: &WriteFileInput) -> Result<WriteFileOutput> {
    let rel = root.resolve(&input.path)?;
    let shown = rel.display();
    check_write_size(&shown, input.content.len())?;
    let created = write_atomic(root, &rel, input.content.as_bytes(), None)?;
    Ok(WriteFileOutput {
        path: shown,
        bytes: input.content.len(),
        created,
    })
}

/// What [`write_file`] would change: the current text against `content`.
/// The write's own refusals (size, `.git/`) come first; a current file
/// that is not text cannot be shown and is an error here, though the write
/// would replace it.
pub fn preview_write(root: &ProjectRoot, input: &WriteFileInput) -> Result<Preview> {
    let rel = root.resolve(&input.path)?;
    let shown = rel.display();
    check_write_size(&shown, input.content.len())?;
    if rel.is_git_internal() {
        return Err(git_protected(&shown));
    }
    let before = current_text(root, &rel)?.unwrap_or_default();
    Ok(Preview::new(shown, before, input.content.clone()))
}
