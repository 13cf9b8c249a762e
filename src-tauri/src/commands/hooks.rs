//! The project's hooks (docs/hooks.md): which events have hooks and which
//! settings files wait for the user's trust (`hook_status`), an event's
//! hooks run (`run_hooks`), a file's exact text trusted (`trust_hooks`).
//! The session decides; these only adapt.

use crate::state::AppState;
use corral_tools::Error;
use tauri::State;

/// Trusts the hooks of a project settings file with exactly `text` (a
/// remote project's: kept here under its `ssh://` name, and sent there).
#[tauri::command(rename_all = "snake_case")]
pub async fn trust_hooks(
    state: State<'_, AppState>,
    file: String,
    text: String,
) -> Result<serde_json::Value, Error> {
    if let Some(remote) = state.remote() {
        return remote.trust_hooks(&state.store, &file, &text).await;
    }
    let status = state.session()?.trust_hooks(&file, &text)?;
    serde_json::to_value(status).map_err(|e| Error::new(corral_tools::ErrorCode::Io, e.to_string()))
}
