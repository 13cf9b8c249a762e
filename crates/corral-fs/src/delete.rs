//! `delete_file`: remove one file (or symlink), never a folder.

use super::{
    check_base, git_protected, is_directory, on_disk, race_window, stale, text_of, Fingerprint,
    Preview,
};
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
    let rel = refuse_delete(root, input)?;
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

/// The path to delete, refused if it is the root or inside `.git/`: what
/// refuses a deletion before a checkpoint is taken.
pub fn refuse_delete(root: &ProjectRoot, input: &DeleteFileInput) -> Result<RelPath> {
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
    let rel = refuse_delete(root, input)?;
    let shown = rel.display();
    let meta = root
        .dir()
        .symlink_metadata(rel.as_path())
        .map_err(|e| Error::from_io(&e, &shown))?;
    if meta.is_dir() {
        return Err(is_directory(&shown).hint("delete_file removes files only."));
    }
    let mut expect = None;
    if base.is_some() {
        let now = if meta.file_type().is_symlink() {
            "a symlink".to_string()
        } else {
            let now = on_disk(root, &rel)?;
            expect = now.fingerprint;
            now.base
        };
        check_base(&shown, base, &now)?;
    }
    race_window();
    // Last look before the unlink: the file hashed must still be the one
    // there, not one written (or put in its place) since.
    if let Some(expected) = expect {
        match root.dir().symlink_metadata(rel.as_path()) {
            Ok(meta) if Fingerprint::of(&meta) == expected => {}
            _ => return Err(stale(&shown)),
        }
    }
    root.dir()
        .remove_file(rel.as_path())
        .map_err(|e| Error::from_io(&e, &shown))?;
    // A temp file a killed write left beside it goes too.
    let parent = rel.parent();
    let folder = if parent.is_root() {
        std::path::Path::new(".")
    } else {
        parent.as_path()
    };
    if let Ok(dir) = root.dir().open_dir(folder) {
        crate::temp::sweep(&dir);
    }
    Ok(DeleteFileOutput { path: shown })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::disallowed_methods)]
    use super::*;
    use crate::error::ErrorCode;
    use crate::RACE;

    #[test]
    fn a_file_written_after_it_was_hashed_is_not_deleted() {
        // What lands between the hash and the unlink: a write in place (the
        // bytes the base matched are gone) or a rename of the same bytes
        // over it (a new file).
        for change in ["write", "rename"] {
            let tmp = tempfile::tempdir().unwrap();
            let root = ProjectRoot::open(tmp.path()).unwrap();
            let at = tmp.path().join("f.txt");
            std::fs::write(&at, "old\n").unwrap();
            let base = crate::base_of(Some(b"old\n"));
            let (path, spare) = (at.clone(), tmp.path().join("g.txt"));
            RACE.with(|race| {
                *race.borrow_mut() = Some(Box::new(move || {
                    if change == "write" {
                        std::fs::write(&path, "theirs, longer\n").unwrap();
                    } else {
                        std::fs::write(&spare, "old\n").unwrap();
                        std::fs::rename(&spare, &path).unwrap();
                    }
                }))
            });
            let input = DeleteFileInput {
                path: "f.txt".into(),
            };
            let err = delete_file_over(&root, &input, Some(&base)).unwrap_err();
            assert_eq!(err.code, ErrorCode::StaleFile, "{change}");
            assert!(at.exists(), "{change}");
        }
    }
}
