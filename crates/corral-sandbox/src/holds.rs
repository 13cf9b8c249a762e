//! The mount points that hold absent agent configuration
//! (`namespace::AGENT_CONFIG`) and, for an approved git, the absent
//! configuration names of its own folder (`namespace::GIT_HELD`): bwrap
//! makes an empty folder (or file) to mount the read-only hold on, and
//! this module takes it
//! away after the last command of this process that could hold it, so
//! the user's project is left as it was.
//!
//! A command that holds a name keeps the mount point only in its own
//! mount namespace; removing the folder from outside while one runs
//! would detach that command's hold (the kernel lets a mount point in
//! another namespace be removed and unmounts it there). So every command
//! that writes the project counts itself in before it starts, a present
//! name included (it may be a mount point another command made), and the
//! folder goes only when the count is back to nothing, only if this
//! process made it, and only while empty (`rmdir`). A server stays
//! counted in while it runs (its `ServerFolder` keeps its count).
//!
//! A background command holds every absent auto-run name of the root
//! (`.vscode`, `.mcp.json`...) for its whole run. Every command that
//! starts meanwhile finds those mount points present and binds them
//! read-only: it counts itself in their holds too (joins them), so they
//! stay while it runs.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

/// The names held, and by how many running commands.
#[derive(Default)]
struct Hold {
    users: usize,
    /// This process made the folder (the name was absent when counted in).
    made: bool,
}

static HOLDS: Mutex<BTreeMap<PathBuf, Hold>> = Mutex::new(BTreeMap::new());

/// One command's count in the holds of its project; counted out when
/// dropped.
pub(crate) struct Held(Vec<PathBuf>);

impl Held {
    /// Counts a command in the holds of `paths` (in the project or its
    /// git dir), and in every hold of a name of the project's `root` that
    /// a command running now made (a background command's).
    pub(crate) fn take_paths(root: &Path, mut paths: Vec<PathBuf>) -> Held {
        let mut holds = HOLDS.lock().unwrap_or_else(PoisonError::into_inner);
        let joined: Vec<PathBuf> = holds
            .keys()
            .filter(|held| held.parent() == Some(root) && !paths.contains(held))
            .cloned()
            .collect();
        paths.extend(joined);
        for path in &paths {
            let hold = holds.entry(path.clone()).or_default();
            if hold.users == 0 {
                hold.made = path.symlink_metadata().is_err();
            }
            hold.users += 1;
        }
        Held(paths)
    }
}

/// Whether a command running now holds `path` (a mount point may be
/// there that must not be removed from outside).
pub(crate) fn held(path: &Path) -> bool {
    HOLDS
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .get(path)
        .is_some_and(|hold| hold.users > 0)
}

impl Drop for Held {
    fn drop(&mut self) {
        let mut holds = HOLDS.lock().unwrap_or_else(PoisonError::into_inner);
        for path in &self.0 {
            let Some(hold) = holds.get_mut(path) else {
                continue;
            };
            hold.users = hold.users.saturating_sub(1);
            if hold.users == 0 {
                if hold.made {
                    // Only an empty folder (or file, a held git `config`)
                    // goes; one the user filled stays.
                    match path.symlink_metadata() {
                        Ok(m) if m.is_file() && m.len() == 0 => {
                            // The empty mount point bwrap made (in git's
                            // folder, or at the root for a background
                            // command), never a file anyone wrote.
                            #[allow(clippy::disallowed_methods)]
                            let _ = std::fs::remove_file(path);
                        }
                        Ok(m) if m.is_dir() => {
                            let _ = std::fs::remove_dir(path);
                        }
                        _ => {}
                    }
                }
                holds.remove(path);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::disallowed_methods)]
    use super::*;

    #[test]
    fn a_made_folder_goes_with_the_last_command_and_only_if_empty() {
        let dir = tempfile::tempdir().unwrap();
        let held = dir.path().join(".claude");
        let first = Held::take_paths(dir.path(), vec![dir.path().join(".claude")]);
        std::fs::create_dir(&held).unwrap();
        let second = Held::take_paths(dir.path(), vec![dir.path().join(".claude")]);
        drop(first);
        assert!(held.is_dir(), "a command still holds it");
        drop(second);
        assert!(!held.exists());

        let filled = Held::take_paths(dir.path(), vec![dir.path().join(".claude")]);
        std::fs::create_dir(&held).unwrap();
        std::fs::write(held.join("settings.json"), "{}").unwrap();
        drop(filled);
        assert!(held.join("settings.json").exists());
    }

    #[test]
    fn a_folder_present_before_stays() {
        let dir = tempfile::tempdir().unwrap();
        let own = dir.path().join(".codex");
        std::fs::create_dir(&own).unwrap();
        drop(Held::take_paths(
            dir.path(),
            vec![dir.path().join(".codex")],
        ));
        assert!(own.is_dir());
    }
}
