//! The app's state: the open project, approvals, running streams and shell
//! runs (by run id, for cancel), and the store. Everything here is plain
//! Rust; the commands in `commands/` adapt it to Tauri.

use crate::approvals::Approvals;
use crate::checkpoint_store::{CallTag, Checkpoints};
use crate::mcp::{McpHub, McpServerStatus};
use crate::store::history::History;
use crate::store::{ProjectInfo, Store};
use corral_tools::dispatch::{self, CallContext};
use corral_tools::policy::{Approval, Decision};
use corral_tools::shell::background::Background;
use corral_tools::shell::{CancelToken, ShellRun};
use corral_tools::{Error, ErrorCode, ProjectRoot};
use serde_json::Value;
use std::collections::{HashMap, VecDeque};
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

mod consent;

/// What lets a call that asks run: the user's token for this very call,
/// or a grant of the conversation it belongs to.
#[derive(Debug, Clone, Default)]
pub struct Consent {
    pub token: Option<String>,
    /// The window's key of the conversation making the call.
    pub conversation: Option<String>,
}

/// Something running that `cancel(run_id)` can stop.
#[derive(Clone)]
pub enum Run {
    Shell(CancelToken),
    Llm(tokio_util::sync::CancellationToken),
}

impl Run {
    fn cancel(&self) {
        match self {
            Run::Shell(token) => token.cancel(),
            Run::Llm(token) => token.cancel(),
        }
    }
}

/// The open project and the approvals given in it. One lock holds both,
/// so a call never pairs one project's root with another's grants.
struct OpenProject {
    root: Arc<ProjectRoot>,
    approvals: Approvals,
    /// Its background commands; dropped (and so stopped) with it.
    background: Arc<Background>,
    /// The user's MCP servers, started for it; stopped with it.
    mcp: Arc<McpHub>,
    /// Its search index, built in the background when it opens.
    index: Arc<IndexJob>,
    /// Its folders watched for the file tree; stopped with it (`None`
    /// when no watch could start: the tree then shows what it listed).
    tree: Option<crate::watch::TreeWatcher>,
}

/// Where the open project's search index stands (the window shows it
/// while it is built).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, ts_rs::TS)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum IndexStatus {
    /// Files listed by the walk and read so far.
    Building {
        #[ts(type = "number")]
        listed: u64,
        #[ts(type = "number")]
        indexed: u64,
    },
    Ready {
        #[ts(type = "number")]
        files: u64,
        #[ts(type = "number")]
        ms: u64,
    },
    /// Searches scan every file instead.
    Failed { message: String },
}

/// One build of a project's search index.
#[derive(Default)]
pub struct IndexJob {
    progress: corral_tools::search::BuildProgress,
    done: Mutex<Option<IndexStatus>>,
    /// The watch that keeps the index true, so searches skip the walk
    /// (`None` if no watch could start: searches then check each file).
    live: Mutex<Option<Arc<corral_tools::search::LiveIndex>>>,
}

impl IndexJob {
    pub fn status(&self) -> IndexStatus {
        use std::sync::atomic::Ordering::Relaxed;
        lock(&self.done).clone().unwrap_or(IndexStatus::Building {
            listed: self.progress.listed.load(Relaxed) as u64,
            indexed: self.progress.indexed.load(Relaxed) as u64,
        })
    }
}

/// Shared app state (managed by Tauri).
pub struct AppState {
    project: Mutex<Option<OpenProject>>,
    runs: Mutex<HashMap<String, Run>>,
    /// Run ids cancelled before they started (a Stop that overtook its
    /// command on the way in); the newest few are remembered.
    early_cancels: Mutex<VecDeque<String>>,
    pub store: Store,
    /// Every project's conversations (SQLite, opened on first use).
    pub history: Arc<History>,
    /// The open project's checkpoint store (opened on first use).
    pub checkpoints: Checkpoints,
    /// The answers about domains off the egress allowlist, kept beside the
    /// project's grants and ended with them.
    pub domains: Arc<crate::domains::DomainAnswers>,
}

/// How many early cancels are remembered.
const EARLY_CANCELS: usize = 64;

/// A poisoned lock only means another thread panicked mid-update; the data
/// (maps and options) is still usable.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl AppState {
    pub fn new(store: Store) -> AppState {
        AppState {
            project: Mutex::new(None),
            runs: Mutex::new(HashMap::new()),
            early_cancels: Mutex::new(VecDeque::new()),
            checkpoints: Checkpoints::new(store.data_dir().to_path_buf()),
            history: Arc::new(History::new(store.data_dir())),
            domains: Arc::default(),
            store,
        }
    }

    /// Runs `f` on the open project, under its lock, or fails with
    /// `no_project_open`.
    fn with_project<T>(&self, f: impl FnOnce(&mut OpenProject) -> T) -> Result<T, Error> {
        lock(&self.project)
            .as_mut()
            .map(f)
            .ok_or_else(|| Error::new(ErrorCode::NoProjectOpen, "no project folder is open"))
    }

    /// The open project, or `no_project_open`.
    pub fn project(&self) -> Result<Arc<ProjectRoot>, Error> {
        self.with_project(|open| open.root.clone())
    }

    pub fn project_info(&self) -> Option<ProjectInfo> {
        lock(&self.project).as_ref().map(|open| info(&open.root))
    }

    /// Opens a project folder and records it as recent. Its approvals start
    /// empty: the root and its grants are replaced together, so none of the
    /// previous project's grants ever applies to it.
    pub fn open_project(&self, path: &Path) -> Result<ProjectInfo, Error> {
        let root = Arc::new(ProjectRoot::open(path)?);
        let info = info(&root);
        let mcp = self.new_hub(&root);
        let index = Arc::new(IndexJob::default());
        let tree = crate::watch::TreeWatcher::start(root.path())
            .inspect_err(|e| eprintln!("corral: {e}"))
            .ok();
        // The previous project (its commands, servers and watcher) ends
        // outside the lock: stopping them may take a few seconds.
        let previous = lock(&self.project).replace(OpenProject {
            root: root.clone(),
            approvals: Approvals::default(),
            background: Arc::new(Background::default()),
            mcp: mcp.clone(),
            index: index.clone(),
            tree,
        });
        drop(previous);
        self.domains.clear();
        self.build_index(&root, index);
        // The servers start beside the window; their tools join once listed.
        tauri::async_runtime::spawn(async move { mcp.start_all().await });
        // A failure to remember it is not a failure to open it.
        let _ = self.store.push_recent(&info);
        Ok(info)
    }

    /// Closes the project; its approvals go with it.
    pub fn close_project(&self) {
        // Taken out first: its background commands stop outside the lock.
        let closed = lock(&self.project).take();
        drop(closed);
        self.domains.clear();
    }

    /// Where the project's search index is kept (the app's data folder);
    /// searches use it once it is built and never wait for it.
    fn index_config(&self) -> corral_tools::search::IndexConfig {
        corral_tools::search::IndexConfig::prebuilt(self.store.data_dir().join("search-index"))
    }

    /// Builds the project's search index on a thread of its own.
    fn build_index(&self, root: &Arc<ProjectRoot>, job: Arc<IndexJob>) {
        let (root, config, building) = (root.clone(), self.index_config(), job.clone());
        let started = Instant::now();
        let spawned = std::thread::Builder::new()
            .name("corral-index".into())
            .spawn(move || {
                let job = building;
                // Kept live by a watch; if none can be had (inotify's
                // limits), built once and checked against each file's stat.
                let live = corral_tools::search::LiveIndex::new(&root, &config).and_then(|live| {
                    *lock(&job.live) = Some(live.clone());
                    live.build(&job.progress)
                });
                let built = match live {
                    Ok(()) => Ok(()),
                    Err(e) => {
                        eprintln!("corral: {}", e.message);
                        *lock(&job.live) = None;
                        corral_tools::search::build_index(&root, &config, &job.progress)
                    }
                };
                let status = match built {
                    Ok(()) => IndexStatus::Ready {
                        files: job
                            .progress
                            .listed
                            .load(std::sync::atomic::Ordering::Relaxed)
                            as u64,
                        ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
                    },
                    Err(e) => IndexStatus::Failed { message: e.message },
                };
                *lock(&job.done) = Some(status);
            });
        if let Err(e) = spawned {
            *lock(&job.done) = Some(IndexStatus::Failed {
                message: format!("no thread could build it: {e}"),
            });
        }
    }

    /// The open project's folders changed after batch `since` (the file
    /// tree polls it); empty when no watch runs.
    pub fn tree_changes(&self, since: u64) -> Result<crate::watch::TreeChanges, Error> {
        self.with_project(|open| match &open.tree {
            Some(tree) => tree.changes().since(since),
            None => crate::watch::ChangeLog::default().since(since),
        })
    }

    /// The open project's tree watcher, if one runs (tests wait for it).
    pub fn tree_watcher_ready(&self) -> bool {
        self.with_project(|open| open.tree.as_ref().is_some_and(|t| t.is_ready()))
            .unwrap_or(false)
    }

    /// Where the open project's search index stands.
    pub fn index_status(&self) -> Result<IndexStatus, Error> {
        self.with_project(|open| open.index.status())
    }

    /// The watch keeping the open project's index true, once started.
    pub fn live_index(&self) -> Option<Arc<corral_tools::search::LiveIndex>> {
        self.with_project(|open| lock(&open.index.live).clone())
            .ok()
            .flatten()
    }

    /// A hub of the configured MCP servers for `root`, none started.
    fn new_hub(&self, root: &Arc<ProjectRoot>) -> Arc<McpHub> {
        let servers = self
            .store
            .mcp_servers()
            .into_iter()
            .map(|server| {
                let vars = self.store.mcp_vars(&server);
                (server, vars)
            })
            .collect();
        Arc::new(McpHub::new(root.clone(), servers))
    }

    /// Puts the saved MCP servers in place of the open project's (after
    /// Settings changed them): the old ones stop, the new ones start.
    /// Returns once they are listed (or failed).
    pub async fn reload_mcp(&self) {
        let swapped = self.with_project(|open| {
            open.approvals.forget_mcp();
            let fresh = self.new_hub(&open.root);
            (std::mem::replace(&mut open.mcp, fresh.clone()), fresh)
        });
        if let Ok((old, fresh)) = swapped {
            old.stop_all().await;
            fresh.start_all().await;
        }
    }

    /// The open project's MCP servers.
    pub fn mcp(&self) -> Result<Arc<McpHub>, Error> {
        self.with_project(|open| open.mcp.clone())
    }

    /// Where each of the open project's MCP servers stands (none without a project).
    pub fn mcp_status(&self) -> Vec<McpServerStatus> {
        self.mcp().map(|hub| hub.status()).unwrap_or_default()
    }

    /// The open project's background commands (the Processes panel).
    pub fn background(&self) -> Result<Arc<Background>, Error> {
        self.with_project(|open| open.background.clone())
    }

    /// The tools the model is offered, `exec_shell` naming the programs
    /// the user added (for every project and the open one), then the tools
    /// of the open project's running MCP servers.
    pub fn tool_specs(&self) -> Vec<corral_tools::spec::ToolSpec> {
        let programs = self
            .project()
            .map(|root| self.store.shell_grants(root.path()).0)
            .unwrap_or_default();
        let mut specs = corral_tools::spec::specs_with_programs(&programs);
        if let Ok(mcp) = self.mcp() {
            specs.extend(mcp.specs());
        }
        specs
    }

    /// The user's programs and the project's saved rules, from the store.
    fn shell_grants(&self, root: &ProjectRoot, shell: &mut ShellRun) {
        let (programs, rules) = self.store.shell_grants(root.path());
        shell.extra_programs = programs;
        shell.rules = rules;
    }

    /// Runs one tool call off the async runtime (no turn or card named,
    /// no conversation's grants).
    pub async fn call_tool(
        &self,
        tool: String,
        input: Value,
        approval: Option<String>,
        shell: ShellRun,
    ) -> Result<Value, Error> {
        let consent = Consent {
            token: approval,
            conversation: None,
        };
        self.call_tool_in(tool, input, consent, None, shell, CallTag::default())
            .await
    }

    /// Runs one tool call off the async runtime; the checkpoint before a
    /// call that can change the project carries `tag`. `base`: the base of
    /// the preview the user approved (`CallContext::base`).
    pub async fn call_tool_in(
        &self,
        tool: String,
        input: Value,
        consent: Consent,
        base: Option<String>,
        shell: ShellRun,
        tag: CallTag,
    ) -> Result<Value, Error> {
        let mode = self.store.settings().mode;
        let mut ctx = CallContext::new(mode, Default::default());
        // The root and the approval come from one look at the project.
        let (root, (granted, network), mcp) = self.with_project(|open| {
            let granted = open.approvals.take_grant(
                &open.root,
                consent.conversation.as_deref(),
                &tool,
                &input,
                consent.token.as_deref(),
            );
            (open.root.clone(), granted, open.mcp.clone())
        })?;
        if let Some((server, name)) = mcp.split(&tool) {
            match mcp.decide(server, name, mode) {
                Decision::Deny { reason } => {
                    return Err(Error::new(ErrorCode::Denied, reason).detail("tool", tool.as_str()))
                }
                Decision::Ask { reason } if granted != Approval::Granted => {
                    return Err(Error::new(
                        ErrorCode::ApprovalRequired,
                        format!("{reason}: it needs the user's approval"),
                    )
                    .detail("tool", tool.as_str()));
                }
                _ => {}
            }
            // A server runs in the project and may change it: a checkpoint
            // first, as before any call that can (not for a read-only tool).
            if !mcp.reads_only(server, name) {
                let hook = self.checkpoints.hook(&root, tag)?;
                let (at, called, with) = (root.clone(), tool.clone(), input.clone());
                tauri::async_runtime::spawn_blocking(move || hook.before(&at, &called, &with))
                    .await
                    .map_err(|e| {
                        Error::new(ErrorCode::Io, format!("{tool} stopped unexpectedly: {e}"))
                    })?
                    .map_err(|e| Error {
                        message: format!(
                            "no checkpoint could be taken, so {tool} did not run: {}",
                            e.message
                        ),
                        ..e
                    })?;
            }
            return mcp.call(server, name, input, &shell.cancel).await;
        }
        ctx.approval = granted;
        ctx.base = base;
        ctx.shell = shell;
        // Only the user's approval of this very call grants the network.
        ctx.shell.network = network;
        self.shell_grants(&root, &mut ctx.shell);
        ctx.shell.background = Some(self.background()?);
        ctx.search_index = Some(match self.live_index() {
            Some(live) => self.index_config().watched_by(live),
            None => self.index_config(),
        });
        // A checkpoint before a call that can change the project (the
        // store is opened only then); if none can be taken, it does not run.
        if dispatch::tool(&tool).is_ok_and(|t| dispatch::changes_project(&root, t, &input)) {
            ctx.checkpoint = Some(self.checkpoints.hook(&root, tag)?);
        }
        let name = tool.clone();
        tauri::async_runtime::spawn_blocking(move || dispatch::call(&root, &name, input, &ctx))
            .await
            .map_err(|e| Error::new(ErrorCode::Io, format!("{tool} stopped unexpectedly: {e}")))?
    }

    /// Registers a run so `cancel` can reach it. A run id in use is refused.
    pub fn start_run(&self, run_id: &str, run: Run) -> Result<(), Error> {
        let mut runs = lock(&self.runs);
        if runs.contains_key(run_id) {
            return Err(Error::invalid_input(format!(
                "run id `{run_id}` is already running"
            )));
        }
        let mut early = lock(&self.early_cancels);
        if let Some(at) = early.iter().position(|id| id == run_id) {
            early.remove(at);
            run.cancel();
        }
        runs.insert(run_id.to_string(), run);
        Ok(())
    }

    pub fn end_run(&self, run_id: &str) {
        lock(&self.runs).remove(run_id);
    }

    /// Cancels a run; an unknown or finished run is not an error. A run
    /// id not started yet is remembered, and that run starts cancelled.
    pub fn cancel(&self, run_id: &str) {
        let runs = lock(&self.runs);
        match runs.get(run_id) {
            Some(run) => run.cancel(),
            None => {
                let mut early = lock(&self.early_cancels);
                if early.len() == EARLY_CANCELS {
                    early.pop_front();
                }
                early.push_back(run_id.to_string());
            }
        }
    }

    /// Cancels every run and waits up to `wait` for them to end: on exit,
    /// so no command (in its own process group) outlives the app. Returns
    /// how many were still running when the wait ran out.
    pub fn stop_all(&self, wait: Duration) -> usize {
        for run in lock(&self.runs).values() {
            run.cancel();
        }
        let background = self.background().ok();
        let left_in_background = background.map_or(0, |bg| bg.stop_all(wait));
        let deadline = Instant::now() + wait;
        loop {
            let left = lock(&self.runs).len();
            if left == 0 || Instant::now() >= deadline {
                return left + left_in_background;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

fn info(root: &ProjectRoot) -> ProjectInfo {
    ProjectInfo {
        root: root.path().display().to_string(),
        name: root.name(),
    }
}
