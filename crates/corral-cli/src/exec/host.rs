//! The agent loop's IPC served without the window, for `corral-cli exec`
//! and `corral-cli acp` alike: the app's commands (docs/ipc.md) by the same
//! name and arguments, over the same crates — the session for tools and
//! approvals, corral-llm for the model, corral-history for the conversation
//! — plus what only the host's user gives ([`Front`]): `ask_approval`, the
//! one question the loop asks, `wait_stop`, and the run's events.

use super::engine::Host;
use super::render::Render;
use corral_history::History;
use corral_host::wire::parse;
use corral_host::{CancelArgs, ModelCommands, ProjectCommands, Serves};
use corral_remote::RemoteSession;
use corral_session::runs::Runs;
use corral_session::Session;
use corral_tools::{Error, ErrorCode};
use serde::Deserialize;
use serde_json::Value;
use std::io::{BufRead, IsTerminal, Write};
use std::sync::Arc;

pub(crate) use corral_host::Model;

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
    /// The project, as the question names it.
    pub root: String,
}

impl Front for Terminal {
    /// Asks the user on the terminal, or no one.
    async fn ask(&self, question: Value) -> Result<Value, Error> {
        let args: ApprovalQuestion = parse("ask_approval", question)?;
        let answer = match self.asker {
            Asker::NoOne => ("deny", "no_terminal"),
            Asker::Terminal => {
                // The MCP question's text: every field on its own line,
                // whole, what is not visibly drawn marked by its code
                // point (a C1 control, a bidi override, a run of blanks),
                // so nothing the model wrote can draw or hide on the
                // terminal. Too long to show whole: not asked, denied.
                let reason = if args.reason.is_empty() {
                    "it needs approval"
                } else {
                    &args.reason
                };
                match corral_mcp::question::question(&self.root, reason, &args.name, &args.input) {
                    Ok(text) => {
                        let question = format!("corral: {text} [y/N] ");
                        let yes = tokio::task::spawn_blocking(move || ask_terminal(&question))
                            .await
                            .unwrap_or(false);
                        (if yes { "once" } else { "deny" }, "terminal")
                    }
                    Err(long) => {
                        let _ = writeln!(
                            std::io::stderr(),
                            "corral: {} wants approval, but the call is {} characters long, too long to show whole: denied",
                            corral_mcp::question::reveal(&args.name),
                            long.chars
                        );
                        ("deny", "terminal")
                    }
                }
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

/// Where the project is: a session here, or one on a remote over ssh.
pub(crate) enum Project {
    Local(ProjectCommands),
    Remote(Box<RemoteSession>),
}

impl Project {
    /// A session opened here.
    pub fn local(session: Arc<Session>) -> Project {
        Project::Local(ProjectCommands::new(session, Arc::default()))
    }

    /// The project's key in the history: its root as the window shows it.
    pub fn name(&self) -> String {
        match self {
            Project::Local(local) => local.session.root().path().display().to_string(),
            Project::Remote(remote) => remote.remote().display(),
        }
    }

    async fn invoke(&self, command: &str, args: Value) -> Result<Value, Error> {
        match self {
            Project::Local(local) => local.invoke(command, args, None).await,
            Project::Remote(remote) => remote.invoke(command, args, None).await,
        }
    }
}

/// The loop's IPC over a project's session, served to one run of the script.
pub(crate) struct LoopHost<F: Front> {
    pub project: Project,
    pub history: Arc<History>,
    /// The project's key in the history (its root as the window shows it).
    pub name: String,
    pub model: Arc<Model>,
    pub front: F,
    /// The key every call's grants are held under, whatever key the
    /// script gives: an ACP session runs a new loop (with a new key) per
    /// prompt, and what the editor allowed lasts for the whole session.
    pub grants_key: Option<String>,
    /// The id a new conversation takes (an ACP session's id); `None`: a
    /// new one.
    pub new_id: Option<String>,
    /// Model streams running, for `cancel(run_id)` (a local project's
    /// commands share it).
    runs: Arc<Runs>,
}

impl<F: Front> LoopHost<F> {
    pub fn new(
        project: Project,
        history: Arc<History>,
        model: Arc<Model>,
        front: F,
    ) -> LoopHost<F> {
        let name = project.name();
        let runs = match &project {
            Project::Local(local) => local.runs.clone(),
            Project::Remote(_) => Arc::default(),
        };
        LoopHost {
            project,
            history,
            name,
            model,
            front,
            grants_key: None,
            new_id: None,
            runs,
        }
    }

    /// `args` with the conversation the grants are held under.
    fn keyed(&self, mut args: Value) -> Value {
        if let (Some(key), Some(object)) = (&self.grants_key, args.as_object_mut()) {
            object.insert("conversation".into(), Value::String(key.clone()));
        }
        args
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
        match command {
            "check_call" | "call_tool" | "conversation_grants" | "revoke_grant" => {
                self.project.invoke(command, self.keyed(args)).await
            }
            "end_conversation" => {
                // A session's key ends with the session, not with a loop.
                if self.grants_key.is_none() {
                    self.project.invoke(command, args).await?;
                }
                Ok(Value::Null)
            }
            "cancel" => {
                let a: CancelArgs = parse(command, args)?;
                self.runs.cancel(&a.run_id);
                if let Project::Remote(remote) = &self.project {
                    let args = serde_json::json!({ "run_id": a.run_id });
                    remote.invoke(command, args, None).await?;
                }
                Ok(Value::Null)
            }
            // The model and the history are this machine's, whatever the project.
            command if corral_host::command(command).is_some_and(|c| c.serves == Serves::Model) => {
                let model = ModelCommands {
                    model: Arc::clone(&self.model),
                    history: Arc::clone(&self.history),
                    project: Some(self.name.clone()),
                    runs: Arc::clone(&self.runs),
                    new_id: self.new_id.clone(),
                };
                model.invoke(command, args, Some(events)).await
            }
            command if corral_host::is_command(command) => self.project.invoke(command, args).await,
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

#[derive(Deserialize)]
struct ApprovalQuestion {
    name: String,
    input: Value,
    #[serde(default)]
    reason: String,
}

#[cfg(test)]
mod tests {
    // Fixtures in temporary folders, not a project's files.
    #![allow(clippy::unwrap_used, clippy::disallowed_methods)]
    use super::*;
    use corral_host::COMMANDS;

    /// A front no one stands behind: every question denied.
    struct NoOne;

    impl Front for NoOne {
        async fn ask(&self, _question: Value) -> Result<Value, Error> {
            Ok(serde_json::json!({ "decision": "deny", "by": "no_terminal" }))
        }

        async fn stopped(&self) {
            std::future::pending::<()>().await;
        }

        fn emit(&self, _event: Value) {}
    }

    /// exec's and acp's loop host answers every command of the table, the
    /// project's and the model's and history's alike, with the same code
    /// as the window and serve: none is "not a command" here.
    #[test]
    fn the_loop_host_answers_every_command_of_the_table() {
        let project = tempfile::tempdir().unwrap();
        let data = tempfile::tempdir().unwrap();
        let session = Session::open(
            project.path(),
            Arc::new(corral_session::Fixed::default()),
            corral_session::Options::default(),
        )
        .unwrap();
        let store =
            corral_config::Store::without_keychain(data.path().join("c"), data.path().join("d"));
        let host = LoopHost::new(
            Project::local(Arc::new(session)),
            Arc::new(History::new(&data.path().join("d"))),
            Arc::new(Model { store, fixed: None }),
            NoOne,
        );
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        // No model server listens here: a stream is not tried.
        for command in COMMANDS.iter().filter(|c| c.name != "llm_stream") {
            let answer =
                runtime.block_on(host.invoke(command.name, serde_json::json!({}), &|_| {}));
            if let Err(e) = answer {
                assert!(
                    !e.message.contains("is not a command"),
                    "{}: {}",
                    command.name,
                    e.message
                );
            }
        }
        let unknown = runtime
            .block_on(host.invoke("open_project", serde_json::json!({}), &|_| {}))
            .unwrap_err();
        assert!(
            unknown.message.contains("is not a command"),
            "{}",
            unknown.message
        );
    }
}
