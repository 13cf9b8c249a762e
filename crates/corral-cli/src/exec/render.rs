//! What `corral-cli exec` prints of a run's events (docs/exec.md): with
//! `--json`, every event as one line of JSON on stdout; without, progress
//! on stderr and the final message alone on stdout.

use serde_json::Value;
use std::io::Write;

#[derive(Debug, Clone, Copy)]
pub(crate) struct Render {
    json: bool,
}

impl Render {
    pub fn new(json: bool) -> Render {
        Render { json }
    }

    pub fn event(&self, event: &Value) {
        if self.json {
            let mut out = std::io::stdout().lock();
            let _ = writeln!(out, "{event}");
            let _ = out.flush();
            return;
        }
        let text = |key: &str| event.get(key).and_then(Value::as_str).unwrap_or_default();
        let mut err = std::io::stderr().lock();
        let _ = match text("type") {
            "tool_call" => writeln!(err, "> {} {}", text("name"), event.get("input").unwrap_or(&Value::Null)),
            "tool_result" => match text("status") {
                "done" => writeln!(err, "  done"),
                "denied" => writeln!(err, "  denied: {}", text("reason")),
                status => {
                    let message = event.pointer("/error/message").and_then(Value::as_str).unwrap_or_default();
                    writeln!(err, "  {status}: {message}")
                }
            },
            "approval_answered" if text("by") == "no_terminal" => writeln!(
                err,
                "  needs approval and there is no terminal to ask: denied, the run stops (pass --mode to allow it)"
            ),
            "notice" => writeln!(err, "note: {}", text("text")),
            "error" => {
                let message = event.pointer("/error/message").and_then(Value::as_str).unwrap_or_default();
                let hint = event.pointer("/error/hint").and_then(Value::as_str).unwrap_or_default();
                writeln!(err, "error: {message}{}", if hint.is_empty() { String::new() } else { format!("\nhint: {hint}") })
            }
            "usage" => writeln!(
                err,
                "tokens: {} in, {} out",
                event.get("input_tokens").unwrap_or(&Value::Null),
                event.get("output_tokens").unwrap_or(&Value::Null)
            ),
            "final" => {
                if let Some(id) = event.get("conversation").and_then(Value::as_str) {
                    let _ = writeln!(err, "conversation: {id}");
                }
                let mut out = std::io::stdout().lock();
                writeln!(out, "{}", text("text")).and_then(|()| out.flush())
            }
            _ => Ok(()),
        };
    }
}
