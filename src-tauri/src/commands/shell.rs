//! The shell's settings: programs the user added (for every project and
//! for the open one) and the open project's saved rules, kept in the app's
//! config folder, never in the project; and the open project's background
//! commands.

use crate::state::AppState;
use crate::store::shell::ShellConfig;
use corral_tools::shell::SavedRule;
use corral_tools::Error;
use tauri::State;

/// The key the open project's settings are kept under: its folder, or a
/// remote project's `ssh://` name.
fn open_root(state: &AppState) -> Option<std::path::PathBuf> {
    state.settings_key()
}

/// A remote project's session has only the settings sent to it: they are
/// sent again once changed here.
async fn send_settings(state: &AppState) -> Result<(), Error> {
    if let Some(remote) = state.remote() {
        remote.use_settings(&state.store).await?;
    }
    Ok(())
}

/// The built-in programs, the added ones and the open project's rules.
#[tauri::command(rename_all = "snake_case")]
pub async fn shell_config(state: State<'_, AppState>) -> Result<ShellConfig, Error> {
    Ok(state.store.shell_config(open_root(&state).as_deref()))
}

/// Saves the programs added for every project and, with a project open,
/// for it (`project` is ignored without one).
#[tauri::command(rename_all = "snake_case")]
pub async fn save_programs(
    state: State<'_, AppState>,
    global: Vec<String>,
    project: Option<Vec<String>>,
) -> Result<ShellConfig, Error> {
    let root = open_root(&state);
    let project = match (&root, project) {
        (Some(root), Some(programs)) => Some((root.as_path(), programs)),
        _ => None,
    };
    state.store.save_programs(global, project)?;
    send_settings(&state).await?;
    Ok(state.store.shell_config(root.as_deref()))
}

/// Removes one of the open project's saved rules.
#[tauri::command(rename_all = "snake_case")]
pub async fn remove_rule(
    state: State<'_, AppState>,
    rule: SavedRule,
) -> Result<ShellConfig, Error> {
    let root = open_root(&state).ok_or_else(corral_session::no_project)?;
    state.store.remove_rule(&root, &rule)?;
    send_settings(&state).await?;
    Ok(state.store.shell_config(Some(&root)))
}
