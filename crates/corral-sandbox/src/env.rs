//! The child's environment, built from nothing, and its per-run TMPDIR.
//!
//! Nothing of the app's environment is inherited (`env_clear`), so API keys
//! and tokens never reach a child. What is set:
//! - `PATH`: the fixed system path, with the cargo bin folder first (cargo
//!   needs `rustc`); never a project folder.
//! - `HOME`: the real home path (in the sandbox an empty folder holding
//!   the toolchains' programs), so rustup finds its toolchains.
//! - `RUSTUP_HOME`: passed through when the app has it (a location, not a
//!   secret).
//! - the package caches' variables (`CARGO_HOME`, `npm_config_cache`,
//!   `XDG_CACHE_HOME`...), pointing at Corral's own caches
//!   ([`super::caches`]).
//! - `LANG` (the app's, else `C.UTF-8`), `TMPDIR` (fresh, removed after),
//!   `PAGER=cat GIT_PAGER=cat GIT_TERMINAL_PROMPT=0 GIT_EDITOR=true
//!   TERM=dumb`.
//! - for git: `GIT_CONFIG_COUNT`/`KEY_n`/`VALUE_n` setting
//!   `core.fsmonitor=false`, `core.hooksPath=/dev/null` and
//!   `safe.bareRepository=explicit`. Config from the
//!   environment wins over every file, including a hostile `.git/config`.
//!   And `GIT_TEST_DISALLOW_ABBREVIATED_OPTIONS=1` (git refuses abbreviated
//!   long options, so `--upload-pa=x` cannot slip past the rules),
//!   `GIT_OPTIONAL_LOCKS=0` (a status does not rewrite the index) and
//!   `GIT_CEILING_DIRECTORIES` = the root's parent (no repository above
//!   the project is ever used).

use corral_fs::{Error, Result};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Folders searched for programs, in order (after the cargo bin folder).
pub(crate) const SYSTEM_PATH: [&str; 6] = [
    "/usr/local/sbin",
    "/usr/local/bin",
    "/usr/sbin",
    "/usr/bin",
    "/sbin",
    "/bin",
];

/// Git config forced on every git run. `safe.bareRepository=explicit`:
/// the file tools may write `HEAD`, `config`, `objects/` and `refs/` at the
/// root (they only refuse `.git/`), which git would otherwise take for a
/// bare repository whose `config` names programs (`diff.external`).
pub(crate) const GIT_OVERRIDES: [(&str, &str); 3] = [
    ("core.fsmonitor", "false"),
    ("core.hooksPath", "/dev/null"),
    ("safe.bareRepository", "explicit"),
];

/// Folders beneath `~` a toolchain writes to (caches, never `bin`, nor a
/// folder on the user's PATH such as pnpm's home, nor corepack's cache of
/// package-manager programs). Writable in the build profiles, under the
/// namespaces and under Landlock alike.
pub(crate) const HOME_CACHES: [&str; 10] = [
    ".npm",
    ".cache/pnpm",
    ".cache/yarn",
    ".cache/node-gyp",
    ".local/share/pnpm/store",
    ".yarn/berry",
    ".bun/install/cache",
    ".node-gyp",
    ".cache/go-build",
    ".cache/uv",
];

/// Folders beneath cargo's home that cargo writes to while fetching.
pub(crate) const CARGO_CACHES: [&str; 2] = ["registry", "git"];

/// Files beneath cargo's home that cargo locks or updates (opened for
/// writing, never created, by the child).
pub(crate) const CARGO_FILES: [&str; 3] =
    [".package-cache", ".package-cache-mutate", ".global-cache"];

pub(crate) use super::home::{cargo_home, home};

/// The folders searched for a program, in order.
pub(crate) fn search_path() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = cargo_home().map(|c| c.join("bin")).into_iter().collect();
    dirs.extend(SYSTEM_PATH.iter().map(PathBuf::from));
    dirs
}

/// The environment of one run.
pub(crate) fn build(program: &str, tmpdir: &Path, root: &Path) -> Vec<(OsString, OsString)> {
    let path = std::env::join_paths(search_path()).unwrap_or_else(|_| SYSTEM_PATH.join(":").into());
    let mut vars: Vec<(OsString, OsString)> = vec![
        ("PATH".into(), path),
        (
            "LANG".into(),
            std::env::var_os("LANG")
                .filter(|l| !l.is_empty())
                .unwrap_or_else(|| "C.UTF-8".into()),
        ),
        ("TMPDIR".into(), tmpdir.into()),
        ("PAGER".into(), "cat".into()),
        ("GIT_PAGER".into(), "cat".into()),
        ("GIT_TERMINAL_PROMPT".into(), "0".into()),
        ("GIT_EDITOR".into(), "true".into()),
        ("TERM".into(), "dumb".into()),
    ];
    if let Some(home) = home() {
        vars.push(("HOME".into(), home.into()));
    }
    if let Some(value) = std::env::var_os("RUSTUP_HOME").filter(|v| !v.is_empty()) {
        vars.push(("RUSTUP_HOME".into(), value));
    }
    // The package caches are Corral's own (`CARGO_HOME` among them), never
    // the user's.
    if let Some(dir) = super::caches::dir() {
        vars.extend(super::caches::vars(&dir));
    }
    if program == "git" {
        // git accepts any unique prefix of a long option (`--upload-pa`);
        // this makes it refuse them, so the argument rules see full names.
        vars.push(("GIT_TEST_DISALLOW_ABBREVIATED_OPTIONS".into(), "1".into()));
        // A status or diff does not rewrite `.git/index` to refresh it.
        vars.push(("GIT_OPTIONAL_LOCKS".into(), "0".into()));
        // The repository is the project's own or none: git never looks
        // above the root for one (a monorepo or a dotfiles repo in `~`
        // would let it read, and show, what lies outside the project).
        if let Some(parent) = root.parent() {
            vars.push(("GIT_CEILING_DIRECTORIES".into(), parent.into()));
        }
        vars.push((
            "GIT_CONFIG_COUNT".into(),
            GIT_OVERRIDES.len().to_string().into(),
        ));
        for (i, (key, value)) in GIT_OVERRIDES.iter().enumerate() {
            vars.push((format!("GIT_CONFIG_KEY_{i}").into(), (*key).into()));
            vars.push((format!("GIT_CONFIG_VALUE_{i}").into(), (*value).into()));
        }
    }
    vars
}

/// A fresh private folder under the system temp folder, removed on drop.
#[derive(Debug)]
pub(crate) struct TempDir(PathBuf);

impl TempDir {
    /// Creates `corral-shell-<pid>-<n>-<nanos>` with mode 0700.
    pub(crate) fn create() -> Result<TempDir> {
        use std::os::unix::fs::DirBuilderExt;
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let base = std::env::temp_dir();
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        let mut last = None;
        for _ in 0..8 {
            let n = COUNTER.fetch_add(1, Ordering::Relaxed);
            let dir = base.join(format!("{SHELL_PREFIX}{}-{n}-{nanos}", std::process::id()));
            match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
                Ok(()) => return Ok(TempDir(dir)),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => last = Some(e),
                Err(e) => {
                    return Err(Error::from_io(&e, &dir.display().to_string())
                        .hint("Check that the system temp folder exists and is writable."))
                }
            }
        }
        let shown = base.display().to_string();
        Err(match last {
            Some(e) => Error::from_io(&e, &shown),
            None => Error::invalid_input("could not create a temp folder"),
        })
    }

    /// Its path.
    pub(crate) fn path(&self) -> &Path {
        &self.0
    }

    /// Creates the folder `name` inside it (mode 0700) and returns its path.
    pub(crate) fn subdir(&self, name: &str) -> Result<PathBuf> {
        use std::os::unix::fs::DirBuilderExt;
        let dir = self.0.join(name);
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(&dir)
            .map_err(|e| Error::from_io(&e, &dir.display().to_string()))?;
        Ok(dir)
    }
}

impl TempDir {
    /// Moves it out of the way (`corral-gone-…` beside it: a rename, where
    /// removing waits on the file system's journal), so that nothing is
    /// left at its path; removed when dropped, as before.
    // Renames Corral's own folder in the system temp folder, never the project.
    #[allow(clippy::disallowed_methods)]
    pub(crate) fn set_aside(mut self) -> TempDir {
        let name = self.0.file_name().map(|n| n.to_string_lossy().into_owned());
        let gone = name
            .as_deref()
            .and_then(|n| n.strip_prefix(SHELL_PREFIX))
            .map(|rest| self.0.with_file_name(format!("{GONE_PREFIX}{rest}")));
        if let Some(gone) = gone {
            if std::fs::rename(&self.0, &gone).is_ok() {
                self.0 = gone;
            }
        }
        self
    }
}

/// Removes the run folders of processes that have ended (what they had
/// made ahead, or set aside and not yet removed): the system temp
/// folder's `corral-shell-PID-…` and `corral-gone-PID-…` folders of ours
/// whose process is gone.
// Sweeps Corral's own run folders in the system temp folder, never the project.
#[allow(clippy::disallowed_methods)]
pub(crate) fn sweep() {
    use std::os::unix::fs::MetadataExt;
    let base = std::env::temp_dir();
    let Ok(entries) = std::fs::read_dir(&base) else {
        return;
    };
    let uid = rustix::process::getuid().as_raw();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(|n| {
            let rest = n
                .strip_prefix(SHELL_PREFIX)
                .or_else(|| n.strip_prefix(GONE_PREFIX))?;
            rest.split('-').next()?.parse::<u32>().ok()
        }) else {
            continue;
        };
        if pid == std::process::id() || Path::new(&format!("/proc/{pid}")).exists() {
            continue;
        }
        // Our own folders only, never a link.
        let ours = entry
            .path()
            .symlink_metadata()
            .is_ok_and(|m| m.is_dir() && m.uid() == uid);
        if ours {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// How a run's folder is named, then once set aside.
const SHELL_PREFIX: &str = "corral-shell-";
const GONE_PREFIX: &str = "corral-gone-";

impl Drop for TempDir {
    // Removes Corral's own run folder in the system temp folder.
    #[allow(clippy::disallowed_methods)]
    fn drop(&mut self) {
        // Best effort: a leftover empty folder in /tmp is not worth failing a
        // finished command for.
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
