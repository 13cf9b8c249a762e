//! `corral-cli acp`: Corral as an Agent Client Protocol agent over stdio,
//! for editors (Zed and others). One more host of exec's engine: each
//! `session/prompt` runs the app's agent loop (the bundle's `corralAcp`
//! entry) over a [`LoopHost`] whose user is the editor ([`EditorFront`]),
//! going on with the session's conversation from the project's history;
//! `session/load` replays a stored conversation as updates. docs/acp.md
//! has the messages and how approvals map onto permission options.

mod front;
mod peer;

use crate::exec::host::{LoopHost, Model, Project};
use crate::exec::{engine, model, runtime, user_mcp_servers, CliSettings, ModelArgs};
use crate::Kept;
use corral_history::{History, Part};
use corral_session::{Options, Session};
use corral_tools::policy::Mode;
use corral_tools::search::IndexConfig;
use corral_tools::{Error, ErrorCode};
use front::EditorFront;
use peer::{Peer, INTERNAL, INVALID_PARAMS, METHOD_NOT_FOUND, PARSE_ERROR};
use serde::Deserialize;
use serde_json::{json, Value};
use std::cell::RefCell;
use std::collections::HashMap;
use std::io::BufRead;
use std::path::PathBuf;
use std::process::ExitCode;
use std::rc::Rc;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// The ACP version spoken.
const PROTOCOL_VERSION: u64 = 1;

#[derive(clap::Args)]
pub struct AcpArgs {
    /// Permission mode of new sessions: ask (the default: the editor is
    /// asked before any change or command), read_only, auto_edit,
    /// full_auto. A session's `_meta.corral.mode` overrides it.
    #[arg(long, default_value = "ask")]
    mode: String,
    #[command(flatten)]
    model: ModelArgs,
    #[command(flatten)]
    kept: Kept,
}

/// One ACP session: a project's session, and the conversation its
/// prompts go on with (none before the first is stored).
struct Live {
    session: Arc<Session>,
    conversation: Option<String>,
    /// The turn running, stopped by `session/cancel`.
    turn: Option<CancellationToken>,
}

/// What every request is served with.
struct Agent {
    peer: Arc<Peer>,
    mode: Mode,
    store: corral_config::Store,
    kept: Kept,
    model: Arc<Model>,
    history: Arc<History>,
    sessions: RefCell<HashMap<String, Live>>,
    /// The editor left: a turn that would start now is stopped at once.
    left: std::cell::Cell<bool>,
}

/// Serves the editor on stdin/stdout until it closes stdin.
pub fn acp(args: AcpArgs) -> ExitCode {
    match serve(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("{}", error.to_json());
            ExitCode::FAILURE
        }
    }
}

fn serve(args: AcpArgs) -> Result<(), Error> {
    let mode: Mode = args.mode.parse()?;
    let store = corral_config::Store::for_user().ok_or_else(|| {
        Error::invalid_input("there is no home folder for the app's settings ($HOME)")
    })?;
    let model = Arc::new(model(store.clone(), &args.model)?);
    let agent = Rc::new(Agent {
        peer: Arc::default(),
        mode,
        history: Arc::new(History::new(store.data_dir())),
        store,
        kept: args.kept,
        model,
        sessions: RefCell::default(),
        left: std::cell::Cell::new(false),
    });
    // stdin is read on a thread of its own: a turn runs while the editor
    // answers permissions and cancels.
    let (lines, mut incoming) = tokio::sync::mpsc::unbounded_channel::<String>();
    std::thread::spawn(move || {
        for line in std::io::stdin().lock().lines() {
            let Ok(line) = line else { break };
            if lines.send(line).is_err() {
                break;
            }
        }
    });
    let local = tokio::task::LocalSet::new();
    // Requests being answered, so the editor's leaving can wait for them.
    let answering = Rc::new(std::cell::Cell::new(0usize));
    local.block_on(&runtime()?, async move {
        while let Some(line) = incoming.recv().await {
            if line.trim().is_empty() {
                continue;
            }
            let message: Value = match serde_json::from_str(&line) {
                Ok(message) => message,
                Err(e) => {
                    let error = Error::invalid_input(format!("not a JSON-RPC message: {e}"));
                    agent.peer.fail(&Value::Null, PARSE_ERROR, &error);
                    continue;
                }
            };
            let method = message.get("method").and_then(Value::as_str);
            match (method, message.get("id")) {
                (Some(method), Some(id)) => {
                    let (agent, method, id) = (agent.clone(), method.to_string(), id.clone());
                    let params = message.get("params").cloned().unwrap_or(Value::Null);
                    let answering = answering.clone();
                    answering.set(answering.get() + 1);
                    tokio::task::spawn_local(async move {
                        match agent.request(&method, params).await {
                            Ok(result) => agent.peer.respond(&id, result),
                            Err((code, error)) => agent.peer.fail(&id, code, &error),
                        }
                        answering.set(answering.get() - 1);
                    });
                }
                (Some("session/cancel"), None) => agent.cancel(message.get("params")),
                (Some(_), None) => {} // A notification Corral does not take.
                (None, _) => agent.peer.answered(&message),
            }
        }
        // The editor left (its stdin closed, or it was killed): every turn
        // and its running command stop now, not at the command's time
        // limit; each turn is given a moment to store what it had.
        agent.cancel_all();
        let left = tokio::time::Instant::now();
        while answering.get() > 0 && left.elapsed() < LEAVING {
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    });
    Ok(())
}

/// How long the turns of an editor that left are waited for.
const LEAVING: std::time::Duration = std::time::Duration::from_millis(1500);

type Failure = (i64, Error);

fn bad_params(error: Error) -> Failure {
    (INVALID_PARAMS, error)
}

fn internal(error: Error) -> Failure {
    (INTERNAL, error)
}

fn params<T: for<'de> Deserialize<'de>>(method: &str, params: Value) -> Result<T, Failure> {
    serde_json::from_value(params).map_err(|e| {
        bad_params(Error::invalid_input(format!(
            "the params of `{method}` do not fit: {e}"
        )))
    })
}

#[derive(Deserialize)]
struct NewParams {
    cwd: PathBuf,
    #[serde(rename = "_meta")]
    meta: Option<Value>,
}

#[derive(Deserialize)]
struct LoadParams {
    #[serde(rename = "sessionId")]
    session_id: String,
    cwd: PathBuf,
    #[serde(rename = "_meta")]
    meta: Option<Value>,
}

/// A method's params that name one session.
#[derive(Deserialize)]
struct Named {
    #[serde(rename = "sessionId")]
    session_id: String,
}

#[derive(Deserialize)]
struct ListParams {
    cwd: Option<PathBuf>,
}

#[derive(Deserialize)]
struct PromptParams {
    #[serde(rename = "sessionId")]
    session_id: String,
    prompt: Vec<Value>,
}

impl Agent {
    async fn request(&self, method: &str, p: Value) -> Result<Value, Failure> {
        match method {
            "initialize" => Ok(json!({
                "protocolVersion": PROTOCOL_VERSION,
                "agentCapabilities": {
                    "loadSession": true,
                    "sessionCapabilities": { "list": {}, "resume": {}, "close": {}, "delete": {} },
                    "promptCapabilities": { "image": false, "audio": false, "embeddedContext": true },
                },
                "authMethods": [],
                "agentInfo": { "name": "corral", "title": "Corral", "version": env!("CARGO_PKG_VERSION") },
            })),
            "session/new" => {
                let p: NewParams = params(method, p)?;
                let (cwd, made) = self.place(&p.cwd, p.meta.as_ref())?;
                let session = self.open_as(&cwd, p.meta.as_ref(), &p.cwd).await?;
                let id = uuid::Uuid::new_v4().to_string();
                self.sessions.borrow_mut().insert(
                    id.clone(),
                    Live {
                        session,
                        conversation: None,
                        turn: None,
                    },
                );
                Ok(match made {
                    // Where the session works, for the editor to show.
                    Some(made) => json!({ "sessionId": id, "_meta": { "corral": {
                        "worktree": made.path, "branch": made.branch } } }),
                    None => json!({ "sessionId": id }),
                })
            }
            "session/load" => self.load(params(method, p)?).await,
            "session/resume" => self.resume(params(method, p)?).await,
            "session/list" => self.list(params(method, p)?),
            "session/close" => {
                let p: Named = params(method, p)?;
                // Its turn and commands stop; what was stored stays.
                if let Some(live) = self.sessions.borrow_mut().remove(&p.session_id) {
                    if let Some(turn) = live.turn {
                        turn.cancel();
                    }
                }
                Ok(json!({}))
            }
            "session/delete" => {
                let p: Named = params(method, p)?;
                let live = self.sessions.borrow_mut().remove(&p.session_id);
                let id = live
                    .as_ref()
                    .and_then(|l| l.conversation.clone())
                    .unwrap_or_else(|| p.session_id.clone());
                if let Some(project) = self.history.project_of(&id).map_err(bad_params)? {
                    self.history.delete(&project, &id).map_err(bad_params)?;
                } else if live.is_none() {
                    return Err(bad_params(Error::new(
                        ErrorCode::NotFound,
                        format!("no session `{}`", p.session_id),
                    )));
                }
                Ok(json!({}))
            }
            "session/prompt" => self.prompt(params(method, p)?).await,
            other => Err((
                METHOD_NOT_FOUND,
                Error::new(
                    ErrorCode::NotFound,
                    format!("`{other}` is not a method corral-cli acp serves"),
                ),
            )),
        }
    }

    /// Where a new session works: `cwd`, or with `_meta.corral.worktree`
    /// (a task's name, or `true`) a new git worktree of the project at
    /// `cwd` on a branch `corral/<name>` of its own, made now.
    fn place(
        &self,
        cwd: &std::path::Path,
        meta: Option<&Value>,
    ) -> Result<(PathBuf, Option<corral_host::worktree::Worktree>), Failure> {
        let name = match meta.and_then(|m| m.pointer("/corral/worktree")) {
            None | Some(Value::Null | Value::Bool(false)) => return Ok((cwd.to_path_buf(), None)),
            Some(Value::Bool(true)) => "task".to_string(),
            Some(Value::String(name)) => name.clone(),
            Some(other) => {
                return Err(bad_params(Error::invalid_input(format!(
                    "`_meta.corral.worktree` is a task's name or true, not {other}"
                ))))
            }
        };
        if !cwd.is_absolute() || !cwd.is_dir() {
            return Err(bad_params(
                Error::invalid_input(format!("`{}` is not a folder", cwd.display()))
                    .hint("The session's cwd is the project's folder, as an absolute path."),
            ));
        }
        let made =
            corral_host::worktree::make(cwd, self.store.data_dir(), &name).map_err(bad_params)?;
        Ok((made.path.clone(), Some(made)))
    }

    /// The project's session at `cwd`, in the mode of `_meta.corral.mode`
    /// or the flag.
    async fn open(
        &self,
        cwd: &std::path::Path,
        meta: Option<&Value>,
    ) -> Result<Arc<Session>, Failure> {
        self.open_as(cwd, meta, cwd).await
    }

    /// The session at `cwd` judged with the settings of `project` (a
    /// task's worktree is judged by its project's rules and trust).
    async fn open_as(
        &self,
        cwd: &std::path::Path,
        meta: Option<&Value>,
        project: &std::path::Path,
    ) -> Result<Arc<Session>, Failure> {
        let mode = match meta
            .and_then(|m| m.pointer("/corral/mode"))
            .and_then(Value::as_str)
        {
            Some(mode) => mode.parse().map_err(bad_params)?,
            None => self.mode,
        };
        if !cwd.is_absolute() || !cwd.is_dir() {
            return Err(bad_params(
                Error::invalid_input(format!("`{}` is not a folder", cwd.display()))
                    .hint("The session's cwd is the project's folder, as an absolute path."),
            ));
        }
        let settings: Arc<dyn corral_session::Settings> = Arc::new(CliSettings {
            mode,
            store: self.store.clone(),
            // The project's hooks run once trusted in the window.
            trust_project_hooks: false,
        });
        let settings: Arc<dyn corral_session::Settings> = if cwd == project {
            settings
        } else {
            Arc::new(corral_host::tasks::TaskSettings {
                inner: settings,
                project: project.to_path_buf(),
            })
        };
        let options = Options {
            mcp_servers: user_mcp_servers(&self.store),
            ..self
                .kept
                .clone()
                .options(Default::default(), IndexConfig::new)
        };
        let session = Session::open(cwd, settings, options)
            .map(Arc::new)
            .map_err(bad_params)?;
        // The user's MCP servers, as the window starts them.
        session.start_servers().await;
        Ok(session)
    }

    /// Replays a stored conversation (the session's, or one of the
    /// history's by its id) as updates, then answers.
    async fn load(&self, p: LoadParams) -> Result<Value, Failure> {
        let live = self
            .sessions
            .borrow()
            .get(&p.session_id)
            .map(|live| (live.session.clone(), live.conversation.clone()));
        let (session, conversation) = match live {
            Some((session, Some(conversation))) => (session, conversation),
            Some((session, None)) => (session, p.session_id.clone()),
            None => (
                self.open(&p.cwd, p.meta.as_ref()).await?,
                p.session_id.clone(),
            ),
        };
        let project = session.root().path().display().to_string();
        let part = Part {
            last: Some(1),
            ..Part::default()
        };
        self.history
            .open_part(&project, &conversation, part)
            .map_err(bad_params)?;
        let request = json!({ "root": project, "prompt": null, "resume": conversation });
        self.run(
            &p.session_id,
            session.clone(),
            request,
            CancellationToken::new(),
        )
        .await?;
        self.sessions.borrow_mut().insert(
            p.session_id,
            Live {
                session,
                conversation: Some(conversation),
                turn: None,
            },
        );
        Ok(Value::Null)
    }

    /// `session/list`: the project's stored conversations at `cwd`, newest
    /// first, each by its history id (what `session/load` and
    /// `session/resume` take).
    fn list(&self, p: ListParams) -> Result<Value, Failure> {
        let Some(cwd) = p.cwd else {
            return Err(bad_params(
                Error::invalid_input("session/list lists the sessions of one project")
                    .hint("Give the project's folder as `cwd`."),
            ));
        };
        // The history keys a project by its folder's real path.
        #[allow(clippy::disallowed_methods)]
        let root = std::fs::canonicalize(&cwd).unwrap_or(cwd);
        let project = root.display().to_string();
        let stored = self.history.list(&project).map_err(bad_params)?;
        let sessions: Vec<Value> = stored
            .into_iter()
            .map(|c| {
                json!({
                    "sessionId": c.id,
                    "cwd": project,
                    "title": c.title,
                    "updatedAt": iso_time(c.updated_ms),
                })
            })
            .collect();
        Ok(json!({ "sessions": sessions }))
    }

    /// `session/resume`: goes on with a stored conversation without
    /// replaying it (`session/load` replays it).
    async fn resume(&self, p: LoadParams) -> Result<Value, Failure> {
        let session = self.open(&p.cwd, p.meta.as_ref()).await?;
        let project = session.root().path().display().to_string();
        let part = Part {
            last: Some(1),
            ..Part::default()
        };
        self.history
            .open_part(&project, &p.session_id, part)
            .map_err(bad_params)?;
        self.sessions.borrow_mut().insert(
            p.session_id.clone(),
            Live {
                session,
                conversation: Some(p.session_id),
                turn: None,
            },
        );
        Ok(json!({}))
    }

    async fn prompt(&self, p: PromptParams) -> Result<Value, Failure> {
        let stop = CancellationToken::new();
        let (session, conversation) = {
            let mut sessions = self.sessions.borrow_mut();
            let live = sessions.get_mut(&p.session_id).ok_or_else(|| {
                bad_params(
                    Error::new(
                        ErrorCode::NotFound,
                        format!("no session `{}`", p.session_id),
                    )
                    .hint("Start one with session/new, or load it with session/load."),
                )
            })?;
            if live.turn.is_some() {
                return Err(bad_params(Error::invalid_input(
                    "the session is running a prompt already",
                )));
            }
            live.turn = Some(stop.clone());
            if self.left.get() {
                // Read before the editor left, started after: stopped.
                stop.cancel();
            }
            (live.session.clone(), live.conversation.clone())
        };
        let project = session.root().path().display().to_string();
        let request =
            json!({ "root": project, "prompt": prompt_text(&p.prompt), "resume": conversation });
        let answer = self.run(&p.session_id, session, request, stop).await;
        let mut sessions = self.sessions.borrow_mut();
        let live = sessions.get_mut(&p.session_id);
        if let Some(live) = live {
            live.turn = None;
            if let Ok(answer) = &answer {
                if let Some(id) = answer["conversation"].as_str() {
                    live.conversation = Some(id.to_string());
                }
            }
        }
        let answer = answer?;
        match answer["stopReason"].as_str() {
            Some("error") => {
                let error: Error = serde_json::from_value(answer["error"].clone())
                    .unwrap_or_else(|_| Error::new(ErrorCode::Io, "the model failed"));
                Err(internal(error))
            }
            reason => Ok(json!({ "stopReason": reason.unwrap_or("end_turn") })),
        }
    }

    /// Runs the script's `corralAcp` entry once over this session.
    async fn run(
        &self,
        session_id: &str,
        session: Arc<Session>,
        request: Value,
        stop: CancellationToken,
    ) -> Result<Value, Failure> {
        let front = EditorFront {
            peer: self.peer.clone(),
            session_id: session_id.to_string(),
            stop,
        };
        let mut host = LoopHost::new(
            Project::local(session),
            self.history.clone(),
            self.model.clone(),
            front,
        );
        host.grants_key = Some(session_id.to_string());
        // A new session's conversation is stored under the session's id.
        host.new_id = Some(session_id.to_string());
        let host = Arc::new(host);
        let answer = engine::run(host, engine::SCRIPT, "corralAcp", request)
            .await
            .map_err(internal)?;
        serde_json::from_str(&answer).map_err(|e| {
            internal(Error::new(
                ErrorCode::Io,
                format!("the agent script answered what is not JSON: {e}"),
            ))
        })
    }

    /// Stops every session's turn and running command, and any turn that
    /// starts from now on (the editor left).
    fn cancel_all(&self) {
        self.left.set(true);
        for live in self.sessions.borrow().values() {
            if let Some(turn) = &live.turn {
                turn.cancel();
            }
        }
    }

    /// `session/cancel`: stops the session's turn and any running command;
    /// its prompt answers `cancelled`.
    fn cancel(&self, params: Option<&Value>) {
        let id = params
            .and_then(|p| p.get("sessionId"))
            .and_then(Value::as_str);
        if let Some(live) =
            id.and_then(|id| self.sessions.borrow().get(id).and_then(|l| l.turn.clone()))
        {
            live.cancel();
        }
    }
}

/// Milliseconds since the epoch as RFC 3339, in UTC (`2026-11-29T08:30:00Z`).
fn iso_time(ms: i64) -> Option<String> {
    jiff::Timestamp::from_millisecond(ms)
        .ok()
        .map(|t| t.to_string())
}

/// The prompt's text: its text blocks, a resource's text, a link's URI.
fn prompt_text(blocks: &[Value]) -> String {
    let parts: Vec<String> = blocks
        .iter()
        .filter_map(|block| match block["type"].as_str() {
            Some("text") => block["text"].as_str().map(str::to_string),
            Some("resource_link") => block["uri"].as_str().map(|uri| format!("[{uri}]")),
            Some("resource") => {
                let uri = block
                    .pointer("/resource/uri")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                let text = block.pointer("/resource/text").and_then(Value::as_str)?;
                Some(format!("[{uri}]\n{text}"))
            }
            _ => None,
        })
        .collect();
    parts.join("\n\n")
}
