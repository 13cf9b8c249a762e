//! The store itself: opening it, its lock (which finishes a restore a
//! killed process left), taking a checkpoint, reading the records, and
//! the small files it writes durably.

use crate::compare::{self, Loader};
use crate::object::{self, store_io, Hash};
use crate::scan::{self, Cache, Keep, Scan};
use crate::store_path;
use crate::{Checkpoint, NewCheckpoint, Record, Store, DEFAULT_CAP_BYTES};
use cap_std::fs::{Dir, OpenOptions, OpenOptionsExt};
use corral_fs::error::{Error, ErrorCode, Result};
use corral_fs::root::ProjectRoot;
use std::io::Read;
use std::path::Path;

/// Run under the store's lock; dropped, it unlocks.
pub(crate) struct Locked {
    _file: cap_std::fs::File,
}

pub(crate) const SNAPSHOTS: &str = "snapshots";
pub(crate) const JOURNAL: &str = "journal.json";

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

    pub(crate) fn warn(&self, warning: String) {
        self.warnings
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(warning);
    }

    /// A store inside the project would be snapshotted, and changed by
    /// the agent: refused.
    pub(crate) fn check_outside(&self, root: &ProjectRoot) -> Result<()> {
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
    pub(crate) fn lock(&self, root: &ProjectRoot) -> Result<Locked> {
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
        let (record, mut scan) = self.checkpoint_locked(root, new)?;
        // The cache as the checkpoint left it (saved when it changed).
        let mut cache = std::mem::take(&mut scan.cache);
        if cache.usage > self.cap {
            // The checkpoint is taken; a collection that fails (a damaged
            // older checkpoint) is tried again after the next one.
            let _ = self.collect_locked(&mut cache);
        }
        Ok(record.info)
    }

    pub(crate) fn checkpoint_locked(
        &self,
        root: &ProjectRoot,
        new: NewCheckpoint,
    ) -> Result<(Record, Scan)> {
        let old = Cache::load(&self.dir);
        let mut scan = scan::scan(root, &self.dir, old, Keep::Store)?;
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
        scan.cache = cache;
        Ok((record, scan))
    }

    /// Makes the objects a scan wrote durable before a snapshot names them:
    /// each one synced when there are few, the file system when many.
    pub(crate) fn sync_objects(&self, scan: &Scan) -> Result<()> {
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

    pub(crate) fn ids(&self) -> Result<Vec<String>> {
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

    pub(crate) fn records(&self) -> Result<Vec<Record>> {
        // A record that does not read back is skipped, not fatal.
        Ok(self
            .ids()?
            .iter()
            .filter_map(|id| self.record(id).ok())
            .collect())
    }

    pub(crate) fn latest(&self) -> Result<Option<Record>> {
        for id in self.ids()?.iter().rev() {
            if let Ok(record) = self.record(id) {
                return Ok(Some(record));
            }
        }
        Ok(None)
    }

    pub(crate) fn record(&self, id: &str) -> Result<Record> {
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

    pub(crate) fn tree_of(record: &Record) -> Result<Hash> {
        Hash::from_hex(&record.tree).ok_or_else(|| object::corrupt("a checkpoint names no tree"))
    }

    pub(crate) fn read_small(&self, path: &str) -> Result<Option<Vec<u8>>> {
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

    pub(crate) fn write_small(&self, path: &str, bytes: &[u8]) -> Result<()> {
        let tmp = object::write_temp(&self.dir, bytes)?;
        self.dir
            .rename(&tmp, &self.dir, path)
            .map_err(|e| store_io(&e, "write a record"))
    }

    /// Temp file, fsync, rename, fsync of the folder: after a crash the
    /// record is there whole or not at all.
    pub(crate) fn write_durable(&self, path: &Path, bytes: &[u8]) -> Result<()> {
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

    pub(crate) fn remove_small(&self, path: &str) -> Result<()> {
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

pub(crate) fn valid_id(id: &str) -> bool {
    !id.is_empty() && id.len() <= 20 && id.bytes().all(|b| b.is_ascii_digit())
}

pub(crate) fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}
