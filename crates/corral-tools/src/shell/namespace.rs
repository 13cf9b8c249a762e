//! The fence around every child: its own mount, network, PID and IPC
//! namespaces, built by bubblewrap (`bwrap`), started with an argv only.
//!
//! What the child sees:
//! - `/` read-only, so chmod, chown, utimes and xattrs outside fail with
//!   `EROFS` (Landlock does not cover metadata);
//! - a fresh `/dev`, `/proc` and private `/tmp`; the run's TMPDIR;
//! - no home: `$HOME`, `/home`, `/root`, `/mnt`, `/media` and `/run/user`
//!   are empty and read-only, `/var/tmp` empty, except the toolchain folders a program needs
//!   (rustup, cargo, npm, pnpm, yarn, bun, nvm, Go, uv), read-only, and
//!   their caches, writable in the build profiles;
//! - the project: read-only in the read-only profile, with every
//!   secret-like file masked by an empty read-only one; writable in build
//!   and network, with `.git/` (and any hard link to a file in it)
//!   read-only unless the program is git;
//! - a network namespace of its own in every profile (nothing but its
//!   loopback); with the network, the egress proxy is the only way out
//!   (see `proxy`).
//!
//! `--die-with-parent` and the PID namespace end every process of the
//! sandbox when the command's process group is killed: the namespace's
//! init dies with bwrap, and the kernel kills everything left in it.

use super::env;
use super::profile::Profile;
use crate::policy::is_secret_like;
use crate::root::ProjectRoot;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// Where bwrap is looked for (never the app's `PATH`, never the project).
const BWRAP_PATHS: [&str; 3] = ["/usr/bin/bwrap", "/bin/bwrap", "/usr/local/bin/bwrap"];

/// Folders that hold other people's and the user's files: emptied.
const HIDDEN: [&str; 7] = [
    "/home",
    "/root",
    "/tmp",
    "/var/tmp",
    "/mnt",
    "/media",
    "/run/user",
];

/// Toolchain folders beneath `~`, shown read-only (programs, toolchains).
const HOME_TOOLCHAINS: [&str; 8] = [
    ".rustup",
    ".nvm",
    ".bun",
    ".local/share/pnpm",
    ".volta",
    "go",
    ".local/share/uv",
    ".pyenv",
];

/// git's own configuration (the user's name for commits), shown to an
/// approved git only.
const GIT_CONFIG: [&str; 2] = [".gitconfig", ".config/git"];

/// The caches each program writes, created before the run when missing:
/// the home around them is read-only in the sandbox, so the program could
/// not create them itself.
fn create_caches(program: &str) {
    let home_caches: &[&str] = match program {
        "npm" | "node" => &[".npm"],
        "yarn" => &[".cache/yarn", ".yarn/berry"],
        "pnpm" => &[".cache/pnpm", ".local/share/pnpm/store"],
        "bun" => &[".bun/install/cache"],
        _ => &[],
    };
    let mut dirs: Vec<PathBuf> = env::home()
        .map(|h| home_caches.iter().map(|c| h.join(c)).collect())
        .unwrap_or_default();
    if program == "cargo" {
        if let Some(cargo) = env::cargo_home().filter(|c| c.is_dir()) {
            dirs.extend(["registry", "git"].map(|c| cargo.join(c)));
        }
    }
    for dir in dirs {
        // Best effort: without it the program reports its own error.
        let _ = std::fs::DirBuilder::new().recursive(true).create(dir);
    }
}

/// Most entries looked at when finding secret-like files to mask.
const MASK_WALK_LIMIT: usize = 200_000;

/// Why the namespaces cannot be used here, or the bwrap to use.
pub(crate) fn bwrap() -> Result<&'static Path, &'static str> {
    static FOUND: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    FOUND
        .get_or_init(probe)
        .as_ref()
        .map(PathBuf::as_path)
        .map_err(String::as_str)
}

/// Whether commands run inside the namespaces on this machine.
pub fn available() -> bool {
    bwrap().is_ok()
}

/// Finds bwrap and checks once that it can build a sandbox here (user
/// namespaces may be off, or a container may forbid them).
/// `CORRAL_BWRAP` names another bwrap (tests use a missing one to see the
/// fallback).
fn probe() -> Result<PathBuf, String> {
    let candidate = match std::env::var_os("CORRAL_BWRAP") {
        Some(path) => Some(PathBuf::from(path)),
        None => BWRAP_PATHS.iter().map(PathBuf::from).find(|p| p.is_file()),
    };
    let Some(bwrap) = candidate.filter(|p| p.is_file()) else {
        return Err(
            "bubblewrap (`bwrap`) is not installed; install the `bubblewrap` package".into(),
        );
    };
    let status = std::process::Command::new(&bwrap)
        .args(["--ro-bind", "/", "/", "--unshare-net", "--unshare-pid"])
        .args(["--dev", "/dev", "--proc", "/proc", "--", "/bin/true"])
        .env_clear()
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status();
    match status {
        Ok(s) if s.success() => Ok(bwrap),
        Ok(_) | Err(_) => Err(
            "this system does not let bubblewrap create namespaces (user namespaces may be disabled)"
                .into(),
        ),
    }
}

/// Everything the argv is built from.
pub(crate) struct Layout<'a> {
    pub root: &'a ProjectRoot,
    pub profile: Profile,
    /// The program's name (`git` gets `.git/` writable outside read-only).
    pub program: &'a str,
    /// The run's private folder: `tmp/` is the TMPDIR, `mask/` holds the
    /// empty file and folder bound over secrets.
    pub tmpdir: &'a Path,
    pub mask_dir: &'a Path,
    /// Where the program starts: the root, or (a server) its private folder.
    pub cwd: &'a Path,
}

/// bwrap's arguments up to and including `--`; the program and its
/// arguments follow.
pub(crate) fn argv(layout: &Layout<'_>) -> (Vec<OsString>, Vec<String>) {
    let mut a = Argv::default();
    let mut notes = Vec::new();
    a.push(["--die-with-parent", "--new-session", "--unshare-pid"]);
    a.push(["--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"]);
    // Every profile: with the network, the egress proxy is the way out.
    a.push(["--unshare-net"]);
    // Root keeps no capability inside (a remount would undo the fence).
    a.push(["--cap-drop", "ALL"]);
    a.path2("--ro-bind", Path::new("/"), Path::new("/"));
    a.push(["--dev", "/dev", "--proc", "/proc"]);

    let home = env::home();
    let mut hidden: Vec<PathBuf> = HIDDEN.iter().map(PathBuf::from).collect();
    if let Some(home) = home.clone().filter(|h| !hidden.contains(h)) {
        hidden.push(home);
    }
    hidden.retain(|d| d.is_dir());
    for dir in &hidden {
        a.path("--tmpfs", dir);
    }
    if layout.profile.writes_project() {
        create_caches(layout.program);
    }
    if let Some(home) = &home {
        for dir in HOME_TOOLCHAINS {
            a.path2("--ro-bind-try", &home.join(dir), &home.join(dir));
        }
        if layout.profile.writes_project() {
            for dir in env::HOME_CACHES {
                a.path2("--bind-try", &home.join(dir), &home.join(dir));
            }
            if layout.program == "git" {
                for file in GIT_CONFIG {
                    a.path2("--ro-bind-try", &home.join(file), &home.join(file));
                }
            }
        }
    }
    if let Some(cargo) = env::cargo_home() {
        a.path2("--ro-bind-try", &cargo, &cargo);
        if layout.profile.writes_project() {
            for part in env::CARGO_CACHES.iter().chain(&env::CARGO_FILES) {
                a.path2("--bind-try", &cargo.join(part), &cargo.join(part));
            }
        }
    }
    if let Some(rustup) = std::env::var_os("RUSTUP_HOME").filter(|v| !v.is_empty()) {
        a.path2("--ro-bind-try", Path::new(&rustup), Path::new(&rustup));
    }
    a.path2("--bind", layout.tmpdir, layout.tmpdir);

    let root = layout.root.path();
    if layout.profile.writes_project() {
        a.path2("--bind", root, root);
        let git = root.join(".git");
        if layout.program != "git" && git.symlink_metadata().is_ok() {
            a.path2("--ro-bind", &git, &git);
            // A hard link made earlier is another name for a file of
            // `.git/` in the writable mount: it is bound read-only too.
            for link in links_into_git(root) {
                a.path2("--ro-bind", &link, &link);
            }
        }
    } else {
        a.path2("--ro-bind", root, root);
        let (file, dir) = (layout.mask_dir.join("file"), layout.mask_dir.join("dir"));
        let (secrets, complete) = secret_paths(layout.root);
        if !complete {
            notes.push(format!(
                "the project has more than {MASK_WALK_LIMIT} entries; secret-like files past them were not masked"
            ));
        }
        for (path, is_dir) in secrets {
            a.path2("--ro-bind", if is_dir { &dir } else { &file }, &path);
        }
    }
    // Emptied folders stay empty: a write there fails instead of vanishing
    // with the sandbox (the mounts made inside them keep their own modes).
    for dir in hidden
        .iter()
        .filter(|d| !matches!(d.to_str(), Some("/tmp" | "/var/tmp")))
    {
        a.path("--remount-ro", dir);
    }
    a.path("--chdir", layout.cwd);
    a.push(["--"]);
    (a.0, notes)
}

/// The secret-like files and folders of the project (absolute, and whether
/// each is a folder), not following links, not entering `.git/`,
/// `node_modules/` or `target/`; and whether the walk saw everything.
fn secret_paths(root: &ProjectRoot) -> (Vec<(PathBuf, bool)>, bool) {
    let walker = ignore::WalkBuilder::new(root.path())
        .standard_filters(false)
        .follow_links(false)
        .filter_entry(|e| {
            let name = e.file_name();
            !(name == ".git" || name == "node_modules" || name == "target")
        })
        .build();
    let mut found = Vec::new();
    for (seen, entry) in walker.flatten().enumerate() {
        if seen >= MASK_WALK_LIMIT {
            return (found, false);
        }
        let Some(kind) = entry.file_type() else {
            continue;
        };
        if !(kind.is_file() || kind.is_dir()) || entry.depth() == 0 {
            continue;
        }
        let rel = entry
            .path()
            .strip_prefix(root.path())
            .unwrap_or(entry.path());
        if is_secret_like(&rel.to_string_lossy()) {
            found.push((entry.path().to_path_buf(), kind.is_dir()));
        }
    }
    (found, true)
}

/// Files of the project outside `.git/` that are hard links to a file in
/// `.git/` (its objects aside: they are written once and never read as
/// configuration). New links cannot be made: `.git/` is its own mount.
fn links_into_git(root: &Path) -> Vec<PathBuf> {
    use std::os::unix::fs::MetadataExt;
    let git = root.join(".git");
    let linked: std::collections::HashSet<(u64, u64)> = ignore::WalkBuilder::new(&git)
        .standard_filters(false)
        .follow_links(false)
        .filter_entry(|e| e.file_name() != "objects")
        .build()
        .flatten()
        .filter_map(|e| e.metadata().ok())
        .filter(|m| m.is_file() && m.nlink() > 1)
        .map(|m| (m.dev(), m.ino()))
        .collect();
    if linked.is_empty() {
        return Vec::new();
    }
    ignore::WalkBuilder::new(root)
        .standard_filters(false)
        .follow_links(false)
        .filter_entry(|e| e.file_name() != ".git")
        .build()
        .flatten()
        .filter(|e| {
            e.metadata()
                .is_ok_and(|m| m.is_file() && linked.contains(&(m.dev(), m.ino())))
        })
        .map(|e| e.into_path())
        .collect()
}

/// Creates the empty file and folder that mask secrets, read-only.
pub(crate) fn create_masks(mask_dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
    std::fs::DirBuilder::new().mode(0o700).create(mask_dir)?;
    std::fs::DirBuilder::new()
        .mode(0o500)
        .create(mask_dir.join("dir"))?;
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o400)
        .open(mask_dir.join("file"))?;
    Ok(())
}

#[derive(Default)]
struct Argv(Vec<OsString>);

impl Argv {
    fn push<const N: usize>(&mut self, args: [&str; N]) {
        self.0.extend(args.iter().map(OsString::from));
    }
    fn path(&mut self, flag: &str, path: &Path) {
        self.0.push(flag.into());
        self.0.push(path.into());
    }
    fn path2(&mut self, flag: &str, from: &Path, to: &Path) {
        self.0.push(flag.into());
        self.0.push(from.into());
        self.0.push(to.into());
    }
}
