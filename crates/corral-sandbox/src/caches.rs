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
//! copy of the user's index and downloaded crates of crates.io's registry,
//! made once when it is created (a folder no child has touched yet), so
//! offline builds keep working; sources are unpacked from those into it as
//! cargo needs them. Only crates.io's: every project's commands read this
//! cache, and a company registry's crates (from the user's cargo config)
//! are not every project's to read ([`is_public_registry`]). A cache made
//! before, when every registry was copied, loses the others once
//! ([`forget_private_registries`]).
//!
//! Every child may write this folder, links included, and what is written
//! or removed in it here is done outside the fence: through handles of the
//! folder (`cap_std`), which no link leads out of.

// Writes Corral's own cache folder, never the project.
#![allow(clippy::disallowed_methods)]

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

use cap_std::fs::Dir;

/// The folder holding Corral's caches, if a home or cache folder is known.
pub(crate) fn dir() -> Option<PathBuf> {
    corral_dir().map(|d| d.join("sandbox"))
}

/// Corral's folder in the user's cache folder (`$XDG_CACHE_HOME`, else
/// `~/.cache`): the commands' caches ([`dir`]) and, beside them where no
/// command sees it, what Corral keeps for itself (`probed`).
pub(crate) fn corral_dir() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| super::home::home().map(|h| h.join(".cache")))?;
    Some(base.join("corral"))
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
/// one `stat` (of [`PUBLIC_ONLY`]), not a `mkdir` per tool.
pub(crate) fn prepare(dir: &Path, program: &str) {
    prepare_with(dir, program, super::home::cargo_home().as_deref());
}

/// What Corral's caches may hold, in bytes: 20 GiB, or
/// `CORRAL_CACHE_LIMIT_MIB`.
pub fn limit_bytes() -> u64 {
    std::env::var("CORRAL_CACHE_LIMIT_MIB")
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map_or(20 << 30, |mib| mib << 20)
}

/// Whether the caches held more than [`limit_bytes`] when last measured
/// ([`measure`]).
pub(crate) fn over_limit() -> bool {
    OVER.load(std::sync::atomic::Ordering::Relaxed)
}

static OVER: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Measures the caches in `dir` again after a command that could write
/// them, on a thread of its own (a walk of the whole folder is too slow
/// for a command's path), at most once every [`MEASURED_EVERY`]: a command
/// may pass the limit, and the commands after the measure find the caches
/// read-only until they are cleared.
pub(crate) fn measure(dir: &Path) {
    use std::sync::Mutex;
    static LAST: Mutex<Option<std::time::Instant>> = Mutex::new(None);
    let due = {
        let mut last = LAST
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let due = last.is_none_or(|at| at.elapsed() >= MEASURED_EVERY);
        if due {
            *last = Some(std::time::Instant::now());
        }
        due
    };
    if due {
        let dir = dir.to_path_buf();
        let _ = std::thread::Builder::new()
            .name("corral-cache-size".into())
            .spawn(move || {
                let over = size_of(&dir) > limit_bytes();
                OVER.store(over, std::sync::atomic::Ordering::Relaxed);
            });
    }
}

/// How often the caches are measured at most.
const MEASURED_EVERY: std::time::Duration = std::time::Duration::from_secs(30);

/// The disk space the files under `dir` take (links not followed).
fn size_of(dir: &Path) -> u64 {
    use std::os::unix::fs::MetadataExt;
    let mut total = 0;
    let mut folders = vec![dir.to_path_buf()];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).into_iter().flatten().flatten() {
            let Ok(meta) = entry.path().symlink_metadata() else {
                continue;
            };
            total += meta.blocks() * 512;
            if meta.is_dir() {
                folders.push(entry.path());
            }
        }
    }
    total
}

/// The mark, in the cache folder, that its cargo registry holds crates.io's
/// registry only: written when the folder is made, or once a folder made
/// before has lost the other registries. A child may remove it (the next
/// command checks again) or write it (a child runs only after the check).
const PUBLIC_ONLY: &str = ".public-registries-only";

/// [`prepare`] with the user's cargo home given.
fn prepare_with(dir: &Path, program: &str, user_cargo: Option<&Path>) {
    use std::os::unix::fs::DirBuilderExt;
    if dir.join(PUBLIC_ONLY).symlink_metadata().is_err() {
        if !dir.is_dir() {
            let mut builder = std::fs::DirBuilder::new();
            builder.recursive(true).mode(0o700);
            for (_, sub) in TOOL_CACHES {
                let _ = builder.create(dir.join(sub));
            }
        }
        if let Ok(cache) = open(dir) {
            forget_private_registries(&cache);
            let _ = cache.write(PUBLIC_ONLY, b"");
        }
    }
    if program == "cargo" {
        seed_cargo(dir, user_cargo);
    }
}

/// The cache folder, as a handle no path inside leads out of.
fn open(dir: &Path) -> std::io::Result<Dir> {
    Dir::open_ambient_dir(dir, cap_std::ambient_authority())
}

/// The host of crates.io's sparse index, the first part of its folders'
/// names (`<host>-<hash>`). Matched whole: the hash after it has changed
/// with cargo's versions, and only crates.io's index is served there.
const SPARSE_HOST: &str = "index.crates.io";

/// The folders of crates.io's git index, hashed by older cargo and by
/// cargo since it hashes stably. Matched whole: another registry's git
/// index may live on the same host, under another hash.
const GIT_FOLDERS: [&str; 2] = ["github.com-1ecc6299db9ec823", "github.com-25cdd57fae9f0462"];

/// The folders of cargo's registry that hold one folder per registry.
const REGISTRY_PARTS: [&str; 3] = ["index", "cache", "src"];

/// The parts of the user's registry copied into Corral's: the index and
/// the downloaded crates (sources are unpacked from these as needed).
const SEEDED_PARTS: [&str; 2] = ["index", "cache"];

/// The name a copy of the registry is made under before it is renamed.
const PARTIAL: &str = "registry.partial-";

/// Whether a folder in cargo's registry (`registry/index/<name>`, and the
/// same name in `cache/` and `src/`) is crates.io's public registry: the
/// sparse index's host and 16 lowercase hex digits, or one of the git
/// index's folders.
fn is_public_registry(name: &OsStr) -> bool {
    let Some(name) = name.to_str() else {
        return false;
    };
    if GIT_FOLDERS.contains(&name) {
        return true;
    }
    name.strip_prefix(SPARSE_HOST)
        .and_then(|rest| rest.strip_prefix('-'))
        .is_some_and(|hash| {
            hash.len() == 16 && hash.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
        })
}

/// Copies the user's index and downloaded crates of crates.io's registry
/// into a new cargo registry, once. Copied, never linked: a hard link
/// would let the child write the user's files. A link in the user's
/// registry at or below a registry's folder is never followed (one named
/// as crates.io's could lead to another registry's folder).
fn seed_cargo(dir: &Path, user_cargo: Option<&Path>) {
    // The common case, a registry already there, by path: one `stat`.
    if dir
        .join("cargo")
        .join("registry")
        .symlink_metadata()
        .is_ok()
    {
        return;
    }
    let Some(user) = user_cargo.map(|c| c.join("registry")) else {
        return;
    };
    if !user.is_dir() || user.starts_with(dir) {
        return;
    }
    let Ok(cache) = open(dir) else {
        return;
    };
    let _ = cache.create_dir("cargo");
    let Ok(cargo) = cache.open_dir("cargo") else {
        return;
    };
    if cargo.symlink_metadata("registry").is_ok() {
        return;
    }
    let partial = format!("{PARTIAL}{}", std::process::id());
    let _ = cargo.remove_dir_all(&partial);
    let copied = cargo.create_dir(&partial).is_ok()
        && cargo.open_dir(&partial).is_ok_and(|to| {
            SEEDED_PARTS
                .iter()
                .all(|part| copy_registries(&user.join(part), &to, part).is_ok())
        });
    if copied && cargo.rename(&partial, &cargo, "registry").is_ok() {
        return;
    }
    let _ = cargo.remove_dir_all(&partial);
}

/// Copies crates.io's folders of one part of the user's registry (`index`
/// or `cache`) into a new folder `part` of `to`.
fn copy_registries(from: &Path, to: &Dir, part: &str) -> std::io::Result<()> {
    to.create_dir(part)?;
    let to = to.open_dir(part)?;
    if !from.is_dir() {
        return Ok(());
    }
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let name = entry.file_name();
        if entry.file_type()?.is_dir() && is_public_registry(&name) {
            copy_tree(&entry.path(), &to, &name)?;
        }
    }
    Ok(())
}

/// Copies a folder's files and folders (never a link) into a new folder
/// `name` of `to`.
fn copy_tree(from: &Path, to: &Dir, name: &OsStr) -> std::io::Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    to.create_dir(name)?;
    let to = to.open_dir(name)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let kind = entry.file_type()?;
        let name = entry.file_name();
        if kind.is_dir() {
            copy_tree(&entry.path(), &to, &name)?;
        } else if kind.is_file() {
            // `O_NOFOLLOW`: a file that became a link since is not read.
            let mut file = std::fs::OpenOptions::new()
                .read(true)
                .custom_flags(libc::O_NOFOLLOW)
                .open(entry.path())?;
            let mut copy = to.create(&name)?.into_std();
            std::io::copy(&mut file, &mut copy)?;
        }
    }
    Ok(())
}

/// cargo's record of the crates it last used, a database, with the files
/// one may leave beside it.
const GLOBAL_CACHE: [&str; 4] = [
    ".global-cache",
    ".global-cache-journal",
    ".global-cache-wal",
    ".global-cache-shm",
];

/// Removes from the cache's cargo registry every registry that is not
/// crates.io's (and every link, whatever its name), and a copy of the
/// registry left unfinished: a cache made when every registry of the
/// user's was copied held them all. cargo's record of what it last used
/// (`.global-cache`) names the crates removed: it goes too, and cargo
/// starts a new one. Best effort. A copy being made at the same time is
/// removed too: its rename fails, and the next cargo run copies again.
fn forget_private_registries(cache: &Dir) {
    let Ok(cargo) = cache.open_dir("cargo") else {
        return;
    };
    let mut removed = false;
    if let Ok(registry) = cargo.open_dir("registry") {
        for part in REGISTRY_PARTS {
            let Ok(part) = registry.open_dir(part) else {
                continue;
            };
            let Ok(entries) = part.entries() else {
                continue;
            };
            for entry in entries.flatten() {
                let name = entry.file_name();
                let folder = entry.file_type().is_ok_and(|t| t.is_dir());
                if !(folder && is_public_registry(&name)) {
                    removed |= remove(&part, &name);
                }
            }
        }
    }
    if let Ok(entries) = cargo.entries() {
        for entry in entries.flatten() {
            let name = entry.file_name();
            if name.to_string_lossy().starts_with(PARTIAL) {
                removed |= remove(&cargo, &name);
            }
        }
    }
    if removed {
        for file in GLOBAL_CACHE {
            let _ = cargo.remove_file(file);
        }
    }
}

/// Removes a file, link or folder (with what it holds) of `dir`: a link is
/// removed, never followed. Whether it went.
fn remove(dir: &Dir, name: &OsStr) -> bool {
    match dir.symlink_metadata(name) {
        Ok(meta) if meta.is_dir() => dir.remove_dir_all(name).is_ok(),
        Ok(_) => dir.remove_file(name).is_ok(),
        Err(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    /// crates.io's sparse index's folder, as cargo since its stable hash
    /// names it.
    fn public() -> String {
        format!("{SPARSE_HOST}-1949cf8c6b5b557f")
    }

    /// A company registry's folder.
    const PRIVATE: &str = "my-registry.example-0123456789abcdef";

    /// What every file of the private registry holds, looked for in the
    /// whole of Corral's cache.
    const SECRET: &str = "private registry's file";

    fn write(path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    /// A registry's folder in `index/`, `cache/` and `src/` of `registry`.
    fn registry(registry: &Path, name: &str, text: &str) {
        write(&registry.join("index").join(name).join("config.json"), text);
        write(&registry.join("index").join(name).join("a/b/ab"), text);
        write(
            &registry.join("cache").join(name).join("ab-1.0.0.crate"),
            text,
        );
        write(
            &registry.join("src").join(name).join("ab-1.0.0/src/lib.rs"),
            text,
        );
    }

    /// Every file's text beneath `dir` (links not followed), with its path.
    fn texts(dir: &Path) -> Vec<(PathBuf, String)> {
        let mut found = Vec::new();
        for entry in std::fs::read_dir(dir).unwrap() {
            let entry = entry.unwrap();
            let kind = entry.file_type().unwrap();
            if kind.is_dir() {
                found.extend(texts(&entry.path()));
            } else if kind.is_file() {
                let text = std::fs::read_to_string(entry.path()).unwrap_or_default();
                found.push((entry.path(), text));
            } else {
                found.push((entry.path(), "a link".into()));
            }
        }
        found
    }

    fn assert_nothing_private(dir: &Path) {
        for (path, text) in texts(dir) {
            assert!(!text.contains(SECRET), "{} holds {text:?}", path.display());
            let path = path.to_string_lossy().into_owned();
            assert!(!path.contains("my-registry"), "{path}");
        }
    }

    #[test]
    fn only_crates_io_folder_names_are_public() {
        let git_host = GIT_FOLDERS[0].split('-').next().unwrap();
        for name in [
            public(),
            format!("{SPARSE_HOST}-6f17d22bba15001f"),
            GIT_FOLDERS[0].to_string(),
            GIT_FOLDERS[1].to_string(),
        ] {
            assert!(is_public_registry(OsStr::new(&name)), "{name}");
        }
        for name in [
            PRIVATE.to_string(),
            // Another registry's git index on the same host as crates.io's.
            format!("{git_host}-0123456789abcdef"),
            format!("{SPARSE_HOST}-0123456789abcde"),
            format!("{SPARSE_HOST}-0123456789abcdef0"),
            format!("{SPARSE_HOST}-0123456789ABCDEF"),
            format!("{SPARSE_HOST}-0123456789abcdeg"),
            format!("{SPARSE_HOST}0123456789abcdef"),
            format!("{SPARSE_HOST}.my-registry.example-0123456789abcdef"),
            format!("my-{SPARSE_HOST}-0123456789abcdef"),
            format!("{}x", GIT_FOLDERS[0]),
            SPARSE_HOST.to_string(),
            String::new(),
        ] {
            assert!(!is_public_registry(OsStr::new(&name)), "{name}");
        }
    }

    #[test]
    fn the_cargo_cache_takes_the_public_registry_and_nothing_of_a_private_one() {
        let tmp = tempfile::tempdir().unwrap();
        let home = tmp.path().join("home/.cargo");
        let user = home.join("registry");
        registry(&user, &public(), "public");
        registry(&user, GIT_FOLDERS[0], "public, git");
        registry(&user, PRIVATE, SECRET);
        let git_host = GIT_FOLDERS[0].split('-').next().unwrap();
        registry(&user, &format!("{git_host}-0123456789abcdef"), SECRET);
        let dir = tmp.path().join("cache/corral/sandbox");
        prepare_with(&dir, "cargo", Some(&home));

        let ours = dir.join("cargo/registry");
        for name in [public(), GIT_FOLDERS[0].to_string()] {
            let index = ours.join("index").join(&name);
            assert!(index.join("config.json").is_file(), "{name}");
            assert!(index.join("a/b/ab").is_file(), "{name}");
            assert!(ours
                .join("cache")
                .join(&name)
                .join("ab-1.0.0.crate")
                .is_file());
            // Sources are unpacked by cargo, never copied.
            assert!(!ours.join("src").exists());
        }
        for part in REGISTRY_PARTS {
            assert!(!ours.join(part).join(PRIVATE).exists(), "{part}");
        }
        assert_nothing_private(&dir);
        assert!(dir.join(PUBLIC_ONLY).is_file());
    }

    #[test]
    fn a_link_in_the_user_s_registry_is_not_followed() {
        let tmp = tempfile::tempdir().unwrap();
        let home = tmp.path().join("home/.cargo");
        let user = home.join("registry");
        registry(&user, &public(), "public");
        registry(&user, PRIVATE, SECRET);
        // A link named as crates.io's folder, to the private one.
        let other = format!("{SPARSE_HOST}-0123456789abcdef");
        symlink(
            user.join("cache").join(PRIVATE),
            user.join("cache").join(&other),
        )
        .unwrap();
        // A link inside crates.io's folder, to a private crate.
        symlink(
            user.join("cache").join(PRIVATE).join("ab-1.0.0.crate"),
            user.join("cache").join(public()).join("cd-1.0.0.crate"),
        )
        .unwrap();
        let dir = tmp.path().join("cache/corral/sandbox");
        prepare_with(&dir, "cargo", Some(&home));

        let cache = dir.join("cargo/registry/cache");
        assert!(cache.join(public()).join("ab-1.0.0.crate").is_file());
        assert!(cache.join(&other).symlink_metadata().is_err());
        assert!(cache
            .join(public())
            .join("cd-1.0.0.crate")
            .symlink_metadata()
            .is_err());
        assert_nothing_private(&dir);
    }

    /// A cache folder as an older Corral left it: every registry of the
    /// user's copied, sources cargo unpacked, cargo's record of them, a
    /// copy left unfinished, and no mark.
    fn old_cache(dir: &Path) {
        let cargo = dir.join("cargo");
        registry(&cargo.join("registry"), &public(), "public");
        registry(&cargo.join("registry"), PRIVATE, SECRET);
        registry(&cargo.join("registry.partial-12"), PRIVATE, SECRET);
        write(&cargo.join(".global-cache"), SECRET);
        for (_, sub) in TOOL_CACHES {
            std::fs::create_dir_all(dir.join(sub)).unwrap();
        }
    }

    #[test]
    fn a_cache_made_by_an_older_corral_loses_its_private_registries_once() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("corral/sandbox");
        old_cache(&dir);
        // Any program the cache is shown to, not cargo only.
        prepare_with(&dir, "node", None);

        let ours = dir.join("cargo/registry");
        assert!(ours
            .join("index")
            .join(public())
            .join("config.json")
            .is_file());
        assert!(ours
            .join("cache")
            .join(public())
            .join("ab-1.0.0.crate")
            .is_file());
        assert!(ours
            .join("src")
            .join(public())
            .join("ab-1.0.0/src/lib.rs")
            .is_file());
        assert!(!dir.join("cargo/.global-cache").exists());
        assert!(!dir.join("cargo/registry.partial-12").exists());
        assert_nothing_private(&dir);
        assert!(dir.join(PUBLIC_ONLY).is_file());

        // Once: a registry a project's own config names, fetched since,
        // is left to the build using it.
        registry(&ours, PRIVATE, "a project's");
        prepare_with(&dir, "cargo", None);
        assert!(ours
            .join("cache")
            .join(PRIVATE)
            .join("ab-1.0.0.crate")
            .is_file());
    }

    #[test]
    fn forgetting_the_private_registries_follows_no_link_out_of_the_cache() {
        let tmp = tempfile::tempdir().unwrap();
        // The user's files a child's links lead to.
        let outside = tmp.path().join("outside");
        registry(&outside.join("registry"), PRIVATE, "the user's");
        write(&outside.join("notes.txt"), "the user's");
        let before = texts(&outside);

        // Links at each level of the registry.
        let dir = tmp.path().join("a/corral/sandbox");
        old_cache(&dir);
        let ours = dir.join("cargo/registry");
        std::fs::remove_dir_all(ours.join("src")).unwrap();
        symlink(outside.join("registry/src"), ours.join("src")).unwrap();
        symlink(&outside, ours.join("index").join("elsewhere")).unwrap();
        // One named as crates.io's folder.
        let named = format!("{SPARSE_HOST}-0123456789abcdef");
        symlink(
            outside.join("registry/index"),
            ours.join("cache").join(&named),
        )
        .unwrap();
        prepare_with(&dir, "cargo", None);
        assert_eq!(texts(&outside), before);
        assert!(ours.join("index").join(public()).is_dir());
        for link in [
            ours.join("index/elsewhere"),
            ours.join("cache").join(&named),
        ] {
            assert!(link.symlink_metadata().is_err(), "{}", link.display());
        }

        // cargo's whole home a link out of the cache.
        let dir = tmp.path().join("b/corral/sandbox");
        std::fs::create_dir_all(&dir).unwrap();
        symlink(&outside, dir.join("cargo")).unwrap();
        prepare_with(&dir, "node", None);
        assert_eq!(texts(&outside), before);
    }

    #[test]
    fn the_copy_writes_through_no_link_out_of_the_cache() {
        let tmp = tempfile::tempdir().unwrap();
        let home = tmp.path().join("home/.cargo");
        registry(&home.join("registry"), &public(), "public");
        let outside = tmp.path().join("outside");
        std::fs::create_dir_all(&outside).unwrap();
        let dir = tmp.path().join("corral/sandbox");
        std::fs::create_dir_all(&dir).unwrap();
        symlink(&outside, dir.join("cargo")).unwrap();
        prepare_with(&dir, "cargo", Some(&home));
        assert!(texts(&outside).is_empty(), "{:?}", texts(&outside));
    }
}
