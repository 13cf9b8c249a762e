//! The LLM bridge: the webview talks to no outside host; requests are made
//! here, streamed back through a Channel, cancellable by run id.

use crate::state::AppState;
use crate::store::{SettingsInput, SettingsView, Store};
use corral_llm::{ListedModel, LocalServer, ProviderConfig};
use corral_tools::{Error, ErrorCode};
use serde::Serialize;
use tauri::State;

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
