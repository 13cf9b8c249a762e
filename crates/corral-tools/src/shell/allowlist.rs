//! Which programs may run, and where their executables are.
//!
//! A program is named, never given as a path (`/usr/bin/git`, `./git` are
//! refused), and is looked up in a fixed search path, never the app's
//! `PATH` and never a project folder. A candidate whose real path lies
//! inside the project is skipped, so a project-local `node_modules/.bin/git`
//! or a symlink into the project cannot stand in for the real program.

use super::env::search_path;
use crate::error::{Error, ErrorCode, Result};
use crate::root::ProjectRoot;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// The programs `exec_shell` runs.
pub const ALLOWED_PROGRAMS: [&str; 15] = [
    "git", "cargo", "npm", "yarn", "pnpm", "node", "bun", "ls", "find", "grep", "mkdir", "rm",
    "mv", "cp", "touch",
];

/// `command_not_allowed` unless `name` is on the allowlist.
pub(crate) fn ensure_allowed(name: &str) -> Result<()> {
    if !ALLOWED_PROGRAMS.contains(&name) {
        return Err(Error::new(
            ErrorCode::CommandNotAllowed,
            format!("`{name}` is not an allowed program"),
        )
        .hint(format!(
            "Use one of: {}. Name the program, not a path; arguments go in `args`.",
            ALLOWED_PROGRAMS.join(", ")
        ))
        .detail("command", name)
        .detail("allowed", ALLOWED_PROGRAMS.to_vec()));
    }
    Ok(())
}

/// The absolute path to run for `name`.
pub(crate) fn resolve(root: &ProjectRoot, name: &str) -> Result<PathBuf> {
    ensure_allowed(name)?;
    for dir in search_path() {
        let candidate = dir.join(name);
        if is_usable(root, &candidate) {
            return Ok(candidate);
        }
    }
    Err(Error::new(
        ErrorCode::NotFound,
        format!("`{name}` is allowed but is not installed on this machine"),
    )
    .hint(format!(
        "Install `{name}` (it is looked up in ~/.cargo/bin and the system folders), or do without it."
    ))
    .detail("command", name))
}

/// An executable regular file whose real path is outside the project.
fn is_usable(root: &ProjectRoot, candidate: &Path) -> bool {
    let Ok(real) = std::fs::canonicalize(candidate) else {
        return false;
    };
    if real.starts_with(root.path()) {
        return false;
    }
    std::fs::metadata(&real)
        .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}
