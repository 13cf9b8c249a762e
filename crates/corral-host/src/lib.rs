//! The agent loop's commands, once for every host. [`COMMANDS`] is their
//! table (name, arguments, result, doc, what serves it):
//! [`ProjectCommands`] answers the project's over a session, wherever the
//! project is; [`ModelCommands`] the model's and the history's, on the
//! host's own machine. The hosts are transports and front ends around
//! them: the app's window (for a project here, or sent over ssh to
//! `serve` for a remote one), `corral-cli serve`, and the loop of `exec`
//! and `acp`. They differ in how they ask, stop and show, never in what a
//! command does.

mod checkpoints;
pub mod kube;
pub mod kube_task;
mod model;
mod project;
mod table;
pub mod tasks;
pub mod wire;
pub mod worktree;

pub use model::{Model, ModelCommands};
pub use project::{CancelArgs, ConversationArgs, ProjectCommands, ServerArgs, ServersArgs};
pub use table::{command, is_command, section_of, Command, Serves, COMMANDS};

use corral_session::domains::DomainAnswers;
use corral_session::live_output::LiveOutput;
use corral_session::runs::Runs;
use corral_tools::shell::{OutputSink, Stream};
use corral_tools::Error;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::sync::{Arc, Mutex, PoisonError};

/// A chunk of a command's live output, as a host sends it on: decoded
/// (a character split between two chunks stays whole) and cut off at
/// [`corral_session::live_output::LIVE_OUTPUT_LIMIT`].
#[derive(Debug, Clone, Serialize, Deserialize, ts_rs::TS)]
pub struct ShellEvent {
    pub stream: Stream,
    /// Lossy UTF-8 of the chunk; ANSI escapes are kept for the panel to render.
    pub data: String,
}

/// The output sink of a run whose live output goes to `send`, one
/// [`ShellEvent`] at a time.
pub fn live_sink(send: impl Fn(ShellEvent) + Send + Sync + 'static) -> OutputSink {
    let live = Mutex::new(LiveOutput::default());
    Arc::new(move |stream: Stream, bytes: &[u8]| {
        let data = live
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .next(stream, bytes);
        if let Some(data) = data {
            send(ShellEvent { stream, data });
        }
    })
}

/// The part of `command` that is the window's own wherever the project
/// is, when it has one: a run cancelled here (a model's stream runs here),
/// the conversation's answers about domains ended. A host runs it here
/// and, for a remote project, sends the command there as well.
pub fn part_here(
    command: &str,
    args: &Value,
    runs: &Runs,
    domains: &DomainAnswers,
) -> Option<Result<Value, Error>> {
    let done = match command {
        "cancel" => {
            wire::parse::<CancelArgs>(command, args.clone()).map(|a| runs.cancel(&a.run_id))
        }
        "end_conversation" => wire::parse::<ConversationArgs>(command, args.clone())
            .map(|a| domains.end(&a.conversation)),
        _ => return None,
    };
    Some(done.map(|()| Value::Null))
}

/// The answer to `command` when no project is open: the tools' specs
/// (without any server's), no MCP servers, its [`part_here`] (a run
/// cancelled, a conversation ended); the others fail `no_project_open`.
pub fn without_project(
    command: &str,
    args: Value,
    runs: &Runs,
    domains: &DomainAnswers,
) -> Result<Value, Error> {
    if let Some(done) = part_here(command, &args, runs, domains) {
        return done;
    }
    match command {
        "tool_specs" => wire::to_value(corral_tools::spec::specs()),
        "mcp_status" => Ok(Value::Array(Vec::new())),
        _ => Err(corral_session::no_project()),
    }
}
