//! One running server: its process, the JSON-RPC messages both ways, and
//! what it published.
//!
//! Nothing here blocks a caller on the server: messages to it go through
//! a writer thread (a server that stops reading fills its pipe, not our
//! call), answers and diagnostics arrive on a reader thread and wake the
//! callers waiting for them, and every wait has a deadline. The process
//! is spawned by a thread that lives as long as it does (the sandbox
//! kills a server whose spawning thread ends) and that marks the link
//! dead when it exits, waking every waiter.

use lsp_server::{Message, Notification, Request, RequestId, Response, ResponseError};
use serde_json::Value;
use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, ChildStdout};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{mpsc, Arc, Condvar, Mutex, MutexGuard};
use std::thread;
use std::time::{Duration, Instant};

/// How much of a server's stderr is kept to explain its end.
const STDERR_TAIL: usize = 2_000;

/// Where the link is in its life.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Phase {
    /// Spawned; `initialize` not answered yet.
    Starting,
    Ready,
    /// Ended, and why.
    Dead(String),
}

/// A server's latest diagnostics for one document.
#[derive(Debug, Clone)]
pub(crate) struct Published {
    /// The document version they are for, when the server says.
    pub version: Option<i32>,
    /// Order of arrival across the link.
    pub seq: u64,
    pub items: Vec<lsp_types::Diagnostic>,
}

#[derive(Default)]
struct State {
    phase: Option<Phase>,
    outbox: Option<mpsc::Sender<Message>>,
    pending: HashMap<RequestId, mpsc::Sender<Result<Value, ResponseError>>>,
    published: HashMap<String, Published>,
    /// What the server said it can do, in its `initialize` answer.
    capabilities: Value,
    /// The methods it registered later (`client/registerCapability`).
    registered: Vec<String>,
    seq: u64,
    pgid: Option<rustix::process::Pid>,
    stderr: String,
}

/// The shared side of one server process.
pub(crate) struct Link {
    name: String,
    state: Mutex<State>,
    changed: Condvar,
    next_id: AtomicI32,
}

/// Why a wait ended without its answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Missed {
    /// The deadline passed.
    Timeout,
    /// The server ended, and why.
    Dead(String),
    /// The server answered with an error (it lives on).
    Refused { code: i32, message: String },
}

/// The JSON-RPC code of a method the server does not have.
pub(crate) const METHOD_NOT_FOUND: i32 = -32601;

impl Link {
    /// A link whose process is being started by [`Link::run`].
    pub(crate) fn new(name: String) -> Arc<Link> {
        Arc::new(Link {
            name,
            state: Mutex::new(State {
                phase: Some(Phase::Starting),
                ..State::default()
            }),
            changed: Condvar::new(),
            next_id: AtomicI32::new(1),
        })
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while holding the lock leaves plain data behind; go on.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn phase(&self) -> Phase {
        self.lock().phase.clone().unwrap_or(Phase::Starting)
    }

    /// The process group, for stopping it and for tests that kill it.
    pub(crate) fn pgid(&self) -> Option<rustix::process::Pid> {
        self.lock().pgid
    }

    /// Spawns the process from the calling thread and serves it until it
    /// ends; the thread must be one of its own. `init` runs once the pipes
    /// are connected (it sends `initialize`).
    pub(crate) fn run(
        self: &Arc<Link>,
        mut command: std::process::Command,
        init: impl FnOnce(Arc<Link>) + Send + 'static,
    ) {
        use std::os::unix::process::CommandExt;
        command
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .process_group(0);
        let mut child: Child = match command.spawn() {
            Ok(child) => child,
            Err(e) => return self.end(format!("`{}` could not be started: {e}", self.name)),
        };
        drop(command);
        let (Some(stdin), Some(stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            let _ = child.kill();
            let _ = child.wait();
            return self.end(format!("`{}`'s pipes could not be opened", self.name));
        };
        let (tx, rx) = mpsc::channel();
        {
            let mut state = self.lock();
            state.outbox = Some(tx);
            state.pgid = i32::try_from(child.id())
                .ok()
                .and_then(rustix::process::Pid::from_raw);
        }
        thread::spawn(move || write_all(stdin, rx));
        let reader = {
            let link = self.clone();
            thread::spawn(move || link.read_all(stdout))
        };
        let err_reader = {
            let link = self.clone();
            thread::spawn(move || link.keep_stderr(stderr))
        };
        {
            let link = self.clone();
            thread::spawn(move || init(link));
        }
        let status = child.wait();
        // The reader ends at EOF; stderr too. Their end is what the
        // callers need, not the exit status alone.
        let _ = reader.join();
        let _ = err_reader.join();
        let how = match status {
            Ok(status) => format!("`{}` exited ({status})", self.name),
            Err(e) => format!("`{}` was lost: {e}", self.name),
        };
        let tail = self.lock().stderr.trim().to_string();
        let why = if tail.is_empty() {
            how
        } else {
            format!("{how}: {}", tail.lines().last().unwrap_or(&tail))
        };
        self.end(why);
    }

    /// Marks the link dead: pending requests fail, waiters wake.
    pub(crate) fn end(&self, why: String) {
        let mut state = self.lock();
        if !matches!(state.phase, Some(Phase::Dead(_))) {
            state.phase = Some(Phase::Dead(why));
        }
        state.outbox = None;
        state.pending.clear();
        drop(state);
        self.changed.notify_all();
    }

    /// Marks the link ready, with what the server said it can do.
    pub(crate) fn set_ready(&self, capabilities: Value) {
        let mut state = self.lock();
        state.capabilities = capabilities;
        if state.phase == Some(Phase::Starting) {
            state.phase = Some(Phase::Ready);
        }
        drop(state);
        self.changed.notify_all();
    }

    /// Kills the process group (the reader then sees EOF and ends it).
    pub(crate) fn kill(&self, why: &str) {
        if let Some(pgid) = self.pgid() {
            let _ = rustix::process::kill_process_group(pgid, rustix::process::Signal::KILL);
        }
        self.end(why.to_string());
    }

    fn send(&self, message: Message) -> Result<(), Missed> {
        let state = self.lock();
        match (&state.phase, &state.outbox) {
            (Some(Phase::Dead(why)), _) => Err(Missed::Dead(why.clone())),
            (_, Some(outbox)) => outbox
                .send(message)
                .map_err(|_| Missed::Dead(format!("`{}` stopped reading", self.name))),
            (_, None) => Err(Missed::Dead(format!("`{}` is not running", self.name))),
        }
    }

    /// Sends a notification.
    pub(crate) fn notify(&self, method: &str, params: impl serde::Serialize) -> Result<(), Missed> {
        self.send(Message::Notification(Notification::new(
            method.to_string(),
            params,
        )))
    }

    /// Sends a request and waits for its answer until `deadline`.
    pub(crate) fn request(
        &self,
        method: &str,
        params: impl serde::Serialize,
        deadline: Instant,
    ) -> Result<Value, Missed> {
        let id = RequestId::from(self.next_id.fetch_add(1, Ordering::Relaxed));
        let (tx, rx) = mpsc::channel();
        self.lock().pending.insert(id.clone(), tx);
        let sent = self.send(Message::Request(Request::new(
            id.clone(),
            method.to_string(),
            params,
        )));
        if let Err(missed) = sent {
            self.lock().pending.remove(&id);
            return Err(missed);
        }
        let wait = deadline.saturating_duration_since(Instant::now());
        let answer = rx.recv_timeout(wait);
        self.lock().pending.remove(&id);
        match answer {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(error)) => Err(Missed::Refused {
                code: error.code,
                message: format!("`{}` refused {method}: {}", self.name, error.message),
            }),
            Err(mpsc::RecvTimeoutError::Timeout) => {
                // The server may still be working; tell it to stop.
                let _ = self.notify("$/cancelRequest", serde_json::json!({ "id": id }));
                Err(Missed::Timeout)
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => Err(Missed::Dead(self.why_dead())),
        }
    }

    /// The server's capabilities (`null` before it is ready).
    pub(crate) fn capabilities(&self) -> Value {
        self.lock().capabilities.clone()
    }

    /// Whether the server registered `method` after it started.
    pub(crate) fn registered(&self, method: &str) -> bool {
        self.lock().registered.iter().any(|m| m == method)
    }

    fn why_dead(&self) -> String {
        match self.phase() {
            Phase::Dead(why) => why,
            _ => format!("`{}` stopped", self.name),
        }
    }

    /// Waits until the server answered `initialize`, or ended, or the
    /// deadline.
    pub(crate) fn wait_ready(&self, deadline: Instant) -> Result<(), Missed> {
        let mut state = self.lock();
        loop {
            match &state.phase {
                Some(Phase::Ready) => return Ok(()),
                Some(Phase::Dead(why)) => return Err(Missed::Dead(why.clone())),
                _ => {}
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(Missed::Timeout);
            }
            state = self
                .changed
                .wait_timeout(state, left)
                .map(|(s, _)| s)
                .unwrap_or_else(|e| e.into_inner().0);
        }
    }

    /// The arrival counter: diagnostics published after this moment have
    /// a higher `seq`.
    pub(crate) fn seq(&self) -> u64 {
        self.lock().seq
    }

    /// The latest diagnostics of `uri`, if any.
    pub(crate) fn published(&self, uri: &str) -> Option<Published> {
        self.lock().published.get(uri).cloned()
    }

    pub(crate) fn forget(&self, uri: &str) {
        self.lock().published.remove(uri);
    }

    /// Waits for diagnostics of `uri` that arrived after `after` and are
    /// not for a version older than `version`; then, within the deadline,
    /// a short quiet spell (servers publish a file's syntax and semantic
    /// errors one after the other).
    pub(crate) fn wait_published(
        &self,
        uri: &str,
        after: u64,
        version: i32,
        settle: Duration,
        deadline: Instant,
    ) -> Result<Published, Missed> {
        let fresh = |p: &Published| p.seq > after && p.version.is_none_or(|v| v >= version);
        let mut state = self.lock();
        let mut found: Option<(u64, Instant)> = None;
        loop {
            if let Some(Phase::Dead(why)) = &state.phase {
                return Err(Missed::Dead(why.clone()));
            }
            let now = Instant::now();
            match state.published.get(uri).filter(|p| fresh(p)) {
                Some(p) => match found {
                    Some((seq, quiet_until)) if seq == p.seq && now >= quiet_until => {
                        return Ok(p.clone())
                    }
                    Some((seq, _)) if seq == p.seq => {}
                    _ => found = Some((p.seq, (now + settle).min(deadline))),
                },
                None if now >= deadline => return Err(Missed::Timeout),
                None => {}
            }
            if now >= deadline {
                if let Some(p) = state.published.get(uri).filter(|p| fresh(p)) {
                    return Ok(p.clone());
                }
                return Err(Missed::Timeout);
            }
            let until = found.map(|(_, q)| q).unwrap_or(deadline).min(deadline);
            let left = until
                .saturating_duration_since(now)
                .max(Duration::from_millis(1));
            state = self
                .changed
                .wait_timeout(state, left)
                .map(|(s, _)| s)
                .unwrap_or_else(|e| e.into_inner().0);
        }
    }

    fn read_all(&self, stdout: ChildStdout) {
        let mut reader = BufReader::new(stdout);
        loop {
            match crate::frame::read(&mut reader) {
                Ok(Some(message)) => self.receive(message),
                Ok(None) => return,
                Err(e) => {
                    // A server that breaks the framing is of no more use.
                    self.kill(&format!("`{}` broke the protocol: {e}", self.name));
                    drain(&mut reader);
                    return;
                }
            }
        }
    }

    fn receive(&self, message: Message) {
        match message {
            Message::Response(Response { id, result, error }) => {
                let answer = match error {
                    Some(error) => Err(error),
                    None => Ok(result.unwrap_or(Value::Null)),
                };
                if let Some(tx) = self.lock().pending.remove(&id) {
                    let _ = tx.send(answer);
                }
            }
            Message::Notification(n) if n.method == "textDocument/publishDiagnostics" => {
                let Ok(params) =
                    serde_json::from_value::<lsp_types::PublishDiagnosticsParams>(n.params)
                else {
                    return;
                };
                let mut state = self.lock();
                state.seq += 1;
                let seq = state.seq;
                state.published.insert(
                    crate::key_of(params.uri.as_str()),
                    Published {
                        version: params.version,
                        seq,
                        items: params.diagnostics,
                    },
                );
                drop(state);
                self.changed.notify_all();
            }
            Message::Notification(_) => {}
            Message::Request(request) => {
                if request.method == "client/registerCapability" {
                    let methods = request.params["registrations"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter_map(|r| r["method"].as_str().map(str::to_string));
                    self.lock().registered.extend(methods);
                }
                let _ = self.send(Message::Response(answer_server(request)));
            }
        }
    }

    fn keep_stderr(&self, mut stderr: impl Read) {
        let mut buf = [0u8; 4096];
        while let Ok(n @ 1..) = stderr.read(&mut buf) {
            let mut state = self.lock();
            state.stderr.push_str(&String::from_utf8_lossy(&buf[..n]));
            if state.stderr.len() > STDERR_TAIL * 2 {
                let cut = state.stderr.len() - STDERR_TAIL;
                let cut = (cut..state.stderr.len())
                    .find(|&i| state.stderr.is_char_boundary(i))
                    .unwrap_or(0);
                state.stderr.drain(..cut);
            }
        }
    }
}

/// What the client answers a server's own requests: the settings it asks
/// for are the servers' defaults (null), and the rest is acknowledged.
fn answer_server(request: Request) -> Response {
    let result = match request.method.as_str() {
        "workspace/configuration" => {
            let items = request
                .params
                .get("items")
                .and_then(Value::as_array)
                .map_or(0, Vec::len);
            Value::Array(vec![Value::Null; items])
        }
        "workspace/workspaceFolders" => Value::Null,
        _ => Value::Null,
    };
    Response::new_ok(request.id, result)
}

fn write_all(stdin: ChildStdin, rx: mpsc::Receiver<Message>) {
    let mut out = std::io::BufWriter::new(stdin);
    for message in rx {
        if message.write(&mut out).is_err() || out.flush().is_err() {
            return;
        }
    }
}

fn drain(reader: &mut impl BufRead) {
    let mut sink = [0u8; 8192];
    while let Ok(1..) = reader.read(&mut sink) {}
}
