//! The Corral desktop app.
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

fn main() {
    // WebKitGTK's DMA-BUF renderer keeps about 90 MiB more in the web
    // process (measured with `bench/startup.sh` under Xvfb: the app's tree
    // at about 215 MiB PSS instead of 305); the shared-memory path it falls
    // back to draws the same window. Set before any thread starts; a value
    // the user set wins.
    if std::env::var_os("WEBKIT_DISABLE_DMABUF_RENDERER").is_none() {
        std::env::set_var("WEBKIT_DISABLE_DMABUF_RENDERER", "1");
    }
    corral_app::run();
}
