//! What the bubblewrap probe found, kept per machine: a process's first
//! command does not pay for a whole bwrap run before its own.
//!
//! Whether bwrap can build a sandbox here is checked by running one
//! (`namespace::probe`): a bwrap of `/` with its own network and PID
//! namespaces, about as long as a command itself, and longer the first
//! time after a quiet spell (tearing down its mounts waits for the
//! kernel's grace period). A long-lived process pays it once; a
//! one-shot `corral-cli call` paid it on every call. So a probe that
//! succeeded is kept in a file of the user's cache folder
//! (`$XDG_CACHE_HOME/corral/bwrap-probe/`, else `~/.cache/...`) and a
//! later process that finds the file, verified, skips the run.
//!
//! The file is named by a hash of everything the probe's answer depends
//! on ([`inputs`]: this crate's version, the probe's argv, which bwrap
//! and its file's stamp, the boot, the process's namespaces, user,
//! capabilities, seccomp and LSM state, and the kernel's namespace
//! switches), and holds those inputs in full: it is used only when its
//! bytes are exactly what this process would write, so a corrupted,
//! truncated or colliding file is a miss. It is trusted only in a folder
//! the user owns that no one else may write, as a regular file the user
//! owns, one link, that no one else may write, opened without following
//! a link, written within [`MOST_AGE`]; anything else is ignored, the
//! probe runs, and the file is written again (to a new name, then renamed
//! over, so no reader sees half of it). The folder is never in a
//! command's view: Corral's caches that commands write are in
//! `corral/sandbox`, beside it.
//!
//! Only success is kept. A wrong "bwrap works" fails closed: the command
//! fails with bwrap's own error, and nothing runs outside the fence (and
//! the file is removed for the next process, [`forget`]). A failure is
//! never kept: a wrong "bwrap does not work" would run commands under
//! Landlock alone, a weaker fence.

use std::io::{Read, Write};
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use rustix::fs::{Mode, OFlags};

/// The first line of a kept probe.
const HEADER: &str = "corral bwrap probe 1";
/// Its last line: what the probe found.
const VERDICT: &str = "namespaces: yes";
/// Where in the user's cache folder the files are.
const FOLDER: &str = "bwrap-probe";
/// How long a kept probe is trusted at most: past it, bwrap runs again.
pub(crate) const MOST_AGE: Duration = Duration::from_secs(24 * 60 * 60);
/// A larger file is not a probe of ours.
const MOST_BYTES: u64 = 64 * 1024;

/// The folder the probes are kept in, if the user's cache folder is known.
pub(crate) fn dir() -> Option<PathBuf> {
    super::caches::corral_dir().map(|d| d.join(FOLDER))
}

/// Everything the probe's answer depends on, one `name=value` a line, for
/// `bwrap` (the program the probe runs, with `probe_args`); `None` when
/// one cannot be read (then nothing is kept, and bwrap runs).
pub(crate) fn inputs(bwrap: &Path, probe_args: &[&str]) -> Option<String> {
    use std::fmt::Write as _;
    use std::os::unix::fs::MetadataExt;
    let mut text = String::new();
    let mut line = |name: &str, value: &str| {
        // A value is one line: a newline in it would let two inputs read
        // as others.
        let value = value.replace(['\n', '\r'], " ");
        let _ = writeln!(text, "{name}={value}");
    };
    line("version", env!("CARGO_PKG_VERSION"));
    line("probe", &probe_args.join(" "));
    line("bwrap", bwrap.to_str()?);
    let meta = std::fs::metadata(bwrap).ok()?;
    line(
        "bwrap.stat",
        &format!(
            "{} {} {:o} {} {} {} {}.{} {}.{}",
            meta.dev(),
            meta.ino(),
            meta.mode(),
            meta.uid(),
            meta.gid(),
            meta.size(),
            meta.mtime(),
            meta.mtime_nsec(),
            meta.ctime(),
            meta.ctime_nsec()
        ),
    );
    line("boot", read_proc("/proc/sys/kernel/random/boot_id")?.trim());
    for ns in ["user", "mnt", "pid", "net", "ipc", "uts", "cgroup"] {
        let link = std::fs::read_link(format!("/proc/self/ns/{ns}")).ok()?;
        line(&format!("ns.{ns}"), link.to_str()?);
    }
    let status = read_proc("/proc/self/status")?;
    for field in [
        "Uid",
        "Gid",
        "CapPrm",
        "CapEff",
        "CapBnd",
        "NoNewPrivs",
        "Seccomp",
        "Seccomp_filters",
    ] {
        let value = status
            .lines()
            .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
            .map_or("-", str::trim);
        line(&format!("status.{field}"), value);
    }
    // Absent (no such switch, no LSM) reads as `-`.
    for file in [
        "/proc/self/attr/current",
        "/proc/self/attr/apparmor/current",
        "/proc/sys/kernel/unprivileged_userns_clone",
        "/proc/sys/kernel/apparmor_restrict_unprivileged_userns",
        "/proc/sys/kernel/unprivileged_userns_apparmor_policy",
        "/proc/sys/user/max_user_namespaces",
        "/proc/sys/user/max_mnt_namespaces",
        "/proc/sys/user/max_pid_namespaces",
        "/proc/sys/user/max_net_namespaces",
        "/proc/sys/user/max_ipc_namespaces",
        "/proc/sys/user/max_uts_namespaces",
        "/proc/sys/user/max_cgroup_namespaces",
    ] {
        let value = read_proc(file);
        line(file, value.as_deref().map_or("-", str::trim));
    }
    Some(text)
}

/// A small file of `/proc`.
fn read_proc(path: &str) -> Option<String> {
    // `/proc` and `/sys` only, never the project.
    #[allow(clippy::disallowed_methods)]
    std::fs::read_to_string(path).ok()
}

/// The file's name for `inputs`: 64-bit FNV-1a of them, in hex. Stable
/// across builds (std's hasher is not promised to be); a collision only
/// makes a miss, since the whole content is compared.
pub(crate) fn name(inputs: &str) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in inputs.bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("{hash:016x}")
}

/// The file's whole content for `inputs`.
fn content(inputs: &str) -> String {
    format!("{HEADER}\n{inputs}{VERDICT}\n")
}

/// Whether a probe of `inputs` that succeeded is kept in `dir`, written
/// by this user, whole, and recent.
pub(crate) fn holds(dir: &Path, inputs: &str) -> bool {
    let Some(folder) = open_folder(dir) else {
        return false;
    };
    let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
    let Ok(fd) = rustix::fs::openat(&folder, name(inputs), flags, Mode::empty()) else {
        return false;
    };
    let Ok(stat) = rustix::fs::fstat(&fd) else {
        return false;
    };
    let modified = u64::try_from(stat.st_mtime)
        .ok()
        .map(|secs| SystemTime::UNIX_EPOCH + Duration::from_secs(secs));
    let recent = modified.is_some_and(|at| {
        let now = SystemTime::now();
        // Not written in the future either (a clock set back).
        at <= now + Duration::from_secs(60) && now.duration_since(at).unwrap_or_default() < MOST_AGE
    });
    let size = u64::try_from(stat.st_size).unwrap_or(u64::MAX);
    let trusted = is_regular(stat.st_mode) && owned_closed(&stat) && stat.st_nlink == 1;
    if !(trusted && recent && size <= MOST_BYTES) {
        return false;
    }
    let expected = content(inputs);
    let mut read = Vec::with_capacity(expected.len() + 1);
    let mut file = std::fs::File::from(fd);
    if (&mut file).take(MOST_BYTES).read_to_end(&mut read).is_err() {
        return false;
    }
    read == expected.as_bytes()
}

/// Keeps a probe of `inputs` that succeeded in `dir` (made 0700 if
/// absent): written to a name of its own, then renamed over the file, so
/// a reader sees the old file or the whole new one. Files written before
/// this boot are removed (they are for another boot). Fails where the
/// folder is not the user's own or others may write it.
pub(crate) fn keep(dir: &Path, inputs: &str) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)?;
    let folder = open_folder(dir).ok_or_else(|| {
        std::io::Error::other(format!(
            "{} is not this user's own folder, or others may write it",
            dir.display()
        ))
    })?;
    let name = name(inputs);
    let nanos = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap_or_default()
        .subsec_nanos();
    let partial = format!(".{name}.{}.{nanos}", std::process::id());
    let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let fd = rustix::fs::openat(&folder, &partial, flags, Mode::from_raw_mode(0o600))?;
    let written = std::fs::File::from(fd)
        .write_all(content(inputs).as_bytes())
        .and_then(|()| Ok(rustix::fs::renameat(&folder, &partial, &folder, &name)?));
    if let Err(e) = written {
        let _ = rustix::fs::unlinkat(&folder, &partial, rustix::fs::AtFlags::empty());
        return Err(e);
    }
    remove_before_boot(&folder);
    Ok(())
}

/// Removes the kept probe of `inputs` from `dir`, if the folder is the
/// user's own: bwrap failed where it was said to work.
pub(crate) fn forget(dir: &Path, inputs: &str) {
    if let Some(folder) = open_folder(dir) {
        let _ = rustix::fs::unlinkat(&folder, name(inputs), rustix::fs::AtFlags::empty());
    }
}

/// `dir` opened, not through a link, if it is a folder this user owns
/// that no one else may write (so every name in it is this user's to
/// make or replace).
fn open_folder(dir: &Path) -> Option<OwnedFd> {
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let fd = rustix::fs::open(dir, flags, Mode::empty()).ok()?;
    let stat = rustix::fs::fstat(&fd).ok()?;
    owned_closed(&stat).then_some(fd)
}

/// Owned by this process's user, and neither its group nor others may
/// write it (an ACL granting them writing shows in the group bits).
fn owned_closed(stat: &rustix::fs::Stat) -> bool {
    stat.st_uid == rustix::process::geteuid().as_raw() && stat.st_mode & 0o022 == 0
}

fn is_regular(mode: u32) -> bool {
    rustix::fs::FileType::from_raw_mode(mode) == rustix::fs::FileType::RegularFile
}

/// Removes the files in `folder` last written before this boot, and
/// partial files left by a process that ended while writing one.
fn remove_before_boot(folder: &OwnedFd) {
    let Some(booted) = boot_time() else {
        return;
    };
    let Ok(mut entries) = rustix::fs::Dir::read_from(folder) else {
        return;
    };
    let stale = Duration::from_secs(60);
    let now = SystemTime::now();
    while let Some(Ok(entry)) = entries.next() {
        let name = entry.file_name().to_owned();
        let bytes = name.to_bytes();
        if bytes == b"." || bytes == b".." {
            continue;
        }
        let Ok(stat) = rustix::fs::statat(folder, &name, rustix::fs::AtFlags::SYMLINK_NOFOLLOW)
        else {
            continue;
        };
        let written = u64::try_from(stat.st_mtime)
            .map(|s| SystemTime::UNIX_EPOCH + Duration::from_secs(s))
            .unwrap_or(SystemTime::UNIX_EPOCH);
        let partial = bytes.starts_with(b".");
        let old_partial = partial && now.duration_since(written).unwrap_or_default() > stale;
        if written < booted || old_partial {
            let _ = rustix::fs::unlinkat(folder, &name, rustix::fs::AtFlags::empty());
        }
    }
}

/// When this machine booted (`btime` of `/proc/stat`).
fn boot_time() -> Option<SystemTime> {
    let stat = read_proc("/proc/stat")?;
    let secs: u64 = stat
        .lines()
        .find_map(|l| l.strip_prefix("btime "))?
        .trim()
        .parse()
        .ok()?;
    Some(SystemTime::UNIX_EPOCH + Duration::from_secs(secs))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::disallowed_methods)]
    use super::*;
    use std::os::unix::fs::{MetadataExt, PermissionsExt};

    const ARGS: [&str; 2] = ["--ro-bind", "/"];

    /// Inputs for a test, as `inputs` makes them for `/bin/sh`.
    fn some_inputs() -> String {
        inputs(Path::new("/bin/sh"), &ARGS).unwrap()
    }

    fn kept_file(dir: &Path, inputs: &str) -> PathBuf {
        dir.join(name(inputs))
    }

    fn is_root() -> bool {
        rustix::process::geteuid().is_root()
    }

    #[test]
    fn a_kept_probe_holds_and_a_missing_one_does_not() {
        let dir = tempfile::tempdir().unwrap();
        let cache = dir.path().join("cache").join(FOLDER);
        let inputs = some_inputs();
        assert!(!holds(&cache, &inputs), "no folder yet");
        keep(&cache, &inputs).unwrap();
        assert!(holds(&cache, &inputs));
        let file = kept_file(&cache, &inputs);
        let meta = std::fs::symlink_metadata(&file).unwrap();
        assert_eq!(meta.mode() & 0o777, 0o600);
        assert_eq!(std::fs::metadata(&cache).unwrap().mode() & 0o777, 0o700);
        // Nothing else is left in the folder (no partial file).
        assert_eq!(std::fs::read_dir(&cache).unwrap().count(), 1);
        // Kept again: still one file, still holds.
        keep(&cache, &inputs).unwrap();
        assert!(holds(&cache, &inputs));
        assert_eq!(std::fs::read_dir(&cache).unwrap().count(), 1);
        // Forgotten: a miss.
        forget(&cache, &inputs);
        assert!(!holds(&cache, &inputs));
        assert!(!file.exists());
    }

    #[test]
    fn different_inputs_have_different_files_and_never_hold_for_each_other() {
        let dir = tempfile::tempdir().unwrap();
        let sh = some_inputs();
        let env = inputs(Path::new("/usr/bin/env"), &ARGS).unwrap();
        let other_args = inputs(Path::new("/bin/sh"), &["--ro-bind", "/usr"]).unwrap();
        assert_ne!(name(&sh), name(&env));
        assert_ne!(name(&sh), name(&other_args));
        assert_ne!(name(&env), name(&other_args));
        keep(dir.path(), &sh).unwrap();
        assert!(holds(dir.path(), &sh));
        assert!(!holds(dir.path(), &env));
        assert!(!holds(dir.path(), &other_args));

        // The same program, its file changed (a new bwrap installed in
        // place): its stamp changes the inputs.
        let program = dir.path().join("bwrap");
        std::fs::write(&program, "#!/bin/sh\n").unwrap();
        let before = inputs(&program, &ARGS).unwrap();
        std::thread::sleep(Duration::from_millis(20));
        std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755)).unwrap();
        let after = inputs(&program, &ARGS).unwrap();
        assert_ne!(before, after);
        assert_ne!(name(&before), name(&after));
        // Asked twice with nothing changed: the same inputs.
        assert_eq!(after, inputs(&program, &ARGS).unwrap());
        // Each input is one line: a newline in a value stays on it.
        let odd = dir.path().join("new\nline=x");
        std::fs::write(&odd, "").unwrap();
        let text = inputs(&odd, &ARGS).unwrap();
        assert!(text.lines().all(|l| l.contains('=')), "{text}");
        assert!(!text.lines().any(|l| l == "line=x"), "{text}");
    }

    #[test]
    fn a_corrupted_file_is_a_miss_and_is_written_again() {
        let dir = tempfile::tempdir().unwrap();
        let inputs = some_inputs();
        let file = kept_file(dir.path(), &inputs);
        let whole = content(&inputs);
        let corruptions = [
            String::new(),
            whole[..whole.len() / 2].to_string(),
            whole.replace(VERDICT, "namespaces: no"),
            whole.replacen("boot=", "boot=0", 1),
            format!("{whole}x"),
            whole.replace('\n', "\r\n"),
        ];
        for corrupted in corruptions {
            keep(dir.path(), &inputs).unwrap();
            std::fs::write(&file, &corrupted).unwrap();
            std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
            assert!(!holds(dir.path(), &inputs), "{corrupted:?}");
            keep(dir.path(), &inputs).unwrap();
            assert!(holds(dir.path(), &inputs), "not written again");
        }
        // Binary rubbish, and a file far too large.
        std::fs::write(&file, [0xff_u8, 0, 0x80, 7]).unwrap();
        assert!(!holds(dir.path(), &inputs));
        let mut large = whole.clone().into_bytes();
        large.resize(usize::try_from(MOST_BYTES).unwrap() + 10, b'x');
        std::fs::write(&file, large).unwrap();
        assert!(!holds(dir.path(), &inputs));
        keep(dir.path(), &inputs).unwrap();
        assert!(holds(dir.path(), &inputs));
    }

    #[test]
    fn a_file_others_may_write_is_a_miss_and_is_written_again() {
        let dir = tempfile::tempdir().unwrap();
        let inputs = some_inputs();
        let file = kept_file(dir.path(), &inputs);
        for mode in [0o666, 0o620, 0o602, 0o622] {
            keep(dir.path(), &inputs).unwrap();
            std::fs::set_permissions(&file, std::fs::Permissions::from_mode(mode)).unwrap();
            assert!(!holds(dir.path(), &inputs), "mode {mode:o}");
            keep(dir.path(), &inputs).unwrap();
            assert!(
                holds(dir.path(), &inputs),
                "mode {mode:o}: not written again"
            );
            let meta = std::fs::symlink_metadata(&file).unwrap();
            assert_eq!(meta.mode() & 0o777, 0o600);
        }
        // Read-only to others is fine.
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert!(holds(dir.path(), &inputs));
    }

    #[test]
    fn a_folder_others_may_write_is_not_used() {
        let dir = tempfile::tempdir().unwrap();
        let inputs = some_inputs();
        keep(dir.path(), &inputs).unwrap();
        for mode in [0o777, 0o770, 0o707, 0o1777] {
            std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(mode)).unwrap();
            assert!(!holds(dir.path(), &inputs), "folder mode {mode:o}");
            assert!(keep(dir.path(), &inputs).is_err(), "folder mode {mode:o}");
        }
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
        assert!(holds(dir.path(), &inputs));
        // Nor a link to the folder.
        let link = dir.path().join("link");
        let real = dir.path().join("real");
        keep(&real, &inputs).unwrap();
        std::os::unix::fs::symlink(&real, &link).unwrap();
        assert!(!holds(&link, &inputs));
    }

    #[test]
    fn a_file_or_folder_of_another_user_is_a_miss() {
        if !is_root() {
            eprintln!("note: not root, cannot give a file to another user; skipping");
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let inputs = some_inputs();
        let file = kept_file(dir.path(), &inputs);
        let nobody = Some(rustix::process::Uid::from_raw(65534));
        keep(dir.path(), &inputs).unwrap();
        rustix::fs::chown(&file, nobody, None).unwrap();
        assert!(!holds(dir.path(), &inputs));
        // Written again as this user's own.
        keep(dir.path(), &inputs).unwrap();
        assert!(holds(dir.path(), &inputs));
        assert_eq!(std::fs::symlink_metadata(&file).unwrap().uid(), 0);

        // The folder another user's: neither read nor written.
        rustix::fs::chown(dir.path(), nobody, None).unwrap();
        assert!(!holds(dir.path(), &inputs));
        assert!(keep(dir.path(), &inputs).is_err());
        rustix::fs::chown(dir.path(), Some(rustix::process::Uid::ROOT), None).unwrap();
        assert!(holds(dir.path(), &inputs));
    }

    #[test]
    fn a_link_a_second_link_or_a_fifo_in_its_place_is_a_miss() {
        let dir = tempfile::tempdir().unwrap();
        let inputs = some_inputs();
        let file = kept_file(dir.path(), &inputs);
        // A link to a whole, valid file elsewhere.
        let elsewhere = dir.path().join("elsewhere");
        std::fs::write(&elsewhere, content(&inputs)).unwrap();
        std::fs::set_permissions(&elsewhere, std::fs::Permissions::from_mode(0o600)).unwrap();
        std::os::unix::fs::symlink(&elsewhere, &file).unwrap();
        assert!(!holds(dir.path(), &inputs));
        // Written again: the link is replaced, what it led to untouched.
        keep(dir.path(), &inputs).unwrap();
        assert!(holds(dir.path(), &inputs));
        assert!(std::fs::symlink_metadata(&file).unwrap().is_file());
        assert!(std::fs::symlink_metadata(&elsewhere).unwrap().is_file());
        // A hard link: the file has a second name somewhere.
        std::fs::remove_file(&file).unwrap();
        std::fs::hard_link(&elsewhere, &file).unwrap();
        assert!(!holds(dir.path(), &inputs));
        // A FIFO: a miss, and no wait for a writer.
        std::fs::remove_file(&file).unwrap();
        rustix::fs::mkfifoat(rustix::fs::CWD, &file, Mode::from_raw_mode(0o600)).unwrap();
        assert!(!holds(dir.path(), &inputs));
        keep(dir.path(), &inputs).unwrap();
        assert!(holds(dir.path(), &inputs));
    }

    #[test]
    fn an_old_file_is_a_miss() {
        let dir = tempfile::tempdir().unwrap();
        let inputs = some_inputs();
        keep(dir.path(), &inputs).unwrap();
        let file = std::fs::File::options()
            .write(true)
            .open(kept_file(dir.path(), &inputs))
            .unwrap();
        let old = SystemTime::now() - MOST_AGE - Duration::from_secs(60);
        file.set_modified(old).unwrap();
        assert!(!holds(dir.path(), &inputs));
        let future = SystemTime::now() + Duration::from_secs(3600);
        file.set_modified(future).unwrap();
        assert!(!holds(dir.path(), &inputs));
        keep(dir.path(), &inputs).unwrap();
        assert!(holds(dir.path(), &inputs));
    }

    #[test]
    fn files_from_before_the_boot_and_old_partial_files_are_removed_when_one_is_kept() {
        let dir = tempfile::tempdir().unwrap();
        let inputs = some_inputs();
        let before_boot = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000);
        let stale = dir.path().join("0123456789abcdef");
        let partial = dir.path().join(".0123456789abcdef.1.2");
        let fresh_partial = dir.path().join(".fedcba9876543210.3.4");
        for path in [&stale, &partial, &fresh_partial] {
            std::fs::write(path, "x").unwrap();
        }
        for path in [&stale, &partial] {
            let file = std::fs::File::options().write(true).open(path).unwrap();
            file.set_modified(before_boot).unwrap();
        }
        keep(dir.path(), &inputs).unwrap();
        assert!(!stale.exists());
        assert!(!partial.exists());
        // Another process may be writing it now.
        assert!(fresh_partial.exists());
        assert!(holds(dir.path(), &inputs));
    }
}
