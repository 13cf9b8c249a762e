//! Landlock for the child (Linux), the fallback where bubblewrap cannot
//! build namespaces (see [`super::namespace`]): reads and execution
//! anywhere, writes only beneath the run's TMPDIR, a few device files and,
//! outside the read-only profile, the project root and the toolchain
//! caches. It cannot be stacked under bwrap: a Landlock-restricted process
//! may not mount, and bwrap's fence is made of mounts.
//!
//! The ruleset is built in the parent, before `fork`: opening the paths and
//! the ruleset file descriptor allocate, and allocating between `fork` and
//! `exec` is not safe. The child's `pre_exec` hook only calls
//! `restrict_self` (two syscalls: `prctl(NO_NEW_PRIVS)` and
//! `landlock_restrict_self`) and writes one status byte to a close-on-exec
//! socket, from which the parent learns whether the sandbox was enforced.

use super::profile::Profile;
use corral_fs::ProjectRoot;
use std::path::{Path, PathBuf};

/// What the parent prepared for the child.
pub(crate) enum Prepared {
    /// A ruleset ready for `restrict_self`.
    #[cfg(target_os = "linux")]
    Ruleset(landlock::RulesetCreated),
    /// No sandbox, and why.
    Unavailable(String),
}

/// Status bytes sent by the child's `pre_exec` hook.
pub(crate) const STATUS_FULL: u8 = b'F';
pub(crate) const STATUS_PARTIAL: u8 = b'P';
pub(crate) const STATUS_NONE: u8 = b'N';

/// Device files a program may open for writing.
const DEVICES: [&str; 6] = [
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/tty",
    "/dev/random",
    "/dev/urandom",
];

/// The folders the child may write beneath.
pub(crate) fn writable_dirs(root: &Path, tmpdir: &Path, profile: Profile) -> Vec<PathBuf> {
    let mut dirs = vec![tmpdir.to_path_buf()];
    if !profile.writes_project() {
        return dirs;
    }
    dirs.push(root.to_path_buf());
    if let Some(home) = super::env::home() {
        dirs.extend(super::env::HOME_CACHES.iter().map(|c| home.join(c)));
    }
    if let Some(cargo) = super::env::cargo_home() {
        dirs.extend(super::env::CARGO_CACHES.iter().map(|c| cargo.join(c)));
    }
    dirs.extend(super::caches::dir());
    dirs
}

/// The single files the child may write.
pub(crate) fn writable_files(profile: Profile) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = DEVICES.iter().map(PathBuf::from).collect();
    if !profile.writes_project() {
        return files;
    }
    if let Some(cargo) = super::env::cargo_home() {
        files.extend(super::env::CARGO_FILES.iter().map(|f| cargo.join(f)));
    }
    files
}

/// Builds the ruleset for one run. Missing cache folders are skipped.
#[cfg(target_os = "linux")]
pub(crate) fn prepare(root: &ProjectRoot, tmpdir: &Path, profile: Profile) -> Prepared {
    match build(root.path(), tmpdir, profile) {
        Ok(ruleset) => Prepared::Ruleset(ruleset),
        Err(e) => Prepared::Unavailable(format!("the Landlock ruleset could not be built: {e}")),
    }
}

#[cfg(target_os = "linux")]
fn build(
    root: &Path,
    tmpdir: &Path,
    profile: Profile,
) -> Result<landlock::RulesetCreated, landlock::RulesetError> {
    use landlock::{
        AccessFs, CompatLevel, Compatible, PathBeneath, PathFd, Ruleset, RulesetAttr,
        RulesetCreatedAttr, ABI,
    };
    // ABI 3 covers every write right we need (including truncate). The
    // device-ioctl right of ABI 5 is left unhandled so terminals and
    // `/dev/null` behave normally.
    let abi = ABI::V3;
    let write = AccessFs::from_write(abi);
    let file_write = write & AccessFs::from_file(abi);
    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(write)?
        .create()?;
    // The root and TMPDIR must be writable; if they cannot be opened the
    // spawn will fail on its own, so a missing one is skipped like a cache.
    for dir in writable_dirs(root, tmpdir, profile) {
        if let Ok(fd) = PathFd::new(&dir) {
            ruleset = ruleset.add_rule(PathBeneath::new(fd, write))?;
        }
    }
    for file in writable_files(profile) {
        if let Ok(fd) = PathFd::new(&file) {
            ruleset = ruleset.add_rule(PathBeneath::new(fd, file_write))?;
        }
    }
    Ok(ruleset)
}

#[cfg(not(target_os = "linux"))]
pub(crate) fn prepare(_root: &ProjectRoot, _tmpdir: &Path, _profile: Profile) -> Prepared {
    Prepared::Unavailable("Landlock exists only on Linux; the command ran without a sandbox".into())
}

/// Turns the child's status byte into `(sandboxed, note)`.
pub(crate) fn describe(status: Option<u8>) -> (bool, Option<String>) {
    match status {
        Some(STATUS_FULL) => (true, None),
        Some(STATUS_PARTIAL) => (
            true,
            Some(
                "Landlock was applied partially: this kernel lacks some of the write rights".into(),
            ),
        ),
        Some(STATUS_NONE) => (
            false,
            Some("this kernel does not enforce Landlock; the command ran without a sandbox".into()),
        ),
        _ => (
            false,
            Some("the sandbox status was not reported; treat the command as unsandboxed".into()),
        ),
    }
}
