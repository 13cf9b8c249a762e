//! `exec_shell`. (Being built: see issue 4.)

use crate::error::{Error, ErrorCode, Result};
use crate::root::ProjectRoot;
use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Input of `exec_shell`.
#[derive(Debug, Clone, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExecShellInput {
    /// The program: one of git cargo npm yarn pnpm node bun ls find grep mkdir rm mv cp touch.
    pub command: String,
    /// Arguments, one per element; no shell syntax is interpreted.
    #[serde(default)]
    pub args: Vec<String>,
    /// Time limit in seconds (default 30, max 600).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_secs: Option<u64>,
}

/// Which stream a chunk of output came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Stream {
    Stdout,
    Stderr,
}

/// A cancel switch shared between the caller and a running command.
#[derive(Debug, Clone, Default)]
pub struct CancelToken(Arc<AtomicBool>);

impl CancelToken {
    /// Asks the command to stop (its whole process group is killed).
    pub fn cancel(&self) {
        self.0.store(true, Ordering::SeqCst);
    }
    /// Whether cancel was asked.
    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }
}

/// Receives output chunks as they arrive.
pub type OutputSink = Arc<dyn Fn(Stream, &[u8]) + Send + Sync>;

/// How a shell call is run: cancel switch and an optional live-output sink.
#[derive(Clone, Default)]
pub struct ShellRun {
    pub cancel: CancelToken,
    pub on_output: Option<OutputSink>,
}

/// Whether a call is on the read-only table (runs without asking in
/// `ask` and `auto_edit` modes).
pub fn is_read_only(_input: &ExecShellInput) -> bool {
    false
}

/// Runs one allowlisted program.
pub fn exec_shell(_root: &ProjectRoot, _input: &ExecShellInput, _run: &ShellRun) -> Result<serde_json::Value> {
    Err(Error::new(ErrorCode::Io, "exec_shell is not built yet"))
}
