//! Checkpoints of the open project: list them, show what a restore would
//! change (or what a turn changed), restore the project or one path, undo
//! one call alone. The model has no tool for any of this; only the window
//! restores.

use crate::state::AppState;
use corral_tools::checkpoint::{CallUndo, Checkpoint, Comparison, Restored};
use corral_tools::{Error, ErrorCode};
use tauri::State;

/// Runs `f` with the open project's root and store, off the async runtime.
async fn with_store<T: Send + 'static>(
    state: &AppState,
    f: impl FnOnce(&corral_tools::ProjectRoot, &corral_tools::checkpoint::Store) -> Result<T, Error>
        + Send
        + 'static,
) -> Result<T, Error> {
    let session = state.session()?;
    let root = session.root().clone();
    let store = session
        .checkpoint_store()
        .ok_or_else(|| Error::new(ErrorCode::Io, "this project keeps no checkpoints"))??;
    tauri::async_runtime::spawn_blocking(move || f(&root, &store))
        .await
        .map_err(|e| Error::new(ErrorCode::Io, format!("the checkpoint store stopped: {e}")))?
}

/// Every checkpoint of the open project, oldest first.
#[tauri::command(rename_all = "snake_case")]
pub async fn list_checkpoints(state: State<'_, AppState>) -> Result<Vec<Checkpoint>, Error> {
    with_store(&state, |root, store| store.list(root)).await
}

/// What restoring checkpoint `id` (or only `path`) would change: the
/// project as it is (`before`) against the checkpoint (`after`).
#[tauri::command(rename_all = "snake_case")]
pub async fn checkpoint_diff(
    state: State<'_, AppState>,
    id: String,
    path: Option<String>,
) -> Result<Comparison, Error> {
    with_store(&state, move |root, store| {
        store.diff(root, &id, path.as_deref())
    })
    .await
}

/// What changed from checkpoint `from` to checkpoint `to`, or to the
/// project as it is when `to` is absent (what a turn did).
#[tauri::command(rename_all = "snake_case")]
pub async fn compare_checkpoints(
    state: State<'_, AppState>,
    from: String,
    to: Option<String>,
) -> Result<Comparison, Error> {
    with_store(&state, move |root, store| {
        store.compare(root, &from, to.as_deref())
    })
    .await
}

/// Puts the project (or only `path`) back the way checkpoint `id` has it.
/// A checkpoint is taken first; restoring it (`undo`) undoes this.
#[tauri::command(rename_all = "snake_case")]
pub async fn restore_checkpoint(
    state: State<'_, AppState>,
    id: String,
    path: Option<String>,
) -> Result<Restored, Error> {
    with_store(&state, move |root, store| {
        store.restore(root, &id, path.as_deref())
    })
    .await
}

/// What undoing the one call checkpoint `id` was taken before would do:
/// the paths it changed, which of them changed again later, and the diff.
#[tauri::command(rename_all = "snake_case")]
pub async fn call_undo_diff(state: State<'_, AppState>, id: String) -> Result<CallUndo, Error> {
    with_store(&state, move |root, store| store.call_undo_diff(root, &id)).await
}

/// Puts back what the one call checkpoint `id` was taken before changed,
/// and nothing else. A checkpoint is taken first; restoring it undoes this.
#[tauri::command(rename_all = "snake_case")]
pub async fn undo_call(state: State<'_, AppState>, id: String) -> Result<Restored, Error> {
    with_store(&state, move |root, store| store.undo_call(root, &id)).await
}

/// What the open project's checkpoint store had to set aside (a restore's
/// journal that could not be finished: what was left undone, where the
/// journal went, which checkpoints finish or undo it), once; `None` when
/// nothing was. Looking at the store first finishes an interrupted restore
/// or sets its journal aside, so the window hears of it when it opens.
#[tauri::command(rename_all = "snake_case")]
pub async fn checkpoint_notice(state: State<'_, AppState>) -> Result<Option<String>, Error> {
    with_store(&state, |root, store| {
        store.list(root)?;
        let warnings = store.take_warnings();
        Ok((!warnings.is_empty()).then(|| warnings.join("\n")))
    })
    .await
}
