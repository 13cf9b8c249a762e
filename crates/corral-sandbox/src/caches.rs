//! Corral's own package caches: the one place outside the project where
//! what a sandboxed child writes survives the call.
//!
//! The user's `~/.cargo` and `~/.npm` are never written from inside: a
//! child could otherwise plant a modified crate source or `npx` package
//! that the user's own builds (outside Corral) run later. The child's
//! caches live in `corral/sandbox` under the user's cache folder
//! (`$XDG_CACHE_HOME`, else `~/.cache`), which only sandboxed programs use,
//! and reach them through the variables each tool reads ([`vars`]).
//!
//! cargo's is a whole cargo home (`CARGO_HOME`): its registry starts as a
//! copy of the user's index and downloaded crates, made once when it is
//! created (a folder no child has touched yet), so offline builds keep
//! working; sources are unpacked from those into it as cargo needs them.

// Writes Corral's own cache folder, never the project.
#![allow(clippy::disallowed_methods)]

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// The folder holding Corral's caches, if a home or cache folder is known.
pub(crate) fn dir() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| super::home::home().map(|h| h.join(".cache")))?;
    Some(base.join("corral").join("sandbox"))
}

/// Each tool's cache inside [`dir`], and the variable that points it there.
const TOOL_CACHES: [(&str, &str); 8] = [
    ("npm_config_cache", "npm"),
    ("YARN_CACHE_FOLDER", "yarn"),
    ("YARN_GLOBAL_FOLDER", "yarn-berry"),
    ("npm_config_store_dir", "pnpm-store"),
    ("BUN_INSTALL_CACHE_DIR", "bun"),
    ("GOMODCACHE", "go-mod"),
    ("XDG_CACHE_HOME", "xdg"),
    ("CARGO_HOME", "cargo"),
];

/// The variables pointing each tool at its cache in `dir`.
pub(crate) fn vars(dir: &Path) -> Vec<(OsString, OsString)> {
    TOOL_CACHES
        .iter()
        .map(|(var, sub)| ((*var).into(), dir.join(sub).into_os_string()))
        .collect()
}

/// Creates the cache folder (0700) and its tool folders where it is
/// missing, and cargo's registry from the user's the first time. Best
/// effort: a tool without its cache reports its own error. A tool's own
/// folder that goes missing later is made again by the tool (the cache
/// folder is writable to it), so a command where the folder is there pays
/// one `stat`, not a `mkdir` per tool.
pub(crate) fn prepare(dir: &Path, program: &str) {
    use std::os::unix::fs::DirBuilderExt;
    if !dir.is_dir() {
        let mut builder = std::fs::DirBuilder::new();
        builder.recursive(true).mode(0o700);
        for (_, sub) in TOOL_CACHES {
            let _ = builder.create(dir.join(sub));
        }
    }
    if program == "cargo" {
        seed_cargo(&dir.join("cargo"));
    }
}

/// Copies the user's cargo index and downloaded crates into a new cargo
/// registry, once. Copied, never linked: a hard link would let the child
/// write the user's files.
fn seed_cargo(cargo: &Path) {
    let registry = cargo.join("registry");
    if registry.symlink_metadata().is_ok() {
        return;
    }
    let Some(user) = super::home::cargo_home().map(|c| c.join("registry")) else {
        return;
    };
    if !user.is_dir() || user.starts_with(cargo) {
        return;
    }
    let partial = cargo.join(format!("registry.partial-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&partial);
    let copied = ["index", "cache"]
        .iter()
        .all(|part| copy_tree(&user.join(part), &partial.join(part)).is_ok());
    if copied && std::fs::rename(&partial, &registry).is_ok() {
        return;
    }
    let _ = std::fs::remove_dir_all(&partial);
}

/// Copies a folder's files and folders (never a link) into a new folder.
fn copy_tree(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    if !from.is_dir() {
        return Ok(());
    }
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let kind = entry.file_type()?;
        let dest = to.join(entry.file_name());
        if kind.is_dir() {
            copy_tree(&entry.path(), &dest)?;
        } else if kind.is_file() {
            std::fs::copy(entry.path(), dest)?;
        }
    }
    Ok(())
}
