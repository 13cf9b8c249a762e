//! `exec_shell`: one allowlisted program with an argument list, sandboxed.
//! The policy facts of a command live here: the argument rules refuse it
//! before anyone is asked, the read-only table lets it run unasked, and an
//! argument naming a secret makes it ask in every mode.

use crate::display::{ResultView, Subject};
use crate::error::Error;
use crate::error::Result;
use crate::policy::Risk;
use crate::root::ProjectRoot;
use crate::shell::background::Started;
use crate::shell::{self, ExecShellInput, ExecShellOutput};
use crate::tool::{Assessment, CallContext, Tool};
use serde::Serialize;
use serde_json::{json, Value};
use std::borrow::Cow;

pub struct ExecShell;

/// A finished command, or one started in the background.
#[derive(Serialize)]
#[serde(untagged)]
pub enum ExecShellResult {
    Done(ExecShellOutput),
    Started(Started),
}

impl Tool for ExecShell {
    type Input = ExecShellInput;
    type Output = ExecShellResult;
    const NAME: &'static str = "exec_shell";
    const RISK: Risk = Risk::Shell;
    /// `{programs}`: the built-in programs ([`Tool::description`]).
    const DESCRIPTION: &'static str = "Run one allowlisted program ({programs}, or a program the \
        user added) with an argument list, in the project root, without a shell: no pipes, \
        redirections or globs. Returns stdout, stderr, exit_code; long output keeps its head and \
        tail. No network unless the user grants it for the call. Default timeout 30 s, max \
        600 s. With background: true it returns a run_id at once: read the output with \
        command_output, stop it with stop_command (at most 8 at a time).";
    const SUBJECT: Subject = Subject::Command;
    const RESULT: ResultView = ResultView::Output;

    /// [`Self::DESCRIPTION`] naming the programs of the one table of them.
    fn description() -> Cow<'static, str> {
        let programs = shell::ALLOWED_PROGRAMS.join(" ");
        Cow::Owned(Self::DESCRIPTION.replace("{programs}", &programs))
    }

    fn assessment(
        &self,
        root: &ProjectRoot,
        input: &ExecShellInput,
        ctx: &CallContext,
        precheck: bool,
    ) -> Result<Assessment> {
        let facts = shell::assess(root, input, &ctx.shell, precheck)?;
        Ok(Assessment {
            paths: Vec::new(),
            // Without the namespaces there is no read-only profile to run
            // it in, so every command asks.
            read_only: facts.read_only && shell::namespaces_available(),
            named_secret: facts.named_secret,
            asks_because: facts.git_writes.map(|w| {
                format!(
                    "git writes its own folder beyond ordinary work ({}): {}; what is written there the user's git reads later",
                    w.names.join(", "),
                    w.why
                )
            }),
            rule: facts.rule.map(ToString::to_string),
            network: facts.network,
        })
    }

    fn run(
        &self,
        root: &ProjectRoot,
        input: ExecShellInput,
        ctx: &CallContext,
    ) -> Result<ExecShellResult> {
        if !input.background {
            return shell::exec_shell(root, &input, &ctx.shell).map(ExecShellResult::Done);
        }
        match &ctx.shell.background {
            Some(background) => background
                .start(root, &input, &ctx.shell)
                .map(ExecShellResult::Started),
            None => Err(
                Error::invalid_input("background commands are not available here")
                    .hint("Run the command without background: true."),
            ),
        }
    }

    fn probe(&self, path: &str) -> Value {
        json!({"command": "ls", "args": [path]})
    }
}
