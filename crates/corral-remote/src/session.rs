//! A project's session kept open on the remote: one ssh session (inside
//! the multiplexed connection) running `corral-cli serve` there, spoken to
//! one JSON object a line (docs/remote.md). Every command of the app's
//! port for the project — checking and running calls, grants, cancel —
//! goes over it, and a command's output comes back as it arrives. The
//! questions serve asks of its own accord (a domain off the egress
//! allowlist) reach the listener the caller set.
//!
//! A lost connection is reported, never hidden: every call waiting on it
//! fails with an `io` error, retryable, saying it was interrupted (the
//! remote's serve saw its stdin close and cancelled what was running, so
//! nothing goes on there unseen). The next command connects anew, to a
//! new session there: its tickets and grants start empty.

use crate::forwards::{Forwards, Sent};
use crate::questions::{Listener, OnQuestion, Questions};
use crate::{connection_error, failed, install, missing, spawn_cli, Remote, MISSING};
use corral_protocol::{Error, ErrorCode};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, ChildStdout, Output};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};

/// How much of ssh's stderr is kept, for the error of a lost connection.
const SAID_KEPT: usize = 4096;
/// How long a Stop waits for the engine's `run` to end once its container
/// was killed.
const STOP_WAIT: Duration = Duration::from_secs(10);

/// A session on a remote project.
pub struct RemoteSession {
    remote: Remote,
    /// The words after `serve --root PATH` (its mode, its folders).
    serve: Vec<String>,
    /// This machine's corral-cli, copied there when missing: the user
    /// agreed. `None`: a missing one is an `approval_required` error.
    copy: Option<PathBuf>,
    link: Mutex<Option<Arc<Link>>>,
    /// The background commands' ports forwarded here.
    forwards: Forwards,
    /// Requests every new connection is given first.
    kept: Mutex<Vec<(String, Value)>>,
    /// Hears serve's questions, once set.
    listener: Listener,
    connecting: tokio::sync::Mutex<()>,
}

/// One live ssh session running serve.
struct Link {
    stdin: Mutex<ChildStdin>,
    shared: Arc<Shared>,
    next: AtomicU64,
}

/// What the reader thread and the callers share.
struct Shared {
    /// The requests waiting, by id; `None` once the connection is gone.
    pending: Mutex<Option<HashMap<u64, mpsc::UnboundedSender<Message>>>>,
    /// The end of ssh's stderr.
    said: Mutex<Vec<u8>>,
    /// serve's questions on this link.
    questions: Questions,
    /// ssh (or the engine's `run`) has exited: set once, by the reader.
    ended: (Mutex<bool>, std::sync::Condvar),
}

/// A request that could not be sent: its link had ended.
struct Unsent;

/// What comes back for a request: events, then its answer.
enum Message {
    Event(Value),
    Answer(Result<Value, Error>),
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl RemoteSession {
    /// Opens `remote`'s folder there (`serve --root PATH` and `serve`'s
    /// own words); `copy`: the binary to put there when that version is
    /// missing, as the user agreed. Blocks until the remote said it is
    /// ready, or why not: at most twice the remote's `connect_timeout`
    /// (ssh's own limit on connecting is the other half), then a
    /// retryable `io` error with `details.timed_out`.
    pub fn open(
        remote: Remote,
        serve: Vec<String>,
        copy: Option<PathBuf>,
    ) -> Result<RemoteSession, Error> {
        let listener = Listener::default();
        let link = connect(&remote, &serve, copy.as_ref(), &listener)?;
        Ok(RemoteSession {
            remote,
            serve,
            copy,
            link: Mutex::new(Some(link)),
            forwards: Forwards::default(),
            kept: Mutex::default(),
            listener,
            connecting: tokio::sync::Mutex::default(),
        })
    }

    /// From now on, serve asks `listener` about a domain off the egress
    /// allowlist that a command of a conversation meets (the answer goes
    /// back with `answer_domain {id, allow}`), on every new connection
    /// too. Without a listener, serve asks nothing and refuses such a
    /// domain at once. A question still open when the connection drops
    /// is closed: serve refused it as its command stopped.
    pub async fn listen_questions(&self, listener: OnQuestion) -> Result<(), Error> {
        *lock(&self.listener) = Some(listener);
        self.invoke_kept("domain_questions", json!({}))
            .await
            .map(drop)
    }

    /// Kills the container serve runs in ([`Remote::stop_container`]) and
    /// lets its link go at once: the next call connects anew, in a new
    /// container, rather than writing to the one ending.
    pub fn stop_container(&self) -> Result<(), Error> {
        self.remote.stop_container()?;
        if let Some(link) = lock(&self.link).take() {
            link.close();
            // The engine's `run` ends as it removes the killed container
            // (`--rm`): until then a new one of the same name could be
            // taken for it, or removed with it.
            link.wait_ended(STOP_WAIT);
        }
        Ok(())
    }

    /// The remote folder.
    pub fn remote(&self) -> &Remote {
        &self.remote
    }

    /// Runs `command` there with `args`; `on_event` receives each chunk
    /// of a command's output (`{"stream", "data"}`) as it arrives.
    pub async fn invoke(
        &self,
        command: &str,
        args: Value,
        on_event: Option<&(dyn Fn(Value) + Sync)>,
    ) -> Result<Value, Error> {
        // What the answer may say about this side's background commands.
        let sent = Sent::of(command, &args);
        let link = self.link().await?;
        let mut answer = match self.request(&link, command, args.clone(), on_event).await {
            Ok(answer) => answer?,
            // It never left: the connection had just ended. It did nothing
            // there, so it goes once more, on a new connection.
            Err(Unsent) => {
                let link = self.link().await?;
                self.request(&link, command, args, on_event)
                    .await
                    .map_err(|Unsent| self.interrupted(&link, command))??
            }
        };
        // A background command's ports are reached here: those of the
        // commands this side started, looked at by their run ids.
        self.forwards
            .rewrite(&self.remote, command, sent, &mut answer);
        Ok(answer)
    }

    /// [`RemoteSession::invoke`], and again on every new connection
    /// before anything else: what the session must hold whichever serve
    /// answers (the user's MCP servers, the user's settings). A command
    /// kept again replaces what it kept before.
    pub async fn invoke_kept(&self, command: &str, args: Value) -> Result<Value, Error> {
        let answer = self.invoke(command, args.clone(), None).await?;
        let mut kept = lock(&self.kept);
        kept.retain(|(earlier, _)| earlier != command);
        kept.push((command.to_string(), args));
        Ok(answer)
    }

    /// Sends `command` on `link` and waits for its answer; [`Unsent`] when
    /// it could not be sent (the link had ended).
    async fn request(
        &self,
        link: &Link,
        command: &str,
        args: Value,
        on_event: Option<&(dyn Fn(Value) + Sync)>,
    ) -> Result<Result<Value, Error>, Unsent> {
        let (id, mut received) = link.register().ok_or(Unsent)?;
        let request = json!({
            "id": id,
            "command": command,
            "args": args,
            "output": on_event.is_some(),
        });
        let written = {
            let mut stdin = lock(&link.stdin);
            writeln!(stdin, "{request}").and_then(|()| stdin.flush())
        };
        if written.is_err() {
            // ssh is gone: the link ends now, for every request on it,
            // rather than when its reader sees it.
            link.close();
            return Err(Unsent);
        }
        while let Some(message) = received.recv().await {
            match message {
                Message::Event(event) => {
                    if let Some(on_event) = on_event {
                        on_event(event);
                    }
                }
                Message::Answer(answer) => return Ok(answer),
            }
        }
        Ok(Err(self.interrupted(link, command)))
    }

    /// The connection was lost during `command`.
    fn interrupted(&self, link: &Link, command: &str) -> Error {
        let said = lock(&link.shared.said).clone();
        let said = String::from_utf8_lossy(&said);
        let error = connection_error(&self.remote, last_line(&said))
            .detail("interrupted", true)
            .detail("command", command);
        if self.remote.pod.is_some() {
            // serve's stdin closed with the attach: it ended, and the pod.
            return error.hint(format!(
                "The connection was lost during `{command}`, and serve in {} ended with it: what the pod held since the branch was last brought back is lost. Start the task again.",
                self.remote.display()
            ));
        }
        error.hint(format!(
            "The connection was lost during `{command}`, and the call was stopped on {}. Try again: the next call connects anew.",
            self.remote.display()
        ))
    }

    /// The live link, or a new one when the last one is gone (what was
    /// kept sent on it first).
    async fn link(&self) -> Result<Arc<Link>, Error> {
        let live = || lock(&self.link).clone().filter(|link| link.is_open());
        if let Some(link) = live() {
            return Ok(link);
        }
        // One connection at a time: callers that found it gone together
        // share the one made.
        let _connecting = self.connecting.lock().await;
        if let Some(link) = live() {
            return Ok(link);
        }
        // The commands whose ports were forwarded ended with that serve.
        self.forwards.cancel_all(&self.remote);
        let (remote, serve, copy) = (self.remote.clone(), self.serve.clone(), self.copy.clone());
        let listener = self.listener.clone();
        let (sent, connected) = oneshot::channel();
        // Connecting blocks on ssh: on a thread of its own, not the caller's.
        std::thread::spawn(move || {
            let _ = sent.send(connect(&remote, &serve, copy.as_ref(), &listener));
        });
        let link = connected.await.map_err(|_| {
            Error::new(ErrorCode::Io, "the connection attempt ended without a word")
        })??;
        let kept = lock(&self.kept).clone();
        for (command, args) in kept {
            self.request(&link, &command, args, None)
                .await
                .map_err(|Unsent| self.interrupted(&link, &command))??;
        }
        *lock(&self.link) = Some(link.clone());
        Ok(link)
    }
}

impl Drop for RemoteSession {
    /// The forwards end with the session: the multiplexed connection
    /// outlives it, and would keep them open.
    fn drop(&mut self) {
        self.forwards.cancel_all(&self.remote);
    }
}

impl Link {
    fn is_open(&self) -> bool {
        lock(&self.shared.pending).is_some()
    }

    fn close(&self) {
        lock(&self.shared.pending).take();
    }

    /// Waits, at most `limit`, for its process to have exited; whether it
    /// has.
    fn wait_ended(&self, limit: Duration) -> bool {
        let (ended, changed) = &self.shared.ended;
        let ended = lock(ended);
        let (ended, _) = changed
            .wait_timeout_while(ended, limit, |ended| !*ended)
            .unwrap_or_else(PoisonError::into_inner);
        *ended
    }

    fn register(&self) -> Option<(u64, mpsc::UnboundedReceiver<Message>)> {
        let mut pending = lock(&self.shared.pending);
        let pending = pending.as_mut()?;
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let (sent, received) = mpsc::unbounded_channel();
        pending.insert(id, sent);
        Some((id, received))
    }
}

/// What the remote said first.
enum Started {
    Ready(Arc<Link>),
    /// corral-cli of this version is not there: ssh's stdout.
    Missing(Vec<u8>),
}

/// A link to serve on `remote`, copying corral-cli there first when it is
/// missing and `copy` says so.
fn connect(
    remote: &Remote,
    serve: &[String],
    copy: Option<&PathBuf>,
    listener: &Listener,
) -> Result<Arc<Link>, Error> {
    let said = match start(remote, serve, listener)? {
        Started::Ready(link) => return Ok(link),
        Started::Missing(said) => said,
    };
    if remote.pod.is_some() {
        // The pod's spec names serve; nothing is ever copied into a pod.
        return Err(Error::new(
            ErrorCode::Io,
            format!("{} did not start serve", remote.display()),
        )
        .hint("Check that the task's image holds this version of corral-cli (scripts/image.sh)."));
    }
    if let Some(container) = &remote.container {
        // Nothing is copied into a container: its image brings corral-cli.
        return Err(Error::new(
            ErrorCode::NotFound,
            format!(
                "the image `{}` has no corral-cli {}",
                container.image,
                crate::VERSION
            ),
        )
        .hint(
            "Build the task image again with scripts/image.sh, or choose an image built on it.",
        ));
    }
    let missing = missing(remote, &said)?;
    let binary = copy.cloned().unwrap_or_default();
    install(remote, &binary, &missing, copy.is_some())?;
    match start(remote, serve, listener)? {
        Started::Ready(link) => Ok(link),
        Started::Missing(_) => Err(Error::new(
            ErrorCode::Io,
            format!(
                "corral-cli was copied to {}, and is still not found there",
                remote.destination
            ),
        )),
    }
}

/// Starts serve there and reads its first line.
fn start(remote: &Remote, serve: &[String], listener: &Listener) -> Result<Started, Error> {
    let mut words = vec!["serve".to_string(), "--root".into(), remote.path.clone()];
    words.extend(serve.iter().cloned());
    let mut child = spawn_cli(remote, &words)?;
    let shared = Arc::new(Shared {
        pending: Mutex::new(Some(HashMap::new())),
        said: Mutex::default(),
        questions: Questions::new(listener),
        ended: Default::default(),
    });
    let (Some(mut stdin), Some(stdout), Some(stderr)) =
        (child.stdin.take(), child.stdout.take(), child.stderr.take())
    else {
        return Err(Error::new(
            ErrorCode::Io,
            "ssh was started without its pipes",
        ));
    };
    if let Some(pod) = &remote.pod {
        // serve in a pod starts on this line, so its `ready` is written
        // after kubectl attached. A failed write: kubectl ended, which
        // its words on stderr tell below.
        let _ = writeln!(stdin, "{}", pod.start_line).and_then(|()| stdin.flush());
    }
    let keeping = {
        let shared = shared.clone();
        std::thread::spawn(move || keep_said(stderr, &shared))
    };
    let Some((first, mut stdout)) = first_line(stdout, remote.connect_timeout * 2) else {
        // Killed, ssh's stdout closes and the thread reading it ends.
        let _ = child.kill();
        let _ = child.wait();
        return Err(not_ready(remote, &shared));
    };
    let hello: Value = serde_json::from_str(&first).unwrap_or(Value::Null);
    if hello.get("ready").is_some() {
        let reading = shared.clone();
        std::thread::spawn(move || read_answers(stdout, child, &reading));
        return Ok(Started::Ready(Arc::new(Link {
            stdin: Mutex::new(stdin),
            shared,
            next: AtomicU64::new(1),
        })));
    }
    drop(stdin);
    let mut rest = first.into_bytes();
    let _ = stdout.read_to_end(&mut rest);
    let status = child
        .wait()
        .map_err(|e| Error::new(ErrorCode::Io, format!("could not wait for ssh: {e}")))?;
    let _ = keeping.join();
    if let Some(error) = hello.get("failed") {
        return Err(serde_json::from_value(error.clone()).unwrap_or_else(|_| {
            Error::new(
                ErrorCode::Io,
                format!("the remote could not open the project: {error}"),
            )
        }));
    }
    if status.code() == Some(MISSING) {
        return Ok(Started::Missing(rest));
    }
    let stderr = lock(&shared.said).clone();
    Err(failed(
        remote,
        &Output {
            status,
            stdout: rest,
            stderr,
        },
    ))
}

/// serve's first line, read within `limit` (on a thread of its own, as a
/// read cannot be given a limit); `None`: none came in time.
fn first_line(stdout: ChildStdout, limit: Duration) -> Option<(String, BufReader<ChildStdout>)> {
    let (sent, received) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut stdout = BufReader::new(stdout);
        let mut first = String::new();
        let _ = stdout.read_line(&mut first);
        let _ = sent.send((first, stdout));
    });
    received.recv_timeout(limit).ok()
}

/// serve did not say it was ready in time: the host did not answer, or
/// the remote did not start serve.
fn not_ready(remote: &Remote, shared: &Shared) -> Error {
    let said = String::from_utf8_lossy(&lock(&shared.said)).into_owned();
    let waited = remote.connect_timeout * 2;
    if remote.pod.is_some() {
        return Error::new(
            ErrorCode::Io,
            format!(
                "serve in {} did not answer within {} s",
                remote.display(),
                waited.as_secs()
            ),
        )
        .hint("Check the pod with `kubectl describe pod` and `kubectl logs`: its container may have ended.")
        .detail("timed_out", true)
        .detail("waited_secs", waited.as_secs())
        .detail("kubectl", last_line(&said));
    }
    Error::new(
        ErrorCode::Io,
        format!(
            "{} did not open the project within {} s",
            remote.destination,
            waited.as_secs()
        ),
    )
    .hint(format!(
        "Check that `ssh {}` logs in and that the machine is not overloaded, then try again.",
        remote.destination
    ))
    .detail("timed_out", true)
    .detail("waited_secs", waited.as_secs())
    .detail("ssh", last_line(&said))
    .retryable(true)
}

/// Keeps the end of ssh's stderr.
fn keep_said(mut stderr: impl Read, shared: &Shared) {
    let mut chunk = [0u8; 1024];
    while let Ok(n) = stderr.read(&mut chunk) {
        if n == 0 {
            break;
        }
        let mut said = lock(&shared.said);
        said.extend_from_slice(&chunk[..n]);
        let over = said.len().saturating_sub(SAID_KEPT);
        said.drain(..over);
    }
}

/// The longest line serve may send: a file's whole content (16 MiB at
/// most) escaped in JSON, with room to spare.
const MAX_LINE: u64 = 256 << 20;

/// serve's next line, bounded before it is kept: `None` at the end, or
/// when a line runs past `limit` ([`MAX_LINE`]) (the connection is then of no more
/// use: what waits on it is told it was lost).
fn bounded_line(reader: &mut impl BufRead, limit: u64) -> Option<String> {
    let mut line = Vec::new();
    let read = reader
        .by_ref()
        .take(limit)
        .read_until(b'\n', &mut line)
        .ok()?;
    if read == 0 || (!line.ends_with(b"\n") && read as u64 >= limit) {
        return None;
    }
    String::from_utf8(line).ok().or(Some(String::new()))
}

/// Hands each line of serve's to the request it answers, until the
/// connection ends; then every request waiting is told (its channel
/// closes) and ssh is reaped.
fn read_answers(mut stdout: BufReader<ChildStdout>, mut child: Child, shared: &Shared) {
    while let Some(line) = bounded_line(&mut stdout, MAX_LINE) {
        let Ok(message) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        if let Some(question) = message.get("question") {
            shared.questions.hear(question.clone());
            continue;
        }
        let Some(id) = message.get("id").and_then(Value::as_u64) else {
            continue;
        };
        let mut pending = lock(&shared.pending);
        let Some(pending) = pending.as_mut() else {
            break;
        };
        if let Some(event) = message.get("event") {
            if let Some(sent) = pending.get(&id) {
                let _ = sent.send(Message::Event(event.clone()));
            }
        } else if let Some(sent) = pending.remove(&id) {
            let answer = match (message.get("ok"), message.get("error")) {
                (Some(ok), _) => Ok(ok.clone()),
                (None, Some(error)) => {
                    Err(serde_json::from_value(error.clone()).unwrap_or_else(|_| {
                        Error::new(ErrorCode::Io, format!("the remote failed: {error}"))
                    }))
                }
                (None, None) => Err(Error::new(
                    ErrorCode::Io,
                    format!("the remote answered neither ok nor error: {line}"),
                )),
            };
            let _ = sent.send(Message::Answer(answer));
        }
    }
    lock(&shared.pending).take();
    let _ = child.wait();
    // serve refused what waited as it stopped the commands.
    shared.questions.close_all();
    *lock(&shared.ended.0) = true;
    shared.ended.1.notify_all();
}

fn last_line(said: &str) -> &str {
    said.lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("ssh ended")
        .trim()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A line that never ends is not kept whole: past the limit the
    /// connection's reading stops.
    #[test]
    fn serve_s_lines_are_bounded() {
        let mut reader =
            std::io::Cursor::new(b"{\"id\":1}\nshort\n0123456789abcdefXYZ\nafter\n".to_vec());
        assert_eq!(
            bounded_line(&mut reader, 16).as_deref(),
            Some("{\"id\":1}\n")
        );
        assert_eq!(bounded_line(&mut reader, 16).as_deref(), Some("short\n"));
        assert_eq!(bounded_line(&mut reader, 16), None);
        let mut ended = std::io::Cursor::new(b"last".to_vec());
        assert_eq!(bounded_line(&mut ended, 16).as_deref(), Some("last"));
        assert_eq!(bounded_line(&mut ended, 16), None);
    }
}
