//! The Corral app: thin Tauri command adapters over corral-tools and corral-llm.

/// Builds and runs the app.
pub fn run() {
    let result = tauri::Builder::default().run(tauri::generate_context!("../tauri.conf.json"));
    if let Err(error) = result {
        eprintln!("corral: {error}");
        std::process::exit(1);
    }
}
