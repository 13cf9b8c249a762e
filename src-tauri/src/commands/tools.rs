//! How a tool call runs: `check_call` (in `policy.rs`) checks it and keeps
//! its ticket; `run_call {ticket, approval?, run_id?, on_output?, turn_id?,
//! call_id?}` runs that ticket, with `approval`, the user's answer if it
//! asked (once, in the conversation with its grant, always with its rule;
//! with the network or not). An approved call is those two round trips.
//! `call_tool {name, input, conversation?, ...}` checks and runs in one,
//! for a call no one is asked about (the window's own reads).
//! The input is the model's object as it came; corral-session parses it
//! once against the tool's own type, so nothing here lists a tool or its
//! fields. A call with a `run_id` can be stopped by `cancel`; one with
//! an `on_output` channel streams a command's output as it arrives. A
//! call in a conversation asks the window about a domain off the egress
//! allowlist on the `domain_questions` channel (`answer_domain` replies).

use crate::state::{AppState, Call, Consent, Run, RunContext};
pub use corral_session::approvals::ApprovalAnswer;
use corral_session::checkpoints::CallTag;
use corral_session::domains::{Asking, DomainQuestion, Notify, QUESTION_WAIT};
use corral_session::live_output::LiveOutput;
pub use corral_session::live_output::LIVE_OUTPUT_LIMIT;
use corral_tools::shell::{ShellRun, Stream};
use corral_tools::Error;
use serde::Serialize;
use serde_json::Value;
use std::sync::{Arc, Mutex, PoisonError};
use tauri::ipc::{Channel, JavaScriptChannelId};
use tauri::{Runtime, State, Webview};

type Output = Result<Value, Error>;

/// A chunk of live command output, as the panel receives it.
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
pub struct ShellEvent {
    pub stream: Stream,
    /// Lossy UTF-8 of the chunk; ANSI escapes are kept for the panel to render.
    pub data: String,
}

/// Runs a checked call by its ticket.
// A command's arguments are its IPC fields, one parameter each.
#[allow(clippy::too_many_arguments)]
#[tauri::command(rename_all = "snake_case")]
pub async fn run_call<R: Runtime>(
    webview: Webview<R>,
    state: State<'_, AppState>,
    ticket: String,
    approval: Option<ApprovalAnswer>,
    run_id: Option<String>,
    on_output: Option<JavaScriptChannelId>,
    turn_id: Option<String>,
    call_id: Option<String>,
) -> Output {
    let conversation = state.session()?.ticket_conversation(&ticket);
    let run = run_context(&webview, &state, conversation, on_output, turn_id, call_id);
    let consent = approval.map_or(Consent::None, |a| Consent::Answer(a.into()));
    stoppable(&state, run_id, run, |run| state.run(&ticket, consent, run)).await
}

/// Checks and runs a call no one is asked about.
#[allow(clippy::too_many_arguments)]
#[tauri::command(rename_all = "snake_case")]
pub async fn call_tool<R: Runtime>(
    webview: Webview<R>,
    state: State<'_, AppState>,
    name: String,
    input: Value,
    conversation: Option<String>,
    run_id: Option<String>,
    on_output: Option<JavaScriptChannelId>,
    turn_id: Option<String>,
    call_id: Option<String>,
) -> Output {
    let call = Call {
        tool: name,
        input,
        conversation: conversation.clone(),
    };
    let run = run_context(&webview, &state, conversation, on_output, turn_id, call_id);
    stoppable(&state, run_id, run, |run| state.call(call, run)).await
}

/// What one run is given: the live output to `on_output`, the questions
/// about domains to the window (for a call in a conversation), the turn
/// and card the checkpoint before it is tagged with.
fn run_context<R: Runtime>(
    webview: &Webview<R>,
    state: &AppState,
    conversation: Option<String>,
    on_output: Option<JavaScriptChannelId>,
    turn_id: Option<String>,
    call_id: Option<String>,
) -> RunContext {
    let channel = on_output.map(|id| id.channel_on::<R, ShellEvent>(webview.clone()));
    let mut shell = ShellRun {
        on_output: channel.map(sink),
        ..ShellRun::default()
    };
    // A domain off the allowlist is asked about in the window, for the
    // conversation (a command granted the network only).
    if let Some(conversation) = conversation {
        let domains = state.domains.clone();
        let notify: Notify = Arc::new(move |question: DomainQuestion| domains.tell(question));
        shell.egress.ask = Some(state.domains.hook(Asking {
            conversation,
            notify,
            cancel: shell.cancel.clone(),
            on_output: shell.on_output.clone(),
            wait: QUESTION_WAIT,
        }));
    }
    RunContext {
        shell,
        tag: CallTag {
            turn: turn_id,
            call: call_id,
        },
    }
}

/// Runs `go` with `run`, registered under `run_id` (if any) so that
/// `cancel` stops it.
async fn stoppable<F, Fut>(
    state: &AppState,
    run_id: Option<String>,
    run: RunContext,
    go: F,
) -> Output
where
    F: FnOnce(RunContext) -> Fut,
    Fut: std::future::Future<Output = Output>,
{
    let Some(run_id) = run_id else {
        return go(run).await;
    };
    state.start_run(&run_id, Run::Shell(run.shell.cancel.clone()))?;
    let result = go(run).await;
    state.end_run(&run_id);
    result
}

/// The live-output sink that sends a run's output to `channel`.
fn sink(channel: Channel<ShellEvent>) -> corral_tools::shell::OutputSink {
    let live = Mutex::new(LiveOutput::default());
    Arc::new(move |stream: Stream, bytes: &[u8]| {
        let mut live = live.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(data) = live.next(stream, bytes) {
            // A closed window cannot receive; the run goes on and is returned.
            let _ = channel.send(ShellEvent { stream, data });
        }
    })
}
