//! Where the window's project commands go, and a remote project in the
//! window (docs/remote.md). [`route`] stands in front of the app's invoke
//! handler and answers each of the project's commands
//! ([`corral_host::COMMANDS`]) with the open project's session: here, or
//! `corral-cli serve` on the remote, reached over the user's ssh through a
//! [`RemoteSession`], with the window's own arguments. A command's live
//! output comes back on its `on_output` channel. Both sides answer the
//! same table with the same code (`corral-host`). The model, its keys,
//! the history and the approvals stay here.

use crate::store::{ProjectInfo, Store};
use corral_host::kube_task::Wake;
use corral_host::{ModelCommands, ProjectCommands, Serves};
use corral_remote::{OnQuestion, Remote, RemoteSession};
use corral_session::domains::{DomainAnswers, DomainQuestion};
use corral_session::mcp::McpServerConfig;
use corral_session::runs::Runs;
use corral_tools::shell::{ExecShellInput, SavedRule};
use corral_tools::{Error, ErrorCode};
use serde_json::{json, Value};
use std::collections::VecDeque;
use std::path::PathBuf;
use std::str::FromStr;
use std::sync::{Arc, Mutex, PoisonError};
use tauri::ipc::{Channel, Invoke, InvokeBody, JavaScriptChannelId};
use tauri::{Manager, Runtime};

/// How many commands' tickets keep the rule "always allow" would save:
/// as many as a session keeps tickets.
const RULES_KEPT: usize = 256;

/// A project whose session runs on another machine.
pub struct RemoteProject {
    session: RemoteSession,
    /// The commands checked there, each ticket with the rule "always
    /// allow" would save, as worked out here from the call's own input
    /// (newest last). Only such a rule is ever saved for this project.
    rules: Mutex<VecDeque<(String, SavedRule)>>,
    /// The mode its session there runs in (serve's flag, fixed for the
    /// session: another mode is another session).
    pub mode: corral_tools::policy::Mode,
    /// `root`: the remote's `ssh://` name (the history's key, as exec's);
    /// `name`: `user@host:/path`, for the title and the project bar.
    pub info: ProjectInfo,
}

impl RemoteProject {
    /// Opens `remote`'s folder there, in the app's mode. `copy`: this
    /// machine's corral-cli, put there when that version is missing (the
    /// user agreed); without it, a missing one is `approval_required`.
    pub fn open(
        remote: Remote,
        mode: corral_tools::policy::Mode,
        copy: Option<PathBuf>,
    ) -> Result<RemoteProject, Error> {
        let info = ProjectInfo {
            root: remote.display(),
            name: label(&remote),
        };
        RemoteProject::open_as(remote, mode, copy, info)
    }

    /// A task's session in a container (`remote.container`): its settings
    /// are `project`'s (its programs, rules and hooks' trust), sent with
    /// `use_settings` as a remote project's are.
    pub fn in_container(
        remote: Remote,
        mode: corral_tools::policy::Mode,
        project: ProjectInfo,
    ) -> Result<RemoteProject, Error> {
        RemoteProject::open_as(remote, mode, None, project)
    }

    fn open_as(
        remote: Remote,
        mode: corral_tools::policy::Mode,
        copy: Option<PathBuf>,
        info: ProjectInfo,
    ) -> Result<RemoteProject, Error> {
        let flag = serde_json::to_value(mode)
            .ok()
            .and_then(|m| m.as_str().map(str::to_string))
            .unwrap_or_else(|| "ask".into());
        let session = RemoteSession::open(remote, vec!["--mode".into(), flag], copy)?;
        Ok(RemoteProject {
            session,
            rules: Mutex::default(),
            mode,
            info,
        })
    }

    /// Runs the window's `command` there; `on_event` gets a command's
    /// output as it arrives. A command serve does not answer is an error
    /// saying so, not a bug report.
    pub async fn invoke(
        &self,
        command: &str,
        args: Value,
        on_event: Option<&(dyn Fn(Value) + Sync)>,
    ) -> Result<Value, Error> {
        let asked = (command == "check_call").then(|| args.clone());
        let answer = self.session.invoke(command, args, on_event).await;
        let answer = answer.map_err(|error| match error.code {
            ErrorCode::NotFound if error.message.contains("is not a command of") => {
                self.unserved(command)
            }
            _ => error,
        })?;
        if let Some(asked) = asked {
            self.keep_rule(&asked, &answer);
        }
        Ok(answer)
    }

    /// Runs a checked call there by its ticket (`run_call`, the window's
    /// arguments). "Always allow" works as for a folder here: the rule is
    /// saved here, under the project's `ssh://` name, and sent with
    /// `use_settings`; then the call runs there, approved once. The
    /// remote never saves a rule, and the rule saved is the one the call
    /// proposes as worked out here, so the remote cannot widen it.
    pub async fn run_call(
        &self,
        store: &Store,
        mut args: Value,
        on_event: Option<&(dyn Fn(Value) + Sync)>,
    ) -> Result<Value, Error> {
        if args["approval"]["scope"] == "always" {
            let rule = self.confirmed_rule(&args)?;
            store.add_rule(&self.settings_key(), rule)?;
            self.use_settings(store).await?;
            if let Some(approval) = args["approval"].as_object_mut() {
                approval.insert("scope".into(), json!("once"));
                approval.remove("rule");
            }
        }
        self.invoke("run_call", args, on_event).await
    }

    /// Keeps the rule a command checked there would save: the one its
    /// input proposes here, when the remote's ticket proposes the same
    /// (none for a call that touches a secret, or that is not a command).
    fn keep_rule(&self, asked: &Value, ticket: &Value) {
        let (Some(id), Some(there)) = (ticket["ticket"].as_str(), ticket["proposed_rule"].as_str())
        else {
            return;
        };
        if asked["tool"] != "exec_shell" {
            return;
        }
        let Ok(input) = serde_json::from_value::<ExecShellInput>(asked["input"].clone()) else {
            return;
        };
        let rule = SavedRule::proposed(&input);
        if rule.to_string() != there {
            return;
        }
        let mut rules = self.rules.lock().unwrap_or_else(PoisonError::into_inner);
        rules.push_back((id.to_string(), rule));
        if rules.len() > RULES_KEPT {
            rules.pop_front();
        }
    }

    /// The rule the user confirmed for the ticket `args` answers: the one
    /// kept for it, as shown; `invalid_input` otherwise, as for a folder
    /// here. A ticket's rule is used once.
    fn confirmed_rule(&self, args: &Value) -> Result<SavedRule, Error> {
        let ticket = args["ticket"].as_str().unwrap_or_default();
        let shown = args["approval"]["rule"].as_str();
        let mut rules = self.rules.lock().unwrap_or_else(PoisonError::into_inner);
        let Some(at) = rules.iter().position(|(id, _)| id == ticket) else {
            return Err(Error::invalid_input(format!(
                "the call of ticket `{ticket}` proposes no rule to always allow"
            ))
            .hint("Approve the call once, or for the conversation."));
        };
        let rule = rules[at].1.clone();
        if shown != Some(rule.to_string().as_str()) {
            return Err(Error::invalid_input(format!(
                "the rule confirmed is not `{rule}`, the one this command proposes"
            ))
            .hint("Confirm the rule as the approval shows it."));
        }
        rules.remove(at);
        Ok(rule)
    }

    /// Puts the user's MCP servers (with their variables' values) in the
    /// session there, on every new connection too; their status
    /// (`McpServerStatus[]`).
    pub async fn use_servers(
        &self,
        servers: Vec<(McpServerConfig, Vec<(String, String)>)>,
    ) -> Result<Value, Error> {
        let servers: Vec<Value> = servers
            .into_iter()
            .map(|(config, vars)| json!({"config": config, "vars": vars}))
            .collect();
        self.session
            .invoke_kept("use_mcp_servers", json!({ "servers": servers }))
            .await
    }

    /// Asks the window about the domains a command there meets off the
    /// egress allowlist, as a local command's are asked: serve's questions
    /// go to `domains`' listener (the window's `domain_questions`
    /// channel, keyed by the window's conversation), and `answer_domain`
    /// goes back there (one of the project's commands).
    pub async fn listen_domains(&self, domains: Arc<DomainAnswers>) -> Result<(), Error> {
        let heard: OnQuestion = Arc::new(move |question: Value| {
            // serve speaks this version's protocol; anything else is not a question.
            if let Ok(question) = serde_json::from_value::<DomainQuestion>(question) {
                domains.tell(question);
            }
        });
        self.session.listen_questions(heard).await
    }

    /// Kills the container it runs in (a task's Stop); the next call
    /// starts a new one on the same worktree.
    pub fn stop_container(&self) -> Result<(), Error> {
        self.session.stop_container()
    }

    /// Where it runs, for a task's row: its engine and container, or its
    /// `ssh://` name.
    pub fn info_place(&self) -> String {
        match &self.session.remote().container {
            Some(container) => format!("{} {}", container.engine, container.name),
            None => self.session.remote().display(),
        }
    }

    /// The key its settings are kept under here: its `ssh://` name.
    pub fn settings_key(&self) -> PathBuf {
        PathBuf::from(&self.info.root)
    }

    /// Sends the settings kept here for this folder (the programs added,
    /// its saved rules, its hooks' trust): the only settings its session
    /// there has, sent again on every new connection. Answers with the
    /// hooks' status there (`HookStatus`).
    pub async fn use_settings(&self, store: &Store) -> Result<Value, Error> {
        let key = self.settings_key();
        let (programs, rules) = store.shell_grants(&key);
        let settings = json!({
            "programs": programs,
            "rules": rules,
            "trusted_hooks": store.trusted_hooks(&key),
            "trust_project_hooks": false,
        });
        self.session.invoke_kept("use_settings", settings).await
    }

    /// Trusts the hooks of `file` with exactly `text`, as the window showed
    /// them from there: kept here, then sent. `stale_file` when the file
    /// there says something else now. Only a file serve lists as waiting
    /// can be trusted (a project settings file with hooks).
    pub async fn trust_hooks(&self, store: &Store, file: &str, text: &str) -> Result<Value, Error> {
        let status = self.invoke("hook_status", json!({}), None).await?;
        let waiting = status["untrusted"]
            .as_array()
            .and_then(|files| files.iter().find(|u| u["file"] == file))
            .map(|u| u["text"].as_str().unwrap_or_default().to_string());
        match waiting {
            Some(now) if now == text => {
                store.trust_hooks(&self.settings_key(), file, text)?;
                self.use_settings(store).await
            }
            Some(_) => Err(Error::new(
                ErrorCode::StaleFile,
                format!("`{file}` changed since its hooks were shown"),
            )
            .hint("Read its hooks again, then trust them.")),
            // Trusted already, or gone: nothing waits.
            None => Ok(status),
        }
    }

    /// The error of a command that answers only for a project here.
    pub fn not_here(&self) -> Error {
        Error::new(
            ErrorCode::NotFound,
            format!(
                "this is not available on a remote project ({})",
                self.info.name
            ),
        )
        .hint("It works on a project folder on this machine.")
        .detail("remote", self.info.root.as_str())
    }

    /// The error of a command the remote's corral-cli does not serve.
    fn unserved(&self, command: &str) -> Error {
        Error::new(
            ErrorCode::NotFound,
            format!(
                "`{command}` is not available on a remote project yet ({})",
                self.info.name
            ),
        )
        .hint("It works on a project folder on this machine.")
        .detail("remote", self.info.root.as_str())
        .detail("command", command)
    }
}

/// `user@host:/path`, as scp names it (the port, when given, as ssh's
/// `-p` would take it: `user@host:/path (port 2222)`).
pub fn label(remote: &Remote) -> String {
    match remote.port {
        Some(port) => format!("{}:{} (port {port})", remote.destination, remote.path),
        None => format!("{}:{}", remote.destination, remote.path),
    }
}

/// This machine's corral-cli: the one beside the app's binary, as the
/// packages and the build put them.
pub fn cli_beside_app() -> PathBuf {
    std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(|dir| dir.join("corral-cli")))
        .unwrap_or_else(|| PathBuf::from("corral-cli"))
}

/// What routing needs of the app's state (Tauri-managed): the open
/// project (here or remote), the runs and answers about domains shared
/// with the window's own commands, and the store "always allow" saves
/// to. The app's state implements it, so this module does not name it.
pub trait Routes: Send + Sync + 'static {
    fn remote(&self) -> Option<std::sync::Arc<RemoteProject>>;
    /// The open project's commands, when it is open here; with `task`,
    /// that task's (its session on its worktree).
    fn here(&self, task: Option<&str>) -> Result<Option<ProjectCommands>, Error>;
    /// The task `task`'s session when it runs in a container.
    fn in_container(&self, task: &str) -> Option<std::sync::Arc<RemoteProject>>;
    /// When the task `task` runs in a pod: what tells it a call ran that
    /// may have changed its worktree (its branch then comes back).
    fn pod_waker(&self, task: &str) -> Option<std::sync::mpsc::Sender<Wake>>;
    /// The model's and the history's commands, always here; with `task`,
    /// its conversations' history.
    fn model(&self, task: Option<&str>) -> ModelCommands;
    fn runs(&self) -> Arc<Runs>;
    fn domains(&self) -> Arc<DomainAnswers>;
    fn store(&self) -> Store;
}

/// The app's invoke handler, with the loop's commands
/// ([`corral_host::COMMANDS`]) answered by the host's code: the model's
/// and the history's here ([`ModelCommands`]), the project's by the open
/// project's session — here through [`ProjectCommands`], on a remote
/// project by serve there, with no project by
/// [`corral_host::without_project`]. The state `S` says which.
pub fn route<R: Runtime, S: Routes>(
    handler: impl Fn(Invoke<R>) -> bool + Send + Sync + 'static,
) -> impl Fn(Invoke<R>) -> bool + Send + Sync + 'static {
    move |invoke: Invoke<R>| {
        let command = invoke.message.command().to_string();
        if !corral_host::is_command(&command) {
            return handler(invoke);
        }
        let webview = invoke.message.webview();
        let Some(state) = webview.try_state::<S>() else {
            return handler(invoke);
        };
        let args = match invoke.message.payload() {
            InvokeBody::Json(args) => args.clone(),
            InvokeBody::Raw(_) => Value::Null,
        };
        let (args, output) = take_output(args);
        // A task's loop names its task: its session, its history.
        let (args, task) = take_task(args);
        let model = corral_host::command(&command)
            .is_some_and(|c| c.serves == Serves::Model)
            .then(|| state.model(task.as_deref()));
        // A task in a container is answered by serve there, on its own
        // session (its worktree is that session's root: no `task` for it).
        let waker = task.as_deref().and_then(|t| state.pod_waker(t));
        let (remote, task) = match task.as_deref().and_then(|t| state.in_container(t)) {
            Some(container) => (Some(container), None),
            None => (state.remote(), task),
        };
        let here = match remote {
            Some(_) => None,
            None => match state.here(task.as_deref()) {
                Ok(here) => here,
                Err(error) => {
                    invoke.resolver.reject(json!(error));
                    return true;
                }
            },
        };
        let (runs, domains, store) = (state.runs(), state.domains(), state.store());
        let output = output.map(|id| id.channel_on::<R, Value>(webview));
        // A closed window cannot receive; the run goes on.
        let send = move |channel: &Channel<Value>, event: Value| {
            let _ = channel.send(event);
        };
        // The model and the history are this machine's, whatever the project.
        if let Some(model) = model {
            invoke.resolver.respond_async(async move {
                let events = output.map(|channel| move |event: Value| send(&channel, event));
                let answer = model.invoke(&command, args, events.as_ref()).await;
                answer.map_err(|error| tauri::ipc::InvokeError(json!(error)))
            });
            return true;
        }
        invoke.resolver.respond_async(async move {
            let answer = match (remote, here) {
                (Some(remote), _) => {
                    // A part of the window's own runs here, and is sent there too.
                    if let Some(answer) = corral_host::part_here(&command, &args, &runs, &domains) {
                        tauri::async_runtime::spawn(async move {
                            // The part there is best effort: a lost connection ended
                            // its runs and grants already.
                            let _ = remote.invoke(&command, args, None).await;
                        });
                        return answer.map_err(|error| tauri::ipc::InvokeError(json!(error)));
                    }
                    let on_event = output.map(|channel| move |event: Value| send(&channel, event));
                    let on_event = on_event.as_ref().map(|f| f as &(dyn Fn(Value) + Sync));
                    // A task's command goes to its session there.
                    let mut args = args;
                    if let (Some(task), Some(object)) = (task, args.as_object_mut()) {
                        object.insert("task".into(), Value::String(task));
                    }
                    let answer = match command.as_str() {
                        // "Always allow" saves its rule here, in the app's store.
                        "run_call" => remote.run_call(&store, args, on_event).await,
                        _ => remote.invoke(&command, args, on_event).await,
                    };
                    // A task in a pod: what a call ran there comes back here.
                    if let (Some(waker), "run_call" | "call_tool") = (&waker, command.as_str()) {
                        let _ = waker.send(Wake::Changed);
                    }
                    answer
                }
                (None, Some(here)) => {
                    let sink = output.map(|channel| {
                        corral_host::live_sink(move |event| {
                            send(&channel, serde_json::to_value(event).unwrap_or_default())
                        })
                    });
                    here.invoke(&command, args, sink).await
                }
                (None, None) => corral_host::without_project(&command, args, &runs, &domains),
            };
            answer.map_err(|error| tauri::ipc::InvokeError(json!(error)))
        });
        true
    }
}

/// The window's arguments without `task` (the task whose loop sent them),
/// and that task.
fn take_task(mut args: Value) -> (Value, Option<String>) {
    let task = args
        .as_object_mut()
        .and_then(|args| args.remove("task"))
        .and_then(|task| task.as_str().map(str::to_string));
    (args, task)
}

/// The window's arguments without its channel (`on_output`, a command's
/// live output, or `on_event`, a model's stream: a channel of this window,
/// which serve has no use for), and that channel.
fn take_output(mut args: Value) -> (Value, Option<JavaScriptChannelId>) {
    let channel = args
        .as_object_mut()
        .and_then(|args| args.remove("on_output").or_else(|| args.remove("on_event")))
        .and_then(|id| {
            id.as_str()
                .and_then(|id| JavaScriptChannelId::from_str(id).ok())
        });
    (args, channel)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_label_is_scp_s_name_and_says_the_port() {
        let remote = |name: &str| Remote::parse(name).unwrap().unwrap();
        assert_eq!(label(&remote("ssh://dev@box/srv/app")), "dev@box:/srv/app");
        assert_eq!(label(&remote("box:/srv/app")), "box:/srv/app");
        assert_eq!(
            label(&remote("ssh://dev@box:2222/srv/app")),
            "dev@box:/srv/app (port 2222)"
        );
    }

    #[test]
    fn the_output_channel_stays_here() {
        let (args, channel) = take_output(json!({
            "ticket": "t1",
            "run_id": "r1",
            "on_output": "__CHANNEL__:7",
        }));
        assert_eq!(args, json!({"ticket": "t1", "run_id": "r1"}));
        assert!(channel.is_some());
        let (args, channel) = take_output(json!({"since": 3}));
        assert_eq!(args, json!({"since": 3}));
        assert!(channel.is_none());
    }
}
