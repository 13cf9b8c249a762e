//! The project's language servers, started in the sandbox's read-only
//! profile, and the diagnostics that join a write's or an edit's result.
//!
//! The client itself is `corral-lsp`; this module gives it the sandbox
//! ([`shell::language_server_command`]), the files' texts (read through
//! the root handle) and the project's source files.

use crate::error::Result;
use crate::policy;
use crate::root::ProjectRoot;
use crate::shell;
use corral_lsp::{Language, Launch, Launched, ServerSpec, Source};
use serde_json::Value;
use std::path::PathBuf;
use std::time::Duration;

pub use corral_lsp::{
    Diagnostic, FileDiagnostics, Location, Lsp, Options, Report, Severity, Symbol,
};

/// How long a write or an edit waits for its files' diagnostics.
pub const EDIT_WAIT: Duration = Duration::from_secs(2);
/// How long `diagnostics` and `symbols` wait (a server's start included).
pub const TOOL_WAIT: Duration = Duration::from_secs(20);
/// At most this many files are checked for the whole project or a folder
/// (the newest first).
pub const MAX_PROJECT_FILES: usize = 60;

/// Starts servers with [`shell::language_server_command`].
struct Sandboxed(ProjectRoot);

impl Launch for Sandboxed {
    fn command(&self, spec: &ServerSpec) -> Result<Launched> {
        let shell::ServerCommand { command, folder } =
            shell::language_server_command(&self.0, &spec.program, &spec.args)?;
        Ok(Launched {
            command,
            guard: Box::new(folder),
        })
    }
}

/// The language servers of the project at `root`: for each language, the
/// first server found in `extra`, the sandbox's program folders or
/// `~/.local/bin`. None starts before a file of its language is checked.
pub fn servers(root: &ProjectRoot, extra: &[PathBuf], options: Options) -> Result<Lsp> {
    let mut dirs = extra.to_vec();
    dirs.extend(shell::program_folders());
    dirs.extend(shell::home_dir().map(|home| home.join(".local/bin")));
    let own = ProjectRoot::open(root.path())?;
    // Looked for only when a file is checked: a read never pays for it.
    let project = root.path().to_path_buf();
    let find = move || ServerSpec::for_project(&project, &dirs);
    Ok(Lsp::lazy(root.path(), find, Sandboxed(own), options))
}

/// Starts the servers of the languages the project's files show, on a
/// thread of their own, each opening the first file of its language
/// (looked for among at most [`WARM_FILES`] files, the ignore files
/// respected, secret-like files never read), so the first edit finds its
/// server ready and the project loaded.
pub fn warm(root: &ProjectRoot, lsp: &Lsp) {
    let Ok(own) = ProjectRoot::open(root.path()) else {
        return;
    };
    lsp.warm(move || {
        let input = crate::search::GlobInput {
            pattern: "*".into(),
            path: None,
        };
        let Ok(found) = crate::search::glob(&own, &input) else {
            return Vec::new();
        };
        let mut firsts: Vec<Source> = Vec::new();
        for file in found.files.iter().take(WARM_FILES) {
            let Some(language) = Language::of_path(file) else {
                continue;
            };
            let known = firsts
                .iter()
                .any(|s| Language::of_path(&s.path) == Some(language));
            if known || policy::is_secret_like(file) {
                continue;
            }
            if let Some(source) = source(&own, file).filter(|s| s.text.is_some()) {
                firsts.push(source);
            }
        }
        firsts
    });
}

/// How many of a project's files are looked at for the languages to warm.
pub const WARM_FILES: usize = 5000;

/// A file's text as the servers should see it: `None` when it is gone (or
/// cannot be read as text, which no server would check either).
pub(crate) fn source(root: &ProjectRoot, path: &str) -> Option<Source> {
    let rel = root.resolve(path).ok()?;
    let shown = rel.display();
    Language::of_path(&shown)?;
    let text = crate::fs::read_regular(root, &rel)
        .ok()
        .and_then(|(bytes, _)| corral_fs::text::decode(bytes, &shown).ok())
        .map(|text| text.body);
    Some(Source { path: shown, text })
}

/// Adds the changed files' errors and warnings to a write's result, as
/// `diagnostics`, waiting for them at most [`EDIT_WAIT`]. Nothing is added
/// when no file is of a language with a server on this machine (the
/// `diagnostics` tool says which server is missing; each write need not).
pub(crate) fn attach(root: &ProjectRoot, lsp: &Lsp, paths: &[String], output: &mut Value) {
    let languages = lsp.languages();
    let sources: Vec<Source> = paths
        .iter()
        .filter_map(|p| source(root, p))
        .filter(|s| Language::of_path(&s.path).is_some_and(|l| languages.contains(&l)))
        .collect();
    if sources.is_empty() {
        return;
    }
    let report = lsp.check(&sources, EDIT_WAIT);
    if let (Value::Object(map), Ok(report)) = (output, serde_json::to_value(report)) {
        map.insert("diagnostics".into(), report);
    }
}

/// The source files under `folder` (`None`: the whole project) of the
/// languages with a server, newest first, at most [`MAX_PROJECT_FILES`];
/// and how many were left out. Secret-like files are never read.
pub(crate) fn sources_under(
    root: &ProjectRoot,
    folder: Option<&str>,
    languages: &[Language],
) -> Result<(Vec<Source>, usize)> {
    let found = crate::search::glob(
        root,
        &crate::search::GlobInput {
            pattern: "*".into(),
            path: folder.map(str::to_string),
        },
    )?;
    let wanted: Vec<&String> = found
        .files
        .iter()
        .filter(|f| Language::of_path(f).is_some_and(|l| languages.contains(&l)))
        .filter(|f| !policy::is_secret_like(f))
        .collect();
    let left_out = wanted.len().saturating_sub(MAX_PROJECT_FILES);
    let sources = wanted
        .into_iter()
        .take(MAX_PROJECT_FILES)
        .filter_map(|f| source(root, f))
        .filter(|s| s.text.is_some())
        .collect();
    Ok((sources, left_out))
}
