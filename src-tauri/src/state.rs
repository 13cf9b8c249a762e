//! The app's state: the open project, approvals, running streams and shell
//! runs (by run id, for cancel), and the store. Everything here is plain
//! Rust; the commands in `commands/` adapt it to Tauri.

use crate::approvals::{Approvals, Scope};
use crate::store::{ProjectInfo, Store};
use corral_tools::dispatch::{self, CallContext};
use corral_tools::policy::Decision;
use corral_tools::shell::{CancelToken, ShellRun};
use corral_tools::{Error, ErrorCode, ProjectRoot};
use serde_json::Value;
use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

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

/// Shared app state (managed by Tauri).
pub struct AppState {
    project: Mutex<Option<Arc<ProjectRoot>>>,
    approvals: Mutex<Approvals>,
    runs: Mutex<HashMap<String, Run>>,
    pub store: Store,
}

/// A poisoned lock only means another thread panicked mid-update; the data
/// (maps and options) is still usable.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl AppState {
    pub fn new(store: Store) -> AppState {
        AppState {
            project: Mutex::new(None),
            approvals: Mutex::new(Approvals::default()),
            runs: Mutex::new(HashMap::new()),
            store,
        }
    }

    /// The open project, or `no_project_open`.
    pub fn project(&self) -> Result<Arc<ProjectRoot>, Error> {
        lock(&self.project)
            .clone()
            .ok_or_else(|| Error::new(ErrorCode::NoProjectOpen, "no project folder is open"))
    }

    pub fn project_info(&self) -> Option<ProjectInfo> {
        lock(&self.project).as_ref().map(|root| info(root))
    }

    /// Opens a project folder (approvals start empty) and records it as recent.
    pub fn open_project(&self, path: &Path) -> Result<ProjectInfo, Error> {
        let root = ProjectRoot::open(path)?;
        let info = info(&root);
        *lock(&self.project) = Some(Arc::new(root));
        lock(&self.approvals).clear();
        // A failure to remember it is not a failure to open it.
        let _ = self.store.push_recent(&info);
        Ok(info)
    }

    pub fn close_project(&self) {
        *lock(&self.project) = None;
        lock(&self.approvals).clear();
    }

    fn context(&self, tool: &str, input: &Value, approval: Option<&str>) -> CallContext {
        let mut ctx = CallContext::new(self.store.settings().mode, Default::default());
        ctx.approval = lock(&self.approvals).take(tool, input, approval);
        ctx
    }

    /// The policy decision for a proposed call; a session grant turns `ask`
    /// into `allow`.
    pub fn check_policy(&self, tool: &str, input: &Value) -> Result<Decision, Error> {
        let root = self.project()?;
        let ctx = CallContext::new(self.store.settings().mode, Default::default());
        let decision = dispatch::decide(&root, tool, input, &ctx)?;
        match decision {
            Decision::Ask { .. } if lock(&self.approvals).covers(tool, input) => {
                Ok(Decision::Allow)
            }
            other => Ok(other),
        }
    }

    /// Records the user's approval of a call and returns its token.
    pub fn approve(&self, tool: &str, input: &Value, scope: Scope) -> Result<String, Error> {
        corral_tools::spec::risk_of(tool)
            .ok_or_else(|| Error::invalid_input(format!("there is no tool named `{tool}`")))?;
        Ok(lock(&self.approvals).grant(tool, input, scope))
    }

    /// Runs one tool call off the async runtime.
    pub async fn call_tool(
        &self,
        tool: &'static str,
        input: Value,
        approval: Option<String>,
        shell: ShellRun,
    ) -> Result<Value, Error> {
        let root = self.project()?;
        let mut ctx = self.context(tool, &input, approval.as_deref());
        ctx.shell = shell;
        tauri::async_runtime::spawn_blocking(move || dispatch::call(&root, tool, input, &ctx))
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
        runs.insert(run_id.to_string(), run);
        Ok(())
    }

    pub fn end_run(&self, run_id: &str) {
        lock(&self.runs).remove(run_id);
    }

    /// Cancels a run; an unknown or finished run is not an error.
    pub fn cancel(&self, run_id: &str) {
        if let Some(run) = lock(&self.runs).get(run_id) {
            run.cancel();
        }
    }

    /// Cancels every run and waits up to `wait` for them to end: on exit,
    /// so no command (in its own process group) outlives the app. Returns
    /// how many were still running when the wait ran out.
    pub fn stop_all(&self, wait: Duration) -> usize {
        for run in lock(&self.runs).values() {
            run.cancel();
        }
        let deadline = Instant::now() + wait;
        loop {
            let left = lock(&self.runs).len();
            if left == 0 || Instant::now() >= deadline {
                return left;
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
