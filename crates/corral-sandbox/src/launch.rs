//! Starting bwrap without forking the caller, and putting the sandbox in
//! its limits before the program runs.
//!
//! A `pre_exec` hook makes `std::process::Command` fork the calling
//! process: the fork copies its page tables and the `exec` right after
//! tears them down, a cost that grows with the caller's memory and was
//! most of what a sandboxed command cost over bare bwrap (see
//! docs/benchmarks.md). So bwrap is started by `posix_spawn`, which shares
//! the caller's memory until the `exec`, with no code of ours in the
//! child, and what the hooks did is done otherwise:
//!
//! - the descriptors bwrap reads (the socket filter, the `/etc` copies,
//!   the gate's) are `dup2`ed onto themselves, which clears close-on-exec
//!   on the child's copy only; any other this process holds without
//!   close-on-exec (one it was started with) is closed in the child
//!   ([`strays`]), so bwrap starts with its standard streams and those;
//! - `--die-with-parent` is the death signal (bwrap sets it itself);
//! - the cgroups: on v1 the thread that starts bwrap moves itself alone
//!   into the command's cgroups for the spawn and back after
//!   (`Cgroups::enter`), so bwrap is born inside them as the forked child
//!   joined them before, by the same cheap write of `0`;
//! - the gate ([`Gate`]): `--info-fd` tells this side the pid of bwrap's
//!   child, the sandbox's first process, as soon as it is cloned, and
//!   `--block-fd` makes that child wait, after its mounts and before it
//!   runs the program, until this side writes. In between, this side sets
//!   its rlimits (`prlimit`) and on cgroup v2 moves it into the cgroups,
//!   so the program and all it starts are born inside them.
//!   `--sync-fd` hands bwrap a copy of the releasing end: were this
//!   process to die before it released the child, the child's wait would
//!   never end (it holds the other copy itself), so the program never runs
//!   outside its limits.

use super::limits::{self, Cgroups, Limits};
use std::ffi::{CString, OsString};
use std::io::{Read, Write};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::net::UnixStream;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::ExitStatus;
use std::time::Duration;

/// How long bwrap may take to report its child.
const INFO_WAIT: Duration = Duration::from_secs(30);

/// A started process: its pid, which is also its process group, and its
/// output.
pub(crate) struct Launched {
    pub pid: rustix::process::Pid,
    /// The write end of its stdin, when it was piped.
    pub stdin: Option<std::fs::File>,
    pub stdout: std::fs::File,
    pub stderr: std::fs::File,
}

/// Starts `program` with `args` and exactly `env`: stdin from
/// `/dev/null` (piped when `piped_stdin`), stdout and stderr piped, a
/// process group of its own, `SIGPIPE` at its default and no signal
/// blocked (as `std::process` does), and `kept` open across `exec`, with
/// no other descriptor: every other of ours is close-on-exec, and the
/// [`strays`] are closed in the child. The caller reaps it ([`wait`]).
// Opens /dev/null for a child's stdin, never a project's file.
#[allow(clippy::disallowed_methods)]
pub(crate) fn spawn(
    program: &Path,
    args: &[OsString],
    env: &[(OsString, OsString)],
    kept: &[BorrowedFd<'_>],
    piped_stdin: bool,
) -> std::io::Result<Launched> {
    use nix::spawn::{PosixSpawnAttr, PosixSpawnFileActions, PosixSpawnFlags};
    use nix::sys::signal::{SigSet, Signal};
    let cstring = |bytes: &[u8]| {
        CString::new(bytes).map_err(|_| std::io::Error::other("a NUL byte in the command line"))
    };
    let path = cstring(program.as_os_str().as_bytes())?;
    let argv = std::iter::once(Ok(path.clone()))
        .chain(args.iter().map(|a| cstring(a.as_bytes())))
        .collect::<std::io::Result<Vec<CString>>>()?;
    let envp = env
        .iter()
        .map(|(k, v)| cstring(&[k.as_bytes(), b"=", v.as_bytes()].concat()))
        .collect::<std::io::Result<Vec<CString>>>()?;

    let pipe = || rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC);
    let (stdin_end, stdin): (OwnedFd, _) = if piped_stdin {
        let (read, write) = pipe()?;
        (read, Some(std::fs::File::from(write)))
    } else {
        (std::fs::File::open("/dev/null")?.into(), None)
    };
    let (stdout, stdout_end) = pipe()?;
    let (stderr, stderr_end) = pipe()?;
    let mut actions = PosixSpawnFileActions::init()?;
    // Listed once every descriptor of ours for the child is open, so no
    // number listed is one of them. A stray closed meanwhile by another
    // thread leaves a number the child need not have open either.
    for fd in strays() {
        actions.add_close(fd)?;
    }
    actions.add_dup2(stdin_end.as_raw_fd(), 0)?;
    actions.add_dup2(stdout_end.as_raw_fd(), 1)?;
    actions.add_dup2(stderr_end.as_raw_fd(), 2)?;
    for fd in kept {
        // Onto itself: clears close-on-exec in the child (glibc 2.29 on,
        // musl, as POSIX now says).
        actions.add_dup2(fd.as_raw_fd(), fd.as_raw_fd())?;
    }
    let mut attr = PosixSpawnAttr::init()?;
    attr.set_flags(
        PosixSpawnFlags::POSIX_SPAWN_SETPGROUP
            | PosixSpawnFlags::POSIX_SPAWN_SETSIGMASK
            | PosixSpawnFlags::POSIX_SPAWN_SETSIGDEF,
    )?;
    attr.set_pgroup(nix::unistd::Pid::from_raw(0))?;
    attr.set_sigmask(&SigSet::empty())?;
    let mut pipe = SigSet::empty();
    pipe.add(Signal::SIGPIPE);
    attr.set_sigdefault(&pipe)?;
    let pid = nix::spawn::posix_spawn(path.as_c_str(), &actions, &attr, &argv, &envp)?;
    let pid = rustix::process::Pid::from_raw(pid.as_raw())
        .ok_or_else(|| std::io::Error::other("the spawn returned no process"))?;
    Ok(Launched {
        pid,
        stdin,
        stdout: stdout.into(),
        stderr: stderr.into(),
    })
}

/// The descriptors of this process that a child would inherit though
/// Corral never meant it to: every one from 3 on without close-on-exec.
/// Everything Corral opens is close-on-exec (std opens so; the pipes,
/// memory files, sockets and duplicates here and in `proxy` ask for it),
/// and the descriptors bwrap reads lose the flag in the child alone; so
/// what is found here is what the process was started with (a socket its
/// launcher left open, to a host service) or what a library opened
/// without the flag. Listed from `/proc/self/fd`; without it, every
/// number below the open-files limit is asked.
// Lists /proc/self/fd, never a project's folder.
#[allow(clippy::disallowed_methods)]
pub(crate) fn strays() -> Vec<RawFd> {
    /// The most numbers asked without `/proc`.
    const MOST: u64 = 1 << 20;
    let numbers: Vec<RawFd> = match std::fs::read_dir("/proc/self/fd") {
        Ok(listed) => listed
            .flatten()
            .filter_map(|entry| entry.file_name().to_str()?.parse().ok())
            .collect(),
        Err(_) => {
            let limit = rustix::process::getrlimit(rustix::process::Resource::Nofile)
                .current
                .unwrap_or(MOST)
                .min(MOST);
            (0..RawFd::try_from(limit).unwrap_or(RawFd::MAX)).collect()
        }
    };
    numbers
        .into_iter()
        .filter(|&fd| fd > 2 && inheritable(fd))
        .collect()
}

/// Whether `fd` is open here without close-on-exec.
fn inheritable(fd: RawFd) -> bool {
    #[allow(unsafe_code)]
    // SAFETY: `F_GETFD` reads the flags of a descriptor number and changes
    // nothing; a number not open (or closed meanwhile) answers `EBADF`.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFD) };
    flags >= 0 && flags & libc::FD_CLOEXEC == 0
}

/// Marks every descriptor from 3 on close-on-exec in this process: what
/// the launcher left open (a terminal's socket, another app's pipe) then
/// reaches no program this process starts, sandboxed or not (`ssh`, a
/// language server). Called once at start, before any thread.
pub fn inherit_nothing_from_the_launcher() {
    #[allow(unsafe_code)]
    // SAFETY: a system call on descriptor numbers that only sets their
    // close-on-exec flag.
    let marked = unsafe {
        libc::syscall(
            libc::SYS_close_range,
            3_u32,
            u32::MAX,
            libc::CLOSE_RANGE_CLOEXEC,
        )
    };
    if marked != 0 {
        for fd in strays() {
            #[allow(unsafe_code)]
            // SAFETY: as above, one descriptor at a time.
            unsafe {
                libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC);
            }
        }
    }
}

/// For a child `std::process::Command` forks (a server's bwrap, any
/// command under Landlock), what [`spawn`] does with file actions: its
/// first hook marks every descriptor from 3 on close-on-exec
/// (`close_range` with `CLOSE_RANGE_CLOEXEC`; before Linux 5.11, which
/// lacks it, the [`strays`] found now). Call it before any hook that
/// clears the flag on a descriptor bwrap reads: hooks run in order.
pub(crate) fn inherit_nothing(cmd: &mut std::process::Command) {
    use std::os::unix::process::CommandExt;
    let strays = strays();
    let hook = move || -> std::io::Result<()> {
        #[allow(unsafe_code)]
        // SAFETY: system calls on descriptor numbers that only set their
        // close-on-exec flag, in the forked child before `exec`; no
        // allocation (the list was made before the fork).
        unsafe {
            let marked = libc::syscall(
                libc::SYS_close_range,
                3_u32,
                u32::MAX,
                libc::CLOSE_RANGE_CLOEXEC,
            );
            if marked != 0 {
                for &fd in &strays {
                    libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC);
                }
            }
        }
        Ok(())
    };
    #[allow(unsafe_code)]
    // SAFETY: the hook runs in the forked child before `exec` and only
    // makes the system calls above, which are async-signal-safe.
    unsafe {
        cmd.pre_exec(hook);
    }
}

/// Waits for a process [`spawn`] started and reaps it.
pub(crate) fn wait(pid: rustix::process::Pid) -> std::io::Result<ExitStatus> {
    loop {
        match rustix::process::waitpid(Some(pid), rustix::process::WaitOptions::empty()) {
            Ok(Some((_, status))) => return Ok(ExitStatus::from_raw(status.as_raw())),
            Ok(None) => continue,
            Err(rustix::io::Errno::INTR) => continue,
            Err(e) => return Err(e.into()),
        }
    }
}

/// The channels bwrap is given: it reports its child's pid on one, the
/// child waits on another, and keeps a copy of the releasing end.
pub(crate) struct Gate {
    info: UnixStream,
    release: UnixStream,
    /// bwrap's ends: `--info-fd`, `--block-fd`, `--sync-fd`.
    ends: [OwnedFd; 3],
}

impl Gate {
    pub(crate) fn new() -> std::io::Result<Gate> {
        let (info, info_end) = UnixStream::pair()?;
        let (release, block_end) = UnixStream::pair()?;
        // Above the standard streams, which the spawn rewires.
        let above = |fd: BorrowedFd<'_>| rustix::io::fcntl_dupfd_cloexec(fd, 3);
        let ends = [
            above(info_end.as_fd())?,
            above(block_end.as_fd())?,
            above(release.as_fd())?,
        ];
        Ok(Gate {
            info,
            release,
            ends,
        })
    }

    /// bwrap's options naming its ends.
    pub(crate) fn bwrap_args(&self) -> Vec<OsString> {
        let [info, block, sync] = &self.ends;
        let fd = |fd: &OwnedFd| OsString::from(fd.as_raw_fd().to_string());
        vec![
            "--info-fd".into(),
            fd(info),
            "--block-fd".into(),
            fd(block),
            "--sync-fd".into(),
            fd(sync),
        ]
    }

    /// The descriptors bwrap keeps across `exec`.
    pub(crate) fn ends(&self) -> impl Iterator<Item = BorrowedFd<'_>> {
        self.ends.iter().map(AsFd::as_fd)
    }

    /// Once bwrap is started: closes its ends here and reads the pid of
    /// its child. `None` when bwrap ended before making one (its error is
    /// in its stderr and exit status); nothing then waits to be released.
    pub(crate) fn opened(self) -> std::io::Result<Option<(u32, Release)>> {
        let Gate {
            info,
            release,
            ends,
        } = self;
        drop(ends);
        info.set_read_timeout(Some(INFO_WAIT))?;
        let mut report = Vec::new();
        (&info).take(64 * 1024).read_to_end(&mut report)?;
        if report.is_empty() {
            return Ok(None);
        }
        let pid = child_pid(&report).ok_or_else(|| {
            std::io::Error::other(format!(
                "bwrap's report was unreadable: {}",
                String::from_utf8_lossy(&report)
            ))
        })?;
        Ok(Some((pid, Release(release))))
    }
}

/// The pid bwrap reports (`{"child-pid": N, ...}`).
fn child_pid(report: &[u8]) -> Option<u32> {
    #[derive(serde::Deserialize)]
    struct Info {
        #[serde(rename = "child-pid")]
        child_pid: u32,
    }
    serde_json::from_slice::<Info>(report)
        .ok()
        .map(|info| info.child_pid)
}

/// Lets the sandbox's first process run the program.
pub(crate) struct Release(UnixStream);

impl Release {
    pub(crate) fn release(&self) -> std::io::Result<()> {
        (&self.0).write_all(b"go")
    }
}

/// Puts bwrap's child `pid`, still waiting at the gate, under the
/// command's rlimits, and in its cgroups unless bwrap was `born_inside`
/// them (`Cgroups::enter`).
pub(crate) fn confine(
    pid: u32,
    limits: &Limits,
    cgroups: &Cgroups,
    born_inside: bool,
) -> std::io::Result<()> {
    let target = i32::try_from(pid)
        .ok()
        .and_then(rustix::process::Pid::from_raw)
        .ok_or_else(|| std::io::Error::other(format!("bwrap reported pid {pid}")))?;
    if !born_inside {
        cgroups.join(pid)?;
    }
    for (resource, value) in limits::rlimits(limits, cgroups) {
        let limit = rustix::process::Rlimit {
            current: Some(value),
            maximum: Some(value),
        };
        rustix::process::prlimit(Some(target), resource, limit)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::disallowed_methods)]
    use super::*;

    /// In a process of its own (it marks every descriptor of the process
    /// it runs in): a descriptor the launcher left inheritable reaches no
    /// child started afterwards, sandboxed or not.
    #[test]
    fn what_the_launcher_left_open_reaches_no_child_of_this_process() {
        const NAME: &str =
            "launch::tests::what_the_launcher_left_open_reaches_no_child_of_this_process";
        if std::env::var_os("CORRAL_LAUNCH_CHILD").is_none() {
            let out = std::process::Command::new(std::env::current_exe().unwrap())
                .args(["--exact", NAME, "--nocapture", "--test-threads=1"])
                .env("CORRAL_LAUNCH_CHILD", "1")
                .output()
                .unwrap();
            let stdout = String::from_utf8_lossy(&out.stdout);
            assert!(
                out.status.success(),
                "{stdout}{}",
                String::from_utf8_lossy(&out.stderr)
            );
            assert!(stdout.contains("CHILD-CHECKED"), "{stdout}");
            return;
        }
        let (stray, _peer) = UnixStream::pair().unwrap();
        rustix::io::fcntl_setfd(&stray, rustix::io::FdFlags::empty()).unwrap();
        let probe = format!(
            "test -e /proc/self/fd/{} && echo stray; true",
            stray.as_raw_fd()
        );
        let before = std::process::Command::new("/bin/sh")
            .args(["-c", &probe])
            .output()
            .unwrap();
        assert_eq!(before.stdout, b"stray\n", "the probe sees an inherited one");
        inherit_nothing_from_the_launcher();
        let after = std::process::Command::new("/bin/sh")
            .args(["-c", &probe])
            .output()
            .unwrap();
        assert_eq!(String::from_utf8_lossy(&after.stdout), "");
        println!("CHILD-CHECKED");
    }

    #[test]
    fn bwrap_s_report_gives_the_child_s_pid() {
        let report = b"{\n    \"child-pid\": 4242,\n    \"cgroup-namespace\": 4026532,\n    \"net-namespace\": 1\n}\n";
        assert_eq!(child_pid(report), Some(4242));
        assert_eq!(child_pid(b"{\"child-pid\": \"x\"}"), None);
        assert_eq!(child_pid(b"{\n    \"child-pid\": 12"), None);
    }

    #[test]
    fn a_process_not_born_inside_is_moved_into_the_cgroups_and_limited_by_pid() {
        let limits = Limits {
            open_files: 222,
            file_size_bytes: 5 << 20,
            ..Limits::default()
        };
        let cgroups = Cgroups::make(&limits);
        let launched = spawn(Path::new("/bin/sleep"), &["5".into()], &[], &[], false).unwrap();
        let pid = launched.pid.as_raw_nonzero().get().unsigned_abs();
        let confined = confine(pid, &limits, &cgroups, false);
        let read = |file: &str| std::fs::read_to_string(format!("/proc/{pid}/{file}")).unwrap();
        let (own, limited) = (read("cgroup"), read("limits"));
        let _ = rustix::process::kill_process(launched.pid, rustix::process::Signal::KILL);
        let _ = wait(launched.pid);
        confined.unwrap();
        let line = |name: &str| {
            limited
                .lines()
                .find(|l| l.starts_with(name))
                .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
                .unwrap_or_default()
        };
        assert!(
            line("Max open files").ends_with("222 222 files"),
            "{limited}"
        );
        assert!(
            line("Max file size").ends_with("5242880 5242880 bytes"),
            "{limited}"
        );
        let name = format!("/corral-{}-", std::process::id());
        assert_eq!(cgroups.procs().is_empty(), !own.contains(&name), "{own}");
    }

    #[test]
    fn a_spawned_program_keeps_only_the_descriptors_named() {
        let (kept, _kept_peer) = UnixStream::pair().unwrap();
        let (other, _other_peer) = UnixStream::pair().unwrap();
        let script = format!(
            "test -e /proc/self/fd/{k} && echo kept; test -e /proc/self/fd/{o} || echo closed; echo $X; [ $(cut -d' ' -f5 /proc/$$/stat) = $$ ] && echo leader",
            k = kept.as_raw_fd(),
            o = other.as_raw_fd()
        );
        let launched = spawn(
            Path::new("/bin/sh"),
            &["-c".into(), script.into()],
            &[("X".into(), "from env".into())],
            &[kept.as_fd()],
            false,
        )
        .unwrap();
        let mut out = String::new();
        let mut stdout = launched.stdout;
        stdout.read_to_string(&mut out).unwrap();
        let status = wait(launched.pid).unwrap();
        assert!(status.success());
        assert_eq!(out, "kept\nclosed\nfrom env\nleader\n");
    }

    #[test]
    fn a_descriptor_left_inheritable_here_reaches_no_child() {
        use std::os::unix::process::CommandExt;
        // As one this process was started with: no close-on-exec.
        let (stray, _stray_peer) = UnixStream::pair().unwrap();
        rustix::io::fcntl_setfd(&stray, rustix::io::FdFlags::empty()).unwrap();
        let (kept, _kept_peer) = UnixStream::pair().unwrap();
        assert!(strays().contains(&stray.as_raw_fd()));
        assert!(!strays().contains(&kept.as_raw_fd()));
        let script = format!(
            "test -e /proc/self/fd/{s} && echo stray; test -e /proc/self/fd/{k} && echo kept; true",
            s = stray.as_raw_fd(),
            k = kept.as_raw_fd()
        );
        let args = ["-c".into(), script.into()];
        let launched = spawn(Path::new("/bin/sh"), &args, &[], &[kept.as_fd()], false).unwrap();
        let mut out = String::new();
        let mut stdout = launched.stdout;
        stdout.read_to_string(&mut out).unwrap();
        assert!(wait(launched.pid).unwrap().success());
        assert_eq!(out, "kept\n", "spawned");

        // Forked: the hook first, then one that keeps `kept`, as a
        // server's bwrap keeps its files.
        let mut cmd = std::process::Command::new("/bin/sh");
        inherit_nothing(&mut cmd);
        let kept_fd = kept.try_clone().unwrap();
        let script = format!(
            "test -e /proc/self/fd/{s} && echo stray; test -e /proc/self/fd/{k} && echo kept; true",
            s = stray.as_raw_fd(),
            k = kept_fd.as_raw_fd()
        );
        #[allow(unsafe_code)]
        // SAFETY: one `fcntl` in the forked child on a descriptor opened
        // before the fork.
        unsafe {
            cmd.pre_exec(move || {
                rustix::io::fcntl_setfd(&kept_fd, rustix::io::FdFlags::empty())?;
                Ok(())
            });
        }
        let out = cmd.args(["-c", &script]).output().unwrap();
        assert_eq!(String::from_utf8_lossy(&out.stdout), "kept\n", "forked");
    }

    #[test]
    fn stdin_is_empty_or_piped_as_asked() {
        let run = |piped: bool| {
            let script = "read -r line; echo \"got:$line\"";
            let launched = spawn(
                Path::new("/bin/sh"),
                &["-c".into(), script.into()],
                &[],
                &[],
                piped,
            )
            .unwrap();
            assert_eq!(launched.stdin.is_some(), piped);
            if let Some(mut stdin) = launched.stdin {
                stdin.write_all(b"hello\n").unwrap();
            }
            let mut out = String::new();
            let mut stdout = launched.stdout;
            stdout.read_to_string(&mut out).unwrap();
            let _ = wait(launched.pid);
            out
        };
        assert_eq!(run(true), "got:hello\n");
        // `/dev/null`: the read finds its end at once.
        assert_eq!(run(false), "got:\n");
    }
}
