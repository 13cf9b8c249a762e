//! The loop's user in an ACP session: the editor. Each event of the
//! script is a `session/update`; each approval is a
//! `session/request_permission` whose options map onto Corral's answers;
//! `session/cancel` stops the run.

use super::peer::Peer;
use crate::exec::host::Front;
use corral_tools::{Error, ErrorCode};
use serde::Deserialize;
use serde_json::{json, Value};
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

pub struct EditorFront {
    pub peer: Arc<Peer>,
    pub session_id: String,
    /// Cancelled by the editor's `session/cancel` for this turn.
    pub stop: CancellationToken,
}

/// What the script asks about a waiting call (ui/src/exec/acp.ts).
#[derive(Deserialize)]
struct Question {
    #[serde(rename = "toolCall")]
    tool_call: Value,
    /// The call fetches from the network: "once" runs it without, so
    /// allowing it with the network is its own option, as in the window.
    network: bool,
    /// It may be allowed for the rest of the conversation (not a secret-like file).
    grant: bool,
}

/// What the editor shows of a call waiting for approval, marked as the
/// window and the MCP question mark it (`corral_mcp::question`): its
/// title (the argv joined, where `touch ["a b"]` and `touch ["a","b"]`
/// read the same, and raw U+2028 or U+202E would act) marked, and, for a
/// call without a diff to show (a command), every field of its input on
/// its own line, whole and marked, as the content an editor shows.
fn mark(tool_call: &mut Value) {
    use corral_mcp::question::{fields, reveal};
    if let Some(title) = tool_call.get("title").and_then(Value::as_str) {
        tool_call["title"] = json!(reveal(title));
    }
    let empty = tool_call
        .get("content")
        .and_then(Value::as_array)
        .is_none_or(Vec::is_empty);
    if empty {
        let input = tool_call.get("rawInput").cloned().unwrap_or(Value::Null);
        let shown = fields(&input);
        if !shown.is_empty() {
            tool_call["content"] =
                json!([{ "type": "content", "content": { "type": "text", "text": shown } }]);
        }
    }
}

/// The options offered for a call: each option's id is the answer the
/// script hands the loop.
fn options(question: &Question) -> Vec<Value> {
    let option =
        |id: &str, name: &str, kind: &str| json!({ "optionId": id, "name": name, "kind": kind });
    let mut options = vec![option("once", "Allow once", "allow_once")];
    if question.network {
        options.push(option("network", "Allow once with network", "allow_once"));
    }
    if question.grant {
        options.push(option(
            "grant",
            "Allow in this conversation",
            "allow_always",
        ));
    }
    options.push(option("deny", "Reject", "reject_once"));
    options
}

impl Front for EditorFront {
    async fn ask(&self, question: Value) -> Result<Value, Error> {
        let mut question: Question = serde_json::from_value(question).map_err(|e| {
            Error::invalid_input(format!("the arguments of `ask_approval` do not fit: {e}"))
        })?;
        mark(&mut question.tool_call);
        let options = options(&question);
        let params = json!({
            "sessionId": self.session_id,
            "toolCall": question.tool_call,
            "options": options,
        });
        let reply = tokio::select! {
            reply = self.peer.request("session/request_permission", params) => reply,
            () = self.stop.cancelled() => None,
        };
        let decision = match reply {
            Some(Ok(answer)) => match answer.pointer("/outcome/outcome").and_then(Value::as_str) {
                Some("selected") => {
                    let chosen = answer.pointer("/outcome/optionId").and_then(Value::as_str);
                    // Only an option offered allows anything.
                    options
                        .iter()
                        .filter_map(|o| o["optionId"].as_str())
                        .find(|id| Some(*id) == chosen)
                        .unwrap_or("deny")
                }
                _ => "cancelled",
            },
            Some(Err(error)) => {
                return Err(Error::new(
                    ErrorCode::Io,
                    "the editor failed to answer a permission request",
                )
                .detail("error", error))
            }
            None => "cancelled",
        };
        Ok(json!({ "decision": decision }))
    }

    async fn stopped(&self) {
        self.stop.cancelled().await;
    }

    fn emit(&self, update: Value) {
        self.peer.notify(
            "session/update",
            json!({ "sessionId": self.session_id, "update": update }),
        );
    }
}
