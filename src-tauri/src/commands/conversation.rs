//! The open project's conversations, kept by Rust in the history database
//! (`store::history`); the window only asks. Every command works on the
//! open project's conversations only and runs on the blocking pool.

use crate::commands::llm::LlmTarget;
use crate::state::AppState;
use crate::store::history::{ConversationSummary, DayUsage, History, SearchHit};
use corral_tools::{Error, ErrorCode};
use tauri::{AppHandle, Runtime, State};

/// How many search results at most.
const SEARCH_LIMIT: usize = 50;

/// Runs `f` with the history and the open project's key (its root as
/// shown; a remote project's `ssh://` name, as exec keys it), off the
/// async runtime, as the loop's history commands run.
async fn with_history<T: Send + 'static>(
    state: &AppState,
    f: impl FnOnce(&History, &str) -> Result<T, Error> + Send + 'static,
) -> Result<T, Error> {
    crate::remote::Routes::model(state, None)
        .with_history(f)
        .await
}

/// The open project's conversations, newest first. The project's
/// conversation saved as JSON by an earlier Corral is imported first, once.
#[tauri::command(rename_all = "snake_case")]
pub async fn list_conversations(
    state: State<'_, AppState>,
) -> Result<Vec<ConversationSummary>, Error> {
    // Only a folder here can hold an earlier Corral's JSON conversation.
    let legacy = state
        .project()
        .ok()
        .map(|root| state.store.legacy_conversation_file(root.path()));
    with_history(&state, move |history, project| {
        if let Some(legacy) = legacy {
            history.import_legacy(project, &legacy)?;
        }
        history.list(project)
    })
    .await
}

/// Keeps the model chosen for a conversation in the model switcher, or
/// forgets it (no `target`: the settings' model).
#[tauri::command(rename_all = "snake_case")]
pub async fn set_conversation_model(
    state: State<'_, AppState>,
    id: String,
    target: Option<LlmTarget>,
) -> Result<ConversationSummary, Error> {
    let target = target
        .map(serde_json::to_value)
        .transpose()
        .map_err(|e| Error::invalid_input(format!("the model cannot be stored: {e}")))?;
    with_history(&state, move |history, project| {
        history.set_target(project, &id, target.as_ref())
    })
    .await
}

#[tauri::command(rename_all = "snake_case")]
pub async fn rename_conversation(
    state: State<'_, AppState>,
    id: String,
    title: String,
) -> Result<ConversationSummary, Error> {
    with_history(&state, move |history, project| {
        history.rename(project, &id, &title)
    })
    .await
}

/// Deletes a conversation; `restore_conversation` undoes it for a minute.
#[tauri::command(rename_all = "snake_case")]
pub async fn delete_conversation(state: State<'_, AppState>, id: String) -> Result<(), Error> {
    with_history(&state, move |history, project| history.delete(project, &id)).await
}

#[tauri::command(rename_all = "snake_case")]
pub async fn restore_conversation(
    state: State<'_, AppState>,
    id: String,
) -> Result<ConversationSummary, Error> {
    with_history(&state, move |history, project| {
        history.restore(project, &id)
    })
    .await
}

/// A new conversation with the entries of `id` before `before_seq`.
#[tauri::command(rename_all = "snake_case")]
pub async fn fork_conversation(
    state: State<'_, AppState>,
    id: String,
    before_seq: i64,
) -> Result<ConversationSummary, Error> {
    with_history(&state, move |history, project| {
        history.fork(project, &id, before_seq)
    })
    .await
}

#[tauri::command(rename_all = "snake_case")]
pub async fn search_conversations(
    state: State<'_, AppState>,
    query: String,
) -> Result<Vec<SearchHit>, Error> {
    with_history(&state, move |history, project| {
        history.search(project, &query, SEARCH_LIMIT)
    })
    .await
}

/// The most days `usage_by_day` answers for.
const USAGE_DAYS: usize = 366;

/// What the model requests of every project's conversations used and cost,
/// day by day, newest first: the newest `days` days that had any (at most a
/// year), each day in the window's time zone (`utc_offset_minutes` east of
/// UTC).
#[tauri::command(rename_all = "snake_case")]
pub async fn usage_by_day(
    state: State<'_, AppState>,
    days: usize,
    utc_offset_minutes: i64,
) -> Result<Vec<DayUsage>, Error> {
    // A time zone is at most 14 hours from UTC.
    if utc_offset_minutes.abs() > 14 * 60 {
        return Err(Error::invalid_input(format!(
            "{utc_offset_minutes} minutes is no time zone's offset from UTC"
        )));
    }
    with_history(&state, move |history, _project| {
        history.usage_by_day(utc_offset_minutes, days.min(USAGE_DAYS))
    })
    .await
}

/// The conversation as Markdown.
#[tauri::command(rename_all = "snake_case")]
pub async fn conversation_markdown(
    state: State<'_, AppState>,
    id: String,
) -> Result<String, Error> {
    with_history(&state, move |history, project| {
        history.markdown(project, &id)
    })
    .await
}

/// Saves the conversation as a Markdown file the user picks in the native
/// save dialog; `None` if the dialog was dismissed, else the path written.
#[tauri::command(rename_all = "snake_case")]
// Writes the file the user picked in the save dialog, not a project's file.
#[allow(clippy::disallowed_methods)]
pub async fn export_conversation<R: Runtime>(
    app: AppHandle<R>,
    state: State<'_, AppState>,
    id: String,
) -> Result<Option<String>, Error> {
    use tauri_plugin_dialog::DialogExt;
    let (markdown, title) = {
        let id = id.clone();
        with_history(&state, move |history, project| {
            Ok((
                history.markdown(project, &id)?,
                history.summary(project, &id)?.title,
            ))
        })
        .await?
    };
    let (tx, rx) = tokio::sync::oneshot::channel();
    app.dialog()
        .file()
        .set_title("Export the conversation as Markdown")
        .set_file_name(crate::store::markdown::file_name(&title))
        .add_filter("Markdown", &["md"])
        .save_file(move |file| {
            let _ = tx.send(file);
        });
    let Some(file) = rx.await.ok().flatten() else {
        return Ok(None);
    };
    let path = file
        .into_path()
        .map_err(|e| Error::invalid_input(format!("the chosen file has no local path: {e}")))?;
    let shown = path.display().to_string();
    tauri::async_runtime::spawn_blocking(move || std::fs::write(&path, markdown))
        .await
        .map_err(|e| {
            Error::new(
                ErrorCode::Io,
                format!("the export stopped unexpectedly: {e}"),
            )
        })?
        .map_err(|e| Error::from_io(&e, &shown))?;
    Ok(Some(shown))
}

/// What became of a history that could not be used (moved aside), once.
#[tauri::command(rename_all = "snake_case")]
pub fn history_notice(state: State<'_, AppState>) -> Option<String> {
    state.history.take_notice()
}
