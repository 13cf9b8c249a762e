//! `list_directory`: a folder's entries, a few levels deep.

use crate::error::{Error, ErrorCode, Result};
use crate::root::{ProjectRoot, RelPath};
use serde::{Deserialize, Serialize};

/// Entries returned at most.
pub const MAX_ENTRIES: usize = 1000;
/// Folders listed but never descended into.
const NOT_DESCENDED: [&str; 2] = ["node_modules", "target"];

/// Input of `list_directory`.
#[derive(Debug, Clone, Default, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListDirectoryInput {
    /// Folder relative to the project root (default `.`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// How many levels to list, 1 to 5 (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 5))]
    pub depth: Option<u8>,
}

/// What an entry is. Symlinks are reported, never followed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum EntryKind {
    File,
    Dir,
    Symlink,
}

/// One listed entry.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize, ts_rs::TS)]
#[ts(rename = "DirEntry")]
pub struct ListEntry {
    /// Relative to the project root.
    pub path: String,
    pub kind: EntryKind,
    /// Size in bytes, for files.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional, type = "number")]
    pub size: Option<u64>,
}

/// Output of `list_directory`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize, ts_rs::TS)]
pub struct ListDirectoryOutput {
    pub path: String,
    pub entries: Vec<ListEntry>,
    pub truncated: bool,
}

/// Lists a folder, depth-first, sorted by name. Skips `.git/`; lists
/// `node_modules/` and `target/` without descending into them.
pub fn list_directory(
    root: &ProjectRoot,
    input: &ListDirectoryInput,
) -> Result<ListDirectoryOutput> {
    let depth = input.depth.unwrap_or(1);
    if !(1..=5).contains(&depth) {
        return Err(
            Error::invalid_input(format!("depth must be 1 to 5, not {depth}"))
                .detail("depth", depth),
        );
    }
    let rel = root.resolve(input.path.as_deref().unwrap_or("."))?;
    let shown = rel.display();
    let meta = root
        .dir()
        .metadata(rel.as_path())
        .map_err(|e| Error::from_io(&e, &shown))?;
    if !meta.is_dir() {
        return Err(Error::new(
            ErrorCode::NotADirectory,
            format!("`{shown}` is a file, not a folder"),
        )
        .hint("Use read_file for files.")
        .detail("path", shown));
    }
    let mut out = ListDirectoryOutput {
        path: shown,
        entries: Vec::new(),
        truncated: false,
    };
    walk(root, &rel, depth, &mut out)?;
    Ok(out)
}

fn walk(root: &ProjectRoot, rel: &RelPath, depth: u8, out: &mut ListDirectoryOutput) -> Result<()> {
    let shown = rel.display();
    let read = root
        .dir()
        .read_dir(rel.as_path())
        .map_err(|e| Error::from_io(&e, &shown))?;
    let mut entries: Vec<_> = read.filter_map(|entry| entry.ok()).collect();
    entries.sort_by_key(|entry| entry.file_name());
    for entry in entries {
        let name = entry.file_name();
        if name == ".git" {
            continue;
        }
        if out.entries.len() >= MAX_ENTRIES {
            out.truncated = true;
            return Ok(());
        }
        let child = rel.join(&name);
        let Ok(file_type) = entry.file_type() else {
            continue;
        };
        let (kind, size) = if file_type.is_symlink() {
            (EntryKind::Symlink, None)
        } else if file_type.is_dir() {
            (EntryKind::Dir, None)
        } else {
            (EntryKind::File, entry.metadata().ok().map(|m| m.len()))
        };
        out.entries.push(ListEntry {
            path: child.display(),
            kind,
            size,
        });
        let descend =
            kind == EntryKind::Dir && depth > 1 && !NOT_DESCENDED.iter().any(|skip| name == *skip);
        if descend {
            walk(root, &child, depth - 1, out)?;
        }
    }
    Ok(())
}
