//! Whether the objects a diff or a restore needs are there and whole
//! (each read and hashed before anything is changed), and a check of the
//! whole store (`Store::verify`, `corral-cli checkpoint verify`).

use super::compare::{display, Change};
use super::object::{self, Hash};
use super::tree::{Kind, Tree};
use super::Store;
use cap_std::fs::Dir;
use corral_fs::error::{Error, ErrorCode, Result};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// An object the store should hold and does not, whole.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Damaged {
    /// Its name: the blake3 hash of the bytes it should hold.
    pub object: String,
    /// `missing`, `does not match its hash`, or why it could not be read.
    pub problem: String,
    /// A path it holds (a file's content or a folder's tree), the first found.
    pub path: String,
    /// For a check of the whole store: the checkpoints that need it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub checkpoints: Vec<String>,
}

/// What a check of the whole store found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Verified {
    /// Checkpoints whose every object is there and whole.
    pub whole: Vec<String>,
    /// Distinct objects read and hashed.
    pub objects: usize,
    /// Bytes read.
    pub bytes: u64,
    /// Objects missing or damaged, with the checkpoints that need them.
    pub damaged: Vec<Damaged>,
    /// Checkpoint records that do not read back.
    pub unreadable: Vec<String>,
}

/// What is wrong with an object, or `None` when it is there and whole;
/// with the bytes it holds.
fn problem(store: &Dir, hash: &Hash) -> (Option<String>, u64) {
    let file = match store.open(object::object_path(hash)) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return (Some("missing".to_string()), 0)
        }
        Err(e) => return (Some(format!("cannot be read: {e}")), 0),
    };
    let mut hasher = blake3::Hasher::new();
    if let Err(e) = hasher.update_reader(file) {
        return (Some(format!("cannot be read: {e}")), 0);
    }
    if hasher.finalize().as_bytes() != hash.as_bytes() {
        return (Some("does not match its hash".to_string()), hasher.count());
    }
    (None, hasher.count())
}

/// The blobs a restore of `changes` writes that are missing or damaged
/// (each object read and hashed once).
pub(crate) fn damaged_blobs(store: &Dir, changes: &[Change]) -> Vec<Damaged> {
    let mut seen: HashMap<Hash, ()> = HashMap::new();
    let mut out = Vec::new();
    for change in changes {
        let Some(Kind::File { hash, .. }) = &change.to else {
            continue;
        };
        if seen.insert(*hash, ()).is_some() {
            continue;
        }
        if let (Some(problem), _) = problem(store, hash) {
            out.push(Damaged {
                object: hash.hex(),
                problem,
                path: display(&change.path),
                checkpoints: Vec::new(),
            });
        }
    }
    out
}

/// Most damaged objects an error's message names (its details name all).
const NAMED: usize = 10;

/// The error for a checkpoint whose objects do not check out: what, and
/// that nothing was changed.
pub(crate) fn refuse_damaged(id: &str, damaged: Vec<Damaged>) -> Result<()> {
    if damaged.is_empty() {
        return Ok(());
    }
    let mut named: Vec<String> = damaged
        .iter()
        .take(NAMED)
        .map(|d| format!("`{}` (object {}: {})", d.path, &d.object[..16], d.problem))
        .collect();
    if damaged.len() > NAMED {
        named.push(format!("{} more", damaged.len() - NAMED));
    }
    let objects = match damaged.len() {
        1 => "an object".to_string(),
        n => format!("{n} objects"),
    };
    Err(Error::new(
        ErrorCode::Io,
        format!(
            "checkpoint {id} is damaged: {objects} it needs are missing or do not match their hash: {}; nothing was changed",
            named.join(", ")
        ),
    )
    .hint("`corral-cli checkpoint verify` names the checkpoints that are whole; those still restore, and so does this one for a path it keeps whole (`--path`).")
    .detail("checkpoint", id)
    .detail(
        "damaged",
        serde_json::to_value(&damaged).unwrap_or(serde_json::Value::Null),
    ))
}

impl Store {
    /// Reads and hashes every object every checkpoint needs: the
    /// checkpoints that are whole, and each damaged object with the
    /// checkpoints it breaks. A damaged store is an `io` error whose
    /// details hold that report.
    pub fn verify(&self, root: &corral_fs::root::ProjectRoot) -> Result<Verified> {
        let _locked = self.lock(root)?;
        let mut report = Verified {
            whole: Vec::new(),
            objects: 0,
            bytes: 0,
            damaged: Vec::new(),
            unreadable: Vec::new(),
        };
        // Each object once: its problem, and a path that holds it.
        let mut checked: HashMap<Hash, Option<String>> = HashMap::new();
        let mut broken: BTreeMap<String, Damaged> = BTreeMap::new();
        for id in self.ids()? {
            let Ok(record) = self.record(&id) else {
                report.unreadable.push(id);
                continue;
            };
            let Some(tree) = Hash::from_hex(&record.tree) else {
                report.unreadable.push(id);
                continue;
            };
            let mut found = Vec::new();
            self.walk_objects(&tree, Path::new(""), true, &mut |hash, path| {
                let problem = checked.entry(*hash).or_insert_with(|| {
                    let (problem, bytes) = problem(&self.dir, hash);
                    report.objects += 1;
                    report.bytes += bytes;
                    problem
                });
                if let Some(problem) = problem {
                    found.push((*hash, problem.clone(), display(path)));
                }
                problem.is_none()
            });
            if found.is_empty() {
                report.whole.push(id);
                continue;
            }
            for (hash, problem, path) in found {
                broken
                    .entry(hash.hex())
                    .or_insert_with(|| Damaged {
                        object: hash.hex(),
                        problem,
                        path,
                        checkpoints: Vec::new(),
                    })
                    .checkpoints
                    .push(id.clone());
            }
        }
        report.damaged = broken.into_values().collect();
        if report.damaged.is_empty() && report.unreadable.is_empty() {
            return Ok(report);
        }
        let broken: usize = {
            let mut ids: Vec<&String> = report
                .damaged
                .iter()
                .flat_map(|d| &d.checkpoints)
                .chain(&report.unreadable)
                .collect();
            ids.sort();
            ids.dedup();
            ids.len()
        };
        Err(Error::new(
            ErrorCode::Io,
            format!(
                "the checkpoint store is damaged: {} objects missing or damaged, {} records unreadable; {broken} checkpoints cannot be restored whole, {} are whole",
                report.damaged.len(),
                report.unreadable.len(),
                report.whole.len()
            ),
        )
        .hint("Restore only the checkpoints listed as whole; new checkpoints are taken as usual.")
        .detail("report", serde_json::to_value(&report).unwrap_or(serde_json::Value::Null)))
    }

    /// Calls `visit` with every object a tree reaches (the tree first,
    /// then its entries), each with the path it is at. A tree `visit`
    /// finds damaged (it returns false) is not descended into.
    fn walk_objects(
        &self,
        tree: &Hash,
        at: &Path,
        is_tree: bool,
        visit: &mut dyn FnMut(&Hash, &Path) -> bool,
    ) {
        if !visit(tree, at) || !is_tree {
            return;
        }
        let Ok(bytes) = object::get(&self.dir, tree) else {
            return;
        };
        let Ok(decoded) = Tree::decode(&bytes) else {
            return;
        };
        for entry in decoded.entries {
            let path: PathBuf = at.join(std::ffi::OsStr::from_bytes(&entry.name));
            match entry.kind {
                Kind::File { hash, .. } => self.walk_objects(&hash, &path, false, visit),
                Kind::Dir { hash, .. } => self.walk_objects(&hash, &path, true, visit),
                Kind::Large { .. } | Kind::Symlink { .. } | Kind::Ignored => {}
            }
        }
    }
}
