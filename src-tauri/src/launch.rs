//! `corral [FOLDER]`: the launcher's arguments, and a later launch handed
//! to the app already running. FOLDER may be a remote folder,
//! `ssh://user@host[:port]/abs/path` (or scp's `user@host:/path`); it
//! opens in the background, as ssh connects, and the window hears how it
//! went (asking first when corral-cli must be copied there).
//!
//! One app runs per user session (tauri-plugin-single-instance: the first
//! owns a name on the D-Bus session bus; a second start finds it taken,
//! sends its arguments and working folder there and exits). The running
//! app then opens the folder the second start named, brings its window to
//! the front and tells the window through the channel of
//! [`LaunchListener`]. Without a session bus every start runs on its own.

use crate::state::AppState;
use crate::store::ProjectInfo;
use crate::window::set_title;
use clap::Parser;
use corral_tools::Error;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use tauri::{AppHandle, Manager, Runtime};

/// Corral: a desktop coding agent confined to one project folder.
///
/// Opens FOLDER (or the welcome screen). With Corral already running, the
/// folder opens in its window instead.
#[derive(Debug, Clone, PartialEq, Eq, Parser)]
#[command(name = "corral", version)]
pub struct Args {
    /// The project folder to open: a path, or a remote folder
    /// (`ssh://user@host[:port]/abs/path`).
    pub folder: Option<PathBuf>,
}

impl Args {
    /// The folder to open, resolved against `cwd` (the working folder of
    /// the start that named it, which for a second start is not ours); a
    /// remote folder's name as it was given.
    pub fn folder_in(&self, cwd: &Path) -> Option<PathBuf> {
        self.folder.as_ref().map(|folder| match is_remote(folder) {
            true => folder.clone(),
            false => cwd.join(folder),
        })
    }
}

/// Whether `folder` names a remote folder (read as `corral_remote::Remote::parse` reads it).
pub fn is_remote(folder: &Path) -> bool {
    folder
        .to_str()
        .is_some_and(|name| corral_remote::Remote::parse(name).is_some())
}

/// What the window hears of a later `corral FOLDER`.
#[derive(Debug, Clone, serde::Serialize, ts_rs::TS)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Launch {
    /// The folder is being opened (a remote one waits for ssh).
    Opening { folder: String },
    /// The folder is now the open project.
    Opened { project: ProjectInfo },
    /// It could not be opened; the project before stays open.
    Failed { folder: String, error: Error },
}

/// Where launches go: the window's channel (a reloaded window's replaces
/// the one before). A launch told before the window listens (a remote
/// folder named at start, which opens as the window loads) is kept and
/// told when it does.
#[derive(Default)]
pub struct LaunchListener(Mutex<Listening>);

#[derive(Default)]
struct Listening {
    send: Option<SendLaunch>,
    /// The last launch told while no one listened.
    unheard: Option<Launch>,
}

/// Sends a launch to the window.
pub type SendLaunch = Arc<dyn Fn(Launch) + Send + Sync>;

impl LaunchListener {
    pub fn listen(&self, send: SendLaunch) {
        let unheard = {
            let mut listening = self.0.lock().unwrap_or_else(PoisonError::into_inner);
            listening.send = Some(send.clone());
            listening.unheard.take()
        };
        if let Some(launch) = unheard {
            send(launch);
        }
    }

    pub fn tell(&self, launch: Launch) {
        let send = {
            let mut listening = self.0.lock().unwrap_or_else(PoisonError::into_inner);
            match listening.send.clone() {
                Some(send) => send,
                None => {
                    listening.unheard = Some(launch);
                    return;
                }
            }
        };
        send(launch);
    }
}

/// A second start's arguments (its whole argv) and working folder, in the
/// running app: opens the folder it named, if any, and shows the window.
pub fn second_start<R: Runtime>(app: &AppHandle<R>, argv: Vec<String>, cwd: String) {
    if let Some(window) = app.get_webview_window("main") {
        let _ = window.unminimize();
        let _ = window.show();
        let _ = window.set_focus();
    }
    // The second start parsed these same arguments before it got here.
    let Some(folder) = Args::try_parse_from(argv)
        .ok()
        .and_then(|args| args.folder_in(Path::new(&cwd)))
    else {
        return;
    };
    open_in_background(app, folder);
}

/// Opens `folder` and tells the window how it went. Off the caller's
/// thread: opening stops the previous project's commands, and a remote
/// folder waits for ssh; either may take seconds.
pub fn open_in_background<R: Runtime>(app: &AppHandle<R>, folder: PathBuf) {
    let app = app.clone();
    if let Some(listener) = app.try_state::<LaunchListener>() {
        listener.tell(Launch::Opening {
            folder: folder.to_string_lossy().into_owned(),
        });
    }
    tauri::async_runtime::spawn_blocking(move || {
        let Some(state) = app.try_state::<AppState>() else {
            return;
        };
        let launch = match state.open_project(&folder) {
            Ok(project) => {
                set_title(&app, Some(&project));
                Launch::Opened { project }
            }
            Err(error) => {
                eprintln!(
                    "corral: could not open {}: {}",
                    folder.display(),
                    error.message
                );
                Launch::Failed {
                    folder: folder.to_string_lossy().into_owned(),
                    error,
                }
            }
        };
        if let Some(listener) = app.try_state::<LaunchListener>() {
            listener.tell(launch);
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_relative_folder_is_taken_from_the_start_that_named_it() {
        let args = Args::try_parse_from(["corral", "other/app"]).unwrap();
        assert_eq!(
            args.folder_in(Path::new("/home/me/src")),
            Some(PathBuf::from("/home/me/src/other/app"))
        );
        let absolute = Args::try_parse_from(["corral", "/srv/app"]).unwrap();
        assert_eq!(
            absolute.folder_in(Path::new("/home/me")),
            Some(PathBuf::from("/srv/app"))
        );
        let none = Args::try_parse_from(["corral"]).unwrap();
        assert_eq!(none.folder_in(Path::new("/home/me")), None);
    }

    #[test]
    fn a_remote_folder_is_taken_as_it_was_named() {
        for name in ["ssh://dev@box:2222/srv/app", "dev@box:/srv/app"] {
            let args = Args::try_parse_from(["corral", name]).unwrap();
            assert_eq!(
                args.folder_in(Path::new("/home/me")),
                Some(PathBuf::from(name))
            );
        }
    }

    #[test]
    fn a_launch_told_before_the_window_listens_reaches_it_when_it_does() {
        let listener = LaunchListener::default();
        let failed = |folder: &str| Launch::Failed {
            folder: folder.into(),
            error: Error::invalid_input("no"),
        };
        listener.tell(failed("first"));
        listener.tell(failed("second"));
        let heard = Arc::new(Mutex::new(Vec::new()));
        let into = heard.clone();
        listener.listen(Arc::new(move |launch| {
            if let Launch::Failed { folder, .. } = launch {
                into.lock().unwrap().push(folder);
            }
        }));
        listener.tell(failed("third"));
        assert_eq!(*heard.lock().unwrap(), ["second", "third"]);
    }

    #[test]
    fn a_second_folder_is_refused_with_a_clear_message() {
        let error = Args::try_parse_from(["corral", "a", "b"]).unwrap_err();
        assert!(
            error.to_string().contains("unexpected argument 'b'"),
            "{error}"
        );
    }

    #[test]
    fn a_launch_reaches_the_window_as_tagged_json() {
        let launch = Launch::Opened {
            project: ProjectInfo {
                root: "/srv/app".into(),
                name: "app".into(),
            },
        };
        assert_eq!(
            serde_json::to_value(launch).unwrap(),
            serde_json::json!({"type": "opened", "project": {"root": "/srv/app", "name": "app"}})
        );
    }
}
