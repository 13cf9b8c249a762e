//! The user's MCP servers: their settings (values of their variables kept
//! as secrets, never shown), where each stands, and Restart.

use crate::state::AppState;
use crate::store::mcp::{McpSettings, McpSettingsView};
use corral_tools::Error;
use tauri::State;

/// The servers and which of their variables have values (async: asking
/// the keychain is a D-Bus call, never made on the window's thread).
#[tauri::command(rename_all = "snake_case")]
pub async fn mcp_settings(state: State<'_, AppState>) -> Result<McpSettingsView, Error> {
    Ok(state.store.mcp_settings())
}

/// Saves the servers (and the values given); with a project open, its
/// servers (here or on the remote) are replaced by the saved ones. Returns once they are listed.
#[tauri::command(rename_all = "snake_case")]
pub async fn save_mcp_settings(
    state: State<'_, AppState>,
    settings: McpSettings,
) -> Result<serde_json::Value, Error> {
    state.store.save_mcp_settings(settings)?;
    // A remote project's servers run there: they are sent to its session.
    if let Some(remote) = state.remote() {
        return remote.use_servers(state.mcp_servers()).await;
    }
    state.reload_mcp().await;
    serde_json::to_value(state.mcp_status())
        .map_err(|e| Error::new(corral_tools::ErrorCode::Io, e.to_string()))
}
