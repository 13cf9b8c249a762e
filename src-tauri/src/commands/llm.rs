//! The LLM bridge: the webview talks to no outside host; requests are made
//! here, streamed back through a Channel, cancellable by run id.

use crate::state::{AppState, Run};
use crate::store::{SettingsInput, SettingsView};
use corral_llm::{ChatRequest, LocalServer, ProviderConfig, StreamEvent};
use corral_tools::Error;
use serde::Serialize;
use tauri::ipc::Channel;
use tauri::State;
use tokio_util::sync::CancellationToken;

fn config(state: &AppState) -> ProviderConfig {
    let settings = state.store.settings();
    let mut config = ProviderConfig::new(settings.provider, settings.model);
    if !settings.base_url.trim().is_empty() {
        config.base_url = settings.base_url;
    }
    config.max_tokens = settings.max_tokens;
    config.api_key = state.store.api_key(settings.provider);
    config
}

/// Streams one model turn. Resolves when the terminal event was sent.
#[tauri::command(rename_all = "snake_case")]
pub async fn llm_stream(
    state: State<'_, AppState>,
    run_id: String,
    request: ChatRequest,
    on_event: Channel<StreamEvent>,
) -> Result<(), Error> {
    stream_to(&state, &run_id, request, move |event| {
        let _ = on_event.send(event);
    })
    .await
}

/// `llm_stream` with any sink, for tests.
pub async fn stream_to(
    state: &AppState,
    run_id: &str,
    request: ChatRequest,
    on_event: impl FnMut(StreamEvent) + Send,
) -> Result<(), Error> {
    let cancel = CancellationToken::new();
    state.start_run(run_id, Run::Llm(cancel.clone()))?;
    corral_llm::stream(&config(state), &request, cancel, on_event).await;
    state.end_run(run_id);
    Ok(())
}

#[tauri::command(rename_all = "snake_case")]
pub fn get_settings(state: State<'_, AppState>) -> SettingsView {
    view(&state)
}

#[tauri::command(rename_all = "snake_case")]
pub fn save_settings(
    state: State<'_, AppState>,
    settings: SettingsInput,
) -> Result<SettingsView, Error> {
    if settings.settings.max_tokens == 0 {
        return Err(Error::invalid_input("max_tokens must be at least 1"));
    }
    state.store.save_settings(&settings.settings)?;
    if let Some(key) = &settings.api_key {
        state
            .store
            .set_api_key(settings.settings.provider, key.trim())?;
    }
    Ok(view(&state))
}

fn view(state: &AppState) -> SettingsView {
    let settings = state.store.settings();
    let has_api_key = state.store.api_key(settings.provider).is_some();
    SettingsView {
        settings,
        has_api_key,
    }
}

#[derive(Debug, Serialize)]
pub struct ConnectionOk {
    pub ok: bool,
    pub model: String,
}

#[tauri::command(rename_all = "snake_case")]
pub async fn test_connection(state: State<'_, AppState>) -> Result<ConnectionOk, Error> {
    let model = corral_llm::test_connection(&config(&state)).await?;
    Ok(ConnectionOk { ok: true, model })
}

#[tauri::command(rename_all = "snake_case")]
pub async fn detect_local_servers() -> Vec<LocalServer> {
    corral_llm::detect_local_servers().await
}
