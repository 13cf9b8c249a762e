//! `search_files` and `glob`: ripgrep's engine (the `ignore` walker and
//! `grep-searcher`) behind the project root.
//!
//! Both tools walk the folder in parallel with the same rules as ripgrep's
//! defaults, also in a folder that is not a git repository: `.gitignore`
//! (nested ones too, negations included), `.ignore`, `.git/info/exclude` and
//! the global git excludes are honoured; hidden entries and `.git/` are
//! skipped; symlinks are never followed. Ignore files of the folders above
//! the root are read as ripgrep does (so a project that is a subfolder of a
//! repository sees the repository's rules); they can only hide files.
//!
//! Every path stays beneath the root: the starting folder goes through
//! [`ProjectRoot::resolve`] and [`ProjectRoot::canonical`] (a symlink leading
//! out is `path_outside_root`), the walk never follows a link, and each file
//! is opened through the root's directory handle, which refuses to leave it.
//!
//! ```
//! use corral_search::{self as search, SearchFilesInput};
//! use corral_fs::ProjectRoot;
//!
//! let dir = tempfile::tempdir()?;
//! std::fs::write(dir.path().join("notes.txt"), "first\nthe naïve one\n")?;
//! let root = ProjectRoot::open(dir.path())?;
//! let out = search::search_files(&root, &SearchFilesInput {
//!     query: "naïve".into(),
//!     regex: Some(false),
//!     case_insensitive: None,
//!     glob: None,
//!     path: None,
//!     max_results: None,
//! })?;
//! assert_eq!(out.matches.len(), 1);
//! assert_eq!((out.matches[0].line, out.matches[0].column), (2, 5));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod content;
mod files;
pub mod index;
mod line;
mod walk;

use corral_fs::error::Result;
use corral_fs::root::ProjectRoot;
pub use index::{build_with_progress as build_index, BuildProgress, IndexConfig, LiveIndex};
use serde::{Deserialize, Serialize};

/// `max_results` when the input gives none.
pub const DEFAULT_MAX_RESULTS: usize = 100;
/// The largest `max_results` accepted.
pub const MAX_RESULTS: usize = 1000;
/// Files `glob` returns at most.
pub const MAX_GLOB_FILES: usize = 500;

/// Input of `search_files`.
#[derive(Debug, Clone, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchFilesInput {
    /// Regular expression (Rust regex syntax), or a literal string when regex is false.
    pub query: String,
    /// Treat query as a regular expression (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub regex: Option<bool>,
    /// Match case-insensitively (default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub case_insensitive: Option<bool>,
    /// Only search files whose path matches this glob, e.g. `*.rs` (file names
    /// at any depth) or `src/**/*.ts` (a path relative to `path`; `*` does not
    /// cross `/`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub glob: Option<String>,
    /// Folder (or file) to search under, relative to the root (default `.`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// Most matches to return, 1 to 1000 (default 100).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 1000))]
    pub max_results: Option<usize>,
}

/// Input of `glob`.
#[derive(Debug, Clone, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GlobInput {
    /// Glob pattern, e.g. `**/*.rs`, `src/*.{ts,tsx}`, or `*.md` (a pattern
    /// without `/` matches file names at any depth). Matched against paths
    /// relative to `path`; `*` does not cross `/`, `**` does.
    pub pattern: String,
    /// Folder to search under, relative to the root (default `.`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
}

/// One matching line.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
pub struct SearchMatch {
    /// The file, relative to the root, `/`-separated.
    pub path: String,
    /// 1-based line number.
    pub line: u64,
    /// 1-based column of the line's first match, counted in characters
    /// (Unicode scalar values), not bytes.
    pub column: u64,
    /// The line without its line ending (`\n` or `\r\n`). A line longer than
    /// 250 characters is cut to 200 around the match, with markers saying how
    /// much was left out before and after.
    pub text: String,
}

/// Output of `search_files`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
pub struct SearchFilesOutput {
    /// At most `max_results` matches, one per matching line, sorted by path
    /// then line.
    pub matches: Vec<SearchMatch>,
    /// More matches exist than were returned. The search stops as soon as it
    /// has seen one more than the cap; since the walk is parallel, the
    /// returned ones are the first by (path, line) *of those found*, not
    /// necessarily the first of the whole tree. Narrow with `path` or `glob`.
    pub truncated: bool,
    /// A trigram index picked the files to search (the matches are the same
    /// as without it). `false` without an index, or when the pattern has no
    /// literal text of three bytes to look up (e.g. `.`).
    #[serde(default)]
    pub indexed: bool,
}

/// Output of `glob`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
pub struct GlobOutput {
    /// Matching files relative to the root, newest first (modification time,
    /// then path).
    pub files: Vec<String>,
    /// How many files are in `files`.
    pub count: usize,
    /// More than 500 files matched; the newest 500 are returned.
    pub truncated: bool,
}

/// Searches file contents, like `rg --line-number --column QUERY PATH`.
///
/// Failures: an empty query, a bad `glob` or a `max_results` outside 1..=1000
/// is `invalid_input`; a bad regex is `invalid_regex` with the parser's
/// message; `path` fails as the file tools do (`not_found`,
/// `path_outside_root`, ...).
pub fn search_files(root: &ProjectRoot, input: &SearchFilesInput) -> Result<SearchFilesOutput> {
    content::search(root, input, None)
}

/// [`search_files`] with a trigram index kept in `index.dir`: built when
/// missing, rebuilt when damaged or far out of date, never trusted for a
/// file changed since it was built. Same results as [`search_files`]; the
/// output says whether the index was used.
pub fn search_files_indexed(
    root: &ProjectRoot,
    input: &SearchFilesInput,
    index: &IndexConfig,
) -> Result<SearchFilesOutput> {
    content::search(root, input, Some(index))
}

/// Finds files whose path matches a glob, newest first, at most 500.
///
/// Folders named literally at the start of the pattern (`.github/workflows`
/// in `.github/workflows/*.yml`) are entered even when hidden or ignored, as
/// if given as `path`.
pub fn glob(root: &ProjectRoot, input: &GlobInput) -> Result<GlobOutput> {
    files::glob(root, input)
}
