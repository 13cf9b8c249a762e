//! The session's one registry of tools: Corral's own (corral-tools'
//! registry) and the tools of the user's running MCP servers. A call of
//! either is found, read against its input schema, assessed, judged,
//! approved and checkpointed by the same code; only the run itself goes to
//! the tool's own place (a thread of Corral's, or the server).

use crate::server_tool::ServerTool;
use crate::Session;
use corral_tools::dispatch::{self, CallContext, Judged, PolicyCheck};
use corral_tools::policy::{Mode, Risk};
use corral_tools::shell::{CancelToken, ExecShellInput};
use corral_tools::tool::Assessment;
use corral_tools::{Error, ErrorCode, ProjectRoot};
use serde_json::{Map, Value};

/// One call, its tool found and its input read once.
pub enum Prepared {
    /// A tool of Corral's own registry, its input parsed into its type.
    Own(dispatch::Prepared),
    /// A tool of one of the user's MCP servers, its input read against
    /// its schema.
    Server {
        tool: ServerTool,
        input: Map<String, Value>,
        facts: Assessment,
    },
}

impl Prepared {
    /// The name the model called it by.
    pub fn name(&self) -> &str {
        match self {
            Prepared::Own(own) => own.tool.name(),
            Prepared::Server { tool, .. } => &tool.name,
        }
    }

    /// What the policy knows of the call: the paths it names, and more.
    pub fn facts(&self) -> &Assessment {
        match self {
            Prepared::Own(own) => &own.facts,
            Prepared::Server { facts, .. } => facts,
        }
    }

    /// The command, for a call of `exec_shell`.
    pub fn command(&self) -> Option<&ExecShellInput> {
        match self {
            Prepared::Own(own) => own.input.get::<ExecShellInput>(),
            Prepared::Server { .. } => None,
        }
    }

    /// Whether the call is of one of Corral's own tools (grants of a path
    /// or a command are for those).
    pub fn is_own(&self) -> bool {
        matches!(self, Prepared::Own(_))
    }

    /// Whether the call can change the project (a checkpoint goes first).
    pub fn changes_project(&self) -> bool {
        match self {
            Prepared::Own(own) => dispatch::changes(own.tool, &own.facts),
            Prepared::Server { tool, .. } => tool.changes_project(),
        }
    }

    /// Whether the call asks every time, never covered by a grant or a
    /// saved rule: it touches a secret-like file or one another program
    /// runs by itself, by a path it names or where that path really leads.
    pub fn asks_every_time(&self, root: &ProjectRoot) -> bool {
        dispatch::asks_every_time(root, self.facts())
    }

    /// The policy's decision. The paths a server's tool is given are judged
    /// as Corral's own tools' are, where they lead now (a read for a tool
    /// marked read-only, otherwise a write: boundaries and secrets hold);
    /// its server's own rule ([`ServerTool::rule`]) is the mode's part.
    pub fn judge(&self, root: &ProjectRoot, ctx: &CallContext) -> Result<Judged, Error> {
        match self {
            Prepared::Own(own) => dispatch::judge(root, own.tool, &own.facts, ctx),
            Prepared::Server { tool, facts, .. } => {
                let (risk, mode) = if tool.read_only {
                    (Risk::Read, ctx.mode)
                } else {
                    // The mode is the server's rule's to judge, below.
                    (Risk::Write, Mode::FullAuto)
                };
                let paths = dispatch::judge_as(root, &tool.name, risk, mode, facts, ctx)?;
                Ok(Judged {
                    decision: paths.decision.stricter(tool.rule(ctx.mode)),
                    ..paths
                })
            }
        }
    }

    /// What the approval shows: the decision, and for one of Corral's
    /// writes with `preview` the change it would make.
    pub fn check(
        &self,
        root: &ProjectRoot,
        ctx: &CallContext,
        preview: bool,
    ) -> Result<PolicyCheck, Error> {
        if let (Prepared::Own(own), true) = (self, preview) {
            return dispatch::check_prepared(root, own, ctx);
        }
        let Judged {
            decision,
            rule,
            network,
        } = self.judge(root, ctx)?;
        Ok(PolicyCheck {
            decision,
            preview: None,
            preview_error: None,
            rule,
            network,
        })
    }
}

impl Session {
    /// Finds the tool the model calls `name` and reads `input` once
    /// against it: its type for one of Corral's tools (their hard rules
    /// refuse first), its input schema for a server's (a path it names
    /// leading out of the project, or into `.git/` for a tool that may
    /// write, refuses first).
    pub fn prepare(&self, name: &str, input: &Value, ctx: &CallContext) -> Result<Prepared, Error> {
        let servers = self.servers();
        match servers.tool(name) {
            Some(tool) => {
                let tool = tool?;
                let input = tool.parse(input)?;
                let facts = tool.assess(&self.root, &input, true)?;
                Ok(Prepared::Server { tool, input, facts })
            }
            None => match dispatch::tool(name) {
                Ok(_) => dispatch::prepare(&self.root, name, input, ctx).map(Prepared::Own),
                Err(e) => Err(e.hint(format!(
                    "Use one of: {}.",
                    self.tool_specs()
                        .iter()
                        .map(|s| s.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ))),
            },
        }
    }

    /// Runs a prepared call the policy allowed, with `ctx` (its checkpoint
    /// hook set when it can change the project): one of Corral's tools on
    /// a thread, a server's tool by its server, after the same checkpoint.
    /// `input` is the call's JSON, which the checkpoint records.
    pub(crate) async fn run_prepared(
        &self,
        prepared: Prepared,
        input: Value,
        ctx: CallContext,
        cancel: &CancelToken,
    ) -> Result<Value, Error> {
        let root = self.root.clone();
        let name = prepared.name().to_string();
        let stopped = |e: tokio::task::JoinError| {
            Error::new(ErrorCode::Io, format!("{name} stopped unexpectedly: {e}"))
        };
        match prepared {
            Prepared::Own(own) => tokio::task::spawn_blocking(move || {
                dispatch::run_prepared(&root, own, &input, &ctx)
            })
            .await
            .map_err(stopped)?,
            Prepared::Server {
                tool, input: args, ..
            } => {
                if let Some(hook) = ctx.checkpoint {
                    let called = name.clone();
                    tokio::task::spawn_blocking(move || {
                        dispatch::checkpoint(&root, &hook, &called, &input)
                    })
                    .await
                    .map_err(stopped)??;
                }
                self.servers()
                    .call(&tool.server, &tool.tool, Value::Object(args), cancel)
                    .await
            }
        }
    }
}
