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

use std::path::{Path, PathBuf};

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

/// The parts of the home (and of `$CARGO_HOME`, `$RUSTUP_HOME`) a
/// toolchain needs to run, that exist here: programs and installed
/// toolchains, read-only. Never a whole toolchain home: those hold
/// credentials (`~/.cargo/credentials.toml`, uv's `credentials/`), config
/// with tokens (`~/.cargo/config.toml`, nvm's `etc/npmrc`) and other
/// projects (`~/go/src`).
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
        parts.extend(
            ["toolchains", "settings.toml", "update-hashes"]
                .iter()
                .map(|p| rustup.join(p)),
        );
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

/// The install prefix of a program outside the system folders (a venv
/// holding an MCP server, a node prefix), and of the programs its `bin`
/// links to (a venv's `python` leads to the Python it was made from),
/// read-only; empty for a program under the system folders or in a
/// toolchain part already `visible` (`~/.cargo/bin/cargo` runs from what
/// is there: its prefix would be the whole cargo home, credentials and
/// all).
pub(crate) fn install_prefixes(program: &Path, visible: &[PathBuf]) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = Vec::new();
    let mut queue = vec![program.to_path_buf()];
    if let Ok(real) = std::fs::canonicalize(program) {
        queue.push(real);
    }
    while let Some(path) = queue.pop() {
        if found.len() > 16 {
            break;
        }
        if visible.iter().any(|v| path.starts_with(v)) {
            continue;
        }
        let Some(prefix) = prefix_of(&path) else {
            continue;
        };
        if is_system(&prefix)
            || visible.iter().any(|v| prefix.starts_with(v))
            || found.iter().any(|f| prefix.starts_with(f))
        {
            continue;
        }
        // A wider prefix takes the place of the folders found inside it,
        // whatever the order they came in: `~/.local/bin/tool` linking into
        // `~/.local/lib/node_modules/tool` needs the link's folder too.
        found.retain(|f| !f.starts_with(&prefix));
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
        found.push(prefix);
    }
    found
}

/// The folder a program is installed in: the parent of its `bin` folder,
/// or its own folder when it is not in one.
fn prefix_of(program: &Path) -> Option<PathBuf> {
    let dir = program.parent()?;
    let prefix = match dir.file_name() {
        // `node_modules/.bin`: the whole `node_modules`, where its links lead.
        Some(name) if name == "bin" || name == "sbin" || name == ".bin" => dir.parent()?,
        _ => package_of(dir).unwrap_or(dir),
    };
    // Never the whole home, a top-level folder or `/`.
    (prefix.components().count() > 2 && Some(prefix) != super::env::home().as_deref())
        .then(|| prefix.to_path_buf())
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
