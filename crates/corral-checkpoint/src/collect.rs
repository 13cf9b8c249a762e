//! Collection: the oldest checkpoints go past the store's cap, and the
//! objects no kept checkpoint reaches are removed.

use crate::object::{self, store_io, Hash};
use crate::scan::Cache;
use crate::store::SNAPSHOTS;
use crate::tree::{Kind, Tree};
use crate::{Collected, Store};
use corral_fs::error::Result;
use corral_fs::root::ProjectRoot;
use std::collections::HashSet;
use std::path::Path;

impl Store {
    /// Drops the oldest checkpoints until the rest fit under the cap, and
    /// removes every object no kept checkpoint reaches.
    pub fn collect(&self, root: &ProjectRoot) -> Result<Collected> {
        let _locked = self.lock(root)?;
        let mut cache = Cache::load(&self.dir);
        self.collect_locked(&mut cache)
    }

    pub(crate) fn collect_locked(&self, cache: &mut Cache) -> Result<Collected> {
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
    pub(crate) fn mark(&self, tree: &Hash, marked: &mut HashSet<Hash>) -> Result<u64> {
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
    pub(crate) fn measure(&self) -> Result<u64> {
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
}
