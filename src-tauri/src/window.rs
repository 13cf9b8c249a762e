//! The main window's own state outside the webview: its title, and a size
//! that fits the screen it opens on.

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

/// Shrinks the main window to the screen it opens on when its configured
/// size (1280×820) is larger, with a margin: on a 1280×800 screen with no
/// window manager the composer's Send was cut off. A screen that holds it
/// keeps the configured size. (At setup the window is not realized yet:
/// its size is the configuration's, its screen the primary one.)
pub fn fit_to_screen<R: Runtime>(app: &AppHandle<R>) {
    let Some(window) = app.get_webview_window("main") else {
        return;
    };
    let Some(configured) = app.config().app.windows.first() else {
        return;
    };
    let monitor = window
        .current_monitor()
        .ok()
        .flatten()
        .or_else(|| window.primary_monitor().ok().flatten());
    let Some(monitor) = monitor else {
        return;
    };
    let screen = monitor.size().to_logical::<f64>(monitor.scale_factor());
    // Room for a panel or a title bar the window manager adds.
    let margin = (screen.height / 20.0).max(24.0);
    let fitted = tauri::LogicalSize::new(
        configured.width.min(screen.width),
        configured.height.min(screen.height - margin),
    );
    if fitted.width < configured.width || fitted.height < configured.height {
        let _ = window.set_size(fitted);
    }
}
