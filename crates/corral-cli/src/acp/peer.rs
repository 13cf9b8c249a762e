//! The editor at the other end of stdio: JSON-RPC 2.0, one message a line
//! (ACP's stdio transport). Answers, notifications, and requests of ours
//! (`session/request_permission`) whose answers come back through
//! [`Peer::answered`].

use corral_tools::Error;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};
use tokio::sync::oneshot;

/// JSON-RPC's codes for what was asked wrongly; anything else is internal.
pub const INVALID_PARAMS: i64 = -32602;
pub const METHOD_NOT_FOUND: i64 = -32601;
pub const PARSE_ERROR: i64 = -32700;
pub const INTERNAL: i64 = -32603;

/// What the editor answered to a request of ours: its result, or its error.
pub type Reply = Result<Value, Value>;

#[derive(Default)]
pub struct Peer {
    next: AtomicU64,
    pending: Mutex<HashMap<u64, oneshot::Sender<Reply>>>,
}

impl Peer {
    /// Writes one message as one line; stdout carries nothing else.
    fn send(&self, message: &Value) {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{message}");
        let _ = out.flush();
    }

    pub fn notify(&self, method: &str, params: Value) {
        self.send(&json!({ "jsonrpc": "2.0", "method": method, "params": params }));
    }

    pub fn respond(&self, id: &Value, result: Value) {
        self.send(&json!({ "jsonrpc": "2.0", "id": id, "result": result }));
    }

    /// An error answer carrying Corral's standardized error as its `data`.
    pub fn fail(&self, id: &Value, code: i64, error: &Error) {
        let error = json!({ "code": code, "message": error.message, "data": error.to_json() });
        self.send(&json!({ "jsonrpc": "2.0", "id": id, "error": error }));
    }

    /// Sends a request and waits for the editor's answer (`None`: the
    /// editor left without one).
    pub async fn request(&self, method: &str, params: Value) -> Option<Reply> {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let (answer, answered) = oneshot::channel();
        self.pending
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(id, answer);
        self.send(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }));
        answered.await.ok()
    }

    /// Hands an answer of the editor to the request that waits for it.
    pub fn answered(&self, message: &Value) {
        let Some(id) = message.get("id").and_then(Value::as_u64) else {
            return;
        };
        let waiting = self
            .pending
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&id);
        if let Some(waiting) = waiting {
            let reply = match message.get("error") {
                Some(error) => Err(error.clone()),
                None => Ok(message.get("result").cloned().unwrap_or(Value::Null)),
            };
            let _ = waiting.send(reply);
        }
    }
}
