//! The loop's commands that are not the project's: the model bridge (a
//! turn streamed, what is known of the model, a prompt's tokens) and the
//! conversation's history (opened in parts, an entry appended). They run
//! where the model's keys and the history are — the window's machine, or
//! exec's — even for a remote project, whose project commands run there.

use crate::wire::{parse, to_value};
use corral_config::{LlmTarget, SettingsInput, Store};
use corral_history::{History, NewEntry, Part};
use corral_llm::{ChatRequest, ProviderConfig};
use corral_session::runs::{Run, Runs};
use corral_tools::{Error, ErrorCode};
use serde::Deserialize;
use serde_json::Value;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// Where the model is: the app's settings, or the config a host's flags
/// or environment chose instead (`fixed`, exec's `--model`...).
pub struct Model {
    pub store: Store,
    pub fixed: Option<ProviderConfig>,
}

impl Model {
    /// The config of a turn: `fixed`, else the settings' with `target`'s
    /// server and model when given.
    pub fn config(&self, target: Option<LlmTarget>) -> ProviderConfig {
        match &self.fixed {
            Some(config) => config.clone(),
            None => self.store.provider_config(target),
        }
    }

    /// The config for settings as the window shows them (not saved), else
    /// as [`Model::config`] without a target.
    fn config_for(&self, settings: Option<SettingsInput>) -> Result<ProviderConfig, Error> {
        match (&self.fixed, settings) {
            (Some(config), _) => Ok(config.clone()),
            (None, settings) => self.store.provider_config_for(settings),
        }
    }
}

/// The loop's model and history commands over one host's model, history
/// and runs; `project`: the open project's key in the history (its root as
/// shown, a remote project's `ssh://` name), `None` with no project.
pub struct ModelCommands {
    pub model: Arc<Model>,
    pub history: Arc<History>,
    pub project: Option<String>,
    /// Streams running, for `cancel(run_id)` (shared with the project's
    /// commands of a project here).
    pub runs: Arc<Runs>,
    /// The id a conversation this host makes takes (an ACP session's, so
    /// the editor and the history name it alike); `None`: a new one.
    pub new_id: Option<String>,
}

impl ModelCommands {
    /// Answers one of the table's commands served by [`crate::Serves::Model`];
    /// `events` receives a stream's events as they arrive, each handed
    /// over before the answer.
    pub async fn invoke<E: Fn(Value) + ?Sized>(
        &self,
        command: &str,
        args: Value,
        events: Option<&E>,
    ) -> Result<Value, Error> {
        match command {
            "llm_stream" => {
                let a: StreamArgs = parse(command, args)?;
                let config = self
                    .off_runtime(move |model| Ok(model.config(a.target)))
                    .await?;
                self.stream(&a.run_id, config, &a.request, events).await
            }
            "model_info" => {
                let a: SettingsArgs = parse(command, args)?;
                let (config, rules) = self
                    .off_runtime(move |model| {
                        Ok((model.config_for(a.settings)?, model.store.prices()))
                    })
                    .await?;
                let config = corral_llm::with_native_api(&config).await;
                // The user's price table first, then the built-in one.
                let info = corral_llm::ModelInfo {
                    price: corral_llm::price_for(&rules, &config),
                    ..corral_llm::model_info(&config).await
                };
                to_value(info)
            }
            "count_prompt_tokens" => {
                let a: CountArgs = parse(command, args)?;
                let config = self
                    .off_runtime(move |model| Ok(model.config(a.target)))
                    .await?;
                to_value(corral_llm::prompt_tokens(&config, &a.request).await)
            }
            "open_conversation" => {
                let a: OpenArgs = parse(command, args)?;
                let part = Part {
                    elide_over: a.elide_over,
                    before_seq: a.before_seq,
                    last: a.last,
                };
                self.with_history(move |history, project| {
                    to_value(history.open_part(project, &a.id, part)?)
                })
                .await
            }
            "append_entry" => {
                let a: AppendArgs = parse(command, args)?;
                let model = Arc::clone(&self.model);
                let new_id = self.new_id.clone();
                self.with_history(move |history, project| {
                    let model = model.config(None).model;
                    to_value(history.append_new_as(
                        project,
                        a.conversation.as_deref(),
                        new_id.as_deref(),
                        &a.entry,
                        &model,
                    )?)
                })
                .await
            }
            other => Err(Error::new(
                ErrorCode::NotFound,
                format!("`{other}` is not a command of the model or the history"),
            )
            .hint("This is a bug in Corral: the two sides disagree on the commands.")),
        }
    }

    /// Streams one turn, cancellable by `run_id`; resolves once every
    /// event was handed to `events`.
    async fn stream<E: Fn(Value) + ?Sized>(
        &self,
        run_id: &str,
        config: ProviderConfig,
        request: &ChatRequest,
        events: Option<&E>,
    ) -> Result<Value, Error> {
        // An OpenAI-compatible base URL that Ollama serves is spoken to in
        // Ollama's own API, the one that takes the context size.
        let config = corral_llm::with_native_api(&config).await;
        let cancel = CancellationToken::new();
        self.runs.start(run_id, Run::Llm(cancel.clone()))?;
        let (sent, mut received) = tokio::sync::mpsc::unbounded_channel();
        let streaming = async move {
            corral_llm::stream(&config, request, cancel, move |event| {
                let _ = sent.send(event);
            })
            .await;
        };
        let forwarding = async {
            while let Some(event) = received.recv().await {
                if let Some(events) = events {
                    events(serde_json::to_value(event).unwrap_or(Value::Null));
                }
            }
        };
        tokio::join!(streaming, forwarding);
        self.runs.end(run_id);
        Ok(Value::Null)
    }

    /// Runs `f` with the model off the async runtime: reading a key may be
    /// a D-Bus round trip to the keychain.
    async fn off_runtime<T: Send + 'static>(
        &self,
        f: impl FnOnce(&Model) -> Result<T, Error> + Send + 'static,
    ) -> Result<T, Error> {
        let model = Arc::clone(&self.model);
        tokio::task::spawn_blocking(move || f(&model))
            .await
            .map_err(|e| Error::new(ErrorCode::Io, format!("the settings store stopped: {e}")))?
    }

    /// Runs `f` with the history and the project's key, off the async
    /// runtime; `no_project_open` without a project. The window's own
    /// conversation commands (list, rename, fork...) go through it too.
    pub async fn with_history<T: Send + 'static>(
        &self,
        f: impl FnOnce(&History, &str) -> Result<T, Error> + Send + 'static,
    ) -> Result<T, Error> {
        let project = self
            .project
            .clone()
            .ok_or_else(corral_session::no_project)?;
        let history = Arc::clone(&self.history);
        tokio::task::spawn_blocking(move || f(&history, &project))
            .await
            .map_err(|e| {
                Error::new(
                    ErrorCode::Io,
                    format!("the history stopped unexpectedly: {e}"),
                )
            })?
    }
}

#[derive(Deserialize)]
struct StreamArgs {
    run_id: String,
    request: ChatRequest,
    target: Option<LlmTarget>,
}

#[derive(Deserialize)]
struct SettingsArgs {
    settings: Option<SettingsInput>,
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
