//! The open project's folders watched for changes, so the file tree follows
//! the disk without a refresh.
//!
//! Every folder of the project is watched on its own (inotify, not
//! recursive): the project walk for a watch (`Use::Watch`) lists them,
//! never following a symlink, never entering `.git/`, `node_modules/`,
//! `target/` or an ignored folder, so nothing outside the root and nothing
//! ignored is ever watched. A folder created later is walked and watched
//! the same way. Events are gathered for 200 ms of quiet (at most 1 s) and
//! recorded as the folders whose listing changed, each batch under a
//! counter the window polls (`tree_changes(since)`). The watches are the
//! project's one inotify instance (`corral_fs::watch`), shared with the
//! search index. Dropping the `TreeWatcher` (the project closes) stops its
//! deliveries and its thread.

use corral_tools::fs::walk::{is_bulk, ProjectWalk, Use};
use corral_tools::fs::watch::{event::ModifyKind, Delivery, EventKind, ProjectWatch, Subscription};
use std::collections::{BTreeSet, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::{Duration, Instant};

/// Quiet time that ends a batch of events.
const DEBOUNCE: Duration = Duration::from_millis(200);
/// The longest a batch waits while events keep coming.
const MAX_BATCH: Duration = Duration::from_secs(1);
/// Changed folders remembered for pollers; one further behind re-lists all.
const KEPT: usize = 512;
/// At most this many folders are watched (inotify watches are a per-user limit).
const MAX_WATCHES: usize = 20_000;

/// What changed in the tree since a counter the window had.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, ts_rs::TS)]
pub struct TreeChanges {
    /// The newest batch; pass it back as `since` next time.
    #[ts(type = "number")]
    pub counter: u64,
    /// Folders (relative to the root, `"."` for the root) whose entries
    /// changed after `since`.
    pub folders: Vec<String>,
    /// `since` is too old (or from another project): re-list every folder.
    pub all: bool,
}

#[derive(Default)]
struct Log {
    counter: u64,
    /// (batch, folder), oldest first.
    recent: VecDeque<(u64, String)>,
    /// The newest batch no longer fully in `recent`.
    forgotten: u64,
}

/// The changed folders, shared by the watcher's thread and the pollers.
#[derive(Default)]
pub struct ChangeLog {
    log: Mutex<Log>,
}

impl ChangeLog {
    fn record(&self, folders: BTreeSet<String>) {
        if folders.is_empty() {
            return;
        }
        let mut log = self.log.lock().unwrap_or_else(PoisonError::into_inner);
        log.counter += 1;
        let batch = log.counter;
        log.recent.extend(folders.into_iter().map(|f| (batch, f)));
        while log.recent.len() > KEPT {
            if let Some((dropped, _)) = log.recent.pop_front() {
                log.forgotten = log.forgotten.max(dropped);
            }
        }
    }

    /// The folders changed after batch `since`.
    pub fn since(&self, since: u64) -> TreeChanges {
        let log = self.log.lock().unwrap_or_else(PoisonError::into_inner);
        if since > log.counter || since < log.forgotten {
            return TreeChanges {
                counter: log.counter,
                folders: Vec::new(),
                all: since != log.counter,
            };
        }
        let folders: BTreeSet<&String> = log
            .recent
            .iter()
            .filter(|(batch, _)| *batch > since)
            .map(|(_, folder)| folder)
            .collect();
        TreeChanges {
            counter: log.counter,
            folders: folders.into_iter().cloned().collect(),
            all: false,
        }
    }
}

/// Watches one project's folders while it lives.
pub struct TreeWatcher {
    changes: Arc<ChangeLog>,
    ready: Arc<AtomicBool>,
    /// Kept only here: dropping it ends the deliveries, and with them the
    /// event channel and so the thread.
    _watch: Arc<Subscription>,
}

impl TreeWatcher {
    /// Starts watching `root` (canonical) on a watch of its own.
    pub fn start(root: &Path) -> Result<TreeWatcher, String> {
        let watch =
            ProjectWatch::new().map_err(|e| format!("cannot watch the project's folders: {e}"))?;
        TreeWatcher::start_in(&watch, root)
    }

    /// Starts watching `root` (canonical) on a share of the project's
    /// `watch`; the folders are walked and watched on a thread of its own.
    pub fn start_in(watch: &ProjectWatch, root: &Path) -> Result<TreeWatcher, String> {
        let (tx, rx) = channel::<Delivery>();
        // The channel's sender lives in the subscription: dropping it ends
        // the thread.
        let watcher = Arc::new(watch.subscribe(move |event| {
            let _ = tx.send(event);
        }));
        let changes = Arc::new(ChangeLog::default());
        let ready = Arc::new(AtomicBool::new(false));
        let mut worker = Worker {
            root: root.to_path_buf(),
            ignored: root_ignores(root),
            watcher: Arc::downgrade(&watcher),
            watched: 0,
        };
        let (log, up) = (changes.clone(), ready.clone());
        std::thread::Builder::new()
            .name("corral-tree-watch".into())
            .spawn(move || {
                let root = worker.root.clone();
                worker.watch_below(&root);
                up.store(true, Ordering::Release);
                worker.run(rx, &log);
            })
            .map_err(|e| format!("no thread could watch the project's folders: {e}"))?;
        Ok(TreeWatcher {
            changes,
            ready,
            _watch: watcher,
        })
    }

    /// The changes recorded so far (kept by a test past the watcher's end).
    pub fn changes(&self) -> Arc<ChangeLog> {
        self.changes.clone()
    }

    /// Whether every folder present at the start is watched.
    pub fn is_ready(&self) -> bool {
        self.ready.load(Ordering::Acquire)
    }
}

/// The root's own `.gitignore` (and `.git/info/exclude`), for folders
/// created after the first walk (that walk reads every `.gitignore`).
fn root_ignores(root: &Path) -> ignore::gitignore::Gitignore {
    let mut builder = ignore::gitignore::GitignoreBuilder::new(root);
    builder.add(root.join(".gitignore"));
    builder.add(root.join(".git/info/exclude"));
    builder
        .build()
        .unwrap_or_else(|_| ignore::gitignore::Gitignore::empty())
}

struct Worker {
    root: PathBuf,
    ignored: ignore::gitignore::Gitignore,
    watcher: Weak<Subscription>,
    watched: usize,
}

impl Worker {
    /// Whether a folder (inside the root) is one never watched.
    fn skipped(&self, path: &Path) -> bool {
        let name = path.file_name().unwrap_or_default();
        name == ".git"
            || is_bulk(name)
            || self
                .ignored
                .matched_path_or_any_parents(path, true)
                .is_ignore()
    }

    /// Watches `dir` (a real folder inside the root) and every folder
    /// below it that is not ignored, without following symlinks.
    fn watch_below(&mut self, dir: &Path) {
        let Some(watcher) = self.watcher.upgrade() else {
            return;
        };
        let walk = ProjectWalk::new(dir, Use::Watch).build();
        for entry in walk.flatten() {
            if self.watched >= MAX_WATCHES {
                break;
            }
            let path = entry.path();
            let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
            if !is_dir || !path.starts_with(&self.root) {
                continue;
            }
            if entry.depth() > 0 && self.skipped(path) {
                continue;
            }
            if watcher.watch(path).is_ok() {
                self.watched += 1;
            }
        }
    }

    /// Gathers events into batches until the watcher is dropped.
    fn run(&mut self, rx: Receiver<Delivery>, log: &ChangeLog) {
        while let Ok(first) = rx.recv() {
            let mut folders = BTreeSet::new();
            self.take(first, &mut folders);
            let started = Instant::now();
            loop {
                match rx.recv_timeout(DEBOUNCE) {
                    Ok(event) => self.take(event, &mut folders),
                    Err(RecvTimeoutError::Timeout) => break,
                    // The project closed: nothing more is reported.
                    Err(RecvTimeoutError::Disconnected) => return,
                }
                if started.elapsed() >= MAX_BATCH {
                    break;
                }
            }
            if self.watcher.strong_count() == 0 {
                return;
            }
            log.record(folders);
        }
    }

    /// Notes the folders an event changes; a new folder is watched too.
    fn take(&mut self, event: Delivery, folders: &mut BTreeSet<String>) {
        let Ok(event) = event else { return };
        if matches!(event.kind, EventKind::Access(_)) {
            return;
        }
        for path in &event.paths {
            let Ok(rel) = path.strip_prefix(&self.root) else {
                continue;
            };
            if rel.components().any(|c| c.as_os_str() == ".git") {
                continue;
            }
            if rel.as_os_str().is_empty() {
                // The root itself (its own metadata): no listing changed.
                continue;
            }
            let parent = rel.parent().unwrap_or(Path::new(""));
            folders.insert(shown(parent));
            let created = matches!(
                event.kind,
                EventKind::Create(_) | EventKind::Modify(ModifyKind::Name(_))
            );
            let is_dir = std::fs::symlink_metadata(path).is_ok_and(|m| m.is_dir());
            if created && is_dir && !self.skipped(path) {
                self.watch_below(path);
                // Files made in it before its watch began.
                folders.insert(shown(rel));
            }
        }
    }
}

/// A folder as the tree names it: `/`-separated, `"."` for the root.
fn shown(rel: &Path) -> String {
    if rel.as_os_str().is_empty() {
        return ".".to_string();
    }
    rel.components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}
