//! The project's hooks as the agent loop raises them (docs/hooks.md):
//! [`Session::hook_status`] says which events have hooks (the loop asks
//! once per run, so a project without hooks costs no round trip per tool
//! call) and which project settings files wait for the user's trust;
//! [`Session::run_hooks`] runs an event's hooks (corral-hooks: in the
//! sandbox, with a time limit) and answers what they said;
//! [`Session::trust_hooks`] records the user's trust of a file's exact
//! text. The hooks are read again at each question, so a settings file
//! changed on disk is judged as it is now: its new text is not trusted.

use crate::Session;
use corral_hooks::{Event, EventInput, HookSet, Source, Verdict};
pub use corral_hooks::{Event as HookEvent, Verdict as HookVerdict};
use corral_tools::{Error, ErrorCode};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeSet;

/// `hook_status`'s answer.
#[derive(Debug, Clone, Default, PartialEq, Serialize, ts_rs::TS)]
pub struct HookStatus {
    /// The events with at least one hook that runs (the user's, and the
    /// project's trusted ones).
    pub events: Vec<Event>,
    /// The project's settings files whose hooks wait for the user's trust.
    pub untrusted: Vec<UntrustedHooks>,
    /// What could not be read (a file that is not JSON, a bad matcher...).
    pub problems: Vec<String>,
}

/// A project settings file not trusted as it is now.
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
pub struct UntrustedHooks {
    /// Relative to the project (`.claude/settings.json`).
    pub file: String,
    /// Its exact text: what `trust_hooks` must be given back.
    pub text: String,
    /// Its hooks, each as it would run.
    pub hooks: Vec<HookLine>,
}

/// One hook, every character of its command.
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
pub struct HookLine {
    pub event: Event,
    /// As written (empty: every tool).
    pub matcher: String,
    pub command: String,
}

/// `run_hooks`' arguments: the event and what it tells the hooks.
#[derive(Debug, Clone, Deserialize, ts_rs::TS)]
pub struct HookRequest {
    pub event: Event,
    /// The conversation (the hooks' `session_id`).
    #[serde(default)]
    #[ts(optional)]
    pub conversation: Option<String>,
    /// Corral's name of the tool (tool events).
    #[serde(default)]
    #[ts(optional)]
    pub tool: Option<String>,
    /// The call's input as it would run (tool events).
    #[serde(default)]
    #[ts(optional, type = "Record<string, unknown>")]
    pub input: Option<Value>,
    /// The call's result (`PostToolUse`).
    #[serde(default)]
    #[ts(optional, type = "unknown")]
    pub response: Option<Value>,
    /// The user's prompt (`UserPromptSubmit`).
    #[serde(default)]
    #[ts(optional)]
    pub prompt: Option<String>,
    /// `startup` or `resume` (`SessionStart`); `manual` or `auto` (`PreCompact`).
    #[serde(default)]
    #[ts(optional)]
    pub trigger: Option<String>,
    /// `Stop`: the turn already goes on because a `Stop` hook blocked.
    #[serde(default)]
    #[ts(optional)]
    pub stop_hook_active: Option<bool>,
}

/// What an event's hooks said, joined (the strictest verdict, the last
/// changed input, all the context).
#[derive(Debug, Clone, Default, PartialEq, Serialize, ts_rs::TS)]
pub struct HookOutcome {
    /// `PreToolUse`: allow, ask or deny; `none` when no hook decided.
    pub verdict: Verdict,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub reason: Option<String>,
    /// The command of the hook whose verdict it is.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub by: Option<String>,
    /// A hook blocked (exit 2, `"decision": "block"`): what the model is told.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub block: Option<String>,
    /// The command of the first hook that blocked.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub blocked_by: Option<String>,
    /// `PreToolUse`: the call's input as a hook changed it (Corral's form).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional, type = "Record<string, unknown>")]
    pub updated_input: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub updated_by: Option<String>,
    /// Context for the model.
    pub context: Vec<String>,
    /// `"continue": false`: the turn ends, with this for the user.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub stop: Option<String>,
    /// For the user: hooks that failed without blocking.
    pub notices: Vec<String>,
    /// The commands that ran, in order.
    pub ran: Vec<String>,
}

impl Session {
    /// The hooks that would run now: the user's and the project's trusted.
    fn hook_set(&self) -> HookSet {
        let home = self.settings.home();
        let trusted =
            |file: &str, text: &str| self.settings.hooks_trusted(self.root.path(), file, text);
        // The project's settings files are read beneath its root handle.
        HookSet::load(&self.root, home.as_deref(), &trusted)
    }

    /// Which events have hooks, and which of the project's settings files
    /// wait for the user's trust (with their hooks, for the user to read).
    pub fn hook_status(&self) -> HookStatus {
        let set = self.hook_set();
        let events: BTreeSet<Event> = set.hooks.iter().map(|h| h.event).collect();
        let untrusted = set
            .untrusted
            .iter()
            .map(|u| {
                let mut listed = HookSet::default();
                listed.add_text(&u.text, Source::Project, &u.file);
                UntrustedHooks {
                    file: u.file.clone(),
                    text: u.text.clone(),
                    hooks: listed
                        .hooks
                        .iter()
                        .map(|h| HookLine {
                            event: h.event,
                            matcher: h.matcher.clone(),
                            command: h.command.clone(),
                        })
                        .collect(),
                }
            })
            // A file that names no hooks runs nothing: no trust to ask for.
            .filter(|u| !u.hooks.is_empty())
            .collect();
        HookStatus {
            events: events.into_iter().collect(),
            untrusted,
            problems: set.problems,
        }
    }

    /// Trusts the hooks of the project's settings file `file` with exactly
    /// `text` (as `hook_status` showed it): a file that says something else
    /// now is not trusted (`changed`), so what runs is what was shown.
    pub fn trust_hooks(&self, file: &str, text: &str) -> Result<HookStatus, Error> {
        if !corral_hooks::PROJECT_SETTINGS.contains(&file) {
            return Err(Error::invalid_input(format!(
                "`{file}` is not a project settings file with hooks"
            ))
            .hint("Trust `.claude/settings.json` or `.claude/settings.local.json`."));
        }
        let now = self
            .hook_set()
            .untrusted
            .into_iter()
            .find(|u| u.file == file);
        match now {
            Some(u) if u.text == text => {
                self.settings.trust_hooks(self.root.path(), file, text)?;
                Ok(self.hook_status())
            }
            Some(_) => Err(Error::new(
                ErrorCode::StaleFile,
                format!("`{file}` changed since its hooks were shown"),
            )
            .hint("Read its hooks again, then trust them.")),
            // Trusted already, or gone: nothing waits.
            None => Ok(self.hook_status()),
        }
    }

    /// Runs the hooks of `request.event` (those matching its tool, for a
    /// tool event), one after the other, in the sandbox; answers at once
    /// when none matches.
    pub async fn run_hooks(&self, request: HookRequest) -> Result<HookOutcome, Error> {
        let set = self.hook_set();
        let tool_event = matches!(request.event, Event::PreToolUse | Event::PostToolUse);
        if tool_event && (request.tool.is_none() || request.input.is_none()) {
            return Err(Error::invalid_input(format!(
                "{} needs the call's `tool` and `input`",
                request.event.name()
            )));
        }
        let tool = request.tool.clone().unwrap_or_default();
        let names: Vec<&str> = [Some(tool.as_str()), corral_hooks::claude_name(&tool)]
            .into_iter()
            .flatten()
            .collect();
        if set.matching(request.event, &names).next().is_none() {
            return Ok(HookOutcome::default());
        }
        let input = EventInput {
            session_id: request.conversation.clone().unwrap_or_default(),
            transcript_path: String::new(),
            tool_name: request.tool.clone(),
            tool_input: request.input.clone(),
            tool_response: request.response.clone(),
            prompt: request.prompt.clone(),
            trigger: request.trigger.clone(),
            stop_hook_active: request.stop_hook_active.unwrap_or(false),
        };
        let root = self.root.clone();
        let event = request.event;
        // A hook may run for minutes: off the host's async threads.
        let outcome = tokio::task::spawn_blocking(move || {
            corral_hooks::run_event(&root, &set, event, &input)
        })
        .await
        .map_err(|e| Error::new(ErrorCode::Io, format!("the hooks stopped: {e}")))?;
        Ok(HookOutcome {
            verdict: outcome.verdict,
            reason: outcome.reason,
            by: outcome.by,
            block: outcome.block,
            blocked_by: outcome.blocked_by,
            updated_input: outcome.updated_input,
            updated_by: outcome.updated_by,
            context: outcome.additional_context,
            stop: outcome.stop,
            notices: outcome.notices,
            ran: outcome.runs.into_iter().map(|r| r.command).collect(),
        })
    }
}
