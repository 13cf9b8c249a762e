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
//!   any hard link to a file in them read-only unless the program is git,
//!   and the agent's configuration (`.claude/`, `.codex/`) read-only for
//!   every program, held even when absent;
//! - a network namespace of its own in every profile (nothing but its
//!   loopback); with the network, the egress proxy is the only way out
//!   (see `proxy`).
//!
//! `--die-with-parent` and the PID namespace end every process of the
//! sandbox when the command's process group is killed: the namespace's
//! init dies with bwrap, and the kernel kills everything left in it.

use super::gitdir::Repository;
use super::profile::Profile;
use super::{env, view, walks};
use corral_fs::ProjectRoot;
use std::ffi::OsString;
use std::fs::File;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The project's agent configuration (Claude Code's and Codex's
/// settings, hooks, commands, skills and agents): read-only to every
/// command, present or not. The names are the auto-run table's.
pub(crate) use corral_fs::autorun::AGENT_CONFIG;

/// Where bwrap is looked for (never the app's `PATH`, never the project).
const BWRAP_PATHS: [&str; 3] = ["/usr/bin/bwrap", "/bin/bwrap", "/usr/local/bin/bwrap"];

/// git's own configuration (the user's name for commits), shown to an
/// approved git only: its files, never the rest of its folder (git's
/// credential store may keep tokens in `~/.config/git/credentials`). The
/// configuration files are copied with only their safe sections
/// (`gitconfig`); the ignore and attributes files are bound.
const GIT_CONFIG: [&str; 2] = [".gitconfig", ".config/git/config"];
const GIT_FILES: [&str; 2] = [".config/git/ignore", ".config/git/attributes"];

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

/// The probe: bwrap's arguments for a sandbox of `/` with its own
/// network and PID namespaces, running `/bin/true`.
const PROBE_ARGS: [&str; 11] = [
    "--ro-bind",
    "/",
    "/",
    "--unshare-net",
    "--unshare-pid",
    "--dev",
    "/dev",
    "--proc",
    "/proc",
    "--",
    "/bin/true",
];

/// Finds bwrap and checks once that it can build a sandbox here (user
/// namespaces may be off, or a container may forbid them): by a probe
/// kept from an earlier process ([`super::probed`]), else by running one.
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
    let kept = super::probed::dir();
    let (found, used) = probe_kept(bwrap, kept.as_deref());
    if let (Some(dir), Some(inputs)) = (kept, used) {
        let _ = KEPT.set((dir, inputs));
    }
    found
}

/// The kept probe this process's answer came from or was kept in: its
/// folder and inputs.
static KEPT: OnceLock<(PathBuf, String)> = OnceLock::new();

/// [`probe`] of `bwrap` with the probes kept in `kept` (`None`: bwrap
/// runs, nothing is kept): a kept success that holds, else a run, kept
/// if it succeeded. With the answer, the inputs of the kept probe it came
/// from or was kept as.
fn probe_kept(bwrap: PathBuf, kept: Option<&Path>) -> (Result<PathBuf, String>, Option<String>) {
    let inputs = kept.and_then(|_| super::probed::inputs(&bwrap, &PROBE_ARGS));
    let kept = kept.zip(inputs.as_deref());
    if let Some((dir, inputs)) = kept {
        if super::probed::holds(dir, inputs) {
            return (Ok(bwrap), Some(inputs.to_owned()));
        }
    }
    let status = std::process::Command::new(&bwrap)
        .args(PROBE_ARGS)
        .env_clear()
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status();
    match status {
        Ok(s) if s.success() => {
            // Not kept (a folder that is not the user's own): the next
            // process runs the probe again.
            let kept = kept.filter(|(dir, inputs)| super::probed::keep(dir, inputs).is_ok());
            (Ok(bwrap), kept.map(|(_, inputs)| inputs.to_owned()))
        }
        Ok(_) | Err(_) => (
            Err(
                "this system does not let bubblewrap create namespaces (user namespaces may be disabled)"
                    .into(),
            ),
            None,
        ),
    }
}

/// bwrap ended before it made the sandbox's first process: where this
/// process's answer came from a kept probe, it is removed, so the next
/// process runs the probe again. This process goes on failing closed
/// (its commands fail with bwrap's error; none runs outside the fence).
pub(crate) fn bwrap_failed() {
    if let Some((dir, inputs)) = KEPT.get() {
        super::probed::forget(dir, inputs);
    }
}

/// Everything the argv is built from.
pub(crate) struct Layout<'a> {
    pub root: &'a ProjectRoot,
    pub profile: Profile,
    /// The program's name (`git` gets its repository writable outside
    /// read-only).
    pub program: &'a str,
    /// For git: the names of its common dir it may write beyond
    /// [`GIT_WRITES`] (`config` for `git remote add`), approved by the
    /// user for that reason.
    pub git_writes: &'a [&'a str],
    /// The executable that runs: outside the system folders (a server in
    /// a venv), its install prefix is bound read-only.
    pub executable: &'a Path,
    /// The run's TMPDIR.
    pub tmpdir: &'a Path,
    /// What the TMPDIR and `/tmp` may hold each (a tmpfs of that size).
    pub tmp_bytes: u64,
    /// Holds the empty file and folder bound over secrets.
    pub mask_dir: &'a Path,
    /// The prepared copy of `/etc` to bind; `None`: its entries one by one.
    pub etc: Option<&'a Path>,
    /// Where the program starts: the root, or (a server) its private folder.
    pub cwd: &'a Path,
    /// Corral's own caches, bound writable in the build profiles.
    pub caches: Option<&'a Path>,
    /// The caches are over their limit: bound read-only instead.
    pub caches_full: bool,
    /// A background command: every absent auto-run name at the root is
    /// held for its whole run, not only the agent's configuration.
    pub background: bool,
}

/// bwrap's arguments up to and including `--` (the program and its
/// arguments follow), the files it reads them from (`--file FD`: the
/// child keeps them open across `exec`), and notes; in the profiles that
/// write the project, the auto-run names it found, to find what the
/// command makes of them ([`AutoRunBefore`], from the same look).
pub(crate) fn argv(layout: &Layout<'_>) -> Built {
    let mut a = Argv::default();
    let mut files = Vec::new();
    let mut notes = Vec::new();
    let mut auto_run = None;
    a.push(["--die-with-parent", "--new-session", "--unshare-pid"]);
    a.push(["--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"]);
    // Every profile: with the network, the egress proxy is the way out.
    a.push(["--unshare-net"]);
    // Root keeps no capability inside (a remount would undo the fence).
    a.push(["--cap-drop", "ALL"]);
    let one_by_one = layout.etc.is_none().then(view::etc_entries);
    if let Some(etc) = layout.etc {
        a.path2("--ro-bind", etc, Path::new("/etc"));
    }
    for entry in view::system()
        .into_iter()
        .chain(one_by_one.into_iter().flatten())
    {
        match entry {
            view::SystemEntry::Bind(path) => a.path2("--ro-bind", &path, &path),
            view::SystemEntry::Copy(path) => a.copy(&path, &mut files),
            view::SystemEntry::Link { target, at } => a.path2("--symlink", &target, &at),
        }
    }
    a.push(["--dev", "/dev", "--proc", "/proc"]);
    let size = layout.tmp_bytes.to_string();
    a.push(["--size", &size, "--tmpfs", "/tmp"]);
    a.push(["--dir", "/run", "--symlink", "../run", "/var/run"]);

    let home = env::home();
    let cargo = env::cargo_home();
    let rustup = std::env::var_os("RUSTUP_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from);
    let root = layout.root.path();
    let repository = Repository::of(root);
    // The home holds only what is bound in it. It is a folder of the
    // sandbox's root, read-only with it at the end; only a home beneath a
    // place the child may write (`/tmp`, the project) is a mount of its
    // own, made read-only by itself (a mount and a remount fewer else).
    let own_home = home.as_deref().filter(|home| {
        let writable = [Path::new("/tmp"), Path::new("/dev"), layout.tmpdir, root];
        let repository = repository.iter().flat_map(|r| r.folders());
        writable
            .into_iter()
            .chain(layout.caches)
            .chain(repository)
            .any(|place| home.starts_with(place))
    });
    match (&home, own_home) {
        (_, Some(home)) => a.path("--tmpfs", home),
        (Some(home), None) => a.path("--dir", home),
        (None, None) => {}
    }
    let parts = if view::needs_toolchains(layout.program, layout.executable) {
        view::toolchain_parts(home.as_deref(), cargo.as_deref(), rustup.as_deref())
    } else {
        Default::default()
    };
    for part in parts.iter() {
        match part {
            // `-try`: the parts are found at most a second ago, and one
            // removed since (a node nvm uninstalled) is left out.
            view::Part::Bind(path) => a.path2("--ro-bind-try", path, path),
            view::Part::Copy(path) => a.copy(path, &mut files),
            view::Part::Folder { at, files: copied } => {
                a.path("--dir", at);
                for file in copied {
                    a.copy(file, &mut files);
                }
            }
        }
    }
    let toolchains: Vec<PathBuf> = parts.iter().map(|p| p.path().to_path_buf()).collect();
    for prefix in view::install_prefixes(layout.executable, &toolchains, home.as_deref()) {
        a.path2("--ro-bind-try", &prefix, &prefix);
    }
    if let Some(home) = &home {
        if layout.profile.writes_project() && layout.program == "git" {
            for file in GIT_CONFIG {
                a.copy_shown(&home.join(file), &mut files);
            }
            for file in GIT_FILES {
                a.path2("--ro-bind-try", &home.join(file), &home.join(file));
            }
        }
    }
    if let Some(caches) = layout.caches {
        if layout.profile.writes_project()
            && view::needs_toolchains(layout.program, layout.executable)
        {
            let bind = if layout.caches_full {
                "--ro-bind-try"
            } else {
                "--bind-try"
            };
            a.path2(bind, caches, caches);
        }
    }
    // A tmpfs of its own, bounded, on the run's folder (left empty).
    a.push(["--size", &size]);
    a.path("--tmpfs", layout.tmpdir);

    if layout.profile.writes_project() {
        a.path2("--bind", root, root);
        if let Some(repo) = &repository {
            let git_writes = layout.program == "git";
            // A repository outside the project (a linked worktree's) is
            // shown to an approved git only.
            for dir in repo.folders() {
                if git_writes {
                    a.path2("--bind", dir, dir);
                    hold_git_dir(&mut a, dir, repo, layout.mask_dir, layout.git_writes);
                } else if dir.starts_with(root) {
                    a.path2("--ro-bind", dir, dir);
                }
            }
            if !git_writes {
                for held in walks::held_by_git(root, repo, &AGENT_CONFIG).iter() {
                    a.path2("--ro-bind", held, held);
                }
            }
        }
        let masks = layout.background.then_some(layout.mask_dir);
        let (absent, held) = hold_agent_config(&mut a, root, masks);
        let (deeper, complete) = walks::auto_run_paths(root, &AGENT_CONFIG);
        for path in deeper.iter() {
            hold_present(&mut a, root, path);
        }
        if !complete {
            notes.push(format!(
                "the project has more than {} entries; files other programs run by themselves past them were not held",
                walks::WALK_LIMIT
            ));
        }
        auto_run = Some(AutoRunBefore::new(absent, held, deeper, layout.background));
    } else {
        a.path2("--ro-bind", root, root);
        let (file, dir) = (layout.mask_dir.join("file"), layout.mask_dir.join("dir"));
        let (secrets, complete) = walks::secret_paths(layout.root.path());
        if !complete {
            notes.push(format!(
                "the project has more than {} entries; secret-like files past them were not masked",
                walks::WALK_LIMIT
            ));
        }
        for (path, is_dir) in secrets.iter() {
            a.path2("--ro-bind", if *is_dir { &dir } else { &file }, path);
        }
    }
    // What the sandbox made of its own (the home, `/run`) stays empty: a
    // write there fails instead of vanishing with the sandbox. The mounts
    // made inside keep their own modes.
    a.push(["--remount-ro", "/"]);
    if let Some(home) = own_home {
        a.path("--remount-ro", home);
    }
    a.path("--chdir", layout.cwd);
    a.push(["--"]);
    Built {
        args: a.0,
        files,
        notes,
        auto_run,
    }
}

/// What [`argv`] makes.
pub(crate) struct Built {
    pub args: Vec<OsString>,
    pub files: Vec<File>,
    pub notes: Vec<String>,
    /// The auto-run names before a command that writes the project.
    pub auto_run: Option<AutoRunBefore>,
}

/// Holds the project's agent configuration read-only for every program
/// ([`AGENT_CONFIG`]): hooks there run commands, so a build must not
/// plant them. A present folder is bound over itself; a mount point can
/// be neither renamed nor removed, so the name stays held. An absent one
/// is held by an empty read-only tmpfs: bwrap makes its mount point, an
/// empty folder of the project while the command runs, which `holds`
/// takes away after the last command that could hold it. A name that is a
/// link is held at its target when that lies in the project (the link
/// itself cannot be bound).
///
/// The other names of the auto-run table (`corral_fs::autorun`: `.vscode/`,
/// `.mcp.json`, `.envrc`...) are held the same way at the root when they
/// are there. An absent one is held only for a background command (given
/// `masks`: the empty read-only folder and file bound over it), which
/// may run for hours; a command that ends within its time limit would pay
/// a mount point and a mount for each on every run, and what it makes of
/// them is removed after it instead. Returns the absent names not held,
/// and the paths of those held (`.claude` and `.codex` included).
fn hold_agent_config(
    a: &mut Argv,
    root: &Path,
    masks: Option<&Path>,
) -> (Vec<&'static str>, Vec<PathBuf>) {
    let mut absent = Vec::new();
    let mut held = Vec::new();
    let others = corral_fs::autorun::AUTO_RUN
        .iter()
        .filter(|row| row.name != ".git" && !AGENT_CONFIG.contains(&row.name));
    for row in others {
        let path = root.join(row.name);
        if path.symlink_metadata().is_ok() {
            hold_present(a, root, &path);
        } else if let Some(masks) = masks {
            let mask = masks.join(if row.folder { "dir" } else { "file" });
            a.path2("--ro-bind", &mask, &path);
            held.push(path);
        } else {
            absent.push(row.name);
        }
    }
    for name in AGENT_CONFIG {
        let path = root.join(name);
        if path.symlink_metadata().is_ok() {
            hold_present(a, root, &path);
        } else {
            a.push(["--perms", "0555"]);
            a.path("--tmpfs", &path);
            a.path("--remount-ro", &path);
            held.push(path);
        }
    }
    (absent, held)
}

/// A file's or folder's identity: its device and inode.
type Identity = (u64, u64);

fn identity(path: &Path) -> Option<Identity> {
    use std::os::unix::fs::MetadataExt;
    path.symlink_metadata().ok().map(|m| (m.dev(), m.ino()))
}

/// What a command that writes the project must not leave behind, taken
/// from the look its fence was built from: the auto-run names absent from
/// the root and not held (`.git` is left to its programs: `cargo init`
/// makes a repository), and those already below it
/// ([`walks::auto_run_paths`]). What the command makes of them is removed
/// after it ([`AutoRunBefore::finish`]); a background command's, also
/// while it runs ([`AutoRunBefore::look`]), as soon as one is seen.
pub(crate) struct AutoRunBefore {
    absent: Vec<&'static str>,
    /// The names held at the root by a mount point of the command's, and
    /// the mount point once seen: only something put there in its place
    /// (the mount point removed from outside, which detaches the hold)
    /// was the command's to make.
    held: Vec<(PathBuf, Option<Identity>)>,
    below: std::sync::Arc<Vec<PathBuf>>,
    /// A background command: each name below the root as it was at the
    /// start (one replaced since is new).
    identities: Option<std::collections::HashMap<PathBuf, Identity>>,
    /// The last walk [`AutoRunBefore::look`] went through.
    looked: Option<std::sync::Arc<Vec<PathBuf>>>,
    notes: Vec<String>,
}

impl AutoRunBefore {
    fn new(
        absent: Vec<&'static str>,
        held: Vec<PathBuf>,
        below: std::sync::Arc<Vec<PathBuf>>,
        background: bool,
    ) -> AutoRunBefore {
        let identities = background.then(|| {
            below
                .iter()
                .filter_map(|path| Some((path.clone(), identity(path)?)))
                .collect()
        });
        AutoRunBefore {
            absent,
            held: held.into_iter().map(|path| (path, None)).collect(),
            below,
            identities,
            looked: None,
            notes: Vec::new(),
        }
    }

    /// While a background command runs (every few hundred milliseconds):
    /// removes what it made at an auto-run name below the root since the
    /// last look (a kept walk: a `stat` per folder when nothing changed),
    /// and anything put in place of a hold of the root.
    pub(crate) fn look(&mut self, root: &Path) {
        self.look_held(root);
        let (found, _) = walks::auto_run_paths(root, &AGENT_CONFIG);
        let seen = |walk: &Option<std::sync::Arc<Vec<PathBuf>>>| {
            walk.as_ref()
                .is_some_and(|w| std::sync::Arc::ptr_eq(w, &found))
        };
        if seen(&self.looked) || std::sync::Arc::ptr_eq(&self.below, &found) {
            return;
        }
        let made: Vec<PathBuf> = found.iter().filter(|p| self.is_new(p)).cloned().collect();
        self.looked = Some(found);
        self.note(remove_made(root, &made, false));
    }

    /// Whether `path` (below the root) was not there at the start.
    fn is_new(&self, path: &Path) -> bool {
        match &self.identities {
            Some(ids) => ids.get(path).is_none_or(|id| identity(path) != Some(*id)),
            None => !self.below.iter().any(|p| p == path),
        }
    }

    /// The mount points of the root's holds: each one's identity once it
    /// is there; another file or folder at its path is removed.
    fn look_held(&mut self, root: &Path) {
        let mut replaced = Vec::new();
        for (path, seen) in &mut self.held {
            match (*seen, identity(path)) {
                (None, now) => *seen = now,
                (Some(was), Some(now)) if was != now => replaced.push(path.clone()),
                _ => {}
            }
        }
        self.note(remove_made(root, &replaced, false));
    }

    fn note(&mut self, notes: Vec<String>) {
        for note in notes {
            if !self.notes.contains(&note) {
                self.notes.push(note);
            }
        }
    }

    /// After the command ended: removes what it made of them (a root name
    /// that was absent, a name below the root that was not there), and
    /// says what was removed, while it ran too.
    pub(crate) fn finish(mut self, root: &Path) -> Vec<String> {
        self.look_held(root);
        let (below, _) = walks::auto_run_paths(root, &AGENT_CONFIG);
        // The same walk as at the start, kept: no folder it entered
        // changed, and the root has the names it had (its listing, but
        // `.claude` and `.codex`): nothing was made.
        if std::sync::Arc::ptr_eq(&below, &self.below) {
            return self.notes;
        }
        let mut made: Vec<PathBuf> = self.absent.iter().map(|name| root.join(name)).collect();
        // Another command's hold may have made one since (a background
        // command started meanwhile): its mount point stays, emptied.
        let (held, free): (Vec<PathBuf>, Vec<PathBuf>) =
            made.drain(..).partition(|path| super::holds::held(path));
        let mut notes = remove_made(root, &held, true);
        notes.extend(remove_made(root, &free, false));
        self.note(notes);
        let made: Vec<PathBuf> = below.iter().filter(|p| self.is_new(p)).cloned().collect();
        let notes = remove_made(root, &made, false);
        self.note(notes);
        self.notes
    }
}

/// Removes each of `made` (a link as a link, a folder whole), and says so
/// for each. With `emptied`, each is another command's mount point
/// (`holds::held`): what is in it is removed, the folder (or file, left
/// empty) stays, so that command's hold does not come undone.
fn remove_made(root: &Path, made: &[PathBuf], emptied: bool) -> Vec<String> {
    let mut notes = Vec::new();
    for path in made {
        let Ok(meta) = path.symlink_metadata() else {
            continue;
        };
        let name = path
            .strip_prefix(root)
            .unwrap_or(path)
            .display()
            .to_string();
        let Some(last) = path.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        let removed = if emptied && !meta.file_type().is_symlink() {
            match empty(path, &meta) {
                Ok(false) => continue,
                Ok(true) => Ok(()),
                Err(e) => Err(e),
            }
        } else if meta.is_dir() {
            // What the command itself made, never followed
            // (`remove_dir_all` removes a link, not what it leads to).
            #[allow(clippy::disallowed_methods)]
            let removed = std::fs::remove_dir_all(path);
            removed
        } else {
            #[allow(clippy::disallowed_methods)]
            let removed = std::fs::remove_file(path);
            removed
        };
        let runs_it = corral_fs::autorun::auto_run(last).map_or("", |row| row.runs_it);
        notes.push(match removed {
            Ok(()) => format!(
                "the command made `{name}`, which another program runs or loads by itself ({runs_it}); it was removed: such files are the user's to make"
            ),
            Err(e) => format!(
                "the command made `{name}`, which another program runs or loads by itself ({runs_it}), and it could not be removed: {e}"
            ),
        });
    }
    notes
}

/// Empties the folder or file at `path` (not a link), keeping it; whether
/// there was anything in it.
// A mount point of a hold in the project: what a command put in it is
// removed, never followed (`remove_dir_all` removes a link as a link;
// the file is opened without following one).
#[allow(clippy::disallowed_methods)]
fn empty(path: &Path, meta: &std::fs::Metadata) -> std::io::Result<bool> {
    if meta.is_dir() {
        let mut any = false;
        for entry in std::fs::read_dir(path)? {
            let entry = entry?;
            any = true;
            if entry.file_type()?.is_dir() {
                std::fs::remove_dir_all(entry.path())?;
            } else {
                std::fs::remove_file(entry.path())?;
            }
        }
        Ok(any)
    } else if meta.len() > 0 {
        use std::os::unix::fs::OpenOptionsExt;
        std::fs::OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_NOFOLLOW)
            .open(path)?
            .set_len(0)?;
        Ok(true)
    } else {
        Ok(false)
    }
}

/// Binds `path` read-only over itself if it is there; a link is held at
/// its target when that lies in the project (the link itself cannot be
/// bound).
fn hold_present(a: &mut Argv, root: &Path, path: &Path) {
    match path.symlink_metadata() {
        Ok(meta) if meta.file_type().is_symlink() => {
            if let Ok(target) = std::fs::canonicalize(path) {
                if target.starts_with(root) {
                    a.path2("--ro-bind", &target, &target);
                }
            }
        }
        Ok(_) => a.path2("--ro-bind", path, path),
        Err(_) => {}
    }
}

/// What git writes in its own folders for ordinary work (commits,
/// branches, merges, rebases, fetches, the index), by name at the top of a
/// git dir or common dir; lock files (`*.lock`) and the bisect and notes
/// merge state (`BISECT_*`, `NOTES_MERGE_*`) too. Everything else there
/// (`config`, `hooks/`, `info/`, `modules/`, `worktrees/`, `commondir`,
/// `description`...) is read-only even to an approved git: what it holds
/// is read as configuration, or run, by the user's own git later.
pub(crate) const GIT_WRITES: [&str; 28] = [
    "objects",
    "refs",
    "logs",
    "index",
    "sharedindex",
    "HEAD",
    "ORIG_HEAD",
    "FETCH_HEAD",
    "MERGE_HEAD",
    "MERGE_MSG",
    "MERGE_MODE",
    "MERGE_RR",
    "AUTO_MERGE",
    "CHERRY_PICK_HEAD",
    "REVERT_HEAD",
    "REBASE_HEAD",
    "COMMIT_EDITMSG",
    "SQUASH_MSG",
    "TAG_EDITMSG",
    "packed-refs",
    "shallow",
    "rebase-merge",
    "rebase-apply",
    "sequencer",
    "rr-cache",
    "gc.pid",
    "gc.log",
    "lost-found",
];

/// Whether git may write `name` at the top of its folder ([`GIT_WRITES`]).
pub(crate) fn git_may_write(name: &str) -> bool {
    GIT_WRITES.contains(&name)
        || name.ends_with(".lock")
        || name.starts_with("BISECT_")
        || name.starts_with("NOTES_MERGE_")
        || name.starts_with("sharedindex.")
}

/// The names git reads configuration or programs from that may be
/// absent from the common dir; an approved git finds each held by an
/// empty read-only file (`config`) or folder while it runs, so it cannot
/// create them. (`commondir` cannot be held so: git refuses an empty
/// one. git itself writes it only in `worktrees/`, held; the argument
/// rules keep every write target out of git's folders.)
pub(crate) const GIT_HELD: [(&str, bool); 5] = [
    ("config", false),
    ("hooks", true),
    ("info", true),
    ("modules", true),
    ("worktrees", true),
];

/// Every path a command of `program` that writes the project may hold by
/// making a mount point ([`AGENT_CONFIG`], every other auto-run name of
/// the root for a background command, and [`GIT_HELD`] for git).
pub(crate) fn held_paths(root: &Path, program: &str, background: bool) -> Vec<PathBuf> {
    let mut paths: Vec<PathBuf> = AGENT_CONFIG.iter().map(|name| root.join(name)).collect();
    if background {
        let others = corral_fs::autorun::AUTO_RUN
            .iter()
            .filter(|row| row.name != ".git" && !AGENT_CONFIG.contains(&row.name));
        paths.extend(others.map(|row| root.join(row.name)));
    }
    if program == "git" {
        paths.extend(git_held_paths(root));
    }
    paths
}

/// Where the absent names of [`GIT_HELD`] would be made in the project's
/// repository: the mount points an approved git's run may leave, for
/// `holds` to take away.
pub(crate) fn git_held_paths(root: &Path) -> Vec<PathBuf> {
    let Some(repo) = Repository::of(root) else {
        return Vec::new();
    };
    GIT_HELD
        .iter()
        .map(|(name, _)| repo.common_dir.join(name))
        .filter(|path| path.symlink_metadata().is_err())
        .collect()
}

/// Makes everything in a git dir or common dir `dir` read-only for an
/// approved git but what [`git_may_write`] names, and holds the absent
/// names of [`GIT_HELD`] in the common dir. A linked worktree's git dir,
/// inside the common dir's `worktrees/`, gets the same table; its
/// siblings there are read-only.
// Lists the repository's git folders (a worktree's common dir may lie
// outside the project) for the mount's binds: names only, no file read.
#[allow(clippy::disallowed_methods)]
fn hold_git_dir(a: &mut Argv, dir: &Path, repo: &Repository, masks: &Path, beyond: &[&str]) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let git_dir = repo.git_dir.as_path();
    let mut present = Vec::new();
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name();
        let name = name.to_string_lossy().into_owned();
        let approved = dir == repo.common_dir && beyond.contains(&name.as_str());
        if git_may_write(&name) || approved {
            present.push(name);
            continue;
        }
        if path.as_path() != git_dir && git_dir.starts_with(&path) {
            for inner in std::fs::read_dir(&path).into_iter().flatten().flatten() {
                let inner = inner.path();
                if inner.as_path() == git_dir {
                    hold_git_dir(a, git_dir, repo, masks, beyond);
                } else {
                    a.path2("--ro-bind", &inner, &inner);
                }
            }
        } else {
            a.path2("--ro-bind", &path, &path);
        }
        present.push(name);
    }
    if dir == repo.common_dir {
        for (name, folder) in GIT_HELD {
            if !present.iter().any(|p| p == name) && !beyond.contains(&name) {
                let mask = masks.join(if folder { "dir" } else { "file" });
                a.path2("--ro-bind", &mask, &dir.join(name));
            }
        }
    }
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
    /// Copies git's configuration file at `path` in at its own path,
    /// read-only, with only its safe sections (`gitconfig`); an absent or
    /// unreadable one is left out.
    // Copies a git configuration file of the user's home, never a project's.
    #[allow(clippy::disallowed_methods)]
    fn copy_shown(&mut self, path: &Path, files: &mut Vec<File>) {
        use std::io::{Read, Seek, SeekFrom, Write};
        const MOST: u64 = 1024 * 1024;
        let Ok(file) = File::open(path) else {
            return;
        };
        let mut text = String::new();
        if file.take(MOST).read_to_string(&mut text).is_err() {
            return;
        }
        let made = rustix::fs::memfd_create("corral-gitconfig", rustix::fs::MemfdFlags::CLOEXEC)
            .map(File::from)
            .map_err(std::io::Error::from)
            .and_then(|mut copy| {
                copy.write_all(super::gitconfig::shown(&text).as_bytes())?;
                copy.seek(SeekFrom::Start(0))?;
                Ok(copy)
            });
        if let Ok(copy) = made {
            self.push(["--perms", "0444", "--file"]);
            self.0.push(copy.as_raw_fd().to_string().into());
            self.0.push(path.into());
            files.push(copy);
        }
    }

    /// Copies a file in at its own path, read-only, executable if it was
    /// (`--file FD`: bwrap reads it from `files`); one the app cannot read
    /// is left out, as a missing one.
    // Copies the system's and the home toolchains' files the view shows,
    // never a project's file.
    #[allow(clippy::disallowed_methods)]
    fn copy(&mut self, path: &Path, files: &mut Vec<File>) {
        if let Ok(file) = File::open(path) {
            use std::os::unix::fs::PermissionsExt;
            let runs = file
                .metadata()
                .is_ok_and(|m| m.permissions().mode() & 0o111 != 0);
            self.push(["--perms", if runs { "0555" } else { "0444" }, "--file"]);
            self.0.push(file.as_raw_fd().to_string().into());
            self.0.push(path.into());
            files.push(file);
        }
    }
    fn path2(&mut self, flag: &str, from: &Path, to: &Path) {
        self.0.push(flag.into());
        self.0.push(from.into());
        self.0.push(to.into());
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// A stand-in for bwrap: a script that counts its runs in `runs` and
    /// exits with `code`.
    #[allow(clippy::disallowed_methods)]
    fn fake_bwrap(dir: &Path, code: u8) -> (PathBuf, PathBuf) {
        use std::os::unix::fs::PermissionsExt;
        let runs = dir.join(format!("runs-{code}"));
        let program = dir.join(format!("bwrap-{code}"));
        let script = format!("#!/bin/sh\necho run >> '{}'\nexit {code}\n", runs.display());
        std::fs::write(&program, script).unwrap();
        std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755)).unwrap();
        (program, runs)
    }

    #[allow(clippy::disallowed_methods)]
    fn count(runs: &Path) -> usize {
        std::fs::read_to_string(runs).map_or(0, |t| t.lines().count())
    }

    #[test]
    #[allow(clippy::disallowed_methods)]
    fn a_probe_that_succeeded_is_kept_and_the_next_process_runs_none() {
        let dir = tempfile::tempdir().unwrap();
        let kept = dir.path().join("cache").join("bwrap-probe");
        let (bwrap, runs) = fake_bwrap(dir.path(), 0);
        // The first: bwrap runs, its success is kept.
        let (found, inputs) = probe_kept(bwrap.clone(), Some(&kept));
        assert_eq!(found.unwrap(), bwrap);
        assert_eq!(count(&runs), 1);
        let inputs = inputs.unwrap();
        let file = kept.join(super::super::probed::name(&inputs));
        assert!(file.is_file());
        // The next finds it: no run.
        let (found, from) = probe_kept(bwrap.clone(), Some(&kept));
        assert_eq!(found.unwrap(), bwrap);
        assert_eq!(from.as_deref(), Some(inputs.as_str()));
        assert_eq!(count(&runs), 1);
        // Corrupted: bwrap runs again, and the file is whole again.
        std::fs::write(&file, "corral bwrap probe 1\nnamespaces: yes\n").unwrap();
        let (found, _) = probe_kept(bwrap.clone(), Some(&kept));
        assert!(found.is_ok());
        assert_eq!(count(&runs), 2);
        let _ = probe_kept(bwrap.clone(), Some(&kept));
        assert_eq!(count(&runs), 2);
        // Writable by others: the same.
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o666)).unwrap();
        }
        let _ = probe_kept(bwrap.clone(), Some(&kept));
        assert_eq!(count(&runs), 3);
        let _ = probe_kept(bwrap.clone(), Some(&kept));
        assert_eq!(count(&runs), 3);
        // Forgotten (bwrap failed where it was said to work): runs again.
        super::super::probed::forget(&kept, &inputs);
        let _ = probe_kept(bwrap.clone(), Some(&kept));
        assert_eq!(count(&runs), 4);
        // No folder to keep it in: bwrap runs every time.
        let _ = probe_kept(bwrap.clone(), None);
        let _ = probe_kept(bwrap, None);
        assert_eq!(count(&runs), 6);
    }

    #[test]
    #[allow(clippy::disallowed_methods)]
    fn a_probe_that_failed_is_never_kept() {
        let dir = tempfile::tempdir().unwrap();
        let kept = dir.path().join("cache").join("bwrap-probe");
        let (bwrap, runs) = fake_bwrap(dir.path(), 1);
        for run in 1..=3 {
            let (found, inputs) = probe_kept(bwrap.clone(), Some(&kept));
            assert!(found.is_err());
            assert!(inputs.is_none());
            assert_eq!(count(&runs), run);
        }
        let kept_files = std::fs::read_dir(&kept).map_or(0, |d| d.count());
        assert_eq!(kept_files, 0);
    }

    /// Every path bwrap is told to show, make or copy for `program` in
    /// the build profile of a project.
    fn named(program: &str, executable: &Path) -> Vec<PathBuf> {
        let dir = tempfile::tempdir().unwrap();
        let root = ProjectRoot::open(dir.path()).unwrap();
        let caches = dir.path().join("caches");
        let layout = Layout {
            root: &root,
            profile: Profile::Build,
            program,
            git_writes: &[],
            executable,
            tmpdir: dir.path(),
            tmp_bytes: 1 << 20,
            mask_dir: dir.path(),
            etc: None,
            cwd: root.path(),
            caches: Some(&caches),
            caches_full: false,
            background: false,
        };
        argv(&layout)
            .args
            .iter()
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
            .collect()
    }

    #[test]
    fn a_leaf_program_gets_neither_the_home_s_toolchains_nor_the_caches() {
        let home = env::home();
        let toolchains = view::home_toolchains(
            home.as_deref(),
            env::cargo_home().as_deref(),
            std::env::var_os("RUSTUP_HOME")
                .map(PathBuf::from)
                .as_deref(),
        );
        let node = named("node", Path::new("/usr/bin/node"));
        for part in &toolchains {
            assert!(node.contains(part), "{part:?} {node:?}");
        }
        assert!(node.iter().any(|p| p.ends_with("caches")), "{node:?}");
        for leaf in ["touch", "mkdir", "cp", "mv", "rm", "ls", "grep"] {
            let seen = named(leaf, &Path::new("/usr/bin").join(leaf));
            // The home itself is an empty folder (`$HOME` names it).
            let from_home: Vec<_> = seen
                .iter()
                .filter(|p| home.as_deref().is_some_and(|h| p.starts_with(h) && *p != h))
                .collect();
            assert!(from_home.is_empty(), "{leaf}: {from_home:?}");
            assert!(
                !seen.iter().any(|p| p.ends_with("caches")),
                "{leaf}: {seen:?}"
            );
        }
        // The same name outside the system folders is not taken for one.
        assert!(view::needs_toolchains(
            "touch",
            Path::new("/opt/x/bin/touch")
        ));
    }
}
