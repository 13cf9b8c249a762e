//! What differs between two snapshots (or a snapshot and the project as it
//! is): only subtrees whose hashes differ are opened, so comparing two
//! snapshots of a large project that differ in one file reads a handful of
//! trees.

use super::object::{self, Hash};
use super::scan::Scan;
use super::tree::{Kind, Tree};
use cap_fs_ext::{FollowSymlinks, OpenOptionsFollowExt};
use cap_std::fs::{Dir, OpenOptions};
use corral_fs::error::Result;
use corral_fs::root::ProjectRoot;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// Reads trees and blobs: those of a scan first (a dry run keeps its own
/// in memory and reads blobs from the project), then the store.
pub(crate) struct Loader<'a> {
    pub store: &'a Dir,
    pub scan: Option<&'a Scan>,
    pub root: Option<&'a ProjectRoot>,
}

impl Loader<'_> {
    pub fn tree(&self, hash: &Hash) -> Result<Cow<'_, Tree>> {
        if let Some(tree) = self.scan.and_then(|scan| scan.trees.get(hash)) {
            return Ok(Cow::Borrowed(tree));
        }
        Ok(Cow::Owned(Tree::decode(&object::get(self.store, hash)?)?))
    }

    pub fn blob(&self, hash: &Hash) -> Result<Vec<u8>> {
        match object::get(self.store, hash) {
            Ok(bytes) => Ok(bytes),
            Err(e) => {
                let (Some(scan), Some(root)) = (self.scan, self.root) else {
                    return Err(e);
                };
                let Some(path) = scan.disk.get(hash) else {
                    return Err(e);
                };
                let mut options = OpenOptions::new();
                options.read(true).follow(FollowSymlinks::No);
                let mut bytes = Vec::new();
                root.dir()
                    .open_with(path, &options)
                    .and_then(|mut f| f.read_to_end(&mut bytes))
                    .map_err(|_| e)?;
                Ok(bytes)
            }
        }
    }
}

/// One difference: what is at `path` on each side (`None`: nothing).
#[derive(Debug, Clone)]
pub(crate) struct Change {
    pub path: PathBuf,
    pub from: Option<Kind>,
    pub to: Option<Kind>,
}

/// Every difference between two trees, parents before their children.
/// Ignored entries on either side are not compared.
pub(crate) fn changes(loader: &Loader, from: &Hash, to: &Hash) -> Result<Vec<Change>> {
    Ok(changes_and_ignored(loader, from, to)?.0)
}

/// The differences, and apart from them the ignored entries that differ:
/// one side ignored (recorded by name, nothing kept) and the other not the
/// same. A restore leaves those as they are.
pub(crate) fn changes_and_ignored(
    loader: &Loader,
    from: &Hash,
    to: &Hash,
) -> Result<(Vec<Change>, Vec<Change>)> {
    let mut out = Vec::new();
    let mut ignored = Vec::new();
    if from != to {
        diff_trees(
            loader,
            Path::new(""),
            Some(from),
            Some(to),
            &mut out,
            &mut ignored,
        )?;
    }
    Ok((out, ignored))
}

fn diff_trees(
    loader: &Loader,
    at: &Path,
    from: Option<&Hash>,
    to: Option<&Hash>,
    out: &mut Vec<Change>,
    ignored: &mut Vec<Change>,
) -> Result<()> {
    let empty = Tree::default();
    let from_tree = match from {
        Some(h) => loader.tree(h)?,
        None => Cow::Borrowed(&empty),
    };
    let to_tree = match to {
        Some(h) => loader.tree(h)?,
        None => Cow::Borrowed(&empty),
    };
    let (a, b) = (&from_tree.entries, &to_tree.entries);
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        let (old, new) = match (a.get(i), b.get(j)) {
            (Some(x), Some(y)) if x.name == y.name => {
                i += 1;
                j += 1;
                (Some(x), Some(y))
            }
            (Some(x), Some(y)) if x.name < y.name => {
                i += 1;
                (Some(x), None)
            }
            (Some(_), Some(y)) => {
                j += 1;
                (None, Some(y))
            }
            (Some(x), None) => {
                i += 1;
                (Some(x), None)
            }
            (None, Some(y)) => {
                j += 1;
                (None, Some(y))
            }
            (None, None) => break,
        };
        let name = old.or(new).map(|e| e.name.as_slice()).unwrap_or_default();
        let path = at.join(std::ffi::OsStr::from_bytes(name));
        let old = old.map(|e| &e.kind);
        let new = new.map(|e| &e.kind);
        if old == new {
            continue;
        }
        if matches!(old, Some(Kind::Ignored)) || matches!(new, Some(Kind::Ignored)) {
            ignored.push(Change {
                path,
                from: old.cloned(),
                to: new.cloned(),
            });
            continue;
        }
        match (old, new) {
            (Some(Kind::Dir { mode: m1, hash: h1 }), Some(Kind::Dir { mode: m2, hash: h2 })) => {
                if m1 != m2 {
                    out.push(Change {
                        path: path.clone(),
                        from: old.cloned(),
                        to: new.cloned(),
                    });
                }
                if h1 != h2 {
                    diff_trees(loader, &path, Some(h1), Some(h2), out, ignored)?;
                }
            }
            _ => {
                // A folder on one side only: its whole content is removed
                // (listed before the folder) or added (listed after it).
                if let Some(Kind::Dir { hash, .. }) = old {
                    diff_trees(loader, &path, Some(hash), None, out, ignored)?;
                }
                out.push(Change {
                    path: path.clone(),
                    from: old.cloned(),
                    to: new.cloned(),
                });
                if let Some(Kind::Dir { hash, .. }) = new {
                    diff_trees(loader, &path, None, Some(hash), out, ignored)?;
                }
            }
        }
    }
    Ok(())
}

/// Added, modified and removed files (and links; folders are not counted).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
pub struct ChangeCounts {
    pub added: usize,
    pub modified: usize,
    pub removed: usize,
}

impl ChangeCounts {
    pub fn total(&self) -> usize {
        self.added + self.modified + self.removed
    }
}

/// How one path differs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum ChangeStatus {
    Added,
    Modified,
    Removed,
}

/// What the path is (after the change; before it, for a removal).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
#[ts(rename = "CheckpointEntryKind")]
pub enum EntryKind {
    File,
    Symlink,
    Dir,
}

/// One changed path, as a person reads it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
pub struct FileChange {
    /// Relative to the project root, `/`-separated.
    pub path: String,
    pub status: ChangeStatus,
    pub kind: EntryKind,
    /// Unified diff of the text (a link's target for a symlink); empty for
    /// binary files, files too large to show and folders.
    pub diff: String,
    /// The whole text on each side, when there is a diff (for a viewer that
    /// lays out its own); empty for a side that does not exist.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub before: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub after: Option<String>,
    /// Not text: no diff is shown.
    pub binary: bool,
    /// Text, but its diff was left out: a side over 1 MiB, or the answer's
    /// diffs were already long (8 MiB) or slow (3 s).
    pub diff_omitted: bool,
    /// Over the size limit: not kept, so not shown (nor restorable).
    pub too_large: bool,
    /// The permission bits before and after, when they differ.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub mode_change: Option<[u32; 2]>,
}

/// Largest side of a text diff that is shown.
const MAX_DIFF_SIDE: u64 = 1024 * 1024;
/// Most time spent on the diffs of one answer; past it, diffs are left out.
const MAX_DIFF_TIME: std::time::Duration = std::time::Duration::from_secs(3);
/// Most diff text in one answer; past it, diffs are left out.
const MAX_DIFF_TOTAL: usize = 8 * 1024 * 1024;

/// The changes as a person reads them: files and links, and folders only
/// when they are empty or their permissions changed.
pub(crate) fn describe(loader: &Loader, changes: &[Change]) -> (Vec<FileChange>, ChangeCounts) {
    let mut out = Vec::new();
    let mut counts = ChangeCounts::default();
    let mut budget = MAX_DIFF_TOTAL;
    let deadline = std::time::Instant::now() + MAX_DIFF_TIME;
    for change in changes {
        let shown = display(&change.path);
        let is_dir = |k: &Option<Kind>| matches!(k, Some(Kind::Dir { .. }));
        let as_file = |k: &Option<Kind>| match k {
            Some(Kind::Dir { .. }) | None | Some(Kind::Ignored) => None,
            Some(other) => Some(other.clone()),
        };
        let (old, new) = (as_file(&change.from), as_file(&change.to));
        if old.is_none() && new.is_none() {
            // Folders only: shown when one is empty or its mode changed.
            let empty = |k: &Option<Kind>| match k {
                Some(Kind::Dir { hash, .. }) => {
                    loader.tree(hash).is_ok_and(|t| t.entries.is_empty())
                }
                _ => false,
            };
            let status = match (is_dir(&change.from), is_dir(&change.to)) {
                (true, true) => ChangeStatus::Modified,
                (false, true) if empty(&change.to) => ChangeStatus::Added,
                (true, false) if empty(&change.from) => ChangeStatus::Removed,
                _ => continue,
            };
            out.push(FileChange {
                path: shown,
                status,
                kind: EntryKind::Dir,
                diff: String::new(),
                before: None,
                after: None,
                binary: false,
                diff_omitted: false,
                too_large: false,
                mode_change: mode_change(&change.from, &change.to),
            });
            continue;
        }
        let status = match (&old, &new) {
            (None, Some(_)) => {
                counts.added += 1;
                ChangeStatus::Added
            }
            (Some(_), None) => {
                counts.removed += 1;
                ChangeStatus::Removed
            }
            _ => {
                counts.modified += 1;
                ChangeStatus::Modified
            }
        };
        let kind = match new.as_ref().or(old.as_ref()) {
            Some(Kind::Symlink { .. }) => EntryKind::Symlink,
            _ => EntryKind::File,
        };
        let too_large =
            matches!(old, Some(Kind::Large { .. })) || matches!(new, Some(Kind::Large { .. }));
        let (diff, binary, diff_omitted, sides) = if too_large {
            (String::new(), false, false, None)
        } else {
            text_diff(
                loader,
                &shown,
                old.as_ref(),
                new.as_ref(),
                &mut budget,
                &deadline,
            )
        };
        let (before, after) = match sides {
            Some((a, b)) => (Some(a), Some(b)),
            None => (None, None),
        };
        out.push(FileChange {
            path: shown,
            status,
            kind,
            diff,
            before,
            after,
            binary,
            diff_omitted,
            too_large,
            mode_change: mode_change(&change.from, &change.to),
        });
    }
    (out, counts)
}

/// Counts only (no blob is read).
pub(crate) fn count(changes: &[Change]) -> ChangeCounts {
    let mut counts = ChangeCounts::default();
    for change in changes {
        let file = |k: &Option<Kind>| {
            matches!(
                k,
                Some(Kind::File { .. } | Kind::Large { .. } | Kind::Symlink { .. })
            )
        };
        match (file(&change.from), file(&change.to)) {
            (false, true) => counts.added += 1,
            (true, false) => counts.removed += 1,
            (true, true) => counts.modified += 1,
            (false, false) => {}
        }
    }
    counts
}

fn mode_of(kind: &Option<Kind>) -> Option<u32> {
    match kind {
        Some(Kind::File { mode, .. } | Kind::Large { mode, .. } | Kind::Dir { mode, .. }) => {
            Some(*mode)
        }
        _ => None,
    }
}

fn mode_change(from: &Option<Kind>, to: &Option<Kind>) -> Option<[u32; 2]> {
    match (mode_of(from), mode_of(to)) {
        (Some(a), Some(b)) if a != b => Some([a, b]),
        _ => None,
    }
}

/// The side's text: `Ok(None)` when it is not text or too large to show.
fn side_text(loader: &Loader, kind: Option<&Kind>) -> Option<Option<String>> {
    match kind {
        None => Some(Some(String::new())),
        Some(Kind::Symlink { target }) => Some(Some(format!(
            "symlink to {}\n",
            String::from_utf8_lossy(target)
        ))),
        Some(Kind::File { size, hash, .. }) => {
            if *size > MAX_DIFF_SIDE {
                return None;
            }
            let bytes = loader.blob(hash).ok()?;
            if bytes.contains(&0) {
                return Some(None);
            }
            Some(String::from_utf8(bytes).ok())
        }
        _ => None,
    }
}

/// The unified diff, whether a side is binary, and whether it was left out.
fn text_diff(
    loader: &Loader,
    path: &str,
    old: Option<&Kind>,
    new: Option<&Kind>,
    budget: &mut usize,
    deadline: &std::time::Instant,
) -> TextDiff {
    let omitted = (String::new(), false, true, None);
    let (Some(a), Some(b)) = (side_text(loader, old), side_text(loader, new)) else {
        return omitted;
    };
    let (Some(a), Some(b)) = (a, b) else {
        return (String::new(), true, false, None);
    };
    // Each diff gets a moment to be minimal; all of them, a few seconds.
    let now = std::time::Instant::now();
    if now > *deadline {
        return omitted;
    }
    let cap = now + std::time::Duration::from_millis(50);
    let diff = corral_fs::diff::unified_until(path, &a, &b, Some(cap.min(*deadline)));
    let cost = diff.len() + a.len() + b.len();
    if cost > *budget {
        return omitted;
    }
    *budget -= cost;
    (diff, false, false, Some((a, b)))
}

/// The diff, binary, left out, and both sides' text.
type TextDiff = (String, bool, bool, Option<(String, String)>);

/// `/`-separated, as the tools show paths.
pub(crate) fn display(path: &Path) -> String {
    let parts: Vec<String> = path
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    parts.join("/")
}
