//! Which programs may run, and where their executables are.
//!
//! A program is named, never given as a path (`/usr/bin/git`, `./git` are
//! refused), and is looked up in a fixed search path, never the app's
//! `PATH` and never a project folder. A candidate whose real path lies
//! inside the project is skipped, so a project-local `node_modules/.bin/git`
//! or a symlink into the project cannot stand in for the real program.

use super::env::search_path;
use super::rules::{builtin, PROGRAMS};
use corral_fs::ProjectRoot;
use corral_fs::{Error, ErrorCode, Result};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// The programs `exec_shell` runs: the file utilities, git, and the
/// common project runners (a project's tests need no trip to Settings).
/// Their names, in order, from the one table of them ([`PROGRAMS`]).
pub const ALLOWED_PROGRAMS: [&str; PROGRAMS.len()] = names();

const fn names() -> [&'static str; PROGRAMS.len()] {
    let mut names = [""; PROGRAMS.len()];
    let mut i = 0;
    while i < PROGRAMS.len() {
        names[i] = PROGRAMS[i].name;
        i += 1;
    }
    names
}

/// Whether `name` is a built-in program (with argument rules of its own).
pub(crate) fn is_builtin(name: &str) -> bool {
    builtin(name).is_some()
}

/// Whether `name` can be a program name the user adds: a bare file name
/// (no path, no `.`/`..`, no spaces or shell characters).
pub fn is_valid_program_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name != "."
        && name != ".."
        && !name.starts_with('-')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '+' | '-'))
}

/// `command_not_allowed` unless `name` is on the allowlist or is one of
/// the programs the user added (`extra`).
pub(crate) fn ensure_allowed(name: &str, extra: &[String]) -> Result<()> {
    let added = is_valid_program_name(name) && extra.iter().any(|p| p == name);
    if !is_builtin(name) && !added {
        let mut allowed: Vec<&str> = ALLOWED_PROGRAMS.to_vec();
        allowed.extend(
            extra
                .iter()
                .map(String::as_str)
                .filter(|p| is_valid_program_name(p) && !is_builtin(p)),
        );
        return Err(Error::new(
            ErrorCode::CommandNotAllowed,
            format!("`{name}` is not an allowed program"),
        )
        .hint(format!(
            "Use one of: {}. Name the program, not a path; arguments go in `args`. \
             The user can add a program in Settings (Programs).",
            allowed.join(", ")
        ))
        .detail("command", name)
        .detail("allowed", allowed));
    }
    Ok(())
}

/// The absolute path to run for `name`. A program found only inside the
/// project is refused (`command_not_allowed`): the project's own files
/// never stand in for a program.
pub(crate) fn resolve(root: &ProjectRoot, name: &str, extra: &[String]) -> Result<PathBuf> {
    ensure_allowed(name, extra)?;
    let mut inside = false;
    for dir in search_path() {
        let candidate = dir.join(name);
        if is_usable(root, &candidate) {
            return Ok(candidate);
        }
        inside |= std::fs::canonicalize(&candidate).is_ok_and(|real| real.starts_with(root.path()));
    }
    if inside {
        return Err(Error::new(
            ErrorCode::CommandNotAllowed,
            format!("`{name}` is only found inside the project folder, which is never run as a program"),
        )
        .hint("Install the program outside the project (e.g. /usr/local/bin), or run it through its interpreter.")
        .detail("command", name));
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

/// The program a server the user configured runs: a bare name looked up
/// like an added program, or an absolute path; either way an executable
/// outside the project (the agent may write the project).
pub(crate) fn resolve_server(root: &ProjectRoot, name: &str) -> Result<PathBuf> {
    if !name.contains('/') {
        return resolve(root, name, &[name.to_string()]);
    }
    let path = Path::new(name);
    if path.is_absolute() && is_usable(root, path) {
        return Ok(path.to_path_buf());
    }
    Err(Error::new(
        ErrorCode::CommandNotAllowed,
        format!("`{name}` is not an executable outside the project folder"),
    )
    .hint(
        "Give a program name found in the system folders, or an absolute path outside the project.",
    )
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
