//! One tool call, checked then run. [`Session::check`] reads the input
//! once, into the tool's own type, and judges it: the policy's verdict,
//! the conversation's grant that covers it, whether it touches a secret,
//! the rule "always allow" would save, what "allow in this conversation"
//! may grant and whether a hook's `allow` may answer for the user
//! (`grants.rs` decides both), the change it would make. The
//! session keeps that as a ticket under an id (the newest [`KEPT`]);
//! [`Session::run`] runs a ticket once, with the user's
//! answer if it asked: the answer applied (a grant held, a rule saved),
//! the call judged again on its kept facts where its paths lead now, a
//! checkpoint before a call that can change the project, then the call.
//! Nothing after the check reads the JSON again.
//!
//! A tool of one of the user's MCP servers goes the same way: the ticket
//! holds the session's [`Prepared`] call of either kind, judged, approved,
//! granted and checkpointed by the same code; only the run itself goes to
//! the server.

use crate::approvals::{Answer, Scope};
use crate::checkpoints::CallTag;
use crate::grants::{self, CallCheck, CallFacts, Grant};
use crate::registry::Prepared;
use crate::{lock, Session};
use corral_tools::dispatch::CallContext;
use corral_tools::policy::{self, Approval, Decision};
use corral_tools::shell::{SavedRule, ShellRun};
use corral_tools::{Error, ErrorCode, ProjectRoot};
use serde::Serialize;
use serde_json::Value;
use std::collections::VecDeque;

/// A proposed call: a tool, its input as the model sent it, and the
/// window's key of the conversation whose grants may cover it.
#[derive(Debug, Clone, Default)]
pub struct Call {
    pub tool: String,
    pub input: Value,
    pub conversation: Option<String>,
}

impl Call {
    pub fn new(tool: impl Into<String>, input: Value) -> Call {
        Call {
            tool: tool.into(),
            input,
            conversation: None,
        }
    }

    /// The call made in `conversation`, whose grants may cover it.
    pub fn in_conversation(self, conversation: impl Into<String>) -> Call {
        Call {
            conversation: Some(conversation.into()),
            ..self
        }
    }
}

/// What a host is told of a checked call: the ticket's id, to run it by,
/// and what an approval shows.
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
pub struct Ticket {
    /// Its id for [`Session::run`] (the model never sees it).
    pub ticket: String,
    /// The verdict (`allow`, `ask` with its reason, `deny` with its
    /// reason), the preview, the covering grant, one at a time or not.
    #[serde(flatten)]
    pub check: CallCheck,
    /// For a command: the rule "always allow" would save (`npm test`);
    /// none for a command that touches a secret.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub proposed_rule: Option<String>,
    /// A PreToolUse hook's `allow` stands for the user's "once" here
    /// ([`CallCheck::hook_may_answer`]): the call asks only the mode's
    /// question, not one asked every time nor about the network.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    #[ts(as = "Option<bool>", optional)]
    pub hook_may_answer: bool,
    /// What "allow in this conversation" may grant ([`grants::choices`]):
    /// this very call (its argv, its path or its input); none for a path
    /// reached through a link, or a call approved one at a time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub exact_grant: Option<Grant>,
    /// The folders a path grant may widen to, nearest first, ending with
    /// `.` (the whole project); only `.` where a link lies on the way.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[ts(as = "Option<Vec<String>>", optional)]
    pub grant_folders: Vec<String>,
    /// The first part of the call's path that is a link (`vendor/pkg`):
    /// neither the file alone nor its folders are offered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub grant_link: Option<String>,
    /// For a command: the pattern proposed for editing, the words the
    /// saved rule would take then any further arguments (`npm test *`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub proposed_pattern: Option<Grant>,
    /// For a command: the patterns that cover it (its argv, and its first
    /// words then any further arguments, shortest first, within
    /// [`grants::PATTERN_WORDS_BYTES`]); an edited pattern is offered only
    /// when it is one of them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[ts(as = "Option<Vec<Grant>>", optional)]
    pub covering_patterns: Vec<Grant>,
    /// Where each path the call names leads, as the tool resolves it: the
    /// approval shows it beside the path as typed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[ts(as = "Option<Vec<ResolvedPath>>", optional)]
    pub paths: Vec<ResolvedPath>,
    /// What a question shows of the call, marked by the core as every
    /// host shows it ([`crate::marked`]): sent when the call asks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub shown: Option<crate::marked::ShownCall>,
    /// It can change the project: a checkpoint goes first (a host without
    /// a checkpoint folder may refuse it). Not sent: the window knows it
    /// from the tool's risk.
    #[serde(skip)]
    #[ts(skip)]
    pub changes_project: bool,
}

/// A path a call names, and where it leads in the project: resolved as
/// the tool resolves it ([`ProjectRoot::resolve`]: `\` a separator, `.`
/// and empty parts gone, `..` climbing, an absolute path under the root
/// made relative). Lexical: a symlink is the tool's to follow, beneath
/// the root's handle. (A path leading outside gets no ticket at all.)
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
pub struct ResolvedPath {
    /// As the call gives it.
    pub typed: String,
    /// Relative to the project root (`.` for the root).
    pub inside: String,
}

impl ResolvedPath {
    /// Where `typed` leads in `root`; none for a path the tool refuses.
    pub fn of(root: &ProjectRoot, typed: &str) -> Option<ResolvedPath> {
        let rel = root.resolve(typed).ok()?;
        Some(ResolvedPath {
            typed: typed.to_string(),
            inside: rel.display(),
        })
    }
}

/// The user's say on a ticket when it runs.
#[derive(Debug, Clone, Default)]
pub enum Consent {
    /// None given: it runs if the policy or a grant of its conversation
    /// allows it now.
    #[default]
    None,
    /// The user's answer to its approval.
    Answer(Answer),
    /// The host's user approved it (`--approve`, an MCP client's user);
    /// `network`: with the network.
    Granted { network: bool },
}

/// What the host gives one run: the command's live output, cancel and
/// domain questions, and the turn and call the checkpoint before it is
/// tagged with.
#[derive(Default)]
pub struct RunContext {
    pub shell: ShellRun,
    pub tag: CallTag,
}

/// A checked call as the session keeps it.
struct Kept {
    id: String,
    call: Call,
    /// The tool found and the input read, once.
    prepared: Prepared,
    check: CallCheck,
    /// The command's proposed rule.
    rule: Option<SavedRule>,
}

/// How many tickets wait for their run at most; the oldest goes first.
/// A ticket has no age limit: it is judged again when it runs, so an
/// approval left open for hours still runs as the project is then.
pub const KEPT: usize = 256;

/// The tickets waiting for their run, oldest first.
#[derive(Default)]
pub(crate) struct Tickets(VecDeque<Kept>);

impl Tickets {
    fn keep(&mut self, kept: Kept) {
        if self.0.len() >= KEPT {
            self.0.pop_front();
        }
        self.0.push_back(kept);
    }

    /// The ticket `id`, taken: while it runs, no other run may take it.
    fn take(&mut self, id: &str) -> Result<Kept, Error> {
        let at = self.0.iter().position(|k| k.id == id);
        at.and_then(|at| self.0.remove(at)).ok_or_else(|| {
            Error::invalid_input(format!("there is no checked call `{id}` waiting to run"))
                .hint(
                    "Check the call again: a ticket runs once, in the project it was checked \
                     in, while its conversation lasts.",
                )
                .detail("ticket", id)
        })
    }

    /// Puts back a ticket whose run was refused before anything ran, for
    /// another answer.
    fn put_back(&mut self, kept: Kept) {
        self.keep(kept);
    }

    /// Drops the tickets of MCP servers' tools (the servers were replaced).
    pub(crate) fn forget_servers(&mut self) {
        self.0.retain(|k| k.prepared.is_own());
    }

    /// Drops the tickets checked in `conversation` (it ended).
    pub(crate) fn forget_conversation(&mut self, conversation: &str) {
        self.0
            .retain(|k| k.call.conversation.as_deref() != Some(conversation));
    }
}

impl Kept {
    /// What a grant is judged on, from the input read once.
    fn facts(&self) -> CallFacts<'_> {
        CallFacts {
            tool: &self.call.tool,
            input: &self.call.input,
            registry: self.prepared.is_own(),
            paths: &self.prepared.facts().paths,
            command: self
                .prepared
                .command()
                .map(|c| (c.command.as_str(), c.args.as_slice())),
            secret: self.check.one_at_a_time,
        }
    }

    fn ticket(&self, root: &ProjectRoot) -> Ticket {
        // A denied call is offered nothing.
        let choices = match self.check.check.decision {
            Decision::Deny { .. } => grants::Choices::default(),
            _ => grants::choices(root, &self.facts(), self.rule.as_ref()),
        };
        let paths: Vec<ResolvedPath> = self
            .prepared
            .facts()
            .paths
            .iter()
            .filter_map(|typed| ResolvedPath::of(root, typed))
            .collect();
        let shown = match &self.check.check.decision {
            Decision::Ask { reason } => {
                let paths = paths.iter().map(|p| (p.typed.as_str(), p.inside.as_str()));
                let mut shown = crate::marked::ShownCall::of(reason, &self.call.input, paths);
                if let Some(preview) = &self.check.check.preview {
                    shown.change = crate::marked::ShownChange::of(&preview.before, &preview.after);
                }
                Some(shown)
            }
            _ => None,
        };
        Ticket {
            paths,
            shown,
            ticket: self.id.clone(),
            check: self.check.clone(),
            proposed_rule: self
                .rule
                .as_ref()
                .filter(|_| !self.check.one_at_a_time)
                .map(ToString::to_string),
            hook_may_answer: self.check.hook_may_answer(),
            exact_grant: choices.exact,
            grant_folders: choices.folders,
            grant_link: choices.link,
            proposed_pattern: choices.pattern,
            covering_patterns: choices.patterns,
            changes_project: self.prepared.changes_project(),
        }
    }
}

impl Session {
    /// Checks a call and keeps it as a ticket to run by its id: its input
    /// read once, its verdict, the grant covering it, the change it would
    /// make. A call whose input does not parse, or that a tool's hard
    /// rules refuse (a command off the allowlist, a server's tool given a
    /// path outside the project), fails here.
    pub fn check(&self, call: Call) -> Result<Ticket, Error> {
        let kept = self.judge(call, true)?;
        let ticket = kept.ticket(&self.root);
        lock(&self.tickets).keep(kept);
        Ok(ticket)
    }

    /// The conversation the ticket `id` was checked in, while it waits.
    pub fn ticket_conversation(&self, id: &str) -> Option<String> {
        let tickets = lock(&self.tickets);
        let kept = tickets.0.iter().find(|k| k.id == id)?;
        kept.call.conversation.clone()
    }

    /// Runs the ticket `id` once: the answer applied, the call judged
    /// again on its kept facts (where its paths lead now), a checkpoint
    /// taken before a call that can change the project, then the call. A
    /// run refused before anything ran (an answer that does not fit, the
    /// policy's refusal now, no checkpoint) leaves the ticket for another
    /// answer; once the call starts, the ticket is used, whatever its end.
    pub async fn run(&self, id: &str, consent: Consent, run: RunContext) -> Result<Value, Error> {
        let kept = lock(&self.tickets).take(id)?;
        match self.admit(&kept, consent, run) {
            Ok(ctx) => self.execute(kept, ctx).await,
            Err(e) => {
                lock(&self.tickets).put_back(kept);
                Err(e)
            }
        }
    }

    /// Checks and runs a call in one step, without a preview: for a host
    /// whose user answered beforehand (`consent`) or is not asked.
    pub async fn call(
        &self,
        call: Call,
        consent: Consent,
        run: RunContext,
    ) -> Result<Value, Error> {
        let kept = self.judge(call, false)?;
        let ctx = self.admit(&kept, consent, run)?;
        self.execute(kept, ctx).await
    }

    /// The kept ticket of a call: its tool found and its input read once
    /// (the session's registry: Corral's tools and the servers'), judged,
    /// and with `preview` the change it would make.
    fn judge(&self, call: Call, preview: bool) -> Result<Kept, Error> {
        let ctx = self.context();
        let prepared = self.prepare(&call.tool, &call.input, &ctx)?;
        let check = prepared.check(&self.root, &ctx, preview)?;
        // A change that cannot be made (an edit whose text is not in the
        // file, or is there twice; a file that is not there) fails now
        // with its error rather than ask: the user is never asked to
        // approve a call that would only fail. (One that runs unasked
        // fails when it runs, with the same error.)
        if let (Decision::Ask { .. }, Some(error)) = (&check.decision, &check.preview_error) {
            if cannot_apply(error.code) {
                return Err(error.clone());
            }
        }
        let secret = prepared.asks_every_time(&self.root);
        let rule = prepared.command().map(SavedRule::proposed);
        let mut kept = Kept {
            id: uuid::Uuid::new_v4().to_string(),
            call,
            prepared,
            check: CallCheck::new(check, None, secret),
            rule,
        };
        let covering = lock(&self.approvals).covering(
            &self.root,
            kept.call.conversation.as_deref(),
            &kept.facts(),
        );
        kept.check = CallCheck::new(kept.check.check, covering, secret);
        Ok(kept)
    }

    /// Lets a checked call through, or says why not, before anything of it
    /// runs: the consent applied, the call judged again on its kept facts
    /// (where its paths lead now) and enforced, the checkpoint hook ready
    /// for a call that can change the project. The preview the user was
    /// shown is the base a write may change: if the file changed since,
    /// the run fails with `stale_file`.
    fn admit(&self, kept: &Kept, consent: Consent, run: RunContext) -> Result<CallContext, Error> {
        let (approval, network) = self.consent(kept, consent)?;
        let mut ctx = self.context();
        ctx.approval = approval;
        ctx.base = kept.check.check.preview.as_ref().map(|p| p.base.clone());
        ctx.shell = merge_shell(std::mem::take(&mut ctx.shell), run.shell, network);
        ctx.web_cache =
            kept.call
                .conversation
                .clone()
                .map(|conversation| corral_tools::web::CacheScope {
                    cache: self.web.clone(),
                    conversation,
                });
        let judged = kept.prepared.judge(&self.root, &ctx)?;
        policy::enforce(&judged.decision, approval, &kept.call.tool)?;
        if kept.prepared.changes_project() {
            ctx.checkpoint = self.hook(run.tag)?;
        }
        Ok(ctx)
    }

    /// Runs an admitted call from its kept input: one of Corral's tools on
    /// the blocking pool, a server's tool by its server.
    async fn execute(&self, kept: Kept, ctx: CallContext) -> Result<Value, Error> {
        let cancel = ctx.shell.cancel.clone();
        self.run_prepared(kept.prepared, kept.call.input, ctx, &cancel)
            .await
    }

    /// The approval a ticket runs with, and whether with the network: the
    /// answer applied (a grant held, a rule saved), or a grant of its
    /// conversation that covers it now (never with the network).
    fn consent(&self, kept: &Kept, consent: Consent) -> Result<(Approval, bool), Error> {
        let answer = match consent {
            Consent::Granted { network } => return Ok((Approval::Granted, network)),
            Consent::Answer(answer) => answer,
            Consent::None => {
                let covering = lock(&self.approvals).covering(
                    &self.root,
                    kept.call.conversation.as_deref(),
                    &kept.facts(),
                );
                let approval = match covering {
                    Some(_) => Approval::Granted,
                    None => Approval::None,
                };
                return Ok((approval, false));
            }
        };
        match answer.scope {
            Scope::Once => {}
            Scope::Conversation => {
                let (Some(conversation), Some(grant)) = (&kept.call.conversation, answer.grant)
                else {
                    return Err(Error::invalid_input(
                        "approving for the conversation needs a call checked in a conversation, \
                         and the `grant`",
                    ));
                };
                lock(&self.approvals).grant(&self.root, conversation, &kept.facts(), grant)?;
            }
            Scope::Always => self.save_rule(kept, answer.rule.as_deref())?,
        }
        Ok((Approval::Granted, answer.network))
    }

    /// Saves the rule the user confirmed for a command, if it is the one
    /// the call proposes (the window showed it); a call that touches a
    /// secret saves none.
    fn save_rule(&self, kept: &Kept, shown: Option<&str>) -> Result<(), Error> {
        let Some(rule) = &kept.rule else {
            return Err(Error::invalid_input(format!(
                "only a command can be always allowed, not `{}`",
                kept.call.tool
            )));
        };
        if shown != Some(rule.to_string().as_str()) {
            return Err(Error::invalid_input(format!(
                "the rule confirmed is not `{rule}`, the one this command proposes"
            ))
            .hint("Confirm the rule as the approval shows it."));
        }
        if !kept.check.one_at_a_time {
            self.settings.save_rule(self.root.path(), rule.clone())?;
        }
        Ok(())
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
        ctx.shell.background = self.background_commands.then(|| self.background.clone());
        ctx.search_index = self.search_index.as_ref().map(|c| self.index.config(c));
        ctx.lsp = self.lsp.clone();
        ctx
    }
}

/// The session's side of a command's run (its programs, rules, domains,
/// background commands, network) with the host's (live output, cancel,
/// domain questions). Only the user's approval of this very call grants
/// the network (or the host's user, for every command).
/// Whether a preview that failed with `code` means the call itself
/// would fail the same way, whatever the user answered.
fn cannot_apply(code: ErrorCode) -> bool {
    matches!(
        code,
        ErrorCode::NoMatch
            | ErrorCode::AmbiguousMatch
            | ErrorCode::NotFound
            | ErrorCode::IsDirectory
            | ErrorCode::NotText
    )
}

fn merge_shell(session: ShellRun, host: ShellRun, network: bool) -> ShellRun {
    ShellRun {
        network: session.network || network,
        egress: corral_tools::shell::Egress {
            allowed_domains: session.egress.allowed_domains,
            ..host.egress
        },
        extra_programs: session.extra_programs,
        rules: session.rules,
        background: session.background,
        ..host
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::{Fixed, Options};
    use corral_tools::policy::Mode;
    use serde_json::json;
    use std::sync::Arc;

    fn session() -> (tempfile::TempDir, Session) {
        let dir = tempfile::tempdir().unwrap();
        let settings = Arc::new(Fixed {
            mode: Mode::Ask,
            ..Fixed::default()
        });
        let session = Session::open(dir.path(), settings, Options::default()).unwrap();
        (dir, session)
    }

    #[test]
    fn the_ticket_says_what_a_hook_may_answer_and_what_may_be_granted() {
        let (_dir, session) = session();
        let write = session
            .check(Call::new(
                "write_file",
                json!({"path": "src/a.js", "content": "x"}),
            ))
            .unwrap();
        assert!(write.hook_may_answer, "{write:?}");
        assert_eq!(
            write.exact_grant,
            Some(Grant::Path {
                tool: "write_file".into(),
                path: "src/a.js".into()
            })
        );
        assert_eq!(write.grant_folders, ["src", "."]);
        let sent = serde_json::to_value(&write).unwrap();
        assert_eq!(sent["hook_may_answer"], true);
        assert_eq!(sent["grant_folders"], json!(["src", "."]));
        assert_eq!(sent["exact_grant"]["kind"], "path");

        let command = session
            .check(Call::new(
                "exec_shell",
                json!({"command": "node", "args": ["-e", "console.log(1)"]}),
            ))
            .unwrap();
        assert!(command.hook_may_answer);
        assert_eq!(command.proposed_rule.as_deref(), Some("node -e"));
        let more = |args: &[&str]| Grant::Command {
            command: "node".into(),
            args: args.iter().map(|a| a.to_string()).collect(),
            more: true,
        };
        assert_eq!(command.proposed_pattern, Some(more(&["-e"])));
        assert!(command.covering_patterns.contains(&more(&[])));

        // The agent's configuration asks every time: a hook's allow is not
        // the user's, and nothing wider than once is offered.
        let config = session
            .check(Call::new(
                "write_file",
                json!({"path": ".claude/settings.json", "content": "{}"}),
            ))
            .unwrap();
        assert!(config.check.one_at_a_time);
        assert!(!config.hook_may_answer);
        assert_eq!(config.exact_grant, None);
        assert!(config.grant_folders.is_empty());
        let sent = serde_json::to_value(&config).unwrap();
        assert!(sent.get("hook_may_answer").is_none() && sent.get("exact_grant").is_none());

        // A read the mode allows has no question for a hook to answer.
        let read = session
            .check(Call::new("list_directory", json!({"path": "."})))
            .unwrap();
        assert!(!read.hook_may_answer);
    }

    #[test]
    fn a_web_fetch_keeps_its_pages_for_its_conversation_until_it_ends() {
        let (_dir, session) = session();
        let check = |conversation: Option<&str>| {
            let mut call = Call::new("web_fetch", json!({"url": "https://docs.test/a"}));
            call.conversation = conversation.map(str::to_string);
            let kept = session.judge(call, true).unwrap();
            // A read: the mode lets it run; the domain is what asks.
            assert_eq!(
                kept.check.check.decision,
                Decision::Allow,
                "{conversation:?}"
            );
            session
                .admit(&kept, Consent::None, RunContext::default())
                .unwrap()
                .web_cache
        };
        let scope = check(Some("c1")).unwrap();
        assert_eq!(scope.conversation, "c1");
        assert!(Arc::ptr_eq(&scope.cache, &session.web));
        assert!(check(None).is_none(), "no conversation, no pages kept");

        let page = corral_tools::web::Page {
            final_url: "https://docs.test/a".into(),
            status: 200,
            content_type: "text/plain".into(),
            format: corral_tools::web::page::Format::Text,
            text: "kept".into(),
            received_bytes: 4,
            complete: true,
            declared_bytes: None,
        };
        scope
            .cache
            .put("c1", "https://docs.test/a", Arc::new(page.clone()));
        scope.cache.put("c2", "https://docs.test/a", Arc::new(page));
        session.end_conversation("c1");
        assert!(session.web.get("c1", "https://docs.test/a").is_none());
        assert!(session.web.get("c2", "https://docs.test/a").is_some());
    }

    #[test]
    fn a_hooks_allow_is_not_the_users_for_the_network() {
        let (_dir, session) = session();
        let install = session
            .check(Call::new(
                "exec_shell",
                json!({"command": "npm", "args": ["install"]}),
            ))
            .unwrap();
        assert!(install.check.check.network, "{install:?}");
        assert!(matches!(install.check.check.decision, Decision::Ask { .. }));
        assert!(!install.hook_may_answer);
        // It may still be granted: the grant never carries the network.
        assert!(install.exact_grant.is_some());
    }
}
