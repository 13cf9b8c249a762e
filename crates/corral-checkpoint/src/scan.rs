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
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

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
fn walker(root: &Path) -> ignore::WalkParallel {
    ProjectWalk::new(root, Use::Snapshot).build_parallel()
}

/// One entry the walk kept, with what the scan needs of it (gathered on
/// the walk's threads: the `lstat`, a link's target).
struct Listed {
    path: PathBuf,
    file_type: std::fs::FileType,
    meta: Option<std::fs::Metadata>,
    link: Option<PathBuf>,
}

/// What the walk's threads send: an entry kept, the names a folder holds
/// (kept or not), or a folder that could not be read.
enum Found {
    Entry(Listed),
    Names(PathBuf, Vec<Vec<u8>>),
    Unreadable(Option<PathBuf>),
}

/// What the walk found: the entries the rules keep (in no order), every
/// folder's names (what the rules left out is what is named but not
/// kept), and the folders that could not be read.
struct Walked {
    listed: Vec<Listed>,
    names: Vec<(PathBuf, Vec<Vec<u8>>)>,
    unreadable: HashSet<PathBuf>,
}

/// The names in folder `rel` of the project. The walk reads the folder
/// too, but keeps only what the rules keep; this second read (on the
/// walk's threads, of names only, opened from the root's handle without
/// following a link) is what lets a checkpoint record the rest. Plain
/// `getdents` through rustix: cap-std's `read_dir` cost twice as much here.
fn names_in(project: &Dir, rel: &Path) -> Option<Vec<Vec<u8>>> {
    let at = if rel.as_os_str().is_empty() {
        Path::new(".")
    } else {
        rel
    };
    let fd = object::folder_fd(project, at).ok()?;
    let mut names = Vec::new();
    for entry in rustix::fs::Dir::read_from(&fd).ok()? {
        let name = entry.ok()?.file_name().to_bytes().to_vec();
        // Corral's own temp files are never the project's.
        if name != b"." && name != b".." && !corral_fs::temp::is_ours(&name) {
            names.push(name);
        }
    }
    Some(names)
}

fn walk(root: &Path, project: &Dir) -> Walked {
    let (tx, rx) = std::sync::mpsc::channel::<Found>();
    walker(root).run(|| {
        let tx = tx.clone();
        Box::new(move |item| {
            let message = match item {
                Ok(entry) => {
                    let Some(file_type) = entry.file_type() else {
                        return ignore::WalkState::Continue;
                    };
                    if file_type.is_dir() {
                        let rel = entry.path().strip_prefix(root).unwrap_or(Path::new("/"));
                        if let Some(names) = names_in(project, rel) {
                            let _ = tx.send(Found::Names(entry.path().to_path_buf(), names));
                        }
                    }
                    if entry.depth() == 0 {
                        return ignore::WalkState::Continue;
                    }
                    let meta = (file_type.is_file() || file_type.is_dir())
                        .then(|| entry.metadata().ok())
                        .flatten();
                    let link = file_type
                        .is_symlink()
                        .then(|| std::fs::read_link(entry.path()).ok())
                        .flatten();
                    Found::Entry(Listed {
                        path: entry.into_path(),
                        file_type,
                        meta,
                        link,
                    })
                }
                Err(e) => Found::Unreadable(error_path(&e).map(Path::to_path_buf)),
            };
            let _ = tx.send(message);
            ignore::WalkState::Continue
        })
    });
    drop(tx);
    let mut walked = Walked {
        listed: Vec::new(),
        names: Vec::new(),
        unreadable: HashSet::new(),
    };
    for message in rx {
        match message {
            Found::Entry(entry) => walked.listed.push(entry),
            Found::Names(dir, names) => walked.names.push((dir, names)),
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

/// Scans the project.
pub(crate) fn scan(root: &ProjectRoot, store: &Dir, old: &Cache, keep: Keep) -> Result<Scan> {
    let started = now_ns();
    let base = root.path();
    let mut children: HashMap<Vec<u8>, Vec<Entry>> = HashMap::new();
    let mut dirs: Vec<(Vec<u8>, u32)> = Vec::new();
    // The names of the folders kept in each folder (their entries come later).
    let mut subdirs: HashMap<Vec<u8>, Vec<Vec<u8>>> = HashMap::new();
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
        cache_changed: true,
    };
    children.insert(Vec::new(), Vec::new());
    let Walked {
        listed,
        names,
        unreadable,
    } = walk(base, root.dir());
    for entry in &listed {
        let Ok(rel) = entry.path.strip_prefix(base) else {
            continue;
        };
        let key = rel.as_os_str().as_bytes().to_vec();
        let name = rel
            .file_name()
            .map(|n| n.as_bytes().to_vec())
            .unwrap_or_default();
        let parent = rel
            .parent()
            .map(|p| p.as_os_str().as_bytes().to_vec())
            .unwrap_or_default();
        let file_type = entry.file_type;
        if !file_type.is_dir() && corral_fs::temp::is_ours(&name) {
            // A write's or a restore's temp file: gone once it is renamed,
            // or swept once its process is; never part of a snapshot.
            continue;
        }
        let kind = if file_type.is_dir() {
            let mode = entry
                .meta
                .as_ref()
                .map(|m| std::os::unix::fs::MetadataExt::mode(m) & 0o7777)
                .unwrap_or(0o755);
            children.entry(key.clone()).or_default();
            subdirs.entry(parent).or_default().push(name);
            dirs.push((key, mode));
            continue;
        } else if file_type.is_symlink() {
            match &entry.link {
                Some(target) => Kind::Symlink {
                    target: target.as_os_str().as_bytes().to_vec(),
                },
                None => Kind::Ignored,
            }
        } else if file_type.is_file() {
            out.files += 1;
            file_kind(
                root,
                store,
                rel,
                entry.meta.as_ref(),
                &key,
                old,
                keep,
                started,
                &mut out,
            )?
        } else {
            // Sockets, pipes and devices: not kept, and left be.
            Kind::Ignored
        };
        children
            .entry(parent)
            .or_default()
            .push(Entry { name, kind });
    }

    // Entries the rules left out, at every level: recorded by name (their
    // content is never read), so that a restore never removes them.
    // A folder that names no more than it kept (most of them) is passed
    // by a count, without comparing its names.
    let no_folders = Vec::new();
    for (dir, names) in &names {
        let Ok(rel) = dir.strip_prefix(base) else {
            continue;
        };
        let key = rel.as_os_str().as_bytes();
        if unreadable.contains(dir) {
            continue;
        }
        let Some(entries) = children.get_mut(key) else {
            continue;
        };
        let folders = subdirs.get(key).unwrap_or(&no_folders);
        let git = names.iter().filter(|name| is_git_name(name)).count();
        if names.len() - git <= entries.len() + folders.len() {
            continue;
        }
        let kept: HashSet<&[u8]> = entries
            .iter()
            .map(|e| e.name.as_slice())
            .chain(folders.iter().map(Vec::as_slice))
            .collect();
        let left_out: Vec<Entry> = names
            .iter()
            .filter(|name| !is_git_name(name) && !kept.contains(name.as_slice()))
            .map(|name| Entry {
                name: name.clone(),
                kind: Kind::Ignored,
            })
            .collect();
        entries.extend(left_out);
    }

    // Trees, deepest folders first.
    dirs.sort_by_key(|(key, _)| std::cmp::Reverse(key.iter().filter(|b| **b == b'/').count()));
    for (key, mode) in dirs {
        let path = Path::new(OsStr::from_bytes(&key));
        let name = path
            .file_name()
            .map(|n| n.as_bytes().to_vec())
            .unwrap_or_default();
        let parent = path
            .parent()
            .map(|p| p.as_os_str().as_bytes().to_vec())
            .unwrap_or_default();
        let entries = children.remove(&key).unwrap_or_default();
        let kind = if unreadable.contains(&base.join(path)) {
            Kind::Ignored
        } else {
            Kind::Dir {
                mode,
                hash: out.add_tree(store, Tree::new(entries), keep)?,
            }
        };
        children
            .entry(parent)
            .or_default()
            .push(Entry { name, kind });
    }
    let top = children.remove(&Vec::new()).unwrap_or_default();
    out.root = out.add_tree(store, Tree::new(top), keep)?;
    out.too_large.sort();
    out.cache_changed = out.cache.map != old.map;
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

/// A regular file: its hash from the cache when its stat is unchanged,
/// else read (through the root handle, never following a link) and hashed.
#[allow(clippy::too_many_arguments)]
fn file_kind(
    root: &ProjectRoot,
    store: &Dir,
    rel: &Path,
    listed: Option<&std::fs::Metadata>,
    key: &[u8],
    old: &Cache,
    keep: Keep,
    started: i64,
    out: &mut Scan,
) -> Result<Kind> {
    let shown = RelPath::from_resolved(rel)?.display();
    let Some(meta) = listed else {
        // Gone since the walk listed it: not part of this snapshot.
        return Ok(Kind::Ignored);
    };
    let stat = std_stat(meta);
    let mode = std::os::unix::fs::MetadataExt::mode(meta) & 0o7777;
    if stat.size > MAX_FILE_BYTES {
        out.too_large.push(shown);
        return Ok(Kind::Large {
            mode,
            size: stat.size,
        });
    }
    if let Some((cached, hash)) = old.map.get(key) {
        // The cache only names objects that are in the store (the
        // collector prunes it before it sweeps).
        if *cached == stat {
            out.cache.map.insert(key.to_vec(), (stat, *hash));
            if keep == Keep::DryRun {
                out.disk.insert(*hash, rel.to_path_buf());
            }
            return Ok(Kind::File {
                mode,
                size: stat.size,
                hash: *hash,
            });
        }
    }
    let mut options = OpenOptions::new();
    options
        .read(true)
        .follow(FollowSymlinks::No)
        .custom_flags((rustix::fs::OFlags::NONBLOCK | rustix::fs::OFlags::NOCTTY).bits() as i32);
    let mut file = match root.dir().open_with(rel, &options) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Kind::Ignored),
        Err(e) => return Err(project_io(&e, &shown)),
    };
    let meta = file.metadata().map_err(|e| project_io(&e, &shown))?;
    if !meta.is_file() {
        return Ok(Kind::Ignored);
    }
    let stat = stat_of(&meta);
    let mode = meta.mode() & 0o7777;
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    Read::by_ref(&mut file)
        .take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| project_io(&e, &shown))?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        out.too_large.push(shown);
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

fn std_stat(meta: &std::fs::Metadata) -> Stat {
    use std::os::unix::fs::MetadataExt as _;
    Stat {
        size: meta.len(),
        mtime: meta.mtime() * 1_000_000_000 + meta.mtime_nsec(),
        ctime: meta.ctime() * 1_000_000_000 + meta.ctime_nsec(),
        ino: meta.ino(),
    }
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
