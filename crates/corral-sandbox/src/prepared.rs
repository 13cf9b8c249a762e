//! What every run's view shares, prepared once per process in a private
//! folder on the host: the `/etc` a child sees, and the empty file and
//! folder that mask secrets.
//!
//! `/etc` is the files and folders of [`ETC`] copied there, which bwrap
//! binds read-only at `/etc`: one mount, where a mount per folder and a
//! copy per file (`--file`) cost every run; the view is the same allowlist.
//!
//! A copy is a snapshot, as the files copied per run were: a run checks
//! the stamps of what was copied (each entry of [`ETC`], taken by what it
//! leads to, and every file and folder inside the copied folders; links
//! in them are recreated, and change only with their folder) when the
//! last check is more than a second old ([`RECHECK`]), and prepares a
//! new copy when one changed: a command sees a change to `/etc` a second
//! after it at the latest. A copy is made on a thread of its
//! own, from a process's second call on (one that runs a single command
//! makes none): until it is ready, runs get `/etc` entry by entry (folders
//! bound, files copied in), so no call waits for it. A copy is never removed while
//! its process runs (a running command may have it bound); the copies of
//! ended processes are removed when the next is made. The folder lies in
//! `$XDG_RUNTIME_DIR` (else the system temp folder), mode 0700; no child
//! sees it (the sandbox has its own `/tmp` and an empty `/run`).

// Copies `/etc` files into Corral's own folder, never the project.
#![allow(clippy::disallowed_methods)]

use super::stamp::{Stamp, RECHECK};
use super::view::ETC;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::Instant;

/// Most entries copied; a larger `/etc` folder is bound as before.
const MOST_ENTRIES: usize = 20_000;

/// Name of the folders, before the process id.
const PREFIX: &str = "corral-view-";

/// The prepared parts of the view.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct View {
    /// The copy of `/etc`, to bind at `/etc`.
    pub etc: PathBuf,
    /// Holds `file` and `dir`, empty and read-only, bound over secrets.
    pub masks: PathBuf,
}

struct Prepared {
    view: View,
    /// What `/etc` was copied from, each as it was (`None`: absent).
    stamps: Vec<(PathBuf, Option<Stamp>)>,
}

impl Prepared {
    fn holds(&self) -> bool {
        self.stamps.iter().all(|(path, stamp)| now(path) == *stamp)
    }
}

/// The prepared view, if it is ready and what `/etc` was copied from has
/// not changed; else `None` (the caller binds and copies `/etc` entry by
/// entry and makes its own masks, as it does where the view cannot be
/// made), and, from a process's second call on, the view is prepared on a
/// thread of its own for the calls after: no call waits for the copy, and
/// a process that runs one command (`corral-cli call`) makes none.
pub(crate) fn view() -> Option<View> {
    let mut state = lock();
    state.calls = state.calls.saturating_add(1);
    if let Some(view) = ready(&mut state, Instant::now()) {
        return Some(view);
    }
    if state.calls >= 2 && !state.preparing && !state.failed {
        state.preparing = true;
        let spawned = std::thread::Builder::new()
            .name("corral-view".into())
            .spawn(|| {
                let made = prepare(&base());
                let mut state = lock();
                state.failed = made.is_none();
                // Stamped as it was copied.
                state.checked = made.as_ref().map(|_| Instant::now());
                state.ready = made;
                state.preparing = false;
            });
        if spawned.is_err() {
            state.preparing = false;
        }
    }
    None
}

/// The ready copy, if its stamps held when last checked, [`RECHECK`] ago
/// at most (they are checked again now if longer); a copy that no longer
/// holds is dropped.
fn ready(state: &mut State, now: Instant) -> Option<View> {
    let ready = state.ready.as_ref()?;
    let fresh = state
        .checked
        .is_some_and(|at| now.saturating_duration_since(at) < RECHECK);
    if fresh || ready.holds() {
        let view = ready.view.clone();
        if !fresh {
            state.checked = Some(now);
        }
        return Some(view);
    }
    state.ready = None;
    None
}

struct State {
    calls: u32,
    ready: Option<Prepared>,
    /// When the ready copy's stamps last held.
    checked: Option<Instant>,
    preparing: bool,
    /// It could not be made here: no use trying on every call.
    failed: bool,
}

fn lock() -> std::sync::MutexGuard<'static, State> {
    static STATE: Mutex<State> = Mutex::new(State {
        calls: 0,
        ready: None,
        checked: None,
        preparing: false,
        failed: false,
    });
    STATE.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Where the copies are made.
fn base() -> PathBuf {
    std::env::var_os("XDG_RUNTIME_DIR")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute() && p.is_dir())
        .unwrap_or_else(std::env::temp_dir)
}

/// A stamp of a source: an entry of [`ETC`] by what it leads to, one
/// inside a copied folder as it is.
fn now(path: &Path) -> Option<Stamp> {
    if ETC.iter().any(|e| Path::new(e) == path) {
        std::fs::metadata(path).ok().map(|m| Stamp::of(&m))
    } else {
        Stamp::here(path)
    }
}

fn prepare(base: &Path) -> Option<Prepared> {
    sweep(base);
    let folder = new_folder(base)?;
    let view = View {
        etc: folder.join("etc"),
        masks: folder.join("mask"),
    };
    let made = copy_all(&view.etc).filter(|_| super::namespace::create_masks(&view.masks).is_ok());
    if made.is_none() {
        let _ = std::fs::remove_dir_all(&folder);
    }
    made.map(|stamps| Prepared { view, stamps })
}

/// Copies every entry of [`ETC`] into `etc`; the stamps of what was copied.
fn copy_all(etc: &Path) -> Option<Vec<(PathBuf, Option<Stamp>)>> {
    let mut copy = Copy::default();
    dir(etc).ok()?;
    for source in ETC.iter().map(Path::new) {
        let meta = std::fs::metadata(source).ok();
        copy.stamps
            .push((source.to_path_buf(), meta.as_ref().map(Stamp::of)));
        let (Some(meta), Ok(rel)) = (meta, source.strip_prefix("/etc")) else {
            continue;
        };
        let to = etc.join(rel);
        if let Some(parent) = to.parent() {
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o755)
                .create(parent)
                .ok()?;
        }
        if meta.is_dir() {
            copy.folder(source, &to)?;
        } else if meta.is_file() {
            // One the app cannot read is left out, as a missing one.
            let _ = file(source, &to);
        }
    }
    Some(copy.stamps)
}

#[derive(Default)]
struct Copy {
    stamps: Vec<(PathBuf, Option<Stamp>)>,
    entries: usize,
}

impl Copy {
    /// Copies a folder: its files, its folders, its links as links.
    fn folder(&mut self, from: &Path, to: &Path) -> Option<()> {
        dir(to).ok()?;
        for entry in std::fs::read_dir(from).ok()? {
            let entry = entry.ok()?;
            self.entries += 1;
            if self.entries > MOST_ENTRIES {
                return None;
            }
            let (source, dest) = (entry.path(), to.join(entry.file_name()));
            let kind = entry.file_type().ok()?;
            if kind.is_symlink() {
                std::os::unix::fs::symlink(std::fs::read_link(&source).ok()?, dest).ok()?;
            } else if kind.is_dir() {
                self.stamps.push((source.clone(), Stamp::here(&source)));
                self.folder(&source, &dest)?;
            } else if kind.is_file() {
                self.stamps.push((source.clone(), Stamp::here(&source)));
                let _ = file(&source, &dest);
            }
        }
        Some(())
    }
}

fn dir(path: &Path) -> std::io::Result<()> {
    std::fs::DirBuilder::new().mode(0o755).create(path)
}

/// Copies a file's bytes into a new read-only file.
fn file(from: &Path, to: &Path) -> std::io::Result<()> {
    let bytes = std::fs::read(from)?;
    let mut out = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o444)
        .open(to)?;
    std::io::Write::write_all(&mut out, &bytes)
}

/// A new private folder `corral-view-<pid>-<n>` in `base`.
fn new_folder(base: &Path) -> Option<PathBuf> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    (0..8).find_map(|_| {
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let folder = base.join(format!("{PREFIX}{}-{n}", std::process::id()));
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(&folder)
            .ok()
            .map(|()| folder)
    })
}

/// Removes the copies of processes that have ended.
fn sweep(base: &Path) {
    let Ok(entries) = std::fs::read_dir(base) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let pid = name
            .to_str()
            .and_then(|n| n.strip_prefix(PREFIX))
            .and_then(|rest| rest.split('-').next())
            .and_then(|pid| pid.parse::<u32>().ok());
        let ended = pid.is_some_and(|pid| {
            pid != std::process::id() && !Path::new(&format!("/proc/{pid}")).exists()
        });
        if ended && entry.file_type().is_ok_and(|t| t.is_dir()) {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// Every path beneath `dir`, relative, with what it is.
    fn listing(dir: &Path) -> Vec<String> {
        let mut out = Vec::new();
        for entry in ignore::WalkBuilder::new(dir)
            .standard_filters(false)
            .build()
            .flatten()
        {
            let rel = entry
                .path()
                .strip_prefix(dir)
                .unwrap()
                .display()
                .to_string();
            let kind = match entry.file_type() {
                Some(t) if t.is_symlink() => {
                    format!("-> {}", std::fs::read_link(entry.path()).unwrap().display())
                }
                Some(t) if t.is_dir() => "dir".into(),
                _ => "file".into(),
            };
            out.push(format!("{rel} {kind}"));
        }
        out.sort();
        out
    }

    #[test]
    fn the_copy_holds_the_allowed_entries_and_nothing_else() {
        let base = tempfile::tempdir().unwrap();
        let made = prepare(base.path()).unwrap();
        let copied = listing(&made.view.etc);
        for entry in &copied {
            let rel = entry.split(' ').next().unwrap();
            if rel.is_empty() {
                continue;
            }
            let source = Path::new("/etc").join(rel);
            assert!(
                ETC.iter()
                    .any(|e| source.starts_with(e) || Path::new(e).starts_with(&source)),
                "{source:?} is not on the list"
            );
        }
        // What a bind would have shown of each folder, entry by entry.
        for source in ETC.iter().map(Path::new).filter(|p| p.is_dir()) {
            let rel = source.strip_prefix("/etc").unwrap();
            assert_eq!(
                listing(&made.view.etc.join(rel)),
                listing(source),
                "{source:?}"
            );
        }
        for source in ETC.iter().map(Path::new).filter(|p| p.is_file()) {
            let copy = made.view.etc.join(source.strip_prefix("/etc").unwrap());
            if let Ok(bytes) = std::fs::read(source) {
                assert_eq!(std::fs::read(&copy).unwrap(), bytes, "{source:?}");
            }
        }
        assert!(made.holds());
        let masks = &made.view.masks;
        assert_eq!(std::fs::read(masks.join("file")).unwrap(), b"");
        assert_eq!(std::fs::read_dir(masks.join("dir")).unwrap().count(), 0);
    }

    #[test]
    fn the_first_call_does_not_wait_for_the_view_and_a_later_one_gets_it() {
        let started = std::time::Instant::now();
        let mut got = None;
        while got.is_none() && started.elapsed() < std::time::Duration::from_secs(60) {
            got = view();
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let got = got.unwrap();
        assert!(got.etc.join("passwd").exists() || !Path::new("/etc/passwd").exists());
        assert_eq!(view(), Some(got));
    }

    #[test]
    fn a_copy_whose_source_changed_goes_at_the_first_check_past_a_second() {
        let base = tempfile::tempdir().unwrap();
        let made = prepare(base.path()).unwrap();
        let view = made.view.clone();
        let mut stamps = made.stamps;
        // A source that changed since the copy.
        stamps[0].1 = Stamp::here(Path::new("/"));
        let now = Instant::now();
        let mut state = State {
            calls: 2,
            ready: Some(Prepared {
                view: view.clone(),
                stamps,
            }),
            checked: Some(now),
            preparing: false,
            failed: false,
        };
        // Checked a moment ago: taken as it was.
        assert_eq!(ready(&mut state, now + RECHECK / 2), Some(view));
        // Past the window: checked again, and dropped.
        assert_eq!(ready(&mut state, now + RECHECK), None);
        assert!(state.ready.is_none());

        let made = prepare(base.path()).unwrap();
        let view = made.view.clone();
        state.ready = Some(made);
        state.checked = None;
        assert_eq!(ready(&mut state, now), Some(view));
        assert_eq!(state.checked, Some(now), "a check that held is noted");
    }

    #[test]
    fn a_changed_source_is_seen_and_ended_processes_copies_are_swept() {
        let base = tempfile::tempdir().unwrap();
        let made = prepare(base.path()).unwrap();
        let mut stamps = made.stamps;
        // A source that changed since: its stamp no longer holds.
        let (path, stamp) = stamps.iter_mut().find(|(_, s)| s.is_some()).unwrap();
        *stamp = Stamp::here(Path::new("/")).filter(|_| path != Path::new("/"));
        let stale = Prepared {
            view: made.view,
            stamps,
        };
        assert!(!stale.holds());

        // pid 0 is never a process of ours, and `/proc/0` never exists.
        let ended = base.path().join(format!("{PREFIX}0-3"));
        std::fs::create_dir_all(ended.join("etc/ssl")).unwrap();
        let ours = base
            .path()
            .join(format!("{PREFIX}{}-99", std::process::id()));
        std::fs::create_dir(&ours).unwrap();
        prepare(base.path()).unwrap();
        assert!(!ended.exists());
        assert!(ours.exists());
    }
}
