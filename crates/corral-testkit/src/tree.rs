//! A folder's whole state, to compare before and after: every entry's
//! kind, mode and bytes (a link's target), so a test can say "exactly as
//! before or exactly as after" of a call that was killed or failed.
//!
//! Shared by path (`#[path]`) with the crates below the kit, whose tests
//! cannot depend on it (corral-checkpoint's fault tests), and with
//! corral-cli's suite. So it uses nothing but std.

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// Every entry under a folder, by its path beneath it: kind (`f`, `d`,
/// `l`), permission bits, and a file's bytes or a link's target.
pub type Tree = BTreeMap<PathBuf, (char, u32, Vec<u8>)>;

/// The state of everything under `dir` (links are not followed).
pub fn snapshot(dir: &Path) -> Tree {
    let mut out = Tree::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            let rel = path.strip_prefix(dir).unwrap().to_path_buf();
            let meta = std::fs::symlink_metadata(&path).unwrap();
            let mode = meta.permissions().mode() & 0o7777;
            if meta.file_type().is_symlink() {
                let target = std::fs::read_link(&path).unwrap();
                out.insert(rel, ('l', 0, target.into_os_string().into_encoded_bytes()));
            } else if meta.is_dir() {
                out.insert(rel, ('d', mode, Vec::new()));
                stack.push(path);
            } else {
                out.insert(rel, ('f', mode, std::fs::read(&path).unwrap()));
            }
        }
    }
    out
}

/// The first few entries that differ between two states, for a failure
/// message.
pub fn differences(a: &Tree, b: &Tree) -> Vec<String> {
    let mut out = Vec::new();
    for (path, entry) in a {
        match b.get(path) {
            None => out.push(format!("only before: {}", path.display())),
            Some(other) if other != entry => out.push(format!("differs: {}", path.display())),
            Some(_) => {}
        }
    }
    for path in b.keys().filter(|p| !a.contains_key(*p)) {
        out.push(format!("only after: {}", path.display()));
    }
    out.truncate(8);
    out
}
