//! The app's config lives at the repository root; point tauri-build at it.

fn main() {
    let attributes = tauri_build::Attributes::new().config_path("../tauri.conf.json");
    if let Err(error) = tauri_build::try_build(attributes) {
        eprintln!("tauri-build failed: {error:#}");
        std::process::exit(1);
    }
}
