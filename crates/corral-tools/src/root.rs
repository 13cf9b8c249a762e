//! The project root handle: the one way the tools touch the disk.
//!
//! A [`ProjectRoot`] holds an open directory handle (`cap_std::fs::Dir`) on
//! the project folder. Every file operation goes through that handle, and
//! cap-std resolves paths beneath it in the kernel (`openat2` with
//! `RESOLVE_BENEATH` where available, per-component `openat` with
//! `O_NOFOLLOW` otherwise). A `..` past the root, an absolute symlink or a
//! symlink leading out fails *at open time*, so there is no window between a
//! check and its use. The string checks in [`ProjectRoot::resolve`] come first
//! only to give clearer errors; they are not the fence.

use crate::error::{Error, ErrorCode, Result};
use cap_std::ambient_authority;
use cap_std::fs::Dir;
use std::path::{Component, Path, PathBuf};

/// Longest path the tools accept, in bytes.
pub const MAX_PATH_BYTES: usize = 4096;

/// An open project folder.
#[derive(Debug)]
pub struct ProjectRoot {
    path: PathBuf,
    given: PathBuf,
    dir: Dir,
}

/// A path relative to the root, normalized: no `.`, no `..`, no root, `/`
/// separators when displayed. The empty path is the root itself.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RelPath(PathBuf);

impl RelPath {
    /// The root itself.
    pub fn root() -> Self {
        RelPath(PathBuf::new())
    }

    /// Whether this is the root.
    pub fn is_root(&self) -> bool {
        self.0.as_os_str().is_empty()
    }

    /// The path for cap-std calls (`.` for the root).
    pub fn as_path(&self) -> &Path {
        if self.is_root() {
            Path::new(".")
        } else {
            &self.0
        }
    }

    /// The parent (root for a top-level entry).
    pub fn parent(&self) -> RelPath {
        RelPath(self.0.parent().map(Path::to_path_buf).unwrap_or_default())
    }

    /// The last component, if any.
    pub fn file_name(&self) -> Option<&std::ffi::OsStr> {
        self.0.file_name()
    }

    /// This path joined with one more component.
    pub fn join(&self, name: &std::ffi::OsStr) -> RelPath {
        RelPath(self.0.join(name))
    }

    /// Whether any component is `.git` (any case): git internals, never
    /// written by file tools.
    pub fn is_git_internal(&self) -> bool {
        self.0
            .components()
            .any(|c| c.as_os_str().to_string_lossy().eq_ignore_ascii_case(".git"))
    }

    /// Display form: `/`-separated, `.` for the root.
    pub fn display(&self) -> String {
        if self.is_root() {
            return ".".to_string();
        }
        let parts: Vec<String> = self
            .0
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        parts.join("/")
    }

    /// Builds a `RelPath` from a path cap-std returned (already beneath the
    /// root, e.g. from `Dir::canonicalize`).
    pub(crate) fn from_resolved(path: &Path) -> Result<RelPath> {
        let mut out = PathBuf::new();
        for c in path.components() {
            match c {
                Component::Normal(part) => out.push(part),
                Component::CurDir => {}
                _ => {
                    return Err(Error::new(
                        ErrorCode::PathOutsideRoot,
                        format!("`{}` resolves outside the project folder", path.display()),
                    ))
                }
            }
        }
        Ok(RelPath(out))
    }
}

impl ProjectRoot {
    /// Opens a project folder. The path must exist and be a folder.
    pub fn open(path: impl AsRef<Path>) -> Result<ProjectRoot> {
        let given = path.as_ref().to_path_buf();
        let shown = given.display().to_string();
        let canonical = std::fs::canonicalize(&given).map_err(|e| {
            Error::from_io(&e, &shown).hint("Give the path of an existing project folder.")
        })?;
        if !canonical.is_dir() {
            return Err(Error::new(
                ErrorCode::NotADirectory,
                format!("`{shown}` is not a folder"),
            )
            .detail("path", shown)
            .hint("Give the path of a project folder."));
        }
        let dir = Dir::open_ambient_dir(&canonical, ambient_authority())
            .map_err(|e| Error::from_io(&e, &shown))?;
        Ok(ProjectRoot {
            path: canonical,
            given,
            dir,
        })
    }

    /// The canonical absolute path of the root.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The folder's name, for titles.
    pub fn name(&self) -> String {
        self.path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| self.path.display().to_string())
    }

    /// The directory handle every file operation goes through.
    pub fn dir(&self) -> &Dir {
        &self.dir
    }

    /// Normalizes a path from a tool input. Rejects NUL bytes, over-long
    /// paths, absolute paths outside the root and `..` that climbs past it.
    /// Backslashes are treated as separators, so `..\..\x` is caught too.
    pub fn resolve(&self, input: &str) -> Result<RelPath> {
        let outside = || {
            Error::new(
                ErrorCode::PathOutsideRoot,
                format!("`{input}` resolves outside the project folder"),
            )
            .detail("path", input)
        };
        if input.is_empty() {
            return Err(Error::invalid_input("the path is empty")
                .hint("Give a path relative to the project root, or `.` for the root.")
                .detail("path", input));
        }
        if input.contains('\0') {
            return Err(Error::invalid_input("the path contains a NUL byte")
                .detail("path", input.replace('\0', "\\0")));
        }
        if input.len() > MAX_PATH_BYTES {
            return Err(Error::new(
                ErrorCode::TooLarge,
                format!(
                    "the path is {} bytes long; the limit is {MAX_PATH_BYTES}",
                    input.len()
                ),
            ));
        }
        let unified = input.replace('\\', "/");
        let candidate = Path::new(&unified);
        let relative: &Path = if candidate.is_absolute() {
            // Component-wise prefix: `/p/app-evil` does not start with `/p/app`.
            candidate
                .strip_prefix(&self.path)
                .or_else(|_| candidate.strip_prefix(&self.given))
                .map_err(|_| outside())?
        } else {
            candidate
        };
        let mut out = PathBuf::new();
        for component in relative.components() {
            match component {
                Component::Normal(part) => out.push(part),
                Component::CurDir => {}
                Component::ParentDir => {
                    if !out.pop() {
                        return Err(outside());
                    }
                }
                Component::RootDir | Component::Prefix(_) => return Err(outside()),
            }
        }
        Ok(RelPath(out))
    }

    /// Resolves `input` the way the kernel will when a program is given it:
    /// each symlink first, then a `..` against the folder it really is in
    /// (`link/../x` with `link -> a/b` is `a/x`, not `x`). For the longest
    /// prefix that exists; `path_outside_root` if it leads out. Lexical
    /// checks ([`ProjectRoot::resolve`]) come first.
    pub fn canonical_prefix(&self, input: &str) -> Result<RelPath> {
        self.resolve(input)?;
        let candidate = Path::new(input);
        // Only an absolute input carries the root (`resolve` checked it is
        // beneath); a relative one is relative to the root already.
        let relative = if candidate.is_absolute() {
            candidate
                .strip_prefix(&self.path)
                .or_else(|_| candidate.strip_prefix(&self.given))
                .unwrap_or(candidate)
        } else {
            candidate
        };
        let parts: Vec<Component> = relative
            .components()
            .filter(|c| !matches!(c, Component::CurDir))
            .collect();
        for n in (0..=parts.len()).rev() {
            let prefix: PathBuf = parts[..n].iter().collect();
            let probe = if n == 0 { Path::new(".") } else { &prefix };
            match self.dir.canonicalize(probe) {
                Ok(real) => {
                    // Where a `..` climbs out of a folder that does not exist
                    // yet (`mkdir -p up/new/../../x`) depends on what the
                    // program creates first: refused rather than guessed.
                    if parts[n..].iter().any(|c| matches!(c, Component::ParentDir)) {
                        return Err(Error::new(
                            ErrorCode::PathOutsideRoot,
                            format!(
                                "`{input}` climbs with `..` out of a folder that does not exist yet"
                            ),
                        )
                        .hint("Give the path without `..`.")
                        .detail("path", input));
                    }
                    return RelPath::from_resolved(&real);
                }
                Err(e) => {
                    let err = Error::from_io(&e, input);
                    let missing =
                        matches!(err.code, ErrorCode::NotFound | ErrorCode::NotADirectory);
                    if !missing || n == 0 {
                        return Err(err);
                    }
                }
            }
        }
        Ok(RelPath::root())
    }

    /// Whether the root is the top of its own git repository (has `.git`).
    pub fn is_git_top(&self) -> bool {
        self.dir.symlink_metadata(".git").is_ok()
    }

    /// Resolves every symlink of `rel` beneath the root, returning the real
    /// path relative to the root. Fails with `path_outside_root` if any link
    /// leads out.
    pub fn canonical(&self, rel: &RelPath) -> Result<RelPath> {
        let real = self
            .dir
            .canonicalize(rel.as_path())
            .map_err(|e| Error::from_io(&e, &rel.display()))?;
        RelPath::from_resolved(&real)
    }
}
