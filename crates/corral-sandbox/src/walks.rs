//! The two walks of the project a fence is built from: the secret-like
//! files the read-only profile masks ([`secret_paths`]), and what of the
//! project git holds that no other program may write ([`held_by_git`]).
//!
//! Each walk reads every folder of the project, so a call would pay for
//! the whole tree. Its result is kept per project with a stamp of every
//! folder it entered (device, inode and change time), and reused while
//! each stamp still holds. Whatever could change a result changes a stamp:
//! a name made, removed or renamed in a folder (a new hard link, a new
//! `.git`, a secret renamed) sets that folder's change time. A change time
//! cannot be set back (`touch -d` sets it to now), and a folder replaced
//! is another inode. A walk that saw a folder change within [`SETTLE`] of
//! its start is not kept: file times come from a coarse clock, so a second
//! change within the same tick would leave the stamp as it was.
//!
//! The project's root folder is the exception: every command that writes
//! the project makes the mount points of the absent agent configuration
//! there and removes them after (`holds`), which moves the root's change
//! time without changing any walk. So the root is kept with its listing
//! too (each name, its inode and its kind, read before the walk), and a
//! root whose change time moved still holds while its listing is the
//! same: one read of the root's names instead of a walk of the project.

use super::gitdir::Repository;
use super::stamp::Stamp;
use corral_fs::secret::is_secret_like;
use corral_fs::walk::{ProjectWalk, Use, MAX_MASK_ENTRIES};
use std::collections::{HashMap, HashSet};
use std::ffi::OsString;
use std::os::unix::fs::{DirEntryExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Most entries a walk looks at.
pub(crate) const WALK_LIMIT: usize = MAX_MASK_ENTRIES;

/// How long before a walk's start a folder must have last changed for the
/// walk to be kept (many times a file-time clock tick).
const SETTLE: Duration = Duration::from_secs(1);

/// Most walks kept at once (three a project: its secrets, what git
/// holds, its auto-run files).
const KEPT_PROJECTS: usize = 48;

/// The secret-like files and folders to mask (absolute, and whether each
/// is a folder).
pub(crate) type Secrets = Arc<Vec<(PathBuf, bool)>>;

/// The secret-like files and folders of the project (absolute, and whether
/// each is a folder), and every other name of such a file (a hard link:
/// `cp -l .env notes.txt`), not following links, not entering `.git/`,
/// `node_modules/` or `target/`; and whether the walk saw everything.
pub(crate) fn secret_paths(root: &Path) -> (Secrets, bool) {
    secret_paths_from(root, SystemTime::now())
}

/// [`secret_paths`] for a walk that starts at `started`.
fn secret_paths_from(root: &Path, started: SystemTime) -> (Secrets, bool) {
    let key = Key::Secrets(root.to_path_buf());
    if let Some(Walked::Secrets(found)) = kept(&key) {
        return (found, true);
    }
    let mut stamps = Stamps::rooted(root, &[]);
    // Git's folders are held read-only as a whole, never masked.
    let walker = ProjectWalk::new(root, Use::Mask)
        .keeping(|e| e.file_name() != ".git")
        .build();
    let mut found = Vec::new();
    let mut secret_inodes = HashSet::new();
    let mut linked = Vec::new();
    let mut complete = true;
    for (seen, entry) in walker.flatten().enumerate() {
        if seen >= WALK_LIMIT {
            complete = false;
            break;
        }
        let Some(kind) = entry.file_type() else {
            continue;
        };
        let meta = entry.metadata().ok();
        if kind.is_dir() {
            stamps.add(entry.path(), meta.as_ref());
        }
        if !(kind.is_file() || kind.is_dir()) || entry.depth() == 0 {
            continue;
        }
        let rel = entry.path().strip_prefix(root).unwrap_or(entry.path());
        if is_secret_like(&rel.to_string_lossy()) {
            if let Some(m) = meta.filter(|m| m.is_file()) {
                secret_inodes.insert((m.dev(), m.ino()));
            }
            found.push((entry.path().to_path_buf(), kind.is_dir()));
        } else if let Some(m) = meta.filter(|m| m.is_file() && m.nlink() > 1) {
            linked.push(((m.dev(), m.ino()), entry.into_path()));
        }
    }
    found.extend(
        linked
            .into_iter()
            .filter(|(inode, _)| secret_inodes.contains(inode))
            .map(|(_, path)| (path, false)),
    );
    let found = Arc::new(found);
    if complete {
        keep(key, stamps, started, Walked::Secrets(found.clone()));
    }
    (found, complete)
}

/// What of the project a program but git must not write, beyond the
/// repository's own folders: every nested `.git` (a clone made outside the
/// sandbox hard-links its objects to ours; one made inside copies them,
/// the repository being a mount of its own), and files that are hard links to a file of the
/// repository (its objects aside: they are written once and never read
/// as configuration). New links cannot be made: those are mounts of their
/// own (`link(2)` across mounts is `EXDEV`). The names of the root in
/// `held` are held read-only as a whole already: not walked.
pub(crate) fn held_by_git(
    root: &Path,
    repo: &Repository,
    held: &'static [&'static str],
) -> Arc<Vec<PathBuf>> {
    held_by_git_from(root, repo, held, SystemTime::now())
}

/// [`held_by_git`] for a walk that starts at `started`.
fn held_by_git_from(
    root: &Path,
    repo: &Repository,
    held_whole: &'static [&'static str],
    started: SystemTime,
) -> Arc<Vec<PathBuf>> {
    let own: Vec<PathBuf> = repo.folders().iter().map(|d| d.to_path_buf()).collect();
    let key = Key::HeldByGit(root.to_path_buf(), own.clone());
    if let Some(Walked::HeldByGit(held)) = kept(&key) {
        return held;
    }
    let mut stamps = Stamps::rooted(root, held_whole);
    let mut linked = HashSet::new();
    for dir in &own {
        // A walk of git's own folders, not of the project: every entry
        // but the objects (written once, never read as configuration).
        let walker = ignore::WalkBuilder::new(dir)
            .standard_filters(false)
            .follow_links(false)
            .filter_entry(|e| e.file_name() != "objects")
            .build();
        for entry in walker.flatten() {
            let Ok(m) = entry.metadata() else {
                continue;
            };
            if m.is_dir() {
                stamps.add(entry.path(), Some(&m));
            } else if m.is_file() && m.nlink() > 1 {
                linked.insert((m.dev(), m.ino()));
            }
        }
    }
    // The walk lists a nested `.git` but does not enter it: it is held
    // read-only as a whole. Installed packages and build output hold no
    // clone of ours (the walk does not enter them).
    let skip = own.clone();
    let walker = ProjectWalk::new(root, Use::Mask)
        .keeping(move |e| {
            let whole = e.depth() == 1 && held_whole.iter().any(|name| e.file_name() == *name);
            !whole && !skip.iter().any(|d| e.path() == d)
        })
        .build();
    let mut held = Vec::new();
    let mut complete = true;
    for (seen, entry) in walker.flatten().enumerate() {
        if seen >= WALK_LIMIT {
            complete = false;
            break;
        }
        let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
        if is_dir {
            stamps.add(entry.path(), entry.metadata().ok().as_ref());
        }
        if entry.depth() == 0 {
            continue;
        }
        if entry.file_name() == ".git" {
            held.push(entry.into_path());
            continue;
        }
        let is_link = !is_dir
            && !linked.is_empty()
            && entry
                .metadata()
                .is_ok_and(|m| m.is_file() && linked.contains(&(m.dev(), m.ino())));
        if is_link {
            held.push(entry.into_path());
        }
    }
    let held = Arc::new(held);
    if complete {
        keep(key, stamps, started, Walked::HeldByGit(held.clone()));
    }
    held
}

/// Every name of the auto-run table (`corral_fs::autorun`: `.claude`,
/// `.vscode`, `.mcp.json`...) below the project's root (the root's own are
/// held by name; and `.git`), not following links, not entering `node_modules/` or
/// `target/`, whatever the ignore files say (a `.gitignore` cannot hide
/// one). A command that writes the project finds each held read-only, and
/// what one makes that was not there before is removed after it; and
/// whether the walk saw everything.
/// The names of the root in `held` are made and removed by the commands
/// themselves (their holds' mount points): left out of the root's listing.
pub(crate) fn auto_run_paths(
    root: &Path,
    held: &'static [&'static str],
) -> (Arc<Vec<PathBuf>>, bool) {
    let started = SystemTime::now();
    let key = Key::AutoRun(root.to_path_buf());
    if let Some(Walked::AutoRun(found)) = kept(&key) {
        return (found, true);
    }
    let mut stamps = Stamps::rooted(root, held);
    let walker = ProjectWalk::new(root, Use::Mask).build();
    let mut found = Vec::new();
    let mut complete = true;
    for (seen, entry) in walker.flatten().enumerate() {
        if seen >= WALK_LIMIT {
            complete = false;
            break;
        }
        // Only the folders the walk enters count: what changes inside one
        // it lists but does not enter (`.git`, which every git command
        // writes; `node_modules/`, `target/`) changes nothing it finds.
        let listed_only = entry.file_name().to_str().is_some_and(|name| {
            name.eq_ignore_ascii_case(".git") || corral_fs::walk::BULK_FOLDERS.contains(&name)
        });
        let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
        if is_dir && !listed_only {
            stamps.add(entry.path(), entry.metadata().ok().as_ref());
        }
        // A nested `.git` is held by [`held_by_git`] for every program
        // but git, and made by builds of their own (`cargo new`).
        let named = entry
            .file_name()
            .to_str()
            .filter(|name| !name.eq_ignore_ascii_case(".git"))
            .and_then(corral_fs::autorun::auto_run)
            .is_some();
        if entry.depth() >= 2 && named {
            found.push(entry.into_path());
        }
    }
    let found = Arc::new(found);
    if complete {
        keep(key, stamps, started, Walked::AutoRun(found.clone()));
    }
    (found, complete)
}

/// Which walk of which project.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Key {
    Secrets(PathBuf),
    AutoRun(PathBuf),
    /// The project and its repository's folders.
    HeldByGit(PathBuf, Vec<PathBuf>),
}

#[derive(Debug, Clone)]
enum Walked {
    Secrets(Secrets),
    AutoRun(Arc<Vec<PathBuf>>),
    HeldByGit(Arc<Vec<PathBuf>>),
}

/// The folder at `path` now (`None`: gone, or no longer a folder).
fn folder_now(path: &Path) -> Option<Stamp> {
    std::fs::symlink_metadata(path)
        .ok()
        .filter(std::fs::Metadata::is_dir)
        .map(|m| Stamp::of(&m))
}

/// Every folder a walk entered, the listing of the project's root, and
/// whether one could not be stamped or listed (the walk is then not kept).
#[derive(Debug, Default)]
struct Stamps {
    seen: Vec<(PathBuf, Stamp)>,
    root: Option<Root>,
    missed: bool,
}

/// The project's root folder, listed before a walk.
#[derive(Debug, Clone)]
struct Root {
    path: PathBuf,
    /// The root's device and inode: another folder at its path is a change.
    at: (u64, u64),
    /// Names the walk does not enter, so not listed.
    skip: &'static [&'static str],
    listing: Listing,
}

/// A folder's names, each with its inode and kind, sorted, but the
/// skipped ones.
type Listing = Vec<(OsString, u64, Option<std::fs::FileType>)>;

// Lists the names and inodes of a folder the walk stamps, to notice a
// change: no file is opened, no link followed.
#[allow(clippy::disallowed_methods)]
fn listing(dir: &Path, skip: &[&str]) -> Option<Listing> {
    let mut names = Vec::new();
    for entry in std::fs::read_dir(dir).ok()? {
        let entry = entry.ok()?;
        let name = entry.file_name();
        if skip.iter().any(|s| name == *s) {
            continue;
        }
        let kind = entry.file_type().ok();
        names.push((name, entry.ino(), kind));
    }
    names.sort_by(|a, b| a.0.cmp(&b.0));
    Some(names)
}

impl Root {
    /// Whether the root still has the names it had (its change time may
    /// have moved).
    fn holds(&self) -> bool {
        let here = std::fs::symlink_metadata(&self.path)
            .ok()
            .filter(std::fs::Metadata::is_dir)
            .map(|m| (m.dev(), m.ino()));
        here == Some(self.at) && listing(&self.path, self.skip).as_ref() == Some(&self.listing)
    }
}

impl Stamps {
    /// Stamps for a walk of the project at `root`, its root listed now
    /// (before the walk: a name made meanwhile is then a change), but the
    /// names in `skip`.
    fn rooted(root: &Path, skip: &'static [&'static str]) -> Stamps {
        let at = std::fs::symlink_metadata(root)
            .ok()
            .filter(std::fs::Metadata::is_dir)
            .map(|m| (m.dev(), m.ino()));
        let root = at.zip(listing(root, skip)).map(|(at, listing)| Root {
            path: root.to_path_buf(),
            at,
            skip,
            listing,
        });
        Stamps {
            missed: root.is_none(),
            root,
            ..Stamps::default()
        }
    }

    fn add(&mut self, path: &Path, meta: Option<&std::fs::Metadata>) {
        match meta {
            Some(m) => self.seen.push((path.to_path_buf(), Stamp::of(m))),
            None => self.missed = true,
        }
    }

    /// The stamps, if every folder got one and none changed within
    /// [`SETTLE`] of `started` (but the root, which its listing holds).
    fn settled(self, started: SystemTime) -> Option<Stamps> {
        let start = started.duration_since(UNIX_EPOCH).ok()?;
        let listed = |path: &Path| self.root.as_ref().is_some_and(|r| r.path == path);
        let settled = self
            .seen
            .iter()
            .all(|(path, s)| listed(path) || s.changed() + SETTLE < start);
        (settled && !self.missed).then_some(self)
    }
}

struct Entry {
    stamps: Vec<(PathBuf, Stamp)>,
    root: Option<Root>,
    walked: Walked,
}

fn cache() -> &'static Mutex<HashMap<Key, Arc<Entry>>> {
    static CACHE: OnceLock<Mutex<HashMap<Key, Arc<Entry>>>> = OnceLock::new();
    CACHE.get_or_init(Mutex::default)
}

/// The kept walk of `key` if every folder it entered is as it was.
fn kept(key: &Key) -> Option<Walked> {
    let entry = cache()
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .get(key)
        .cloned()?;
    let root = entry.root.as_ref();
    entry
        .stamps
        .iter()
        .all(|(path, stamp)| {
            folder_now(path).as_ref() == Some(stamp)
                || root.is_some_and(|root| root.path == *path && root.holds())
        })
        .then(|| entry.walked.clone())
}

/// Keeps a walk that started at `started`, if its folders had settled.
fn keep(key: Key, stamps: Stamps, started: SystemTime, walked: Walked) {
    let Some(Stamps { seen, root, .. }) = stamps.settled(started) else {
        return;
    };
    let mut cache = cache().lock().unwrap_or_else(PoisonError::into_inner);
    if cache.len() >= KEPT_PROJECTS && !cache.contains_key(&key) {
        cache.clear();
    }
    cache.insert(
        key,
        Arc::new(Entry {
            stamps: seen,
            root,
            walked,
        }),
    );
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::disallowed_methods)]
    use super::*;

    /// A project whose folders have settled: the walks start as if
    /// [`SETTLE`] had passed since it was made.
    fn project() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::create_dir_all(root.join("src/deep")).unwrap();
        std::fs::write(root.join(".env"), "KEY=1\n").unwrap();
        std::fs::write(root.join("src/deep/notes.txt"), "hi\n").unwrap();
        (dir, root)
    }

    fn later() -> SystemTime {
        SystemTime::now() + SETTLE * 2
    }

    fn masked(found: &Secrets, root: &Path) -> Vec<String> {
        let mut names: Vec<String> = found
            .iter()
            .map(|(p, _)| p.strip_prefix(root).unwrap().display().to_string())
            .collect();
        names.sort();
        names
    }

    /// Sets a folder's modification time back to what it was: its change
    /// time moves all the same.
    fn set_mtime_back(dir: &Path, before: &std::fs::Metadata) {
        use rustix::fs::{utimensat, AtFlags, Timespec, Timestamps, CWD};
        let at = |s: i64, ns: i64| Timespec {
            tv_sec: s,
            tv_nsec: ns,
        };
        let times = Timestamps {
            last_access: at(before.atime(), before.atime_nsec()),
            last_modification: at(before.mtime(), before.mtime_nsec()),
        };
        utimensat(CWD, dir, &times, AtFlags::empty()).unwrap();
        let after = std::fs::symlink_metadata(dir).unwrap();
        assert_eq!(after.mtime(), before.mtime());
    }

    #[test]
    fn a_settled_walk_is_kept_and_reused() {
        let (_dir, root) = project();
        let (first, complete) = secret_paths_from(&root, later());
        assert!(complete);
        assert_eq!(masked(&first, &root), [".env"]);
        let (again, _) = secret_paths_from(&root, later());
        assert!(Arc::ptr_eq(&first, &again), "the walk was made again");
    }

    #[test]
    fn a_walk_of_folders_changed_just_now_is_not_kept() {
        let (_dir, root) = project();
        let (first, _) = secret_paths(&root);
        let (again, _) = secret_paths(&root);
        assert!(!Arc::ptr_eq(&first, &again), "a racy walk was kept");
        assert_eq!(masked(&again, &root), [".env"]);
    }

    #[test]
    fn a_hard_link_made_after_a_kept_walk_is_masked_even_with_the_folder_time_set_back() {
        let (_dir, root) = project();
        let (first, _) = secret_paths_from(&root, later());
        assert_eq!(masked(&first, &root), [".env"]);
        let deep = root.join("src/deep");
        let before = std::fs::symlink_metadata(&deep).unwrap();
        std::fs::hard_link(root.join(".env"), deep.join("copy.txt")).unwrap();
        set_mtime_back(&deep, &before);
        let (now, _) = secret_paths_from(&root, later());
        assert_eq!(masked(&now, &root), [".env", "src/deep/copy.txt"]);
    }

    #[test]
    fn a_hard_link_made_at_the_root_after_a_kept_walk_is_masked_even_with_its_time_set_back() {
        let (_dir, root) = project();
        let (first, _) = secret_paths_from(&root, later());
        let before = std::fs::symlink_metadata(&root).unwrap();
        std::fs::hard_link(root.join(".env"), root.join("notes.txt")).unwrap();
        set_mtime_back(&root, &before);
        let (now, _) = secret_paths_from(&root, later());
        assert!(!Arc::ptr_eq(&first, &now));
        assert_eq!(masked(&now, &root), [".env", "notes.txt"]);
    }

    #[test]
    fn a_root_file_replaced_by_another_of_the_same_name_is_a_change() {
        let (_dir, root) = project();
        std::fs::write(root.join("notes.txt"), "hi\n").unwrap();
        let (first, _) = secret_paths_from(&root, later());
        assert_eq!(masked(&first, &root), [".env"]);
        // Same names before and after: only the inode tells.
        std::fs::remove_file(root.join("notes.txt")).unwrap();
        std::fs::hard_link(root.join(".env"), root.join("notes.txt")).unwrap();
        let (now, _) = secret_paths_from(&root, later());
        assert_eq!(masked(&now, &root), [".env", "notes.txt"]);
    }

    #[test]
    fn the_mount_points_made_and_removed_at_the_root_keep_the_walks() {
        let (_dir, root) = project();
        std::fs::create_dir_all(root.join(".git/info")).unwrap();
        let repo = Repository::of(&root).unwrap();
        const HELD: [&str; 1] = [".claude"];
        let (secrets, _) = secret_paths_from(&root, later());
        let held = held_by_git_from(&root, &repo, &HELD, later());
        // What a command that writes the project leaves: the root's
        // change time moved, its names are as they were.
        let before = std::fs::symlink_metadata(&root).unwrap();
        std::fs::create_dir(root.join(".claude")).unwrap();
        std::fs::remove_dir(root.join(".claude")).unwrap();
        let after = std::fs::symlink_metadata(&root).unwrap();
        assert_ne!(Stamp::of(&before), Stamp::of(&after));
        assert!(Arc::ptr_eq(&secrets, &secret_paths_from(&root, later()).0));
        assert!(Arc::ptr_eq(
            &held,
            &held_by_git_from(&root, &repo, &HELD, later())
        ));
        // While a command holds it, only the walk that enters it walks again.
        std::fs::create_dir(root.join(".claude")).unwrap();
        assert!(Arc::ptr_eq(
            &held,
            &held_by_git_from(&root, &repo, &HELD, later())
        ));
        assert!(!Arc::ptr_eq(&secrets, &secret_paths_from(&root, later()).0));
    }

    #[test]
    fn a_secret_renamed_into_a_deep_folder_is_still_masked() {
        let (_dir, root) = project();
        secret_paths_from(&root, later());
        std::fs::rename(root.join(".env"), root.join("src/deep/.env.prod")).unwrap();
        let (now, _) = secret_paths_from(&root, later());
        assert_eq!(masked(&now, &root), ["src/deep/.env.prod"]);
    }

    #[test]
    fn a_nested_clone_or_a_link_into_git_after_a_kept_walk_is_held() {
        let (_dir, root) = project();
        std::fs::create_dir_all(root.join(".git/info")).unwrap();
        std::fs::write(root.join(".git/config"), "[core]\n").unwrap();
        let repo = Repository::of(&root).unwrap();
        let first = held_by_git_from(&root, &repo, &[], later());
        assert!(first.is_empty(), "{first:?}");
        assert!(Arc::ptr_eq(
            &first,
            &held_by_git_from(&root, &repo, &[], later())
        ));

        let deep = root.join("src/deep");
        let before = std::fs::symlink_metadata(&deep).unwrap();
        std::fs::create_dir(deep.join(".git")).unwrap();
        set_mtime_back(&deep, &before);
        let held = held_by_git_from(&root, &repo, &[], later());
        assert_eq!(*held, [deep.join(".git")]);

        std::fs::hard_link(root.join(".git/config"), root.join("src/config")).unwrap();
        let held = held_by_git_from(&root, &repo, &[], later());
        assert!(held.contains(&root.join("src/config")), "{held:?}");

        let before = std::fs::symlink_metadata(&root).unwrap();
        std::fs::hard_link(root.join(".git/config"), root.join("config")).unwrap();
        set_mtime_back(&root, &before);
        let held = held_by_git_from(&root, &repo, &[], later());
        assert!(held.contains(&root.join("config")), "{held:?}");
    }
}
