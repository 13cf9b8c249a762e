//! Approvals the user gave in the window. The UI asks the user, then sends
//! the answer with the call it answers; the token the answer becomes is
//! good for that one call (same tool, same input) once. A grant "in this
//! conversation" covers exactly what the user chose (`grants::Grant`: the
//! argv or an edited pattern, the path or a picked folder, the very call)
//! and only calls that carry the same conversation key; it ends when the
//! window leaves the conversation, or with the project. A call on a
//! secret-like path (`.env`, `*.pem`, ...) is never granted beyond itself.
//! The LLM never sees or makes tokens. A once token may carry the network
//! for that one command (the user approved it "with network"); a grant
//! never does.
//!
//! A once token is used up when the call is checked, before the tool reads
//! its input: a call that then fails validation has spent it (the UI asks
//! again for the corrected call).

use crate::grants::{normalize, Grant, GrantEntry, Held};
use corral_tools::dispatch::touches_secret;
use corral_tools::policy::Approval;
use corral_tools::{Error, ProjectRoot};
use serde::Deserialize;
use serde_json::Value;
use std::collections::{HashMap, HashSet};

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
    /// The window's key of the conversation (for `Conversation`).
    pub conversation: Option<String>,
    /// What the grant covers (for `Conversation`).
    pub grant: Option<Grant>,
    /// The rule the user confirmed, as shown (for `Always`).
    pub rule: Option<String>,
}

impl Answer {
    /// Approve this call once.
    pub fn once() -> Answer {
        Answer {
            scope: Scope::Once,
            network: false,
            conversation: None,
            grant: None,
            rule: None,
        }
    }

    /// Approve this call and grant `grant` in `conversation`.
    pub fn conversation(conversation: &str, grant: Grant) -> Answer {
        Answer {
            scope: Scope::Conversation,
            conversation: Some(conversation.to_string()),
            grant: Some(grant),
            ..Answer::once()
        }
    }
}

/// The approvals of the open project.
#[derive(Debug, Default)]
pub struct Approvals {
    once: HashMap<String, (String, Value)>,
    /// Once tokens that grant their command the network.
    network: HashSet<String>,
    /// The grants of each conversation, by the window's key for it.
    conversations: HashMap<String, Vec<Held>>,
}

impl Approvals {
    /// Records the user's approval of this one call and returns its token;
    /// with `network`, the token also grants its command the network (only
    /// that call, only with the token).
    pub fn approve(&mut self, tool: &str, input: &Value, network: bool) -> String {
        let token = uuid::Uuid::new_v4().to_string();
        self.once
            .insert(token.clone(), (tool.to_string(), normalize(input)));
        if network {
            self.network.insert(token.clone());
        }
        token
    }

    /// Holds `grant` for `conversation`, given while approving this call:
    /// it must fit the tool and cover this very call, and the call must
    /// not touch a secret (those are approved one at a time).
    pub fn grant(
        &mut self,
        root: &ProjectRoot,
        conversation: &str,
        tool: &str,
        input: &Value,
        grant: Grant,
    ) -> Result<GrantEntry, Error> {
        if conversation.is_empty() {
            return Err(Error::invalid_input(
                "a grant in a conversation needs the conversation's key",
            ));
        }
        if touches_secret(root, tool, input) {
            return Err(Error::invalid_input(format!(
                "`{tool}` here touches a secret-like file: such calls are approved one at a time"
            ))
            .hint("Approve this call once."));
        }
        let held = Held::new(root, grant)?;
        if !held.fits(tool) || !held.covers(root, tool, input) {
            return Err(Error::invalid_input(format!(
                "the grant does not cover the `{tool}` call it was given for"
            )));
        }
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
        tool: &str,
        input: &Value,
    ) -> Option<GrantEntry> {
        let grants = self.conversations.get(conversation?)?;
        let held = grants.iter().find(|h| h.covers(root, tool, input))?;
        (!touches_secret(root, tool, input)).then(|| held.entry.clone())
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

    /// Forgets every approval of an MCP server's tool (`SERVER__TOOL`): the
    /// servers were replaced, and a name may now stand for another one.
    pub fn forget_mcp(&mut self) {
        for grants in self.conversations.values_mut() {
            grants.retain(
                |h| !matches!(&h.entry.grant, Grant::Call { tool, .. } if tool.contains("__")),
            );
        }
        self.once.retain(|_, (tool, _)| !tool.contains("__"));
    }

    /// The approval of one call: a matching token is used up; a grant of
    /// its conversation stays.
    pub fn take(
        &mut self,
        root: &ProjectRoot,
        conversation: Option<&str>,
        tool: &str,
        input: &Value,
        token: Option<&str>,
    ) -> Approval {
        self.take_grant(root, conversation, tool, input, token).0
    }

    /// [`Approvals::take`], and whether the token granted the network.
    pub fn take_grant(
        &mut self,
        root: &ProjectRoot,
        conversation: Option<&str>,
        tool: &str,
        input: &Value,
        token: Option<&str>,
    ) -> (Approval, bool) {
        if let Some(token) = token {
            if let Some((granted_tool, granted_input)) = self.once.get(token) {
                if granted_tool == tool && *granted_input == normalize(input) {
                    self.once.remove(token);
                    return (Approval::Granted, self.network.remove(token));
                }
            }
        }
        if self.covering(root, conversation, tool, input).is_some() {
            (Approval::Granted, false)
        } else {
            (Approval::None, false)
        }
    }
}
