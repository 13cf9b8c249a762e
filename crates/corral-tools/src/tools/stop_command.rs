//! `stop_command`: stops a command started with `exec_shell`'s
//! `background: true` (its whole process group) and returns its last
//! output. Touches nothing of the project.

use crate::error::Result;
use crate::policy::Risk;
use crate::root::ProjectRoot;
use crate::shell::background::CommandOutput;
use crate::tool::{CallContext, Tool};
use serde::Deserialize;
use serde_json::{json, Value};

/// Input of `stop_command`.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StopCommandInput {
    /// The run_id exec_shell returned.
    pub run_id: String,
}

pub struct StopCommand;

impl Tool for StopCommand {
    type Input = StopCommandInput;
    type Output = CommandOutput;
    const NAME: &'static str = "stop_command";
    const RISK: Risk = Risk::Read;
    const DESCRIPTION: &'static str = "Stop a command started with exec_shell background: true \
        (it and everything it started). Returns where it stands, like command_output.";

    fn run(
        &self,
        _root: &ProjectRoot,
        input: StopCommandInput,
        ctx: &CallContext,
    ) -> Result<CommandOutput> {
        super::command_output::background(ctx)?.stop(&input.run_id)
    }

    fn probe(&self, path: &str) -> Value {
        json!({"run_id": path})
    }
}
