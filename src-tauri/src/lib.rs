//! The Corral app: thin Tauri command adapters over the session core
//! (corral-session: the open project, its approvals and every tool call)
//! and corral-llm, the app state (the session, runs) and what it keeps on
//! disk. `corral PATH` opens PATH at start, or in the app already running
//! ([`launch`]).

pub mod commands;
pub mod launch;
pub mod navigation;
pub mod remote;
pub mod state;
/// What the app keeps on disk (its own crate, for every host), and the
/// conversation history beside it.
pub mod store {
    pub use corral_config::*;
    pub use corral_history as history;
    pub use corral_history::markdown;
}
pub mod updates;
pub mod window;

use state::AppState;
use store::Store;
use tauri::{Manager, Runtime};

/// Registers the navigation guard and every command of
/// [`commands::COMMANDS`] (a remote project's sent there, [`remote::route`]) on a builder (the real app and the tests' mock
/// runtime use the same list).
pub fn builder<R: Runtime>(builder: tauri::Builder<R>) -> tauri::Builder<R> {
    builder
        .plugin(navigation::guard())
        .manage(launch::LaunchListener::default())
        .manage(commands::channels::Outbox::default())
        .invoke_handler(remote::route::<_, AppState>(commands::handler()))
}

/// Builds and runs the app.
pub fn run() {
    // What the launcher left open reaches nothing this app starts.
    corral_tools::shell::inherit_nothing_from_the_launcher();
    // Before anything starts a thread: it sets environment variables.
    render_on_cpu_without_gpu();
    // `--help`, `--version` and a wrong argument end here, before any window.
    let project_arg = <launch::Args as clap::Parser>::parse().folder;
    // The single-instance plugin first: a second start hands its
    // arguments to the running app and exits before anything else starts.
    let app =
        tauri::Builder::default().plugin(tauri_plugin_single_instance::init(launch::second_start));
    let app = updates::register(builder(app))
        // A channel's messages reach the window in batches it comes for,
        // not each in a script of its own (commands/channels.rs).
        .channel_interceptor(commands::channels::intercept)
        .plugin(tauri_plugin_dialog::init())
        .plugin(tauri_plugin_notification::init())
        .on_page_load(|_webview, payload| {
            // bench/startup.sh measures start-up to this line.
            if payload.event() == tauri::webview::PageLoadEvent::Finished
                && std::env::var_os("CORRAL_STARTUP_PROBE").is_some()
            {
                println!("corral-ready");
            }
        })
        .setup(move |app| {
            let paths = app.path();
            let (config, data) = (paths.app_config_dir()?, paths.app_data_dir()?);
            // CORRAL_NO_KEYCHAIN keeps keys in the 0600 file (tests, headless machines).
            let store = match std::env::var_os("CORRAL_NO_KEYCHAIN") {
                Some(_) => Store::without_keychain(config, data),
                None => Store::new(config, data),
            };
            if let Err(e) = store.bind_legacy_keys() {
                eprintln!(
                    "corral: could not bind saved API keys to their servers: {}",
                    e.message
                );
            }
            window::fit_to_screen(app.handle());
            let state = AppState::new(store);
            let remote_arg = project_arg.clone().filter(|path| launch::is_remote(path));
            if let Some(path) = project_arg.as_ref().filter(|_| remote_arg.is_none()) {
                match state.open_project(std::path::Path::new(path)) {
                    Ok(info) => window::set_title(app.handle(), Some(&info)),
                    Err(e) => eprintln!(
                        "corral: could not open {}: {}",
                        path.to_string_lossy(),
                        e.message
                    ),
                }
            }
            app.manage(state);
            // A remote folder opens as the window loads (ssh may take a
            // while, or ask to copy corral-cli there): the window hears it.
            if let Some(remote) = remote_arg {
                launch::open_in_background(app.handle(), remote);
            }
            stop_runs_on_signals(app.handle().clone());
            Ok(())
        })
        .build(tauri::generate_context!("../tauri.conf.json"));
    match app {
        Ok(app) => app.run(|handle, event| {
            if let tauri::RunEvent::Exit = event {
                // Commands run in their own process groups: stop them, or
                // they would outlive the window.
                if let Some(state) = handle.try_state::<AppState>() {
                    let left = state.stop_all(std::time::Duration::from_secs(3));
                    if left > 0 {
                        eprintln!("corral: {left} run(s) did not stop within 3 s of exit");
                    }
                }
            }
        }),
        Err(error) => {
            eprintln!("corral: {error}");
            std::process::exit(1);
        }
    }
}

/// WebKit's and GTK's own switches for drawing without OpenGL (WebKitGTK,
/// so Linux only). Where the machine has no GPU (no DRM render node: most
/// VMs and containers, and so Xvfb on them), their
/// OpenGL paths run on Mesa's software rasterizer anyway, which costs the
/// window about 90 MiB (llvmpipe in every process, GL buffers in the web
/// process) and draws no faster than WebKit's own CPU renderer.
pub const CPU_RENDERING: [(&str, &str); 3] = [
    ("GDK_GL", "disable"),
    ("WEBKIT_DISABLE_DMABUF_RENDERER", "1"),
    ("WEBKIT_DISABLE_COMPOSITING_MODE", "1"),
];

/// Turns OpenGL off (`CPU_RENDERING`) when there is no GPU and the user
/// set none of those variables (then their choice stands, whatever it is).
/// Must run before any thread starts: it writes the environment, which the
/// WebKit processes inherit. (A machine with a GPU keeps OpenGL even where
/// the display cannot use it, as Xvfb or `ssh -X` on it.)
#[cfg(target_os = "linux")]
fn render_on_cpu_without_gpu() {
    let chosen = CPU_RENDERING
        .iter()
        .any(|(name, _)| std::env::var_os(name).is_some());
    if chosen || has_gpu() {
        return;
    }
    for (name, value) in CPU_RENDERING {
        std::env::set_var(name, value);
    }
}

#[cfg(not(target_os = "linux"))]
fn render_on_cpu_without_gpu() {}

/// Whether a DRM render node exists, the device a GPU draws through.
#[cfg(target_os = "linux")]
// Lists /dev/dri, never a project's folder.
#[allow(clippy::disallowed_methods)]
fn has_gpu() -> bool {
    std::fs::read_dir("/dev/dri").is_ok_and(|entries| {
        entries
            .flatten()
            .any(|entry| entry.file_name().to_string_lossy().starts_with("renderD"))
    })
}

/// On SIGTERM, SIGINT or SIGHUP (a logout, a `kill`, Ctrl-C in the
/// terminal), stops running commands before the app goes: they run in
/// their own process groups and would outlive it.
fn stop_runs_on_signals(handle: tauri::AppHandle) {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let mut signals = match signal_hook::iterator::Signals::new([SIGTERM, SIGINT, SIGHUP]) {
        Ok(signals) => signals,
        Err(e) => {
            eprintln!("corral: cannot watch for signals ({e}); commands may outlive a killed app");
            return;
        }
    };
    std::thread::spawn(move || {
        if let Some(signal) = signals.forever().next() {
            eprintln!("corral: signal {signal}");
            if let Some(state) = handle.try_state::<AppState>() {
                state.stop_all(std::time::Duration::from_secs(3));
            }
            std::process::exit(128 + signal);
        }
    });
}
