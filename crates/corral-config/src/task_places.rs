//! Where a project's tasks run, kept across restarts: the worktrees whose
//! session runs in a container (`task-places.json` in the data folder,
//! worktree folder to place), so a task made in a container goes on in
//! one after the app starts again, not here.

use crate::{read_json, write_json, Store};
use corral_tools::Error;
use std::collections::BTreeMap;
use std::path::Path;

/// The one place besides here a task may have.
const CONTAINER: &str = "container";

impl Store {
    fn task_places(&self) -> BTreeMap<String, String> {
        read_json(&self.data.join("task-places.json")).unwrap_or_default()
    }

    /// Whether the task whose worktree is `worktree` runs in a container.
    pub fn task_in_container(&self, worktree: &Path) -> bool {
        self.task_places()
            .get(&worktree.display().to_string())
            .is_some_and(|place| place == CONTAINER)
    }

    /// Keeps that the task at `worktree` runs in a container (`true`), or
    /// forgets it (`false`: it was discarded or merged, or runs here).
    pub fn keep_task_in_container(&self, worktree: &Path, container: bool) -> Result<(), Error> {
        let mut places = self.task_places();
        let key = worktree.display().to_string();
        let changed = if container {
            places.insert(key, CONTAINER.into()).is_none()
        } else {
            places.remove(&key).is_some()
        };
        if !changed {
            return Ok(());
        }
        write_json(&self.data.join("task-places.json"), &places, 0o600)
    }
}

#[cfg(test)]
mod tests {
    // A store in a temporary folder.
    #![allow(clippy::unwrap_used, clippy::disallowed_methods)]
    use super::*;

    #[test]
    fn a_container_task_is_kept_until_forgotten() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::without_keychain(dir.path().join("config"), dir.path().join("data"));
        let (one, two) = (
            Path::new("/data/worktrees/p/one"),
            Path::new("/data/worktrees/p/two"),
        );
        assert!(!store.task_in_container(one));
        store.keep_task_in_container(one, true).unwrap();
        store.keep_task_in_container(two, true).unwrap();
        let again = Store::without_keychain(dir.path().join("config"), dir.path().join("data"));
        assert!(again.task_in_container(one) && again.task_in_container(two));
        again.keep_task_in_container(one, false).unwrap();
        assert!(!store.task_in_container(one) && store.task_in_container(two));
    }
}
