//! One saved conversation per project, in the app's data folder.

use crate::state::AppState;
use corral_tools::Error;
use serde_json::Value;
use tauri::State;

#[tauri::command(rename_all = "snake_case")]
pub fn load_conversation(state: State<'_, AppState>) -> Result<Option<Value>, Error> {
    let root = state.project()?;
    Ok(state.store.conversation(root.path()))
}

#[tauri::command(rename_all = "snake_case")]
pub fn save_conversation(state: State<'_, AppState>, conversation: Value) -> Result<(), Error> {
    let root = state.project()?;
    state.store.save_conversation(root.path(), &conversation)
}
