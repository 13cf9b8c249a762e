//! Secrets by inode: a hard link is another name for the same file, so
//! `cp -l .env notes.txt` makes `notes.txt` as secret as `.env`. The
//! policy judges a file with more than one link by the secret-like names
//! it shares its inode with ([`secret_name_of`]); the read-only profile
//! masks such a link as it masks the secret itself.

use corral_fs::secret::is_secret_like;
use corral_fs::walk::{ProjectWalk, Use, MAX_MASK_ENTRIES};
use corral_fs::ProjectRoot;
use std::os::unix::fs::MetadataExt;

/// A secret-like path of the project (relative) that is another name of
/// the file at `rel` (relative, links resolved), when that file has more
/// than one link; `None` for a file with one name, or none secret-like.
pub fn secret_name_of(root: &ProjectRoot, rel: &str) -> Option<String> {
    let meta = std::fs::symlink_metadata(root.path().join(rel)).ok()?;
    if !meta.is_file() || meta.nlink() < 2 {
        return None;
    }
    let inode = (meta.dev(), meta.ino());
    ProjectWalk::new(root.path(), Use::Links)
        .build()
        .flatten()
        .take(MAX_MASK_ENTRIES)
        .filter(|e| e.file_type().is_some_and(|t| t.is_file()))
        .filter_map(|e| {
            let rel = e.path().strip_prefix(root.path()).ok()?;
            let shown = rel.to_string_lossy().into_owned();
            is_secret_like(&shown).then_some((e, shown))
        })
        .find(|(e, _)| e.metadata().is_ok_and(|m| (m.dev(), m.ino()) == inode))
        .map(|(_, shown)| shown)
}
