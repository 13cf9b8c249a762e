//! The checkpoint before a call: what it is labelled with, and the hook
//! `dispatch::call` asks.

use crate::{Checkpoint, NewCheckpoint, Store};
use corral_fs::error::Result;
use corral_fs::root::ProjectRoot;
use serde_json::Value;
use std::sync::Arc;

/// What a checkpoint before a call is labelled with: the call's path, or
/// its command line (cut at 120 characters).
pub fn label(tool: &str, input: &Value) -> String {
    let text = if let Some(path) = input.get("path").and_then(Value::as_str) {
        path.to_string()
    } else if let Some(command) = input.get("command").and_then(Value::as_str) {
        let args = input
            .get("args")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .map(|v| {
                        v.as_str()
                            .map(str::to_string)
                            .unwrap_or_else(|| v.to_string())
                    })
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .unwrap_or_default();
        format!("{command} {args}").trim().to_string()
    } else {
        tool.to_string()
    };
    let cut: String = text.chars().take(120).collect();
    if cut.len() < text.len() {
        format!("{cut}…")
    } else {
        cut
    }
}

/// Takes a checkpoint before each call that can change the project
/// (`dispatch::call` asks it, from the tool's risk and read-only verdict).
#[derive(Debug, Clone)]
pub struct Hook {
    pub store: Arc<Store>,
    /// The user turn the call belongs to.
    pub turn: Option<String>,
    /// The model's id for the call.
    pub call_id: Option<String>,
}

impl Hook {
    /// A checkpoint labelled with the call.
    pub fn before(&self, root: &ProjectRoot, tool: &str, input: &Value) -> Result<Checkpoint> {
        self.store.checkpoint(
            root,
            NewCheckpoint {
                tool: tool.to_string(),
                label: label(tool, input),
                turn: self.turn.clone(),
                call_id: self.call_id.clone(),
            },
        )
    }
}
