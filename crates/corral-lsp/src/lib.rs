//! Language servers as the agent's eyes: after each write or edit, the
//! changed files' errors and warnings; on request, a file's or the
//! project's diagnostics, and a symbol's definition, references and hover.
//!
//! [`Lsp`] holds one project's servers, one per language, each started
//! the first time a file of its language is checked and stopped when it
//! has been idle for [`Options::idle`]. Starting one is the caller's
//! business ([`Launch`]): Corral's tool layer starts them in its sandbox.
//! Every wait has a deadline, so a server that crashes or hangs costs a
//! call at most its wait, and the call learns why in [`Report::notes`].
//!
//! The protocol's types are `lsp-types`'; the JSON-RPC framing over the
//! server's stdio is `lsp-server`'s (rust-analyzer's own): blocking reads
//! and writes on threads of their own, which suits the blocking tool
//! layer better than an async client would.
//!
//! ```
//! use corral_lsp::{Language, Lsp, Options, Source};
//! use std::time::Duration;
//!
//! // A project with no server installed: the check says so, at once.
//! let dir = tempfile::tempdir()?;
//! let lsp = Lsp::new(dir.path(), Vec::new(), corral_lsp::Unsandboxed, Options::default());
//! let report = lsp.check(&[Source::new("src/main.rs", "fn main() {}\n")], Duration::from_secs(2));
//! assert!(report.files.is_empty());
//! assert_eq!(report.notes, ["no Rust language server is installed (rust-analyzer)"]);
//! assert_eq!(Language::of_path("README.md"), None);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod frame;
mod language;
mod link;
mod pull;
mod report;
mod server;

pub use language::{Language, ServerSpec};
pub use report::{
    Diagnostic, FileDiagnostics, Location, Report, Severity, Symbol, MAX_DIAGNOSTICS,
    MAX_HOVER_CHARS, MAX_MESSAGE_CHARS, MAX_REFERENCES,
};

use corral_protocol::{Error, ErrorCode};
use link::{Missed, Phase};
use serde_json::{json, Value};
use server::Server;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

/// Starts a server program: the command to spawn, with whatever must
/// live as long as the server (its private folder, its sandbox's state).
pub trait Launch: Send + Sync {
    /// The command for `spec`, or why it cannot run.
    fn command(&self, spec: &ServerSpec) -> corral_protocol::Result<Launched>;
}

/// A server's command and what it needs kept.
pub struct Launched {
    pub command: std::process::Command,
    /// Dropped once the server has ended.
    pub guard: Box<dyn Send>,
}

/// Runs a server as a plain child process, with no fence (for the
/// example and for tests of this crate; Corral's tool layer has its own).
pub struct Unsandboxed;

impl Launch for Unsandboxed {
    fn command(&self, spec: &ServerSpec) -> corral_protocol::Result<Launched> {
        let mut command = std::process::Command::new(&spec.program);
        command.args(&spec.args);
        Ok(Launched {
            command,
            guard: Box::new(()),
        })
    }
}

/// How the servers are run.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// A server unused this long is stopped.
    pub idle: Duration,
    /// A server that died is started again only after this long.
    pub restart_after: Duration,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            idle: Duration::from_secs(600),
            restart_after: Duration::from_secs(5),
        }
    }
}

/// A file to check: its path relative to the project root and its text
/// (`None`: it was deleted).
#[derive(Debug, Clone)]
pub struct Source {
    pub path: String,
    pub text: Option<String>,
}

impl Source {
    pub fn new(path: impl Into<String>, text: impl Into<String>) -> Source {
        Source {
            path: path.into(),
            text: Some(text.into()),
        }
    }
}

/// One project's language servers.
#[derive(Clone)]
pub struct Lsp {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for Lsp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lsp")
            .field("root", &self.shared.root)
            .field("languages", &self.languages())
            .finish()
    }
}

/// How the servers on the machine are found: once, when first needed.
type Finder = Box<dyn FnOnce() -> Vec<ServerSpec> + Send>;

struct Shared {
    root: PathBuf,
    /// The servers present on the machine, found at the first need.
    specs: std::sync::OnceLock<Vec<ServerSpec>>,
    find: Mutex<Option<Finder>>,
    launch: Box<dyn Launch>,
    options: Options,
    servers: Mutex<HashMap<Language, Arc<Server>>>,
}

impl Shared {
    /// The servers on the machine, found now if not yet.
    fn specs(&self) -> &[ServerSpec] {
        self.specs.get_or_init(|| {
            lock(&self.find)
                .take()
                .map(|find| find())
                .unwrap_or_default()
        })
    }
}

impl Drop for Shared {
    fn drop(&mut self) {
        for server in lock(&self.servers).values() {
            server.link.kill("the project was closed");
        }
    }
}

/// How long a warmed server may take to load the project before the
/// thread that warms it gives up waiting (the server goes on).
const WARM_WAIT: Duration = Duration::from_secs(120);

impl Lsp {
    /// The servers of the project at `root` (an absolute path): `specs`
    /// are those present on the machine, one per language; none starts
    /// before a file of its language is checked.
    pub fn new(
        root: &Path,
        specs: Vec<ServerSpec>,
        launch: impl Launch + 'static,
        options: Options,
    ) -> Lsp {
        Lsp::lazy(root, move || specs, launch, options)
    }

    /// As [`Lsp::new`], the servers found by `find` only when first
    /// needed (a file of some language checked, the languages asked for):
    /// a session that never edits a file never looks for them (finding
    /// rust-analyzer behind rustup alone takes tens of milliseconds).
    pub fn lazy(
        root: &Path,
        find: impl FnOnce() -> Vec<ServerSpec> + Send + 'static,
        launch: impl Launch + 'static,
        options: Options,
    ) -> Lsp {
        let shared = Arc::new(Shared {
            root: root.to_path_buf(),
            specs: std::sync::OnceLock::new(),
            find: Mutex::new(Some(Box::new(find))),
            launch: Box::new(launch),
            options,
            servers: Mutex::new(HashMap::new()),
        });
        let weak = Arc::downgrade(&shared);
        let tick = (options.idle / 4).clamp(Duration::from_millis(50), Duration::from_secs(30));
        let _ = std::thread::Builder::new()
            .name("lsp-idle".into())
            .spawn(move || stop_idle(weak, tick));
        Lsp { shared }
    }

    /// Starts, on a thread of its own, the servers of the languages of the
    /// files `files` finds (a project's, looked at there too), and has
    /// each open the first of its language's files, so that it loads the
    /// project before the first edit needs it; nothing waits for them.
    /// Files of a language with no server on the machine are left out.
    pub fn warm(&self, files: impl FnOnce() -> Vec<Source> + Send + 'static) {
        let weak = Arc::downgrade(&self.shared);
        let _ = std::thread::Builder::new()
            .name("lsp-warm".into())
            .spawn(move || {
                let found = files();
                // Closed meanwhile: nothing to start.
                let Some(shared) = weak.upgrade() else { return };
                let lsp = Lsp { shared };
                let languages = lsp.languages();
                let mut opened: Vec<Language> = Vec::new();
                for source in found {
                    let Some(language) = Language::of_path(&source.path) else {
                        continue;
                    };
                    if languages.contains(&language) && !opened.contains(&language) {
                        opened.push(language);
                        // The project loaded: the answer itself is not kept.
                        let _ = lsp.check(std::slice::from_ref(&source), WARM_WAIT);
                    }
                }
            });
    }

    /// The languages with a server on this machine.
    pub fn languages(&self) -> Vec<Language> {
        self.shared.specs().iter().map(|s| s.language).collect()
    }

    /// The running servers' languages and process ids (their process
    /// groups), for the window's status and for tests.
    pub fn running(&self) -> Vec<(Language, i32)> {
        let servers = lock(&self.shared.servers);
        let mut running: Vec<_> = servers
            .iter()
            .filter(|(_, s)| !matches!(s.link.phase(), Phase::Dead(_)))
            .filter_map(|(l, s)| s.link.pgid().map(|p| (*l, p.as_raw_nonzero().get())))
            .collect();
        running.sort();
        running
    }

    /// Stops every server.
    pub fn stop(&self) {
        let servers: Vec<_> = lock(&self.shared.servers).drain().map(|(_, s)| s).collect();
        for server in servers {
            server.stop("stopped");
        }
    }

    /// Tells the servers the files' texts and returns their errors and
    /// warnings, waiting for them at most `wait`. Files of no known
    /// language are left out; what could not be learned is in the notes.
    pub fn check(&self, sources: &[Source], wait: Duration) -> Report {
        let deadline = Instant::now() + wait;
        let mut report = Report::default();
        let mut by_language: Vec<(Language, Vec<&Source>)> = Vec::new();
        for source in sources {
            let Some(language) = Language::of_path(&source.path) else {
                continue;
            };
            match by_language.iter_mut().find(|(l, _)| *l == language) {
                Some((_, list)) => list.push(source),
                None => by_language.push((language, vec![source])),
            }
        }
        for (language, sources) in by_language {
            let server = match self.server(language) {
                Ok(server) => server,
                Err(note) => {
                    report.notes.push(note);
                    continue;
                }
            };
            self.check_with(&server, &sources, deadline, wait, &mut report);
        }
        report.bound()
    }

    fn check_with(
        &self,
        server: &Server,
        sources: &[&Source],
        deadline: Instant,
        wait: Duration,
        report: &mut Report,
    ) {
        let _in_use = server.in_use();
        let label = server.spec.language.label();
        let name = server.spec.name();
        if let Err(missed) = server.link.wait_ready(deadline) {
            report.notes.push(match missed {
                Missed::Timeout => format!(
                    "the {label} server ({name}) is still starting after {:.1} s; its diagnostics come with a later call",
                    wait.as_secs_f64()
                ),
                Missed::Dead(why) => self.died(server, &why),
                Missed::Refused { message, .. } => message,
            });
            return;
        }
        let after = server.link.seq();
        let mut synced = Vec::new();
        for source in sources {
            let path = self.shared.root.join(&source.path);
            let uri = uri_of(&path);
            let id = server.spec.language.id_of(&source.path);
            match server.sync(&uri, id, source.text.as_deref()) {
                Ok(_) if source.text.is_none() => {}
                Ok(version) => synced.push((*source, uri, version)),
                Err(Missed::Dead(why)) => {
                    report.notes.push(self.died(server, &why));
                    return;
                }
                Err(Missed::Timeout | Missed::Refused { .. }) => {}
            }
        }
        for (source, uri, version) in synced {
            match server.diagnostics(&uri, after, version, deadline) {
                Ok(items) => report
                    .files
                    .push(report::file_diagnostics(source.path.clone(), &items)),
                Err(Missed::Timeout) => report.notes.push(format!(
                    "the {label} server ({name}) did not report on `{}` within {:.1} s",
                    source.path,
                    wait.as_secs_f64()
                )),
                Err(Missed::Dead(why)) => {
                    report.notes.push(self.died(server, &why));
                    return;
                }
                Err(Missed::Refused { message, .. }) => report.notes.push(message),
            }
        }
    }

    /// The note for a server that died; it is started again later.
    fn died(&self, server: &Server, why: &str) -> String {
        lock(&server.died).get_or_insert_with(Instant::now);
        format!(
            "the {} server ({}) stopped: {why}; it is started again on a later call",
            server.spec.language.label(),
            server.spec.name()
        )
    }

    /// The language's server, started if it is not running (or restarted
    /// if it died a while ago); the note saying why there is none.
    fn server(&self, language: Language) -> Result<Arc<Server>, String> {
        let Some(spec) = self.shared.specs().iter().find(|s| s.language == language) else {
            let programs: Vec<_> = language.programs().map(|(p, _)| p).collect();
            return Err(format!(
                "no {} language server is installed ({})",
                language.label(),
                programs.join(" or ")
            ));
        };
        let mut servers = lock(&self.shared.servers);
        if let Some(server) = servers.get(&language) {
            let dead = matches!(server.link.phase(), Phase::Dead(_));
            let recent = lock(&server.died)
                .is_none_or(|at| at.elapsed() < self.shared.options.restart_after);
            if !dead || recent {
                server.touch();
                return Ok(server.clone());
            }
        }
        let server = Server::start(spec.clone(), &self.shared.root, self.shared.launch.as_ref());
        servers.insert(language, server.clone());
        Ok(server)
    }

    /// What the server of `source`'s language knows of the symbol at
    /// `line` and `column` (1-based, UTF-16 units): hover, definitions and
    /// references, each waited for until `wait` is spent.
    ///
    /// Errors: `language_server` (no server for the file's language, or it
    /// is not ready, or it stopped).
    pub fn symbol(
        &self,
        source: &Source,
        line: u32,
        column: u32,
        wait: Duration,
    ) -> corral_protocol::Result<Symbol> {
        let deadline = Instant::now() + wait;
        let language = Language::of_path(&source.path).ok_or_else(|| {
            lsp_error(format!("no language server reads `{}`", source.path))
                .hint("symbols works on Rust, TypeScript/JavaScript, Python, Go and C/C++ files; use search_files for others.")
        })?;
        let server = self.server(language).map_err(lsp_error)?;
        let _in_use = server.in_use();
        let missed = |missed: Missed| match missed {
            Missed::Timeout => lsp_error(format!(
                "the {} server ({}) did not answer within {:.1} s",
                language.label(),
                server.spec.name(),
                wait.as_secs_f64()
            ))
            .retryable(true),
            Missed::Dead(why) => lsp_error(self.died(&server, &why)).retryable(true),
            Missed::Refused { message, .. } => lsp_error(message),
        };
        server.link.wait_ready(deadline).map_err(missed)?;
        let uri = uri_of(&self.shared.root.join(&source.path));
        server
            .sync(&uri, language.id_of(&source.path), source.text.as_deref())
            .map_err(missed)?;
        let position = json!({
            "textDocument": { "uri": uri },
            "position": { "line": line.saturating_sub(1), "character": column.saturating_sub(1) },
        });
        let mut symbol = Symbol {
            at: Location {
                path: source.path.clone(),
                line,
                column,
            },
            hover: None,
            definitions: Vec::new(),
            references: Vec::new(),
            references_omitted: 0,
            notes: Vec::new(),
        };
        let mut ask =
            |method: &str, params: Value| match server.link.request(method, params, deadline) {
                Ok(value) => Some(value),
                Err(m) => {
                    symbol.notes.push(missed(m).message);
                    None
                }
            };
        let hover = ask("textDocument/hover", position.clone());
        let definitions = ask("textDocument/definition", position.clone());
        let mut with_context = position;
        with_context["context"] = json!({ "includeDeclaration": true });
        let references = ask("textDocument/references", with_context);
        symbol.hover = hover.and_then(|v| hover_text(&v));
        symbol.definitions = definitions.map(|v| self.locations(&v)).unwrap_or_default();
        let mut references = references.map(|v| self.locations(&v)).unwrap_or_default();
        if references.len() > MAX_REFERENCES {
            symbol.references_omitted =
                u32::try_from(references.len() - MAX_REFERENCES).unwrap_or(u32::MAX);
            references.truncate(MAX_REFERENCES);
        }
        symbol.references = references;
        Ok(symbol)
    }

    /// Locations from a definition or references answer.
    fn locations(&self, value: &Value) -> Vec<Location> {
        let items = match value {
            Value::Array(items) => items.clone(),
            Value::Null => Vec::new(),
            one => vec![one.clone()],
        };
        items
            .iter()
            .filter_map(|item| {
                // A `Location`, or a `LocationLink` (its target).
                let uri = item
                    .get("uri")
                    .or_else(|| item.get("targetUri"))?
                    .as_str()?;
                let range = item
                    .get("range")
                    .or_else(|| item.get("targetSelectionRange"))?;
                let range: lsp_types::Range = serde_json::from_value(range.clone()).ok()?;
                Some(Location {
                    path: self.display(uri),
                    line: range.start.line.saturating_add(1),
                    column: range.start.character.saturating_add(1),
                })
            })
            .collect()
    }

    /// A URI as the model is shown it: relative inside the project.
    fn display(&self, uri: &str) -> String {
        let path = key_of(uri);
        match Path::new(&path).strip_prefix(&self.shared.root) {
            Ok(rel) => rel.to_string_lossy().into_owned(),
            Err(_) => path,
        }
    }
}

/// The text of a hover answer, whatever form it came in.
fn hover_text(value: &Value) -> Option<String> {
    let hover: lsp_types::Hover = serde_json::from_value(value.clone()).ok()?;
    use lsp_types::{HoverContents, MarkedString};
    let piece = |m: &MarkedString| match m {
        MarkedString::String(s) => s.clone(),
        MarkedString::LanguageString(ls) => ls.value.clone(),
    };
    let text = match &hover.contents {
        HoverContents::Scalar(m) => piece(m),
        HoverContents::Array(ms) => ms.iter().map(piece).collect::<Vec<_>>().join("\n\n"),
        HoverContents::Markup(markup) => markup.value.clone(),
    };
    let text = text.trim();
    (!text.is_empty()).then(|| report::cut(text, MAX_HOVER_CHARS))
}

fn lsp_error(message: impl Into<String>) -> Error {
    Error::new(ErrorCode::LanguageServer, message)
}

/// The `file://` URI of an absolute path.
pub(crate) fn uri_of(path: &Path) -> String {
    url::Url::from_file_path(path)
        .map(String::from)
        .unwrap_or_else(|()| format!("file://{}", path.display()))
}

/// The key a document's diagnostics are kept under: its path, so that two
/// spellings of one URI (`%3A` or `:`) meet.
pub(crate) fn key_of(uri: &str) -> String {
    url::Url::parse(uri)
        .ok()
        .and_then(|u| u.to_file_path().ok())
        .map(|p| p.display().to_string())
        .unwrap_or_else(|| uri.to_string())
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

/// Stops the servers idle longer than the project's limit, until the
/// project's servers are dropped.
fn stop_idle(shared: Weak<Shared>, tick: Duration) {
    loop {
        std::thread::sleep(tick);
        let Some(shared) = shared.upgrade() else {
            return;
        };
        let idle: Vec<_> = {
            let mut servers = lock(&shared.servers);
            let languages: Vec<_> = servers
                .iter()
                .filter(|(_, s)| s.idle_for().is_some_and(|idle| idle >= shared.options.idle))
                .map(|(l, _)| *l)
                .collect();
            languages
                .into_iter()
                .filter_map(|l| servers.remove(&l))
                .collect()
        };
        for server in idle {
            server.stop("it was idle");
        }
    }
}
