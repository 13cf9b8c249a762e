//! Updates of the app (see [`crate::updates`]): the switch, a check, an
//! install.

use crate::state::AppState;
use crate::store::updates::UpdateSettings;
use crate::updates::{InstalledUpdate, UpdateOffer, UpdateStatus, Updates};
use corral_tools::Error;
use tauri::{AppHandle, Runtime, State};

fn updates(state: &AppState) -> Result<Updates, Error> {
    Updates::for_this_app(state.store.update_settings())
}

/// The switch, the running version, how the app was installed.
#[tauri::command(rename_all = "snake_case")]
pub async fn update_status<R: Runtime>(
    app: AppHandle<R>,
    state: State<'_, AppState>,
) -> Result<UpdateStatus, Error> {
    Ok(updates(&state)?.status(&app))
}

/// Saves the switch and the manifest's URL.
#[tauri::command(rename_all = "snake_case")]
pub async fn save_update_settings<R: Runtime>(
    app: AppHandle<R>,
    state: State<'_, AppState>,
    settings: UpdateSettings,
) -> Result<UpdateStatus, Error> {
    state.store.save_update_settings(&settings)?;
    Ok(updates(&state)?.status(&app))
}

/// The newer version the manifest offers, if any.
#[tauri::command(rename_all = "snake_case")]
pub async fn check_update<R: Runtime>(
    app: AppHandle<R>,
    state: State<'_, AppState>,
) -> Result<Option<UpdateOffer>, Error> {
    updates(&state)?.check(&app).await
}

/// Downloads `version`, checks its signature and replaces the app's file.
#[tauri::command(rename_all = "snake_case")]
pub async fn install_update<R: Runtime>(
    app: AppHandle<R>,
    state: State<'_, AppState>,
    version: String,
) -> Result<InstalledUpdate, Error> {
    updates(&state)?.install(&app, &version).await
}
