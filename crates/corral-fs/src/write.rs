//! `write_file`: create or replace a whole file, atomically.

use super::{
    check_base, check_write_size, git_protected, is_directory, on_disk, text_of, write_atomic,
    Expect, Preview,
};
use crate::error::Result;
use crate::root::{ProjectRoot, RelPath};
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
    write_file_over(root, input, None)
}

/// [`write_file`], with `base` ([`Preview::base`] of the approved preview):
/// only over that very file, else `stale_file` and nothing written.
pub fn write_file_over(
    root: &ProjectRoot,
    input: &WriteFileInput,
    base: Option<&str>,
) -> Result<WriteFileOutput> {
    let rel = refuse_write(root, input)?;
    let shown = rel.display();
    // With a base, the file must still be the one shown: the same version,
    // or still nothing at all for a new file.
    let expect = match base {
        Some(_) => {
            let now = on_disk(root, &rel)?;
            check_base(&shown, base, &now.base)?;
            now.fingerprint.map_or(Expect::Nothing, Expect::Version)
        }
        None => Expect::Anything,
    };
    let created = write_atomic(root, &rel, input.content.as_bytes(), &expect)?;
    Ok(WriteFileOutput {
        path: shown,
        bytes: input.content.len(),
        created,
    })
}

/// The refusals of a write that its input alone decides (its size, the
/// root, `.git/`), before anything is read or a checkpoint is taken.
pub fn refuse_write(root: &ProjectRoot, input: &WriteFileInput) -> Result<RelPath> {
    let rel = root.resolve(&input.path)?;
    let shown = rel.display();
    check_write_size(&shown, input.content.len())?;
    if rel.is_root() {
        return Err(is_directory(&shown));
    }
    if rel.is_git_internal() {
        return Err(git_protected(&shown));
    }
    Ok(rel)
}

/// What [`write_file`] would change: the current text against `content`.
/// The write's own refusals (size, `.git/`) come first; a current file
/// that is not text cannot be shown and is an error here, though the write
/// would replace it.
pub fn preview_write(root: &ProjectRoot, input: &WriteFileInput) -> Result<Preview> {
    let rel = refuse_write(root, input)?;
    let shown = rel.display();
    let now = on_disk(root, &rel)?;
    let before = text_of(&shown, now.bytes)?;
    Ok(Preview::new(shown, before, input.content.clone(), now.base))
}
