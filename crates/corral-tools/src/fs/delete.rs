//! `delete_file`: remove one file (or symlink), never a folder.

use super::{check_base, git_protected, is_directory, on_disk, text_of, Preview};
use crate::error::{Error, Result};
use crate::root::{ProjectRoot, RelPath};
use serde::{Deserialize, Serialize};

/// Input of `delete_file`.
#[derive(Debug, Clone, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DeleteFileInput {
    /// File path relative to the project root. Folders are refused.
    pub path: String,
}

/// Output of `delete_file`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
pub struct DeleteFileOutput {
    pub path: String,
}

/// What [`delete_file`] would remove: the file's text against nothing. A
/// symlink has no text of its own (deleting it leaves its target), so it
/// has no preview; nor has a file that is not text.
pub fn preview_delete(root: &ProjectRoot, input: &DeleteFileInput) -> Result<Preview> {
    let rel = checked(root, input)?;
    let shown = rel.display();
    let meta = root
        .dir()
        .symlink_metadata(rel.as_path())
        .map_err(|e| Error::from_io(&e, &shown))?;
    if meta.file_type().is_symlink() {
        return Err(Error::invalid_input(format!(
            "`{shown}` is a symlink: deleting it removes the link, not what it points to"
        ))
        .detail("path", shown));
    }
    if meta.is_dir() {
        return Err(is_directory(&shown).hint("delete_file removes files only."));
    }
    let now = on_disk(root, &rel)?;
    let before = text_of(&shown, now.bytes)?;
    Ok(Preview::new(shown, before, String::new(), now.base))
}

/// The path to delete, refused if it is the root or inside `.git/`.
fn checked(root: &ProjectRoot, input: &DeleteFileInput) -> Result<RelPath> {
    let rel = root.resolve(&input.path)?;
    let shown = rel.display();
    if rel.is_root() {
        return Err(is_directory(&shown));
    }
    if rel.is_git_internal() || root.canonical(&rel.parent())?.is_git_internal() {
        return Err(git_protected(&shown));
    }
    Ok(rel)
}

/// Deletes a file. A symlink is removed itself; its target is untouched.
pub fn delete_file(root: &ProjectRoot, input: &DeleteFileInput) -> Result<DeleteFileOutput> {
    delete_file_over(root, input, None)
}

/// [`delete_file`], with `base` ([`Preview::base`] of the approved
/// preview): only that very file, else `stale_file` and nothing removed.
/// A symlink has no preview, so a base never matches one.
pub fn delete_file_over(
    root: &ProjectRoot,
    input: &DeleteFileInput,
    base: Option<&str>,
) -> Result<DeleteFileOutput> {
    let rel = checked(root, input)?;
    let shown = rel.display();
    let meta = root
        .dir()
        .symlink_metadata(rel.as_path())
        .map_err(|e| Error::from_io(&e, &shown))?;
    if meta.is_dir() {
        return Err(is_directory(&shown).hint("delete_file removes files only."));
    }
    if base.is_some() {
        let now = if meta.file_type().is_symlink() {
            "a symlink".to_string()
        } else {
            on_disk(root, &rel)?.base
        };
        check_base(&shown, base, &now)?;
    }
    root.dir()
        .remove_file(rel.as_path())
        .map_err(|e| Error::from_io(&e, &shown))?;
    Ok(DeleteFileOutput { path: shown })
}
