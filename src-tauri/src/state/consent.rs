//! The user's say over calls: the policy check the approval shows, the
//! approval itself (a token, a grant for the conversation, a rule for the
//! project), and the conversation's grants. A child of `state` so the open
//! project and its approvals stay under its one lock.

use super::AppState;
use crate::approvals::{Answer, Scope};
use crate::grants::{CallCheck, GrantEntry};
use corral_tools::dispatch::{self, CallContext, PolicyCheck};
use corral_tools::shell::{ExecShellInput, SavedRule};
use corral_tools::{Error, ProjectRoot};
use serde_json::Value;

impl AppState {
    /// The policy decision for a proposed call, with the change it would
    /// make; a grant of `conversation` covering it turns `ask` into `allow`
    /// and is named (never for a call that asks for the network: that is
    /// granted call by call).
    pub fn check_policy(
        &self,
        tool: &str,
        input: &Value,
        conversation: Option<&str>,
    ) -> Result<CallCheck, Error> {
        let (root, covering, mcp) = self.with_project(|open| {
            (
                open.root.clone(),
                open.approvals
                    .covering(&open.root, conversation, tool, input),
                open.mcp.clone(),
            )
        })?;
        let check = match mcp.split(tool) {
            Some((server, name)) => PolicyCheck {
                decision: mcp.decide(server, name, self.store.settings().mode),
                preview: None,
                preview_error: None,
                rule: None,
                network: false,
            },
            None => {
                let mut ctx = CallContext::new(self.store.settings().mode, Default::default());
                self.shell_grants(&root, &mut ctx.shell);
                dispatch::check(&root, tool, input, &ctx)?
            }
        };
        Ok(CallCheck::new(
            check,
            covering,
            dispatch::touches_secret(&root, tool, input),
        ))
    }

    /// The grants of `conversation` in the open project, oldest first.
    pub fn grants(&self, conversation: &str) -> Result<Vec<GrantEntry>, Error> {
        self.with_project(|open| open.approvals.grants(conversation))
    }

    /// Revokes one grant of `conversation`; returns those left.
    pub fn revoke_grant(&self, conversation: &str, id: &str) -> Result<Vec<GrantEntry>, Error> {
        self.with_project(|open| {
            open.approvals.revoke(conversation, id);
            open.approvals.grants(conversation)
        })
    }

    /// The window left `conversation`: its grants and its answers about
    /// domains end. Without a project there are no grants to end.
    pub fn end_conversation(&self, conversation: &str) {
        let _ = self.with_project(|open| open.approvals.end(conversation));
        self.domains.end(conversation);
    }

    /// Records the user's approval of a call in the open project and
    /// returns its token (for this call, once). `conversation` scope also
    /// holds the answer's grant for its conversation (it must cover this
    /// call); `always` on a command saves the rule the user confirmed,
    /// which must be the one the call proposes (its program and leading
    /// words: `npm test`); `network` grants this one command the network.
    pub fn approve(&self, tool: &str, input: &Value, answer: Answer) -> Result<String, Error> {
        let root = self.project()?;
        let is_mcp = self.mcp()?.split(tool).is_some();
        if corral_tools::spec::risk_of(tool).is_none() && !is_mcp {
            return Err(Error::invalid_input(format!(
                "there is no tool named `{tool}`"
            )));
        }
        match answer.scope {
            Scope::Once => {}
            Scope::Conversation => {
                let (Some(conversation), Some(grant)) = (&answer.conversation, answer.grant) else {
                    return Err(Error::invalid_input(
                        "approving for the conversation needs `conversation` and `grant`",
                    ));
                };
                self.with_project(|open| {
                    open.approvals
                        .grant(&open.root, conversation, tool, input, grant)
                })??;
            }
            Scope::Always => self.save_rule(&root, tool, input, answer.rule.as_deref())?,
        }
        self.with_project(|open| open.approvals.approve(tool, input, answer.network))
    }

    /// Saves the rule the user confirmed for a command, if it is the one
    /// the call proposes (the window showed it); a call naming a secret
    /// saves none.
    fn save_rule(
        &self,
        root: &ProjectRoot,
        tool: &str,
        input: &Value,
        shown: Option<&str>,
    ) -> Result<(), Error> {
        if tool != "exec_shell" {
            return Err(Error::invalid_input(format!(
                "only a command can be always allowed, not `{tool}`"
            )));
        }
        let call: ExecShellInput = dispatch::parse(tool, input.clone())?;
        let rule = SavedRule::proposed(&call);
        if shown != Some(rule.to_string().as_str()) {
            return Err(Error::invalid_input(format!(
                "the rule confirmed is not `{rule}`, the one this command proposes"
            ))
            .hint("Confirm the rule as the approval shows it."));
        }
        if !dispatch::touches_secret(root, tool, input) {
            self.store.add_rule(root.path(), rule)?;
        }
        Ok(())
    }
}
