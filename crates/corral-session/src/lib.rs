//! Corral's session core: one open project and everything about it — its
//! root, the conversations' grants, the checkpoint store, the user's MCP
//! servers, the search index, the tree watcher and the background
//! commands — and the one way a tool call goes: [`Session::check`] reads
//! the input once and judges it into a [`Ticket`], [`Session::run`]
//! applies the user's answer, checkpoints and runs it ([`Session::call`]
//! does both for a host that asks no one).
//!
//! The project's hooks (`hooks`) are raised by the agent loop through
//! [`Session::hook_status`] and [`Session::run_hooks`], with the trust the
//! host's [`Settings`] keep.
//!
//! No host lives here. The app (Tauri), `corral-cli call` and the MCP
//! server (`corral-mcp`) are adapters: each builds a session with its
//! [`Options`] and [`Settings`] and turns its own requests into `check`
//! and `run`. A new host (a headless JSON-RPC loop, ACP, a remote shell)
//! is one more such adapter.

pub mod approvals;
pub mod checkpoints;
pub mod customization;
pub mod domains;
pub mod grants;
pub mod hooks;
pub mod index;
pub mod live_output;
pub mod marked;
pub mod mcp;
pub mod registry;
pub mod runs;
pub mod server_tool;
pub mod tickets;
pub mod watch;

use approvals::Approvals;
use checkpoints::Checkpoints;
use corral_tools::policy::{Boundaries, Mode};
use corral_tools::search::IndexConfig;
use corral_tools::shell::background::Background;
use corral_tools::shell::SavedRule;
use corral_tools::{Error, ErrorCode, ProjectRoot};
use grants::GrantEntry;
use index::{IndexJob, IndexStatus};
use mcp::{McpHub, McpServerConfig, McpServerStatus};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

pub use tickets::{Call, Consent, RunContext, Ticket};

/// What a host keeps for its user and may change while a project is open:
/// the mode calls are judged in, the programs added and the rules saved.
pub trait Settings: Send + Sync {
    /// The mode calls are judged in now.
    fn mode(&self) -> Mode;
    /// The programs a command in `root` may run beyond the built-in ones,
    /// and the rules saved for `root`.
    fn shell_grants(&self, root: &Path) -> (Vec<String>, Vec<SavedRule>);
    /// Saves a rule the user confirmed for `root`.
    fn save_rule(&self, root: &Path, rule: SavedRule) -> Result<(), Error>;
    /// The user's home, whose `.claude/settings.json` hooks run without
    /// asking (the user wrote them); `None`: no user's hooks.
    fn home(&self) -> Option<PathBuf> {
        None
    }
    /// Whether the user trusted the hooks of the settings file `file` of
    /// `root` with exactly this text. Untrusted unless a host keeps trust.
    fn hooks_trusted(&self, _root: &Path, _file: &str, _text: &str) -> bool {
        false
    }
    /// Keeps the user's trust of the hooks of `file` with this text.
    fn trust_hooks(&self, _root: &Path, file: &str, _text: &str) -> Result<(), Error> {
        Err(Error::invalid_input(format!(
            "this host keeps no trust, so `{file}` stays untrusted"
        ))
        .hint("Trust the project's hooks in the window, or pass the host's flag for them."))
    }
}

/// Settings fixed when the host started (`corral-cli call`, the MCP
/// server): its flags, nothing saved.
#[derive(Debug, Clone, Default)]
pub struct Fixed {
    pub mode: Mode,
    pub programs: Vec<String>,
    pub rules: Vec<SavedRule>,
}

impl Settings for Fixed {
    fn mode(&self) -> Mode {
        self.mode
    }
    fn shell_grants(&self, _root: &Path) -> (Vec<String>, Vec<SavedRule>) {
        (self.programs.clone(), self.rules.clone())
    }
    fn save_rule(&self, _root: &Path, rule: SavedRule) -> Result<(), Error> {
        Err(Error::invalid_input(format!(
            "this host keeps no rules, so `{rule}` cannot be always allowed"
        ))
        .hint("Approve the call once."))
    }
}

/// How a host opens a session.
#[derive(Default)]
pub struct Options {
    /// The data folder of the checkpoint store (`DATA/checkpoints/...`);
    /// `None`: calls take no checkpoint.
    pub checkpoints: Option<PathBuf>,
    /// Where the agent may write, and where not.
    pub boundaries: Boundaries,
    /// Every command gets the network (the user said so when starting
    /// the host); otherwise only a command the user approved with it.
    pub network: bool,
    /// Domains a command with the network may reach beyond the defaults.
    pub allowed_domains: Vec<String>,
    /// `search_files`' trigram index; `None`: searches scan.
    pub search_index: Option<IndexConfig>,
    /// Build the index when the session opens and keep it live by a watch
    /// (otherwise the first search that needs it builds it).
    pub build_index: bool,
    /// Watch the project's folders for the file tree.
    pub watch_tree: bool,
    /// Start the project's language servers as files are checked: a
    /// write's result then carries its diagnostics, and `diagnostics` and
    /// `symbols` answer.
    pub language_servers: bool,
    /// Start the language servers of the languages the project's files
    /// show when it opens (a host that lasts: the window, serve), so the
    /// first edit finds its server ready.
    pub warm_language_servers: bool,
    /// Folders to look for language servers in first (then cargo's and
    /// the system's program folders and `~/.local/bin`).
    pub lsp_folders: Vec<PathBuf>,
    /// A command may run in the background (`background: true`), as long
    /// as the session lasts; a host that ends with its one call offers none.
    pub background_commands: bool,
    /// The user's MCP servers, each with its variables' values; none
    /// starts until [`Session::start_servers`].
    pub mcp_servers: Vec<(McpServerConfig, Vec<(String, String)>)>,
}

/// One open project.
pub struct Session {
    root: Arc<ProjectRoot>,
    settings: Arc<dyn Settings>,
    boundaries: Boundaries,
    network: bool,
    allowed_domains: Vec<String>,
    search_index: Option<IndexConfig>,
    approvals: Mutex<Approvals>,
    /// The checked calls waiting for their run.
    tickets: Mutex<tickets::Tickets>,
    checkpoints: Option<Checkpoints>,
    background: Arc<Background>,
    /// Whether a command may start in `background`.
    background_commands: bool,
    mcp: Mutex<Arc<McpHub>>,
    index: Arc<IndexJob>,
    /// Its folders watched for the file tree (`None` when not asked for or
    /// when no watch could start: the tree then shows what it listed).
    tree: Option<watch::TreeWatcher>,
    /// Its language servers, stopped with it (`None`: not asked for, or
    /// they could not be set up).
    lsp: Option<corral_tools::lsp::Lsp>,
    /// The pages `web_fetch` read, kept per conversation.
    web: Arc<corral_tools::web::WebCache>,
}

/// A poisoned lock only means another thread panicked mid-update; the data
/// (maps and options) is still usable.
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Session {
    /// Opens `path` as a project: its grants start empty, its servers are
    /// configured (started by [`Session::start_servers`]), its index is
    /// built in the background when asked for.
    pub fn open(path: &Path, settings: Arc<dyn Settings>, options: Options) -> Result<Self, Error> {
        let root = Arc::new(ProjectRoot::open(path)?);
        let boundaries = options.boundaries.normalized(&root)?;
        let live_index = options.build_index && options.search_index.is_some();
        // One inotify instance for the tree and the index.
        let project_watch = (options.watch_tree || live_index)
            .then(|| {
                corral_tools::fs::watch::ProjectWatch::new()
                    .inspect_err(|e| eprintln!("corral: cannot watch the project: {e}"))
                    .ok()
            })
            .flatten();
        let tree = match (&project_watch, options.watch_tree) {
            (Some(project_watch), true) => watch::TreeWatcher::start_in(project_watch, root.path())
                .inspect_err(|e| eprintln!("corral: {e}"))
                .ok(),
            _ => None,
        };
        let index = Arc::new(IndexJob::default());
        if let (true, Some(config)) = (options.build_index, &options.search_index) {
            index.build(&root, config.clone(), project_watch);
        }
        let lsp = if options.language_servers {
            corral_tools::lsp::servers(&root, &options.lsp_folders, Default::default())
                .inspect_err(|e| eprintln!("corral: {e}"))
                .ok()
        } else {
            None
        };
        if let (Some(lsp), true) = (&lsp, options.warm_language_servers) {
            corral_tools::lsp::warm(&root, lsp);
        }
        Ok(Session {
            lsp,
            mcp: Mutex::new(Arc::new(McpHub::new(root.clone(), options.mcp_servers))),
            checkpoints: options.checkpoints.map(Checkpoints::new),
            root,
            settings,
            boundaries,
            network: options.network,
            allowed_domains: options.allowed_domains,
            search_index: options.search_index,
            approvals: Mutex::default(),
            tickets: Mutex::default(),
            background: Arc::new(Background::default()),
            background_commands: options.background_commands,
            index,
            tree,
            web: Arc::default(),
        })
    }

    /// The project's root.
    pub fn root(&self) -> &Arc<ProjectRoot> {
        &self.root
    }

    /// The project's checkpoint store (opened now if it was not), or
    /// `None` when this session takes no checkpoints.
    pub fn checkpoint_store(&self) -> Option<Result<Arc<corral_tools::checkpoint::Store>, Error>> {
        self.checkpoints.as_ref().map(|c| c.store(&self.root))
    }

    /// The checkpoint store if a call opened it (a read never does), for
    /// a host to say what it warned of.
    pub fn opened_checkpoint_store(&self) -> Option<Arc<corral_tools::checkpoint::Store>> {
        self.checkpoints.as_ref().and_then(Checkpoints::opened)
    }

    /// The project's background commands (the Processes panel).
    pub fn background(&self) -> Arc<Background> {
        self.background.clone()
    }

    /// The project's MCP servers.
    pub fn servers(&self) -> Arc<McpHub> {
        lock(&self.mcp).clone()
    }

    /// Starts the project's MCP servers; returns once each is listed or failed.
    pub async fn start_servers(&self) {
        self.servers().start_all().await;
    }

    /// Puts `servers` in place of the project's (Settings changed them):
    /// grants of the old servers' tools go, the old ones stop, the new
    /// ones start; their tickets go too. Returns once they are listed (or
    /// failed).
    pub async fn replace_servers(&self, servers: Vec<(McpServerConfig, Vec<(String, String)>)>) {
        let fresh = Arc::new(McpHub::new(self.root.clone(), servers));
        lock(&self.approvals).forget_servers();
        lock(&self.tickets).forget_servers();
        let old = std::mem::replace(&mut *lock(&self.mcp), fresh.clone());
        old.stop_all().await;
        fresh.start_all().await;
    }

    /// Where each of the project's MCP servers stands.
    pub fn server_status(&self) -> Vec<McpServerStatus> {
        self.servers().status()
    }

    /// The tools the model is offered: the registry's, `exec_shell` naming
    /// the programs the user added, then the tools of the running servers.
    pub fn tool_specs(&self) -> Vec<corral_tools::spec::ToolSpec> {
        let (programs, _) = self.settings.shell_grants(self.root.path());
        let mut specs = corral_tools::spec::specs_with_programs(&programs);
        specs.extend(self.servers().specs());
        specs
    }

    /// Where the search index stands.
    pub fn index_status(&self) -> IndexStatus {
        self.index.status()
    }

    /// The watch keeping the index true, once started.
    pub fn live_index(&self) -> Option<Arc<corral_tools::search::LiveIndex>> {
        self.index.live()
    }

    /// The project's folders changed after batch `since` (the file tree
    /// polls it); empty when no watch runs.
    pub fn tree_changes(&self, since: u64) -> watch::TreeChanges {
        match &self.tree {
            Some(tree) => tree.changes().since(since),
            None => watch::ChangeLog::default().since(since),
        }
    }

    /// Whether the tree watcher runs and is ready (tests wait for it).
    pub fn tree_watcher_ready(&self) -> bool {
        self.tree.as_ref().is_some_and(|t| t.is_ready())
    }

    /// The grants of `conversation`, oldest first.
    pub fn grants(&self, conversation: &str) -> Vec<GrantEntry> {
        lock(&self.approvals).grants(conversation)
    }

    /// Revokes one grant of `conversation`; returns those left.
    pub fn revoke_grant(&self, conversation: &str, id: &str) -> Vec<GrantEntry> {
        let mut approvals = lock(&self.approvals);
        approvals.revoke(conversation, id);
        approvals.grants(conversation)
    }

    /// The conversation ended: its grants go, the calls checked in it
    /// and not run, and the pages `web_fetch` kept for it.
    pub fn end_conversation(&self, conversation: &str) {
        lock(&self.approvals).end(conversation);
        lock(&self.tickets).forget_conversation(conversation);
        self.web.end(conversation);
    }
}

/// The error of a host asked for a project where none is open.
pub fn no_project() -> Error {
    Error::new(ErrorCode::NoProjectOpen, "no project folder is open")
}
