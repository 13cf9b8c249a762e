//! Opening and closing the project folder.

use crate::state::AppState;
use crate::store::ProjectInfo;
use crate::window::set_title;
use corral_tools::Error;
use std::sync::atomic::{AtomicUsize, Ordering};
use tauri::{AppHandle, Manager, Runtime, State};

/// Opens a project, a folder here or a remote one (`ssh://…`,
/// `user@host:/path`); `install_remote`: the user agreed to copy
/// corral-cli to the remote when that version is not there (without it,
/// that is `approval_required`, its `details.folder` where it would go).
/// Off the window's thread: its watcher's walk, its MCP servers' secrets
/// from the keychain, the previous project's commands stopping and ssh
/// connecting are never the window thread's work.
#[tauri::command(rename_all = "snake_case")]
pub async fn open_project<R: Runtime>(
    app: AppHandle<R>,
    path: String,
    install_remote: Option<bool>,
) -> Result<ProjectInfo, Error> {
    let opening = app.clone();
    let info = tauri::async_runtime::spawn_blocking(move || {
        opening
            .state::<AppState>()
            .open_named(&path, install_remote.unwrap_or(false))
    })
    .await
    .map_err(|e| {
        Error::new(
            corral_tools::ErrorCode::Io,
            format!("opening the project stopped: {e}"),
        )
    })??;
    set_title(&app, Some(&info));
    Ok(info)
}

/// Shows the native folder dialog; `None` if the user dismissed it.
#[tauri::command(rename_all = "snake_case")]
pub async fn pick_project<R: Runtime>(
    app: AppHandle<R>,
    state: State<'_, AppState>,
) -> Result<Option<ProjectInfo>, Error> {
    use tauri_plugin_dialog::DialogExt;
    let (tx, rx) = tokio::sync::oneshot::channel();
    app.dialog()
        .file()
        .set_title("Open a project folder")
        .pick_folder(move |folder| {
            let _ = tx.send(folder);
        });
    let picked = rx.await.ok().flatten();
    let Some(folder) = picked else {
        return Ok(None);
    };
    let path = folder
        .into_path()
        .map_err(|e| Error::invalid_input(format!("the chosen folder has no local path: {e}")))?;
    let info = state.open_project(&path)?;
    set_title(&app, Some(&info));
    Ok(Some(info))
}

/// Closes the project (async: its commands get up to 3 s to stop).
#[tauri::command(rename_all = "snake_case")]
pub async fn close_project<R: Runtime>(
    app: AppHandle<R>,
    state: State<'_, AppState>,
) -> Result<(), Error> {
    state.close_project();
    set_title(&app, None);
    Ok(())
}

#[tauri::command(rename_all = "snake_case")]
pub fn project_info(state: State<'_, AppState>) -> Option<ProjectInfo> {
    state.project_info()
}

/// What a desktop notification may say: the window names the moment, the
/// words are the app's own.
#[derive(Debug, Clone, Copy, serde::Deserialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum Notice {
    /// A reply finished.
    Finished,
    /// An approval waits.
    Approval,
}

impl Notice {
    pub fn title(self) -> &'static str {
        match self {
            Notice::Finished => "Corral: the agent finished",
            Notice::Approval => "Corral: an approval waits",
        }
    }
}

/// Shows a desktop notification (the window calls it when it is not
/// focused); nothing when the `notifications` setting is off. Returns
/// whether one was asked for (it is shown on a thread of its own).
#[tauri::command(rename_all = "snake_case")]
pub async fn notify_user<R: Runtime>(
    app: AppHandle<R>,
    state: State<'_, AppState>,
    notice: Notice,
) -> Result<bool, Error> {
    if !state.store.settings().notifications {
        return Ok(false);
    }
    if app
        .try_state::<tauri_plugin_notification::Notification<R>>()
        .is_none()
    {
        return Ok(false);
    }
    let Some(pending) = Pending::take() else {
        return Ok(false);
    };
    // Shown off the main thread and not waited for: it is a D-Bus call,
    // which can block for its whole timeout where no notification service
    // answers (the window would freeze meanwhile).
    tauri::async_runtime::spawn_blocking(move || {
        let _pending = pending;
        if let Some(plugin) = app.try_state::<tauri_plugin_notification::Notification<R>>() {
            let _ = plugin.builder().title(notice.title()).show();
        }
    });
    Ok(true)
}

/// Notifications asked for and not yet answered.
static PENDING: AtomicUsize = AtomicUsize::new(0);
/// More than this many unanswered (a notification service that never
/// answers a call) and the next notices are dropped: each waits on a thread.
const MAX_PENDING: usize = 4;

/// One notification waiting for the service's answer; counted while held.
struct Pending(());

impl Pending {
    fn take() -> Option<Pending> {
        PENDING
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| {
                (n < MAX_PENDING).then_some(n + 1)
            })
            .ok()
            .map(|_| Pending(()))
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        PENDING.fetch_sub(1, Ordering::SeqCst);
    }
}

#[tauri::command(rename_all = "snake_case")]
pub fn recent_projects(state: State<'_, AppState>) -> Vec<ProjectInfo> {
    state.store.recent()
}

/// The image on the system clipboard, as PNG bytes; empty when it holds
/// none. WebKitGTK does not hand a pasted image (the `image/png` target
/// screenshot tools offer on X11) to the page's paste event, so the
/// window asks here when a paste brought neither text nor files.
#[tauri::command(rename_all = "snake_case")]
pub async fn clipboard_image() -> Result<tauri::ipc::Response, Error> {
    let read = tauri::async_runtime::spawn_blocking(read_clipboard_image)
        .await
        .map_err(|e| clipboard_error(e.to_string()))?;
    read.map(tauri::ipc::Response::new)
}

fn read_clipboard_image() -> Result<Vec<u8>, Error> {
    let mut clipboard = arboard::Clipboard::new().map_err(|e| clipboard_error(e.to_string()))?;
    let image = match clipboard.get_image() {
        Ok(image) => image,
        Err(arboard::Error::ContentNotAvailable) => return Ok(Vec::new()),
        Err(e) => return Err(clipboard_error(e.to_string())),
    };
    encode_png(image.width, image.height, &image.bytes)
}

/// RGBA pixels as a PNG file.
fn encode_png(width: usize, height: usize, rgba: &[u8]) -> Result<Vec<u8>, Error> {
    let too_big = || clipboard_error(format!("the image is {width}×{height}, too large"));
    let (w, h) = (
        u32::try_from(width).map_err(|_| too_big())?,
        u32::try_from(height).map_err(|_| too_big())?,
    );
    let mut out = Vec::new();
    let mut encoder = png::Encoder::new(&mut out, w, h);
    encoder.set_color(png::ColorType::Rgba);
    encoder.set_depth(png::BitDepth::Eight);
    encoder
        .write_header()
        .and_then(|mut writer| writer.write_image_data(rgba))
        .map_err(|e| clipboard_error(format!("its image could not be encoded: {e}")))?;
    Ok(out)
}

fn clipboard_error(why: String) -> Error {
    Error::new(
        corral_tools::ErrorCode::Io,
        format!("the clipboard could not be read: {why}"),
    )
    .hint("Copy the image again, or save it and drop the file on the message box.")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clipboard_pixels_become_a_png_that_decodes_to_them() {
        let rgba: Vec<u8> = (0..2 * 3 * 4).map(|i| (i * 10) as u8).collect();
        let file = encode_png(2, 3, &rgba).unwrap();
        assert_eq!(&file[..8], b"\x89PNG\r\n\x1a\n");
        let mut reader = png::Decoder::new(std::io::Cursor::new(file))
            .read_info()
            .unwrap();
        let mut pixels = vec![0; reader.output_buffer_size().unwrap()];
        let info = reader.next_frame(&mut pixels).unwrap();
        assert_eq!((info.width, info.height), (2, 3));
        assert_eq!(pixels, rgba);
        // Pixels that do not fill the image are an error, not a panic.
        assert_eq!(encode_png(4, 4, &rgba).unwrap_err().code.as_str(), "io");
    }

    #[test]
    fn at_most_four_notifications_wait_for_the_service() {
        let waiting: Vec<Pending> = std::iter::from_fn(Pending::take).take(10).collect();
        assert_eq!(waiting.len(), MAX_PENDING);
        assert!(Pending::take().is_none(), "a fifth is dropped");
        drop(waiting);
        assert!(Pending::take().is_some(), "answered, they make room again");
    }
}
