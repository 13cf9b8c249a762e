//! What every run's view shares, prepared once per machine in a private
//! folder on the host and shared by the user's processes: the `/etc` a
//! child sees, and the empty file and folder that mask secrets.
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
//! after it at the latest. The copy's own folders and files are stamped
//! too and checked with them, so a copy that changed since it was made (a
//! file removed by a cleaner of old temporary files, one written) is not
//! used either.
//!
//! Copies live in one folder per user, `corral-etc-<uid>` in
//! `$XDG_RUNTIME_DIR` (else the system temp folder), mode 0700: no child
//! sees it (the sandbox has its own `/tmp` and an empty `/run`), and no
//! other user may enter it. Each copy is a folder of its own there with a
//! manifest ([`MANIFEST`]: what was copied and what the copy holds, each
//! with its stamp), written last and renamed into place, so a copy without
//! one is not finished. A process's first call looks for a finished copy
//! whose stamps all hold, in a folder this user owns that no one else may
//! enter, with a manifest this user owns that no one else may write; a
//! copy that fails any of these is not used, and one is made again. The
//! first command of a process (the window's, `corral-cli exec`'s, a
//! `corral-cli call`) thus binds one `/etc` as later commands do, once a
//! process has made the copy since `/etc` last changed.
//!
//! A copy is made on a thread of its own when none was found, from a
//! process's second call on: one that runs a single command makes none
//! (the copy takes 10 to 20 ms on a tmpfs, and on a slow disk up to a
//! second, which a one-shot process would pay again each time it ended
//! before the copy did). Until it is ready, runs get `/etc` entry by entry
//! (folders bound, files copied in), so no call waits for it. A process holds a shared lock (`flock`) on the
//! manifest of every copy it used until it ends (a running command may
//! have it bound), and a copy is removed only by a process that takes it
//! exclusively, when its stamps no longer hold or (no manifest) the
//! process making it has ended. The per-process copies of earlier
//! versions (`corral-view-<pid>-<n>`) are removed once their process has
//! ended.

// Copies `/etc` files into Corral's own folder, never the project.
#![allow(clippy::disallowed_methods)]

use super::stamp::{Stamp, RECHECK};
use super::view::ETC;
use rustix::fs::{Mode, OFlags};
use std::io::{Read, Write};
use std::os::fd::OwnedFd;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::Instant;

/// Most entries copied; a larger `/etc` folder is bound as before.
const MOST_ENTRIES: usize = 20_000;

/// Name of the per-process folders of earlier versions, before the
/// process id: swept once their process has ended.
const PREFIX: &str = "corral-view-";

/// Name of the user's folder of copies, before the user's id.
const SHARED: &str = "corral-etc-";

/// A copy's manifest, in its folder; its first line is [`header`], then
/// a line per stamp ([`Entry::line`]).
const MANIFEST: &str = "stamps";

/// A manifest is smaller than this; a larger file is not one of ours.
const MOST_MANIFEST_BYTES: u64 = 4 << 20;

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
    /// What `/etc` was copied from, each as it was (`None`: absent),
    /// then the copy's own folders and files as they were made.
    stamps: Vec<(PathBuf, Option<Stamp>)>,
    /// The manifest, locked shared: no other process removes the copy
    /// while this one may bind it.
    held: Option<OwnedFd>,
}

impl Prepared {
    fn holds(&self) -> bool {
        self.stamps.iter().all(|(path, stamp)| now(path) == *stamp)
    }
}

/// The prepared view, if it is ready and what `/etc` was copied from has
/// not changed; else `None` (the caller binds and copies `/etc` entry by
/// entry and makes its own masks, as it does where the view cannot be
/// made). A process's first call looks for a copy another process made
/// ([`find`]); when there is none, from a process's second call on, one is
/// prepared on a thread of its own for the calls (and processes) after: no
/// call waits for the copy, and a process that runs one command
/// (`corral-cli call`) makes none.
pub(crate) fn view() -> Option<View> {
    let mut state = lock();
    state.calls = state.calls.saturating_add(1);
    let now = Instant::now();
    if let Some(view) = ready(&mut state, now) {
        return Some(view);
    }
    if !state.looked {
        state.looked = true;
        if let Some(found) = find(&base()) {
            let view = found.view.clone();
            state.ready = Some(found);
            // Its stamps were checked as it was found.
            state.checked = Some(now);
            return Some(view);
        }
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
                if let Some(old) = std::mem::replace(&mut state.ready, made) {
                    retire(old);
                }
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
/// holds is dropped, and the next call looks for another process's again.
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
    if let Some(old) = state.ready.take() {
        retire(old);
    }
    state.looked = false;
    None
}

/// Keeps the lock on a copy this process used until it ends: a command
/// started before may still have it bound.
fn retire(old: Prepared) {
    static RETIRED: Mutex<Vec<OwnedFd>> = Mutex::new(Vec::new());
    if let Some(held) = old.held {
        RETIRED
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(held);
    }
}

struct State {
    calls: u32,
    ready: Option<Prepared>,
    /// When the ready copy's stamps last held.
    checked: Option<Instant>,
    /// Whether another process's copy was looked for since the last
    /// ready copy went.
    looked: bool,
    preparing: bool,
    /// It could not be made here: no use trying on every call.
    failed: bool,
}

fn lock() -> std::sync::MutexGuard<'static, State> {
    static STATE: Mutex<State> = Mutex::new(State {
        calls: 0,
        ready: None,
        checked: None,
        looked: false,
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
/// inside a copied folder (or of the copy) as it is.
fn now(path: &Path) -> Option<Stamp> {
    if ETC.iter().any(|e| Path::new(e) == path) {
        std::fs::metadata(path).ok().map(|m| Stamp::of(&m))
    } else {
        Stamp::here(path)
    }
}

/// Makes a copy in the user's folder of copies in `base` (removing the
/// copies no process uses that no longer hold), publishes it and holds
/// it; `None` where it cannot be made, or the folder is not the user's
/// own or others may enter it.
fn prepare(base: &Path) -> Option<Prepared> {
    sweep_earlier(base);
    let shared = shared_folder(base, true)?;
    sweep(&shared);
    let folder = new_folder(&shared)?;
    let made = make(&folder);
    if made.is_none() {
        let _ = std::fs::remove_dir_all(&folder);
    }
    made
}

/// Copies `/etc` and makes the masks in `folder`, then writes its
/// manifest, held.
fn make(folder: &Path) -> Option<Prepared> {
    let view = View {
        etc: folder.join("etc"),
        masks: folder.join("mask"),
    };
    let mut stamps = copy_all(&view.etc)?;
    super::namespace::create_masks(&view.masks).ok()?;
    let copy = copy_stamps(folder)?;
    let held = publish(folder, &stamps, &copy)?;
    stamps.extend(
        copy.into_iter()
            .map(|(rel, stamp)| (folder.join(rel), stamp)),
    );
    Some(Prepared {
        view,
        stamps,
        held: Some(held),
    })
}

/// The first line of a manifest: what made it (its version and the list
/// of what is copied), so a copy made by another version is not used.
fn header() -> String {
    format!(
        "corral etc copy 1 {} {}",
        env!("CARGO_PKG_VERSION"),
        ETC.join(",")
    )
}

/// The stamps of the copy's own folders and files (its links change only
/// with their folder), relative to `folder`: `etc` and `mask` and all
/// beneath them.
fn copy_stamps(folder: &Path) -> Option<Vec<(PathBuf, Option<Stamp>)>> {
    let mut out = Vec::new();
    let mut pending = vec![PathBuf::from("etc"), PathBuf::from("mask")];
    while let Some(rel) = pending.pop() {
        let path = folder.join(&rel);
        let meta = std::fs::symlink_metadata(&path).ok()?;
        out.push((rel.clone(), Some(Stamp::of(&meta))));
        if meta.is_dir() {
            for entry in std::fs::read_dir(&path).ok()? {
                let entry = entry.ok()?;
                let kind = entry.file_type().ok()?;
                if kind.is_dir() || kind.is_file() {
                    pending.push(rel.join(entry.file_name()));
                }
            }
        }
    }
    Some(out)
}

/// One line of a manifest: a source of `/etc` (by its whole path) or a
/// part of the copy (by its path in the copy's folder), and its stamp.
fn line(kind: &str, path: &Path, stamp: Option<&Stamp>) -> String {
    let stamp = stamp.map_or_else(|| "-".to_string(), Stamp::text);
    format!("{kind}\t{}\t{stamp}\n", encode(path))
}

/// A path as a manifest writes it: its bytes, those that could break a
/// line (and `%`) as `%XX`.
fn encode(path: &Path) -> String {
    use std::os::unix::ffi::OsStrExt;
    let mut out = String::new();
    for &byte in path.as_os_str().as_bytes() {
        if byte.is_ascii_graphic() && byte != b'%' {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02x}"));
        }
    }
    out
}

/// [`encode`] undone.
fn decode(text: &str) -> Option<PathBuf> {
    use std::os::unix::ffi::OsStringExt;
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while let Some(&byte) = bytes.get(at) {
        if byte == b'%' {
            let hex = text.get(at + 1..at + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            at += 3;
        } else {
            out.push(byte);
            at += 1;
        }
    }
    Some(PathBuf::from(std::ffi::OsString::from_vec(out)))
}

/// Writes the manifest of the copy in `folder` under another name, locks
/// it shared, and renames it into place: the copy is published, held.
fn publish(
    folder: &Path,
    sources: &[(PathBuf, Option<Stamp>)],
    copy: &[(PathBuf, Option<Stamp>)],
) -> Option<OwnedFd> {
    let mut text = header();
    text.push('\n');
    for (path, stamp) in sources {
        text.push_str(&line("source", path, stamp.as_ref()));
    }
    for (rel, stamp) in copy {
        text.push_str(&line("copy", rel, stamp.as_ref()));
    }
    let partial = folder.join(format!(".{MANIFEST}.partial"));
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(&partial)
        .ok()?;
    file.write_all(text.as_bytes()).ok()?;
    let held = OwnedFd::from(file);
    rustix::fs::flock(&held, rustix::fs::FlockOperation::NonBlockingLockShared).ok()?;
    std::fs::rename(&partial, folder.join(MANIFEST)).ok()?;
    Some(held)
}

/// The first finished copy in the user's folder of copies in `base`
/// whose stamps all hold, held.
fn find(base: &Path) -> Option<Prepared> {
    let shared = shared_folder(base, false)?;
    let entries = std::fs::read_dir(&shared).ok()?;
    entries
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .find_map(|e| load(&e.path(), Lock::Shared))
}

/// How [`load`] locks a manifest.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Lock {
    /// To use the copy (other processes may too).
    Shared,
    /// To remove it (no process uses it).
    Exclusive,
}

/// Why a copy was not loaded.
enum Unloaded {
    /// No manifest: not finished, or being removed.
    Unfinished,
    /// Another process holds it (or, exclusively, uses it).
    Busy,
    /// Not this user's, others may write it, not one of ours, or its
    /// stamps no longer hold: not to be used.
    Stale(OwnedFd),
}

/// The copy in `folder`, its manifest locked, if it is finished, this
/// user's, whole, and its stamps all hold.
fn load(folder: &Path, lock: Lock) -> Option<Prepared> {
    read_copy(folder, lock).ok()
}

/// [`load`], with why not.
fn read_copy(folder: &Path, lock: Lock) -> Result<Prepared, Unloaded> {
    let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
    let manifest = folder.join(MANIFEST);
    let fd = rustix::fs::open(&manifest, flags, Mode::empty()).map_err(|_| Unloaded::Unfinished)?;
    let operation = match lock {
        Lock::Shared => rustix::fs::FlockOperation::NonBlockingLockShared,
        Lock::Exclusive => rustix::fs::FlockOperation::NonBlockingLockExclusive,
    };
    rustix::fs::flock(&fd, operation).map_err(|_| Unloaded::Busy)?;
    let Ok(stat) = rustix::fs::fstat(&fd) else {
        return Err(Unloaded::Stale(fd));
    };
    // Still the published one: a remover unlinks it first, holding it
    // exclusively.
    let published = std::fs::symlink_metadata(&manifest)
        .is_ok_and(|m| m.dev() == stat.st_dev && m.ino() == stat.st_ino);
    if !published {
        return Err(Unloaded::Unfinished);
    }
    let regular =
        rustix::fs::FileType::from_raw_mode(stat.st_mode) == rustix::fs::FileType::RegularFile;
    let size = u64::try_from(stat.st_size).unwrap_or(u64::MAX);
    if !(regular && owned_closed(&stat, 0o022) && stat.st_nlink == 1) || size > MOST_MANIFEST_BYTES
    {
        return Err(Unloaded::Stale(fd));
    }
    let mut text = String::new();
    let read = std::fs::File::from(fd.try_clone().map_err(|_| Unloaded::Busy)?)
        .take(MOST_MANIFEST_BYTES)
        .read_to_string(&mut text);
    let stamps = read.ok().and_then(|_| parse(folder, &text));
    let Some(stamps) = stamps else {
        return Err(Unloaded::Stale(fd));
    };
    let prepared = Prepared {
        view: View {
            etc: folder.join("etc"),
            masks: folder.join("mask"),
        },
        stamps,
        held: None,
    };
    if !prepared.holds() {
        return Err(Unloaded::Stale(fd));
    }
    Ok(Prepared {
        held: Some(fd),
        ..prepared
    })
}

/// A manifest's stamps, the copy's paths put in `folder`; `None` if it
/// is not a whole manifest of this version: its header, its lines, only
/// sources in `/etc`, parts of the copy only inside it, and the copy's
/// `/etc` and masks among them.
fn parse(folder: &Path, text: &str) -> Option<Vec<(PathBuf, Option<Stamp>)>> {
    let body = text.strip_prefix(&header())?.strip_prefix('\n')?;
    if !body.is_empty() && !body.ends_with('\n') {
        return None;
    }
    let mut stamps = Vec::new();
    let mut parts = Vec::new();
    for line in body.lines() {
        let mut fields = line.split('\t');
        let (kind, path, stamp) = (fields.next()?, fields.next()?, fields.next()?);
        if fields.next().is_some() {
            return None;
        }
        let path = decode(path)?;
        let stamp = match stamp {
            "-" => None,
            text => Some(Stamp::parse(text)?),
        };
        let clean = path.components().all(|c| {
            matches!(
                c,
                std::path::Component::Normal(_) | std::path::Component::RootDir
            )
        });
        if !clean {
            return None;
        }
        match kind {
            "source" if path.starts_with("/etc") => stamps.push((path, stamp)),
            "copy" if path.is_relative() => {
                stamp?;
                parts.push(path.clone());
                stamps.push((folder.join(path), stamp));
            }
            _ => return None,
        }
    }
    let has = |rel: &str| parts.iter().any(|p| p == Path::new(rel));
    let whole = has("etc") && has("mask") && has("mask/file") && has("mask/dir");
    let every_source = ETC
        .iter()
        .all(|e| stamps.iter().any(|(p, _)| p == Path::new(e)));
    (whole && every_source).then_some(stamps)
}

/// The user's folder of copies in `base`, made (0700) if `make` and
/// absent; `None` unless this user owns it and no one else may enter it.
fn shared_folder(base: &Path, make: bool) -> Option<PathBuf> {
    let uid = rustix::process::geteuid().as_raw();
    let shared = base.join(format!("{SHARED}{uid}"));
    if make {
        let _ = std::fs::DirBuilder::new().mode(0o700).create(&shared);
    }
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let fd = rustix::fs::open(&shared, flags, Mode::empty()).ok()?;
    let stat = rustix::fs::fstat(&fd).ok()?;
    owned_closed(&stat, 0o077).then_some(shared)
}

/// Owned by this process's user, with none of `others` in its mode (an
/// ACL granting more shows in the group bits).
fn owned_closed(stat: &rustix::fs::Stat, others: u32) -> bool {
    stat.st_uid == rustix::process::geteuid().as_raw() && stat.st_mode & others == 0
}

/// Removes the copies in `shared` no process holds that are not to be
/// used (their stamps no longer hold, not whole, not this user's), and
/// the unfinished ones whose process has ended (`<pid>-<n>`).
fn sweep(shared: &Path) {
    let Ok(entries) = std::fs::read_dir(shared) else {
        return;
    };
    for entry in entries.flatten() {
        if !entry.file_type().is_ok_and(|t| t.is_dir()) {
            continue;
        }
        let folder = entry.path();
        match read_copy(&folder, Lock::Exclusive) {
            // Whole, holds, and no process uses it (made since this
            // process looked): left for the next.
            Ok(_) | Err(Unloaded::Busy) => {}
            Err(Unloaded::Stale(held)) => {
                // Unpublished first, while held: no one takes it after.
                let _ = std::fs::remove_file(folder.join(MANIFEST));
                drop(held);
                let _ = std::fs::remove_dir_all(&folder);
            }
            Err(Unloaded::Unfinished) => {
                let pid = entry
                    .file_name()
                    .to_str()
                    .and_then(|n| n.split('-').next())
                    .and_then(|pid| pid.parse::<u32>().ok());
                if pid.is_some_and(ended) {
                    let _ = std::fs::remove_dir_all(&folder);
                }
            }
        }
    }
}

/// Whether process `pid` has ended (and is not this one).
fn ended(pid: u32) -> bool {
    pid != std::process::id() && !Path::new(&format!("/proc/{pid}")).exists()
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

/// A new private folder `<pid>-<n>` in `shared`.
fn new_folder(shared: &Path) -> Option<PathBuf> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    (0..8).find_map(|_| {
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let folder = shared.join(format!("{}-{n}", std::process::id()));
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(&folder)
            .ok()
            .map(|()| folder)
    })
}

/// Removes the per-process copies of earlier versions whose process has
/// ended.
fn sweep_earlier(base: &Path) {
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
        if pid.is_some_and(ended) && entry.file_type().is_ok_and(|t| t.is_dir()) {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use std::os::unix::fs::PermissionsExt;

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
                held: None,
            }),
            checked: Some(now),
            looked: true,
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
            held: None,
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

    /// The user's folder of copies in `base`.
    fn shared(base: &Path) -> PathBuf {
        base.join(format!("{SHARED}{}", rustix::process::geteuid().as_raw()))
    }

    /// The copies' folders in `base`.
    fn copies(base: &Path) -> Vec<PathBuf> {
        let mut out: Vec<_> = std::fs::read_dir(shared(base))
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .collect();
        out.sort();
        out
    }

    /// Removes every copy in `base`.
    fn clear(base: &Path) {
        for copy in copies(base) {
            let _ = std::fs::set_permissions(
                copy.join("mask/dir"),
                std::fs::Permissions::from_mode(0o700),
            );
            std::fs::remove_dir_all(copy).unwrap();
        }
    }

    fn folder_of(view: &View) -> PathBuf {
        view.etc.parent().unwrap().to_path_buf()
    }

    fn is_root() -> bool {
        rustix::process::geteuid().is_root()
    }

    /// A change made to a copy's `etc`.
    type Change = Box<dyn Fn(&Path)>;
    /// A manifest's text made into another.
    type Corruption = Box<dyn Fn(&str) -> String>;

    #[test]
    fn a_copy_one_process_made_is_found_by_the_next_and_kept_while_held() {
        let base = tempfile::tempdir().unwrap();
        assert!(find(base.path()).is_none(), "nothing made yet");
        let made = prepare(base.path()).unwrap();
        let folder = folder_of(&made.view);
        assert_eq!(folder.parent().unwrap(), shared(base.path()));
        let mode = std::fs::metadata(shared(base.path())).unwrap().mode();
        assert_eq!(mode & 0o777, 0o700);
        // The next process finds it, whole and holding.
        let found = find(base.path()).unwrap();
        assert_eq!(found.view, made.view);
        assert!(found.holds());
        assert_eq!(found.stamps, made.stamps);
        // Held, even changed since: a later process's sweep leaves it.
        let file = made.view.masks.join("file");
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
        std::fs::write(&file, "not empty").unwrap();
        assert!(find(base.path()).is_none(), "a changed copy was used");
        let other = prepare(base.path()).unwrap();
        assert!(folder.exists(), "a held copy was removed");
        // Held by neither: the next sweep removes it, and the new copy is
        // what is found.
        drop((made, found));
        let after = find(base.path()).unwrap();
        assert_eq!(after.view, other.view);
        drop(after);
        let third = prepare(base.path()).unwrap();
        assert!(!folder.exists(), "a stale copy no one holds was left");
        assert_eq!(copies(base.path()).len(), 2, "{:?}", copies(base.path()));
        drop((other, third));
    }

    #[test]
    fn a_copy_changed_since_it_was_made_is_not_used_and_is_made_again() {
        let base = tempfile::tempdir().unwrap();
        // Each change, made to a fresh copy no process holds.
        let changes: Vec<(&str, Change)> = vec![
            (
                "a file of etc written",
                Box::new(|etc: &Path| {
                    let file = std::fs::read_dir(etc)
                        .unwrap()
                        .flatten()
                        .find(|e| e.file_type().unwrap().is_file())
                        .map(|e| e.path());
                    let file = file.unwrap_or_else(|| etc.join("new"));
                    let _ = std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644));
                    std::fs::write(&file, "changed").unwrap();
                }),
            ),
            (
                "a name added to etc",
                Box::new(|etc: &Path| {
                    std::fs::write(etc.join("ld.so.preload"), "/tmp/x.so").unwrap();
                }),
            ),
            (
                "a folder of etc emptied of one entry",
                Box::new(|etc: &Path| {
                    let folder = std::fs::read_dir(etc)
                        .unwrap()
                        .flatten()
                        .find(|e| {
                            e.file_type().unwrap().is_dir()
                                && std::fs::read_dir(e.path()).unwrap().next().is_some()
                        })
                        .map(|e| e.path());
                    match folder {
                        Some(folder) => {
                            let entry =
                                std::fs::read_dir(&folder).unwrap().next().unwrap().unwrap();
                            let path = entry.path();
                            if entry.file_type().unwrap().is_dir() {
                                std::fs::remove_dir_all(path).unwrap();
                            } else {
                                std::fs::remove_file(path).unwrap();
                            }
                        }
                        None => std::fs::write(etc.join("x"), "").unwrap(),
                    }
                }),
            ),
            (
                "a mask given content",
                Box::new(|etc: &Path| {
                    let file = etc.parent().unwrap().join("mask/file");
                    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600))
                        .unwrap();
                    std::fs::write(&file, "secret-looking").unwrap();
                }),
            ),
            (
                "the masks' folder given an entry",
                Box::new(|etc: &Path| {
                    let dir = etc.parent().unwrap().join("mask/dir");
                    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
                    std::fs::write(dir.join("x"), "").unwrap();
                }),
            ),
        ];
        for (what, change) in changes {
            let made = prepare(base.path()).unwrap();
            let folder = folder_of(&made.view);
            drop(made);
            assert!(find(base.path()).is_some(), "{what}: not found before");
            change(&folder.join("etc"));
            assert!(find(base.path()).is_none(), "{what}: used after");
            let again = prepare(base.path()).unwrap();
            assert!(!folder.exists(), "{what}: not removed");
            drop(again);
            assert!(find(base.path()).is_some(), "{what}: not made again");
            clear(base.path());
        }
    }

    #[test]
    fn a_manifest_corrupted_or_others_may_write_is_not_used() {
        let base = tempfile::tempdir().unwrap();
        let corruptions: Vec<(&str, Corruption)> = vec![
            ("empty", Box::new(|_: &str| String::new())),
            (
                "truncated",
                Box::new(|t: &str| t[..t.len() / 2].to_string()),
            ),
            (
                "its last newline cut",
                Box::new(|t: &str| t.trim_end().to_string()),
            ),
            (
                "another version",
                Box::new(|t: &str| t.replacen("etc copy 1", "etc copy 0", 1)),
            ),
            (
                "a stamp changed",
                Box::new(|t: &str| {
                    let mut lines: Vec<String> = t.lines().map(String::from).collect();
                    let at = lines.iter().position(|l| l.starts_with("copy\t")).unwrap();
                    let (head, stamp) = lines[at].rsplit_once('\t').unwrap();
                    lines[at] = format!("{head}\t{}", stamp.replacen(' ', " 1", 1));
                    lines.join("\n") + "\n"
                }),
            ),
            (
                "a part outside the copy",
                Box::new(|t: &str| t.replacen("copy\tetc\t", "copy\t../etc\t", 1)),
            ),
            (
                "a source outside /etc",
                Box::new(|t: &str| t.replacen("source\t/etc/", "source\t/home/", 1)),
            ),
            (
                "the masks left out",
                Box::new(|t: &str| {
                    t.lines()
                        .filter(|l| !l.starts_with("copy\tmask"))
                        .map(|l| format!("{l}\n"))
                        .collect()
                }),
            ),
            (
                "a source left out",
                Box::new(|t: &str| {
                    t.lines()
                        .filter(|l| !l.starts_with("source\t/etc/passwd\t"))
                        .map(|l| format!("{l}\n"))
                        .collect()
                }),
            ),
            (
                "rubbish",
                Box::new(|_: &str| "\u{0}\u{1}x\ty\tz\n".to_string()),
            ),
        ];
        for (what, corrupt) in corruptions {
            let made = prepare(base.path()).unwrap();
            let folder = folder_of(&made.view);
            drop(made);
            let manifest = folder.join(MANIFEST);
            let text = std::fs::read_to_string(&manifest).unwrap();
            assert!(parse(&folder, &text).is_some());
            std::fs::write(&manifest, corrupt(&text)).unwrap();
            assert!(find(base.path()).is_none(), "{what}: used");
            let again = prepare(base.path()).unwrap();
            assert!(!folder.exists(), "{what}: not removed");
            drop(again);
            assert!(find(base.path()).is_some(), "{what}: not made again");
            clear(base.path());
        }
        // Writable by others, or a second link.
        for mode in [0o666, 0o620, 0o602] {
            clear(base.path());
            let made = prepare(base.path()).unwrap();
            let folder = folder_of(&made.view);
            drop(made);
            let manifest = folder.join(MANIFEST);
            std::fs::set_permissions(&manifest, std::fs::Permissions::from_mode(mode)).unwrap();
            assert!(find(base.path()).is_none(), "mode {mode:o}: used");
            drop(prepare(base.path()).unwrap());
            assert!(!folder.exists(), "mode {mode:o}: not removed");
        }
        clear(base.path());
        let made = prepare(base.path()).unwrap();
        let folder = folder_of(&made.view);
        drop(made);
        std::fs::hard_link(folder.join(MANIFEST), base.path().join("second")).unwrap();
        assert!(
            find(base.path()).is_none(),
            "a manifest with two links was used"
        );
        // A link in its place.
        std::fs::remove_file(folder.join(MANIFEST)).unwrap();
        std::os::unix::fs::symlink(base.path().join("second"), folder.join(MANIFEST)).unwrap();
        assert!(find(base.path()).is_none(), "a link to a manifest was used");
    }

    #[test]
    fn another_user_s_manifest_or_folder_is_not_used() {
        if !is_root() {
            eprintln!("note: not root, cannot give a file to another user; skipping");
            return;
        }
        let nobody = Some(rustix::process::Uid::from_raw(65534));
        let base = tempfile::tempdir().unwrap();
        let made = prepare(base.path()).unwrap();
        let folder = folder_of(&made.view);
        drop(made);
        rustix::fs::chown(folder.join(MANIFEST), nobody, None).unwrap();
        assert!(find(base.path()).is_none());
        drop(prepare(base.path()).unwrap());
        assert!(!folder.exists());
        assert!(find(base.path()).is_some());
        // The folder of copies another user's: neither used nor made in.
        rustix::fs::chown(shared(base.path()), nobody, None).unwrap();
        let before = copies(base.path());
        assert!(find(base.path()).is_none());
        assert!(prepare(base.path()).is_none());
        assert_eq!(copies(base.path()), before);
    }

    #[test]
    fn a_folder_of_copies_others_may_enter_is_not_used_nor_made_in() {
        let base = tempfile::tempdir().unwrap();
        drop(prepare(base.path()).unwrap());
        let folder = shared(base.path());
        for mode in [0o755, 0o711, 0o770, 0o701] {
            std::fs::set_permissions(&folder, std::fs::Permissions::from_mode(mode)).unwrap();
            let before = copies(base.path());
            assert!(find(base.path()).is_none(), "mode {mode:o}: used");
            assert!(prepare(base.path()).is_none(), "mode {mode:o}: made in");
            assert_eq!(copies(base.path()), before);
        }
        std::fs::set_permissions(&folder, std::fs::Permissions::from_mode(0o700)).unwrap();
        assert!(find(base.path()).is_some());
        // A link in its place is not followed.
        let real = base.path().join("real");
        std::fs::rename(&folder, &real).unwrap();
        std::os::unix::fs::symlink(&real, &folder).unwrap();
        assert!(find(base.path()).is_none());
        assert!(prepare(base.path()).is_none());
    }

    #[test]
    fn unfinished_copies_go_once_their_process_has_ended() {
        let base = tempfile::tempdir().unwrap();
        drop(prepare(base.path()).unwrap());
        // pid 0 is never a process of ours, and `/proc/0` never exists.
        let ended = shared(base.path()).join("0-1");
        std::fs::create_dir_all(ended.join("etc")).unwrap();
        let ours = shared(base.path()).join(format!("{}-99", std::process::id()));
        std::fs::create_dir_all(ours.join("etc")).unwrap();
        assert!(find(base.path()).is_some());
        drop(prepare(base.path()).unwrap());
        assert!(!ended.exists());
        assert!(ours.exists(), "a copy being made was removed");
    }

    #[test]
    fn a_path_in_a_manifest_reads_back_whole() {
        use std::os::unix::ffi::OsStrExt;
        for raw in [
            &b"/etc/ssl/certs/a b.pem"[..],
            b"/etc/x\ny\tz%41",
            b"/etc/\xff\xfe",
            b"rel/\r",
        ] {
            let path = Path::new(std::ffi::OsStr::from_bytes(raw));
            let text = encode(path);
            assert!(!text.contains(['\n', '\t', ' ']), "{text}");
            assert_eq!(decode(&text).unwrap(), path);
        }
        assert!(decode("%4").is_none());
        assert!(decode("%zz").is_none());
    }
}
