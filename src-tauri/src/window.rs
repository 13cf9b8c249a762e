//! The main window's own state outside the webview: its title.

use crate::store::ProjectInfo;
use tauri::{AppHandle, Manager, Runtime};

/// The window title names the project.
pub fn set_title<R: Runtime>(app: &AppHandle<R>, project: Option<&ProjectInfo>) {
    if let Some(window) = app.get_webview_window("main") {
        let title = match project {
            Some(p) => format!("{} — Corral", p.name),
            None => "Corral".to_string(),
        };
        let _ = window.set_title(&title);
    }
}
