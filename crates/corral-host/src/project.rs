//! The answers to the project's commands ([`crate::COMMANDS`]) over a
//! session: the tools' specs, checking and running calls, the
//! conversations' grants, the answers about domains, cancelling a run,
//! the MCP servers, the search index's state, the folders changed on
//! disk, the background commands (the Processes panel's), the checkpoint
//! panel's commands, and the custom commands and skills (the project's,
//! and those of the user where the project is).

use corral_session::approvals::ApprovalAnswer;
use corral_session::checkpoints::CallTag;
use corral_session::customization::{self, SetupSource};
use corral_session::domains::{Asking, DomainAnswers, DomainQuestion, Notify, QUESTION_WAIT};
use corral_session::mcp::McpServerConfig;
use corral_session::runs::{Run, Runs};
use corral_session::{Call, Consent, RunContext, Session};
use corral_tools::shell::{OutputSink, ShellRun};
use corral_tools::{Error, ErrorCode};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::sync::Arc;

use crate::wire::{parse, to_value};

/// A session and the runs its calls started.
pub struct ProjectCommands {
    pub session: Arc<Session>,
    /// The runs `cancel` reaches (a host may share it with its own runs,
    /// as the loop host does with its model streams).
    pub runs: Arc<Runs>,
    /// The answers about domains off the egress allowlist, by
    /// conversation. A call in a conversation asks about such a domain
    /// only when someone listens (serve's client, once it asked to hear
    /// the questions); else the domain is refused at once.
    pub domains: Arc<DomainAnswers>,
}

impl ProjectCommands {
    pub fn new(session: Arc<Session>, runs: Arc<Runs>) -> ProjectCommands {
        ProjectCommands {
            session,
            runs,
            domains: Arc::default(),
        }
    }

    /// Answers one of [`crate::COMMANDS`]; `output` receives a command's output
    /// as it arrives (`run_call`, `call_tool`).
    pub async fn invoke(
        &self,
        command: &str,
        args: Value,
        output: Option<OutputSink>,
    ) -> Result<Value, Error> {
        let session = &self.session;
        match command {
            "tool_specs" => to_value(session.tool_specs()),
            "hook_status" => to_value(session.hook_status()),
            "run_hooks" => {
                let a: RunHooksArgs = parse(command, args)?;
                to_value(session.run_hooks(a.request).await?)
            }
            "check_call" => {
                let a: CheckArgs = parse(command, args)?;
                to_value(session.check(Call {
                    tool: a.tool,
                    input: a.input,
                    conversation: a.conversation,
                })?)
            }
            "run_call" => {
                let a: RunCallArgs = parse(command, args)?;
                let consent = a
                    .approval
                    .map_or(Consent::None, |a| Consent::Answer(a.into()));
                let conversation = session.ticket_conversation(&a.ticket);
                self.run_tool(a.run, conversation, output, async |run| {
                    session.run(&a.ticket, consent, run).await
                })
                .await
            }
            "call_tool" => {
                let a: CallToolArgs = parse(command, args)?;
                let call = Call {
                    tool: a.name,
                    input: a.input,
                    conversation: a.conversation.clone(),
                };
                self.run_tool(a.run, a.conversation, output, async |run| {
                    session.call(call, Consent::None, run).await
                })
                .await
            }
            "conversation_grants" => {
                let a: ConversationArgs = parse(command, args)?;
                to_value(session.grants(&a.conversation))
            }
            "revoke_grant" => {
                let a: RevokeArgs = parse(command, args)?;
                to_value(session.revoke_grant(&a.conversation, &a.id))
            }
            "end_conversation" => {
                let a: ConversationArgs = parse(command, args)?;
                session.end_conversation(&a.conversation);
                self.domains.end(&a.conversation);
                Ok(Value::Null)
            }
            "answer_domain" => {
                let a: AnswerDomainArgs = parse(command, args)?;
                Ok(Value::Bool(self.domains.respond(&a.id, a.allow)))
            }
            "cancel" => {
                let a: CancelArgs = parse(command, args)?;
                self.runs.cancel(&a.run_id);
                Ok(Value::Null)
            }
            "customization" => {
                let home = customization::user_home();
                to_value(customization::list(session.root(), home.as_deref()))
            }
            "skill_file" => {
                let a: SkillFileArgs = parse(command, args)?;
                let home = customization::user_home();
                to_value(customization::skill_file(
                    session.root(),
                    home.as_deref(),
                    a.source,
                    &a.folder,
                    a.file.as_deref(),
                )?)
            }
            // The checkpoint panel's: the store is where the session is.
            c if crate::table::section_of(c) == Some("Checkpoints") => {
                crate::checkpoints::invoke(session, c, args).await
            }
            "mcp_status" => to_value(session.server_status()),
            "search_index_status" => to_value(session.index_status()),
            "list_processes" => to_value(session.background().list()),
            "process_output" => {
                let a: ProcessArgs = parse(command, args)?;
                to_value(
                    session
                        .background()
                        .output(&a.run_id, a.since_byte.unwrap_or(0))?,
                )
            }
            "stop_process" => {
                let a: ProcessArgs = parse(command, args)?;
                let background = session.background();
                let stopped = tokio::task::spawn_blocking(move || background.stop(&a.run_id))
                    .await
                    .map_err(|e| Error::new(ErrorCode::Io, format!("stop failed: {e}")))?;
                to_value(stopped?)
            }
            "tree_changes" => {
                let a: TreeArgs = parse(command, args)?;
                to_value(session.tree_changes(a.since))
            }
            "restart_mcp_server" => {
                let a: RestartArgs = parse(command, args)?;
                session.servers().restart(&a.name).await?;
                to_value(session.server_status())
            }
            other => Err(Error::new(
                ErrorCode::NotFound,
                format!("`{other}` is not a command of the project's session"),
            )
            .hint("This is a bug in Corral: the two sides disagree on the commands.")),
        }
    }

    /// Runs a call (by its ticket, or checked and run in one), stoppable
    /// by `cancel(run_id)`. A call in `conversation` asks about a domain
    /// off the egress allowlist when someone listens, as the window's do.
    async fn run_tool(
        &self,
        run: RunArgs,
        conversation: Option<String>,
        output: Option<OutputSink>,
        go: impl AsyncFnOnce(RunContext) -> Result<Value, Error>,
    ) -> Result<Value, Error> {
        let mut shell = ShellRun {
            on_output: output,
            ..ShellRun::default()
        };
        if let Some(conversation) = conversation.filter(|_| self.domains.listening()) {
            let domains = self.domains.clone();
            let notify: Notify = Arc::new(move |question: DomainQuestion| domains.tell(question));
            shell.egress.ask = Some(self.domains.hook(Asking {
                conversation,
                notify,
                cancel: shell.cancel.clone(),
                on_output: shell.on_output.clone(),
                wait: QUESTION_WAIT,
            }));
        }
        let context = RunContext {
            shell,
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
pub struct ConversationArgs {
    pub conversation: String,
}

#[derive(Deserialize)]
struct AnswerDomainArgs {
    id: String,
    allow: bool,
}

#[derive(Deserialize)]
struct RevokeArgs {
    conversation: String,
    id: String,
}

#[derive(Deserialize)]
struct ProcessArgs {
    run_id: String,
    since_byte: Option<u64>,
}

#[derive(Deserialize)]
struct TreeArgs {
    since: u64,
}

#[derive(Deserialize)]
struct RestartArgs {
    name: String,
}

/// The user's servers, as a host sends them to a remote project's session.
#[derive(Deserialize)]
pub struct ServersArgs {
    pub servers: Vec<ServerArgs>,
}

/// One of the user's MCP servers and its variables' values.
#[derive(Serialize, Deserialize)]
pub struct ServerArgs {
    pub config: McpServerConfig,
    pub vars: Vec<(String, String)>,
}

#[derive(Deserialize)]
struct RunHooksArgs {
    request: corral_session::hooks::HookRequest,
}

#[derive(Deserialize)]
struct SkillFileArgs {
    source: SetupSource,
    folder: String,
    file: Option<String>,
}

#[derive(Deserialize)]
pub struct CancelArgs {
    pub run_id: String,
}
