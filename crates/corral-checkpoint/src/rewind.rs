//! Going back: what a restore would change, comparing two checkpoints,
//! the restore itself, and undoing one call alone.

use crate::compare::{self, Loader};
use crate::journal::Part;
use crate::restore::Scope;
use crate::scan::{self, Cache, Keep};
use crate::selection::{changed_paths, foreseen_skips, ignored_skips, selected};
use crate::verify;
use crate::{CallUndo, Comparison, Record, Restored, Store};
use corral_fs::error::Result;
use corral_fs::root::ProjectRoot;
use std::collections::HashSet;
use std::path::Path;

impl Store {
    /// What restoring checkpoint `id` (or only `path`) would change: the
    /// project as it is (`a/`) against the checkpoint (`b/`).
    pub fn diff(&self, root: &ProjectRoot, id: &str, path: Option<&str>) -> Result<Comparison> {
        let _locked = self.lock(root)?;
        let target = self.record(id)?;
        let scope = self.only(root, path)?;
        let current = scan::scan(root, &self.dir, Cache::load(&self.dir), Keep::DryRun)?;
        let loader = Loader {
            store: &self.dir,
            scan: Some(&current),
            root: Some(root),
        };
        let (changes, ignored) =
            compare::changes_and_ignored(&loader, &current.root, &Store::tree_of(&target)?)?;
        let chosen = selected(&changes, &scope);
        // A damaged checkpoint fails its diff as it would fail its restore.
        verify::refuse_damaged(id, verify::damaged_blobs(&self.dir, &chosen))?;
        let (described, counts) = compare::describe(&loader, &chosen);
        let mut skipped = foreseen_skips(&chosen);
        skipped.extend(ignored_skips(&ignored, &scope));
        Ok(Comparison {
            from: "current".to_string(),
            to: target.info.id,
            path: path.map(str::to_string),
            counts,
            changes: described,
            skipped,
        })
    }

    /// What changed from checkpoint `from` to checkpoint `to` (or to the
    /// project as it is, when `to` is `None`).
    pub fn compare(&self, root: &ProjectRoot, from: &str, to: Option<&str>) -> Result<Comparison> {
        let _locked = self.lock(root)?;
        let from_record = self.record(from)?;
        let (to_name, current, to_tree) = match to {
            Some(id) => {
                let record = self.record(id)?;
                (record.info.id.clone(), None, Store::tree_of(&record)?)
            }
            None => {
                let scan = scan::scan(root, &self.dir, Cache::load(&self.dir), Keep::DryRun)?;
                let hash = scan.root;
                ("current".to_string(), Some(scan), hash)
            }
        };
        let loader = Loader {
            store: &self.dir,
            scan: current.as_ref(),
            root: Some(root),
        };
        let changes = compare::changes(&loader, &Store::tree_of(&from_record)?, &to_tree)?;
        let (described, counts) = compare::describe(&loader, &changes);
        Ok(Comparison {
            from: from_record.info.id,
            to: to_name,
            path: None,
            counts,
            changes: described,
            skipped: Vec::new(),
        })
    }

    /// Puts the project (or only `path`) back the way checkpoint `id` has
    /// it. A checkpoint is taken first: restoring it (`undo`) undoes this.
    pub fn restore(&self, root: &ProjectRoot, id: &str, path: Option<&str>) -> Result<Restored> {
        let _locked = self.lock(root)?;
        self.record(id)?;
        self.restore_locked(
            root,
            id,
            Part::Path(path),
            &format!("before restoring {id}"),
        )
    }

    /// The checkpoint taken after `id`, if any: where the changes of the
    /// call `id` was taken before end.
    pub(crate) fn next_after(&self, id: &str) -> Result<Option<Record>> {
        for later in self.ids()?.iter().filter(|later| later.as_str() > id) {
            if let Ok(record) = self.record(later) {
                return Ok(Some(record));
            }
        }
        Ok(None)
    }

    /// What undoing the call checkpoint `id` was taken before would do: the
    /// paths that changed from `id` to the next checkpoint (or to the
    /// project as it is, when none was taken since) are put back as `id`
    /// has them, and only those. Says which of them changed again since.
    pub fn call_undo_diff(&self, root: &ProjectRoot, id: &str) -> Result<CallUndo> {
        let _locked = self.lock(root)?;
        let before = self.record(id)?;
        let until = self.next_after(id)?;
        let current = scan::scan(root, &self.dir, Cache::load(&self.dir), Keep::DryRun)?;
        let loader = Loader {
            store: &self.dir,
            scan: Some(&current),
            root: Some(root),
        };
        let before_tree = Store::tree_of(&before)?;
        let after_tree = match &until {
            Some(record) => Store::tree_of(record)?,
            None => current.root,
        };
        let scope = changed_paths(&compare::changes(&loader, &before_tree, &after_tree)?);
        let changes = compare::changes(&loader, &current.root, &before_tree)?;
        let chosen = selected(&changes, &scope);
        verify::refuse_damaged(id, verify::damaged_blobs(&self.dir, &chosen))?;
        let undone: HashSet<&Path> = chosen.iter().map(|c| c.path.as_path()).collect();
        let changed_later = if until.is_some() {
            compare::changes(&loader, &after_tree, &current.root)?
                .iter()
                .filter(|c| undone.contains(c.path.as_path()) && scope.includes(c))
                .map(|c| compare::display(&c.path))
                .collect()
        } else {
            Vec::new()
        };
        let (described, counts) = compare::describe(&loader, &chosen);
        let paths = match &scope {
            Scope::Exactly(paths) => paths.iter().map(|p| compare::display(p)).collect(),
            Scope::Whole | Scope::Under(_) => Vec::new(),
        };
        Ok(CallUndo {
            checkpoint: before.info.id.clone(),
            until: until.map_or_else(|| "current".to_string(), |r| r.info.id),
            paths,
            changed_later,
            plan: Comparison {
                from: "current".to_string(),
                to: before.info.id,
                path: None,
                counts,
                changes: described,
                skipped: foreseen_skips(&chosen),
            },
        })
    }

    /// Undoes one call: the paths that changed from checkpoint `id` (taken
    /// before the call) to the next checkpoint, or to the project as it is
    /// when none was taken since, are put back as `id` has them; nothing
    /// else is touched. One checkpoint is taken first (`undo`), and a
    /// killed undo is finished at the next open, as for any restore.
    pub fn undo_call(&self, root: &ProjectRoot, id: &str) -> Result<Restored> {
        let _locked = self.lock(root)?;
        self.record(id)?;
        let until = self.next_after(id)?.map(|r| r.info.id);
        self.restore_locked(
            root,
            id,
            Part::ChangedUntil(until.as_deref()),
            &format!("before undoing the call after {id}"),
        )
    }

    /// The one path a diff or restore is limited to, checked like a tool's.
    pub(crate) fn only(&self, root: &ProjectRoot, path: Option<&str>) -> Result<Scope> {
        let Some(path) = path else {
            return Ok(Scope::Whole);
        };
        let rel = root.resolve(path)?;
        if rel.is_git_internal() {
            return Err(corral_fs::git_protected(&rel.display()));
        }
        Ok(if rel.is_root() {
            Scope::Whole
        } else {
            Scope::Under(rel.as_path().to_path_buf())
        })
    }
}
