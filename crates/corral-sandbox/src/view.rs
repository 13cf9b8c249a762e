//! What a sandboxed child sees of the machine: an allowlist, built from
//! nothing (as Flatpak builds its sandboxes), never `/` minus a list.
//!
//! - the system's programs and libraries, read-only ([`SYSTEM`]);
//! - only the `/etc` files programs need ([`ETC`], each with its reason in
//!   `docs/security.md`), its folders bound, its files copied;
//! - of the home, only the toolchains' programs ([`home_toolchains`]):
//!   never cargo's credentials or `config.toml`, `~/.npmrc`, nvm's global
//!   `etc/npmrc`, uv's credentials or `~/go/src`;
//! - a user-added program's own install prefix, read-only
//!   ([`install_prefixes`]).
//!
//! The namespace module adds the project, a private `/tmp`, `/proc`,
//! `/dev`, empty `/run` and `/var/run`, and Corral's own caches.

// Reads a program's `pyvenv.cfg` outside the project, never the project.
#![allow(clippy::disallowed_methods)]

use super::stamp::RECHECK;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

/// System folders, read-only. A symbolic link among them (`/bin ->
/// usr/bin` on merged-`/usr` systems) is recreated as the same link.
pub(crate) const SYSTEM: [&str; 7] = [
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
];

/// The files and folders of `/etc` programs read, read-only; nothing else
/// of `/etc` is there (no `shadow`, `ssh`, `npmrc`, `gitconfig`,
/// `machine-id`, service configurations). Why each is needed is in
/// `docs/security.md`.
pub(crate) const ETC: [&str; 20] = [
    "/etc/alternatives",
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/passwd",
    "/etc/group",
    "/etc/nsswitch.conf",
    "/etc/host.conf",
    "/etc/gai.conf",
    "/etc/hosts",
    "/etc/resolv.conf",
    "/etc/services",
    "/etc/protocols",
    "/etc/ssl/certs",
    "/etc/ssl/openssl.cnf",
    "/etc/ca-certificates",
    "/etc/ca-certificates.conf",
    "/etc/localtime",
    "/etc/timezone",
    "/etc/os-release",
];

/// A system entry as the child gets it.
pub(crate) enum SystemEntry {
    /// A folder bound read-only at the same path.
    Bind(PathBuf),
    /// A file of `/etc`, copied to the same path, read-only: a copy is
    /// no mount for bwrap to make and check (about a millisecond each on
    /// a busy machine), and a file bound is as much a snapshot (a file
    /// replaced by a rename is not seen through the bind either).
    Copy(PathBuf),
    /// A symbolic link recreated with the same target.
    Link { target: PathBuf, at: PathBuf },
}

/// The system folders present on this machine.
pub(crate) fn system() -> Vec<SystemEntry> {
    let mut entries = Vec::new();
    for path in SYSTEM {
        let path = Path::new(path);
        match path.symlink_metadata() {
            Ok(meta) if meta.file_type().is_symlink() => {
                if let Ok(target) = std::fs::read_link(path) {
                    entries.push(SystemEntry::Link {
                        target,
                        at: path.to_path_buf(),
                    });
                }
            }
            Ok(_) => entries.push(SystemEntry::Bind(path.to_path_buf())),
            Err(_) => {}
        }
    }
    entries
}

/// The `/etc` files and folders present on this machine, one by one: what
/// the child gets where the prepared copy ([`super::etc`]) cannot be made.
pub(crate) fn etc_entries() -> Vec<SystemEntry> {
    // `/etc` entries are taken by what they lead to (`/etc/resolv.conf`
    // is often a link into `/run`, which the child does not see).
    ETC.iter()
        .map(PathBuf::from)
        .filter_map(|path| match path.metadata() {
            Ok(meta) if meta.is_file() => Some(SystemEntry::Copy(path)),
            Ok(_) => Some(SystemEntry::Bind(path)),
            Err(_) => None,
        })
        .collect()
}

/// Programs that start no other program and need nothing of the home
/// (the file utilities and grep): run from the system folders, they get
/// none of the home's toolchains nor Corral's caches, so a command such
/// as `mkdir` or `touch` sees less and starts sooner. (`find` is not one:
/// its rules refuse `-exec`, but it is a way to run programs.)
const LEAF_PROGRAMS: [&str; 7] = ["ls", "grep", "mkdir", "rm", "mv", "cp", "touch"];

/// Whether `program`, run as `executable`, gets the home's toolchains
/// and Corral's caches: all but a leaf program from the system folders.
pub(crate) fn needs_toolchains(program: &str, executable: &Path) -> bool {
    !(LEAF_PROGRAMS.contains(&program) && is_system(executable))
}

/// The parts of the home (and of `$CARGO_HOME`, `$RUSTUP_HOME`) a
/// toolchain needs to run, that exist here: programs and installed
/// toolchains, read-only. Never a whole toolchain home that holds
/// credentials (`~/.cargo/credentials.toml`, uv's `credentials/`), config
/// with tokens (`~/.cargo/config.toml`, nvm's `etc/npmrc`) or other
/// projects (`~/go/src`). rustup's home holds none (its toolchains, its
/// settings, its downloads): it is shown whole, one mount where its parts
/// were a mount and three copies, unless cargo's home or the home lies in
/// it.
pub(crate) fn home_toolchains(
    home: Option<&Path>,
    cargo_home: Option<&Path>,
    rustup_home: Option<&Path>,
) -> Vec<PathBuf> {
    let mut parts: Vec<PathBuf> = Vec::new();
    if let Some(cargo) = cargo_home {
        parts.push(cargo.join("bin"));
    }
    let rustup = rustup_home
        .map(Path::to_path_buf)
        .or_else(|| home.map(|h| h.join(".rustup")));
    if let Some(rustup) = rustup {
        let holds_more = [cargo_home, home]
            .into_iter()
            .flatten()
            .any(|other| other.starts_with(&rustup));
        if holds_more {
            parts.extend(
                ["toolchains", "settings.toml", "update-hashes"]
                    .iter()
                    .map(|p| rustup.join(p)),
            );
        } else {
            parts.push(rustup);
        }
    }
    if let Some(home) = home {
        parts.extend(
            [
                ".bun/bin",
                ".volta/bin",
                ".volta/tools/image",
                ".local/share/pnpm",
                "go/bin",
                ".local/share/uv/python",
                ".local/share/uv/tools",
                ".pyenv",
            ]
            .iter()
            .map(|p| home.join(p)),
        );
        // Each node nvm installed, without its `etc/` (a global `npmrc`
        // may hold a registry token).
        if let Ok(versions) = std::fs::read_dir(home.join(".nvm/versions/node")) {
            for version in versions.flatten() {
                parts.extend(
                    ["bin", "lib", "include", "share"]
                        .iter()
                        .map(|p| version.path().join(p)),
                );
            }
        }
    }
    parts.retain(|p| p.symlink_metadata().is_ok());
    parts
}

/// A toolchain part as the child gets it. Small parts are copied in
/// (rustup's `settings.toml` and `update-hashes/` where its home is not
/// shown whole): no mount each, and as much a snapshot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Part {
    /// Bound read-only at its own path.
    Bind(PathBuf),
    /// A small file, copied in.
    Copy(PathBuf),
    /// A folder of a few small files, made and its files copied in.
    Folder { at: PathBuf, files: Vec<PathBuf> },
}

impl Part {
    pub(crate) fn path(&self) -> &Path {
        match self {
            Part::Bind(path) | Part::Copy(path) => path,
            Part::Folder { at, .. } => at,
        }
    }
}

/// The parts of [`home_toolchains`], each as the child gets it, found
/// again when the last look is [`RECHECK`] old or the homes differ:
/// finding them takes some thirty `stat`s and folder reads (about 0.08
/// ms), which every command that starts others paid.
pub(crate) fn toolchain_parts(
    home: Option<&Path>,
    cargo_home: Option<&Path>,
    rustup_home: Option<&Path>,
) -> Arc<Vec<Part>> {
    static FOUND: Mutex<Option<Found>> = Mutex::new(None);
    let mut found = FOUND.lock().unwrap_or_else(PoisonError::into_inner);
    parts_from(&mut found, [home, cargo_home, rustup_home], Instant::now())
}

/// The parts last found, for which homes, and when.
struct Found {
    homes: [Option<PathBuf>; 3],
    at: Instant,
    parts: Arc<Vec<Part>>,
}

/// [`toolchain_parts`] for `homes` (the home, cargo's, rustup's) at
/// `now`, with what was last `found`.
fn parts_from(
    found: &mut Option<Found>,
    homes: [Option<&Path>; 3],
    now: Instant,
) -> Arc<Vec<Part>> {
    let owned = homes.map(|h| h.map(Path::to_path_buf));
    if let Some(last) = found.as_ref() {
        if last.homes == owned && now.saturating_duration_since(last.at) < RECHECK {
            return last.parts.clone();
        }
    }
    let [home, cargo_home, rustup_home] = homes;
    let parts: Arc<Vec<Part>> = Arc::new(
        home_toolchains(home, cargo_home, rustup_home)
            .into_iter()
            .map(|path| match small_files(&path) {
                Some(files) if files.is_empty() => Part::Copy(path),
                Some(files) => Part::Folder { at: path, files },
                None => Part::Bind(path),
            })
            .collect(),
    );
    *found = Some(Found {
        homes: owned,
        at: now,
        parts: parts.clone(),
    });
    parts
}

/// What of a toolchain part is copied instead of bound: nothing more
/// for a small file (the file itself), or the files of a folder holding
/// only a few small files; `None` for anything else (bound). A program's
/// binaries (megabytes each) are bound, not copied at every run.
fn small_files(part: &Path) -> Option<Vec<PathBuf>> {
    const MOST: usize = 8;
    const SMALL: u64 = 64 * 1024;
    let meta = part.symlink_metadata().ok()?;
    if meta.is_file() {
        return (meta.len() <= SMALL).then(Vec::new);
    }
    if !meta.is_dir() {
        return None;
    }
    let mut files = Vec::new();
    for entry in std::fs::read_dir(part).ok()? {
        let entry = entry.ok()?;
        let small = entry
            .metadata()
            .is_ok_and(|m| m.is_file() && m.len() <= SMALL);
        if files.len() == MOST || !entry.file_type().ok()?.is_file() || !small {
            return None;
        }
        files.push(entry.path());
    }
    (!files.is_empty()).then_some(files)
}

/// The install prefix of a program outside the system folders (a venv
/// holding an MCP server, a node prefix), and of the programs its `bin`
/// links to (a venv's `python` leads to the Python it was made from),
/// read-only; empty for a program under the system folders or in a
/// toolchain part already `visible` (`~/.cargo/bin/cargo` runs from what
/// is there: its prefix would be the whole cargo home, credentials and
/// all). A prefix in the `home` is shown by its install parts only
/// ([`INSTALL_PARTS`]): `~/.local` is pip's and npm's prefix for a user,
/// and also holds uv's credentials in `share/`.
pub(crate) fn install_prefixes(
    program: &Path,
    visible: &[PathBuf],
    home: Option<&Path>,
) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = Vec::new();
    let mut queue = vec![program.to_path_buf()];
    if let Ok(real) = std::fs::canonicalize(program) {
        queue.push(real);
    }
    while let Some(path) = queue.pop() {
        if found.len() > 32 {
            break;
        }
        if visible.iter().any(|v| path.starts_with(v)) {
            continue;
        }
        let Some(prefix) = prefix_of(&path, home) else {
            continue;
        };
        let parts = shown(&prefix, home);
        let seen = |part: &PathBuf| {
            visible.iter().any(|v| part.starts_with(v)) || found.iter().any(|f| part.starts_with(f))
        };
        if is_system(&prefix) || parts.iter().all(seen) {
            continue;
        }
        // A wider prefix takes the place of the folders found inside what
        // it shows, whatever the order they came in: `~/.local/bin/tool`
        // linking into `~/.local/lib/node_modules/tool` needs the link's
        // folder too (while a pipx venv in `~/.local/share` stays).
        found.retain(|f| !parts.iter().any(|part| f.starts_with(part)));
        // A venv names the Python it runs (`home = ...` in `pyvenv.cfg`),
        // and its `bin` links lead to it.
        if let Ok(cfg) = std::fs::read_to_string(prefix.join("pyvenv.cfg")) {
            for line in cfg.lines() {
                if let Some(("home", value)) = line.split_once('=').map(|(k, v)| (k.trim(), v)) {
                    queue.push(PathBuf::from(value.trim()).join("python3"));
                }
            }
        }
        if let Ok(entries) = std::fs::read_dir(prefix.join("bin")) {
            for entry in entries.flatten().take(256) {
                if entry.file_type().is_ok_and(|t| t.is_symlink()) {
                    if let Ok(real) = std::fs::canonicalize(entry.path()) {
                        queue.push(real);
                    }
                }
            }
        }
        found.extend(parts);
    }
    found
}

/// What of an install prefix is shown: the prefix, or in the home its
/// install parts ([`INSTALL_PARTS`]).
fn shown(prefix: &Path, home: Option<&Path>) -> Vec<PathBuf> {
    match home {
        Some(home) if prefix.starts_with(home) && is_install_prefix(prefix) => INSTALL_PARTS
            .iter()
            .map(|part| prefix.join(part))
            .filter(|part| part.symlink_metadata().is_ok())
            .collect(),
        _ => vec![prefix.to_path_buf()],
    }
}

/// Whether `prefix` is one programs are installed into (it has a `bin`),
/// not a node package (those are shown whole: the package is the program).
fn is_install_prefix(prefix: &Path) -> bool {
    prefix.join("bin").is_dir() && !prefix.components().any(|c| c.as_os_str() == "node_modules")
}

/// What of an install prefix in the home a program may need: its
/// programs, libraries and headers, and a venv's `pyvenv.cfg`; never its
/// `etc/` (an npm prefix's `npmrc` may hold a registry token) nor its
/// `share/` (`~/.local/share` holds uv's credentials, keyrings, other
/// programs' data).
const INSTALL_PARTS: [&str; 7] = [
    "bin",
    "sbin",
    "lib",
    "lib64",
    "libexec",
    "include",
    "pyvenv.cfg",
];

/// The folder a program is installed in: the parent of its `bin` folder,
/// or its own folder when it is not in one.
fn prefix_of(program: &Path, home: Option<&Path>) -> Option<PathBuf> {
    let dir = program.parent()?;
    let prefix = match dir.file_name() {
        // `node_modules/.bin`: the whole `node_modules`, where its links lead.
        // `~/bin/tool`: the folder, never the whole home.
        Some(name) if name == "bin" && dir.parent() == home => dir,
        Some(name) if name == "bin" || name == "sbin" || name == ".bin" => dir.parent()?,
        _ => package_of(dir).unwrap_or(dir),
    };
    // Never the whole home, a top-level folder or `/`.
    (prefix.components().count() > 2 && Some(prefix) != home).then(|| prefix.to_path_buf())
}

/// The node package a file lies in (`.../node_modules/pkg` or
/// `.../node_modules/@scope/pkg`): a global install's link leads to a file
/// deep in it, and the file needs the package's own `node_modules`.
fn package_of(dir: &Path) -> Option<&Path> {
    let parts: Vec<_> = dir.components().collect();
    let at = parts.iter().position(|c| c.as_os_str() == "node_modules")?;
    let scoped = parts
        .get(at + 1)
        .is_some_and(|c| c.as_os_str().to_string_lossy().starts_with('@'));
    let depth = at + if scoped { 3 } else { 2 };
    let mut package = dir;
    for _ in depth..parts.len() {
        package = package.parent()?;
    }
    (depth <= parts.len()).then_some(package)
}

/// Whether `path` lies in a system folder the child sees anyway.
fn is_system(path: &Path) -> bool {
    SYSTEM.iter().any(|s| path.starts_with(s))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn touch(path: &Path) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, "x").unwrap();
    }

    #[test]
    fn rustup_s_home_is_shown_whole_unless_another_home_lies_in_it() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path();
        let (cargo, rustup) = (home.join(".cargo"), home.join(".rustup"));
        for file in [
            cargo.join("bin/cargo"),
            cargo.join("credentials.toml"),
            rustup.join("toolchains/stable/bin/cargo"),
            rustup.join("settings.toml"),
            rustup.join("update-hashes/stable"),
        ] {
            touch(&file);
        }
        let parts = home_toolchains(Some(home), Some(&cargo), Some(&rustup));
        assert_eq!(parts, [cargo.join("bin"), rustup.clone()]);
        assert_eq!(
            home_toolchains(Some(home), Some(&cargo), None),
            parts,
            "~/.rustup by default"
        );

        // `RUSTUP_HOME` set to cargo's home (or the home): only its parts,
        // never `credentials.toml`.
        for shared in [&cargo, &home.to_path_buf()] {
            touch(&shared.join("toolchains/stable/bin/cargo"));
            touch(&shared.join("settings.toml"));
            let parts = home_toolchains(Some(home), Some(&cargo), Some(shared));
            assert!(!parts.contains(shared), "{parts:?}");
            assert!(parts.contains(&shared.join("toolchains")), "{parts:?}");
            assert!(parts.contains(&shared.join("settings.toml")), "{parts:?}");
        }
    }

    #[test]
    fn toolchain_parts_are_found_again_a_second_later_or_for_other_homes() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        let cargo = home.join(".cargo");
        touch(&cargo.join("bin/cargo"));
        touch(&home.join(".rustup/settings.toml"));
        let homes = [Some(home.as_path()), Some(cargo.as_path()), None];
        let mut found = None;
        let now = Instant::now();
        let first = parts_from(&mut found, homes, now);
        assert_eq!(
            *first,
            [
                Part::Folder {
                    at: cargo.join("bin"),
                    files: vec![cargo.join("bin/cargo")],
                },
                Part::Folder {
                    at: home.join(".rustup"),
                    files: vec![home.join(".rustup/settings.toml")],
                },
            ]
        );
        // A toolchain installed now is seen once the second is over.
        touch(&home.join(".bun/bin/bun"));
        assert_eq!(parts_from(&mut found, homes, now + RECHECK / 2), first);
        let later = parts_from(&mut found, homes, now + RECHECK);
        let paths = |parts: &[Part]| {
            parts
                .iter()
                .map(|p| p.path().to_path_buf())
                .collect::<Vec<_>>()
        };
        assert!(paths(&later).contains(&home.join(".bun/bin")), "{later:?}");
        // Other homes are never answered from the last look.
        let other = dir.path().join("other");
        touch(&other.join(".bun/bin/bun"));
        let theirs = parts_from(
            &mut found,
            [Some(other.as_path()), None, None],
            now + RECHECK,
        );
        assert_eq!(paths(&theirs), [other.join(".bun/bin")]);
    }

    #[test]
    fn a_prefix_in_the_home_is_shown_by_its_install_parts_only() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path();
        let tool = home.join(".local/bin/tool");
        for file in [
            &tool,
            &home.join(".local/lib/node_modules/tool/cli.js"),
            &home.join(".local/share/uv/credentials/credentials.toml"),
            &home.join(".local/etc/npmrc"),
        ] {
            touch(file);
        }
        let parts = install_prefixes(&tool, &[], Some(home));
        assert_eq!(parts, [home.join(".local/bin"), home.join(".local/lib")]);

        // A venv keeps what it runs from, its `pyvenv.cfg` included.
        let venv = home.join("venvs/server");
        touch(&venv.join("bin/server"));
        touch(&venv.join("lib/python3/site-packages/server.py"));
        touch(&venv.join("pyvenv.cfg"));
        touch(&venv.join("share/secret.txt"));
        let parts = install_prefixes(&venv.join("bin/server"), &[], Some(home));
        assert_eq!(
            parts,
            [venv.join("bin"), venv.join("lib"), venv.join("pyvenv.cfg")]
        );

        // pipx: a link in `~/.local/bin` to a venv in `~/.local/share`.
        let pipx = home.join(".local/share/pipx/venvs/server");
        touch(&pipx.join("bin/server"));
        touch(&pipx.join("pyvenv.cfg"));
        touch(&pipx.join("lib/python3/site-packages/server.py"));
        let link = home.join(".local/bin/server");
        std::os::unix::fs::symlink(pipx.join("bin/server"), &link).unwrap();
        let mut parts = install_prefixes(&link, &[], Some(home));
        parts.sort();
        let mut expected = vec![
            home.join(".local/bin"),
            home.join(".local/lib"),
            pipx.join("bin"),
            pipx.join("lib"),
            pipx.join("pyvenv.cfg"),
        ];
        expected.sort();
        assert_eq!(parts, expected);

        // A program in `~/bin`: that folder, not the home.
        touch(&home.join("bin/mine"));
        assert_eq!(
            install_prefixes(&home.join("bin/mine"), &[], Some(home)),
            [home.join("bin")]
        );

        // A node package is the program: shown whole.
        let package = home.join(".local/lib/node_modules/other");
        touch(&package.join("bin/cli.js"));
        touch(&package.join("package.json"));
        assert_eq!(
            install_prefixes(&package.join("bin/cli.js"), &[], Some(home)),
            [package]
        );

        // Outside the home, and in a part already shown, as before.
        let elsewhere = tempfile::tempdir().unwrap();
        let outside = elsewhere.path().join("venv/bin/server");
        touch(&outside);
        assert_eq!(
            install_prefixes(&outside, &[], Some(home)),
            [elsewhere.path().join("venv")]
        );
        let cargo_bin = home.join(".cargo/bin");
        touch(&cargo_bin.join("cargo"));
        touch(&home.join(".cargo/credentials.toml"));
        assert!(install_prefixes(
            &cargo_bin.join("cargo"),
            std::slice::from_ref(&cargo_bin),
            Some(home)
        )
        .is_empty());
    }
}
