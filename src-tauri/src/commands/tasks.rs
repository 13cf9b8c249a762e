//! The open project's tasks: each a git worktree of the project on a
//! branch of its own, with its own conversations (`corral_host::tasks`).
//! A task's loop reaches its session by naming it in the project's
//! commands ([`crate::remote::route`]); these make, list, review and land
//! them. All git work runs off the window's thread.

use crate::state::AppState;
use corral_host::tasks::TaskInfo;
use corral_host::worktree::{self, Applied, Merged, Side, TaskDiff};
use corral_tools::{Error, ErrorCode};
use tauri::State;

/// A task as the window lists it: its worktree and the newest of its
/// conversations (to go on with after a restart).
#[derive(Debug, Clone, serde::Serialize, ts_rs::TS)]
pub struct TaskEntry {
    #[serde(flatten)]
    pub task: TaskInfo,
    /// Its newest conversation's id, if it has one.
    pub conversation: Option<String>,
}

/// The project's tasks and how many may run at once.
#[derive(Debug, Clone, serde::Serialize, ts_rs::TS)]
pub struct TaskList {
    pub tasks: Vec<TaskEntry>,
    /// The `tasks_at_once` setting, or half the cores (at least one).
    pub at_once: u32,
}

/// Runs `f` off the async runtime (git, the history).
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, Error> + Send + 'static,
) -> Result<T, Error> {
    tauri::async_runtime::spawn_blocking(f)
        .await
        .map_err(|e| Error::new(ErrorCode::Io, format!("the task's work stopped: {e}")))?
}

/// Makes a new task of the open project: a worktree on `corral/<slug of
/// name>` in the app's data folder.
#[tauri::command(rename_all = "snake_case")]
pub async fn task_new(state: State<'_, AppState>, name: String) -> Result<TaskInfo, Error> {
    let tasks = state.tasks()?;
    blocking(move || tasks.make(&name)).await
}

/// The open project's tasks, with the newest conversation of each.
#[tauri::command(rename_all = "snake_case")]
pub async fn task_list(state: State<'_, AppState>) -> Result<TaskList, Error> {
    let tasks = state.tasks()?;
    let history = state.history.clone();
    let at_once = state.store.settings().tasks_at_once();
    blocking(move || {
        let listed = tasks.list()?;
        let tasks = listed
            .into_iter()
            .map(|task| {
                let key = tasks.folder(&task.name).display().to_string();
                let conversation = history
                    .list(&key)
                    .ok()
                    .and_then(|all| all.into_iter().next())
                    .map(|c| c.id);
                TaskEntry { task, conversation }
            })
            .collect();
        Ok(TaskList { tasks, at_once })
    })
    .await
}

/// The task's whole change against the commit it started from.
#[tauri::command(rename_all = "snake_case")]
pub async fn task_diff(state: State<'_, AppState>, task: String) -> Result<TaskDiff, Error> {
    let tasks = state.tasks()?;
    blocking(move || worktree::diff(tasks.project(), &task)).await
}

/// Merges the task into the project's current branch (a merge commit);
/// `prefer`: whose lines win where both changed the same ones.
#[tauri::command(rename_all = "snake_case")]
pub async fn task_merge(
    state: State<'_, AppState>,
    task: String,
    prefer: Option<Side>,
) -> Result<Merged, Error> {
    let tasks = state.tasks()?;
    blocking(move || worktree::merge(tasks.project(), &task, prefer)).await
}

/// Puts the task's changes in the project as uncommitted changes.
#[tauri::command(rename_all = "snake_case")]
pub async fn task_apply(state: State<'_, AppState>, task: String) -> Result<Applied, Error> {
    let tasks = state.tasks()?;
    blocking(move || worktree::apply(tasks.project(), &task)).await
}

/// Pushes the task's branch to `remote` (`origin` by default).
#[tauri::command(rename_all = "snake_case")]
pub async fn task_push(
    state: State<'_, AppState>,
    task: String,
    remote: Option<String>,
) -> Result<String, Error> {
    let tasks = state.tasks()?;
    blocking(move || worktree::push(tasks.project(), &task, remote.as_deref())).await
}

/// Removes the task's worktree and branch (its commands stopped first);
/// one not merged or holding changes only with `force`.
#[tauri::command(rename_all = "snake_case")]
pub async fn task_discard(
    state: State<'_, AppState>,
    task: String,
    force: bool,
) -> Result<(), Error> {
    let tasks = state.tasks()?;
    blocking(move || {
        tasks.close(&task);
        worktree::discard(tasks.project(), &task, force).map(drop)
    })
    .await
}
