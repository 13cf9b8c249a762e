//! Faults of the checkpoint store, left as a killed process or a damaged
//! disk would leave them.

use std::path::{Path, PathBuf};

/// The checkpoint store of the one project checkpointed in `data` (the
/// folder under `data/checkpoints/` holding the store's `lock`).
pub fn checkpoint_store(data: &Path) -> PathBuf {
    std::fs::read_dir(data.join("checkpoints"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.join("lock").exists())
        .unwrap_or_else(|| panic!("no checkpoint store in {}", data.display()))
}

/// Writes `store`'s journal as a restore killed midway leaves it.
pub fn leave_journal(store: &Path, journal: &serde_json::Value) {
    std::fs::write(store.join("journal.json"), journal.to_string()).unwrap();
}
