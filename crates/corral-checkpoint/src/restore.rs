//! Puts the project back the way a snapshot has it, through the root's
//! directory handle: every folder is opened one component at a time
//! without following a symlink, so a link planted in the project can never
//! lead a restore out of it; a link is removed as a link (its target is
//! untouched) and written as a link; `.git/` is never touched.
//!
//! Order: removals (children first), then new folders, then every file and
//! link written to a temp name beside its place, one sync of the file
//! system, then the renames, then folder permissions (deepest first, so a
//! read-only folder is filled before it is closed). A step that fails
//! stops it, its temp files removed; `journal.rs` puts the project back.

use super::compare::{display, Change, Loader};
use super::object::{folder_fd, sync_filesystem};
use super::tree::Kind;
use cap_fs_ext::DirExt;
use cap_std::fs::{Dir, OpenOptions, OpenOptionsExt};
use corral_fs::root::ProjectRoot;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeSet, HashMap};
use std::ffi::{OsStr, OsString};
use std::io::Write;
use std::ops::Bound;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// A path a restore left as it was, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
pub struct Skipped {
    pub path: String,
    pub reason: String,
    /// An entry the ignore rules leave out (on either side): recorded by
    /// name, nothing of it kept, so a restore never touches it.
    #[serde(default)]
    pub ignored: bool,
}

/// Folders opened so far, by path relative to the root.
struct Dirs<'a> {
    root: &'a ProjectRoot,
    open: HashMap<PathBuf, Dir>,
}

impl Dirs<'_> {
    /// The folder at `rel`, opened one component at a time, never through a
    /// symlink.
    fn get(&mut self, rel: &Path) -> std::io::Result<&Dir> {
        if !self.open.contains_key(rel) {
            let mut dir = self.root.dir().try_clone()?;
            for part in rel.components() {
                dir = dir.open_dir_nofollow(part.as_os_str())?;
            }
            // A temp file a killed write or restore left here goes first.
            corral_fs::temp::sweep(&dir);
            self.open.insert(rel.to_path_buf(), dir);
        }
        self.open
            .get(rel)
            .ok_or_else(|| std::io::Error::other("folder handle went missing"))
    }

    fn forget(&mut self) {
        self.open.clear();
    }
}

/// Whether any component is `.git` (any case).
fn is_git(path: &Path) -> bool {
    path.components().any(|c| {
        c.as_os_str()
            .as_encoded_bytes()
            .eq_ignore_ascii_case(b".git")
    })
}

/// What a restore puts back.
#[derive(Debug, Clone)]
pub(crate) enum Scope {
    /// The whole project.
    Whole,
    /// One path and everything beneath it.
    Under(PathBuf),
    /// These paths only, nothing beneath them that is not listed (what one
    /// call changed: a folder it created is removed only once empty).
    Exactly(BTreeSet<PathBuf>),
}

impl Scope {
    /// Whether a change falls under the restore: the path itself (and for
    /// `Under`, what is beneath it), or an ancestor that must become a
    /// folder for it.
    pub(crate) fn includes(&self, change: &Change) -> bool {
        let becomes_folder = matches!(change.to, Some(Kind::Dir { .. }))
            && !matches!(change.from, Some(Kind::Dir { .. }));
        match self {
            Scope::Whole => true,
            Scope::Under(only) => {
                change.path.starts_with(only) || (becomes_folder && only.starts_with(&change.path))
            }
            Scope::Exactly(paths) => {
                // Paths order by component, so those beneath `change.path`
                // come right after it: the first at or after it tells.
                paths.contains(&change.path)
                    || (becomes_folder
                        && paths
                            .range::<Path, _>((
                                Bound::Included(change.path.as_path()),
                                Bound::Unbounded,
                            ))
                            .next()
                            .is_some_and(|p| p.starts_with(&change.path)))
            }
        }
    }
}

/// Why a restore stopped midway: the path, and what went wrong there.
#[derive(Debug)]
pub(crate) struct Failed {
    pub path: PathBuf,
    pub error: std::io::Error,
}

impl Failed {
    fn at(path: &Path) -> impl FnOnce(std::io::Error) -> Failed + '_ {
        move |error| Failed {
            path: path.to_path_buf(),
            error,
        }
    }
}

/// Applies `changes` (from the project as it is to the snapshot). Returns
/// what was left as it was because the checkpoints keep nothing of it (a
/// file too large to keep, a folder that holds ignored files). Any other
/// failure stops it, with its temp files removed, and is the error: the
/// caller puts the project back.
pub(crate) fn apply(
    root: &ProjectRoot,
    loader: &Loader,
    changes: &[Change],
    scope: &Scope,
) -> Result<Vec<Skipped>, Failed> {
    let mut dirs = Dirs {
        root,
        open: HashMap::new(),
    };
    let mut pending: Vec<(PathBuf, OsString)> = Vec::new();
    let applied = apply_into(&mut dirs, loader, changes, scope, &mut pending);
    if applied.is_err() {
        // Nothing of a failed restore stays behind under a temp name.
        for (path, tmp) in &pending {
            let (parent, _) = split(path);
            let _ = dirs.get(parent).map(|d| d.remove_file(tmp));
        }
    }
    applied
}

fn apply_into(
    dirs: &mut Dirs,
    loader: &Loader,
    changes: &[Change],
    scope: &Scope,
    pending: &mut Vec<(PathBuf, OsString)>,
) -> Result<Vec<Skipped>, Failed> {
    let mut skipped = Vec::new();
    let mut skip = |path: &Path, reason: &str| {
        skipped.push(Skipped {
            path: display(path),
            reason: reason.to_string(),
            ignored: false,
        })
    };
    let chosen: Vec<&Change> = changes
        .iter()
        .filter(|c| scope.includes(c) && !is_git(&c.path) && c.path.file_name().is_some())
        .collect();
    let mut blocked: Vec<PathBuf> = Vec::new();

    // Removals: the list has a removed folder's content before the folder.
    for change in &chosen {
        let Some(from) = &change.from else { continue };
        let needs_removal = match (&change.to, from) {
            (None, _) => true,
            (Some(Kind::Dir { .. }), Kind::Dir { .. }) => false,
            (Some(Kind::Dir { .. }), _) | (Some(_), Kind::Dir { .. }) => true,
            (Some(_), _) => false, // a file or link is replaced by a rename
        };
        if !needs_removal {
            continue;
        }
        let (parent, name) = split(&change.path);
        let failed = Failed::at(&change.path);
        match from {
            Kind::Large { size, .. } => {
                skip(&change.path, &large_kept(*size));
                blocked.push(change.path.clone());
            }
            Kind::Dir { .. } => {
                step().map_err(Failed::at(&change.path))?;
                let dir = dirs.get(parent).map_err(failed)?;
                match dir.remove_dir(name) {
                    Ok(()) => {}
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                    // What the checkpoints do not keep (or, undoing one
                    // call, what it did not make) is still in it.
                    Err(e) if e.kind() == std::io::ErrorKind::DirectoryNotEmpty => {
                        let reason = match scope {
                            Scope::Exactly(_) => {
                                "left in place: it holds files this restore does not touch"
                            }
                            Scope::Whole | Scope::Under(_) => {
                                "left in place: it holds files the checkpoints do not keep (ignored or too large)"
                            }
                        };
                        skip(&change.path, reason);
                        blocked.push(change.path.clone());
                    }
                    Err(e) => return Err(Failed::at(&change.path)(e)),
                }
            }
            Kind::File { .. } | Kind::Symlink { .. } => {
                step().map_err(Failed::at(&change.path))?;
                let dir = dirs.get(parent).map_err(failed)?;
                let removed = match dir.symlink_metadata(name) {
                    Ok(meta) if meta.is_dir() => {
                        Err(std::io::Error::other("a folder is in its place now"))
                    }
                    Ok(_) => dir.remove_file(name),
                    Err(e) => Err(e),
                };
                match removed {
                    Ok(()) => {}
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                    Err(e) => return Err(Failed::at(&change.path)(e)),
                }
            }
            Kind::Ignored => {}
        }
    }
    dirs.forget();

    // New folders, then files and links under temp names.
    let mut dir_modes: Vec<(PathBuf, u32)> = Vec::new();
    for change in &chosen {
        let Some(to) = &change.to else { continue };
        if blocked.iter().any(|b| change.path.starts_with(b)) {
            continue;
        }
        let (parent, name) = split(&change.path);
        let failed = Failed::at(&change.path);
        match to {
            Kind::Dir { mode, .. } => {
                dir_modes.push((change.path.clone(), *mode));
                if !matches!(change.from, Some(Kind::Dir { .. })) {
                    step().map_err(Failed::at(&change.path))?;
                    let dir = dirs.get(parent).map_err(failed)?;
                    match dir.create_dir(name) {
                        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                            match dir.symlink_metadata(name) {
                                Ok(m) if m.is_dir() => {}
                                _ => return Err(Failed::at(&change.path)(e)),
                            }
                        }
                        other => other.map_err(Failed::at(&change.path))?,
                    }
                }
            }
            Kind::File { mode, hash, .. } => {
                let bytes = loader
                    .blob(hash)
                    .map_err(|e| failed(std::io::Error::other(e.message)))?;
                step().map_err(Failed::at(&change.path))?;
                let dir = dirs.get(parent).map_err(Failed::at(&change.path))?;
                in_the_way(dir, name).map_err(Failed::at(&change.path))?;
                let tmp = write_temp(dir, name, &bytes, *mode).map_err(Failed::at(&change.path))?;
                pending.push((change.path.clone(), tmp));
            }
            Kind::Symlink { target } => {
                step().map_err(Failed::at(&change.path))?;
                let dir = dirs.get(parent).map_err(failed)?;
                in_the_way(dir, name).map_err(Failed::at(&change.path))?;
                let tmp = link_temp(dir, name, target).map_err(Failed::at(&change.path))?;
                pending.push((change.path.clone(), tmp));
            }
            Kind::Large { size, .. } => skip(&change.path, &large_not_kept(*size)),
            Kind::Ignored => {}
        }
    }
    // The content is on disk before any name points at it.
    let sync = |dirs: &Dirs| {
        let _ = folder_fd(dirs.root.dir(), Path::new(".")).map(|fd| sync_filesystem(&fd));
    };
    sync(dirs);
    // What is renamed is no temp file any more; the rest are, on failure.
    let mut renamed = 0;
    let mut failure = None;
    for (path, tmp) in pending.iter() {
        let (parent, name) = split(path);
        let done = step().and_then(|()| dirs.get(parent).and_then(|d| d.rename(tmp, d, name)));
        if let Err(e) = done {
            failure = Some(Failed::at(path)(e));
            break;
        }
        renamed += 1;
    }
    pending.drain(..renamed);
    if let Some(failure) = failure {
        return Err(failure);
    }
    // Folder permissions last, deepest first.
    dir_modes.sort_by_key(|(p, _)| std::cmp::Reverse(p.components().count()));
    for (path, mode) in dir_modes {
        step().map_err(Failed::at(&path))?;
        let (parent, name) = split(&path);
        dirs.get(parent)
            .and_then(|d| {
                let fd = folder_fd(d, Path::new(name))?;
                rustix::fs::fchmod(&fd, rustix::fs::Mode::from_raw_mode(mode & 0o1777))
                    .map_err(std::io::Error::from)
            })
            .map_err(Failed::at(&path))?;
    }
    sync(dirs);
    Ok(skipped)
}

/// Why a file is left in place: it is over the size the checkpoints keep
/// (known before the restore starts, and shown by its diff).
pub(crate) fn large_kept(size: u64) -> String {
    format!("left in place: at {size} bytes it is too large to keep a copy of, so removing it could not be undone")
}

/// Why a file is not brought back: it was too large to keep.
pub(crate) fn large_not_kept(size: u64) -> String {
    format!("not restored: at {size} bytes it was too large to keep when the checkpoint was taken")
}

/// Tests only: what to do at a step (fill the disk, or fail it outright).
#[cfg(test)]
pub(crate) type Fault = Box<dyn FnOnce() -> Option<std::io::Error>>;

#[cfg(test)]
thread_local! {
    /// Tests only: how many steps of a restore (each removal, new folder,
    /// temp file, rename, folder mode) to let run, and what to do at the
    /// next one: fill the disk, or fail it outright.
    pub(crate) static FAULT: std::cell::RefCell<Option<(usize, Fault)>> =
        const { std::cell::RefCell::new(None) };
}

/// One step of a restore, about to change the project. Nothing outside
/// tests; there, [`FAULT`] may make it fail.
fn step() -> std::io::Result<()> {
    #[cfg(test)]
    {
        let due = FAULT.with(|fault| {
            let mut fault = fault.borrow_mut();
            match fault.as_mut() {
                Some((0, _)) => fault.take().map(|(_, act)| act),
                Some((n, _)) => {
                    *n -= 1;
                    None
                }
                None => None,
            }
        });
        if let Some(error) = due.and_then(|act| act()) {
            return Err(error);
        }
    }
    Ok(())
}

/// A folder where a file or link is to go (one the ignore rules hide, or
/// one that could not be removed) is not replaced.
fn in_the_way(dir: &Dir, name: &OsStr) -> std::io::Result<()> {
    match dir.symlink_metadata(name) {
        Ok(meta) if meta.is_dir() => Err(std::io::Error::other(
            "a folder the checkpoints do not keep is in its place",
        )),
        _ => Ok(()),
    }
}

fn split(path: &Path) -> (&Path, &OsStr) {
    (
        path.parent().unwrap_or(Path::new("")),
        path.file_name().unwrap_or_default(),
    )
}

/// The file's bytes under a temp name beside it, with its permissions
/// (set-user and set-group bits dropped).
fn write_temp(dir: &Dir, name: &OsStr, bytes: &[u8], mode: u32) -> std::io::Result<OsString> {
    let mut options = OpenOptions::new();
    options.write(true).create_new(true).mode(0o600);
    let tmp = corral_fs::temp::name_for(name);
    let mut file = dir.open_with(&tmp, &options)?;
    let written = file.write_all(bytes).and_then(|()| {
        rustix::fs::fchmod(&file, rustix::fs::Mode::from_raw_mode(mode & 0o1777))
            .map_err(std::io::Error::from)
    });
    if let Err(e) = written {
        let _ = dir.remove_file(&tmp);
        return Err(e);
    }
    Ok(tmp)
}

/// A symlink to `target` under a temp name beside `name`.
fn link_temp(dir: &Dir, name: &OsStr, target: &[u8]) -> std::io::Result<OsString> {
    let tmp = corral_fs::temp::name_for(name);
    rustix::fs::symlinkat(OsStr::from_bytes(target), dir, &tmp).map_err(std::io::Error::from)?;
    Ok(tmp)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::object::Hash;

    #[test]
    fn exactly_takes_a_folder_needed_by_a_listed_path_and_nothing_else() {
        let folder = Kind::Dir {
            mode: 0o755,
            hash: Hash([0; 32]),
        };
        let file = Kind::Symlink {
            target: b"x".to_vec(),
        };
        let change = |path: &str, from: Option<&Kind>, to: Option<&Kind>| Change {
            path: PathBuf::from(path),
            from: from.cloned(),
            to: to.cloned(),
        };
        let scope = |paths: &[&str]| Scope::Exactly(paths.iter().map(PathBuf::from).collect());
        // `a b` and `a.txt` sort between `a` and `a/x` as text, not as paths.
        let listed = scope(&["a b", "a.txt", "a/x/y", "z"]);
        assert!(listed.includes(&change("a", None, Some(&folder))));
        assert!(listed.includes(&change("a/x", Some(&file), Some(&folder))));
        assert!(listed.includes(&change("a b", None, Some(&file))));
        // Already a folder, or becoming none: not needed for what is listed.
        assert!(!listed.includes(&change("a", Some(&folder), Some(&folder))));
        assert!(!listed.includes(&change("a", None, Some(&file))));
        // Not an ancestor of anything listed.
        assert!(!listed.includes(&change("a/w", None, Some(&folder))));
        assert!(!listed.includes(&change("b", None, Some(&folder))));
        assert!(!scope(&["ab/x"]).includes(&change("a", None, Some(&folder))));
        assert!(!scope(&[]).includes(&change("a", None, Some(&folder))));
    }
}
