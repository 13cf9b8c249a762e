//! One pass over the project: every entry the ignore rules keep, as trees
//! and blobs, and the names of those they leave out, at every level (so a
//! restore knows they were there and leaves them be). A stat cache (size,
//! mtime, ctime, inode per path) lets a file that did not change keep its
//! hash without being read again.

use super::object::{self, Hash};
use super::tree::{Entry, Kind, Tree};
use cap_fs_ext::{FollowSymlinks, OpenOptionsFollowExt};
use cap_std::fs::{Dir, MetadataExt, OpenOptions, OpenOptionsExt};
use corral_fs::error::{Error, Result};
use corral_fs::root::{ProjectRoot, RelPath};
use corral_fs::walk::{ProjectWalk, Use};
use corral_fs::MAX_FILE_BYTES;
use std::collections::{HashMap, HashSet};
use std::ffi::OsStr;
use std::io::Read;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

/// What the cache remembers of one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Stat {
    pub size: u64,
    pub mtime: i64,
    pub ctime: i64,
    pub ino: u64,
}

/// The stat cache: path → (stat, hash). Only entries whose mtime was well
/// before the scan that recorded them are kept: a file written again in the
/// same clock tick as the scan read it would otherwise look unchanged.
#[derive(Debug, Default)]
pub(crate) struct Cache {
    pub map: HashMap<Vec<u8>, (Stat, Hash)>,
    /// Bytes of objects in the store, as last measured plus what was
    /// written since (0: unknown).
    pub usage: u64,
}

const CACHE_FILE: &str = "stat-cache";
const CACHE_MAGIC: &[u8] = b"corral-stat-cache-1\n";
/// A file modified less than this before a scan is not cached by it.
const RACY_NS: i64 = 1_000_000_000;

impl Cache {
    /// The cache of the last checkpoint; empty when there is none or it
    /// does not check out (it is only a speed-up).
    pub fn load(store: &Dir) -> Cache {
        let Ok(mut file) = store.open(CACHE_FILE) else {
            return Cache::default();
        };
        let mut bytes = Vec::new();
        if file.read_to_end(&mut bytes).is_err() || bytes.len() < CACHE_MAGIC.len() + 48 {
            return Cache::default();
        }
        let (body, sum) = bytes.split_at(bytes.len() - 32);
        if Hash::of(body).as_bytes() != sum || !body.starts_with(CACHE_MAGIC) {
            return Cache::default();
        }
        Cache::decode(&body[CACHE_MAGIC.len()..]).unwrap_or_default()
    }

    fn decode(mut b: &[u8]) -> Option<Cache> {
        fn take<'a>(b: &mut &'a [u8], n: usize) -> Option<&'a [u8]> {
            if b.len() < n {
                return None;
            }
            let (head, tail) = b.split_at(n);
            *b = tail;
            Some(head)
        }
        fn u64_(b: &mut &[u8]) -> Option<u64> {
            Some(u64::from_le_bytes(take(b, 8)?.try_into().ok()?))
        }
        let usage = u64_(&mut b)?;
        let count = u64_(&mut b)?;
        let mut map = HashMap::with_capacity(count.min(1 << 20) as usize);
        for _ in 0..count {
            let len = u64_(&mut b)? as usize;
            let path = take(&mut b, len)?.to_vec();
            let stat = Stat {
                size: u64_(&mut b)?,
                mtime: u64_(&mut b)? as i64,
                ctime: u64_(&mut b)? as i64,
                ino: u64_(&mut b)?,
            };
            let hash = Hash(take(&mut b, 32)?.try_into().ok()?);
            map.insert(path, (stat, hash));
        }
        Some(Cache { map, usage })
    }

    /// Replaces the cache file (temp file and rename; not synced: a lost
    /// cache only costs a re-read).
    pub fn save(&self, store: &Dir) -> Result<()> {
        let mut out = Vec::with_capacity(CACHE_MAGIC.len() + 16 + self.map.len() * 96);
        out.extend_from_slice(CACHE_MAGIC);
        out.extend_from_slice(&self.usage.to_le_bytes());
        out.extend_from_slice(&(self.map.len() as u64).to_le_bytes());
        for (path, (stat, hash)) in &self.map {
            out.extend_from_slice(&(path.len() as u64).to_le_bytes());
            out.extend_from_slice(path);
            out.extend_from_slice(&stat.size.to_le_bytes());
            out.extend_from_slice(&stat.mtime.to_le_bytes());
            out.extend_from_slice(&stat.ctime.to_le_bytes());
            out.extend_from_slice(&stat.ino.to_le_bytes());
            out.extend_from_slice(hash.as_bytes());
        }
        let sum = Hash::of(&out);
        out.extend_from_slice(sum.as_bytes());
        let tmp = object::write_temp(store, &out)?;
        store
            .rename(&tmp, store, CACHE_FILE)
            .map_err(|e| object::store_io(&e, "save its stat cache"))
    }
}

/// Whether a scan stores what it finds (a checkpoint) or only hashes it (a
/// comparison with the project as it is now).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Keep {
    Store,
    DryRun,
}

/// The project as one scan found it.
pub(crate) struct Scan {
    pub root: Hash,
    /// Every tree of the scan, by hash.
    pub trees: HashMap<Hash, Tree>,
    /// Blobs a dry run did not store: where to read them in the project.
    pub disk: HashMap<Hash, PathBuf>,
    /// Regular files seen.
    pub files: usize,
    /// Bytes written to the store, and how many objects.
    pub written: u64,
    pub new_objects: usize,
    pub cache: Cache,
    /// Whether the cache differs from the one the scan started from.
    pub cache_changed: bool,
    /// Files over the size limit, recorded and not kept.
    pub too_large: Vec<String>,
}

/// The project walk for a snapshot (`Use::Snapshot`): the search's ignore
/// rules (`.gitignore`, nested and negated, `.ignore`, `.git/info/exclude`,
/// the global excludes, ignore files of the folders above), hidden files
/// kept (`.env`, `.eslintrc` are the project's too), `.git` never entered
/// in any case, symlinks never followed.
///
/// The walk itself only says which entries the rules keep: its filter is
/// told of each kept entry, and only folders go on to be visited. What the
/// scan needs of an entry (its `lstat`, a link's target) is read once per
/// folder, by [`list`], relative to the folder's own descriptor.
fn walker(
    root: &Path,
    keep: impl Fn(&ignore::DirEntry) -> bool + Send + Sync + 'static,
) -> ignore::WalkParallel {
    ProjectWalk::new(root, Use::Snapshot)
        .keeping(keep)
        .build_parallel()
}

/// What the scan knows of one name in a folder, from the folder's listing.
#[derive(Debug, Clone, PartialEq, Eq)]
enum What {
    /// A regular file: its stat and permission bits.
    File {
        stat: Stat,
        mode: u32,
    },
    /// A symbolic link, and its target (`None`: unreadable).
    Link(Option<Vec<u8>>),
    Dir,
    /// Sockets, pipes and devices, or a name gone before its `lstat`.
    Other,
}

#[derive(Debug, Clone)]
struct Named {
    name: Vec<u8>,
    what: What,
}

/// One folder's listing: every name in it (but `.git` and Corral's own
/// temp files), with what the scan needs of each, and which of them the
/// walk's rules keep (set by the walk's filter, on the walk's threads).
struct Listing {
    mode: Option<u32>,
    names: Vec<Named>,
    kept: Vec<AtomicBool>,
}

/// The names in folder `rel` of the project (`b""` for the root) and what
/// the scan needs of each. The folder is opened from the root's handle
/// without following a link in any component; each name is then looked
/// at relative to it (`fstatat`, `readlinkat`: one component, never the
/// whole path again). Plain `getdents` through rustix: cap-std's
/// `read_dir` cost twice as much here.
fn list(project: &Dir, rel: &[u8]) -> Option<Listing> {
    let at = if rel.is_empty() {
        Path::new(".")
    } else {
        Path::new(OsStr::from_bytes(rel))
    };
    let fd = object::folder_fd(project, at).ok()?;
    let mode = rustix::fs::fstat(&fd).ok().map(|s| mode_bits(s.st_mode));
    let mut names = Vec::new();
    for entry in rustix::fs::Dir::read_from(&fd).ok()? {
        let entry = entry.ok()?;
        let name = entry.file_name();
        let bytes = name.to_bytes();
        if bytes == b"." || bytes == b".." || is_git_name(bytes) {
            continue;
        }
        use rustix::fs::FileType;
        let what = match entry.file_type() {
            FileType::Directory => What::Dir,
            FileType::Symlink => link_at(&fd, name),
            FileType::RegularFile | FileType::Unknown => what_at(&fd, name),
            _ => What::Other,
        };
        // Corral's own temp files are never the project's.
        if what != What::Dir && corral_fs::temp::is_ours(bytes) {
            continue;
        }
        names.push(Named {
            name: bytes.to_vec(),
            what,
        });
    }
    let kept = names.iter().map(|_| AtomicBool::new(false)).collect();
    Some(Listing { mode, names, kept })
}

/// The names in folder `rel` of the project (what [`list`] lists).
#[cfg(test)]
fn names_in(project: &Dir, rel: &Path) -> Option<Vec<Vec<u8>>> {
    let listing = list(project, rel.as_os_str().as_bytes())?;
    Some(listing.names.into_iter().map(|n| n.name).collect())
}

fn what_at(fd: &rustix::fd::OwnedFd, name: &std::ffi::CStr) -> What {
    use rustix::fs::FileType;
    let Ok(st) = rustix::fs::statat(fd, name, rustix::fs::AtFlags::SYMLINK_NOFOLLOW) else {
        return What::Other;
    };
    match FileType::from_raw_mode(st.st_mode) {
        FileType::RegularFile => What::File {
            stat: raw_stat(&st),
            mode: mode_bits(st.st_mode),
        },
        FileType::Directory => What::Dir,
        FileType::Symlink => link_at(fd, name),
        _ => What::Other,
    }
}

fn link_at(fd: &rustix::fd::OwnedFd, name: &std::ffi::CStr) -> What {
    What::Link(
        rustix::fs::readlinkat(fd, name, Vec::new())
            .ok()
            .map(std::ffi::CString::into_bytes),
    )
}

/// What the scan needs of `rel`, looked up by its path (through the root's
/// handle, never following a link): for an entry the walk kept in a
/// folder whose listing did not have it (changed between the two reads).
fn what_by_path(project: &Dir, rel: &[u8]) -> What {
    let path = Path::new(OsStr::from_bytes(rel));
    let Ok(meta) = project.symlink_metadata(path) else {
        return What::Other;
    };
    let file_type = meta.file_type();
    if file_type.is_file() {
        What::File {
            stat: stat_of(&meta),
            mode: meta.mode() & 0o7777,
        }
    } else if file_type.is_dir() {
        What::Dir
    } else if file_type.is_symlink() {
        What::Link(
            project
                .read_link_contents(path)
                .ok()
                .map(|t| t.into_os_string().into_vec()),
        )
    } else {
        What::Other
    }
}

/// The folder a walk's thread listed last, for the walk's filter: the
/// entries it is told of next are that folder's (the walk reads a folder's
/// entries right after visiting it, on the same thread), and are marked
/// kept in its listing without a message. Anything else is sent.
struct Current {
    walk: u64,
    dir: PathBuf,
    listing: Arc<Listing>,
    cursor: usize,
}

thread_local! {
    static CURRENT: std::cell::RefCell<Option<Current>> = const { std::cell::RefCell::new(None) };
}

impl Current {
    /// Marks `entry` kept if it is a name of this folder's listing.
    fn mark(&mut self, walk: u64, entry: &ignore::DirEntry) -> bool {
        let path = entry.path().as_os_str().as_bytes();
        let dir = self.dir.as_os_str().as_bytes();
        if self.walk != walk
            || path.len() <= dir.len() + 1
            || !path.starts_with(dir)
            || path[dir.len()] != b'/'
        {
            return false;
        }
        let name = &path[dir.len() + 1..];
        let names = &self.listing.names;
        // Both reads of the folder see its names in the same order: the
        // next kept name is at the cursor or a little after it.
        let n = names.len();
        let cursor = self.cursor.min(n);
        let Some(i) = (cursor..n)
            .chain(0..cursor)
            .find(|i| names[*i].name == name)
        else {
            return false;
        };
        self.listing.kept[i].store(true, Ordering::Relaxed);
        self.cursor = i + 1;
        true
    }
}

/// A folder the walk visited (so one its rules keep).
struct Folder {
    rel: Vec<u8>,
    listing: Option<Arc<Listing>>,
}

/// What the walk's threads send: a folder visited, an entry kept that its
/// folder's listing could not mark, or a folder that could not be read.
enum Found {
    Folder(Folder),
    Kept(PathBuf),
    Unreadable(Option<PathBuf>),
}

/// What the walk found: the folders it visited, the kept entries their
/// listings did not mark, and the folders that could not be read.
struct Walked {
    folders: Vec<Folder>,
    kept: Vec<PathBuf>,
    unreadable: HashSet<PathBuf>,
}

fn rel_of<'a>(path: &'a Path, base: &Path) -> Option<&'a [u8]> {
    let path = path.as_os_str().as_bytes();
    let base = base.as_os_str().as_bytes();
    if path == base {
        return Some(b"");
    }
    let rest = path.strip_prefix(base)?;
    rest.strip_prefix(b"/")
}

fn walk(root: &Path, project: &Dir) -> Walked {
    static WALKS: AtomicU64 = AtomicU64::new(1);
    let id = WALKS.fetch_add(1, Ordering::Relaxed);
    let (tx, rx) = std::sync::mpsc::channel::<Found>();
    let filter_tx = tx.clone();
    let filter = move |entry: &ignore::DirEntry| {
        if entry.depth() == 0 {
            return true;
        }
        let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
        if is_dir {
            // Visited: its visit says it is kept.
            return true;
        }
        let marked = CURRENT.with(|current| {
            current
                .borrow_mut()
                .as_mut()
                .is_some_and(|current| current.mark(id, entry))
        });
        if !marked {
            let _ = filter_tx.send(Found::Kept(entry.path().to_path_buf()));
        }
        false
    };
    walker(root, filter).run(|| {
        let tx = tx.clone();
        Box::new(move |item| {
            let message = match item {
                Ok(entry) => {
                    let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
                    let Some(rel) = rel_of(entry.path(), root) else {
                        return ignore::WalkState::Continue;
                    };
                    if !is_dir {
                        // Only the root could be one; a kept entry still.
                        Found::Kept(entry.into_path())
                    } else {
                        let rel = rel.to_vec();
                        let listing = list(project, &rel).map(Arc::new);
                        CURRENT.with(|current| {
                            *current.borrow_mut() = listing.as_ref().map(|listing| Current {
                                walk: id,
                                dir: entry.path().to_path_buf(),
                                listing: Arc::clone(listing),
                                cursor: 0,
                            });
                        });
                        Found::Folder(Folder { rel, listing })
                    }
                }
                Err(e) => Found::Unreadable(error_path(&e).map(Path::to_path_buf)),
            };
            let _ = tx.send(message);
            ignore::WalkState::Continue
        })
    });
    drop(tx);
    let mut walked = Walked {
        folders: Vec::new(),
        kept: Vec::new(),
        unreadable: HashSet::new(),
    };
    for message in rx {
        match message {
            Found::Folder(folder) => walked.folders.push(folder),
            Found::Kept(path) => walked.kept.push(path),
            Found::Unreadable(Some(path)) => {
                walked.unreadable.insert(path);
            }
            Found::Unreadable(None) => {}
        }
    }
    walked
}

/// The path an error of the walk is about.
fn error_path(error: &ignore::Error) -> Option<&Path> {
    match error {
        ignore::Error::WithPath { path, .. } => Some(path),
        ignore::Error::WithDepth { err, .. } | ignore::Error::WithLineNumber { err, .. } => {
            error_path(err)
        }
        _ => None,
    }
}

fn is_git_name(name: &[u8]) -> bool {
    name.eq_ignore_ascii_case(b".git")
}

/// `rel/name` (or `name` at the root) into `key`.
fn join_key(key: &mut Vec<u8>, rel: &[u8], name: &[u8]) {
    key.clear();
    key.extend_from_slice(rel);
    if !rel.is_empty() {
        key.push(b'/');
    }
    key.extend_from_slice(name);
}

/// `rel`'s folder and name.
fn split_key(rel: &[u8]) -> (&[u8], &[u8]) {
    match rel.iter().rposition(|b| *b == b'/') {
        Some(i) => (&rel[..i], &rel[i + 1..]),
        None => (b"", rel),
    }
}

/// One folder as the scan assembles it.
struct Listed {
    rel: Vec<u8>,
    mode: u32,
    names: Vec<Named>,
    kept: Vec<bool>,
}

/// Scans the project.
pub(crate) fn scan(root: &ProjectRoot, store: &Dir, mut old: Cache, keep: Keep) -> Result<Scan> {
    let started = now_ns();
    let base = root.path();
    let mut out = Scan {
        root: Hash([0; 32]),
        trees: HashMap::new(),
        disk: HashMap::new(),
        files: 0,
        written: 0,
        new_objects: 0,
        cache: Cache {
            map: HashMap::with_capacity(old.map.len()),
            usage: old.usage,
        },
        too_large: Vec::new(),
        cache_changed: false,
    };
    let Walked {
        folders,
        kept,
        unreadable,
    } = walk(base, root.dir());
    let mut listed: Vec<Listed> = folders
        .into_iter()
        .map(|folder| {
            let (mode, names, kept) = match folder.listing {
                Some(listing) => {
                    let listing = Arc::try_unwrap(listing).unwrap_or_else(|shared| Listing {
                        mode: shared.mode,
                        names: shared.names.clone(),
                        kept: shared
                            .kept
                            .iter()
                            .map(|k| AtomicBool::new(k.load(Ordering::Relaxed)))
                            .collect(),
                    });
                    let kept = listing
                        .kept
                        .into_iter()
                        .map(AtomicBool::into_inner)
                        .collect();
                    (listing.mode, listing.names, kept)
                }
                None => (None, Vec::new(), Vec::new()),
            };
            Listed {
                rel: folder.rel,
                mode: mode.unwrap_or(0o755),
                names,
                kept,
            }
        })
        .collect();
    let index: HashMap<Vec<u8>, usize> = listed
        .iter()
        .enumerate()
        .map(|(i, folder)| (folder.rel.clone(), i))
        .collect();
    // Kept entries a listing did not mark (a folder that could not be
    // listed, or that changed between the two reads).
    for path in &kept {
        let Some(rel) = rel_of(path, base) else {
            continue;
        };
        let (dir, name) = split_key(rel);
        // A write's or a restore's temp file (not in any listing): gone
        // once it is renamed, or swept once its process is; never part of
        // a snapshot.
        if name.is_empty() || corral_fs::temp::is_ours(name) {
            continue;
        }
        let Some(&at) = index.get(dir) else {
            continue;
        };
        let folder = &mut listed[at];
        match folder.names.iter().position(|n| n.name == name) {
            Some(i) => folder.kept[i] = true,
            None => {
                folder.names.push(Named {
                    name: name.to_vec(),
                    what: what_by_path(root.dir(), rel),
                });
                folder.kept.push(true);
            }
        }
    }

    // Trees, deepest folders first; each folder's own entry goes to its
    // parent's list.
    let depth = |rel: &[u8]| {
        if rel.is_empty() {
            0
        } else {
            1 + rel.iter().filter(|b| **b == b'/').count()
        }
    };
    listed.sort_by_key(|folder| std::cmp::Reverse(depth(&folder.rel)));
    let mut subdirs: HashMap<Vec<u8>, Vec<Entry>> = HashMap::new();
    let mut key = Vec::new();
    let mut root_hash = None;
    for folder in listed {
        let Listed {
            rel,
            mode,
            names,
            kept,
        } = folder;
        let mut entries = subdirs.remove(&rel).unwrap_or_default();
        entries.reserve(names.len());
        for (named, kept) in names.into_iter().zip(kept) {
            let Named { name, what } = named;
            let kind = match what {
                // A folder the walk kept is visited, and gives its own
                // entry; one it did not is recorded by name.
                What::Dir => Kind::Ignored,
                _ if !kept => Kind::Ignored,
                What::File { stat, mode } => {
                    out.files += 1;
                    join_key(&mut key, &rel, &name);
                    file_kind(
                        root, store, &key, stat, mode, &mut old, keep, started, &mut out,
                    )?
                }
                What::Link(Some(target)) => Kind::Symlink { target },
                What::Link(None) | What::Other => Kind::Ignored,
            };
            entries.push(Entry { name, kind });
        }
        // A name both visited as a folder and listed otherwise (changed
        // between the two reads): the folder's entry, pushed first, stays.
        entries.sort_by(|a, b| a.name.cmp(&b.name));
        entries.dedup_by(|later, first| later.name == first.name);
        if rel.is_empty() {
            root_hash = Some(out.add_tree(store, Tree::new(entries), keep)?);
            continue;
        }
        let kind = if unreadable.contains(&base.join(OsStr::from_bytes(&rel))) {
            Kind::Ignored
        } else {
            Kind::Dir {
                mode,
                hash: out.add_tree(store, Tree::new(entries), keep)?,
            }
        };
        let (parent, name) = split_key(&rel);
        subdirs.entry(parent.to_vec()).or_default().push(Entry {
            name: name.to_vec(),
            kind,
        });
    }
    out.root = match root_hash {
        Some(hash) => hash,
        None => {
            let top = subdirs.remove(&Vec::new()).unwrap_or_default();
            out.add_tree(store, Tree::new(top), keep)?
        }
    };
    out.too_large.sort();
    // Every entry of the old cache was taken as its file was met; one left
    // is a file that is gone (or no longer cached).
    out.cache_changed |= !old.map.is_empty();
    Ok(out)
}

impl Scan {
    fn add_tree(&mut self, store: &Dir, tree: Tree, keep: Keep) -> Result<Hash> {
        let bytes = tree.encode();
        let hash = Hash::of(&bytes);
        if keep == Keep::Store && !self.trees.contains_key(&hash) {
            let n = object::put(store, &hash, &bytes)?;
            self.written += n;
            self.new_objects += usize::from(n > 0);
        }
        self.trees.insert(hash, tree);
        Ok(hash)
    }
}

/// A regular file: its hash from the cache when its stat (from the
/// folder's listing) is unchanged, else read (through the root handle,
/// never following a link) and hashed.
#[allow(clippy::too_many_arguments)]
fn file_kind(
    root: &ProjectRoot,
    store: &Dir,
    key: &[u8],
    stat: Stat,
    mode: u32,
    old: &mut Cache,
    keep: Keep,
    started: i64,
    out: &mut Scan,
) -> Result<Kind> {
    let rel = Path::new(OsStr::from_bytes(key));
    let shown = || RelPath::from_resolved(rel).map(|r| r.display());
    if stat.size > MAX_FILE_BYTES {
        out.too_large.push(shown()?);
        return Ok(Kind::Large {
            mode,
            size: stat.size,
        });
    }
    // The old cache's entry moves to the new one (its key with it).
    if let Some((path, (cached, hash))) = old.map.remove_entry(key) {
        // The cache only names objects that are in the store (the
        // collector prunes it before it sweeps).
        if cached == stat {
            out.cache.map.insert(path, (stat, hash));
            if keep == Keep::DryRun {
                out.disk.insert(hash, rel.to_path_buf());
            }
            return Ok(Kind::File {
                mode,
                size: stat.size,
                hash,
            });
        }
        out.cache_changed = true;
    }
    let mut options = OpenOptions::new();
    options
        .read(true)
        .follow(FollowSymlinks::No)
        .custom_flags((rustix::fs::OFlags::NONBLOCK | rustix::fs::OFlags::NOCTTY).bits() as i32);
    let mut file = match root.dir().open_with(rel, &options) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Kind::Ignored),
        Err(e) => return Err(project_io(&e, &shown()?)),
    };
    let meta = file
        .metadata()
        .map_err(|e| project_io(&e, &shown().unwrap_or_default()))?;
    if !meta.is_file() {
        return Ok(Kind::Ignored);
    }
    let stat = stat_of(&meta);
    let mode = meta.mode() & 0o7777;
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    Read::by_ref(&mut file)
        .take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| project_io(&e, &shown().unwrap_or_default()))?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        out.too_large.push(shown()?);
        return Ok(Kind::Large {
            mode,
            size: bytes.len() as u64,
        });
    }
    let hash = Hash::of(&bytes);
    match keep {
        Keep::Store => {
            let n = object::put(store, &hash, &bytes)?;
            out.written += n;
            out.new_objects += usize::from(n > 0);
        }
        Keep::DryRun => {
            out.disk.insert(hash, rel.to_path_buf());
        }
    }
    if stat.mtime < started - RACY_NS && stat.size == bytes.len() as u64 {
        out.cache.map.insert(key.to_vec(), (stat, hash));
        out.cache_changed = true;
    }
    Ok(Kind::File {
        mode,
        size: bytes.len() as u64,
        hash,
    })
}

fn stat_of(meta: &cap_std::fs::Metadata) -> Stat {
    Stat {
        size: meta.len(),
        mtime: meta.mtime() * 1_000_000_000 + meta.mtime_nsec(),
        ctime: meta.ctime() * 1_000_000_000 + meta.ctime_nsec(),
        ino: meta.ino(),
    }
}

/// The same fields from a raw `stat` (their integer types differ between
/// targets, hence the casts).
#[allow(clippy::unnecessary_cast, clippy::cast_possible_wrap)]
fn raw_stat(st: &rustix::fs::Stat) -> Stat {
    Stat {
        size: st.st_size as u64,
        mtime: st.st_mtime as i64 * 1_000_000_000 + st.st_mtime_nsec as i64,
        ctime: st.st_ctime as i64 * 1_000_000_000 + st.st_ctime_nsec as i64,
        ino: st.st_ino as u64,
    }
}

#[allow(clippy::unnecessary_cast)]
fn mode_bits(mode: rustix::fs::RawMode) -> u32 {
    mode as u32 & 0o7777
}

fn now_ns() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as i64)
        .unwrap_or(0)
}

fn project_io(e: &std::io::Error, shown: &str) -> Error {
    Error::from_io(e, shown).hint("The checkpoint could not read this file of the project.")
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::disallowed_methods)]
    use super::*;

    #[test]
    fn the_names_of_a_folder_never_come_from_outside_through_a_link() {
        // `link/sub` as the walk may have seen it while `link` was a folder;
        // now `link` leads out of the project.
        let tmp = tempfile::tempdir().unwrap();
        let project = tmp.path().join("project");
        std::fs::create_dir_all(project.join("real/sub")).unwrap();
        std::fs::write(project.join("real/sub/mine.txt"), "").unwrap();
        std::fs::create_dir_all(tmp.path().join("outside/sub")).unwrap();
        std::fs::write(tmp.path().join("outside/sub/secret.txt"), "").unwrap();
        std::os::unix::fs::symlink("../outside", project.join("link")).unwrap();
        std::os::unix::fs::symlink("real", project.join("inner")).unwrap();
        let dir = Dir::open_ambient_dir(&project, cap_std::ambient_authority()).unwrap();
        assert_eq!(names_in(&dir, Path::new("link/sub")), None);
        assert_eq!(names_in(&dir, Path::new("link")), None);
        // A link inside the project is no folder of it either.
        assert_eq!(names_in(&dir, Path::new("inner/sub")), None);
        assert_eq!(
            names_in(&dir, Path::new("real/sub")),
            Some(vec![b"mine.txt".to_vec()])
        );
        // The same without `openat2` (older kernels).
        for (at, opens) in [
            ("link/sub", false),
            ("inner/sub", false),
            ("real/sub", true),
        ] {
            let opened = object::folder_fd_stepwise(&dir, Path::new(at));
            assert_eq!(opened.is_ok(), opens, "{at}");
        }
        assert!(object::folder_fd_stepwise(&dir, Path::new("")).is_ok());
        let mut top = names_in(&dir, Path::new("")).unwrap();
        top.sort();
        assert_eq!(top, [b"inner".to_vec(), b"link".to_vec(), b"real".to_vec()]);
    }
}
