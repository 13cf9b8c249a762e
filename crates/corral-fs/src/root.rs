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
    pub fn from_resolved(path: &Path) -> Result<RelPath> {
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

/// Where a path lands beneath the root ([`ProjectRoot::locate`]).
#[derive(Debug, Clone)]
pub struct Located {
    /// The path normalized by its text alone ([`ProjectRoot::resolve`]):
    /// no `.`, `..` collapsed, backslashes read as separators. What a file
    /// tool opens.
    pub lexical: RelPath,
    /// Where the kernel lands resolving the input as written (each symlink
    /// first, then `..`), for the longest part of it that exists: the real
    /// path (no symlinks, beneath the root) of the whole input when it
    /// exists, else of its deepest existing ancestor, which is a file when
    /// the input uses one as a folder (`a.txt/x` gives `a.txt`).
    /// `path_outside_root` when a symlink leads out, a `..` after one climbs
    /// past the root, or a `..` climbs out of a folder that does not exist
    /// yet; other errors (a symlink loop, a refused permission) as the
    /// system gave them.
    pub real: Result<RelPath>,
    /// What of the input lies below `real` and does not exist yet, as
    /// written (no `.`; never a `..`). Empty when the whole path exists or
    /// `real` is an error.
    pub tail: PathBuf,
}

impl Located {
    /// Where the input would be once its missing part is created: `real`
    /// joined with `tail`. `None` when `real` is an error.
    pub fn real_path(&self) -> Option<RelPath> {
        let mut path = self.real.as_ref().ok()?.clone();
        for part in self.tail.components() {
            path = path.join(part.as_os_str());
        }
        Some(path)
    }

    /// Whether the kernel, resolving the input, leaves the root: through a
    /// symlink, or a `..` (a lexical escape is refused by `locate` itself).
    pub fn leads_outside(&self) -> bool {
        self.real
            .as_ref()
            .is_err_and(|e| e.code == ErrorCode::PathOutsideRoot)
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

    /// Finds where `input` lands, once, for every caller that needs to know
    /// more than its text: the file tools (where the parent of a new file
    /// really is), the policy (what a link really leads to) and the shell
    /// rules (where a program given `input` ends up). Lexical checks
    /// ([`ProjectRoot::resolve`]) come first; their refusal is the error.
    ///
    /// The real location is what the kernel makes of `input` *as written*:
    /// each symlink first, then a `..` against the folder it really is in
    /// (`link/../x` with `link -> a/b` is `a/x`, not `x`). A file tool opens
    /// [`Located::lexical`], so to know where a file tool lands, locate the
    /// text of that path (`lexical.display()`).
    pub fn locate(&self, input: &str) -> Result<Located> {
        let lexical = self.resolve(input)?;
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
        let located = |real: Result<RelPath>, tail: &[Component]| Located {
            lexical: lexical.clone(),
            real,
            tail: tail.iter().collect(),
        };
        // The longest prefix that exists, the whole path first.
        let mut n = parts.len();
        loop {
            let prefix: PathBuf = parts[..n].iter().collect();
            let probe = if n == 0 { Path::new(".") } else { &prefix };
            match self.dir.canonicalize(probe) {
                Ok(found) => {
                    // Where a `..` climbs out of a folder that does not exist
                    // yet (`mkdir -p up/new/../../x`) depends on what the
                    // program creates first: refused rather than guessed.
                    if parts[n..].iter().any(|c| matches!(c, Component::ParentDir)) {
                        let climbs = Error::new(
                            ErrorCode::PathOutsideRoot,
                            format!(
                                "`{input}` climbs with `..` out of a folder that does not exist yet"
                            ),
                        )
                        .hint("Give the path without `..`.")
                        .detail("path", input);
                        return Ok(located(Err(climbs), &[]));
                    }
                    return Ok(located(RelPath::from_resolved(&found), &parts[n..]));
                }
                Err(e) => {
                    let err = Error::from_io(&e, input);
                    let missing =
                        matches!(err.code, ErrorCode::NotFound | ErrorCode::NotADirectory);
                    if !missing || n == 0 {
                        return Ok(located(Err(err), &[]));
                    }
                    n -= 1;
                }
            }
        }
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::disallowed_methods)]
    use super::*;
    use std::os::unix::fs::symlink;

    /// A project with `src/a.txt`, `inner -> src`, `sub -> src/sub`,
    /// `self -> .`, links out and a link into `.git/`. The temporary folder
    /// holding it and the folder outside is returned to keep them alive.
    fn project() -> (tempfile::TempDir, ProjectRoot) {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("app");
        std::fs::create_dir_all(dir.join("src/sub")).unwrap();
        std::fs::create_dir_all(dir.join(".git")).unwrap();
        std::fs::create_dir_all(tmp.path().join("outside")).unwrap();
        std::fs::write(dir.join("src/a.txt"), "a\n").unwrap();
        symlink("src", dir.join("inner")).unwrap();
        symlink("src/sub", dir.join("sub")).unwrap();
        symlink(".", dir.join("self")).unwrap();
        symlink(".git", dir.join("gitlink")).unwrap();
        symlink(tmp.path().join("outside"), dir.join("out")).unwrap();
        symlink("../outside", dir.join("rel-out")).unwrap();
        let root = ProjectRoot::open(&dir).unwrap();
        (tmp, root)
    }

    /// (lexical, real, tail) as text.
    fn parts(l: &Located) -> (String, String, String) {
        let real = match &l.real {
            Ok(real) => real.display(),
            Err(e) => e.code.as_str().to_string(),
        };
        (
            l.lexical.display(),
            real,
            l.tail.to_string_lossy().into_owned(),
        )
    }

    fn at(root: &ProjectRoot, input: &str) -> (String, String, String) {
        parts(&root.locate(input).unwrap())
    }

    fn s(a: &str, b: &str, c: &str) -> (String, String, String) {
        (a.to_string(), b.to_string(), c.to_string())
    }

    #[test]
    fn an_existing_file_is_its_own_real_path() {
        let (_t, root) = project();
        assert_eq!(at(&root, "src/a.txt"), s("src/a.txt", "src/a.txt", ""));
        assert_eq!(at(&root, "./src//a.txt"), s("src/a.txt", "src/a.txt", ""));
        assert_eq!(at(&root, "."), s(".", ".", ""));
        let abs = root.path().join("src/a.txt");
        assert_eq!(
            at(&root, abs.to_str().unwrap()),
            s("src/a.txt", "src/a.txt", "")
        );
        let l = root.locate("src/a.txt").unwrap();
        assert_eq!(l.real_path().unwrap().display(), "src/a.txt");
        assert!(!l.leads_outside());
    }

    #[test]
    fn a_missing_tail_under_a_real_folder_is_kept_as_written() {
        let (_t, root) = project();
        assert_eq!(
            at(&root, "src/new/b.txt"),
            s("src/new/b.txt", "src", "new/b.txt")
        );
        assert_eq!(at(&root, "new.txt"), s("new.txt", ".", "new.txt"));
        let l = root.locate("src/new/b.txt").unwrap();
        assert_eq!(l.real_path().unwrap().display(), "src/new/b.txt");
    }

    #[test]
    fn a_symlink_inside_is_followed() {
        let (_t, root) = project();
        assert_eq!(at(&root, "inner/a.txt"), s("inner/a.txt", "src/a.txt", ""));
        assert_eq!(at(&root, "inner/new/x"), s("inner/new/x", "src", "new/x"));
        // The kernel follows the link before `..`; the text alone does not.
        assert_eq!(at(&root, "sub/../a.txt"), s("a.txt", "src/a.txt", ""));
        // Into `.git/`, whatever the text says.
        let l = root.locate("gitlink/hooks/x").unwrap();
        assert!(!l.lexical.is_git_internal());
        assert!(l.real.unwrap().is_git_internal());
    }

    #[test]
    fn a_symlink_leading_out_is_outside() {
        let (_t, root) = project();
        for input in ["out", "out/x", "out/new/deeper", "rel-out/x", "self/../x"] {
            let l = root.locate(input).unwrap();
            assert!(l.leads_outside(), "{input}: {l:?}");
            assert!(l.real_path().is_none(), "{input}");
            assert!(l.tail.as_os_str().is_empty(), "{input}");
        }
        // The text alone stays inside: the lexical path is still there.
        assert_eq!(root.locate("self/../x").unwrap().lexical.display(), "x");
    }

    #[test]
    fn dot_dot_past_the_root_is_refused_by_its_text() {
        let (_t, root) = project();
        for input in ["..", "../x", "src/../../x", "..\\x", "/etc/passwd"] {
            let err = root.locate(input).unwrap_err();
            assert_eq!(err.code, ErrorCode::PathOutsideRoot, "{input}");
        }
        // Climbing out of a folder that does not exist yet is not guessed.
        let l = root.locate("new/../src/x").unwrap();
        assert_eq!(l.lexical.display(), "src/x");
        assert!(l.leads_outside());
        assert!(l.real.unwrap_err().message.contains("does not exist yet"));
    }

    #[test]
    fn a_file_used_as_a_folder_is_the_real_ancestor() {
        let (_t, root) = project();
        assert_eq!(at(&root, "src/a.txt/x"), s("src/a.txt/x", "src/a.txt", "x"));
        assert_eq!(
            at(&root, "src/a.txt/x/y"),
            s("src/a.txt/x/y", "src/a.txt", "x/y")
        );
    }

    #[test]
    fn a_symlink_loop_is_an_error_of_its_own() {
        let (_t, root) = project();
        symlink("loop", root.path().join("loop")).unwrap();
        let l = root.locate("loop/x").unwrap();
        assert_eq!(l.real.as_ref().unwrap_err().code, ErrorCode::InvalidInput);
        assert!(!l.leads_outside());
    }
}
