//! A trigram index that picks the files a `search_files` query can match;
//! the search itself is unchanged (the same walk, rules, searcher, order and
//! cap), it only skips files the index proves cannot match.
//!
//! - The index lives outside the project, in a folder the caller names
//!   ([`IndexConfig`]), one file per project ([`store`]).
//! - A query's pattern is turned into an AND-OR of trigrams ([`plan`]); a
//!   pattern without one (`.`, `a.*b`) scans every file, `indexed: false`.
//! - Freshness: the walk still lists every file and stats it. A file is
//!   skipped only when it is in the index with the same size, mtime, ctime
//!   and inode and none of its trigram sets allows it; a changed or new file
//!   is searched directly, a deleted one is simply not found by the walk.
//!   Files changed just before the build are never trusted (see
//!   [`store::build`]). A missing, damaged or foreign index is rebuilt; when
//!   many files have drifted since the build, it is rebuilt after the query.
//! - With a [`LiveIndex`] (a long-lived process: the app, `corral-cli mcp`),
//!   a watch vouches for every file it did not see change, and a query
//!   skips the walk: it opens the files the index allows plus those that
//!   changed, nothing else ([`live`]).

mod live;
mod plan;
mod store;

use corral_fs::root::{ProjectRoot, RelPath};
pub(super) use live::Listing;
pub use live::LiveIndex;
use roaring::RoaringBitmap;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;
pub use store::BuildProgress;
use store::{Index, Stamp};

/// Where the index is kept and how it is trusted.
#[derive(Debug, Clone)]
pub struct IndexConfig {
    /// The folder holding the indexes (created when missing), outside the
    /// project: e.g. the app's data folder.
    pub dir: PathBuf,
    /// A file whose status changed less than this before the index was
    /// built is searched directly, never through the index: a write in the
    /// same clock tick as the build's stat could leave its size and times
    /// unchanged. Default 2 s (coarse file systems keep 1–2 s times).
    pub settle: Duration,
    /// A query that finds no usable index builds one first (the CLI). When
    /// false (the app, which builds in the background), it scans without
    /// one, and a rebuild the index needs runs on a thread of its own.
    pub build_missing: bool,
    /// A watch that keeps this index true ([`LiveIndex`]): queries it
    /// vouches for skip the walk, and it rebuilds the index itself.
    pub live: Option<Arc<LiveIndex>>,
}

impl IndexConfig {
    /// An index kept in `dir`, with the default settle time, built by the
    /// first query that needs it.
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        IndexConfig {
            dir: dir.into(),
            settle: Duration::from_secs(2),
            build_missing: true,
            live: None,
        }
    }

    /// An index kept in `dir` that queries use once it is built
    /// ([`build_with_progress`]) and never wait for.
    pub fn prebuilt(dir: impl Into<PathBuf>) -> Self {
        IndexConfig {
            build_missing: false,
            ..IndexConfig::new(dir)
        }
    }

    /// This index, kept true by `live`.
    pub fn watched_by(self, live: Arc<LiveIndex>) -> Self {
        IndexConfig {
            live: Some(live),
            ..self
        }
    }
}

/// Builds (or rebuilds) the index of `root` now.
pub fn build(root: &ProjectRoot, config: &IndexConfig) -> corral_fs::error::Result<()> {
    build_with_progress(root, config, &BuildProgress::default())
}

/// [`build`], counting the files in `progress` as it goes.
pub fn build_with_progress(
    root: &ProjectRoot,
    config: &IndexConfig,
    progress: &BuildProgress,
) -> corral_fs::error::Result<()> {
    let path = store::location(&config.dir, root);
    store::build(root, &path, config.settle, progress).map_err(|e| {
        corral_fs::error::Error::invalid_input(format!("could not build the search index: {}", e.0))
            .detail("index", config.dir.display().to_string())
    })
}

/// The files a query may need, for the search's walk to ask about each.
pub(super) struct Candidates {
    index: Index,
    /// `None`: the plan allows every indexed file.
    allowed: Option<RoaringBitmap>,
    /// Files the walk found that the index could not vouch for.
    untrusted: AtomicUsize,
    path: PathBuf,
    config: IndexConfig,
}

impl Candidates {
    /// Whether the walk must search this file (`rel`: relative to the root).
    pub(super) fn must_search(&self, rel: &Path, entry: &ignore::DirEntry) -> bool {
        let Ok(md) = entry.metadata() else {
            return true;
        };
        match self
            .index
            .trusted(rel.as_os_str().as_bytes(), &Stamp::of(&md))
        {
            Some(id) => self.allowed.as_ref().is_none_or(|a| a.contains(id)),
            None => {
                self.untrusted.fetch_add(1, Ordering::Relaxed);
                true
            }
        }
    }

    /// After the query: rebuild when so many files drifted that the index
    /// no longer saves much.
    pub(super) fn finish(self, root: &ProjectRoot) {
        let drifted = self.untrusted.load(Ordering::Relaxed);
        // A live index rebuilds itself when its watch no longer vouches.
        let live = self.config.live.as_ref().is_some_and(|l| l.is_ready());
        if live || drifted <= 256 + self.index.len() / 8 {
            return;
        }
        if self.config.build_missing {
            let _ = store::build(
                root,
                &self.path,
                self.config.settle,
                &BuildProgress::default(),
            );
        } else {
            rebuild_in_background(root, self.path, self.config.settle);
        }
    }
}

/// Rebuilds the index at `path` on a thread of its own, one build per
/// index at a time (a query that finds it drifting while it is being
/// rebuilt starts none).
fn rebuild_in_background(root: &ProjectRoot, path: PathBuf, settle: Duration) {
    static BUILDING: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());
    let building = || BUILDING.lock().unwrap_or_else(|p| p.into_inner());
    if building().contains(&path) {
        return;
    }
    let Ok(root) = ProjectRoot::open(root.path()) else {
        return;
    };
    building().push(path.clone());
    let started = std::thread::Builder::new()
        .name("corral-index".into())
        .spawn({
            let path = path.clone();
            move || {
                let _ = store::build(&root, &path, settle, &BuildProgress::default());
                building().retain(|p| *p != path);
            }
        });
    if started.is_err() {
        building().retain(|p| *p != path);
    }
}

/// With a live index whose watch vouches: the files the query must search
/// under `start` (a folder); no walk needed. `None`: walk (no watch, it cannot vouch, or the pattern has no
/// trigrams).
pub(super) fn listed(
    root: &ProjectRoot,
    query: &str,
    regex: bool,
    case_insensitive: bool,
    config: &IndexConfig,
    start: &RelPath,
) -> Option<Listing> {
    let live = config.live.as_ref()?;
    let plan = plan::plan(query, regex, case_insensitive)?;
    if plan == plan::Query::All {
        return None;
    }
    live.files(root, &plan, start)
}

/// The candidates for a query, or `None` to scan every file (the pattern
/// has no trigrams, or no index could be opened or built).
pub(super) fn prepare(
    root: &ProjectRoot,
    query: &str,
    regex: bool,
    case_insensitive: bool,
    config: &IndexConfig,
) -> Option<Candidates> {
    let plan = plan::plan(query, regex, case_insensitive)?;
    if plan == plan::Query::All {
        return None;
    }
    let path = store::location(&config.dir, root);
    // A missing or damaged index is built afresh, once.
    for attempt in 0..2 {
        if attempt == 1 {
            if !config.build_missing {
                return None;
            }
            store::build(root, &path, config.settle, &BuildProgress::default()).ok()?;
        }
        let Ok(index) = Index::open(root, &path) else {
            continue;
        };
        let Ok(allowed) = index.candidates(&plan) else {
            continue;
        };
        return Some(Candidates {
            index,
            allowed,
            untrusted: AtomicUsize::new(0),
            path,
            config: config.clone(),
        });
    }
    None
}
