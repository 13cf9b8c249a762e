//! Tool specs, policy decisions and the user's approvals.

use crate::state::AppState;
use crate::state::{Call, Ticket};
use corral_session::grants::GrantEntry;
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

/// Checks a call and keeps its ticket for `run_call`. `conversation`: the
/// window's key of the conversation the call is made in; its grants may
/// cover the call.
#[tauri::command(rename_all = "snake_case")]
pub fn check_call(
    state: State<'_, AppState>,
    tool: String,
    input: Value,
    conversation: Option<String>,
) -> Result<Ticket, Error> {
    state.check(Call {
        tool,
        input,
        conversation,
    })
}

/// What the user allowed in the conversation, oldest first.
#[tauri::command(rename_all = "snake_case")]
pub fn conversation_grants(
    state: State<'_, AppState>,
    conversation: String,
) -> Result<Vec<GrantEntry>, Error> {
    state.grants(&conversation)
}

/// Revokes one of them; resolves to those left.
#[tauri::command(rename_all = "snake_case")]
pub fn revoke_grant(
    state: State<'_, AppState>,
    conversation: String,
    id: String,
) -> Result<Vec<GrantEntry>, Error> {
    state.revoke_grant(&conversation, &id)
}

/// The window left the conversation: its grants end.
#[tauri::command(rename_all = "snake_case")]
pub fn end_conversation(state: State<'_, AppState>, conversation: String) {
    state.end_conversation(&conversation);
}

/// The window's channel for questions about domains (one at a time: a
/// reloaded window's replaces the one before).
#[tauri::command(rename_all = "snake_case")]
pub fn domain_questions<R: tauri::Runtime>(
    webview: tauri::Webview<R>,
    state: State<'_, AppState>,
    on_question: tauri::ipc::JavaScriptChannelId,
) {
    let channel = on_question.channel_on::<R, corral_session::domains::DomainQuestion>(webview);
    state.domains.listen(std::sync::Arc::new(move |question| {
        // A closed window cannot answer; the wait refuses.
        let _ = channel.send(question);
    }));
}

/// The user's answer to a question about a domain; `false` if it was no
/// longer waiting (answered, timed out, or its command stopped).
#[tauri::command(rename_all = "snake_case")]
pub fn answer_domain(state: State<'_, AppState>, id: String, allow: bool) -> bool {
    state.domains.respond(&id, allow)
}

#[tauri::command(rename_all = "snake_case")]
pub fn cancel(state: State<'_, AppState>, run_id: String) {
    state.cancel(&run_id);
}

/// Which of `paths` have secret-like names (the policy's own rule, so the
/// window never keeps a copy of it): the file picker marks them.
#[tauri::command(rename_all = "snake_case")]
pub fn secret_like(paths: Vec<String>) -> Vec<String> {
    paths
        .into_iter()
        .filter(|path| corral_tools::policy::is_secret_like(path))
        .collect()
}
