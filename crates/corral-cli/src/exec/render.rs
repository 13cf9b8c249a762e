//! What `corral-cli exec` prints of a run's events (docs/exec.md): with
//! `--json`, every event as one line of JSON on stdout; without, progress
//! on stderr and the final message alone on stdout.

use corral_mcp::question::reveal;
use serde_json::Value;
use std::io::{IsTerminal, Write};

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
        // What the model or a tool wrote reaches the terminal marked: a
        // control, a bidi override or a run of blanks is shown by its
        // code point, never acted on (`corral_mcp::question::reveal`).
        let raw = |key: &str| event.get(key).and_then(Value::as_str).unwrap_or_default();
        let text = |key: &str| reveal(raw(key));
        let input = || reveal(&event.get("input").unwrap_or(&Value::Null).to_string());
        let error = |key: &str| {
            reveal(
                event
                    .pointer(&format!("/error/{key}"))
                    .and_then(Value::as_str)
                    .unwrap_or_default(),
            )
        };
        let mut err = std::io::stderr().lock();
        let _ = match raw("type") {
            "tool_call" => writeln!(err, "> {} {}", text("name"), input()),
            "tool_result" => match raw("status") {
                "done" => writeln!(err, "  done"),
                "denied" => writeln!(err, "  denied: {}", text("reason")),
                status => writeln!(err, "  {}: {}", reveal(status), error("message")),
            },
            "approval_answered" if raw("by") == "no_terminal" => writeln!(
                err,
                "  needs approval and there is no terminal to ask: denied, the run stops (pass --mode to allow it)"
            ),
            "cut" => {
                let count = |k: &str| event.get(k).and_then(Value::as_u64).unwrap_or(0);
                writeln!(
                    err,
                    "  the model received {} of {} characters; it can read the rest with {}",
                    count("received"),
                    count("total"),
                    text("rest")
                )
            }
            "notice" => writeln!(err, "note: {}", text("text")),
            "error" => {
                let hint = error("hint");
                writeln!(err, "error: {}{}", error("message"), if hint.is_empty() { String::new() } else { format!("\nhint: {hint}") })
            }
            "usage" => {
                let count = |k: &str| event.get(k).and_then(Value::as_u64).unwrap_or(0);
                let cached = match (count("cache_read_tokens"), count("cache_write_tokens")) {
                    (0, 0) => String::new(),
                    (read, 0) => format!(" ({read} cache read)"),
                    (read, written) => format!(" ({read} cache read, {written} written)"),
                };
                let cost = match event.get("cost_usd").and_then(Value::as_f64) {
                    Some(cost) => format!(", ${cost:.4}"),
                    None => ", cost unknown".to_string(),
                };
                writeln!(
                    err,
                    "tokens: {} in{cached}, {} out{cost}",
                    count("input_tokens"),
                    count("output_tokens")
                )
            }
            "final" => {
                if let Some(id) = event.get("conversation").and_then(Value::as_str) {
                    let _ = writeln!(err, "conversation: {}", reveal(id));
                }
                if let Some(error) = event.get("store_error") {
                    let said = |key: &str| error.get(key).and_then(Value::as_str).unwrap_or_default();
                    let _ = writeln!(
                        err,
                        "corral: the conversation could not be stored in the history: {} ({})",
                        reveal(said("message")),
                        said("code")
                    );
                }
                // The answer as written where stdout is a file or a pipe;
                // on a terminal, line by line, marked.
                let answer = event.get("text").and_then(Value::as_str).unwrap_or_default();
                let mut out = std::io::stdout().lock();
                let shown = if std::io::stdout().is_terminal() {
                    answer.split('\n').map(reveal).collect::<Vec<_>>().join("\n")
                } else {
                    answer.to_string()
                };
                writeln!(out, "{shown}").and_then(|()| out.flush())
            }
            _ => Ok(()),
        };
    }
}
