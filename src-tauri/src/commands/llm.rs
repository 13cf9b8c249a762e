//! The LLM bridge: the webview talks to no outside host; requests are made
//! here, streamed back through a Channel, cancellable by run id.

use crate::state::{AppState, Run};
use crate::store::{SettingsInput, SettingsView, Store};
use corral_llm::{ChatRequest, ListedModel, LocalServer, ModelInfo, ProviderConfig, StreamEvent};
use corral_tools::{Error, ErrorCode};
use serde::Serialize;
use tauri::ipc::Channel;
use tauri::State;
use tokio_util::sync::CancellationToken;

/// Where the model switcher points one conversation (kept in corral-config).
pub use crate::store::LlmTarget;

/// Runs `f` on the store off the async runtime: reading or writing a key
/// may be a D-Bus round trip to the keychain.
async fn with_store<T: Send + 'static>(
    state: &AppState,
    f: impl FnOnce(&Store) -> Result<T, Error> + Send + 'static,
) -> Result<T, Error> {
    let store = state.store.clone();
    tauri::async_runtime::spawn_blocking(move || f(&store))
        .await
        .map_err(|e| Error::new(ErrorCode::Io, format!("the settings store stopped: {e}")))?
}

/// The config for `settings` as the window shows them (not saved), or for
/// the saved settings ([`Store::provider_config_for`]).
async fn config_for(
    state: &AppState,
    settings: Option<SettingsInput>,
) -> Result<ProviderConfig, Error> {
    with_store(state, move |store| store.provider_config_for(settings)).await
}

/// Streams one model turn, to `target` when given, else as the settings
/// say (an OpenAI-compatible base URL that Ollama serves is spoken to in
/// Ollama's own API, the one that takes the context size). Resolves when
/// the terminal event was sent.
#[tauri::command(rename_all = "snake_case")]
pub async fn llm_stream(
    state: State<'_, AppState>,
    run_id: String,
    request: ChatRequest,
    target: Option<LlmTarget>,
    on_event: Channel<StreamEvent>,
) -> Result<(), Error> {
    stream_with(&state, &run_id, request, target, move |event| {
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
    stream_with(state, run_id, request, None, on_event).await
}

/// `llm_stream` to `target` (or the settings') with any sink.
pub async fn stream_with(
    state: &AppState,
    run_id: &str,
    request: ChatRequest,
    target: Option<LlmTarget>,
    on_event: impl FnMut(StreamEvent) + Send,
) -> Result<(), Error> {
    let config = with_store(state, move |store| Ok(store.provider_config(target))).await?;
    let config = corral_llm::with_native_api(&config).await;
    let cancel = CancellationToken::new();
    state.start_run(run_id, Run::Llm(cancel.clone()))?;
    corral_llm::stream(&config, &request, cancel, on_event).await;
    state.end_run(run_id);
    Ok(())
}

#[tauri::command(rename_all = "snake_case")]
pub async fn get_settings(state: State<'_, AppState>) -> Result<SettingsView, Error> {
    with_store(&state, |store| Ok(store.settings_view())).await
}

/// Saves the settings; a key given with them is saved for the origin of
/// their base URL ([`Store::save_settings_input`]).
#[tauri::command(rename_all = "snake_case")]
pub async fn save_settings<R: tauri::Runtime>(
    app: tauri::AppHandle<R>,
    state: State<'_, AppState>,
    settings: SettingsInput,
) -> Result<SettingsView, Error> {
    let saved = with_store(&state, move |store| store.save_settings_input(settings)).await?;
    // A remote project's session there follows the mode saved.
    if state.remote().is_some() {
        let reopening = app.clone();
        tauri::async_runtime::spawn_blocking(move || {
            tauri::Manager::state::<AppState>(&reopening).follow_mode()
        })
        .await
        .map_err(|e| Error::new(ErrorCode::Io, format!("the remote project stopped: {e}")))??;
    }
    Ok(saved)
}

#[derive(Debug, Serialize, ts_rs::TS)]
pub struct ConnectionOk {
    #[ts(type = "true")]
    pub ok: bool,
    pub model: String,
}

/// Tests `settings` as the window shows them, without saving anything (a
/// failed test must not leave a broken URL saved); without them, the saved
/// settings.
#[tauri::command(rename_all = "snake_case")]
pub async fn test_connection(
    state: State<'_, AppState>,
    settings: Option<SettingsInput>,
) -> Result<ConnectionOk, Error> {
    let config = config_for(&state, settings).await?;
    let config = corral_llm::with_native_api(&config).await;
    let model = corral_llm::test_connection(&config).await?;
    Ok(ConnectionOk { ok: true, model })
}

/// What the server says of the model (its context window, whether its
/// template calls tools), for `settings` or the saved ones. Never fails on
/// the server's account: what it does not say stays unknown.
#[tauri::command(rename_all = "snake_case")]
pub async fn model_info(
    state: State<'_, AppState>,
    settings: Option<SettingsInput>,
) -> Result<ModelInfo, Error> {
    let config = config_for(&state, settings).await?;
    let config = corral_llm::with_native_api(&config).await;
    Ok(corral_llm::model_info(&config).await)
}

/// The tokens `request` makes as the server's own template and tokenizer
/// count them (llama.cpp's `llama-server`), sent to `target` when given,
/// else as the settings say; `None` when the server cannot count.
#[tauri::command(rename_all = "snake_case")]
pub async fn count_prompt_tokens(
    state: State<'_, AppState>,
    request: ChatRequest,
    target: Option<LlmTarget>,
) -> Result<Option<u64>, Error> {
    let config = with_store(&state, move |store| Ok(store.provider_config(target))).await?;
    Ok(corral_llm::prompt_tokens(&config, &request).await)
}

/// The models the server of `settings` (or the saved settings) lists, asked
/// with the key saved for its origin. A server without a list is
/// `not_found`: the switcher then lets the user type a name.
#[tauri::command(rename_all = "snake_case")]
pub async fn list_models(
    state: State<'_, AppState>,
    settings: Option<SettingsInput>,
) -> Result<Vec<ListedModel>, Error> {
    let config = config_for(&state, settings).await?;
    corral_llm::list_models(&config).await
}

#[tauri::command(rename_all = "snake_case")]
pub async fn detect_local_servers() -> Vec<LocalServer> {
    corral_llm::detect_local_servers().await
}
