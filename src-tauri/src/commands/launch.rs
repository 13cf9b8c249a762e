//! A later `corral FOLDER` reaching the window (see [`crate::launch`]).

use crate::launch::{Launch, LaunchListener};
use std::sync::Arc;
use tauri::State;

/// The window's channel for later launches (a reloaded window's replaces
/// the one before).
#[tauri::command(rename_all = "snake_case")]
pub fn watch_launches<R: tauri::Runtime>(
    webview: tauri::Webview<R>,
    listener: State<'_, LaunchListener>,
    on_launch: tauri::ipc::JavaScriptChannelId,
) {
    let channel = on_launch.channel_on::<R, Launch>(webview);
    listener.listen(Arc::new(move |launch| {
        // A closed window hears nothing; the project is open all the same.
        let _ = channel.send(launch);
    }));
}
