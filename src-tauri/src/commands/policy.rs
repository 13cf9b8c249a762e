//! Tool specs, policy decisions and the user's approvals.

use crate::state::AppState;
use tauri::State;

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

/// Which of `paths` have secret-like names (the policy's own rule, so the
/// window never keeps a copy of it): the file picker marks them.
#[tauri::command(rename_all = "snake_case")]
pub fn secret_like(paths: Vec<String>) -> Vec<String> {
    paths
        .into_iter()
        .filter(|path| corral_tools::policy::is_secret_like(path))
        .collect()
}
