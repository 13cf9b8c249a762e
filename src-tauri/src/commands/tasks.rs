//! The open project's tasks: each a git worktree of the project on a
//! branch of its own, with its own conversations (`corral_host::tasks`).
//! A task's loop reaches its session by naming it in the project's
//! commands ([`crate::remote::route`]); these make, list, review and land
//! them, here or (for a remote project) by serve there, with the same
//! code (`corral_host::tasks::Tasks::answer`). All git work runs off the
//! window's thread.

use crate::state::AppState;
use corral_host::tasks::TaskInfo;
use corral_host::worktree::{Applied, Merged, Side, TaskDiff};
use corral_tools::{Error, ErrorCode};
use serde_json::{json, Value};
use tauri::{Manager, State};

/// A task as the window lists it: its worktree and the newest of its
/// conversations (to go on with after a restart).
#[derive(Debug, Clone, serde::Serialize, ts_rs::TS)]
pub struct TaskEntry {
    #[serde(flatten)]
    pub task: TaskInfo,
    /// Its newest conversation's id, if it has one.
    pub conversation: Option<String>,
    /// Where its session runs when not here: its engine and container.
    pub place: Option<String>,
}

/// Where a new task's session runs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Deserialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum TaskPlace {
    /// Here, as the project's.
    #[default]
    Here,
    /// In a container of the engine and image Settings name.
    Container,
}

/// The project's tasks and how many may run at once.
#[derive(Debug, Clone, serde::Serialize, ts_rs::TS)]
pub struct TaskList {
    pub tasks: Vec<TaskEntry>,
    /// The `tasks_at_once` setting, or half the cores (at least one).
    pub at_once: u32,
}

/// Answers one of the tasks' own commands: for a project here by its
/// tasks (off the async runtime: git), for a remote project by serve
/// there, with the same code (`Tasks::answer`).
async fn answer(state: &AppState, command: &'static str, args: Value) -> Result<Value, Error> {
    if let Some(remote) = state.remote() {
        return remote.invoke(command, args, None).await;
    }
    let tasks = state.tasks()?;
    tauri::async_runtime::spawn_blocking(move || {
        tasks.answer(command, args).unwrap_or_else(|| {
            Err(Error::invalid_input(format!(
                "`{command}` is not a task command"
            )))
        })
    })
    .await
    .map_err(|e| Error::new(ErrorCode::Io, format!("the task's work stopped: {e}")))?
}

fn typed<T: serde::de::DeserializeOwned>(value: Value) -> Result<T, Error> {
    serde_json::from_value(value)
        .map_err(|e| Error::new(ErrorCode::Io, format!("a task's answer does not fit: {e}")))
}

/// Makes a new task of the open project: a worktree on `corral/<slug of
/// name>` in the data folder of the machine the project is on; with
/// `place: "container"` its session runs in a container (a project here).
#[tauri::command(rename_all = "snake_case")]
pub async fn task_new<R: tauri::Runtime>(
    app: tauri::AppHandle<R>,
    state: State<'_, AppState>,
    name: String,
    place: Option<TaskPlace>,
) -> Result<TaskInfo, Error> {
    let place = place.unwrap_or_default();
    if place == TaskPlace::Container && state.remote().is_some() {
        return Err(Error::invalid_input(
            "a remote project's tasks run there, not in a container here",
        ));
    }
    let made: TaskInfo = typed(answer(&state, "task_new", json!({ "name": name })).await?)?;
    if place == TaskPlace::Container {
        let name = made.name.clone();
        let started = tauri::async_runtime::spawn_blocking(move || {
            app.state::<AppState>().open_in_container(&name)
        })
        .await
        .map_err(|e| {
            Error::new(
                ErrorCode::Io,
                format!("starting the container stopped: {e}"),
            )
        })?;
        if let Err(e) = started {
            // Nothing of it runs: its worktree goes too.
            let args = json!({ "task": made.name, "force": true });
            let _ = answer(&state, "task_discard", args).await;
            return Err(e);
        }
    }
    Ok(made)
}

/// The open project's tasks, with the newest conversation of each (kept
/// here, whatever machine the project is on). One made in a container
/// whose container is gone (the app started again) gets a new one.
#[tauri::command(rename_all = "snake_case")]
pub async fn task_list<R: tauri::Runtime>(
    app: tauri::AppHandle<R>,
    state: State<'_, AppState>,
) -> Result<TaskList, Error> {
    let listed: Vec<TaskInfo> = typed(answer(&state, "task_list", json!({})).await?)?;
    // A task made in a container before the app started again goes on in
    // a new one (its worktree kept all it wrote).
    for task in &listed {
        if state.container_to_resume(&task.name) {
            let (app, name) = (app.clone(), task.name.clone());
            let resumed = tauri::async_runtime::spawn_blocking(move || {
                app.state::<AppState>().open_in_container(&name)
            })
            .await;
            if let Ok(Err(e)) = resumed {
                eprintln!(
                    "corral: task {}'s container did not start again: {}",
                    task.name, e.message
                );
            }
        }
    }
    let at_once = state.store.settings().tasks_at_once();
    let keys: Vec<String> = listed.iter().map(|t| state.task_key(&t.name)).collect();
    let places: Vec<Option<String>> = listed.iter().map(|t| state.task_place(&t.name)).collect();
    let history = state.history.clone();
    let tasks = tauri::async_runtime::spawn_blocking(move || {
        listed
            .into_iter()
            .zip(keys)
            .zip(places)
            .map(|((task, key), place)| {
                let conversation = history
                    .list(&key)
                    .ok()
                    .and_then(|all| all.into_iter().next())
                    .map(|c| c.id);
                TaskEntry {
                    task,
                    conversation,
                    place,
                }
            })
            .collect()
    })
    .await
    .map_err(|e| Error::new(ErrorCode::Io, format!("listing the tasks stopped: {e}")))?;
    Ok(TaskList { tasks, at_once })
}

/// A task in a pod: its branch brought back here first (a review, a
/// merge or a push reads it here; between the minutely times it lags).
async fn brought_back<R: tauri::Runtime>(
    app: &tauri::AppHandle<R>,
    task: &str,
) -> Result<(), Error> {
    let (app, task) = (app.clone(), task.to_string());
    tauri::async_runtime::spawn_blocking(move || app.state::<AppState>().bring_back(&task))
        .await
        .map_err(|e| {
            Error::new(
                ErrorCode::Io,
                format!("bringing the task's branch back stopped: {e}"),
            )
        })?
}

/// The task's whole change against the commit it started from.
#[tauri::command(rename_all = "snake_case")]
pub async fn task_diff<R: tauri::Runtime>(
    app: tauri::AppHandle<R>,
    state: State<'_, AppState>,
    task: String,
) -> Result<TaskDiff, Error> {
    brought_back(&app, &task).await?;
    typed(answer(&state, "task_diff", json!({ "task": task })).await?)
}

/// Merges the task into the project's current branch (a merge commit);
/// `prefer`: whose lines win where both changed the same ones;
/// `auto_run`: the files that run by themselves the user named to land.
#[tauri::command(rename_all = "snake_case")]
pub async fn task_merge<R: tauri::Runtime>(
    app: tauri::AppHandle<R>,
    state: State<'_, AppState>,
    task: String,
    prefer: Option<Side>,
    auto_run: Option<Vec<String>>,
) -> Result<Merged, Error> {
    brought_back(&app, &task).await?;
    let args = json!({ "task": task, "prefer": prefer, "auto_run": auto_run.unwrap_or_default() });
    let merged: Merged = typed(answer(&state, "task_merge", args).await?)?;
    if merged.removed {
        state.end_container(&task);
    }
    Ok(merged)
}

/// Puts the task's changes in the project as uncommitted changes;
/// `auto_run` as for a merge.
#[tauri::command(rename_all = "snake_case")]
pub async fn task_apply<R: tauri::Runtime>(
    app: tauri::AppHandle<R>,
    state: State<'_, AppState>,
    task: String,
    auto_run: Option<Vec<String>>,
) -> Result<Applied, Error> {
    brought_back(&app, &task).await?;
    let args = json!({ "task": task, "auto_run": auto_run.unwrap_or_default() });
    typed(answer(&state, "task_apply", args).await?)
}

/// Stops the task: its container killed (the next message starts a new
/// one on the same worktree), or its commands here ended. For a remote
/// project, its commands there end as the conversation's Stop ends them.
#[tauri::command(rename_all = "snake_case")]
pub async fn task_stop<R: tauri::Runtime>(
    app: tauri::AppHandle<R>,
    state: State<'_, AppState>,
    task: String,
) -> Result<(), Error> {
    if state.remote().is_some() {
        return Ok(());
    }
    tauri::async_runtime::spawn_blocking(move || app.state::<AppState>().stop_task(&task))
        .await
        .map_err(|e| Error::new(ErrorCode::Io, format!("stopping the task stopped: {e}")))?
}

/// Pushes the task's branch to `remote` (`origin` by default).
#[tauri::command(rename_all = "snake_case")]
pub async fn task_push<R: tauri::Runtime>(
    app: tauri::AppHandle<R>,
    state: State<'_, AppState>,
    task: String,
    remote: Option<String>,
) -> Result<String, Error> {
    brought_back(&app, &task).await?;
    typed(
        answer(
            &state,
            "task_push",
            json!({ "task": task, "remote": remote }),
        )
        .await?,
    )
}

/// Removes the task's worktree and branch (its commands stopped first);
/// one not merged or holding changes only with `force`.
#[tauri::command(rename_all = "snake_case")]
pub async fn task_discard(
    state: State<'_, AppState>,
    task: String,
    force: bool,
) -> Result<(), Error> {
    // Its container ends first: nothing runs in the worktree as it goes.
    state.end_container(&task);
    let args = json!({ "task": task, "force": force });
    answer(&state, "task_discard", args).await.map(drop)
}
