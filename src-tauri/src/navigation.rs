//! Keeps the window on the app's own pages. A link in the model's answer or
//! an OSC 8 hyperlink in command output must never take the webview (and
//! with it the IPC to every command) to another site: every navigation to
//! anything but the app's own origin is refused.
//!
//! The guard is a plugin because the window comes from `tauri.conf.json`;
//! a plugin's `on_navigation` runs for every webview, whoever created it.

use tauri::plugin::{Builder, TauriPlugin};
use tauri::{Runtime, Url};

/// Whether `url` is one of the app's own pages. The app is always built
/// with `custom-protocol` (no dev server), so its pages are served as
/// `tauri://localhost` (Linux, macOS) or `http(s)://tauri.localhost`
/// (Windows, Android) — only the one this platform serves — with no port
/// and no user name.
pub fn is_app_url(url: &Url) -> bool {
    // Windows (and Android) serve the app over http(s); elsewhere that
    // host would be whatever answers on 127.0.0.1, not the app.
    let served_over_http = cfg!(any(windows, target_os = "android"));
    let host = match url.scheme() {
        "tauri" if !served_over_http => "localhost",
        "http" | "https" if served_over_http => "tauri.localhost",
        _ => return false,
    };
    url.host_str() == Some(host)
        && url.port().is_none()
        && url.username().is_empty()
        && url.password().is_none()
}

/// The guard plugin's name.
pub const GUARD: &str = "corral-navigation-guard";

/// The plugin that refuses every navigation away from the app.
pub fn guard<R: Runtime>() -> TauriPlugin<R> {
    Builder::new(GUARD)
        .on_navigation(|_webview, url| {
            let allowed = is_app_url(url);
            if !allowed {
                eprintln!("corral: refused to navigate the window to {url}");
            }
            allowed
        })
        .build()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_apps_own_pages_are_allowed() {
        let (own, other) = if cfg!(any(windows, target_os = "android")) {
            (
                [
                    "http://tauri.localhost/",
                    "https://tauri.localhost/assets/app.js?v=1",
                ],
                ["tauri://localhost/", "tauri://localhost/index.html"],
            )
        } else {
            (
                [
                    "tauri://localhost/",
                    "tauri://localhost/index.html#/settings",
                ],
                [
                    "http://tauri.localhost/",
                    "https://tauri.localhost/assets/app.js",
                ],
            )
        };
        for url in own {
            assert!(is_app_url(&url.parse().unwrap()), "{url}");
        }
        for url in other {
            assert!(!is_app_url(&url.parse().unwrap()), "{url}");
        }
        for url in [
            "https://example.com/",
            "http://localhost:1420/",
            "http://127.0.0.1:8080/",
            "tauri://localhost.evil.example/",
            "tauri://evil.example/",
            "http://tauri.localhost.evil.example/",
            "http://tauri.localhost:8080/",
            "http://user@tauri.localhost/",
            "https://evil.example/?u=tauri://localhost",
            "file:///etc/passwd",
            "data:text/html,<script>alert(1)</script>",
            "javascript:alert(1)",
            "about:blank",
            "ipc://localhost/read_file",
        ] {
            assert!(!is_app_url(&url.parse().unwrap()), "{url}");
        }
    }
}
