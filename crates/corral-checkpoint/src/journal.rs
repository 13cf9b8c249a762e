//! A restore, all or nothing. Before it changes anything it checks what
//! it needs (objects whole, paths still folders inside the project, room
//! on the disk) and writes a journal; a restore that fails midway is
//! rolled back on the spot, and one killed midway is finished at the next
//! open of the store. A journal that cannot be finished is set aside with
//! a warning, never left to stop every later call.

use super::compare::{self, display, Loader};
use super::restore::{self, Failed};
use super::scan::{self, Cache, Keep};
use super::selection::{changed_paths, ignored_skips, selected};
use super::store::{now_ms, JOURNAL};
use super::{preflight, verify, NewCheckpoint, Record, Restored, Store};
use corral_fs::error::{Error, ErrorCode, Result};
use corral_fs::root::ProjectRoot;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// A restore under way, written before the project is touched and removed
/// after; one found at the next open is finished then.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(super) struct Journal {
    restore: String,
    path: Option<String>,
    undo: String,
    /// An undo of one call: the checkpoint where its changes end (the
    /// paths restored are those that differ from `restore` to it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    until: Option<String>,
}

/// Which part of the project a restore puts back.
#[derive(Debug, Clone, Copy)]
pub(super) enum Part<'a> {
    /// The whole project, or one path and what is beneath it.
    Path(Option<&'a str>),
    /// What changed from the restored checkpoint to checkpoint `until` (the
    /// undo checkpoint itself when `None`: what changed up to now).
    ChangedUntil(Option<&'a str>),
}

impl Store {
    /// Finishes a restore a killed process left half done (rolled
    /// forward, undoable like any restore). One that cannot be finished
    /// (its checkpoint damaged, its path now leading out of the project,
    /// the disk full) is set aside with a warning, and the store opens.
    pub(super) fn finish_journal(&self, root: &ProjectRoot) -> Result<()> {
        let Some(bytes) = self.read_small(JOURNAL)? else {
            return Ok(());
        };
        let journal: Option<Journal> = serde_json::from_slice(&bytes).ok();
        let finished = match &journal {
            None => Err(Error::new(ErrorCode::Io, "its journal does not read back")),
            // Its checkpoint is gone (collected): nothing to finish it with.
            Some(journal)
                if self
                    .record(&journal.restore)
                    .is_err_and(|e| e.code == ErrorCode::NotFound) =>
            {
                Ok(())
            }
            Some(journal) => {
                let part = match &journal.until {
                    Some(until) => Part::ChangedUntil(Some(until)),
                    None => Part::Path(journal.path.as_deref()),
                };
                self.restore_locked(
                    root,
                    &journal.restore,
                    part,
                    "finishing an interrupted restore",
                )
                .map(drop)
            }
        };
        match finished {
            Ok(()) => self.remove_small(JOURNAL),
            Err(e) => self.set_aside(journal.as_ref(), &e),
        }
    }

    /// Moves the journal out of the way (`journal-unfinished-MS.json`) and
    /// says what was left undone, and how to finish or undo it by hand.
    fn set_aside(&self, journal: Option<&Journal>, why: &Error) -> Result<()> {
        let now = now_ms();
        let aside = (0..)
            .map(|n| match n {
                0 => format!("journal-unfinished-{now}.json"),
                n => format!("journal-unfinished-{now}-{n}.json"),
            })
            .find(|name| !self.dir.exists(name))
            .unwrap_or_default();
        self.dir
            .rename(JOURNAL, &self.dir, &aside)
            .map_err(|e| super::object::store_io(&e, "set aside its journal"))?;
        let moved = self.path.join(&aside);
        let what = match journal {
            Some(j) => {
                let only = match (&j.path, &j.until) {
                    (Some(path), _) => format!(" (only `{path}`)"),
                    (None, Some(_)) => " (one call's changes)".to_string(),
                    (None, None) => String::new(),
                };
                format!(
                    "an interrupted restore of checkpoint {}{only} could not be finished: {}. \
                     The project may be partly restored: restore checkpoint {} again to finish it, \
                     or checkpoint {} (taken just before it) to go back",
                    j.restore, why.message, j.restore, j.undo
                )
            }
            None => format!("the journal of an interrupted restore could not be used: {}. The project may be partly restored; look at the latest checkpoints", why.message),
        };
        self.warn(format!(
            "{what}. Its journal was moved to `{}`.",
            moved.display()
        ));
        Ok(())
    }

    pub(super) fn restore_locked(
        &self,
        root: &ProjectRoot,
        id: &str,
        part: Part,
        label: &str,
    ) -> Result<Restored> {
        let target = self.record(id)?;
        let path = match part {
            Part::Path(path) => path,
            Part::ChangedUntil(_) => None,
        };
        let only = self.only(root, path)?;
        let (undo, _) = self.checkpoint_locked(
            root,
            NewCheckpoint {
                tool: "restore".to_string(),
                label: label.to_string(),
                ..NewCheckpoint::default()
            },
        )?;
        let loader = Loader {
            store: &self.dir,
            scan: None,
            root: None,
        };
        let target_tree = Store::tree_of(&target)?;
        let (scope, until) = match part {
            Part::Path(_) => (only, None),
            Part::ChangedUntil(until) => {
                let until = match until {
                    Some(until) => self.record(until)?,
                    None => undo.clone(),
                };
                let changed = compare::changes(&loader, &target_tree, &Store::tree_of(&until)?)?;
                (changed_paths(&changed), Some(until.info.id))
            }
        };
        let (changes, ignored) =
            compare::changes_and_ignored(&loader, &Store::tree_of(&undo)?, &target_tree)?;
        let chosen = selected(&changes, &scope);
        // Everything it needs, before anything is changed.
        verify::refuse_damaged(id, verify::damaged_blobs(&self.dir, &chosen))?;
        preflight::paths(root, &chosen)?;
        preflight::space(root, &chosen)?;
        let (described, counts) = compare::describe(&loader, &chosen);
        let journal = Journal {
            restore: id.to_string(),
            path: path.map(str::to_string),
            undo: undo.info.id.clone(),
            until,
        };
        let json = serde_json::to_vec(&journal)
            .map_err(|e| Error::new(ErrorCode::Io, format!("could not encode the journal: {e}")))?;
        self.write_durable(Path::new(JOURNAL), &json)?;
        let mut skipped = match restore::apply(root, &loader, &chosen, &scope) {
            Ok(skipped) => skipped,
            Err(failed) => return Err(self.roll_back(root, id, &undo, &chosen, failed)),
        };
        skipped.extend(ignored_skips(&ignored, &scope));
        self.remove_small(JOURNAL)?;
        Ok(Restored {
            restored: id.to_string(),
            path: path.map(str::to_string),
            undo: undo.info.id,
            counts,
            changes: described,
            skipped,
        })
    }

    /// After a restore failed midway: the paths it was changing put back
    /// as the checkpoint taken just before it has them. The error says
    /// what failed and which state the project is in. If even that fails,
    /// the journal stays, and the next open rolls the restore forward.
    fn roll_back(
        &self,
        root: &ProjectRoot,
        id: &str,
        undo: &Record,
        chosen: &[compare::Change],
        failed: Failed,
    ) -> Error {
        let at = display(&failed.path);
        let full = failed.error.kind() == std::io::ErrorKind::StorageFull;
        let what = format!(
            "restoring checkpoint {id} failed at `{at}`: {}",
            failed.error
        );
        let paths = changed_paths(chosen);
        let back = (|| -> Result<()> {
            let now = scan::scan(root, &self.dir, Cache::load(&self.dir), Keep::DryRun)?;
            let loader = Loader {
                store: &self.dir,
                scan: Some(&now),
                root: None,
            };
            let changes = compare::changes(&loader, &now.root, &Store::tree_of(undo)?)?;
            let back = selected(&changes, &paths);
            restore::apply(root, &loader, &back, &paths).map_err(|f| {
                Error::new(
                    ErrorCode::Io,
                    format!("at `{}`: {}", display(&f.path), f.error),
                )
            })?;
            Ok(())
        })();
        let undo_id = &undo.info.id;
        let error = match back {
            Ok(()) => {
                let _ = self.remove_small(JOURNAL);
                Error::new(
                    ErrorCode::Io,
                    format!(
                        "{what}; the project was put back as it was before the restore (checkpoint {undo_id})"
                    ),
                )
                .detail("state", "before")
            }
            Err(e) => Error::new(
                ErrorCode::Io,
                format!(
                    "{what}; putting the project back failed too ({}), so it is partly restored: the next use of the checkpoints finishes the restore, and restoring checkpoint {undo_id} goes back",
                    e.message
                ),
            )
            .detail("state", "partial"),
        };
        let hint = if full {
            "The project's disk is full: free some space, then restore again."
        } else {
            "Look at the path named, then restore again."
        };
        error
            .hint(hint)
            .retryable(full)
            .detail("checkpoint", id)
            .detail("undo", undo_id.as_str())
            .detail("path", at)
    }
}
