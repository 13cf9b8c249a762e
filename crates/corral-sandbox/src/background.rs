//! Background commands: `exec_shell` with `background: true` starts the
//! command and returns its run id at once; `command_output` reads what it
//! printed since a byte offset, `stop_command` stops it. The caller (the
//! app, per open project) owns one [`Background`]; closing the project or
//! the app stops every command in it. A command in the background is the
//! same sandboxed run as any other (same policy, profile and time limit).

use super::forward::Forwarder;
use super::ports;
pub use super::ports::ListeningPort;
use super::{CancelToken, ExecShellInput, ExecShellOutput, ShellRun, Stream};
use corral_fs::ProjectRoot;
use corral_fs::{Error, ErrorCode, Result};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

/// Most commands running at once in one project.
pub const MAX_BACKGROUND: usize = 8;
/// Bytes of a command's output kept (the newest; older ones are dropped
/// and counted).
pub const KEEP_BYTES: usize = 1024 * 1024;
/// Most bytes one `command_output` returns.
pub const READ_BYTES: usize = 64 * 1024;
/// Finished commands remembered, newest kept.
const KEEP_FINISHED: usize = 32;

/// What `exec_shell` returns for a command started in the background.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema, ts_rs::TS)]
pub struct Started {
    /// Read its output with `command_output`, stop it with `stop_command`.
    pub run_id: String,
    pub command: String,
    pub args: Vec<String>,
}

/// How often a running command's ports are looked up.
const PORTS_EVERY: Duration = Duration::from_millis(300);

/// One look at a background command.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema, ts_rs::TS)]
pub struct CommandOutput {
    pub run_id: String,
    pub command: String,
    pub args: Vec<String>,
    /// stdout and stderr as they arrived, from `since_byte` (lossy UTF-8,
    /// at most 64 KiB).
    pub output: String,
    /// Ask from here next time.
    #[ts(type = "number")]
    pub next_byte: u64,
    /// Bytes before this offset were dropped (only the newest 1 MiB is kept).
    #[ts(type = "number")]
    pub first_kept_byte: u64,
    pub running: bool,
    /// Set once it ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub exit_code: Option<i32>,
    /// It was stopped (by `stop_command`, the project closing, or its time limit).
    pub stopped: bool,
    /// Why it could not run or ended with an error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub error: Option<String>,
    /// Once it ended, what the sandbox says of the run, as a command's
    /// result says it (a file another program runs by itself that it
    /// made, removed; a limit it hit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub sandbox_note: Option<String>,
    #[ts(type = "number")]
    pub elapsed_ms: u64,
    /// The ports it listens on while it runs.
    #[serde(default)]
    pub ports: Vec<ListeningPort>,
}

struct Run {
    command: String,
    args: Vec<String>,
    cancel: CancelToken,
    started: Instant,
    /// The process started (0 until it has).
    pid: AtomicU32,
    state: Mutex<RunState>,
}

#[derive(Default)]
struct RunState {
    output: Vec<u8>,
    /// Bytes dropped from the front of `output`.
    dropped: u64,
    ended: Option<Instant>,
    result: Option<Result<ExecShellOutput>>,
    ports: Vec<ListeningPort>,
}

/// The background commands of one project.
#[derive(Default)]
pub struct Background {
    runs: Mutex<HashMap<String, Arc<Run>>>,
    /// Run ids in start order, to forget the oldest finished ones.
    order: Mutex<Vec<String>>,
    next: AtomicU64,
    /// Held from the count to the insert, so that starts at the same time
    /// cannot pass the limit together.
    starting: Mutex<()>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Run {
    fn running(&self) -> bool {
        lock(&self.state).result.is_none()
    }

    fn push(&self, bytes: &[u8]) {
        let mut state = lock(&self.state);
        state.output.extend_from_slice(bytes);
        if state.output.len() > KEEP_BYTES {
            let cut = state.output.len() - KEEP_BYTES;
            state.output.drain(..cut);
            state.dropped += cut as u64;
        }
    }
}

impl Background {
    /// How many commands are running.
    pub fn running(&self) -> usize {
        lock(&self.runs).values().filter(|r| r.running()).count()
    }

    /// Starts `input` in the background in `root` (already allowed by the
    /// policy) and returns at once. At most [`MAX_BACKGROUND`] run at once.
    pub fn start(
        &self,
        root: &ProjectRoot,
        input: &ExecShellInput,
        run: &ShellRun,
    ) -> Result<Started> {
        let _starting = lock(&self.starting);
        if self.running() >= MAX_BACKGROUND {
            return Err(Error::new(
                ErrorCode::InvalidInput,
                format!("{MAX_BACKGROUND} commands are already running in the background"),
            )
            .hint("Stop one with stop_command (or wait for one to finish) first."));
        }
        // Checks the call now, so a refusal is this call's error.
        super::check_with(root, input, run)?;
        let root = ProjectRoot::open(root.path())?;
        let run_id = format!("bg-{}", self.next.fetch_add(1, Ordering::SeqCst) + 1);
        let entry = Arc::new(Run {
            command: input.command.clone(),
            args: input.args.clone(),
            // The caller's switch, not a new one: what the caller tied to
            // it (the window's question about a domain) ends when the
            // command is stopped, long after this call returned.
            cancel: run.cancel.clone(),
            started: Instant::now(),
            pid: AtomicU32::new(0),
            state: Mutex::new(RunState::default()),
        });
        let sink_entry = entry.clone();
        let spawn_entry = entry.clone();
        // The output is kept here and read with `command_output`; the
        // caller's sink belongs to the call, which returns now.
        let shell = ShellRun {
            cancel: entry.cancel.clone(),
            on_output: Some(Arc::new(move |_stream: Stream, bytes: &[u8]| {
                sink_entry.push(bytes);
            })),
            network: run.network,
            egress: run.egress.clone(),
            extra_programs: run.extra_programs.clone(),
            rules: Vec::new(),
            background: None,
            on_spawn: Some(Arc::new(move |pid| {
                spawn_entry.pid.store(pid, Ordering::SeqCst);
            })),
            limits: run.limits,
        };
        let started = Started {
            run_id: run_id.clone(),
            command: input.command.clone(),
            args: input.args.clone(),
        };
        let mut input = input.clone();
        input.timeout_secs = Some(input.timeout_secs.unwrap_or(super::MAX_TIMEOUT_SECS));
        let thread_entry = entry.clone();
        std::thread::Builder::new()
            .name(format!("corral-{run_id}"))
            .spawn(move || {
                let result = super::exec(&root, &input, &shell, true);
                let mut state = lock(&thread_entry.state);
                state.ended = Some(Instant::now());
                state.result = Some(result);
            })
            .map_err(|e| Error::new(ErrorCode::Io, format!("could not start a thread: {e}")))?;
        let watched = entry.clone();
        // Best effort: without it the ports are not listed.
        let _ = std::thread::Builder::new()
            .name(format!("corral-{run_id}-ports"))
            .spawn(move || watch_ports(&watched));
        lock(&self.runs).insert(run_id.clone(), entry);
        self.remember(&run_id);
        Ok(started)
    }

    fn remember(&self, run_id: &str) {
        let mut order = lock(&self.order);
        order.push(run_id.to_string());
        let mut runs = lock(&self.runs);
        while order.len() > KEEP_FINISHED + MAX_BACKGROUND {
            let Some(at) = order
                .iter()
                .position(|id| runs.get(id).is_none_or(|r| !r.running()))
            else {
                break;
            };
            let id = order.remove(at);
            runs.remove(&id);
        }
    }

    fn get(&self, run_id: &str) -> Result<Arc<Run>> {
        lock(&self.runs).get(run_id).cloned().ok_or_else(|| {
            Error::new(
                ErrorCode::NotFound,
                format!("there is no background command `{run_id}`"),
            )
            .hint("Use the run_id exec_shell returned with background: true.")
            .detail("run_id", run_id)
        })
    }

    /// What the command printed from `since` on, and where it stands.
    pub fn output(&self, run_id: &str, since: u64) -> Result<CommandOutput> {
        let run = self.get(run_id)?;
        let state = lock(&run.state);
        let end = state.dropped + state.output.len() as u64;
        let from = since.clamp(state.dropped, end);
        let start = (from - state.dropped) as usize;
        let mut stop = (start + READ_BYTES).min(state.output.len());
        // Never cut a character in two (a lossy decoder would mangle it).
        while stop < state.output.len() && stop > start && (state.output[stop] & 0xC0) == 0x80 {
            stop -= 1;
        }
        let git = run.command == "git";
        if git && stop < state.output.len() {
            // Whole lines only, so no URL is cut before its credential is
            // masked.
            if let Some(at) = state.output[start..stop].iter().rposition(|b| *b == b'\n') {
                stop = start + at + 1;
            }
        }
        let output = String::from_utf8_lossy(&state.output[start..stop]).into_owned();
        // git prints remote URLs and config values: a token never reaches
        // the model (`credentials`).
        let output = if git {
            crate::credentials::mask(&output).into_owned()
        } else {
            output
        };
        let (exit_code, stopped, error) = match &state.result {
            None => (None, false, None),
            Some(Ok(out)) => (
                out.exit_code,
                out.timed_out || run.cancel.is_cancelled(),
                None,
            ),
            Some(Err(e)) => (
                None,
                e.code == ErrorCode::Cancelled,
                (e.code != ErrorCode::Cancelled).then(|| e.message.clone()),
            ),
        };
        let sandbox_note = match &state.result {
            Some(Ok(out)) => out.sandbox_note.clone(),
            Some(Err(e)) => e
                .details
                .get("sandbox_note")
                .and_then(|n| n.as_str())
                .map(str::to_string),
            None => None,
        };
        let elapsed = state.ended.unwrap_or_else(Instant::now) - run.started;
        Ok(CommandOutput {
            run_id: run_id.to_string(),
            command: run.command.clone(),
            args: run.args.clone(),
            output,
            next_byte: state.dropped + stop as u64,
            first_kept_byte: state.dropped,
            running: state.result.is_none(),
            exit_code,
            stopped,
            error,
            sandbox_note,
            elapsed_ms: u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX),
            ports: state.ports.clone(),
        })
    }

    /// Stops a command (its whole process group) and waits up to 3 s for
    /// it to end. Stopping one that ended is not an error.
    pub fn stop(&self, run_id: &str) -> Result<CommandOutput> {
        let run = self.get(run_id)?;
        run.cancel.cancel();
        wait(&[run], Duration::from_secs(3));
        self.output(run_id, u64::MAX)
    }

    /// Every command, newest first (the window's Processes panel).
    pub fn list(&self) -> Vec<CommandOutput> {
        let order = lock(&self.order).clone();
        order
            .iter()
            .rev()
            .filter_map(|id| self.output(id, u64::MAX).ok())
            .collect()
    }

    /// Stops every command and waits up to `wait` for them; returns how
    /// many still run.
    pub fn stop_all(&self, wait_for: Duration) -> usize {
        let runs: Vec<Arc<Run>> = lock(&self.runs).values().cloned().collect();
        for run in &runs {
            run.cancel.cancel();
        }
        wait(&runs, wait_for);
        runs.iter().filter(|r| r.running()).count()
    }
}

/// Looks up the ports the command listens on while it runs, forwarding
/// them to the host when it has a network namespace of its own; the
/// forwards close when it ends.
fn watch_ports(run: &Run) {
    let mut forwarder = Forwarder::default();
    while run.running() {
        let pid = run.pid.load(Ordering::SeqCst);
        if pid != 0 {
            let found = ports::listening(pid);
            let listed = forwarder.sync(&found);
            let mut state = lock(&run.state);
            if state.result.is_none() {
                state.ports = listed;
            }
        }
        std::thread::sleep(PORTS_EVERY);
    }
    drop(forwarder);
    lock(&run.state).ports.clear();
}

fn wait(runs: &[Arc<Run>], wait_for: Duration) {
    let deadline = Instant::now() + wait_for;
    while runs.iter().any(|r| r.running()) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
}

impl Drop for Background {
    /// A project's commands end with it.
    fn drop(&mut self) {
        self.stop_all(Duration::from_secs(3));
    }
}
