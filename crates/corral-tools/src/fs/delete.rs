//! `delete_file`: remove one file (or symlink), never a folder.

use super::{git_protected, is_directory};
use crate::error::{Error, Result};
use crate::root::ProjectRoot;
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

/// Deletes a file. A symlink is removed itself; its target is untouched.
pub fn delete_file(root: &ProjectRoot, input: &DeleteFileInput) -> Result<DeleteFileOutput> {
    let rel = root.resolve(&input.path)?;
    let shown = rel.display();
    if rel.is_root() {
        return Err(is_directory(&shown));
    }
    if rel.is_git_internal() || root.canonical(&rel.parent())?.is_git_internal() {
        return Err(git_protected(&shown));
    }
    let meta = root
        .dir()
        .symlink_metadata(rel.as_path())
        .map_err(|e| Error::from_io(&e, &shown))?;
    if meta.is_dir() {
        return Err(is_directory(&shown).hint("delete_file removes files only."));
    }
    root.dir()
        .remove_file(rel.as_path())
        .map_err(|e| Error::from_io(&e, &shown))?;
    Ok(DeleteFileOutput { path: shown })
}
