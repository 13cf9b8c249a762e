//! Corral's tools as an MCP server: every tool of the registry, with its
//! JSON Schema and description, served over stdio through the official Rust
//! SDK (`rmcp`). It is one more host of a project's [`Session`]: a call is
//! checked into a ticket and run by it, so the policy, the confinement, the
//! checkpoints and the standardized error are exactly those of the app and
//! `corral-cli call`.
//!
//! The protocol is MCP 2026-07-28 for a client that opens with
//! `server/discover` (each request then carries its own version and
//! capabilities; the server sends no request of its own), and the version
//! a client asks for at `initialize` up to 2025-11-25 (rmcp negotiates
//! both). Only the question to the user differs between them.
//!
//! - `tools/list`: the registry's specs; annotations from each tool's risk
//!   (`read` → `readOnlyHint`, `write` and `shell` → `destructiveHint`).
//! - `tools/call`: the result as structured content (and as its JSON text);
//!   a failure as a tool error whose structured content is the standardized
//!   error. A call the policy would ask about is asked of the client's user
//!   through MCP elicitation when the client can (on 2026-07-28 as an
//!   `input_required` result whose `requestState` names the checked call,
//!   answered by the client's retry of that same call), the call shown whole with
//!   its hidden characters marked ([`question`]); accepted, it runs, else
//!   it fails with `denied`. A call too long to show whole in a question is
//!   not asked about: it fails with `approval_required` saying why. A client without elicitation gets
//!   `approval_required`, with a hint naming `--mode`.
//! - A call that can change the project is preceded by a checkpoint, as in
//!   the app and `corral-cli call` (when the session has a checkpoint
//!   folder).
//! - `exec_shell`'s output arrives as progress notifications while it runs
//!   when the call carries a progress token (the message is the chunk).
//! - A command with the network that meets a domain off the allowlist
//!   (the default registries and `--allow-domain`) asks the client's user
//!   through elicitation, once per domain per session ([`domains`]); a
//!   client that cannot be asked, or a 2026-07-28 client (a command's run
//!   cannot stop for an `input_required` round), gets the refusal, naming
//!   the flag.

pub mod domains;
pub mod question;

use corral_session::{Call, Consent, RunContext, Session};
use corral_tools::policy::Risk;
use corral_tools::shell::{CancelToken, DomainAsk, OutputSink, ShellRun, Stream};
use corral_tools::{spec, tools, Error, ErrorCode};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ElicitRequest, ElicitRequestParams,
    ElicitationSchema, Implementation, InputRequest, InputRequests, InputRequiredResult,
    InputResponses, ListToolsResult, PaginatedRequestParams, ProgressNotificationParam,
    ProgressToken, ProtocolVersion, ServerCapabilities, ServerConfig, Tool, ToolAnnotations,
};
use rmcp::service::{ElicitationError, Peer, RequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler, ServiceExt};
use serde_json::{Map, Value};
use std::collections::VecDeque;
use std::sync::{Arc, Mutex, PoisonError};

/// The server for one project: its session (the mode, boundaries,
/// network, checkpoints, index and language servers it was opened with).
#[derive(Clone)]
pub struct CorralServer {
    session: Arc<Session>,
    /// The session's answers about domains off the allowlist.
    domains: Arc<domains::DomainAnswers>,
    /// The questions out to 2026-07-28 clients, by their `requestState`.
    asked: Arc<Asked>,
    /// Cancelled when the client goes away: every running call stops.
    gone: tokio_util::sync::CancellationToken,
}

/// The key of the approval question in an `input_required` result, and of
/// its answer in the retried call's `inputResponses`.
const APPROVE_KEY: &str = "approve";

/// How many questions wait for their answer at most (as the session's
/// tickets); the oldest goes first.
const ASKED_KEPT: usize = 256;

/// The approvals asked of 2026-07-28 clients: the `requestState` sent
/// with the question is the ticket's id (random, never shown to the
/// model), kept here with the call it was asked about, so a retry is
/// answered only for that same call. The state itself is untrusted: it
/// is only looked up, never read for anything else.
#[derive(Default)]
struct Asked(Mutex<VecDeque<(String, String, Value)>>);

impl Asked {
    fn keep(&self, ticket: &str, name: &str, input: &Value) {
        let mut asked = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if asked.len() >= ASKED_KEPT {
            asked.pop_front();
        }
        asked.push_back((ticket.to_string(), name.to_string(), input.clone()));
    }

    /// Takes the question `state` if it was asked about `name` with `input`.
    fn take(&self, state: &str, name: &str, input: &Value) -> Option<String> {
        let mut asked = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let at = asked
            .iter()
            .position(|(t, n, i)| t == state && n == name && i == input)?;
        asked.remove(at).map(|(ticket, _, _)| ticket)
    }
}

/// A `tools/call` as it arrived: a first call, or a 2026-07-28 client's
/// retry with the user's answer (`requestState`, `inputResponses`).
#[derive(Default)]
struct Retry {
    request_state: Option<String>,
    input_responses: Option<InputResponses>,
}

/// What a call ends with: its result, or (2026-07-28) the question the
/// client must ask its user before retrying it.
enum Outcome {
    Done(Result<Value, Error>),
    Ask(InputRequiredResult),
}

/// The answer asked of the client's user before a call the policy asks about.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct Approve {
    /// Allow this one call.
    approve: bool,
}
rmcp::elicit_safe!(Approve);

impl CorralServer {
    pub fn new(session: Arc<Session>) -> Self {
        CorralServer {
            session,
            domains: Arc::default(),
            asked: Arc::default(),
            gone: tokio_util::sync::CancellationToken::new(),
        }
    }

    /// The registry's tools as MCP tools.
    pub fn tools() -> Vec<Tool> {
        spec::specs()
            .into_iter()
            .map(|spec| {
                let schema = match spec.input_schema {
                    Value::Object(schema) => schema,
                    _ => Map::new(),
                };
                let annotations = ToolAnnotations::new()
                    .read_only(spec.risk == Risk::Read)
                    .destructive(spec.risk != Risk::Read)
                    .open_world(false);
                Tool::new(spec.name, spec.description, Arc::new(schema))
                    .with_annotations(annotations)
            })
            .collect()
    }

    /// Checks and runs one call no one is asked about.
    pub async fn call(&self, name: String, input: Value) -> Result<Value, Error> {
        let call = Call::new(name, input);
        let done = self
            .session
            .call(call, Consent::None, RunContext::default())
            .await;
        self.said(done)
    }

    /// The end of a run: what the checkpoint store warned of (a journal set
    /// aside) goes to stderr, the client's log, as stdout is the protocol's;
    /// a call that asks says how to let it run.
    fn said(&self, done: Result<Value, Error>) -> Result<Value, Error> {
        if let Some(store) = self.session.opened_checkpoint_store() {
            for warning in store.take_warnings() {
                eprintln!("corral-cli mcp: warning: {warning}");
            }
        }
        done.map_err(|error| match error.code {
            ErrorCode::ApprovalRequired => error.hint(
                "This client cannot be asked (it has no MCP elicitation): start the server with \
                 a mode that allows the call (`corral-cli mcp --mode auto_edit` for writes, \
                 `--mode full_auto` for commands).",
            ),
            _ => error,
        })
    }

    /// Runs the ticket `id` with `consent` and the command's side of `shell`.
    async fn run(&self, id: &str, consent: Consent, shell: &Shell) -> Result<Value, Error> {
        let run = RunContext {
            shell: shell.run(),
            ..RunContext::default()
        };
        let done = self.session.run(id, consent, run).await;
        self.said(done)
    }

    /// A call as a client makes it: a command's output as progress
    /// notifications when the call has a progress token; a call the policy
    /// asks about asked of the client's user when the client can be asked:
    /// by an elicitation request on a session that began with `initialize`
    /// (up to 2025-11-25), by an `input_required` result on 2026-07-28,
    /// whose retry carries the answer.
    async fn serve_call(
        &self,
        name: String,
        input: Value,
        retry: Retry,
        context: &RequestContext<RoleServer>,
    ) -> Outcome {
        let modern = is_modern(context);
        let sink = context
            .meta
            .get_progress_token()
            .filter(|_| name == "exec_shell")
            .map(|token| progress_sink(context.peer.clone(), token));
        // The client's `notifications/cancelled` stops a running command,
        // and so does the client's going away (the watcher ends with the
        // call).
        let cancel = CancelToken::default();
        let (ended, end) = tokio::sync::oneshot::channel::<()>();
        let (ct, gone, stop) = (context.ct.clone(), self.gone.clone(), cancel.clone());
        tokio::spawn(async move {
            tokio::select! {
                () = ct.cancelled() => stop.cancel(),
                () = gone.cancelled() => stop.cancel(),
                _ = end => {}
            }
        });
        let _ended = ended;
        // A 2026-07-28 server sends no request of its own: a domain met
        // while a command runs cannot be asked about then (refused, the
        // hint naming `--allow-domain`).
        let ask_domain = if modern {
            None
        } else {
            self.domains.hook(&context.peer, cancel.clone())
        };
        let shell = Shell {
            on_output: sink,
            ask_domain,
            cancel,
        };
        if let Some(state) = retry.request_state.as_deref() {
            return Outcome::Done(
                self.answered(&name, &input, state, retry.input_responses, &shell)
                    .await,
            );
        }
        // Checked once; a run the policy asks about leaves the ticket for
        // the user's answer.
        let ticket = match self.session.check(Call::new(name.clone(), input.clone())) {
            Ok(ticket) => ticket,
            Err(error) => return Outcome::Done(Err(error)),
        };
        let first = self.run(&ticket.ticket, Consent::None, &shell).await;
        let Err(error) = first else {
            return Outcome::Done(first);
        };
        if error.code != ErrorCode::ApprovalRequired {
            return Outcome::Done(Err(error));
        }
        // The call whole, hidden characters marked; one too long to show
        // whole in a question is not asked about.
        let question = match question::question(
            &self.session.root().path().display().to_string(),
            &error.message,
            &name,
            &input,
        ) {
            Ok(question) => question,
            Err(too_long) => {
                return Outcome::Done(Err(Error::new(
                    ErrorCode::ApprovalRequired,
                    format!(
                        "`{name}` was not asked about: shown whole, with its hidden characters \
                         marked, it is {} characters, more than a question can show ({})",
                        too_long.chars,
                        question::MAX_QUESTION_CHARS
                    ),
                )
                .hint(
                    "Nothing ran. Review the call where it can be shown whole (the Corral app), \
                     split it into smaller calls, or start the server with a mode that allows it \
                     (`corral-cli mcp --mode auto_edit` for writes).",
                )
                .detail("tool", name.as_str())
                .detail("question_chars", too_long.chars)));
            }
        };
        if modern {
            if !can_elicit(context) {
                return Outcome::Done(Err(error));
            }
            return match approval_request(question) {
                Ok(requests) => {
                    self.asked.keep(&ticket.ticket, &name, &input);
                    Outcome::Ask(InputRequiredResult::new(
                        Some(requests),
                        Some(ticket.ticket),
                    ))
                }
                Err(e) => Outcome::Done(Err(Error::new(
                    ErrorCode::Denied,
                    format!("`{name}` was not run: the question could not be made ({e})"),
                )
                .detail("tool", name.as_str()))),
            };
        }
        Outcome::Done(match context.peer.elicit::<Approve>(question).await {
            Ok(Some(Approve { approve: true })) => {
                let granted = Consent::Granted { network: false };
                self.run(&ticket.ticket, granted, &shell).await
            }
            Ok(_) | Err(ElicitationError::UserDeclined | ElicitationError::UserCancelled) => {
                Err(denied(&name))
            }
            Err(ElicitationError::CapabilityNotSupported) => Err(error),
            Err(other) => Err(Error::new(
                ErrorCode::Denied,
                format!("`{name}` was not run: asking the user failed ({other})"),
            )
            .detail("tool", name.as_str())),
        })
    }

    /// A 2026-07-28 client's retry carrying its user's answer: the ticket
    /// asked about, if `state` is a question out for this very call, runs
    /// when the answer is `approve: true`; any other answer denies it.
    async fn answered(
        &self,
        name: &str,
        input: &Value,
        state: &str,
        responses: Option<InputResponses>,
        shell: &Shell,
    ) -> Result<Value, Error> {
        let Some(ticket) = self.asked.take(state, name, input) else {
            return Err(Error::invalid_input(format!(
                "`{name}` was retried with a requestState this server did not give for this call"
            ))
            .hint("Call the tool again without requestState; it will be asked about anew.")
            .detail("tool", name));
        };
        let answer = responses.as_ref().and_then(|r| r.get(APPROVE_KEY));
        if approved(answer) {
            let granted = Consent::Granted { network: false };
            self.run(&ticket, granted, shell).await
        } else {
            Err(denied(name))
        }
    }
}

/// Whether the request was made on 2026-07-28 or later (no `initialize`,
/// no request from the server to the client).
fn is_modern(context: &RequestContext<RoleServer>) -> bool {
    context
        .protocol_version()
        .is_some_and(|v| v.as_str() >= ProtocolVersion::V_2026_07_28.as_str())
}

/// Whether the client said (in the request's own metadata on 2026-07-28)
/// that it can put a form to its user.
fn can_elicit(context: &RequestContext<RoleServer>) -> bool {
    context
        .client_capabilities()
        .and_then(|c| c.elicitation)
        .is_some_and(|e| e.form.is_some() || e.url.is_none())
}

/// The approval question as a 2026-07-28 `input_required` request: the
/// same form (one boolean, `approve`) an elicitation request carries.
fn approval_request(message: String) -> Result<InputRequests, serde_json::Error> {
    let requested_schema = ElicitationSchema::from_type::<Approve>()?;
    let request = ElicitRequest::new(ElicitRequestParams::FormElicitationParams {
        meta: None,
        message,
        requested_schema,
    });
    Ok(InputRequests::from([(
        APPROVE_KEY.to_string(),
        InputRequest::Elicitation(request),
    )]))
}

/// Whether an elicitation result (`{action, content}`) accepts with
/// `approve: true`; anything else (declined, cancelled, missing, not of
/// that shape) is no.
fn approved(answer: Option<&Value>) -> bool {
    answer.is_some_and(|a| {
        a.get("action").and_then(Value::as_str) == Some("accept")
            && a.pointer("/content/approve").and_then(Value::as_bool) == Some(true)
    })
}

fn denied(name: &str) -> Error {
    Error::new(
        ErrorCode::Denied,
        format!("the user did not allow `{name}`"),
    )
    .detail("tool", name)
}

/// What a command of one call is run with: where its output goes, what
/// stops it, who is asked about a domain off the allowlist.
#[derive(Clone, Default)]
struct Shell {
    on_output: Option<OutputSink>,
    cancel: CancelToken,
    ask_domain: Option<DomainAsk>,
}

impl Shell {
    /// The host's side of a command's run (the session adds its own).
    fn run(&self) -> ShellRun {
        let mut run = ShellRun {
            on_output: self.on_output.clone(),
            cancel: self.cancel.clone(),
            ..ShellRun::default()
        };
        run.egress.ask = self.ask_domain.clone();
        run
    }
}

impl ServerHandler for CorralServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("corral", env!("CARGO_PKG_VERSION")))
            .with_instructions(format!(
                "Corral's file, search and shell tools, confined by the kernel to the project folder {}. \
                 Paths are relative to it; nothing outside is reachable. Failures are JSON objects with \
                 code, message and hint.",
                self.session.root().path().display()
            ))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(Self::tools()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let name = request.name.to_string();
        let input = Value::Object(request.arguments.unwrap_or_default());
        let retry = Retry {
            request_state: request.request_state,
            input_responses: request.input_responses,
        };
        let outcome = match tools::find(&name) {
            None => Outcome::Done(Err(Error::invalid_input(format!(
                "there is no tool `{name}`"
            ))
            .hint("Use one of the tools tools/list names."))),
            Some(_) => self.serve_call(name, input, retry, &context).await,
        };
        Ok(match outcome {
            Outcome::Ask(question) => question.into(),
            Outcome::Done(Ok(output)) => CallToolResult::structured(output).into(),
            Outcome::Done(Err(error)) => CallToolResult::structured_error(error.to_json()).into(),
        })
    }
}

/// A command's output as progress notifications, in order: the sink (on
/// the command's reader threads) queues each chunk, one task sends them.
/// `progress` counts the bytes so far.
fn progress_sink(peer: Peer<RoleServer>, token: ProgressToken) -> OutputSink {
    // Bounded: a client that reads slowly loses chunks (the result still
    // has the whole capped output), it never makes the server hoard them.
    let (tx, mut rx) = tokio::sync::mpsc::channel::<String>(256);
    tokio::spawn(async move {
        let mut sent = 0usize;
        while let Some(chunk) = rx.recv().await {
            sent += chunk.len();
            let note =
                ProgressNotificationParam::new(token.clone(), sent as f64).with_message(chunk);
            if peer.notify_progress(note).await.is_err() {
                break;
            }
        }
    });
    Arc::new(move |_stream: Stream, bytes: &[u8]| {
        let _ = tx.try_send(String::from_utf8_lossy(bytes).into_owned());
    })
}

/// Serves `server` on stdin/stdout until the client goes away, on a runtime
/// of its own (for callers that are not async, like the CLI).
pub fn run_stdio(server: CorralServer) -> Result<(), Error> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| {
            Error::new(
                ErrorCode::Io,
                format!("could not start the MCP server: {e}"),
            )
        })?;
    runtime.block_on(serve_stdio(server))
}

/// Serves `server` on stdin/stdout until the client goes away.
pub async fn serve_stdio(server: CorralServer) -> Result<(), Error> {
    let io_error =
        |e: &dyn std::fmt::Display| Error::new(ErrorCode::Io, format!("MCP over stdio: {e}"));
    let gone = server.gone.clone();
    let (stdin, stdout) = rmcp::transport::io::stdio();
    // The client went away when its stdin ends: what runs for it stops
    // then, not at a command's own time limit (rmcp's service waits for
    // the calls in flight before it ends).
    let stdin = EndWatch {
        inner: stdin,
        ended: gone.clone(),
    };
    let running = server
        .serve((stdin, stdout))
        .await
        .map_err(|e| io_error(&e))?;
    let waited = running.waiting().await;
    gone.cancel();
    waited.map_err(|e| io_error(&e))?;
    Ok(())
}

/// A reader that cancels `ended` when it reaches its end (or fails).
struct EndWatch<R> {
    inner: R,
    ended: tokio_util::sync::CancellationToken,
}

impl<R: tokio::io::AsyncRead + Unpin> tokio::io::AsyncRead for EndWatch<R> {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let polled = std::pin::Pin::new(&mut self.inner).poll_read(cx, buf);
        match &polled {
            std::task::Poll::Ready(Ok(())) if buf.filled().len() == before => self.ended.cancel(),
            std::task::Poll::Ready(Err(_)) => self.ended.cancel(),
            _ => {}
        }
        polled
    }
}
