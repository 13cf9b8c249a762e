//! What a restore checks before it removes or writes anything, beside its
//! objects (`verify`): that every folder it works in is still a folder
//! inside the project, and that the disk has room for what it writes.

use super::compare::{display, Change};
use super::object::folder_fd;
use super::tree::Kind;
use corral_fs::error::{Error, ErrorCode, Result};
use corral_fs::root::ProjectRoot;
use std::collections::{BTreeSet, HashSet};
use std::path::{Component, Path, PathBuf};

/// Every folder the changes work in, up to where the restore makes new
/// folders, opens as a folder beneath the root without a symlink in any
/// component (a folder replaced by a link since the checkpoint before the
/// restore leads nowhere).
pub(crate) fn paths(root: &ProjectRoot, changes: &[Change]) -> Result<()> {
    let made: HashSet<&Path> = changes
        .iter()
        .filter(|c| {
            matches!(c.to, Some(Kind::Dir { .. })) && !matches!(c.from, Some(Kind::Dir { .. }))
        })
        .map(|c| c.path.as_path())
        .collect();
    let mut folders: BTreeSet<PathBuf> = BTreeSet::new();
    for change in changes {
        if change
            .path
            .components()
            .any(|c| !matches!(c, Component::Normal(_)))
        {
            return Err(outside(
                &change.path,
                "it is not a plain path beneath the root",
            ));
        }
        // The deepest folder that must exist already: below the first one
        // the restore makes, everything is made by it.
        let mut existing = PathBuf::new();
        if let Some(parent) = change.path.parent() {
            for part in parent.components() {
                let next = existing.join(part);
                if made.contains(next.as_path()) {
                    break;
                }
                existing = next;
            }
        }
        folders.insert(existing);
    }
    for folder in folders {
        let at = if folder.as_os_str().is_empty() {
            Path::new(".")
        } else {
            folder.as_path()
        };
        match folder_fd(root.dir(), at) {
            Ok(_) => {}
            // Made since, by a folder above it that is made.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(outside(&folder, &e.to_string())),
        }
    }
    Ok(())
}

fn outside(path: &Path, why: &str) -> Error {
    let shown = display(path);
    Error::new(
        ErrorCode::PathOutsideRoot,
        format!("`{shown}` is no longer a folder inside the project ({why}); nothing was changed"),
    )
    .hint(
        "Something changed the project during the restore; look at that path, then restore again.",
    )
    .detail("path", shown)
}

/// Room kept free beyond what a restore writes: 1 MiB and a sixteenth.
fn margin(need: u64) -> u64 {
    (1 << 20) + need / 16
}

/// The disk of the project has room for every file the restore writes
/// (under a temp name beside the old one, which goes only at the rename),
/// less what it removes first, with a margin; and inodes for each entry.
pub(crate) fn space(root: &ProjectRoot, changes: &[Change]) -> Result<()> {
    let Ok(disk) = folder_fd(root.dir(), Path::new("."))
        .and_then(|fd| rustix::fs::fstatvfs(&fd).map_err(std::io::Error::from))
    else {
        // No answer (a file system that does not say): the restore is
        // still rolled back if it runs out.
        return Ok(());
    };
    let block = disk.f_frsize.max(512);
    let blocks = |size: u64| size.div_ceil(block) * block;
    let (mut written, mut freed, mut entries) = (0u64, 0u64, 0u64);
    for change in changes {
        match &change.to {
            Some(Kind::File { size, .. }) => {
                written += blocks(*size);
                entries += 1;
            }
            Some(Kind::Symlink { target }) => {
                written += blocks(target.len() as u64);
                entries += 1;
            }
            Some(Kind::Dir { .. }) if !matches!(change.from, Some(Kind::Dir { .. })) => {
                written += block;
                entries += 1;
            }
            _ => {}
        }
        if change.to.is_none() {
            if let Some(Kind::File { size, .. }) = &change.from {
                freed += blocks(*size);
            }
        }
    }
    let need = written.saturating_sub(freed);
    let free = disk.f_bavail.saturating_mul(block);
    if need > 0 && free < need + margin(need) {
        return Err(Error::new(
            ErrorCode::Io,
            format!(
                "not enough space to restore: it writes {} and the project's disk has {} free (a margin of {} is kept); nothing was changed",
                mib(need),
                mib(free),
                mib(margin(need))
            ),
        )
        .hint("Free some space on the project's disk, or restore one path at a time.")
        .retryable(true)
        .detail("needed_bytes", need)
        .detail("free_bytes", free));
    }
    // A file system that counts inodes (tmpfs, ext4) can run out of them
    // with space to spare.
    if disk.f_files > 0 && disk.f_favail < entries + 64 {
        return Err(Error::new(
            ErrorCode::Io,
            format!(
                "not enough space to restore: it makes {entries} files and folders and the project's disk has room for {} more; nothing was changed",
                disk.f_favail
            ),
        )
        .hint("Free some space on the project's disk, or restore one path at a time.")
        .retryable(true));
    }
    Ok(())
}

fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / (1024.0 * 1024.0))
}
