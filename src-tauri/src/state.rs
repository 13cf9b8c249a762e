//! The app's state: the open project (a session here, or one on a remote
//! over ssh), running streams and shell runs (by run id, for cancel), and
//! the store. Everything here is plain Rust; the commands in `commands/`
//! adapt it to Tauri, and every call of a tool goes through the session
//! (`corral-session`), or through serve's on the remote ([`crate::remote`]).

pub use corral_session::runs::Run;

use crate::remote::RemoteProject;
use crate::store::history::History;
use crate::store::{ProjectInfo, Store};
use corral_host::tasks::Tasks;
use corral_session::mcp::McpServerStatus;
use corral_session::runs::Runs;
use corral_session::Session;
use corral_tools::{Error, ProjectRoot};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

/// Shared app state (managed by Tauri).
pub struct AppState {
    /// The open project; replaced whole, so a call never pairs one
    /// project's root with another's grants.
    open: Mutex<Option<OpenProject>>,
    /// This machine's corral-cli, copied to a remote that lacks it once
    /// the user agreed.
    cli: Mutex<PathBuf>,
    /// Streams and commands running, for `cancel(run_id)` (shared with
    /// the open project's commands).
    runs: Arc<Runs>,
    pub store: Store,
    /// Every project's conversations (SQLite, opened on first use).
    pub history: Arc<History>,
    /// The answers about domains off the egress allowlist, kept beside the
    /// project's grants and ended with them.
    pub domains: Arc<corral_session::domains::DomainAnswers>,
    /// The open project's tasks (a project here only), each session
    /// opened on its worktree when first asked for; replaced with the project.
    tasks: Mutex<Option<Arc<Tasks>>>,
    /// The tasks whose session runs in a container, by name (each a
    /// session of serve there; dropped, its container ends).
    containers: Mutex<std::collections::HashMap<String, Placed>>,
}

/// A task's session in a container or a pod.
struct Placed {
    /// Always held but while it is dropped (let go before a pod's
    /// objects are deleted).
    session: Option<Arc<RemoteProject>>,
    /// In a pod of the user's cluster: its branch brought back while it
    /// runs, and once more as it ends.
    pod: Option<corral_host::kube_task::Running>,
}

impl Drop for Placed {
    /// A pod's task ends with its branch back here and its objects
    /// deleted (a container's ends as its session is let go).
    fn drop(&mut self) {
        if let Some(pod) = self.pod.take() {
            if let Err(error) = pod.end(self.session.take()) {
                eprintln!(
                    "corral: a task's pod did not end cleanly: {} {}",
                    error.message, error.hint
                );
            }
        }
    }
}

/// Where the open project's session runs.
#[derive(Clone)]
pub enum OpenProject {
    /// Here, in this process.
    Local(Arc<Session>),
    /// On another machine, as `corral-cli serve` over ssh: every project
    /// command the window sends is answered there ([`crate::remote`]).
    Remote(Arc<RemoteProject>),
}

impl crate::remote::Routes for AppState {
    fn remote(&self) -> Option<Arc<RemoteProject>> {
        AppState::remote(self)
    }

    fn here(&self, task: Option<&str>) -> Result<Option<corral_host::ProjectCommands>, Error> {
        let session = match task {
            // A remote project's tasks are serve's there.
            Some(_) if self.remote().is_some() => None,
            Some(task) => {
                let tasks = self.tasks()?;
                // Made in a container that runs no more (stopped and not
                // started again): never here instead.
                if self.store.task_in_container(&tasks.folder(task)) {
                    return Err(corral_tools::Error::new(
                        corral_tools::ErrorCode::Io,
                        format!("task {task} runs in a container, and none runs for it now"),
                    )
                    .hint("Stop the task, or open the task list again: either starts a new one on its branch.")
                    .retryable(true));
                }
                Some(tasks.session(task)?)
            }
            None => match lock(&self.open).as_ref() {
                Some(OpenProject::Local(session)) => Some(session.clone()),
                _ => None,
            },
        };
        Ok(session.map(|session| corral_host::ProjectCommands {
            session,
            runs: self.runs.clone(),
            domains: self.domains.clone(),
        }))
    }

    fn in_container(&self, task: &str) -> Option<Arc<RemoteProject>> {
        lock(&self.containers)
            .get(task)
            .and_then(|placed| placed.session.clone())
    }

    fn pod_waker(
        &self,
        task: &str,
    ) -> Option<std::sync::mpsc::Sender<corral_host::kube_task::Wake>> {
        let containers = lock(&self.containers);
        containers.get(task)?.pod.as_ref().map(|pod| pod.waker())
    }

    fn model(&self, task: Option<&str>) -> corral_host::ModelCommands {
        // A task's conversations are kept under its worktree's folder.
        let project = match task {
            Some(task) => Some(self.task_key(task)),
            None => self.project_info().map(|info| info.root),
        };
        corral_host::ModelCommands {
            model: Arc::new(corral_host::Model {
                store: self.store.clone(),
                fixed: None,
            }),
            history: self.history.clone(),
            project,
            runs: self.runs.clone(),
            new_id: None,
        }
    }

    fn runs(&self) -> Arc<Runs> {
        self.runs.clone()
    }

    fn domains(&self) -> Arc<corral_session::domains::DomainAnswers> {
        self.domains.clone()
    }

    fn store(&self) -> Store {
        self.store.clone()
    }
}

/// A poisoned lock only means another thread panicked mid-update; the data
/// (maps and options) is still usable.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl AppState {
    pub fn new(store: Store) -> AppState {
        AppState {
            open: Mutex::new(None),
            cli: Mutex::new(crate::remote::cli_beside_app()),
            runs: Arc::default(),
            history: Arc::new(History::new(store.data_dir())),
            domains: Arc::default(),
            tasks: Mutex::new(None),
            containers: Mutex::default(),
            store,
        }
    }

    /// The open project's tasks; `no_project_open` without a project, and
    /// a clear error for a remote one (its tasks are not made there yet).
    pub fn tasks(&self) -> Result<Arc<Tasks>, Error> {
        self.session()?;
        lock(&self.tasks)
            .clone()
            .ok_or_else(corral_session::no_project)
    }

    /// Runs the task `task`'s session in a container from now on (its
    /// worktree made already): the engine and image of the settings, its
    /// limits; the project's settings sent there. Blocks while the
    /// container starts: call it off the window's thread.
    pub fn open_in_container(&self, task: &str) -> Result<String, Error> {
        let tasks = self.tasks()?;
        let settings = self.store.settings();
        let Some(chosen) = settings.task_container else {
            return Err(Error::invalid_input("no container is set for tasks")
                .hint("Choose an engine and an image under Tasks in Settings."));
        };
        if let Some(kube) = chosen.in_cluster()? {
            return self.open_in_pod(task, &tasks, &chosen, kube, settings.mode);
        }
        let mut options = chosen.run_options()?;
        // So git works inside: the repository's own folder at its path.
        let git = tasks.project().join(".git");
        if git.is_dir() {
            let git = git.display().to_string();
            options.extend(corral_remote::Container::git_mounts(&git, task));
        }
        let stamp = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        // The project's toolchain, corral-cli added (built once, kept).
        let image = match &chosen.toolchain {
            None => chosen.image.clone(),
            Some(toolchain) => corral_remote::toolchain::task_image(
                &chosen.engine,
                &corral_remote::toolchain::Toolchain::named(tasks.project(), &toolchain.spec())?,
                &crate::remote::cli_beside_app(),
                &chosen.build_options(),
            )?,
        };
        let container = corral_remote::Container {
            engine: chosen.engine,
            image,
            worktree: tasks.folder(task).display().to_string(),
            name: format!("corral-{task}-{stamp:08x}"),
            options,
        };
        let place = format!("{} {}", container.engine, container.name);
        let remote = corral_remote::Remote {
            destination: String::new(),
            port: None,
            path: corral_remote::Container::WORK.to_string(),
            config: None,
            connect_timeout: corral_remote::CONNECT_TIMEOUT,
            container: Some(container),
            pod: None,
        };
        let project = self.project_info().ok_or_else(corral_session::no_project)?;
        let session = Arc::new(RemoteProject::in_container(remote, settings.mode, project)?);
        self.placed(task, &tasks, session, None)?;
        Ok(place)
    }

    /// [`AppState::open_in_container`] in a pod of the user's cluster:
    /// the task's objects made with its kubeconfig, its branch sent in,
    /// serve reached through `kubectl attach`; its branch brought back
    /// while it runs (`corral_host::kube_task`).
    fn open_in_pod(
        &self,
        task: &str,
        tasks: &Tasks,
        chosen: &corral_config::TaskContainer,
        kube: &corral_config::KubeSetting,
        mode: corral_tools::policy::Mode,
    ) -> Result<String, Error> {
        use corral_host::kube_task::{KubeTask, Programs, Running, BRING_BACK_EVERY, SETTLE};
        let spec = corral_host::kube_task::spec_for(task, chosen, kube, mode);
        let (kind, worktree) = (kube.kind.into(), tasks.folder(task));
        let mut started = KubeTask::in_scratch(&Programs, spec, kind, tasks.project(), &worktree)?;
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX));
        let pod = started.start(now)?;
        // Until the session opens, a failure deletes what was made (the
        // task's own drop).
        let remote = started.remote(&pod);
        let project = self.project_info().ok_or_else(corral_session::no_project)?;
        let session = Arc::new(RemoteProject::in_container(remote, mode, project)?);
        let running = Running::new(started, pod, BRING_BACK_EVERY, SETTLE);
        let place = session.info_place();
        self.placed(task, tasks, session, Some(running))?;
        Ok(place)
    }

    /// Sends `session` its settings and listens to its questions, then
    /// keeps it as the task `task`'s, and that it runs in a container (so
    /// after a restart it goes on in one, not here).
    fn placed(
        &self,
        task: &str,
        tasks: &Tasks,
        session: Arc<RemoteProject>,
        pod: Option<corral_host::kube_task::Running>,
    ) -> Result<(), Error> {
        self.prepare(&session)?;
        let placed = Placed {
            session: Some(session),
            pod,
        };
        let previous = lock(&self.containers).insert(task.to_string(), placed);
        drop(previous);
        self.store.keep_task_in_container(&tasks.folder(task), true)
    }

    /// A session elsewhere, before the window asks anything of it: its
    /// only settings (sent from here), and its commands' questions about
    /// domains, asked in the window.
    fn prepare(&self, remote: &RemoteProject) -> Result<(), Error> {
        tauri::async_runtime::block_on(async {
            remote.use_settings(&self.store).await?;
            remote.listen_domains(self.domains.clone()).await
        })
    }

    /// Brings the task `task`'s branch back from its pod now, if it runs
    /// in one (a review, a merge or a push needs it whole). Blocking
    /// (kubectl): call it off the window's thread.
    pub fn bring_back(&self, task: &str) -> Result<(), Error> {
        let containers = lock(&self.containers);
        let Some(pod) = containers.get(task).and_then(|placed| placed.pod.as_ref()) else {
            return Ok(());
        };
        pod.bring_back().map(drop)
    }

    /// Where the task `task` runs when not here: its engine and container.
    pub fn task_place(&self, task: &str) -> Option<String> {
        let containers = lock(&self.containers);
        let placed = containers.get(task)?;
        placed.session.as_ref().map(|session| session.info_place())
    }

    /// Stops the task `task` (Stop in its panel): its container killed
    /// by its engine, so nothing of it runs on (the next message starts a
    /// new container on the same worktree), or, here, its session's
    /// commands ended. Blocking (the engine): call it off the window's thread.
    pub fn stop_task(&self, task: &str) -> Result<(), Error> {
        let in_pod = lock(&self.containers)
            .get(task)
            .map(|placed| placed.pod.is_some());
        if in_pod == Some(true) {
            // A pod's serve cannot be started again in it: the pod ends
            // (its branch back first) and a new one starts on the branch.
            let ended = lock(&self.containers).remove(task);
            drop(ended);
            return self.open_in_container(task).map(drop);
        }
        if let Some(container) = crate::remote::Routes::in_container(self, task) {
            return container.stop_container();
        }
        self.tasks()?.close(task);
        Ok(())
    }

    /// Ends the task `task`'s container, if it runs in one, for good (the
    /// task was merged or discarded): no new one starts after a restart.
    pub fn end_container(&self, task: &str) {
        let ended = lock(&self.containers).remove(task);
        drop(ended);
        if let Ok(tasks) = self.tasks() {
            let _ = self
                .store
                .keep_task_in_container(&tasks.folder(task), false);
        }
    }

    /// Whether the task `task` was made in a container and has none now
    /// (the app started again since): its next container is started by
    /// [`AppState::open_in_container`].
    pub fn container_to_resume(&self, task: &str) -> bool {
        if lock(&self.containers).contains_key(task) || self.remote().is_some() {
            return false;
        }
        self.tasks()
            .is_ok_and(|tasks| self.store.task_in_container(&tasks.folder(task)))
    }

    /// The key the history keeps the task `task`'s conversations under:
    /// its worktree's folder (where it would be made: a task of another
    /// project is no task of this one's); for a remote project, its
    /// `ssh://` name and the task's.
    pub fn task_key(&self, task: &str) -> String {
        if let Some(remote) = self.remote() {
            // Its folder is the remote's: the key names the task there.
            return format!("{} (task {task})", remote.info.root);
        }
        let folder = self.tasks().ok().map(|tasks| tasks.folder(task));
        folder.map_or_else(|| format!("task:{task}"), |f| f.display().to_string())
    }

    /// The open project, or `no_project_open`.
    pub fn open(&self) -> Result<OpenProject, Error> {
        lock(&self.open)
            .clone()
            .ok_or_else(corral_session::no_project)
    }

    /// The open project's session when it runs here; `no_project_open`
    /// without one, and a clear error for a remote project, whose
    /// session is serve's there (what reaches this answers only here).
    pub fn session(&self) -> Result<Arc<Session>, Error> {
        match self.open()? {
            OpenProject::Local(session) => Ok(session),
            OpenProject::Remote(remote) => Err(remote.not_here()),
        }
    }

    /// The open remote project, if the open project is one.
    pub fn remote(&self) -> Option<Arc<RemoteProject>> {
        match lock(&self.open).as_ref() {
            Some(OpenProject::Remote(remote)) => Some(remote.clone()),
            _ => None,
        }
    }

    /// The key the open project's settings (programs, rules, hooks'
    /// trust) are kept under: its folder, or a remote project's `ssh://` name.
    pub fn settings_key(&self) -> Option<PathBuf> {
        match lock(&self.open).as_ref()? {
            OpenProject::Local(session) => Some(session.root().path().to_path_buf()),
            OpenProject::Remote(remote) => Some(remote.settings_key()),
        }
    }

    /// The open project's folder here, or `no_project_open` (and a clear
    /// error for a remote project).
    pub fn project(&self) -> Result<Arc<ProjectRoot>, Error> {
        self.session().map(|s| s.root().clone())
    }

    pub fn project_info(&self) -> Option<ProjectInfo> {
        match lock(&self.open).as_ref()? {
            OpenProject::Local(session) => Some(info(session.root())),
            OpenProject::Remote(remote) => Some(remote.info.clone()),
        }
    }

    /// Uses `cli` as this machine's corral-cli, the binary copied to a
    /// remote that lacks it (else the one beside the app).
    pub fn use_cli(&self, cli: PathBuf) {
        *lock(&self.cli) = cli;
    }

    /// Opens `name`, a local folder or a remote one (`ssh://…`,
    /// `user@host:/path`, `alias:/path`, read by `corral_remote::Remote::parse`),
    /// and records it as recent. `install`: the user agreed to copy
    /// corral-cli to the remote when that version is not there; without
    /// it, a missing one is `approval_required` naming the folder it
    /// would go to. Blocks while ssh connects: call it off the window's thread.
    pub fn open_named(&self, name: &str, install: bool) -> Result<ProjectInfo, Error> {
        let Some(remote) = corral_remote::Remote::parse(name) else {
            return self.open_project(Path::new(name));
        };
        let copy = install.then(|| lock(&self.cli).clone());
        let mode = self.store.settings().mode;
        let remote = Arc::new(RemoteProject::open(remote?, mode, copy)?);
        // Its only settings, before the window asks anything of it; and
        // its commands' questions about domains, asked in the window.
        self.prepare(&remote)?;
        let info = remote.info.clone();
        self.replace(OpenProject::Remote(remote.clone()));
        // The user's servers run there; their tools join once listed.
        let servers = self.mcp_servers();
        tauri::async_runtime::spawn(async move {
            // A failure shows in the servers' status, asked for there.
            let _ = remote.use_servers(servers).await;
        });
        let _ = self.store.push_recent(&info);
        Ok(info)
    }

    /// Opens the remote project again when the settings' mode is no longer
    /// the one its session there runs in: serve's mode is fixed when it
    /// starts, and a mode chosen in Settings must hold there as it does
    /// here (the grants and tickets of the session before end with it).
    /// Blocks while ssh connects: call it off the window's thread.
    pub fn follow_mode(&self) -> Result<(), Error> {
        let Some(remote) = self.remote() else {
            return Ok(());
        };
        if remote.mode == self.store.settings().mode {
            return Ok(());
        }
        self.open_named(&remote.info.root, false).map(drop)
    }

    /// Puts `project` in place of the open one. The previous project (its
    /// commands, servers and watcher, or its ssh session) ends outside the
    /// lock: stopping them may take a few seconds.
    fn replace(&self, project: OpenProject) {
        let previous = lock(&self.open).replace(project);
        let tasks = lock(&self.tasks).take();
        let containers = std::mem::take(&mut *lock(&self.containers));
        drop((previous, tasks, containers));
        self.domains.clear();
    }

    /// Opens a project folder and records it as recent. Its approvals start
    /// empty: the session is replaced whole, so none of the previous
    /// project's grants ever applies to it. A name of a remote folder opens
    /// it there ([`AppState::open_named`], without copying corral-cli).
    pub fn open_project(&self, path: &Path) -> Result<ProjectInfo, Error> {
        if let Some(name) = path.to_str() {
            if corral_remote::Remote::parse(name).is_some() {
                return self.open_named(name, false);
            }
        }
        let data = self.store.data_dir();
        let options = corral_session::Options {
            checkpoints: Some(data.to_path_buf()),
            // Searches use it once it is built and never wait for it.
            search_index: Some(corral_tools::search::IndexConfig::prebuilt(
                data.join("search-index"),
            )),
            build_index: true,
            watch_tree: true,
            language_servers: true,
            warm_language_servers: true,
            lsp_folders: self.lsp_folders(),
            background_commands: true,
            mcp_servers: self.mcp_servers(),
            ..corral_session::Options::default()
        };
        let settings = Arc::new(self.store.clone());
        let session = Arc::new(Session::open(path, settings.clone(), options)?);
        let info = info(session.root());
        self.replace(OpenProject::Local(session.clone()));
        let tasks = self.task_options();
        *lock(&self.tasks) = Some(Arc::new(Tasks::new(
            session.root().path(),
            data,
            settings,
            tasks,
        )));
        // The servers start beside the window; their tools join once listed.
        tauri::async_runtime::spawn(async move { session.start_servers().await });
        // A failure to remember it is not a failure to open it.
        let _ = self.store.push_recent(&info);
        Ok(info)
    }

    /// How a task's session is opened: as the project's, on its worktree,
    /// with the user's MCP servers; no search index of its own kept ahead
    /// and no tree watch (the window shows the project's tree).
    fn task_options(&self) -> impl Fn() -> corral_session::Options + Send + Sync + 'static {
        let data = self.store.data_dir().to_path_buf();
        let servers = self.mcp_servers();
        let folders = self.lsp_folders();
        move || corral_session::Options {
            checkpoints: Some(data.clone()),
            language_servers: true,
            warm_language_servers: true,
            lsp_folders: folders.clone(),
            background_commands: true,
            mcp_servers: servers.clone(),
            ..corral_session::Options::default()
        }
    }

    /// The folders Settings names to look for language servers in first
    /// (absolute ones only).
    fn lsp_folders(&self) -> Vec<PathBuf> {
        self.store
            .settings()
            .language_server_folders
            .iter()
            .map(PathBuf::from)
            .filter(|folder| folder.is_absolute())
            .collect()
    }

    /// Closes the project; its approvals go with it.
    pub fn close_project(&self) {
        // Taken out first: its background commands stop outside the lock.
        let closed = lock(&self.open).take();
        let tasks = lock(&self.tasks).take();
        let containers = std::mem::take(&mut *lock(&self.containers));
        drop((closed, tasks, containers));
        self.domains.clear();
    }

    /// The configured MCP servers, each with its variables' values.
    pub fn mcp_servers(
        &self,
    ) -> Vec<(corral_session::mcp::McpServerConfig, Vec<(String, String)>)> {
        self.store
            .mcp_servers()
            .into_iter()
            .map(|server| {
                let vars = self.store.mcp_vars(&server);
                (server, vars)
            })
            .collect()
    }

    /// Puts the saved MCP servers in place of the open project's (after
    /// Settings changed them): the old ones stop, the new ones start.
    /// Returns once they are listed (or failed).
    pub async fn reload_mcp(&self) {
        if let Ok(session) = self.session() {
            session.replace_servers(self.mcp_servers()).await;
        }
    }

    /// Where each of the open project's MCP servers stands (none without a project).
    pub fn mcp_status(&self) -> Vec<McpServerStatus> {
        self.session()
            .map(|s| s.server_status())
            .unwrap_or_default()
    }

    /// Registers a run so `cancel` can reach it. A run id in use is refused.
    pub fn start_run(&self, run_id: &str, run: Run) -> Result<(), Error> {
        self.runs.start(run_id, run)
    }

    pub fn end_run(&self, run_id: &str) {
        self.runs.end(run_id);
    }

    /// Cancels every run and waits up to `wait` for them to end: on exit,
    /// so no command (in its own process group) outlives the app. Returns
    /// how many were still running when the wait ran out.
    pub fn stop_all(&self, wait: Duration) -> usize {
        self.runs.cancel_all();
        let background = self.session().ok().map(|s| s.background());
        let left_in_background = background.map_or(0, |bg| bg.stop_all(wait));
        let deadline = Instant::now() + wait;
        loop {
            let left = self.runs.len();
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
