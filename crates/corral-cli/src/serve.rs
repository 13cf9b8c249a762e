//! `corral-cli serve`: a project's session kept open on this machine for
//! a client at the other end of stdin/stdout — a
//! [`corral_remote::RemoteSession`] over ssh. One JSON object a line
//! (docs/remote.md has the protocol):
//!
//! - first, `{"ready": {"version", "root"}}`, or `{"failed": ERROR}` when
//!   the project could not be opened;
//! - in: `{"id": N, "command": NAME, "args": {...}, "output": BOOL}`, a
//!   command of the project's table ([`corral_host::COMMANDS`]), answered
//!   by the same code as the window's and exec's;
//! - out: `{"id": N, "event": {"stream", "data"}}` for each chunk of a
//!   command's output when `output` was asked, then `{"id": N, "ok":
//!   VALUE}` or `{"id": N, "error": ERROR}`.
//!
//! Three more commands are serve's own, the settings the near side sends:
//! `use_mcp_servers {servers}`, the user's MCP servers with their
//! variables' values, run here; `use_settings {programs, rules,
//! trusted_hooks, trust_project_hooks}`, the near side's user's added
//! programs, the project's saved rules and the hooks' trust given there
//! ([`SentSettings`]). They are the only settings serve has: nothing on the
//! remote machine adds to them. And `domain_questions {}`: from then on, a
//! command of a conversation that meets a domain off the egress allowlist
//! asks the client, pushing `{"question": DomainQuestion}` (no id) and
//! waiting for `answer_domain {id, allow}`; before it, such a domain is
//! refused at once, as exec refuses it.
//!
//! Requests are answered as they finish, not in order. When stdin ends
//! (the client left, or the connection was lost) every running call is
//! cancelled, the sandbox kills what they started, and serve exits,
//! stopping its background commands with the session: a command is never
//! left running with no one to see it.

use crate::Kept;
use corral_host::tasks::Tasks;
use corral_host::wire::{parse, to_value};
use corral_host::{ProjectCommands, ServersArgs};
use corral_session::{Session, Settings};
use corral_tools::policy::Mode;
use corral_tools::search::IndexConfig;
use corral_tools::shell::{OutputSink, SavedRule};
use corral_tools::Error;
use serde::Deserialize;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::rc::Rc;
use std::sync::{Arc, Mutex, PoisonError};

#[derive(clap::Args)]
pub struct ServeArgs {
    /// The project folder every path is confined to.
    #[arg(long)]
    root: PathBuf,
    /// Permission mode calls are judged in: read_only, ask, auto_edit,
    /// full_auto.
    #[arg(long, default_value = "ask")]
    mode: String,
    /// Allow writes only beneath this path (repeatable).
    #[arg(long, value_name = "PATH")]
    writable: Vec<String>,
    /// A path no tool may touch (repeatable).
    #[arg(long, value_name = "PATH")]
    blocked: Vec<String>,
    #[command(flatten)]
    kept: Kept,
}

/// One request of the client's.
#[derive(Deserialize)]
struct Request {
    id: u64,
    command: String,
    #[serde(default)]
    args: Value,
    /// Stream a command's output as events.
    #[serde(default)]
    output: bool,
}

/// serve's settings: the mode of its flag, and what the near side sent
/// with `use_settings` (nothing until it does). A rule "always allowed"
/// there is saved on the near side, which sends its settings again; serve
/// saves nothing of its own.
struct SentSettings {
    mode: Mode,
    sent: Mutex<Sent>,
}

/// The arguments of a command that takes none.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NoArgs {}

/// `use_settings`'s arguments.
#[derive(Deserialize, Default, Clone)]
#[serde(deny_unknown_fields)]
struct Sent {
    /// The programs the user added, for every project and for this one.
    #[serde(default)]
    programs: Vec<String>,
    /// The rules saved for this project.
    #[serde(default)]
    rules: Vec<SavedRule>,
    /// The project's settings files whose hooks the user trusted, each
    /// with the exact text trusted.
    #[serde(default)]
    trusted_hooks: BTreeMap<String, String>,
    /// The project's hooks run whatever their text (exec's
    /// `--trust-project-hooks`).
    #[serde(default)]
    trust_project_hooks: bool,
}

impl SentSettings {
    fn sent(&self) -> std::sync::MutexGuard<'_, Sent> {
        self.sent.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Settings for SentSettings {
    fn mode(&self) -> Mode {
        self.mode
    }
    fn shell_grants(&self, _root: &Path) -> (Vec<String>, Vec<SavedRule>) {
        let sent = self.sent();
        (sent.programs.clone(), sent.rules.clone())
    }
    fn save_rule(&self, _root: &Path, rule: SavedRule) -> Result<(), Error> {
        Err(Error::invalid_input(format!(
            "a remote project keeps no rules of its own, so `{rule}` cannot be always allowed there"
        ))
        .hint("Approve the call once, or for the conversation."))
    }
    fn hooks_trusted(&self, _root: &Path, file: &str, text: &str) -> bool {
        let sent = self.sent();
        sent.trust_project_hooks || sent.trusted_hooks.get(file).is_some_and(|t| t == text)
    }
}

/// Serves until stdin ends.
pub fn serve(args: ServeArgs) -> ExitCode {
    let settings = match args.mode.parse() {
        Ok(mode) => Arc::new(SentSettings {
            mode,
            sent: Mutex::default(),
        }),
        Err(e) => {
            send(&json!({ "failed": e.to_json() }));
            return ExitCode::FAILURE;
        }
    };
    let (session, tasks) = match open(args, settings.clone()) {
        Ok(opened) => opened,
        Err(e) => {
            send(&json!({ "failed": e.to_json() }));
            return ExitCode::FAILURE;
        }
    };
    let runtime = match crate::runtime() {
        Ok(runtime) => runtime,
        Err(e) => {
            send(&json!({ "failed": e.to_json() }));
            return ExitCode::FAILURE;
        }
    };
    send(&json!({ "ready": {
        "version": corral_remote::VERSION,
        "root": session.root().path().display().to_string(),
    }}));
    let (lines, mut received) = tokio::sync::mpsc::unbounded_channel();
    std::thread::spawn(move || {
        for line in std::io::stdin().lock().lines() {
            let Ok(line) = line else { break };
            if lines.send(line).is_err() {
                break;
            }
        }
    });
    let runs = Arc::new(corral_session::runs::Runs::default());
    let served = Rc::new(Served {
        commands: ProjectCommands::new(Arc::new(session), runs.clone()),
        settings,
        tasks,
    });
    let local = tokio::task::LocalSet::new();
    local.block_on(&runtime, async {
        let mut answering = tokio::task::JoinSet::new();
        while let Some(line) = received.recv().await {
            match serde_json::from_str::<Request>(&line) {
                Ok(request) => {
                    answering.spawn_local(answer(served.clone(), request));
                }
                Err(e) => send(&json!({
                    "id": null,
                    "error": Error::invalid_input(format!("a request that is not one: {e}")).to_json(),
                })),
            }
            // Reap the answered ones as we go.
            while answering.try_join_next().is_some() {}
        }
        // The client is gone: nothing it started goes on running.
        runs.cancel_all();
        while answering.join_next().await.is_some() {}
    });
    ExitCode::SUCCESS
}

/// The project's session, and its tasks (their worktrees in the remote
/// user's data folder; none without one).
fn open(
    mut args: ServeArgs,
    settings: Arc<SentSettings>,
) -> Result<(Session, Option<Arc<Tasks>>), Error> {
    // The index lives where the app keeps a local project's, in the
    // remote user's data folder, unless `--index` says where.
    let data = corral_tools::checkpoint::default_data_dir();
    if args.kept.index.is_none() {
        args.kept.index = data.as_ref().map(|data| data.join("search-index"));
    }
    // A task's session: as the project's, on its worktree, without a
    // watch of its own (the window shows the project's tree).
    let (kept, writable, blocked) = (
        args.kept.clone(),
        args.writable.clone(),
        args.blocked.clone(),
    );
    let task_options = move || corral_session::Options {
        background_commands: true,
        ..kept.clone().options(
            crate::boundaries(writable.clone(), blocked.clone()),
            IndexConfig::new,
        )
    };
    // The session lasts: its index and the folders changed on disk are
    // kept live by a watch, as the app's are.
    let options = corral_session::Options {
        build_index: true,
        watch_tree: true,
        background_commands: true,
        warm_language_servers: true,
        ..args.kept.options(
            crate::boundaries(args.writable, args.blocked),
            IndexConfig::prebuilt,
        )
    };
    let session = Session::open(&args.root, settings.clone(), options)?;
    let tasks = data.map(|data| {
        Arc::new(Tasks::new(
            session.root().path(),
            &data,
            settings,
            task_options,
        ))
    });
    Ok((session, tasks))
}

/// The project's commands, serve's settings for `use_settings`, and the
/// project's tasks.
struct Served {
    commands: ProjectCommands,
    settings: Arc<SentSettings>,
    tasks: Option<Arc<Tasks>>,
}

impl Served {
    async fn invoke(
        &self,
        command: &str,
        args: Value,
        sink: Option<OutputSink>,
    ) -> Result<Value, Error> {
        match command {
            "use_settings" => {
                let sent: Sent = parse(command, args)?;
                *self.settings.sent() = sent;
                // What the trust changed: the hooks that run now, and those that wait.
                to_value(self.commands.session.hook_status())
            }
            "domain_questions" => {
                let _: NoArgs = parse(command, args)?;
                // Pushed as they come, between the answers.
                self.commands
                    .domains
                    .listen(Arc::new(|question| send(&json!({ "question": question }))));
                Ok(Value::Null)
            }
            // The user's servers, run where the project is.
            "use_mcp_servers" => {
                let a: ServersArgs = parse(command, args)?;
                let servers = a.servers.into_iter().map(|s| (s.config, s.vars)).collect();
                let session = &self.commands.session;
                session.replace_servers(servers).await;
                to_value(session.server_status())
            }
            _ => self.project_or_task(command, args, sink).await,
        }
    }

    /// A command of the table in the project's session, or in its task's
    /// (`task` in its arguments); or one of the tasks' own commands.
    async fn project_or_task(
        &self,
        command: &str,
        mut args: Value,
        sink: Option<OutputSink>,
    ) -> Result<Value, Error> {
        let tasks = || {
            self.tasks.clone().ok_or_else(|| {
                Error::invalid_input("this machine has no data folder for a task's worktree")
                    .hint("Set HOME or XDG_DATA_HOME for the user serve runs as.")
            })
        };
        if corral_host::tasks::is_task_command(command) {
            let tasks = tasks()?;
            let command = command.to_string();
            let answered = tokio::task::spawn_blocking(move || tasks.answer(&command, args))
                .await
                .map_err(|e| {
                    Error::new(
                        corral_tools::ErrorCode::Io,
                        format!("the task's work stopped: {e}"),
                    )
                })?;
            return answered.unwrap_or_else(|| {
                Err(Error::new(
                    corral_tools::ErrorCode::NotFound,
                    "no such task command",
                ))
            });
        }
        let task = args
            .as_object_mut()
            .and_then(|args| args.remove("task"))
            .and_then(|task| task.as_str().map(str::to_string));
        match task {
            Some(task) => {
                let session = tasks()?.session(&task)?;
                let commands = ProjectCommands {
                    session,
                    runs: self.commands.runs.clone(),
                    domains: self.commands.domains.clone(),
                };
                commands.invoke(command, args, sink).await
            }
            None => self.commands.invoke(command, args, sink).await,
        }
    }
}

async fn answer(served: Rc<Served>, request: Request) {
    let Request {
        id,
        command,
        mut args,
        output,
    } = request;
    // Every run gets an id, so that the end of the connection reaches it.
    if matches!(command.as_str(), "run_call" | "call_tool") {
        if let Some(object) = args.as_object_mut() {
            object
                .entry("run_id")
                .or_insert_with(|| Value::String(format!("serve-{id}")));
        }
    }
    // Decoded and cut off as the window's is: a character split between
    // two chunks stays whole, and 100 MB of output is not sent live.
    let sink: Option<OutputSink> = output
        .then(|| corral_host::live_sink(move |event| send(&json!({ "id": id, "event": event }))));
    match served.invoke(&command, args, sink).await {
        Ok(value) => send(&json!({ "id": id, "ok": value })),
        Err(e) => send(&json!({ "id": id, "error": e.to_json() })),
    }
}

/// Writes one message as one line; stdout carries nothing else.
fn send(message: &Value) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{message}");
    let _ = out.flush();
}
