//! A live index: the folders a search walks are watched (inotify), so a
//! query can skip the walk and open only the files the index names, plus
//! whatever changed since the index was built.
//!
//! How the watch vouches for the index:
//! - Every folder the search's walk enters is watched on its own
//!   (non-recursive, found with the same `ignore` rules, so ignored and
//!   hidden folders cost no watch). Each event notes the path it names with
//!   a sequence number. A folder created later is not watched: it is noted
//!   as a whole, and queries walk it with the same rules instead of
//!   trusting the index beneath it.
//! - A generation is an index built after its folders were watched. The
//!   sequence number taken before the watches were added is its base;
//!   every path noted after the base is searched directly (walked, if it is
//!   a folder), never looked up. Folders that appeared while the watches
//!   were being added are watched after the build and noted too.
//! - Before each query, a barrier: a file created in a folder of our own
//!   (outside the project) that the same watch follows. One inotify
//!   instance (the project's watch, shared with the file tree) delivers
//!   its events in order, so once the barrier's event is
//!   in, every change made before the query began has been noted: a file
//!   just written, everything a finished command did.
//! - The watch cannot vouch when events were lost (the kernel's queue
//!   overflowed), when an ignore file changed (`.gitignore`, `.ignore`,
//!   `.git/info/exclude`: which files a walk lists may have changed), when
//!   the root itself moved, or when too many paths changed. The query then
//!   walks as an index without a watch does, and a new generation is built
//!   in the background.
//! - Not seen: the user's global git excludes file changing while the
//!   project is open.

use super::plan::Query;
use super::store::{self, BuildProgress, Index};
use super::IndexConfig;
use crate::walk;
use corral_fs::error::{Error, ErrorCode, Result};
use corral_fs::root::{ProjectRoot, RelPath};
use corral_fs::secret::is_secret_like;
use corral_fs::watch::event::{AccessKind, AccessMode};
use corral_fs::watch::{Delivery, EventKind, ProjectWatch, Subscription};
use roaring::RoaringBitmap;
use std::collections::{BTreeSet, HashMap};
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

/// Paths noted since a generation's base beyond which the watch stops
/// vouching (queries walk until the next generation).
const MAX_CHANGED: usize = 10_000;
/// Changed paths past which a new generation is built in the background.
const REBUILD_AT: usize = 1_000;
/// How long a query waits for its barrier before walking instead.
const BARRIER_WAIT: Duration = Duration::from_secs(2);

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A project's index kept true by a watch; queries through an
/// [`IndexConfig`] holding it skip the walk whenever the watch vouches.
pub struct LiveIndex {
    /// The root's canonical path.
    root: PathBuf,
    /// Where the index file is kept, and its settle time.
    config: IndexConfig,
    notes: Arc<Notes>,
    /// Its share of the project's watch (the tree's too, in a session).
    watch: Subscription,
    /// A generation is being built.
    building: AtomicBool,
    /// Queries that skipped the walk.
    listed: AtomicU64,
}

impl std::fmt::Debug for LiveIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LiveIndex")
            .field("root", &self.root)
            .field("dir", &self.config.dir)
            .finish_non_exhaustive()
    }
}

/// An index and the sequence number its watch vouches from.
struct Generation {
    index: Index,
    /// The files always searched directly.
    direct: RoaringBitmap,
    base: u64,
}

/// What the watch has noted; shared with the watcher's thread.
struct Notes {
    root: PathBuf,
    /// The folder of barrier files, canonical (removed with the index).
    barriers: PathBuf,
    /// The same folder, opened.
    barrier_dir: cap_std::fs::Dir,
    state: Mutex<Noted>,
    arrived: Condvar,
}

#[derive(Default)]
struct Noted {
    /// Events taken so far.
    seq: u64,
    /// Each path (relative to the root) an event named, with the newest
    /// such event's number.
    changed: HashMap<PathBuf, u64>,
    /// The newest event after which the watch cannot vouch.
    blind: u64,
    barrier_sent: u64,
    barrier_seen: u64,
    current: Option<Arc<Generation>>,
}

impl Notes {
    /// Notes one event (on the watcher's thread).
    fn take(&self, event: Delivery) {
        let mut noted = lock(&self.state);
        noted.seq += 1;
        let seq = noted.seq;
        let Ok(event) = event else {
            noted.blind = seq;
            return;
        };
        if event.need_rescan() {
            noted.blind = seq;
        }
        // Reads (our own searches among them) change nothing; a file closed
        // after writing counts, in case its writes went unreported.
        let written = AccessKind::Close(AccessMode::Write);
        if matches!(event.kind, EventKind::Access(kind) if kind != written) {
            return;
        }
        for path in &event.paths {
            if let Ok(name) = path.strip_prefix(&self.barriers) {
                let token = name
                    .to_str()
                    .and_then(|n| n.strip_prefix('b'))
                    .and_then(|n| n.parse::<u64>().ok());
                if let Some(token) = token {
                    noted.barrier_seen = noted.barrier_seen.max(token);
                    self.arrived.notify_all();
                }
                continue;
            }
            let Ok(rel) = path.strip_prefix(&self.root) else {
                continue;
            };
            if rel.as_os_str().is_empty() {
                // The root itself moved or went away.
                noted.blind = seq;
                continue;
            }
            if rel.starts_with(".git") {
                // `.git/info/exclude` is an ignore file; a `.git` made or
                // removed at the root brings or takes one (and `.git/info`
                // is watched only if it was there at the build).
                if rel == Path::new(".git") || rel.starts_with(".git/info") {
                    noted.blind = seq;
                }
                continue;
            }
            if rel
                .file_name()
                .is_some_and(|n| n == ".gitignore" || n == ".ignore")
            {
                noted.blind = seq;
            }
            noted.changed.insert(rel.to_path_buf(), seq);
        }
        if noted.changed.len() > MAX_CHANGED {
            noted.blind = seq;
            noted.changed.clear();
        }
    }

    /// Waits until every event queued before this call has been taken;
    /// false if the barrier did not come through in time.
    fn barrier(&self) -> bool {
        let token = {
            let mut noted = lock(&self.state);
            noted.barrier_sent += 1;
            noted.barrier_sent
        };
        let file = format!("b{token}");
        if self.barrier_dir.create(&file).is_err() {
            return false;
        }
        let deadline = Instant::now() + BARRIER_WAIT;
        let mut noted = lock(&self.state);
        let arrived = loop {
            // A later barrier's file was made after this call began too.
            if noted.barrier_seen >= token {
                break true;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break false;
            }
            noted = self
                .arrived
                .wait_timeout(noted, left)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        };
        drop(noted);
        let _ = self.barrier_dir.remove_file(&file);
        arrived
    }
}

fn watch_error(e: impl std::fmt::Display) -> Error {
    Error::new(
        ErrorCode::Io,
        format!("could not watch the project for the search index: {e}"),
    )
    .hint("Searches still work, reading every file; raise fs.inotify.max_user_watches for a large project.")
}

impl LiveIndex {
    /// Starts a watch for `root`'s index in `config.dir`, with no index
    /// yet: queries walk until [`LiveIndex::build`] has built one.
    pub fn new(root: &ProjectRoot, config: &IndexConfig) -> Result<Arc<LiveIndex>> {
        let watch = ProjectWatch::new().map_err(watch_error)?;
        LiveIndex::with_watch(root, config, &watch)
    }

    /// [`LiveIndex::new`] on a share of the project's `watch` (one inotify
    /// instance per project, the tree's too).
    pub fn with_watch(
        root: &ProjectRoot,
        config: &IndexConfig,
        watch: &ProjectWatch,
    ) -> Result<Arc<LiveIndex>> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let io = |e: std::io::Error| Error::from_io(&e, &config.dir.display().to_string());
        std::fs::DirBuilder::new()
            .recursive(true)
            .create(&config.dir)
            .map_err(io)?;
        let dir = cap_std::fs::Dir::open_ambient_dir(&config.dir, cap_std::ambient_authority())
            .map_err(io)?;
        remove_orphan_barriers(&dir);
        let name = format!(
            "watch-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let _ = dir.remove_dir_all(&name);
        dir.create_dir(&name).map_err(io)?;
        let barrier_dir = dir.open_dir(&name).map_err(io)?;
        let barriers = config.dir.join(&name).canonicalize().map_err(io)?;
        let notes = Arc::new(Notes {
            root: root.path().to_path_buf(),
            barriers: barriers.clone(),
            barrier_dir,
            state: Mutex::new(Noted::default()),
            arrived: Condvar::new(),
        });
        let watch = {
            let notes = notes.clone();
            watch.subscribe(move |event| notes.take(event))
        };
        watch.watch(&barriers).map_err(watch_error)?;
        let mut config = config.clone();
        config.live = None;
        Ok(Arc::new(LiveIndex {
            root: root.path().to_path_buf(),
            config,
            notes,
            watch,
            building: AtomicBool::new(false),
            listed: AtomicU64::new(0),
        }))
    }

    /// Builds a new generation now: watches every folder a search walks,
    /// builds the index (counting in `progress`), then watches the folders
    /// that appeared meanwhile. One build at a time: a call while another
    /// runs returns at once.
    pub fn build(&self, progress: &BuildProgress) -> Result<()> {
        if self.building.swap(true, Ordering::AcqRel) {
            return Ok(());
        }
        let built = self.build_generation(progress);
        self.building.store(false, Ordering::Release);
        built
    }

    /// Whether queries can skip the walk right now (a generation is built).
    pub fn is_ready(&self) -> bool {
        lock(&self.notes.state).current.is_some()
    }

    /// How many queries so far skipped the walk.
    pub fn walk_free_queries(&self) -> u64 {
        self.listed.load(Ordering::Relaxed)
    }

    fn build_generation(&self, progress: &BuildProgress) -> Result<()> {
        let root = ProjectRoot::open(&self.root)?;
        let base = lock(&self.notes.state).seq;
        let before = self.watch_folders(&root)?;
        let path = store::location(&self.config.dir, &root);
        let broken = |e: store::Broken| {
            Error::new(
                ErrorCode::Io,
                format!("could not build the search index: {}", e.0),
            )
            .detail("index", self.config.dir.display().to_string())
        };
        store::build(&root, &path, self.config.settle, progress).map_err(broken)?;
        let index = Index::open(&root, &path).map_err(broken)?;
        let after = self.watch_folders(&root)?;
        let mut noted = lock(&self.notes.state);
        for late in after.difference(&before) {
            noted.changed.insert(late.clone(), base + 1);
        }
        noted.changed.retain(|_, seq| *seq > base);
        let direct = index.direct().collect();
        noted.current = Some(Arc::new(Generation {
            index,
            direct,
            base,
        }));
        Ok(())
    }

    /// Watches every folder a search walks (one already watched keeps its
    /// watch) and `.git/info`; returns the folders, relative to the root.
    fn watch_folders(&self, root: &ProjectRoot) -> Result<BTreeSet<PathBuf>> {
        let mut folders = BTreeSet::new();
        for entry in walk::walker(root.path()).build().flatten() {
            if !entry.file_type().is_some_and(|t| t.is_dir()) {
                continue;
            }
            self.watch.watch(entry.path()).map_err(watch_error)?;
            if let Some(rel) = walk::relative(root, entry.path()) {
                folders.insert(rel.to_path_buf());
            }
        }
        // `.git/info/exclude` is an ignore file too; only real folders.
        let real_dir = |p: &Path| std::fs::symlink_metadata(p).is_ok_and(|m| m.is_dir());
        let info = root.path().join(".git/info");
        if real_dir(&root.path().join(".git")) && real_dir(&info) {
            self.watch.watch(&info).map_err(watch_error)?;
        }
        Ok(folders)
    }

    /// The current generation and the paths changed since its base, when
    /// the watch vouches for everything else.
    fn vouch(self: &Arc<Self>) -> Option<(Arc<Generation>, BTreeSet<PathBuf>)> {
        if !self.is_ready() || !self.notes.barrier() {
            return None;
        }
        let noted = lock(&self.notes.state);
        let generation = noted.current.clone()?;
        if noted.blind > generation.base {
            drop(noted);
            self.rebuild_soon();
            return None;
        }
        let changed: BTreeSet<PathBuf> = noted
            .changed
            .iter()
            .filter(|(_, seq)| **seq > generation.base)
            .map(|(path, _)| path.clone())
            .collect();
        drop(noted);
        if changed.len() > REBUILD_AT {
            self.rebuild_soon();
        }
        Some((generation, changed))
    }

    /// Builds a new generation on a thread of its own, unless one is
    /// being built.
    fn rebuild_soon(self: &Arc<Self>) {
        if self.building.load(Ordering::Acquire) {
            return;
        }
        let live = self.clone();
        let _ = std::thread::Builder::new()
            .name("corral-index".into())
            .spawn(move || {
                let _ = live.build(&BuildProgress::default());
            });
    }

    /// The files a query planned as `plan` must search under `start`,
    /// without a walk: those the index cannot rule out, plus every file at
    /// or beneath a changed path. `None` when the watch cannot vouch or the
    /// index does not cover `start` (a hidden or ignored folder named as
    /// `path`).
    pub(super) fn files(
        self: &Arc<Self>,
        root: &ProjectRoot,
        plan: &Query,
        start: &RelPath,
    ) -> Option<Listing> {
        // The watch of another folder vouches for nothing here.
        if root.path() != self.root {
            return None;
        }
        let (generation, changed) = self.vouch()?;
        if !start.is_root() && !covered(root, start.as_path()) {
            return None;
        }
        let mut allowed = generation.index.candidates(plan).ok()??;
        allowed |= &generation.direct;
        let start = if start.is_root() {
            PathBuf::new()
        } else {
            start.as_path().to_path_buf()
        };
        let extra = if changed.is_empty() {
            Vec::new()
        } else {
            changed_files(root, &changed)
                .into_iter()
                .filter(|rel| rel.starts_with(&start))
                .collect()
        };
        self.listed.fetch_add(1, Ordering::Relaxed);
        Some(Listing {
            // File numbers follow the paths' order.
            ids: allowed.iter().collect(),
            generation,
            extra,
            changed,
            start,
        })
    }
}

/// The files a live query searches, looked up one by one (a capped search
/// may need only the first few).
pub(crate) struct Listing {
    generation: Arc<Generation>,
    /// The indexed files the query cannot rule out, in path order.
    ids: Vec<u32>,
    /// Files at or beneath a changed path, found by a walk.
    extra: Vec<PathBuf>,
    changed: BTreeSet<PathBuf>,
    /// The folder searched, relative to the root (empty: the root).
    start: PathBuf,
}

impl Listing {
    /// How many entries [`Listing::file`] can be asked for.
    pub(crate) fn len(&self) -> usize {
        self.ids.len() + self.extra.len()
    }

    /// Entry `i`: a file to search, relative to the root, or `None` to
    /// skip it (outside the start folder, or changed since the build and
    /// so listed among the walked ones if it is still there).
    pub(crate) fn file(&self, i: usize) -> Option<&Path> {
        match self.ids.get(i) {
            Some(&id) => {
                let rel = Path::new(OsStr::from_bytes(self.generation.index.path(id)?));
                (rel.starts_with(&self.start) && !beneath_one(&self.changed, rel)).then_some(rel)
            }
            None => self.extra.get(i - self.ids.len()).map(PathBuf::as_path),
        }
    }
}

impl Drop for LiveIndex {
    fn drop(&mut self) {
        let barriers = &self.notes.barriers;
        let (Some(parent), Some(name)) = (barriers.parent(), barriers.file_name()) else {
            return;
        };
        if let Ok(dir) = cap_std::fs::Dir::open_ambient_dir(parent, cap_std::ambient_authority()) {
            let _ = dir.remove_dir_all(name);
        }
    }
}

/// Removes the barrier folders of processes that are gone.
fn remove_orphan_barriers(dir: &cap_std::fs::Dir) {
    let Ok(entries) = dir.entries() else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let pid = name
            .to_str()
            .and_then(|n| n.strip_prefix("watch-"))
            .and_then(|n| n.split('-').next())
            .and_then(|n| n.parse::<u32>().ok());
        if let Some(pid) = pid {
            if !Path::new("/proc").join(pid.to_string()).exists() {
                let _ = dir.remove_dir_all(&name);
            }
        }
    }
}

/// Whether `rel` is a changed path or lies beneath one.
fn beneath_one(changed: &BTreeSet<PathBuf>, rel: &Path) -> bool {
    rel.ancestors()
        .any(|a| !a.as_os_str().is_empty() && changed.contains(a))
}

/// Whether `rel` is a folder on the way to a changed path.
fn leads_to_one(changed: &BTreeSet<PathBuf>, rel: &Path) -> bool {
    // Paths beneath `rel` sort right after it, component by component.
    changed
        .range(rel.to_path_buf()..)
        .next()
        .is_some_and(|c| c.starts_with(rel))
}

/// The files at or beneath the changed paths that a search's walk lists
/// now: the same walk, entering only the folders that lead to them.
fn changed_files(root: &ProjectRoot, changed: &BTreeSet<PathBuf>) -> Vec<PathBuf> {
    let base = root.path().to_path_buf();
    let changed = changed.clone();
    let keep = move |entry: &ignore::DirEntry| {
        let Ok(rel) = entry.path().strip_prefix(&base) else {
            return false;
        };
        rel.as_os_str().is_empty() || beneath_one(&changed, rel) || leads_to_one(&changed, rel)
    };
    walk::walker_keeping(root.path(), keep)
        .build()
        .flatten()
        .filter(|entry| entry.file_type().is_some_and(|t| t.is_file()))
        .filter_map(|entry| walk::relative(root, entry.path()).map(Path::to_path_buf))
        // Secrets are never indexed, and a search of a folder skips them.
        .filter(|rel| !is_secret_like(&rel.to_string_lossy()))
        .collect()
}

/// Whether a walk from the root enters `start` (a folder): only then does
/// the index hold what a search from there lists.
fn covered(root: &ProjectRoot, start: &Path) -> bool {
    let base = root.path().to_path_buf();
    let wanted = start.to_path_buf();
    let keep = move |entry: &ignore::DirEntry| {
        entry
            .path()
            .strip_prefix(&base)
            .is_ok_and(|rel| wanted.starts_with(rel))
    };
    walk::walker_keeping(root.path(), keep)
        .build()
        .flatten()
        .any(|entry| {
            entry.file_type().is_some_and(|t| t.is_dir())
                && walk::relative(root, entry.path()) == Some(start)
        })
}
