//! Checkpoints: a snapshot of the project before every change the agent
//! makes (a write, an edit, a delete, a command that is not read-only), so
//! that any of them can be undone, and a restore that puts the whole
//! project, or one path, back the way a snapshot has it, or undoes one
//! call alone (the paths it changed, and only those).
//!
//! The store is a folder of our own outside the project (the app's data
//! folder, or `corral-cli --store`), one per project:
//!
//! ```text
//! objects/ab/cdef…   blobs and trees, named by the blake3 hash of their bytes
//! snapshots/ID.json  one per checkpoint: id, time, tool, label, turn, root tree
//! stat-cache         path → (size, mtime, ctime, inode, hash) of the last scan
//! journal.json       a restore under way (rolled forward at the next open)
//! journal-unfinished-MS.json   one that could not be finished, set aside
//! lock               flock: one writer at a time, across processes
//! tmp/               temp files, renamed into place (swept under the lock)
//! ```
//!
//! ```
//! use corral_checkpoint::{NewCheckpoint, Store};
//! use corral_fs::ProjectRoot;
//!
//! let project = tempfile::tempdir()?;
//! let data = tempfile::tempdir()?;
//! std::fs::write(project.path().join("a.txt"), "one\n")?;
//! let root = ProjectRoot::open(project.path())?;
//! let store = Store::for_project(data.path(), &root)?;
//! let before = store.checkpoint(&root, NewCheckpoint::manual("before"))?;
//! std::fs::write(project.path().join("a.txt"), "two\n")?;
//! std::fs::write(project.path().join("new.txt"), "new\n")?;
//! let plan = store.diff(&root, &before.id, None)?;
//! assert_eq!((plan.counts.modified, plan.counts.removed), (1, 1));
//! store.restore(&root, &before.id, None)?;
//! assert_eq!(std::fs::read_to_string(project.path().join("a.txt"))?, "one\n");
//! assert!(!project.path().join("new.txt").exists());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod compare;
#[cfg(test)]
mod fault_tests;
mod journal;
mod object;
mod preflight;
mod restore;
mod scan;
mod tree;
mod verify;

pub use compare::{ChangeCounts, ChangeStatus, EntryKind, FileChange};
use journal::Part;
use restore::Scope;
pub use restore::Skipped;
pub use verify::{Damaged, Verified};

use cap_std::fs::{Dir, OpenOptions, OpenOptionsExt};
use compare::{Change, Loader};
use corral_fs::error::{Error, ErrorCode, Result};
use corral_fs::root::ProjectRoot;
use object::{store_io, Hash};
use scan::{Cache, Keep, Scan};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::{BTreeSet, HashSet};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tree::{Kind, Tree};

/// The default cap on a project's store: past it the oldest checkpoints go.
pub const DEFAULT_CAP_BYTES: u64 = 2 * 1024 * 1024 * 1024;

/// One checkpoint, as listed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
pub struct Checkpoint {
    /// Increasing with time; what `diff` and `restore` take.
    pub id: String,
    /// Milliseconds since the Unix epoch.
    #[ts(type = "number")]
    pub time: u64,
    /// The tool whose call it was taken before (`write_file`, `exec_shell`,
    /// ...), `restore` before a restore, `manual` when asked for.
    pub tool: String,
    /// What the call was about: its path, or its command line.
    pub label: String,
    /// The user turn of the call (the app's turn id).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub turn: Option<String>,
    /// The tool call (the model's tool-use id).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub call_id: Option<String>,
    /// The first checkpoint of its turn: the state before the turn changed anything.
    pub turn_start: bool,
    /// Files (and links) in the snapshot.
    pub files: usize,
    /// What changed since the checkpoint before this one.
    pub files_changed: ChangeCounts,
    /// Files over 64 MiB: recorded, not kept; a restore says so.
    #[serde(default)]
    pub too_large: Vec<String>,
}

/// A checkpoint as stored: what is listed, and its root tree.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Record {
    #[serde(flatten)]
    info: Checkpoint,
    tree: String,
}

/// What a new checkpoint is about.
#[derive(Debug, Clone, Default)]
pub struct NewCheckpoint {
    pub tool: String,
    pub label: String,
    pub turn: Option<String>,
    pub call_id: Option<String>,
}

impl NewCheckpoint {
    /// A checkpoint asked for by name, not before a tool call.
    pub fn manual(label: &str) -> NewCheckpoint {
        NewCheckpoint {
            tool: "manual".to_string(),
            label: label.to_string(),
            ..NewCheckpoint::default()
        }
    }
}

/// What differs between two states of the project.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
pub struct Comparison {
    /// A checkpoint id, or `current` for the project as it is.
    pub from: String,
    pub to: String,
    /// The one path compared, when not the whole project.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub path: Option<String>,
    pub counts: ChangeCounts,
    pub changes: Vec<FileChange>,
    /// For a restore: what it will leave as it is, and why.
    pub skipped: Vec<Skipped>,
}

/// What a restore did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
pub struct Restored {
    /// The checkpoint restored.
    pub restored: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub path: Option<String>,
    /// The checkpoint taken just before: restoring it undoes this restore.
    pub undo: String,
    pub counts: ChangeCounts,
    pub changes: Vec<FileChange>,
    pub skipped: Vec<Skipped>,
}

/// What undoing one call would do (`Store::call_undo_diff`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
pub struct CallUndo {
    /// The checkpoint taken just before the call.
    pub checkpoint: String,
    /// Where the call's changes end: the next checkpoint, or `current` (no
    /// checkpoint was taken after it).
    pub until: String,
    /// What the call changed (from `checkpoint` to `until`): what the undo
    /// puts back, and nothing else.
    pub paths: Vec<String>,
    /// Of those, the ones changed again after `until` (by a later call or by
    /// hand): the undo loses those later changes too.
    pub changed_later: Vec<String>,
    /// What the undo will change: the project as it is against the
    /// checkpoint, for those paths only.
    pub plan: Comparison,
}

/// What a collection did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Collected {
    /// Checkpoints dropped, oldest first.
    pub dropped: Vec<String>,
    /// Objects removed, and the bytes the store holds now.
    pub objects_removed: usize,
    pub bytes: u64,
}

/// One project's checkpoint store.
#[derive(Debug)]
pub struct Store {
    path: PathBuf,
    dir: Dir,
    cap: u64,
    /// What the store had to do that someone should know of (a journal
    /// set aside), until a host takes it ([`Store::take_warnings`]).
    warnings: std::sync::Mutex<Vec<String>>,
}

/// The folder of `root`'s store under `base` (a data folder):
/// `base/checkpoints/NAME-HASH`, the hash of the root's real path.
pub fn store_path(base: &Path, root: &ProjectRoot) -> PathBuf {
    let name: String = root
        .name()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .take(40)
        .collect();
    let hash = Hash::of(root.path().as_os_str().as_encoded_bytes()).hex();
    base.join("checkpoints")
        .join(format!("{name}-{}", &hash[..16]))
}

/// The user's data folder, shared with the app (Tauri's app data folder on
/// Linux): `$XDG_DATA_HOME/dev.corral.desktop`, else
/// `~/.local/share/dev.corral.desktop`.
pub fn default_data_dir() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_DATA_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| {
            std::env::var_os("HOME")
                .map(PathBuf::from)
                .filter(|p| p.is_absolute())
                .map(|home| home.join(".local/share"))
        })?;
    Some(base.join("dev.corral.desktop"))
}

/// Run under the store's lock; dropped, it unlocks.
struct Locked {
    _file: cap_std::fs::File,
}

const SNAPSHOTS: &str = "snapshots";
const JOURNAL: &str = "journal.json";

impl Store {
    /// The store of `root` under the data folder `base`, created if needed.
    pub fn for_project(base: &Path, root: &ProjectRoot) -> Result<Store> {
        let store = Store::open(&store_path(base, root), DEFAULT_CAP_BYTES)?;
        store.check_outside(root)?;
        // For people looking at the folder: whose store it is.
        let _ = store.write_small("project", root.path().as_os_str().as_encoded_bytes());
        Ok(store)
    }

    /// Opens (creating) a store folder, private to the user.
    pub fn open(path: &Path, cap: u64) -> Result<Store> {
        let shown = path.display().to_string();
        if path.components().any(|c| {
            c.as_os_str()
                .as_encoded_bytes()
                .eq_ignore_ascii_case(b".git")
        }) {
            return Err(Error::invalid_input(format!(
                "the checkpoint store `{shown}` would be inside a `.git` folder"
            ))
            .hint("Give a store folder outside any repository's `.git`."));
        }
        Dir::create_ambient_dir_all(path, cap_std::ambient_authority())
            .map_err(|e| store_io(&e, &format!("create its folder `{shown}`")))?;
        let dir = Dir::open_ambient_dir(path, cap_std::ambient_authority())
            .map_err(|e| store_io(&e, &format!("open its folder `{shown}`")))?;
        if let Ok(fd) = object::folder_fd(&dir, Path::new(".")) {
            let _ = rustix::fs::fchmod(&fd, rustix::fs::Mode::from_raw_mode(0o700));
        }
        for sub in ["objects", SNAPSHOTS, "tmp"] {
            match dir.create_dir(sub) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(store_io(&e, "create its folders")),
            }
        }
        let path = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        Ok(Store {
            path,
            dir,
            cap,
            warnings: std::sync::Mutex::default(),
        })
    }

    /// The store's folder.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The byte cap past which the oldest checkpoints go.
    pub fn cap(&self) -> u64 {
        self.cap
    }

    /// The warnings since the last call, oldest first (each is said once).
    pub fn take_warnings(&self) -> Vec<String> {
        let mut warnings = self
            .warnings
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        std::mem::take(&mut *warnings)
    }

    fn warn(&self, warning: String) {
        self.warnings
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(warning);
    }

    /// A store inside the project would be snapshotted, and changed by
    /// the agent: refused.
    fn check_outside(&self, root: &ProjectRoot) -> Result<()> {
        if self.path.starts_with(root.path()) {
            return Err(Error::invalid_input(format!(
                "the checkpoint store `{}` is inside the project `{}`",
                self.path.display(),
                root.path().display()
            ))
            .hint("Keep checkpoints outside the project folder (the default is the user's data folder)."));
        }
        Ok(())
    }

    /// Takes the store's lock (waiting for another process to finish),
    /// sweeps temp files a killed process left, and finishes a restore a
    /// killed process left half done.
    fn lock(&self, root: &ProjectRoot) -> Result<Locked> {
        self.check_outside(root)?;
        let mut options = OpenOptions::new();
        options.read(true).write(true).create(true).mode(0o600);
        let file = self
            .dir
            .open_with("lock", &options)
            .map_err(|e| store_io(&e, "open its lock"))?;
        rustix::fs::flock(&file, rustix::fs::FlockOperation::LockExclusive)
            .map_err(|e| store_io(&e.into(), "take its lock"))?;
        let locked = Locked { _file: file };
        if let Ok(entries) = self.dir.read_dir("tmp") {
            for entry in entries.flatten() {
                let _ = self
                    .dir
                    .remove_file(Path::new("tmp").join(entry.file_name()));
            }
        }
        self.finish_journal(root)?;
        Ok(locked)
    }

    /// Takes a checkpoint of the project.
    pub fn checkpoint(&self, root: &ProjectRoot, new: NewCheckpoint) -> Result<Checkpoint> {
        let _locked = self.lock(root)?;
        let (record, _) = self.checkpoint_locked(root, new)?;
        let mut cache = Cache::load(&self.dir);
        if cache.usage > self.cap {
            // The checkpoint is taken; a collection that fails (a damaged
            // older checkpoint) is tried again after the next one.
            let _ = self.collect_locked(&mut cache);
        }
        Ok(record.info)
    }

    fn checkpoint_locked(&self, root: &ProjectRoot, new: NewCheckpoint) -> Result<(Record, Scan)> {
        let old = Cache::load(&self.dir);
        let mut scan = scan::scan(root, &self.dir, &old, Keep::Store)?;
        self.sync_objects(&scan)?;
        let previous = self.latest()?;
        // What changed since the last one; a damaged older checkpoint only
        // loses this count, it never stops a new checkpoint.
        let files_changed = previous
            .as_ref()
            .and_then(|prev| Hash::from_hex(&prev.tree))
            .and_then(|tree| {
                let loader = Loader {
                    store: &self.dir,
                    scan: Some(&scan),
                    root: None,
                };
                compare::changes(&loader, &tree, &scan.root).ok()
            })
            .map(|changes| compare::count(&changes))
            .unwrap_or_default();
        let now = now_ms();
        let id = match previous
            .as_ref()
            .and_then(|p| p.info.id.parse::<u64>().ok())
        {
            Some(last) if last >= now => last + 1,
            _ => now,
        };
        let turn_start = new.turn.is_some()
            && previous.as_ref().and_then(|p| p.info.turn.as_ref()) != new.turn.as_ref();
        let record = Record {
            info: Checkpoint {
                id: format!("{id:013}"),
                time: now,
                tool: new.tool,
                label: new.label,
                turn: new.turn,
                call_id: new.call_id,
                turn_start,
                files: scan.files,
                files_changed,
                too_large: std::mem::take(&mut scan.too_large),
            },
            tree: scan.root.hex(),
        };
        let json = serde_json::to_vec_pretty(&record).map_err(|e| {
            Error::new(ErrorCode::Io, format!("could not encode a checkpoint: {e}"))
        })?;
        self.write_durable(
            &Path::new(SNAPSHOTS).join(format!("{}.json", record.info.id)),
            &json,
        )?;
        // The cache (and the byte count in it, of objects only) is written
        // again only when it changed: a checkpoint of an unchanged project
        // writes its record and nothing else.
        let mut cache = std::mem::take(&mut scan.cache);
        let usage = cache.usage;
        cache.usage = if usage == 0 {
            self.measure()?
        } else {
            usage + scan.written
        };
        if scan.cache_changed || cache.usage != usage {
            cache.save(&self.dir)?;
        }
        Ok((record, scan))
    }

    /// Makes the objects a scan wrote durable before a snapshot names them:
    /// each one synced when there are few, the file system when many.
    fn sync_objects(&self, scan: &Scan) -> Result<()> {
        if scan.new_objects == 0 {
            return Ok(());
        }
        object::folder_fd(&self.dir, Path::new("."))
            .and_then(|fd| object::sync_filesystem(&fd))
            .map_err(|e| store_io(&e, "sync its objects"))
    }

    /// Every checkpoint, oldest first.
    pub fn list(&self, root: &ProjectRoot) -> Result<Vec<Checkpoint>> {
        let _locked = self.lock(root)?;
        Ok(self.records()?.into_iter().map(|r| r.info).collect())
    }

    /// One checkpoint.
    pub fn get(&self, id: &str) -> Result<Checkpoint> {
        Ok(self.record(id)?.info)
    }

    fn ids(&self) -> Result<Vec<String>> {
        let mut ids: Vec<String> = self
            .dir
            .read_dir(SNAPSHOTS)
            .map_err(|e| store_io(&e, "list its checkpoints"))?
            .flatten()
            .filter_map(|e| {
                let name = e.file_name().into_string().ok()?;
                let id = name.strip_suffix(".json")?;
                valid_id(id).then(|| id.to_string())
            })
            .collect();
        ids.sort();
        Ok(ids)
    }

    fn records(&self) -> Result<Vec<Record>> {
        // A record that does not read back is skipped, not fatal.
        Ok(self
            .ids()?
            .iter()
            .filter_map(|id| self.record(id).ok())
            .collect())
    }

    fn latest(&self) -> Result<Option<Record>> {
        for id in self.ids()?.iter().rev() {
            if let Ok(record) = self.record(id) {
                return Ok(Some(record));
            }
        }
        Ok(None)
    }

    fn record(&self, id: &str) -> Result<Record> {
        let missing = || {
            Error::new(
                ErrorCode::NotFound,
                format!("there is no checkpoint `{id}`"),
            )
            .hint("List the checkpoints to see their ids.")
            .detail("id", id)
        };
        if !valid_id(id) {
            return Err(missing());
        }
        let bytes = self
            .read_small(&format!("{SNAPSHOTS}/{id}.json"))?
            .ok_or_else(missing)?;
        serde_json::from_slice(&bytes)
            .map_err(|_| object::corrupt(&format!("checkpoint {id} does not read back")))
    }

    fn tree_of(record: &Record) -> Result<Hash> {
        Hash::from_hex(&record.tree).ok_or_else(|| object::corrupt("a checkpoint names no tree"))
    }

    /// What restoring checkpoint `id` (or only `path`) would change: the
    /// project as it is (`a/`) against the checkpoint (`b/`).
    pub fn diff(&self, root: &ProjectRoot, id: &str, path: Option<&str>) -> Result<Comparison> {
        let _locked = self.lock(root)?;
        let target = self.record(id)?;
        let scope = self.only(root, path)?;
        let current = scan::scan(root, &self.dir, &Cache::load(&self.dir), Keep::DryRun)?;
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
                let scan = scan::scan(root, &self.dir, &Cache::load(&self.dir), Keep::DryRun)?;
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
    fn next_after(&self, id: &str) -> Result<Option<Record>> {
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
        let current = scan::scan(root, &self.dir, &Cache::load(&self.dir), Keep::DryRun)?;
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
    fn only(&self, root: &ProjectRoot, path: Option<&str>) -> Result<Scope> {
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

    /// Drops the oldest checkpoints until the rest fit under the cap, and
    /// removes every object no kept checkpoint reaches.
    pub fn collect(&self, root: &ProjectRoot) -> Result<Collected> {
        let _locked = self.lock(root)?;
        let mut cache = Cache::load(&self.dir);
        self.collect_locked(&mut cache)
    }

    fn collect_locked(&self, cache: &mut Cache) -> Result<Collected> {
        let mut records = self.records()?;
        records.reverse(); // newest first
        let mut reachable: HashSet<Hash> = HashSet::new();
        let mut total = 0u64;
        let mut keep = 0;
        for (i, record) in records.iter().enumerate() {
            let mut marked = reachable.clone();
            let added = self.mark(&Store::tree_of(record)?, &mut marked)?;
            if i > 0 && total + added > self.cap {
                break;
            }
            total += added;
            reachable = marked;
            keep = i + 1;
        }
        let dropped: Vec<String> = records[keep..]
            .iter()
            .rev()
            .map(|r| r.info.id.clone())
            .collect();
        for id in &dropped {
            self.remove_small(&format!("{SNAPSHOTS}/{id}.json"))?;
        }
        // The cache never names an object that is about to go.
        cache.map.retain(|_, (_, hash)| reachable.contains(hash));
        cache.usage = total.max(1);
        cache.save(&self.dir)?;
        let mut removed = 0;
        for fan in self
            .dir
            .read_dir("objects")
            .map_err(|e| store_io(&e, "list its objects"))?
            .flatten()
        {
            let fan_name = fan.file_name().to_string_lossy().into_owned();
            let Ok(objects) = self.dir.read_dir(Path::new("objects").join(&fan_name)) else {
                continue;
            };
            for object in objects.flatten() {
                let name = object.file_name().to_string_lossy().into_owned();
                let keep = Hash::from_hex(&format!("{fan_name}{name}"))
                    .is_some_and(|h| reachable.contains(&h));
                if !keep {
                    let _ = self
                        .dir
                        .remove_file(Path::new("objects").join(&fan_name).join(&name));
                    removed += 1;
                }
            }
        }
        Ok(Collected {
            dropped,
            objects_removed: removed,
            bytes: total,
        })
    }

    /// Marks every object a tree reaches; returns the bytes of those not
    /// marked before.
    fn mark(&self, tree: &Hash, marked: &mut HashSet<Hash>) -> Result<u64> {
        if !marked.insert(*tree) {
            return Ok(0);
        }
        let bytes = object::get(&self.dir, tree)?;
        let mut added = bytes.len() as u64;
        for entry in Tree::decode(&bytes)?.entries {
            match entry.kind {
                Kind::File { hash, size, .. } if marked.insert(hash) => added += size,
                Kind::Dir { hash, .. } => added += self.mark(&hash, marked)?,
                _ => {}
            }
        }
        Ok(added)
    }

    /// Bytes of every object in the store.
    fn measure(&self) -> Result<u64> {
        let mut total = 0;
        for fan in self
            .dir
            .read_dir("objects")
            .map_err(|e| store_io(&e, "list its objects"))?
            .flatten()
        {
            if let Ok(objects) = self
                .dir
                .read_dir(Path::new("objects").join(fan.file_name()))
            {
                for object in objects.flatten() {
                    total += object.metadata().map(|m| m.len()).unwrap_or(0);
                }
            }
        }
        Ok(total.max(1))
    }

    /// Bytes the store's objects take (as last measured, plus writes since).
    pub fn usage(&self, root: &ProjectRoot) -> Result<u64> {
        let _locked = self.lock(root)?;
        self.measure()
    }

    fn read_small(&self, path: &str) -> Result<Option<Vec<u8>>> {
        match self.dir.open(path) {
            Ok(mut file) => {
                let mut bytes = Vec::new();
                file.read_to_end(&mut bytes)
                    .map_err(|e| store_io(&e, "read a record"))?;
                Ok(Some(bytes))
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(store_io(&e, "read a record")),
        }
    }

    fn write_small(&self, path: &str, bytes: &[u8]) -> Result<()> {
        let tmp = object::write_temp(&self.dir, bytes)?;
        self.dir
            .rename(&tmp, &self.dir, path)
            .map_err(|e| store_io(&e, "write a record"))
    }

    /// Temp file, fsync, rename, fsync of the folder: after a crash the
    /// record is there whole or not at all.
    fn write_durable(&self, path: &Path, bytes: &[u8]) -> Result<()> {
        let tmp = object::write_temp(&self.dir, bytes)?;
        self.dir
            .open(&tmp)
            .and_then(|f| f.sync_all())
            .and_then(|()| self.dir.rename(&tmp, &self.dir, path))
            .map_err(|e| store_io(&e, "write a record"))?;
        let parent = path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let _ = object::folder_fd(&self.dir, parent).map(|fd| rustix::fs::fsync(&fd));
        Ok(())
    }

    fn remove_small(&self, path: &str) -> Result<()> {
        match self.dir.remove_file(path) {
            Ok(()) => {
                let parent = Path::new(path)
                    .parent()
                    .filter(|p| !p.as_os_str().is_empty())
                    .unwrap_or(Path::new("."));
                let _ = object::folder_fd(&self.dir, parent).map(|fd| rustix::fs::fsync(&fd));
                Ok(())
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(store_io(&e, "remove a record")),
        }
    }
}

/// The changes a restore of `scope` makes.
fn selected(changes: &[Change], scope: &Scope) -> Vec<Change> {
    changes
        .iter()
        .filter(|c| scope.includes(c))
        .cloned()
        .collect()
}

/// The paths `changes` touch, and only those: what undoing them puts back.
fn changed_paths(changes: &[Change]) -> Scope {
    Scope::Exactly(
        changes
            .iter()
            .map(|c| c.path.clone())
            .collect::<BTreeSet<PathBuf>>(),
    )
}

/// What a restore will leave as it is, known before it starts.
fn foreseen_skips(changes: &[Change]) -> Vec<Skipped> {
    let mut out = Vec::new();
    for change in changes {
        let path = compare::display(&change.path);
        if let Some(Kind::Large { size, .. }) = &change.to {
            out.push(Skipped {
                path,
                reason: restore::large_not_kept(*size),
                ignored: false,
            });
        } else if let (Some(Kind::Large { size, .. }), None) = (&change.from, &change.to) {
            out.push(Skipped {
                path,
                reason: restore::large_kept(*size),
                ignored: false,
            });
        }
    }
    out
}

/// Most ignored entries a diff or restore names; past it, one line says how
/// many more.
const MAX_IGNORED_SHOWN: usize = 100;

/// The ignored entries that differ between the project now and the
/// checkpoint, under `scope`: a restore leaves each as it is (nothing of
/// an ignored entry is kept, so nothing of it can be put back or checked).
fn ignored_skips(ignored: &[Change], scope: &Scope) -> Vec<Skipped> {
    let chosen: Vec<&Change> = ignored.iter().filter(|c| scope.includes(c)).collect();
    let mut out: Vec<Skipped> = chosen
        .iter()
        .take(MAX_IGNORED_SHOWN)
        .map(|change| {
            let why = match (&change.from, &change.to) {
                (Some(Kind::Ignored), None) => {
                    "not there when the checkpoint was taken; left as it is"
                }
                (None, _) => {
                    "there when the checkpoint was taken; nothing of it was kept to bring back"
                }
                (Some(Kind::Ignored), Some(_)) => {
                    "the ignore rules leave it out now; left as it is"
                }
                (Some(_), _) => {
                    "the ignore rules left it out when the checkpoint was taken; left as it is"
                }
            };
            Skipped {
                path: compare::display(&change.path),
                reason: format!("ignored, not kept: {why}"),
                ignored: true,
            }
        })
        .collect();
    if chosen.len() > MAX_IGNORED_SHOWN {
        out.push(Skipped {
            path: "…".to_string(),
            reason: format!(
                "ignored, not kept: {} more ignored entries differ, each left as it is",
                chosen.len() - MAX_IGNORED_SHOWN
            ),
            ignored: true,
        });
    }
    out
}

fn valid_id(id: &str) -> bool {
    !id.is_empty() && id.len() <= 20 && id.bytes().all(|b| b.is_ascii_digit())
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// What a checkpoint before a call is labelled with: the call's path, or
/// its command line (cut at 120 characters).
pub fn label(tool: &str, input: &Value) -> String {
    let text = if let Some(path) = input.get("path").and_then(Value::as_str) {
        path.to_string()
    } else if let Some(command) = input.get("command").and_then(Value::as_str) {
        let args = input
            .get("args")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .map(|v| {
                        v.as_str()
                            .map(str::to_string)
                            .unwrap_or_else(|| v.to_string())
                    })
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .unwrap_or_default();
        format!("{command} {args}").trim().to_string()
    } else {
        tool.to_string()
    };
    let cut: String = text.chars().take(120).collect();
    if cut.len() < text.len() {
        format!("{cut}…")
    } else {
        cut
    }
}

/// Takes a checkpoint before each call that can change the project
/// (`dispatch::call` asks it, from the tool's risk and read-only verdict).
#[derive(Debug, Clone)]
pub struct Hook {
    pub store: Arc<Store>,
    /// The user turn the call belongs to.
    pub turn: Option<String>,
    /// The model's id for the call.
    pub call_id: Option<String>,
}

impl Hook {
    /// A checkpoint labelled with the call.
    pub fn before(&self, root: &ProjectRoot, tool: &str, input: &Value) -> Result<Checkpoint> {
        self.store.checkpoint(
            root,
            NewCheckpoint {
                tool: tool.to_string(),
                label: label(tool, input),
                turn: self.turn.clone(),
                call_id: self.call_id.clone(),
            },
        )
    }
}
