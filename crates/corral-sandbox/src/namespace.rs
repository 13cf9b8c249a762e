//! The fence around every child: its own mount, network, PID and IPC
//! namespaces, built by bubblewrap (`bwrap`), started with an argv only.
//!
//! What the child sees is built from nothing (an allowlist, [`super::view`]):
//! - the system's programs and libraries and the `/etc` files programs
//!   need, read-only;
//! - a fresh `/dev`, `/proc` and private `/tmp`; the run's TMPDIR; empty
//!   `/run` and `/var/run`; an empty, read-only home holding only the
//!   toolchains' programs, read-only;
//! - Corral's own caches, writable in the build profiles (the user's
//!   `~/.cargo` and `~/.npm` are never written, [`super::caches`]);
//! - the project: read-only in the read-only profile, with every
//!   secret-like file (and hard link to one) masked by an empty read-only
//!   one; writable in build and network, with the repository's folders
//!   (`.git/`, where a `.git` file leads, a nested clone's `.git/`) and
//!   any hard link to a file in them read-only unless the program is git;
//! - a network namespace of its own in every profile (nothing but its
//!   loopback); with the network, the egress proxy is the only way out
//!   (see `proxy`).
//!
//! `--die-with-parent` and the PID namespace end every process of the
//! sandbox when the command's process group is killed: the namespace's
//! init dies with bwrap, and the kernel kills everything left in it.

use super::gitdir::Repository;
use super::profile::Profile;
use super::{env, view};
use corral_fs::secret::is_secret_like;
use corral_fs::ProjectRoot;
use std::collections::HashSet;
use std::ffi::OsString;
use std::fs::File;
use std::os::fd::AsRawFd;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// Where bwrap is looked for (never the app's `PATH`, never the project).
const BWRAP_PATHS: [&str; 3] = ["/usr/bin/bwrap", "/bin/bwrap", "/usr/local/bin/bwrap"];

/// git's own configuration (the user's name for commits), shown to an
/// approved git only.
const GIT_CONFIG: [&str; 2] = [".gitconfig", ".config/git"];

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
    /// The program's name (`git` gets its repository writable outside
    /// read-only).
    pub program: &'a str,
    /// The executable that runs: outside the system folders (a server in
    /// a venv), its install prefix is bound read-only.
    pub executable: &'a Path,
    /// The run's private folder: `tmp/` is the TMPDIR, `mask/` holds the
    /// empty file and folder bound over secrets.
    pub tmpdir: &'a Path,
    pub mask_dir: &'a Path,
    /// Where the program starts: the root, or (a server) its private folder.
    pub cwd: &'a Path,
    /// Corral's own caches, bound writable in the build profiles.
    pub caches: Option<&'a Path>,
}

/// bwrap's arguments up to and including `--` (the program and its
/// arguments follow), the files it reads them from (`--file FD`: the
/// child keeps them open across `exec`), and notes.
pub(crate) fn argv(layout: &Layout<'_>) -> (Vec<OsString>, Vec<File>, Vec<String>) {
    let mut a = Argv::default();
    let mut files = Vec::new();
    let mut notes = Vec::new();
    a.push(["--die-with-parent", "--new-session", "--unshare-pid"]);
    a.push(["--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"]);
    // Every profile: with the network, the egress proxy is the way out.
    a.push(["--unshare-net"]);
    // Root keeps no capability inside (a remount would undo the fence).
    a.push(["--cap-drop", "ALL"]);
    for entry in view::system() {
        match entry {
            view::SystemEntry::Bind(path) => a.path2("--ro-bind", &path, &path),
            view::SystemEntry::Copy(path) => {
                // One the app cannot read is left out, as a missing one.
                if let Ok(file) = File::open(&path) {
                    a.push(["--perms", "0444", "--file"]);
                    a.0.push(file.as_raw_fd().to_string().into());
                    a.0.push(path.into());
                    files.push(file);
                }
            }
            view::SystemEntry::Link { target, at } => a.path2("--symlink", &target, &at),
        }
    }
    a.push(["--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]);
    a.push(["--dir", "/run", "--symlink", "../run", "/var/run"]);

    let home = env::home();
    let cargo = env::cargo_home();
    let rustup = std::env::var_os("RUSTUP_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from);
    // The home is a folder of its own, made read-only at the end (it may
    // lie where the sandbox has a writable `/tmp`).
    if let Some(home) = &home {
        a.path("--tmpfs", home);
    }
    let toolchains = view::home_toolchains(home.as_deref(), cargo.as_deref(), rustup.as_deref());
    for part in &toolchains {
        a.path2("--ro-bind", part, part);
    }
    for prefix in view::install_prefixes(layout.executable, &toolchains) {
        a.path2("--ro-bind-try", &prefix, &prefix);
    }
    if let Some(home) = &home {
        if layout.profile.writes_project() && layout.program == "git" {
            for file in GIT_CONFIG {
                a.path2("--ro-bind-try", &home.join(file), &home.join(file));
            }
        }
    }
    if let Some(caches) = layout.caches {
        if layout.profile.writes_project() {
            a.path2("--bind-try", caches, caches);
        }
    }
    a.path2("--bind", layout.tmpdir, layout.tmpdir);

    let root = layout.root.path();
    let repository = Repository::of(root);
    if layout.profile.writes_project() {
        a.path2("--bind", root, root);
        if let Some(repo) = &repository {
            let git_writes = layout.program == "git";
            // A repository outside the project (a linked worktree's) is
            // shown to an approved git only.
            for dir in repo.folders() {
                if git_writes {
                    a.path2("--bind", dir, dir);
                } else if dir.starts_with(root) {
                    a.path2("--ro-bind", dir, dir);
                }
            }
            if !git_writes {
                for held in held_by_git(root, repo) {
                    a.path2("--ro-bind", &held, &held);
                }
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
    // What the sandbox made of its own (the home, `/run`) stays empty: a
    // write there fails instead of vanishing with the sandbox. The mounts
    // made inside keep their own modes.
    a.push(["--remount-ro", "/"]);
    if let Some(home) = &home {
        a.path("--remount-ro", home);
    }
    a.path("--chdir", layout.cwd);
    a.push(["--"]);
    (a.0, files, notes)
}

/// The secret-like files and folders of the project (absolute, and whether
/// each is a folder), and every other name of such a file (a hard link:
/// `cp -l .env notes.txt`), not following links, not entering `.git/`,
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
    let mut secret_inodes = HashSet::new();
    let mut linked = Vec::new();
    let mut complete = true;
    for (seen, entry) in walker.flatten().enumerate() {
        if seen >= MASK_WALK_LIMIT {
            complete = false;
            break;
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
        let meta = entry.metadata().ok();
        if is_secret_like(&rel.to_string_lossy()) {
            if let Some(m) = meta.filter(|m| m.is_file()) {
                secret_inodes.insert((m.dev(), m.ino()));
            }
            found.push((entry.path().to_path_buf(), kind.is_dir()));
        } else if let Some(m) = meta.filter(|m| m.is_file() && m.nlink() > 1) {
            linked.push(((m.dev(), m.ino()), entry.into_path()));
        }
    }
    found.extend(
        linked
            .into_iter()
            .filter(|(inode, _)| secret_inodes.contains(inode))
            .map(|(_, path)| (path, false)),
    );
    (found, complete)
}

/// What of the project a program but git must not write, beyond the
/// repository's own folders: every nested `.git` (a clone made outside the
/// sandbox hard-links its objects to ours; one made inside copies them,
/// the repository being a mount of its own), and files that are hard links to a file of the
/// repository (its objects aside: they are written once and never read
/// as configuration). New links cannot be made: those are mounts of their
/// own (`link(2)` across mounts is `EXDEV`).
fn held_by_git(root: &Path, repo: &Repository) -> Vec<PathBuf> {
    let own: Vec<PathBuf> = repo.folders().iter().map(|d| d.to_path_buf()).collect();
    let linked: HashSet<(u64, u64)> = own
        .iter()
        .flat_map(|dir| {
            ignore::WalkBuilder::new(dir)
                .standard_filters(false)
                .follow_links(false)
                .filter_entry(|e| e.file_name() != "objects")
                .build()
                .flatten()
        })
        .filter_map(|e| e.metadata().ok())
        .filter(|m| m.is_file() && m.nlink() > 1)
        .map(|m| (m.dev(), m.ino()))
        .collect();
    // The walk yields a nested `.git` but does not enter it (its children
    // are filtered out): it is held read-only as a whole.
    let skip = own.clone();
    let walker = ignore::WalkBuilder::new(root)
        .standard_filters(false)
        .follow_links(false)
        .filter_entry(move |e| {
            let in_git = e.path().parent().is_some_and(|p| p.ends_with(".git"));
            let name = e.file_name();
            // Installed packages and build output hold no clone of ours.
            !in_git
                && name != "node_modules"
                && name != "target"
                && !skip.iter().any(|d| e.path() == d)
        })
        .build();
    let mut held = Vec::new();
    for entry in walker.flatten().take(MASK_WALK_LIMIT) {
        if entry.depth() == 0 {
            continue;
        }
        if entry.file_name() == ".git" {
            held.push(entry.into_path());
            continue;
        }
        let is_link = !linked.is_empty()
            && entry
                .metadata()
                .is_ok_and(|m| m.is_file() && linked.contains(&(m.dev(), m.ino())));
        if is_link {
            held.push(entry.into_path());
        }
    }
    held
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
