//! Tool specs, policy decisions and the user's approvals.

use crate::approvals::Scope;
use crate::state::AppState;
use corral_tools::dispatch::PolicyCheck;
use corral_tools::spec::ToolSpec;
use corral_tools::Error;
use serde_json::Value;
use tauri::State;

/// The tools the model is offered; `exec_shell` names the programs the
/// user added (for every project and the open one).
#[tauri::command(rename_all = "snake_case")]
pub fn tool_specs(state: State<'_, AppState>) -> Vec<ToolSpec> {
    state.tool_specs()
}

#[tauri::command(rename_all = "snake_case")]
pub fn check_policy(
    state: State<'_, AppState>,
    tool: String,
    input: Value,
) -> Result<PolicyCheck, Error> {
    state.check_policy(&tool, &input)
}

/// Called by the UI after the user approved; returns the token for the
/// call. `network`: the user approved this command with the network.
#[tauri::command(rename_all = "snake_case")]
pub fn approve_call(
    state: State<'_, AppState>,
    tool: String,
    input: Value,
    scope: Scope,
    network: Option<bool>,
) -> Result<String, Error> {
    state.approve(&tool, &input, scope, network.unwrap_or(false))
}

#[tauri::command(rename_all = "snake_case")]
pub fn cancel(state: State<'_, AppState>, run_id: String) {
    state.cancel(&run_id);
}
