//! What a user's own hook (one of `~/.claude/settings.json`) sees of the
//! home, beyond the build profile's view, which shows no home: the hooks
//! Claude users write run scripts kept in `~/.claude/hooks/` and log to
//! files such as `~/.claude/bash-command-log.txt`. A project's hook never
//! gets this view.
//!
//! - `~/.claude/hooks/`: read-only (its scripts, what they read);
//! - `~/.claude/` itself is a folder made for the run, writable, holding
//!   only that and the log files already there: a file directly in
//!   `~/.claude/` named `*.log` or `*.txt` (a regular file with one link),
//!   bound writable, so an append lands in it;
//! - after the run, a new `*.log` or `*.txt` file the hook made there is
//!   added to `~/.claude/` (created 0600, or appended to one made
//!   meanwhile; a link or a special file is not followed); anything else
//!   it wrote there (`settings.json`, `commands/`, `CLAUDE.md`...) is
//!   dropped with the folder, and the user is told.
//!
//! The model's tool input flows into a hook, so a hook must not be able
//! to change what Claude Code or Corral read as the user's setup
//! (settings with hooks, commands, agents, skills, `CLAUDE.md`), nor read
//! what it keeps there (credentials, transcripts).

use corral_sandbox::Shown;
use std::ffi::OsString;
use std::fs::{Metadata, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// The folder a user hook's view of `~/.claude/` is made of, and what is
/// shown in it.
pub(crate) struct UserView {
    /// The user's `~/.claude/`.
    claude: PathBuf,
    /// The folder shown there, writable, removed when dropped.
    folder: Folder,
    /// The names bound in it from `~/.claude/` (their mount points are
    /// left behind in the folder).
    bound: Vec<OsString>,
    shown: Vec<Shown>,
}

/// Whether a hook may keep a file of this name directly in `~/.claude/`.
pub(crate) fn is_log_name(name: &str) -> bool {
    let stem = name
        .strip_suffix(".log")
        .or_else(|| name.strip_suffix(".txt"));
    stem.is_some_and(|stem| !stem.is_empty() && !stem.starts_with('.')) && !name.contains('/')
}

/// Whether the file at `path` is one a hook may append to: a regular
/// file (not a link) with no other name (not a hard link to a setting).
fn is_plain_file(meta: &Metadata) -> bool {
    meta.file_type().is_file() && meta.nlink() == 1
}

impl UserView {
    /// The view for a user's hook run in `project`, with `home` the
    /// home its `$HOME` names. `None` when there is no `~/.claude/`, or
    /// when the project lies inside it (the folder shown would hide it).
    // Lists the user's own `~/.claude/`, outside any project.
    #[allow(clippy::disallowed_methods)]
    pub(crate) fn prepare(project: &Path, home: &Path) -> Option<UserView> {
        let claude = home.join(".claude");
        if !claude.symlink_metadata().is_ok_and(|m| m.is_dir()) || project.starts_with(&claude) {
            return None;
        }
        let folder = Folder::create().ok()?;
        let mut shown = vec![Shown::Folder {
            from: folder.path().to_path_buf(),
            at: claude.clone(),
        }];
        let hooks = claude.join("hooks");
        let mut bound = Vec::new();
        if hooks.is_dir() {
            shown.push(Shown::ReadOnly(hooks));
            bound.push("hooks".into());
        }
        for entry in std::fs::read_dir(&claude).into_iter().flatten().flatten() {
            let name = entry.file_name();
            let is_log = name.to_str().is_some_and(is_log_name);
            if is_log
                && entry
                    .path()
                    .symlink_metadata()
                    .is_ok_and(|m| is_plain_file(&m))
            {
                shown.push(Shown::WritableFile(entry.path()));
                bound.push(name);
            }
        }
        Some(UserView {
            claude,
            folder,
            bound,
            shown,
        })
    }

    /// What to show the run.
    pub(crate) fn shown(&self) -> &[Shown] {
        &self.shown
    }

    /// After the run: adds the log files the hook made to `~/.claude/`;
    /// says what it wrote there that was dropped, or could not be kept.
    // Lists the run's own folder in the system temp folder, never the project.
    #[allow(clippy::disallowed_methods)]
    pub(crate) fn keep(self) -> Vec<String> {
        let mut said = Vec::new();
        let mut dropped = Vec::new();
        let entries = std::fs::read_dir(self.folder.path())
            .into_iter()
            .flatten()
            .flatten();
        for entry in entries {
            let name = entry.file_name();
            if self.bound.contains(&name) {
                continue;
            }
            let shown = name.to_string_lossy().into_owned();
            let plain = entry
                .path()
                .symlink_metadata()
                .is_ok_and(|m| is_plain_file(&m));
            if !(plain && is_log_name(&shown)) {
                dropped.push(shown);
                continue;
            }
            let to = self.claude.join(&name);
            if let Err(e) = append(&entry.path(), &to) {
                said.push(format!("could not keep {}: {e}", to.display()));
            }
        }
        if !dropped.is_empty() {
            dropped.sort();
            said.push(format!(
                "it wrote {} in {}, where a hook keeps only new *.log and *.txt files; dropped",
                dropped.join(", "),
                self.claude.display()
            ));
        }
        said
    }
}

/// Appends the file `from` to `to`, made 0600 if absent; neither is
/// followed if it is a link (each is checked before it is opened, and
/// what was opened is checked to be what was checked).
fn append(from: &Path, to: &Path) -> std::io::Result<()> {
    let before = from.symlink_metadata()?;
    let mut source = OpenOptions::new().read(true).open(from)?;
    same_plain_file(&before, &source.metadata()?)?;
    let mut sink = match to.symlink_metadata() {
        Ok(before) => {
            let sink = OpenOptions::new().append(true).open(to)?;
            same_plain_file(&before, &sink.metadata()?)?;
            sink
        }
        // `O_CREAT | O_EXCL` follows no link: one made meanwhile fails it.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => OpenOptions::new()
            .append(true)
            .create_new(true)
            .mode(0o600)
            .open(to)?,
        Err(e) => return Err(e),
    };
    std::io::copy(&mut source, &mut sink)?;
    sink.flush()
}

/// Whether the file opened (`opened`) is the one looked at (`looked`),
/// a plain file.
fn same_plain_file(looked: &Metadata, opened: &Metadata) -> std::io::Result<()> {
    let same = looked.dev() == opened.dev() && looked.ino() == opened.ino();
    if same && is_plain_file(looked) && is_plain_file(opened) {
        Ok(())
    } else {
        Err(std::io::Error::other(
            "it is not a plain file (a link, a folder or a file of several names)",
        ))
    }
}

/// A private folder (0700) under the system's temporary folder, removed
/// with what the hook left in it when dropped.
struct Folder(PathBuf);

impl Folder {
    fn create() -> std::io::Result<Folder> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let name = format!(
            "corral-hook-claude-{}-{}-{nanos}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        );
        let path = std::env::temp_dir().join(name);
        std::fs::DirBuilder::new().mode(0o700).create(&path)?;
        Ok(Folder(path))
    }

    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for Folder {
    // Removes the run's own folder in the system temp folder, never the project.
    #[allow(clippy::disallowed_methods)]
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[cfg(test)]
mod tests {
    // Test fixtures in temporary folders, not a project's files.
    #![allow(clippy::unwrap_used, clippy::disallowed_methods)]
    use super::*;

    #[test]
    fn only_plain_log_names_are_kept() {
        for name in ["bash-command-log.txt", "hooks.log", "a.txt"] {
            assert!(is_log_name(name), "{name}");
        }
        for name in [
            ".txt",
            ".hidden.log",
            "settings.json",
            "CLAUDE.md",
            "history.jsonl",
            "notes.txt.sh",
            "a/b.log",
        ] {
            assert!(!is_log_name(name), "{name}");
        }
    }

    #[test]
    fn a_new_log_is_kept_and_everything_else_is_dropped() {
        let home = tempfile::tempdir().unwrap();
        let project = tempfile::tempdir().unwrap();
        let claude = home.path().join(".claude");
        std::fs::create_dir_all(claude.join("hooks")).unwrap();
        std::fs::write(claude.join("settings.json"), "{}").unwrap();
        std::fs::write(claude.join("old.log"), "one\n").unwrap();
        // A link named like a log is not shown writable.
        std::os::unix::fs::symlink(claude.join("settings.json"), claude.join("link.log")).unwrap();
        let view = UserView::prepare(project.path(), home.path()).unwrap();
        let writable: Vec<&Shown> = view
            .shown()
            .iter()
            .filter(|s| matches!(s, Shown::WritableFile(_)))
            .collect();
        assert_eq!(writable, [&Shown::WritableFile(claude.join("old.log"))]);
        // As the hook would have left the folder.
        let folder = view.folder.path().to_path_buf();
        std::fs::write(folder.join("old.log"), "").unwrap();
        std::fs::create_dir(folder.join("hooks")).unwrap();
        std::fs::write(folder.join("new.txt"), "logged\n").unwrap();
        std::fs::write(folder.join("settings.json"), r#"{"hooks": {}}"#).unwrap();
        std::os::unix::fs::symlink("/etc/passwd", folder.join("sly.log")).unwrap();
        let said = view.keep();
        assert_eq!(
            std::fs::read_to_string(claude.join("new.txt")).unwrap(),
            "logged\n"
        );
        assert_eq!(
            std::fs::read_to_string(claude.join("settings.json")).unwrap(),
            "{}"
        );
        assert_eq!(
            std::fs::read_to_string(claude.join("old.log")).unwrap(),
            "one\n"
        );
        assert!(claude.join("link.log").is_symlink());
        assert_eq!(said.len(), 1, "{said:?}");
        assert!(said[0].contains("settings.json, sly.log"), "{said:?}");
        use std::os::unix::fs::PermissionsExt;
        let mode = claude
            .join("new.txt")
            .metadata()
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        // A project inside `~/.claude/` gets no view (the folder would hide it).
        assert!(UserView::prepare(&claude.join("p"), home.path()).is_none());
    }
}
