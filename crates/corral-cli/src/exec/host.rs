//! The agent loop's IPC served without the window, for `corral-cli exec`
//! and `corral-cli acp` alike: the app's commands (docs/ipc.md) by the same
//! name and arguments, over the same crates — the session for tools and
//! approvals, corral-llm for the model, corral-history for the conversation
//! — plus what only the host's user gives ([`Front`]): `ask_approval`, the
//! one question the loop asks, `wait_stop`, and the run's events.

use super::engine::Host;
use super::render::Render;
use corral_config::LlmTarget;
use corral_history::{History, NewEntry, Part};
use corral_llm::{ChatRequest, ProviderConfig};
use corral_session::approvals::ApprovalAnswer;
use corral_session::checkpoints::CallTag;
use corral_session::runs::{Run, Runs};
use corral_session::{Call, Consent, RunContext, Session};
use corral_tools::shell::ShellRun;
use corral_tools::{Error, ErrorCode};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::io::{BufRead, IsTerminal, Write};
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// Where the model is: the app's settings with the flags' and the
/// environment's overrides (`fixed`), or a conversation's own model.
pub(crate) struct Model {
    pub store: corral_config::Store,
    /// The config the flags or environment chose; `None`: the settings'.
    pub fixed: Option<ProviderConfig>,
}

impl Model {
    fn config(&self, target: Option<LlmTarget>) -> ProviderConfig {
        match &self.fixed {
            Some(config) => config.clone(),
            None => self.store.provider_config(target),
        }
    }
}

/// Where the loop's user is: what differs between the hosts without a
/// window. exec's is the terminal ([`Terminal`]); acp's is the editor.
pub(crate) trait Front: Send + Sync + 'static {
    /// The user's answer to a call waiting for approval (`ask_approval`):
    /// `{"decision": ..., "by": ...}`.
    async fn ask(&self, question: Value) -> Result<Value, Error>;
    /// Resolves when the user stops the run (`wait_stop`).
    async fn stopped(&self);
    /// One event of the run, as the script reports it.
    fn emit(&self, event: Value);
}

/// exec's user: the terminal, when there is one, and the printed events.
pub(crate) struct Terminal {
    pub asker: Asker,
    pub render: Render,
}

impl Front for Terminal {
    /// Asks the user on the terminal, or no one.
    async fn ask(&self, question: Value) -> Result<Value, Error> {
        let args: ApprovalQuestion = parse("ask_approval", question)?;
        let answer = match self.asker {
            Asker::NoOne => ("deny", "no_terminal"),
            Asker::Terminal => {
                let question = format!(
                    "corral: {} {} wants approval{}. Allow it once? [y/N] ",
                    args.name,
                    args.input,
                    if args.reason.is_empty() {
                        String::new()
                    } else {
                        format!(" ({})", args.reason)
                    }
                );
                let yes = tokio::task::spawn_blocking(move || ask_terminal(&question))
                    .await
                    .unwrap_or(false);
                (if yes { "once" } else { "deny" }, "terminal")
            }
        };
        Ok(serde_json::json!({ "decision": answer.0, "by": answer.1 }))
    }

    /// exec is stopped by a signal, which ends the process.
    async fn stopped(&self) {
        std::future::pending::<()>().await;
    }

    fn emit(&self, event: Value) {
        self.render.event(&event);
    }
}

/// How a call waiting for approval is answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Asker {
    /// On the terminal (stdin is one).
    Terminal,
    /// No one can answer: denied, and the run stops.
    NoOne,
}

impl Asker {
    pub fn for_stdin() -> Asker {
        if std::io::stdin().is_terminal() {
            Asker::Terminal
        } else {
            Asker::NoOne
        }
    }
}

/// The loop's IPC over a project's session, served to one run of the script.
pub(crate) struct LoopHost<F: Front> {
    pub session: Arc<Session>,
    pub history: Arc<History>,
    /// The project's key in the history (its root as the window shows it).
    pub project: String,
    pub model: Arc<Model>,
    pub front: F,
    /// The key every call's grants are held under, whatever key the
    /// script gives: an ACP session runs a new loop (with a new key) per
    /// prompt, and what the editor allowed lasts for the whole session.
    pub grants_key: Option<String>,
    /// Streams and commands running, for `cancel(run_id)`.
    runs: Runs,
}

impl<F: Front> LoopHost<F> {
    pub fn new(
        session: Arc<Session>,
        history: Arc<History>,
        model: Arc<Model>,
        front: F,
    ) -> LoopHost<F> {
        let project = session.root().path().display().to_string();
        LoopHost {
            session,
            history,
            project,
            model,
            front,
            grants_key: None,
            runs: Runs::default(),
        }
    }

    /// The key of the grants a call is checked against.
    fn key(&self, given: Option<String>) -> Option<String> {
        self.grants_key.clone().or(given)
    }

    fn key_of(&self, given: String) -> String {
        self.grants_key.clone().unwrap_or(given)
    }

    /// Runs a call (by its ticket, or checked and run in one), stoppable
    /// by `cancel(run_id)`.
    async fn run_tool(
        &self,
        run: RunArgs,
        go: impl AsyncFnOnce(RunContext) -> Result<Value, Error>,
    ) -> Result<Value, Error> {
        let context = RunContext {
            shell: ShellRun::default(),
            tag: CallTag {
                turn: run.turn_id,
                call: run.call_id,
            },
        };
        let Some(id) = run.run_id.as_deref() else {
            return go(context).await;
        };
        self.runs
            .start(id, Run::Shell(context.shell.cancel.clone()))?;
        let result = go(context).await;
        self.runs.end(id);
        result
    }

    async fn llm_stream(
        &self,
        args: LlmStreamArgs,
        events: &dyn Fn(Value),
    ) -> Result<Value, Error> {
        let config = corral_llm::with_native_api(&self.model.config(args.target)).await;
        let cancel = CancellationToken::new();
        self.runs.start(&args.run_id, Run::Llm(cancel.clone()))?;
        let (sent, mut received) = tokio::sync::mpsc::unbounded_channel();
        let streaming = async move {
            corral_llm::stream(&config, &args.request, cancel, move |event| {
                let _ = sent.send(event);
            })
            .await;
        };
        // Every event is handed over before the command answers.
        let forwarding = async {
            while let Some(event) = received.recv().await {
                events(serde_json::to_value(event).unwrap_or(Value::Null));
            }
        };
        tokio::join!(streaming, forwarding);
        self.runs.end(&args.run_id);
        Ok(Value::Null)
    }
}

/// Asks on stderr and reads one line of stdin: yes only for `y` or `yes`.
fn ask_terminal(question: &str) -> bool {
    let mut err = std::io::stderr().lock();
    let _ = err.write_all(question.as_bytes());
    let _ = err.flush();
    let mut line = String::new();
    if std::io::stdin().lock().read_line(&mut line).is_err() {
        return false;
    }
    matches!(line.trim().to_ascii_lowercase().as_str(), "y" | "yes")
}

impl<F: Front> Host for LoopHost<F> {
    async fn invoke(
        &self,
        command: &str,
        args: Value,
        events: &dyn Fn(Value),
    ) -> Result<Value, Error> {
        let session = &self.session;
        match command {
            "tool_specs" => to_value(session.tool_specs()),
            "check_call" => {
                let a: CheckArgs = parse(command, args)?;
                to_value(session.check(Call {
                    tool: a.tool,
                    input: a.input,
                    conversation: self.key(a.conversation),
                })?)
            }
            "run_call" => {
                let a: RunCallArgs = parse(command, args)?;
                let consent = a
                    .approval
                    .map_or(Consent::None, |a| Consent::Answer(a.into()));
                self.run_tool(a.run, async |run| {
                    session.run(&a.ticket, consent, run).await
                })
                .await
            }
            "call_tool" => {
                let a: CallToolArgs = parse(command, args)?;
                let call = Call {
                    tool: a.name,
                    input: a.input,
                    conversation: self.key(a.conversation),
                };
                self.run_tool(a.run, async |run| {
                    session.call(call, Consent::None, run).await
                })
                .await
            }
            "conversation_grants" => {
                let a: ConversationArgs = parse(command, args)?;
                to_value(session.grants(&self.key_of(a.conversation)))
            }
            "revoke_grant" => {
                let a: RevokeArgs = parse(command, args)?;
                to_value(session.revoke_grant(&self.key_of(a.conversation), &a.id))
            }
            "end_conversation" => {
                let a: ConversationArgs = parse(command, args)?;
                // A session's key ends with the session, not with a loop.
                if self.grants_key.is_none() {
                    session.end_conversation(&a.conversation);
                }
                Ok(Value::Null)
            }
            "cancel" => {
                let a: CancelArgs = parse(command, args)?;
                self.runs.cancel(&a.run_id);
                Ok(Value::Null)
            }
            "llm_stream" => self.llm_stream(parse(command, args)?, events).await,
            "model_info" => {
                let config = corral_llm::with_native_api(&self.model.config(None)).await;
                to_value(corral_llm::model_info(&config).await)
            }
            "count_prompt_tokens" => {
                let a: CountArgs = parse(command, args)?;
                let config = self.model.config(a.target);
                to_value(corral_llm::prompt_tokens(&config, &a.request).await)
            }
            "open_conversation" => {
                let a: OpenArgs = parse(command, args)?;
                let part = Part {
                    elide_over: a.elide_over,
                    before_seq: a.before_seq,
                    last: a.last,
                };
                to_value(self.history.open_part(&self.project, &a.id, part)?)
            }
            "append_entry" => {
                let a: AppendArgs = parse(command, args)?;
                let model = self.model.config(None).model;
                to_value(self.history.append(
                    &self.project,
                    a.conversation.as_deref(),
                    &a.entry,
                    &model,
                )?)
            }
            "ask_approval" => self.front.ask(args).await,
            "wait_stop" => {
                self.front.stopped().await;
                Ok(Value::Null)
            }
            other => Err(Error::new(
                ErrorCode::NotFound,
                format!("`{other}` is not a command corral-cli serves its agent script"),
            )
            .hint("This is a bug in Corral: the agent script and the CLI disagree.")),
        }
    }

    fn emit(&self, event: Value) {
        self.front.emit(event);
    }
}

fn parse<T: DeserializeOwned>(command: &str, args: Value) -> Result<T, Error> {
    serde_json::from_value(args)
        .map_err(|e| Error::invalid_input(format!("the arguments of `{command}` do not fit: {e}")))
}

fn to_value(value: impl Serialize) -> Result<Value, Error> {
    serde_json::to_value(value)
        .map_err(|e| Error::new(ErrorCode::Io, format!("could not encode an answer: {e}")))
}

/// What a run of a call carries besides the call.
#[derive(Deserialize, Default)]
struct RunArgs {
    run_id: Option<String>,
    turn_id: Option<String>,
    call_id: Option<String>,
}

#[derive(Deserialize)]
struct CheckArgs {
    tool: String,
    input: Value,
    conversation: Option<String>,
}

#[derive(Deserialize)]
struct RunCallArgs {
    ticket: String,
    approval: Option<ApprovalAnswer>,
    #[serde(flatten)]
    run: RunArgs,
}

#[derive(Deserialize)]
struct CallToolArgs {
    name: String,
    input: Value,
    conversation: Option<String>,
    #[serde(flatten)]
    run: RunArgs,
}

#[derive(Deserialize)]
struct ConversationArgs {
    conversation: String,
}

#[derive(Deserialize)]
struct RevokeArgs {
    conversation: String,
    id: String,
}

#[derive(Deserialize)]
struct CancelArgs {
    run_id: String,
}

#[derive(Deserialize)]
struct LlmStreamArgs {
    run_id: String,
    request: ChatRequest,
    target: Option<LlmTarget>,
}

#[derive(Deserialize)]
struct CountArgs {
    request: ChatRequest,
    target: Option<LlmTarget>,
}

#[derive(Deserialize)]
struct OpenArgs {
    id: String,
    elide_over: Option<usize>,
    before_seq: Option<i64>,
    last: Option<usize>,
}

#[derive(Deserialize)]
struct AppendArgs {
    conversation: Option<String>,
    entry: NewEntry,
}

#[derive(Deserialize)]
struct ApprovalQuestion {
    name: String,
    input: Value,
    #[serde(default)]
    reason: String,
}
