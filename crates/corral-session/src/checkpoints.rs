//! The project's checkpoint store, in the host's data folder
//! (`DATA/checkpoints/NAME-HASH`, shared by the app and `corral-cli`),
//! opened on the first call that needs it and kept while the session lasts.

use corral_tools::checkpoint::{Hook, Store};
use corral_tools::{Error, ProjectRoot};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

/// Which user turn and which tool call a call belongs to (the UI's ids):
/// the checkpoint before it carries them, so the window can offer
/// "Restore to here" on the turn and on the call's card.
#[derive(Debug, Clone, Default)]
pub struct CallTag {
    pub turn: Option<String>,
    pub call: Option<String>,
}

/// The data folder, and the store of the project last used.
pub struct Checkpoints {
    base: PathBuf,
    open: Mutex<Option<Arc<Store>>>,
}

impl Checkpoints {
    pub fn new(base: PathBuf) -> Checkpoints {
        Checkpoints {
            base,
            open: Mutex::new(None),
        }
    }

    /// The store of `root`.
    pub fn store(&self, root: &ProjectRoot) -> Result<Arc<Store>, Error> {
        let path = corral_tools::checkpoint::store_path(&self.base, root);
        let mut open = self.open.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(store) = open.as_ref() {
            if store.path() == path || std::fs::canonicalize(&path).is_ok_and(|p| p == store.path())
            {
                return Ok(store.clone());
            }
        }
        let store = Arc::new(Store::for_project(&self.base, root)?);
        *open = Some(store.clone());
        Ok(store)
    }

    /// The store, if a call opened it (reads never do).
    pub fn opened(&self) -> Option<Arc<Store>> {
        self.open
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The hook `dispatch::call` takes a checkpoint with.
    pub fn hook(&self, root: &ProjectRoot, tag: CallTag) -> Result<Hook, Error> {
        Ok(Hook {
            store: self.store(root)?,
            turn: tag.turn,
            call_id: tag.call,
        })
    }
}
