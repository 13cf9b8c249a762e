//! The user's say over calls, and the calls themselves: the policy check
//! the approval shows, the approval (a token, a grant for the
//! conversation, a rule for the project), and one call run through the
//! policy, checkpointed first when it can change the project.

use crate::approvals::{Answer, Scope};
use crate::checkpoints::CallTag;
use crate::grants::CallCheck;
use crate::{lock, Session};
use corral_tools::dispatch::{self, CallContext};
use corral_tools::policy::{self, Approval};
use corral_tools::shell::{ExecShellInput, SavedRule, ShellRun};
use corral_tools::Error;
use serde_json::Value;

/// What lets a call that asks run: the user's token for this very call,
/// or a grant of the conversation it belongs to.
#[derive(Debug, Clone, Default)]
pub struct Consent {
    pub token: Option<String>,
    /// The window's key of the conversation making the call.
    pub conversation: Option<String>,
}

impl Session {
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
        let covering = lock(&self.approvals).covering(&self.root, conversation, tool, input);
        let ctx = self.context();
        let prepared = self.prepare(tool, input, &ctx)?;
        let check = prepared.check(&self.root, &ctx, true)?;
        Ok(CallCheck::new(
            check,
            covering,
            prepared.names_secret(&self.root),
        ))
    }

    /// Records the user's approval of a call and returns its token (for
    /// this call, once). `conversation` scope also holds the answer's grant
    /// for its conversation (it must cover this call); `always` on a
    /// command saves the rule the user confirmed, which must be the one the
    /// call proposes (its program and leading words: `npm test`);
    /// `network` grants this one command the network.
    pub fn approve(&self, tool: &str, input: &Value, answer: Answer) -> Result<String, Error> {
        self.prepare(tool, input, &self.context())?;
        match answer.scope {
            Scope::Once => {}
            Scope::Conversation => {
                let (Some(conversation), Some(grant)) = (&answer.conversation, answer.grant) else {
                    return Err(Error::invalid_input(
                        "approving for the conversation needs `conversation` and `grant`",
                    ));
                };
                lock(&self.approvals).grant(&self.root, conversation, tool, input, grant)?;
            }
            Scope::Always => self.save_rule(tool, input, answer.rule.as_deref())?,
        }
        Ok(lock(&self.approvals).approve(tool, input, answer.network))
    }

    /// Saves the rule the user confirmed for a command, if it is the one
    /// the call proposes (the window showed it); a call naming a secret
    /// saves none.
    fn save_rule(&self, tool: &str, input: &Value, shown: Option<&str>) -> Result<(), Error> {
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
        if !dispatch::touches_secret(&self.root, tool, input) {
            self.settings.save_rule(self.root.path(), rule)?;
        }
        Ok(())
    }

    /// Runs one tool call off the async runtime; the checkpoint before a
    /// call that can change the project carries `tag`. `base`: the base of
    /// the preview the user approved (`CallContext::base`).
    pub async fn call(
        &self,
        tool: String,
        input: Value,
        consent: Consent,
        base: Option<String>,
        shell: ShellRun,
        tag: CallTag,
    ) -> Result<Value, Error> {
        let (granted, network) = lock(&self.approvals).take_grant(
            &self.root,
            consent.conversation.as_deref(),
            &tool,
            &input,
            consent.token.as_deref(),
        );
        let mut ctx = self.context();
        ctx.approval = granted;
        ctx.base = base;
        let context_shell = std::mem::take(&mut ctx.shell);
        let cancel = shell.cancel.clone();
        ctx.shell = ShellRun {
            // Only the user's approval of this very call grants the
            // network (or the host's user, for every command).
            network: context_shell.network || network,
            egress: corral_tools::shell::Egress {
                allowed_domains: context_shell.egress.allowed_domains,
                ..shell.egress
            },
            extra_programs: context_shell.extra_programs,
            rules: context_shell.rules,
            background: context_shell.background,
            ..shell
        };
        // One way for every tool: found and read once, judged, then a
        // checkpoint before a call that can change the project (the store
        // is opened only then; if none can be taken, it does not run).
        let prepared = self.prepare(&tool, &input, &ctx)?;
        let judged = prepared.judge(&self.root, &ctx)?;
        policy::enforce(&judged.decision, granted, &tool)?;
        if prepared.changes_project() {
            ctx.checkpoint = self.hook(tag)?;
        }
        self.run_prepared(prepared, input, ctx, &cancel).await
    }

    /// The checkpoint hook for a call that can change the project, if this
    /// session takes checkpoints.
    fn hook(&self, tag: CallTag) -> Result<Option<corral_tools::checkpoint::Hook>, Error> {
        self.checkpoints
            .as_ref()
            .map(|store| store.hook(&self.root, tag))
            .transpose()
    }

    /// What surrounds a call in this session: the mode, the boundaries,
    /// the programs and rules of the settings, the background commands,
    /// the search index, the language servers.
    fn context(&self) -> CallContext {
        let mut ctx = CallContext::new(self.settings.mode(), Approval::None);
        ctx.boundaries = self.boundaries.clone();
        let (programs, rules) = self.settings.shell_grants(self.root.path());
        ctx.shell.extra_programs = programs;
        ctx.shell.rules = rules;
        ctx.shell.network = self.network;
        ctx.shell.egress.allowed_domains = self.allowed_domains.clone();
        ctx.shell.background = Some(self.background.clone());
        ctx.search_index = self.search_index.as_ref().map(|c| self.index.config(c));
        ctx.lsp = self.lsp.clone();
        ctx
    }
}
