//! Corral's one way to touch the project's disk.
//!
//! A [`ProjectRoot`] handle keeps every path beneath the project folder
//! (symlinks and `..` included); the file operations (read, write, edit,
//! delete, list) and the checkpoint store and search build on it, with the
//! two primitives they share: reading a regular file beneath the root, and
//! replacing one atomically. Beside them: Corral's own temp names, text
//! decoding, unified diffs, the one rule for secret-like paths, the
//! project walk ([`walk`]: which entries are the project's, per use) and
//! the project watch ([`watch`]: one inotify instance per open project).
//!
//! ```
//! use corral_fs::{read_file, write_file, ProjectRoot, ReadFileInput, WriteFileInput};
//!
//! let dir = tempfile::tempdir()?;
//! let root = ProjectRoot::open(dir.path())?;
//! let write = WriteFileInput { path: "src/hi.txt".into(), content: "hi\n".into() };
//! write_file(&root, &write)?;
//! let read = |path: &str| ReadFileInput { path: path.into(), start_line: None, end_line: None };
//! assert_eq!(read_file(&root, &read("src/hi.txt"))?.content, "hi\n");
//!
//! // Nothing outside the folder:
//! let err = read_file(&root, &read("../x")).unwrap_err();
//! assert_eq!(err.code.as_str(), "path_outside_root");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod autorun;
pub mod diff;
pub mod root;
pub mod secret;
pub mod temp;
pub mod text;
pub mod walk;
pub mod watch;

mod delete;
mod edit;
mod list;
mod read;
mod write;

pub use delete::{
    delete_file, delete_file_over, preview_delete, refuse_delete, DeleteFileInput, DeleteFileOutput,
};
pub use edit::{
    edit_file, edit_file_over, preview_edit, refuse_edit, EditFileInput, EditFileOutput,
};
pub use list::{list_directory, EntryKind, ListDirectoryInput, ListDirectoryOutput, ListEntry};
pub use read::{read_file, ReadFileInput, ReadFileOutput};
pub use write::{
    preview_write, refuse_write, write_file, write_file_over, WriteFileInput, WriteFileOutput,
};

/// The standardized error, from the leaf crate every part of Corral shares.
pub use corral_protocol::error;
pub use corral_protocol::{Error, ErrorCode, Result};
pub use root::{ProjectRoot, RelPath};

use cap_std::fs::{Dir, Metadata, OpenOptions, OpenOptionsExt, Permissions};
use serde::{Deserialize, Serialize};
use std::io::{Read, Write};

/// Largest file the tools read or edit whole.
pub const MAX_FILE_BYTES: u64 = 64 * 1024 * 1024;
/// Largest content `write_file` / `edit_file` accept.
pub const MAX_WRITE_BYTES: usize = 16 * 1024 * 1024;

/// The would-be change of a write, edit or delete, computed without making
/// it, by the code that makes it: `after` is exactly the text that will be
/// on disk (a BOM as U+FEFF, line endings as they will be), and `diff` the
/// unified diff from `before` to `after`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[ts(rename = "ToolPreview")]
pub struct Preview {
    /// The path as the tool resolves it, relative to the root.
    pub path: String,
    /// The current text; empty for a file that does not exist yet.
    pub before: String,
    /// The text after the call; empty for a deletion.
    pub after: String,
    /// Unified diff from `a/{path}` to `b/{path}`.
    pub diff: String,
    /// The file the preview was computed from ([`base_of`]: a digest of
    /// its bytes, or `absent`). Given back with the approved call
    /// (the tool layer's `CallContext::base`), the call writes only over
    /// those very bytes: if the file changed since, it fails with
    /// `stale_file` and writes nothing, so what is written is what was
    /// shown.
    pub base: String,
}

impl Preview {
    fn new(path: String, before: String, after: String, base: String) -> Preview {
        let diff = crate::diff::unified(&path, &before, &after);
        Preview {
            path,
            before,
            after,
            diff,
            base,
        }
    }
}

/// What a preview's `base` says of a file's bytes (`None`: no such file):
/// their BLAKE3 digest, or `absent`.
pub fn base_of(bytes: Option<&[u8]>) -> String {
    match bytes {
        Some(bytes) => format!("blake3:{}", blake3::hash(bytes).to_hex()),
        None => "absent".to_string(),
    }
}

/// A file as it is on disk now.
struct OnDisk {
    /// Its bytes; `None` when there is no such file.
    bytes: Option<Vec<u8>>,
    /// [`base_of`] the bytes.
    base: String,
    /// What identifies this version, for the write to check again.
    fingerprint: Option<Fingerprint>,
}

/// Reads `rel` whole (through a symlink, beneath the root), or finds it
/// absent.
fn on_disk(root: &ProjectRoot, rel: &RelPath) -> Result<OnDisk> {
    match read_regular(root, rel) {
        Ok((bytes, fingerprint)) => Ok(OnDisk {
            base: base_of(Some(&bytes)),
            bytes: Some(bytes),
            fingerprint: Some(fingerprint),
        }),
        Err(e) if e.code == ErrorCode::NotFound => Ok(OnDisk {
            bytes: None,
            base: base_of(None),
            fingerprint: None,
        }),
        Err(e) => Err(e),
    }
}

/// The whole text of a file's bytes (BOM included); empty for no file.
fn text_of(shown: &str, bytes: Option<Vec<u8>>) -> Result<String> {
    let Some(bytes) = bytes else {
        return Ok(String::new());
    };
    let text = crate::text::decode(bytes, shown)?;
    String::from_utf8(text.into_bytes())
        .map_err(|_| Error::new(ErrorCode::NotText, format!("`{shown}` is not a text file")))
}

/// Fails with `stale_file` when a preview's `expected` base is not the
/// file's base `now`.
fn check_base(shown: &str, expected: Option<&str>, now: &str) -> Result<()> {
    match expected {
        Some(expected) if expected != now => Err(Error::new(
            ErrorCode::StaleFile,
            format!("`{shown}` changed after its change was shown for approval; nothing was written"),
        )
        .hint("Read the file again and make the change anew, so the user approves what will be written.")
        .detail("path", shown)
        .detail("expected", expected)
        .detail("found", now)),
        _ => Ok(()),
    }
}

/// What identifies one version of a file on disk, to notice a change
/// between reading it and replacing it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fingerprint {
    len: u64,
    modified: Option<std::time::SystemTime>,
    /// The status change time (seconds, nanoseconds): moves on every
    /// write, and unlike `modified` cannot be set back.
    changed: (i64, i64),
    ino: u64,
}

impl Fingerprint {
    fn of(meta: &Metadata) -> Self {
        use cap_std::fs::MetadataExt;
        Fingerprint {
            len: meta.len(),
            modified: meta.modified().ok().map(|t| t.into_std()),
            changed: (meta.ctime(), meta.ctime_nsec()),
            ino: meta.ino(),
        }
    }
}

/// Reads a regular file beneath the root, at most `MAX_FILE_BYTES`.
/// FIFOs and devices are refused before any read can block.
pub fn read_regular(root: &ProjectRoot, rel: &RelPath) -> Result<(Vec<u8>, Fingerprint)> {
    let shown = rel.display();
    if rel.is_root() {
        return Err(is_directory(&shown));
    }
    let mut options = OpenOptions::new();
    options
        .read(true)
        .custom_flags((rustix::fs::OFlags::NONBLOCK | rustix::fs::OFlags::NOCTTY).bits() as i32);
    let mut file = root
        .dir()
        .open_with(rel.as_path(), &options)
        .map_err(|e| Error::from_io(&e, &shown))?;
    let meta = file.metadata().map_err(|e| Error::from_io(&e, &shown))?;
    regular(meta.is_dir(), meta.is_file(), &shown)?;
    if meta.len() > MAX_FILE_BYTES {
        return Err(too_large(&shown, meta.len()));
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    Read::by_ref(&mut file)
        .take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| Error::from_io(&e, &shown))?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(too_large(&shown, bytes.len() as u64));
    }
    Ok((bytes, Fingerprint::of(&meta)))
}

/// `is_directory` for a folder, `invalid_input` for what is neither a
/// folder nor a regular file (a FIFO, a socket, a device), judged on the
/// handle already opened.
fn regular(is_dir: bool, is_file: bool, shown: &str) -> Result<()> {
    if is_dir {
        return Err(is_directory(shown));
    }
    if !is_file {
        return Err(Error::invalid_input(format!(
            "`{shown}` is not a regular file (a device, socket or pipe)"
        ))
        .detail("path", shown));
    }
    Ok(())
}

/// Reads a regular file that is *not* the project's (the user's own
/// `~/.claude/settings.json`), at most `max` bytes, its path and links
/// followed as the user set them. Like [`read_regular`] it opens the file
/// non-blocking and checks the handle it opened, so a FIFO or a device is
/// refused at once (`invalid_input`) instead of waiting for a writer. The
/// project's files never come here: they go through [`read_regular`],
/// beneath the root handle.
pub fn read_regular_outside(path: &std::path::Path, max: u64) -> Result<Vec<u8>> {
    use std::os::unix::fs::OpenOptionsExt as _;
    let shown = path.display().to_string();
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags((rustix::fs::OFlags::NONBLOCK | rustix::fs::OFlags::NOCTTY).bits() as i32)
        .open(path)
        .map_err(|e| Error::from_io(&e, &shown))?;
    let meta = file.metadata().map_err(|e| Error::from_io(&e, &shown))?;
    regular(meta.is_dir(), meta.is_file(), &shown)?;
    let over = |len: u64| {
        Error::new(
            ErrorCode::TooLarge,
            format!("`{shown}` is {len} bytes; the limit is {max}"),
        )
        .detail("path", shown.as_str())
        .detail("bytes", len)
    };
    if meta.len() > max {
        return Err(over(meta.len()));
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    Read::by_ref(&mut file)
        .take(max.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| Error::from_io(&e, &shown))?;
    if bytes.len() as u64 > max {
        return Err(over(bytes.len() as u64));
    }
    Ok(bytes)
}

/// Replaces (or creates) `rel` with `bytes` atomically: a temp file in the
/// same folder, fsync, rename over the target, fsync the folder. A crash
/// leaves the old file or the new one, never a mix. The target's permissions
/// are kept; missing parent folders are created beneath the root. The call
/// fails with `stale_file` if the target is not what `expect` says.
/// Returns whether the file was created.
pub(crate) fn write_atomic(
    root: &ProjectRoot,
    rel: &RelPath,
    bytes: &[u8],
    expect: &Expect,
) -> Result<bool> {
    let shown = rel.display();
    if rel.is_root() {
        return Err(is_directory(&shown));
    }
    if rel.is_git_internal() {
        return Err(git_protected(&shown));
    }
    let name = rel.file_name().ok_or_else(|| is_directory(&shown))?;
    let parent = rel.parent();
    if !parent.is_root() {
        // Where the parent really is, before anything is created: a
        // symlinked ancestor may lead out of the root or into `.git/`.
        check_existing_ancestor(root, &parent, &shown)?;
        root.dir().create_dir_all(parent.as_path()).map_err(|e| {
            if e.kind() == std::io::ErrorKind::AlreadyExists {
                Error::new(
                    ErrorCode::NotADirectory,
                    format!("a parent of `{shown}` is a file"),
                )
                .detail("path", shown.clone())
            } else {
                Error::from_io(&e, &shown)
            }
        })?;
        if root.canonical(&parent)?.is_git_internal() {
            return Err(git_protected(&shown));
        }
    }
    let dir = root
        .dir()
        .open_dir(parent.as_path())
        .map_err(|e| Error::from_io(&e, &shown))?;

    // A temp file a killed write left here goes now.
    crate::temp::sweep(&dir);
    let existing = match dir.symlink_metadata(name) {
        Ok(meta) => Some(meta),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(Error::from_io(&e, &shown)),
    };
    if matches!(expect, Expect::Nothing) && existing.is_some() {
        return Err(stale(&shown));
    }
    let permissions: Option<Permissions> = match &existing {
        Some(meta) if meta.is_dir() => return Err(is_directory(&shown)),
        Some(meta) if meta.file_type().is_symlink() => {
            // Write through a link only to where it really points, beneath
            // the root; `canonical` fails if it leads out.
            let target = root.canonical(rel)?;
            return write_atomic(root, &target, bytes, expect);
        }
        Some(meta) => Some(meta.permissions()),
        None => None,
    };
    if let (Expect::Version(expected), Some(meta)) = (expect, &existing) {
        if &Fingerprint::of(meta) != expected {
            return Err(stale(&shown));
        }
    }

    let tmp =
        create_temp(&dir, name, permissions.is_some()).map_err(|e| Error::from_io(&e, &shown))?;
    let result = write_temp(tmp.1, bytes, permissions)
        .and_then(|()| {
            // Last look before the rename: did someone change the file?
            if let Expect::Version(expected) = expect {
                match dir.symlink_metadata(name) {
                    Ok(meta) if &Fingerprint::of(&meta) == expected => {}
                    _ => return Err(std::io::Error::other(StaleMarker)),
                }
            }
            race_window();
            match expect {
                Expect::Nothing => rename_new(&dir, &tmp.0, name),
                _ => dir.rename(&tmp.0, &dir, name),
            }
        })
        .map_err(|e| {
            let _ = dir.remove_file(&tmp.0);
            if e.get_ref().is_some_and(|inner| inner.is::<StaleMarker>()) {
                stale(&shown)
            } else {
                Error::from_io(&e, &shown)
            }
        });
    result?;
    // Durability of the rename; failure here does not undo the write.
    let _ = sync_dir(&dir);
    Ok(existing.is_none())
}

/// What a replacement expects at the path it writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Expect {
    /// Anything or nothing: there is no approved preview to hold it to.
    Anything,
    /// Nothing at all, not even a symlink: the preview showed a new file.
    Nothing,
    /// This very version of the file, as it was read.
    Version(Fingerprint),
}

/// Renames `from` to `to` in `dir` only if nothing is at `to`, in one step
/// (`RENAME_NOREPLACE`): a file or link that appeared there since it was
/// found absent is kept, and the write fails as stale. A file system
/// without the flag gets a last look and a plain rename.
fn rename_new(dir: &Dir, from: &std::ffi::OsStr, to: &std::ffi::OsStr) -> std::io::Result<()> {
    #[cfg(target_os = "linux")]
    match rustix::fs::renameat_with(dir, from, dir, to, rustix::fs::RenameFlags::NOREPLACE) {
        Ok(()) => return Ok(()),
        Err(rustix::io::Errno::EXIST) => return Err(std::io::Error::other(StaleMarker)),
        Err(rustix::io::Errno::INVAL) => {}
        Err(e) => return Err(e.into()),
    }
    match dir.symlink_metadata(to) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => dir.rename(from, dir, to),
        _ => Err(std::io::Error::other(StaleMarker)),
    }
}

#[cfg(test)]
thread_local! {
    /// Tests only: a change to make once, at the moment a file tool has
    /// looked at what is on disk and is about to change it, so a test can
    /// land in that window.
    static RACE: std::cell::RefCell<Option<Box<dyn FnOnce()>>> =
        const { std::cell::RefCell::new(None) };
}

/// Where [`RACE`] runs; nothing outside tests.
fn race_window() {
    #[cfg(test)]
    if let Some(change) = RACE.with(|race| race.borrow_mut().take()) {
        change();
    }
}

/// Resolves the deepest existing ancestor of `parent` beneath the root and
/// refuses it if it is inside `.git/`, leads out, or is a file where a
/// folder would be created under it.
fn check_existing_ancestor(root: &ProjectRoot, parent: &RelPath, shown: &str) -> Result<()> {
    let at = parent.display();
    let located = root.locate(&at)?;
    let real = located.real?;
    if real.is_git_internal() {
        return Err(git_protected(shown));
    }
    let is_dir = root
        .dir()
        .metadata(real.as_path())
        .is_ok_and(|m| m.is_dir());
    if !located.tail.as_os_str().is_empty() && !is_dir {
        return Err(Error::new(
            ErrorCode::NotADirectory,
            format!("a parent of `{at}` is not a folder"),
        )
        .detail("path", at));
    }
    Ok(())
}

#[derive(Debug)]
struct StaleMarker;
impl std::fmt::Display for StaleMarker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("file changed during the write")
    }
}
impl std::error::Error for StaleMarker {}

/// Creates the temp file next to `name`, under a fresh name (a killed
/// write may have left one behind). When it replaces an existing file it
/// starts private (0600) and gets the file's permissions only once its
/// content is written, so a secret is never readable by others meanwhile.
fn create_temp(
    dir: &Dir,
    name: &std::ffi::OsStr,
    private: bool,
) -> std::io::Result<(std::ffi::OsString, cap_std::fs::File)> {
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    if private {
        options.mode(0o600);
    }
    let mut attempt = 0;
    loop {
        let tmp = crate::temp::name_for(name);
        match dir.open_with(&tmp, &options) {
            Ok(file) => return Ok((tmp, file)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && attempt < 16 => attempt += 1,
            Err(e) => return Err(e),
        }
    }
}

fn write_temp(
    mut file: cap_std::fs::File,
    bytes: &[u8],
    permissions: Option<Permissions>,
) -> std::io::Result<()> {
    file.write_all(bytes)?;
    if let Some(permissions) = permissions {
        file.set_permissions(permissions)?;
    }
    file.sync_all()
}

/// Flushes a folder's entries (a rename into it) to disk. The folder's own
/// handle may be an `O_PATH` one, which `fsync` refuses, so the folder is
/// opened again (as `.` beneath it) for reading.
fn sync_dir(dir: &Dir) -> std::io::Result<()> {
    use rustix::fs::{Mode, OFlags};
    let readable = rustix::fs::openat(
        dir,
        ".",
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )?;
    rustix::fs::fsync(&readable)?;
    Ok(())
}

pub(crate) fn is_directory(shown: &str) -> Error {
    Error::new(
        ErrorCode::IsDirectory,
        format!("`{shown}` is a folder, not a file"),
    )
    .detail("path", shown)
}

pub fn git_protected(shown: &str) -> Error {
    Error::new(
        ErrorCode::PathProtected,
        format!("`{shown}` is inside `.git/`; git internals are never written by file tools"),
    )
    .hint("Use git through exec_shell to change the repository.")
    .detail("path", shown)
}

fn too_large(shown: &str, len: u64) -> Error {
    Error::new(
        ErrorCode::TooLarge,
        format!("`{shown}` is {len} bytes; the limit is {MAX_FILE_BYTES}"),
    )
    .detail("path", shown)
    .detail("bytes", len)
}

fn stale(shown: &str) -> Error {
    Error::new(
        ErrorCode::StaleFile,
        format!("`{shown}` changed on disk while it was being edited"),
    )
    .detail("path", shown)
}

/// Checks that content to write is within `MAX_WRITE_BYTES`.
pub(crate) fn check_write_size(shown: &str, len: usize) -> Result<()> {
    if len > MAX_WRITE_BYTES {
        return Err(Error::new(
            ErrorCode::TooLarge,
            format!("the content for `{shown}` is {len} bytes; the limit is {MAX_WRITE_BYTES}"),
        )
        .hint("Write the file in smaller pieces, or generate it with a build step.")
        .detail("path", shown)
        .detail("bytes", len));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::disallowed_methods)]
    use super::*;

    fn project() -> (tempfile::TempDir, ProjectRoot) {
        let dir = tempfile::tempdir().unwrap();
        let root = ProjectRoot::open(dir.path()).unwrap();
        (dir, root)
    }

    #[test]
    fn a_file_outside_is_read_bounded_and_a_fifo_is_refused_without_waiting() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("settings.json");
        std::fs::write(&file, "{}\n").unwrap();
        let pipe = dir.path().join("pipe");
        rustix::fs::mkfifoat(
            rustix::fs::CWD,
            &pipe,
            rustix::fs::Mode::from_raw_mode(0o600),
        )
        .unwrap();
        std::os::unix::fs::symlink(&file, dir.path().join("link.json")).unwrap();

        assert_eq!(read_regular_outside(&file, 16).unwrap(), b"{}\n");
        // The user's own links are followed.
        let link = dir.path().join("link.json");
        assert_eq!(read_regular_outside(&link, 16).unwrap(), b"{}\n");
        let code = |path: &std::path::Path, max: u64| read_regular_outside(path, max).unwrap_err();
        assert_eq!(code(&file, 2).code, ErrorCode::TooLarge);
        assert_eq!(code(dir.path(), 16).code, ErrorCode::IsDirectory);
        assert_eq!(
            code(&dir.path().join("missing"), 16).code,
            ErrorCode::NotFound
        );
        // A plain open of a FIFO waits for a writer that never comes: the
        // read runs on a thread, so a hang fails the test instead of
        // hanging it.
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || tx.send(read_regular_outside(&pipe, 16)));
        let refused = rx
            .recv_timeout(std::time::Duration::from_secs(10))
            .expect("a FIFO is refused at once, not waited on")
            .unwrap_err();
        assert_eq!(refused.code, ErrorCode::InvalidInput);
        assert!(refused.message.contains("not a regular file"), "{refused}");
    }

    #[test]
    fn the_folder_of_a_write_is_synced_for_real() {
        // The root's handle is the kind `fsync` refused (it is `O_PATH`):
        // the sync used to fail quietly, so no rename was ever made durable.
        let (dir, root) = project();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        assert!(sync_dir(root.dir()).is_ok());
        assert!(sync_dir(&root.dir().open_dir("sub").unwrap()).is_ok());
    }

    #[test]
    fn a_file_changed_since_it_was_read_is_stale_and_kept() {
        let (dir, root) = project();
        std::fs::write(dir.path().join("a.txt"), "old\n").unwrap();
        let rel = root.resolve("a.txt").unwrap();
        let (_, fingerprint) = read_regular(&root, &rel).unwrap();
        // Someone else writes between the read and the replace.
        std::fs::write(dir.path().join("a.txt"), "theirs, longer\n").unwrap();
        let err = write_atomic(&root, &rel, b"mine\n", &Expect::Version(fingerprint)).unwrap_err();
        assert_eq!(err.code, ErrorCode::StaleFile);
        assert!(err.retryable);
        assert_eq!(
            std::fs::read_to_string(dir.path().join("a.txt")).unwrap(),
            "theirs, longer\n"
        );
        let leftovers: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(leftovers.len(), 1, "the temp file is removed");
    }

    #[test]
    fn a_new_file_never_replaces_one_that_appeared_since_it_was_found_absent() {
        // A file, then a symlink to another project file, lands between
        // the last look and the rename of a write approved as a new file.
        for plant in ["file", "symlink"] {
            let (dir, root) = project();
            std::fs::write(dir.path().join("g.txt"), "other\n").unwrap();
            let at = dir.path().join("f.txt");
            let planted = at.clone();
            RACE.with(|race| {
                *race.borrow_mut() = Some(Box::new(move || match plant {
                    "file" => std::fs::write(&planted, "theirs\n").unwrap(),
                    _ => std::os::unix::fs::symlink("g.txt", &planted).unwrap(),
                }))
            });
            let rel = root.resolve("f.txt").unwrap();
            let err = write_atomic(&root, &rel, b"mine\n", &Expect::Nothing).unwrap_err();
            assert_eq!(err.code, ErrorCode::StaleFile, "{plant}");
            assert_eq!(
                std::fs::read_to_string(dir.path().join("g.txt")).unwrap(),
                "other\n"
            );
            match plant {
                "file" => assert_eq!(std::fs::read_to_string(&at).unwrap(), "theirs\n"),
                _ => assert!(at.symlink_metadata().unwrap().file_type().is_symlink()),
            }
            let names = std::fs::read_dir(dir.path()).unwrap().count();
            assert_eq!(names, 2, "{plant}: the temp file is removed");
        }
    }

    #[test]
    fn a_new_file_is_refused_where_something_already_is() {
        let (dir, root) = project();
        std::fs::write(dir.path().join("f.txt"), "theirs\n").unwrap();
        let rel = root.resolve("f.txt").unwrap();
        let err = write_atomic(&root, &rel, b"mine\n", &Expect::Nothing).unwrap_err();
        assert_eq!(err.code, ErrorCode::StaleFile);
        assert_eq!(
            std::fs::read_to_string(dir.path().join("f.txt")).unwrap(),
            "theirs\n"
        );
        // Where nothing is, the file is created.
        let rel = root.resolve("new/g.txt").unwrap();
        assert!(write_atomic(&root, &rel, b"mine\n", &Expect::Nothing).unwrap());
        assert_eq!(
            std::fs::read_to_string(dir.path().join("new/g.txt")).unwrap(),
            "mine\n"
        );
    }

    #[test]
    fn a_private_file_is_never_readable_by_others_while_replaced() {
        use std::os::unix::fs::PermissionsExt;
        let (dir, root) = project();
        let path = dir.path().join(".env");
        std::fs::write(&path, "KEY=1\n").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        let dir_handle = root.dir().open_dir(".").unwrap();
        let (tmp, file) = create_temp(&dir_handle, std::ffi::OsStr::new(".env"), true).unwrap();
        let mode = std::fs::metadata(dir.path().join(&tmp))
            .unwrap()
            .permissions()
            .mode()
            & 0o777;
        assert_eq!(mode, 0o600, "the temp file starts private");
        drop(file);
        dir_handle.remove_file(&tmp).unwrap();
        let rel = root.resolve(".env").unwrap();
        write_atomic(&root, &rel, b"KEY=2\n", &Expect::Anything).unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "the file keeps its permissions");
    }
}
