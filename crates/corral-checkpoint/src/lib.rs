//! Checkpoints: a snapshot of the project before every change the agent
//! makes (a write, an edit, a delete, a command that is not read-only), so
//! that any of them can be undone, and a restore that puts the whole
//! project, or one path, back the way a snapshot has it, or undoes one
//! call alone (the paths it changed, and only those).
//!
//! The store is a folder of our own outside the project (the app's data
//! folder, or `corral-cli --store`), one per project:
//!
//! ```text
//! objects/ab/cdef…   blobs and trees, named by the blake3 hash of their bytes
//! snapshots/ID.json  one per checkpoint: id, time, tool, label, turn, root tree
//! stat-cache         path → (size, mtime, ctime, inode, hash) of the last scan
//! journal.json       a restore under way (rolled forward at the next open)
//! journal-unfinished-MS.json   one that could not be finished, set aside
//! lock               flock: one writer at a time, across processes
//! tmp/               temp files, renamed into place (swept under the lock)
//! ```
//!
//! ```
//! use corral_checkpoint::{NewCheckpoint, Store};
//! use corral_fs::ProjectRoot;
//!
//! let project = tempfile::tempdir()?;
//! let data = tempfile::tempdir()?;
//! std::fs::write(project.path().join("a.txt"), "one\n")?;
//! let root = ProjectRoot::open(project.path())?;
//! let store = Store::for_project(data.path(), &root)?;
//! let before = store.checkpoint(&root, NewCheckpoint::manual("before"))?;
//! std::fs::write(project.path().join("a.txt"), "two\n")?;
//! std::fs::write(project.path().join("new.txt"), "new\n")?;
//! let plan = store.diff(&root, &before.id, None)?;
//! assert_eq!((plan.counts.modified, plan.counts.removed), (1, 1));
//! store.restore(&root, &before.id, None)?;
//! assert_eq!(std::fs::read_to_string(project.path().join("a.txt"))?, "one\n");
//! assert!(!project.path().join("new.txt").exists());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod collect;
mod compare;
#[cfg(test)]
mod fault_tests;
mod hook;
mod journal;
mod object;
mod preflight;
mod restore;
mod rewind;
mod scan;
mod selection;
mod store;
mod tree;
mod verify;

pub use compare::{ChangeCounts, ChangeStatus, EntryKind, FileChange};
pub use hook::{label, Hook};
pub use restore::Skipped;
pub use verify::{Damaged, Verified};

use cap_std::fs::Dir;
use corral_fs::root::ProjectRoot;
use object::Hash;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The default cap on a project's store: past it the oldest checkpoints go.
pub const DEFAULT_CAP_BYTES: u64 = 2 * 1024 * 1024 * 1024;

/// One checkpoint, as listed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
pub struct Checkpoint {
    /// Increasing with time; what `diff` and `restore` take.
    pub id: String,
    /// Milliseconds since the Unix epoch.
    #[ts(type = "number")]
    pub time: u64,
    /// The tool whose call it was taken before (`write_file`, `exec_shell`,
    /// ...), `restore` before a restore, `manual` when asked for.
    pub tool: String,
    /// What the call was about: its path, or its command line.
    pub label: String,
    /// The user turn of the call (the app's turn id).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub turn: Option<String>,
    /// The tool call (the model's tool-use id).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub call_id: Option<String>,
    /// The first checkpoint of its turn: the state before the turn changed anything.
    pub turn_start: bool,
    /// Files (and links) in the snapshot.
    pub files: usize,
    /// What changed since the checkpoint before this one.
    pub files_changed: ChangeCounts,
    /// Files over 64 MiB: recorded, not kept; a restore says so.
    #[serde(default)]
    pub too_large: Vec<String>,
}

/// A checkpoint as stored: what is listed, and its root tree.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Record {
    #[serde(flatten)]
    info: Checkpoint,
    tree: String,
}

/// What a new checkpoint is about.
#[derive(Debug, Clone, Default)]
pub struct NewCheckpoint {
    pub tool: String,
    pub label: String,
    pub turn: Option<String>,
    pub call_id: Option<String>,
}

impl NewCheckpoint {
    /// A checkpoint asked for by name, not before a tool call.
    pub fn manual(label: &str) -> NewCheckpoint {
        NewCheckpoint {
            tool: "manual".to_string(),
            label: label.to_string(),
            ..NewCheckpoint::default()
        }
    }
}

/// What differs between two states of the project.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
pub struct Comparison {
    /// A checkpoint id, or `current` for the project as it is.
    pub from: String,
    pub to: String,
    /// The one path compared, when not the whole project.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub path: Option<String>,
    pub counts: ChangeCounts,
    pub changes: Vec<FileChange>,
    /// For a restore: what it will leave as it is, and why.
    pub skipped: Vec<Skipped>,
}

/// What a restore did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
pub struct Restored {
    /// The checkpoint restored.
    pub restored: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub path: Option<String>,
    /// The checkpoint taken just before: restoring it undoes this restore.
    pub undo: String,
    pub counts: ChangeCounts,
    pub changes: Vec<FileChange>,
    pub skipped: Vec<Skipped>,
}

/// What undoing one call would do (`Store::call_undo_diff`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
pub struct CallUndo {
    /// The checkpoint taken just before the call.
    pub checkpoint: String,
    /// Where the call's changes end: the next checkpoint, or `current` (no
    /// checkpoint was taken after it).
    pub until: String,
    /// What the call changed (from `checkpoint` to `until`): what the undo
    /// puts back, and nothing else.
    pub paths: Vec<String>,
    /// Of those, the ones changed again after `until` (by a later call or by
    /// hand): the undo loses those later changes too.
    pub changed_later: Vec<String>,
    /// What the undo will change: the project as it is against the
    /// checkpoint, for those paths only.
    pub plan: Comparison,
}

/// What a collection did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Collected {
    /// Checkpoints dropped, oldest first.
    pub dropped: Vec<String>,
    /// Objects removed, and the bytes the store holds now.
    pub objects_removed: usize,
    pub bytes: u64,
}

/// One project's checkpoint store.
#[derive(Debug)]
pub struct Store {
    path: PathBuf,
    dir: Dir,
    cap: u64,
    /// What the store had to do that someone should know of (a journal
    /// set aside), until a host takes it ([`Store::take_warnings`]).
    warnings: std::sync::Mutex<Vec<String>>,
}

/// The folder of `root`'s store under `base` (a data folder):
/// `base/checkpoints/NAME-HASH`, the hash of the root's real path.
pub fn store_path(base: &Path, root: &ProjectRoot) -> PathBuf {
    let name: String = root
        .name()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .take(40)
        .collect();
    let hash = Hash::of(root.path().as_os_str().as_encoded_bytes()).hex();
    base.join("checkpoints")
        .join(format!("{name}-{}", &hash[..16]))
}

/// The user's data folder, shared with the app (Tauri's app data folder on
/// Linux): `$XDG_DATA_HOME/dev.corral.desktop`, else
/// `~/.local/share/dev.corral.desktop`.
pub fn default_data_dir() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_DATA_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| {
            std::env::var_os("HOME")
                .map(PathBuf::from)
                .filter(|p| p.is_absolute())
                .map(|home| home.join(".local/share"))
        })?;
    Some(base.join("dev.corral.desktop"))
}
