//! What both tools share: where a walk starts, the rules it follows, how a
//! found path is shown, and how a glob is matched against it.

use corral_fs::error::{Error, Result};
use corral_fs::root::{ProjectRoot, RelPath};
use corral_fs::walk::{ProjectWalk, Use};
use globset::{GlobBuilder, GlobMatcher};
use std::ffi::OsStr;
use std::path::{Path, PathBuf};

/// Where a walk starts: checked beneath the root, symlinks resolved.
pub(super) struct Start {
    /// The real path relative to the root.
    pub rel: RelPath,
    /// The same, absolute (under the root's canonical path).
    pub abs: PathBuf,
}

/// Resolves a tool's `path` input. A missing path is `not_found`; a symlink
/// leading out is `path_outside_root`.
pub(super) fn start(root: &ProjectRoot, path: Option<&str>) -> Result<Start> {
    let given = path.unwrap_or(".");
    let rel = root.resolve(given)?;
    let rel = root.canonical(&rel)?;
    if rel.is_git_internal() {
        return Err(Error::invalid_input(format!(
            "`{given}` is inside `.git/`, which search and glob skip"
        ))
        .hint("Read git internals with read_file, or ask git through exec_shell (`git log`, `git show`).")
        .detail("path", given));
    }
    let abs = absolute(root, &rel);
    Ok(Start { rel, abs })
}

/// The absolute path of a checked relative path.
pub(super) fn absolute(root: &ProjectRoot, rel: &RelPath) -> PathBuf {
    if rel.is_root() {
        root.path().to_path_buf()
    } else {
        root.path().join(rel.as_path())
    }
}

/// The project walk for a search (`Use::Search`: ripgrep's rules, also
/// without a git repository; no hidden entries, no `.git/`, no symlinks
/// followed).
pub(super) fn walker(start: &Path) -> ProjectWalk {
    ProjectWalk::new(start, Use::Search)
}

/// [`walker`] that also leaves out (and does not enter) every entry `keep`
/// refuses.
pub(super) fn walker_keeping(
    start: &Path,
    keep: impl Fn(&ignore::DirEntry) -> bool + Send + Sync + 'static,
) -> ProjectWalk {
    walker(start).keeping(keep)
}

/// Opens a file the walk found (relative to the root) through the root's
/// handle, if it is still a regular file. Never through a link: a file
/// swapped for a link to `.env` since the walk saw it would otherwise be
/// read under an innocent name. Opened non-blocking: a file swapped for a
/// FIFO is refused instead of waiting for a writer forever.
pub(super) fn open_regular(root: &ProjectRoot, rel: &Path) -> Option<std::fs::File> {
    use cap_fs_ext::{FollowSymlinks, OpenOptionsFollowExt};
    use cap_std::fs::{OpenOptions, OpenOptionsExt};
    let mut options = OpenOptions::new();
    options
        .read(true)
        .follow(FollowSymlinks::No)
        .custom_flags((rustix::fs::OFlags::NONBLOCK | rustix::fs::OFlags::NOCTTY).bits() as i32);
    let file = root.dir().open_with(rel, &options).ok()?.into_std();
    file.metadata().ok()?.is_file().then_some(file)
}

/// A found path relative to the root, or `None` if it is not beneath it
/// (never expected: the walk starts beneath the root and follows no links).
pub(super) fn relative<'a>(root: &ProjectRoot, path: &'a Path) -> Option<&'a Path> {
    path.strip_prefix(root.path()).ok()
}

/// Display form of a path relative to the root: `/`-separated.
pub(super) fn display(rel: &Path) -> String {
    let mut out = String::with_capacity(rel.as_os_str().len());
    for (i, part) in rel.iter().enumerate() {
        if i > 0 {
            out.push('/');
        }
        out.push_str(&part.to_string_lossy());
    }
    out
}

/// A glob as the tools read it: without `/` it matches file names at any
/// depth; with `/` it matches the path relative to the start folder, `*` not
/// crossing `/`.
pub(super) struct PathGlob {
    /// The pattern as matched (leading `./` and the start folder removed).
    pub pattern: String,
    matcher: GlobMatcher,
    name_only: bool,
}

impl PathGlob {
    /// Compiles `pattern` for a walk under `start`. `field` names the input
    /// field in errors.
    pub fn new(pattern: &str, start: &RelPath, field: &str) -> Result<PathGlob> {
        let mut trimmed = pattern;
        while let Some(rest) = trimmed.strip_prefix("./") {
            trimmed = rest;
        }
        // `src/**/*.rs` with `path: "src"` means what it says.
        if !start.is_root() {
            let base = format!("{}/", start.display());
            if let Some(rest) = trimmed.strip_prefix(base.as_str()) {
                if !rest.is_empty() {
                    trimmed = rest;
                }
            }
        }
        if trimmed.is_empty() {
            return Err(
                Error::invalid_input(format!("the {field} pattern is empty"))
                    .hint("Give a pattern such as `**/*.rs` or `*.md`.")
                    .detail(field, pattern),
            );
        }
        let glob = GlobBuilder::new(trimmed)
            .literal_separator(true)
            .build()
            .map_err(|e| {
                Error::invalid_input(format!("`{pattern}` is not a valid glob: {e}"))
                    .hint("Fix the pattern: `*` matches within a folder, `**` across folders, `{a,b}` either.")
                    .detail(field, pattern)
                    .detail("error", e.to_string())
            })?;
        Ok(PathGlob {
            pattern: trimmed.to_string(),
            matcher: glob.compile_matcher(),
            name_only: !trimmed.contains('/'),
        })
    }

    /// Whether a file matches, given its path relative to the start folder
    /// (empty when the start is the file itself) and its name.
    pub fn is_match(&self, under_start: &Path, name: &OsStr) -> bool {
        if self.name_only || under_start.as_os_str().is_empty() {
            self.matcher.is_match(name)
        } else {
            self.matcher.is_match(under_start)
        }
    }

    /// The folders named literally at the start of the pattern
    /// (`.github/workflows` in `.github/workflows/*.yml`): the walk may start
    /// there. Empty when the pattern starts with a wildcard.
    pub fn literal_folders(&self) -> Vec<&str> {
        let parts: Vec<&str> = self.pattern.split('/').collect();
        let folders = &parts[..parts.len().saturating_sub(1)];
        folders
            .iter()
            .take_while(|part| {
                !part.is_empty()
                    && **part != "."
                    && **part != ".."
                    && !part.contains(['*', '?', '[', ']', '{', '}', '\\'])
            })
            .copied()
            .collect()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::disallowed_methods)]
    use super::*;

    #[test]
    fn a_fifo_is_refused_without_waiting_for_a_writer() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "text\n").unwrap();
        rustix::fs::mkfifoat(
            rustix::fs::CWD,
            dir.path().join("pipe"),
            rustix::fs::Mode::from_raw_mode(0o600),
        )
        .unwrap();
        let root = ProjectRoot::open(dir.path()).unwrap();
        assert!(open_regular(&root, Path::new("a.txt")).is_some());
        // Would block forever with a plain open (no writer ever comes).
        assert!(open_regular(&root, Path::new("pipe")).is_none());
        assert!(open_regular(&root, Path::new("missing")).is_none());
    }

    #[test]
    fn a_file_swapped_for_a_link_is_not_read_through_it() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(".env"), "TOKEN=1\n").unwrap();
        std::fs::create_dir(dir.path().join("src")).unwrap();
        std::os::unix::fs::symlink("../.env", dir.path().join("src/notes.txt")).unwrap();
        let root = ProjectRoot::open(dir.path()).unwrap();
        assert!(open_regular(&root, Path::new("src/notes.txt")).is_none());
    }
}
