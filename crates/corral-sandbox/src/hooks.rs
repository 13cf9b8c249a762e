//! The hooks a forked child runs before it `exec`s, for what is started
//! with a `std::process::Command`: a server's bwrap, and any command
//! under Landlock alone. They take the limits, the death signal, the
//! Landlock ruleset and the socket filter in the child. A command's bwrap
//! runs none: it is not forked (`launch`).

use super::limits::{Cgroups, Limits};
use super::sandbox::{self, Prepared};
use super::Sandbox;
use corral_fs::{Error, ErrorCode, Result};
use std::os::unix::process::CommandExt;
use std::process::Command;
use std::time::Duration;

#[cfg(target_os = "linux")]
pub(crate) fn install_sandbox(
    cmd: &mut Command,
    prepared: Prepared,
    why: String,
) -> Result<Status> {
    use std::io::Write;
    use std::os::unix::net::UnixStream;
    let ruleset = match prepared {
        Prepared::Ruleset(ruleset) => ruleset,
        Prepared::Unavailable(note) => return Ok(Status::Known(format!("{why}; {note}"))),
    };
    // Both ends are close-on-exec: the child's copy closes at `exec`.
    let (parent_end, child_end) = UnixStream::pair().map_err(|e| {
        Error::new(
            ErrorCode::Io,
            format!("could not prepare the sandbox status channel: {e}"),
        )
    })?;
    let mut ruleset = Some(ruleset);
    let hook = move || -> std::io::Result<()> {
        let Some(ruleset) = ruleset.take() else {
            return Ok(());
        };
        let byte = match ruleset.restrict_self() {
            Ok(status) => match status.ruleset {
                landlock::RulesetStatus::FullyEnforced => sandbox::STATUS_FULL,
                landlock::RulesetStatus::PartiallyEnforced => sandbox::STATUS_PARTIAL,
                landlock::RulesetStatus::NotEnforced => sandbox::STATUS_NONE,
            },
            // Fail closed: a sandbox that was available but could not be
            // applied stops the spawn. `from_raw_os_error` does not allocate.
            Err(_) => {
                return Err(std::io::Error::from_raw_os_error(
                    rustix::io::Errno::PERM.raw_os_error(),
                ))
            }
        };
        let _ = (&child_end).write(&[byte]);
        Ok(())
    };
    #[allow(unsafe_code)]
    // SAFETY: the hook runs in the forked child before `exec`. It only calls
    // `restrict_self` on a ruleset built before the fork (`prctl` and
    // `landlock_restrict_self`, no allocation, no lock) and `write(2)` on a
    // socket opened before the fork; both are async-signal-safe. Errors are
    // built with `from_raw_os_error`, which does not allocate.
    unsafe {
        cmd.pre_exec(hook);
    }
    Ok(Status::Reported {
        socket: parent_end,
        why,
    })
}

/// Under Landlock alone the child installs the socket filter itself, as
/// bwrap does in the namespaces (`shell/seccomp.rs`): no host socket, by
/// path or abstract. It fails closed: a filter that cannot be installed
/// stops the spawn.
#[cfg(target_os = "linux")]
pub(crate) fn refuse_sockets(cmd: &mut Command) -> Result<()> {
    let program = super::seccomp::instructions().map_err(|e| {
        Error::new(
            ErrorCode::Io,
            format!("could not prepare the sandbox's socket filter: {e}"),
        )
    })?;
    #[allow(unsafe_code)]
    // SAFETY: the hook runs in the forked child before `exec` and only makes
    // two syscalls (`prctl(PR_SET_NO_NEW_PRIVS)`, `seccomp`) on a program
    // compiled before the fork; errors are OS errors, which do not allocate.
    unsafe {
        cmd.pre_exec(move || super::seccomp::install(program));
    }
    Ok(())
}

/// The command gets SIGKILL if the thread that started it ends — that
/// thread waits for it, so only when the caller dies, even by SIGKILL,
/// which no exit hook of the app can see. Its own children are not reached
/// this way (see docs/security.md).
#[cfg(target_os = "linux")]
pub(crate) fn die_with_caller(cmd: &mut Command) {
    use rustix::process::{getpid, getppid, set_parent_process_death_signal, Signal};
    let caller = getpid();
    let hook = move || -> std::io::Result<()> {
        set_parent_process_death_signal(Some(Signal::KILL))
            .map_err(|e| std::io::Error::from_raw_os_error(e.raw_os_error()))?;
        // The caller may have died between the fork and the line above.
        if getppid() != Some(caller) {
            return Err(std::io::Error::from_raw_os_error(
                rustix::io::Errno::SRCH.raw_os_error(),
            ));
        }
        Ok(())
    };
    #[allow(unsafe_code)]
    // SAFETY: the hook runs in the forked child before `exec` and only makes
    // two syscalls (`prctl(PR_SET_PDEATHSIG)`, `getppid`); errors are built
    // with `from_raw_os_error`, which does not allocate.
    unsafe {
        cmd.pre_exec(hook);
    }
}

/// Before it becomes bwrap (or the program), the child takes its limits:
/// the rlimits, its cgroups (it writes `0`, itself, to each cgroup's
/// `tasks` or `cgroup.procs`, see `limits::join_file`), and keeps the
/// files bwrap reads by fd (the seccomp filter, the `/etc` copies) open
/// across `exec`. Everything is prepared before the fork.
#[cfg(target_os = "linux")]
pub(crate) fn confine(
    cmd: &mut Command,
    limits: &Limits,
    cgroups: &Cgroups,
    kept: Vec<std::fs::File>,
) -> Result<()> {
    use rustix::io::{fcntl_setfd, FdFlags};
    use rustix::process::{setrlimit, Rlimit};
    use std::os::fd::OwnedFd;
    let rlimits = super::limits::rlimits(limits, cgroups);
    let procs: Vec<OwnedFd> = cgroups
        .procs()
        .iter()
        .map(|fd| fd.try_clone_to_owned())
        .collect::<std::io::Result<_>>()
        .map_err(|e| {
            Error::new(
                ErrorCode::Io,
                format!("could not prepare the command's cgroup: {e}"),
            )
        })?;
    let kept: Vec<OwnedFd> = kept.into_iter().map(OwnedFd::from).collect();
    let hook = move || -> std::io::Result<()> {
        let errno = |e: rustix::io::Errno| std::io::Error::from_raw_os_error(e.raw_os_error());
        for fd in &procs {
            rustix::io::write(fd, b"0").map_err(errno)?;
        }
        for (resource, value) in &rlimits {
            let limit = Rlimit {
                current: Some(*value),
                maximum: Some(*value),
            };
            setrlimit(*resource, limit).map_err(errno)?;
        }
        for fd in &kept {
            fcntl_setfd(fd, FdFlags::empty()).map_err(errno)?;
        }
        Ok(())
    };
    #[allow(unsafe_code)]
    // SAFETY: the hook runs in the forked child before `exec` and only makes
    // syscalls (`write`, `setrlimit`, `fcntl`) on values prepared before the
    // fork; errors are built with `from_raw_os_error`, which does not
    // allocate.
    unsafe {
        cmd.pre_exec(hook);
    }
    Ok(())
}

#[cfg(not(target_os = "linux"))]
pub(crate) fn install_sandbox(
    _cmd: &mut Command,
    prepared: Prepared,
    why: String,
) -> Result<Status> {
    match prepared {
        Prepared::Unavailable(note) => Ok(Status::Known(format!("{why}; {note}"))),
    }
}

/// Where the sandbox status will come from.
pub(crate) enum Status {
    /// bwrap built the namespaces (it fails the spawn otherwise).
    Namespaces,
    /// The child's hook reports one byte here.
    #[cfg(target_os = "linux")]
    Reported {
        socket: std::os::unix::net::UnixStream,
        why: String,
    },
    /// Known before spawning: no sandbox, and why.
    Known(String),
}

impl Status {
    pub(crate) fn finish(self) -> (Sandbox, Option<String>) {
        match self {
            Status::Namespaces => (Sandbox::Namespaces, None),
            #[cfg(target_os = "linux")]
            Status::Reported { mut socket, why } => {
                use std::io::Read;
                let _ = socket.set_read_timeout(Some(Duration::from_secs(2)));
                let mut byte = [0u8; 1];
                let got = match socket.read(&mut byte) {
                    Ok(1) => Some(byte[0]),
                    _ => None,
                };
                let (applied, note) = sandbox::describe(got);
                let kind = if applied {
                    Sandbox::Landlock
                } else {
                    Sandbox::None
                };
                (
                    kind,
                    Some(format!(
                        "{why}; {note}",
                        note = note.unwrap_or_else(|| "Landlock confined its writes".into())
                    )),
                )
            }
            Status::Known(note) => (Sandbox::None, Some(note)),
        }
    }
}
