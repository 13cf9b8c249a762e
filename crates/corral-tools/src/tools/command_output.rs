//! `command_output`: what a command started with `exec_shell`'s
//! `background: true` printed since a byte offset, and whether it still
//! runs. Reads nothing of the project.

use crate::error::{Error, ErrorCode, Result};
use crate::policy::Risk;
use crate::root::ProjectRoot;
use crate::shell::background::CommandOutput;
use crate::tool::{CallContext, Tool};
use serde::Deserialize;
use serde_json::{json, Value};

/// Input of `command_output`.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CommandOutputInput {
    /// The run_id exec_shell returned.
    pub run_id: String,
    /// Return output from this byte on (the `next_byte` of the last look);
    /// from the start when absent.
    #[serde(default)]
    pub since_byte: Option<u64>,
}

pub struct CommandOutputTool;

impl Tool for CommandOutputTool {
    type Input = CommandOutputInput;
    type Output = CommandOutput;
    const NAME: &'static str = "command_output";
    const RISK: Risk = Risk::Read;
    const DESCRIPTION: &'static str = "Read the output of a command started with exec_shell \
        background: true, from since_byte on (pass the next_byte of your last look), at most \
        64 KiB at a time; says whether it still runs and, once ended, its exit_code, and the \
        TCP ports it listens on (the user can open them; your other commands cannot reach them \
        unless they run with the network).";

    fn run(
        &self,
        _root: &ProjectRoot,
        input: CommandOutputInput,
        ctx: &CallContext,
    ) -> Result<CommandOutput> {
        background(ctx)?.output(&input.run_id, input.since_byte.unwrap_or(0))
    }

    fn probe(&self, path: &str) -> Value {
        json!({"run_id": path})
    }
}

/// The caller's background commands, or why there are none.
pub(super) fn background(ctx: &CallContext) -> Result<&crate::shell::background::Background> {
    ctx.shell.background.as_deref().ok_or_else(|| {
        Error::new(
            ErrorCode::InvalidInput,
            "background commands are not available here",
        )
        .hint("Run the command without background: true.")
    })
}
