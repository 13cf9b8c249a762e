//! Spawning and supervising one child.
//!
//! The child gets stdin from `/dev/null`, its own process group, the built
//! environment and (on Linux) the Landlock ruleset, and no descriptor but
//! its standard streams and the ones bwrap reads: not one this process
//! was started with (`launch::strays`, `launch::inherit_nothing`). A
//! command in the namespaces starts bwrap without forking the caller
//! (`launch`): its limits are put on bwrap's child before the program
//! runs. One thread
//! reads both pipes as output comes (`poll`), hands each chunk to the live
//! sink and keeps a capped copy, and sees the exit through a pidfd, so the
//! end of a command is one wake-up (where there is no pidfd, another
//! thread waits for the exit). The calling thread watches
//! the clock and the cancel switch, and kills the whole group (`SIGKILL` to
//! `-pgid`) on timeout or cancel.
//!
//! A grandchild that keeps the pipes open cannot hang the call: once the
//! program has exited, the readers get [`READ_GRACE`] to drain, then the
//! group is killed, and readers still blocked after [`KILL_GRACE`] (a
//! grandchild that left the group) are abandoned: they stop delivering and
//! end by themselves when the pipe closes. When the call returns, nothing
//! is left running in the group.

use super::capture::{Capture, Captured};
use super::holds::Held;
#[cfg(target_os = "linux")]
use super::hooks::{confine, die_with_caller, refuse_sockets};
use super::hooks::{install_sandbox, Status};
#[cfg(target_os = "linux")]
use super::launch;
use super::limits::{Cgroups, Limit, Limits};
use super::proxy::{self, Egress, Pending, Proxy};
use super::sandbox::Prepared;
use super::{Sandbox, ShellRun, Stream};
use corral_fs::{Error, ErrorCode, Result};
use std::ffi::OsString;
use std::io::Read;
#[cfg(target_os = "linux")]
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

/// How long readers may drain after the program exited.
pub(crate) const READ_GRACE: Duration = Duration::from_millis(300);
/// How long readers may drain after the group was killed.
pub(crate) const KILL_GRACE: Duration = Duration::from_millis(200);
/// How often the cancel switch is looked at.
const TICK: Duration = Duration::from_millis(25);
/// How often [`Spec::look`] is called.
pub(crate) const LOOK_EVERY: Duration = Duration::from_millis(250);
/// Read buffer per pipe.
const CHUNK: usize = 64 * 1024;

/// What to run.
pub(crate) struct Spec<'a> {
    pub program: &'a Path,
    /// How the child is fenced in.
    pub fence: Fence,
    pub name: &'a str,
    pub args: &'a [String],
    pub cwd: &'a Path,
    pub env: &'a [(OsString, OsString)],
    pub timeout: Duration,
    /// What it may use, and the cgroups made for it.
    pub limits: Limits,
    pub cgroups: &'a Cgroups,
    /// The command's count in the holds of the agent configuration
    /// (`holds`): counted out as soon as its sandbox has ended, while the
    /// last of its output is read (the count out may remove a folder,
    /// which waits on the disk).
    pub held: Option<Held>,
    /// What its stdin reads, then its end; `None`: `/dev/null`.
    pub stdin: Option<Vec<u8>>,
    /// Called on the calling thread as it starts, then every
    /// [`LOOK_EVERY`] while it runs (a background command's look for
    /// auto-run files it made, `namespace::AutoRunBefore::look`).
    pub look: Option<&'a mut dyn FnMut()>,
}

/// How it went.
pub(crate) struct Outcome {
    pub stdout: Captured,
    pub stderr: Captured,
    pub exit_code: Option<i32>,
    pub timed_out: bool,
    pub cancelled: bool,
    pub duration_ms: u64,
    pub sandbox: Sandbox,
    pub sandbox_note: Option<String>,
    /// What the egress proxy refused (a command with the network).
    pub proxy_refused: Vec<String>,
    /// The limits it hit.
    pub limits_hit: Vec<Limit>,
}

/// One stream's capture, and whether the call has stopped listening.
#[derive(Default)]
struct Pipe {
    capture: Capture,
    closed: bool,
}

/// How the child is fenced in.
pub(crate) enum Fence {
    /// Inside bwrap's namespaces: bwrap, its arguments up to `--`, the
    /// files it reads by fd (the seccomp filter, `--seccomp FD`; the
    /// `/etc` files it copies, `--file FD`; their numbers are in `args`);
    /// with the network, where the egress proxy lets it go.
    Namespaces {
        bwrap: &'static Path,
        args: Vec<OsString>,
        files: Vec<std::fs::File>,
        egress: Option<Egress>,
    },
    /// Landlock only (no namespaces here), and why.
    Landlock { prepared: Prepared, why: String },
}

impl Fence {
    /// Whether the child's only way out is the egress proxy.
    pub(crate) fn has_proxy(&self) -> bool {
        matches!(
            self,
            Fence::Namespaces {
                egress: Some(_),
                ..
            }
        )
    }
}

/// The proxy's gate, and the egress it serves, once the command spawns.
type Gated = Option<(Pending, Egress)>;

/// The fenced command for `spec` as a `Command`, whose hooks take the
/// limits in the forked child (a server's, and any command under
/// Landlock; [`run`] starts bwrap without them): the program (inside
/// bwrap, or under the Landlock hook) with its arguments, cwd,
/// environment, stdin from `/dev/null`, stdout and stderr piped, a
/// process group of its own, and SIGKILL when the thread that starts it
/// ends. With the network in the namespaces: the egress proxy's gate
/// ([`proxy::Gate`]), to serve once spawned.
fn command(spec: Spec<'_>) -> Result<(Command, Status, Gated)> {
    let mut gate = None;
    let mut kept = Vec::new();
    let (mut cmd, status) = match spec.fence {
        Fence::Namespaces {
            bwrap,
            args,
            files,
            egress,
        } => {
            let mut cmd = Command::new(bwrap);
            // First: the hooks after it clear close-on-exec on bwrap's.
            #[cfg(target_os = "linux")]
            launch::inherit_nothing(&mut cmd);
            if let Some(egress) = egress {
                let made = proxy::Gate::new().map_err(|e| {
                    Error::new(
                        ErrorCode::Io,
                        format!("could not prepare the network proxy: {e}"),
                    )
                })?;
                cmd.args(made.bwrap_args());
                gate = Some((made.hand_to(&mut cmd), egress));
            }
            cmd.args(args).arg(spec.program);
            kept = files;
            (cmd, Status::Namespaces)
        }
        Fence::Landlock { prepared, why } => {
            let mut cmd = Command::new(spec.program);
            #[cfg(target_os = "linux")]
            launch::inherit_nothing(&mut cmd);
            cmd.arg0(spec.name);
            let status = install_sandbox(&mut cmd, prepared, why)?;
            #[cfg(target_os = "linux")]
            refuse_sockets(&mut cmd)?;
            (cmd, status)
        }
    };
    cmd.args(spec.args)
        .current_dir(spec.cwd)
        .env_clear()
        .envs(spec.env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    #[cfg(target_os = "linux")]
    die_with_caller(&mut cmd);
    #[cfg(target_os = "linux")]
    confine(&mut cmd, &spec.limits, spec.cgroups, kept)?;
    Ok((cmd, status, gate))
}

/// A fenced command for a program that serves over its stdin and stdout
/// (an MCP server): [`command`] with stdin piped too. The caller spawns
/// it from a thread that lives as long as the program should (see
/// `die_with_caller`) and kills its process group when done. The status
/// channel is kept until the server ends: under Landlock the child's hook
/// writes to it, and a closed one would kill the child (SIGPIPE). With
/// the network, the proxy serves it until dropped; a server has no panel,
/// so the proxy's log lines are dropped.
pub(crate) fn server_command(spec: Spec<'_>) -> Result<(Command, Status, Option<Proxy>)> {
    let (mut cmd, status, gate) = command(spec)?;
    cmd.stdin(Stdio::piped());
    let proxy = gate.map(|(pending, egress)| pending.serve(egress, Arc::new(|_: &str| {})));
    Ok((cmd, status, proxy))
}

/// A started command: its pid (also its process group), its output,
/// and the wait for its end.
struct Child {
    pid: rustix::process::Pid,
    /// The write end of its stdin, when it was piped.
    stdin: Option<std::fs::File>,
    stdout: OwnedFd,
    stderr: OwnedFd,
    wait: Wait,
}

/// Starts the command of `spec`: bwrap without a hook ([`launch`]), its
/// child confined before the program runs; under Landlock, the hooked
/// [`command`]. With the network, the proxy serves it. Its stdin is a
/// pipe when `piped_stdin`, else `/dev/null`.
fn start(
    spec: Spec<'_>,
    piped_stdin: bool,
    err: &Arc<Mutex<Pipe>>,
    shell: &ShellRun,
) -> Result<(Child, Status, Option<Proxy>)> {
    let name = spec.name;
    #[cfg(target_os = "linux")]
    if let Fence::Namespaces {
        bwrap,
        args,
        files,
        egress,
    } = spec.fence
    {
        let io = |e: std::io::Error| {
            Error::new(
                ErrorCode::Io,
                format!("could not prepare the sandbox's gate: {e}"),
            )
        };
        let gate = launch::Gate::new().map_err(io)?;
        let mut argv = gate.bwrap_args();
        argv.extend(args);
        argv.push(spec.program.into());
        argv.extend(spec.args.iter().map(OsString::from));
        let kept: Vec<_> = files.iter().map(AsFd::as_fd).chain(gate.ends()).collect();
        let entered = spec.cgroups.enter();
        let born_inside = entered.inside();
        let launched = launch::spawn(bwrap, &argv, spec.env, &kept, piped_stdin);
        drop(entered);
        drop(kept);
        drop(files);
        let launched = launched.map_err(|e| spawn_error(&e, name))?;
        let pid = launched.pid;
        let child = Child {
            pid,
            stdin: launched.stdin,
            stdout: launched.stdout.into(),
            stderr: launched.stderr.into(),
            wait: Box::new(move || launch::wait(pid)),
        };
        let confined = gate.opened().and_then(|opened| match opened {
            Some((sandbox, release)) => {
                launch::confine(sandbox, &spec.limits, spec.cgroups, born_inside)?;
                Ok(Some((sandbox, release)))
            }
            None => Ok(None),
        });
        let proxy = match confined {
            // Fail closed: the program never ran, and does not.
            Err(e) => {
                let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
                let _ = (child.wait)();
                return Err(Error::new(
                    ErrorCode::Io,
                    format!("could not put `{name}` in its limits: {e}"),
                ));
            }
            Ok(Some((sandbox, release))) => match egress {
                Some(egress) => Some(proxy::serve_inside(
                    sandbox,
                    release,
                    egress,
                    log_to(err, shell),
                )),
                None => {
                    // An error means the child is gone: nothing to release.
                    let _ = release.release();
                    None
                }
            },
            // bwrap could not make the sandbox: its error is the
            // command's stderr. Where bwrap was taken to work from a
            // probe kept by an earlier process, the next one probes again.
            Ok(None) => {
                super::namespace::bwrap_failed();
                None
            }
        };
        return Ok((child, Status::Namespaces, proxy));
    }
    let (mut cmd, status, gate) = command(spec)?;
    if piped_stdin {
        cmd.stdin(Stdio::piped());
    }
    let spawned = cmd.spawn();
    // Drops the parent's copy of the status socket held by the hook (and
    // bwrap's ends of the proxy's gate).
    drop(cmd);
    let mut spawned = spawned.map_err(|e| spawn_error(&e, name))?;
    let proxy = gate.map(|(pending, egress)| pending.serve(egress, log_to(err, shell)));
    let (stdout, stderr) = match (spawned.stdout.take(), spawned.stderr.take()) {
        (Some(stdout), Some(stderr)) => (stdout, stderr),
        _ => {
            return Err(Error::new(
                ErrorCode::Io,
                "the command's output was not piped",
            ))
        }
    };
    let child = Child {
        pid: rustix::process::Pid::from_child(&spawned),
        stdin: spawned
            .stdin
            .take()
            .map(|pipe| std::fs::File::from(OwnedFd::from(pipe))),
        stdout: stdout.into(),
        stderr: stderr.into(),
        wait: Box::new(move || spawned.wait()),
    };
    Ok((child, status, proxy))
}

/// Runs the program to its end, its timeout or its cancel.
pub(crate) fn run(mut spec: Spec<'_>, shell: &ShellRun) -> Result<Outcome> {
    let (name, timeout, cgroups) = (spec.name, spec.timeout, spec.cgroups);
    let held = spec.held.take();
    let input = spec.stdin.take();
    let mut look = spec.look.take();
    let out = Arc::new(Mutex::new(Pipe::default()));
    let err = Arc::new(Mutex::new(Pipe::default()));
    let started = Instant::now();
    let (child, status, proxy) = start(spec, input.is_some(), &err, shell)?;
    let (sandbox, sandbox_note) = status.finish();
    let pgid = child.pid;
    if let (Some(bytes), Some(mut pipe)) = (input, child.stdin) {
        // A program that never reads its stdin must not stall the run: the
        // write ends (EPIPE) when the last reader does.
        thread::spawn(move || {
            let _ = std::io::Write::write_all(&mut pipe, &bytes);
        });
    }
    if let Some(on_spawn) = &shell.on_spawn {
        on_spawn(pgid.as_raw_nonzero().get().unsigned_abs());
    }

    let (done_tx, done_rx) = mpsc::channel::<()>();
    let (exit_tx, exit_rx) = mpsc::channel::<std::io::Result<ExitStatus>>();
    let wait = child.wait;
    let exit = match rustix::process::pidfd_open(pgid, rustix::process::PidfdFlags::empty()) {
        Ok(pidfd) => Some((pidfd, wait, exit_tx)),
        // An older kernel: a thread waits.
        Err(_) => {
            thread::spawn(move || {
                let _ = exit_tx.send(wait());
            });
            None
        }
    };
    let pipes = [
        (child.stdout, Stream::Stdout, out.clone()),
        (child.stderr, Stream::Stderr, err.clone()),
    ];
    spawn_pump(pipes, exit, shell, done_tx);
    let readers = 1;

    let kill = || {
        // ESRCH (nothing left in the group) is the usual, harmless answer.
        let _ = rustix::process::kill_process_group(pgid, rustix::process::Signal::KILL);
    };
    let deadline = started + timeout;
    let mut timed_out = false;
    let mut cancelled = false;
    let mut next_look = Instant::now();
    let exit = loop {
        if shell.cancel.is_cancelled() {
            cancelled = true;
            kill();
            break exit_rx.recv().ok();
        }
        if let Some(look) = look.as_mut().filter(|_| Instant::now() >= next_look) {
            look();
            next_look = Instant::now() + LOOK_EVERY;
        }
        let now = Instant::now();
        if now >= deadline {
            timed_out = true;
            kill();
            break exit_rx.recv().ok();
        }
        match exit_rx.recv_timeout(TICK.min(deadline - now)) {
            Ok(status) => break Some(status),
            Err(RecvTimeoutError::Timeout) => continue,
            Err(RecvTimeoutError::Disconnected) => break None,
        }
    };
    // bwrap has ended, and with it every process of the sandbox (its pid
    // namespace ends with its first process): nothing holds the mount
    // points any more.
    drop(held);
    let exit = match exit {
        Some(Ok(status)) => status,
        Some(Err(e)) => {
            kill();
            return Err(Error::new(
                ErrorCode::Io,
                format!("could not wait for `{name}`: {e}"),
            ));
        }
        None => {
            kill();
            return Err(Error::new(ErrorCode::Io, format!("lost track of `{name}`")));
        }
    };

    let finished = wait_readers(&done_rx, readers, READ_GRACE);
    kill();
    if finished < readers {
        wait_readers(&done_rx, readers - finished, KILL_GRACE);
    }
    let proxy_refused = proxy.map(|p| p.refused()).unwrap_or_default();
    let stdout = close(&out);
    let stderr = close(&err);
    let mut limits_hit = cgroups.hit();
    if exit_signal(&exit) == Some(rustix::process::Signal::XFSZ.as_raw()) {
        limits_hit.push(Limit::FileSize);
    }
    Ok(Outcome {
        stdout,
        stderr,
        exit_code: exit.code(),
        timed_out,
        cancelled,
        duration_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
        sandbox,
        sandbox_note,
        proxy_refused,
        limits_hit,
    })
}

/// The proxy's log: each line joins the command's stderr, as if the
/// program had printed it (the panel shows it live, the result keeps it).
fn log_to(err: &Arc<Mutex<Pipe>>, shell: &ShellRun) -> proxy::Log {
    let (err, sink) = (err.clone(), shell.on_output.clone());
    Arc::new(move |line: &str| {
        let line = format!("{line}\n");
        let mut pipe = err.lock().unwrap_or_else(PoisonError::into_inner);
        if pipe.closed {
            return;
        }
        pipe.capture.push(line.as_bytes());
        if let Some(sink) = &sink {
            sink(Stream::Stderr, line.as_bytes());
        }
    })
}

/// The signal that ended the program, if one did.
fn exit_signal(status: &ExitStatus) -> Option<i32> {
    std::os::unix::process::ExitStatusExt::signal(status)
}

/// Waits for up to `count` readers to finish within `grace`.
fn wait_readers(done: &mpsc::Receiver<()>, count: usize, grace: Duration) -> usize {
    let until = Instant::now() + grace;
    let mut finished = 0;
    while finished < count {
        let left = until.saturating_duration_since(Instant::now());
        match done.recv_timeout(left) {
            Ok(()) => finished += 1,
            Err(_) => break,
        }
    }
    finished
}

/// Stops delivery from a reader and returns what it captured.
fn close(pipe: &Mutex<Pipe>) -> Captured {
    let mut pipe = pipe.lock().unwrap_or_else(PoisonError::into_inner);
    pipe.closed = true;
    pipe.capture.finish()
}

/// How the child is reaped.
type Wait = Box<dyn FnOnce() -> std::io::Result<ExitStatus> + Send>;

/// A pipe being read: its stream and where its chunks go.
type Source = (OwnedFd, Stream, Arc<Mutex<Pipe>>);

/// Starts the thread that reads both pipes until each ends (or the call
/// stops listening to it), then says it is done; given the child's pidfd,
/// it also reaps the child as soon as it ends and sends its status.
fn spawn_pump(
    pipes: [Source; 2],
    mut exit: Option<(OwnedFd, Wait, mpsc::Sender<std::io::Result<ExitStatus>>)>,
    shell: &ShellRun,
    done: mpsc::Sender<()>,
) {
    use rustix::event::{poll, PollFd, PollFlags};
    let sink = shell.on_output.clone();
    thread::spawn(move || {
        let mut open: Vec<(std::fs::File, Stream, Arc<Mutex<Pipe>>)> = pipes
            .into_iter()
            .map(|(fd, stream, pipe)| (fd.into(), stream, pipe))
            .collect();
        let mut buf = vec![0u8; CHUNK];
        while !open.is_empty() || exit.is_some() {
            let mut fds: Vec<PollFd<'_>> = open
                .iter()
                .map(|(file, _, _)| PollFd::new(file, PollFlags::IN))
                .collect();
            if let Some((pidfd, _, _)) = &exit {
                fds.push(PollFd::new(pidfd, PollFlags::IN));
            }
            match poll(&mut fds, None) {
                Ok(_) => {}
                Err(rustix::io::Errno::INTR) => continue,
                Err(_) => {
                    // Cannot happen with these descriptors; wait plainly.
                    if let Some((_, wait, tx)) = exit.take() {
                        let _ = tx.send(wait());
                    }
                    break;
                }
            }
            let ready: Vec<bool> = fds.iter().map(|fd| !fd.revents().is_empty()).collect();
            drop(fds);
            if ready.get(open.len()).copied().unwrap_or(false) {
                if let Some((_, wait, tx)) = exit.take() {
                    let _ = tx.send(wait());
                }
            }
            for at in (0..open.len()).rev() {
                if ready[at] && !read_chunk(&mut open[at], &mut buf, sink.as_ref()) {
                    open.remove(at);
                }
            }
        }
        let _ = done.send(());
    });
}

/// Reads what a ready pipe has, keeps it and hands it to the sink; false
/// once the pipe has ended or the call no longer listens to it.
fn read_chunk(
    (file, stream, pipe): &mut (std::fs::File, Stream, Arc<Mutex<Pipe>>),
    buf: &mut [u8],
    sink: Option<&super::OutputSink>,
) -> bool {
    let n = match file.read(buf) {
        Ok(0) => return false,
        Ok(n) => n,
        Err(e) if e.kind() == std::io::ErrorKind::Interrupted => return true,
        Err(_) => return false,
    };
    let mut pipe = pipe.lock().unwrap_or_else(PoisonError::into_inner);
    if pipe.closed {
        return false;
    }
    pipe.capture.push(&buf[..n]);
    // Under the lock, so no chunk is delivered after the call closed the
    // stream and returned.
    if let Some(sink) = sink {
        sink(*stream, &buf[..n]);
    }
    true
}

fn spawn_error(e: &std::io::Error, name: &str) -> Error {
    match e.kind() {
        std::io::ErrorKind::NotFound => Error::new(
            ErrorCode::NotFound,
            format!("`{name}` could not be started: {e}"),
        )
        .hint(format!("Check that `{name}` is installed."))
        .detail("command", name),
        std::io::ErrorKind::PermissionDenied => Error::new(
            ErrorCode::PermissionDenied,
            format!("the system refused to start `{name}`: {e}"),
        )
        .detail("command", name),
        _ => Error::new(ErrorCode::Io, format!("`{name}` could not be started: {e}"))
            .detail("command", name),
    }
}
