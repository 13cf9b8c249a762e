//! Approvals the user gave in a window. The window asks the user about a
//! checked call (its ticket) and sends the answer with `run`: the answer
//! is for that one ticket, its tool and input as checked. A grant "in this
//! conversation" covers exactly what the user chose (`grants::Grant`: the
//! argv or an edited pattern, the path or a picked folder, the very call)
//! and only calls that carry the same conversation key; it ends when the
//! window leaves the conversation, or with the project. A call on a
//! secret-like path (`.env`, `*.pem`, ...) is never granted beyond itself.
//! The LLM never sees or makes tickets. An answer may carry the network for
//! its one command (the user approved it "with network"); a grant never does.

use crate::grants::{CallFacts, Grant, GrantEntry, Held};
use corral_tools::{Error, ProjectRoot};
use serde::Deserialize;
use std::collections::HashMap;

/// How far an approval reaches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
#[ts(rename = "ApprovalScope")]
pub enum Scope {
    /// This call, once.
    Once,
    /// This call, and later calls of the conversation its grant covers.
    Conversation,
    /// A command: this call, and a rule (program + argv prefix) saved for
    /// the project, which the user confirmed as shown.
    Always,
}

/// The user's answer to one approval, as the window sends it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    pub scope: Scope,
    /// This one call runs with the network.
    pub network: bool,
    /// What the grant covers (for `Conversation`; it is held for the
    /// conversation the call was checked in).
    pub grant: Option<Grant>,
    /// The rule the user confirmed, as shown (for `Always`).
    pub rule: Option<String>,
}

/// The user's answer to a call's approval as a host receives it (the
/// window's `run_call`, `corral-cli exec`'s script), sent with the ticket
/// it answers. `network`: this one command runs with the network;
/// `grant`: what the user allowed in the conversation the call was checked
/// in; `rule`: the rule the user confirmed saving.
#[derive(Debug, Clone, Deserialize, ts_rs::TS)]
pub struct ApprovalAnswer {
    pub scope: Scope,
    #[serde(default)]
    #[ts(optional)]
    pub network: Option<bool>,
    #[serde(default)]
    #[ts(optional)]
    pub grant: Option<Grant>,
    #[serde(default)]
    #[ts(optional)]
    pub rule: Option<String>,
}

impl From<ApprovalAnswer> for Answer {
    fn from(a: ApprovalAnswer) -> Answer {
        Answer {
            scope: a.scope,
            network: a.network.unwrap_or(false),
            grant: a.grant,
            rule: a.rule,
        }
    }
}

impl Answer {
    /// Approve this call once.
    pub fn once() -> Answer {
        Answer {
            scope: Scope::Once,
            network: false,
            grant: None,
            rule: None,
        }
    }

    /// Approve this command once with the network.
    pub fn with_network() -> Answer {
        Answer {
            network: true,
            ..Answer::once()
        }
    }

    /// Approve this call and grant `grant` in the conversation it was
    /// checked in.
    pub fn conversation(grant: Grant) -> Answer {
        Answer {
            scope: Scope::Conversation,
            grant: Some(grant),
            ..Answer::once()
        }
    }
}

/// The conversations' grants in the open project.
#[derive(Debug, Default)]
pub struct Approvals {
    /// The grants of each conversation, by the window's key for it.
    conversations: HashMap<String, Vec<Held>>,
}

impl Approvals {
    /// Holds `grant` for `conversation`, given while approving this call:
    /// it must fit the tool and cover this very call, and the call must
    /// not touch a secret (those are approved one at a time).
    pub fn grant(
        &mut self,
        root: &ProjectRoot,
        conversation: &str,
        call: &CallFacts<'_>,
        grant: Grant,
    ) -> Result<GrantEntry, Error> {
        let tool = call.tool;
        if conversation.is_empty() {
            return Err(Error::invalid_input(
                "a grant in a conversation needs the conversation's key",
            ));
        }
        if call.secret {
            return Err(Error::invalid_input(format!(
                "`{tool}` here touches a secret-like file: such calls are approved one at a time"
            ))
            .hint("Approve this call once."));
        }
        let held = Held::for_call(root, call, grant)?;
        let grants = self
            .conversations
            .entry(conversation.to_string())
            .or_default();
        if let Some(same) = grants.iter().find(|h| h.entry.grant == held.entry.grant) {
            return Ok(same.entry.clone());
        }
        let entry = held.entry.clone();
        grants.push(held);
        Ok(entry)
    }

    /// The grant of `conversation` that covers this call, if any. None
    /// covers a call on a secret-like path, by its name or where it leads.
    pub fn covering(
        &self,
        root: &ProjectRoot,
        conversation: Option<&str>,
        call: &CallFacts<'_>,
    ) -> Option<GrantEntry> {
        let grants = self.conversations.get(conversation?)?;
        let held = grants.iter().find(|h| h.covers(root, call))?;
        (!call.secret).then(|| held.entry.clone())
    }

    /// The grants of `conversation`, oldest first.
    pub fn grants(&self, conversation: &str) -> Vec<GrantEntry> {
        self.conversations
            .get(conversation)
            .map(|grants| grants.iter().map(|h| h.entry.clone()).collect())
            .unwrap_or_default()
    }

    /// Revokes one grant of `conversation` (an unknown id is not an error).
    pub fn revoke(&mut self, conversation: &str, id: &str) {
        if let Some(grants) = self.conversations.get_mut(conversation) {
            grants.retain(|h| h.entry.id != id);
        }
    }

    /// Ends `conversation`: every grant of it goes.
    pub fn end(&mut self, conversation: &str) {
        self.conversations.remove(conversation);
    }

    /// Forgets every grant given for a tool of one of the user's MCP
    /// servers: the servers were replaced, and a name may now stand for
    /// another tool.
    pub fn forget_servers(&mut self) {
        for grants in self.conversations.values_mut() {
            grants.retain(|h| !h.server);
        }
    }
}
