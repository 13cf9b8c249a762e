//! The custom commands and skills of the open project and of the user, as
//! corral-session lists them, and a skill's files as the model loads them.

use crate::state::AppState;
use corral_session::customization::{self, Customization, SetupSource, SkillFile};
use corral_tools::Error;
use tauri::State;

/// The project's and the user's commands and skills (async: folders are
/// walked off the window's thread).
#[tauri::command(rename_all = "snake_case")]
pub async fn customization(state: State<'_, AppState>) -> Result<Customization, Error> {
    let session = state.session()?;
    let home = customization::user_home();
    Ok(customization::list(session.root(), home.as_deref()))
}

/// A file of a skill's folder (its `SKILL.md` without `file`).
#[tauri::command(rename_all = "snake_case")]
pub async fn skill_file(
    state: State<'_, AppState>,
    source: SetupSource,
    folder: String,
    file: Option<String>,
) -> Result<SkillFile, Error> {
    let session = state.session()?;
    let home = customization::user_home();
    customization::skill_file(
        session.root(),
        home.as_deref(),
        source,
        &folder,
        file.as_deref(),
    )
}
