//! What the provider decoders share: the [`Decoder`] trait the driver calls,
//! the budget for tool call input, and the end of a tool call. The driver
//! and the decoders both depend on this module; neither depends on the
//! other's internals.

use crate::error::{bad_tool_input, clip, LlmError};
use crate::sse::SseEvent;
use crate::types::StreamEvent;
use serde_json::{Map, Value};

/// What a decoder says after an event.
pub(crate) enum Step {
    /// Keep reading.
    More,
    /// The response is complete, with this stop reason.
    Finished(String),
}

/// Turns one provider's SSE events into [`StreamEvent`]s (never terminal
/// ones: the driver sends those).
pub(crate) trait Decoder: Send {
    /// One event of the body.
    fn event(&mut self, event: &SseEvent, out: &mut Vec<StreamEvent>) -> Result<Step, LlmError>;
    /// The body ended without the protocol's last event: the stop reason
    /// if nothing was lost, else why not.
    fn end(&mut self, out: &mut Vec<StreamEvent>) -> Result<String, LlmError>;
}

/// The most tool call input one response may hold, all calls together:
/// the decoders keep it until each call ends.
pub(crate) const MAX_TOOL_INPUT_BYTES: usize = 16 * 1024 * 1024;

/// The tool call input a response has sent so far, against its limit.
#[derive(Debug)]
pub(crate) struct ToolInputBudget {
    used: usize,
    limit: usize,
}

impl Default for ToolInputBudget {
    fn default() -> Self {
        ToolInputBudget {
            used: 0,
            limit: MAX_TOOL_INPUT_BYTES,
        }
    }
}

impl ToolInputBudget {
    /// A smaller limit, for tests.
    #[cfg(test)]
    pub fn with_limit(limit: usize) -> Self {
        ToolInputBudget { used: 0, limit }
    }

    /// Counts `bytes` more of input; fails past the limit.
    pub fn spend(&mut self, bytes: usize) -> Result<(), LlmError> {
        self.used = self.used.saturating_add(bytes);
        if self.used > self.limit {
            return Err(LlmError::TooLarge {
                what: "tool call input",
                limit: self.limit,
            });
        }
        Ok(())
    }
}

/// The event for a finished tool call, from its argument text. Text that
/// is not a JSON object does not end the stream: the call ends with
/// `input_error` and an empty input, and the agent hands that error back to
/// the model as the call's result, so it can send the call again. A JSON
/// string holding an object (some local models encode twice) is accepted.
pub(crate) fn tool_call_end(id: String, name: String, json: &str) -> StreamEvent {
    let parsed = match serde_json::from_str::<Value>(json) {
        Ok(Value::Object(input)) => Ok(input),
        Ok(Value::String(inner)) => match serde_json::from_str::<Value>(&inner) {
            Ok(Value::Object(input)) => Ok(input),
            _ => Err("it is a JSON string".to_string()),
        },
        Ok(other) => Err(format!("it is `{}`", clip(&other.to_string(), 100))),
        Err(e) => Err(e.to_string()),
    };
    let (input, input_error) = match parsed {
        Ok(input) => (input, None),
        Err(cause) => (Map::new(), Some(bad_tool_input(&name, json, &cause))),
    };
    StreamEvent::ToolCallEnd {
        id,
        name,
        input,
        input_error,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn end(json: &str) -> (usize, Option<String>) {
        match tool_call_end("c".into(), "t".into(), json) {
            StreamEvent::ToolCallEnd {
                input, input_error, ..
            } => (input.len(), input_error.map(|e| e.message)),
            other => panic!("not a tool call end: {other:?}"),
        }
    }

    #[test]
    fn tool_inputs() {
        assert_eq!(end(r#"{"a":1}"#), (1, None));
        assert_eq!(end(r#""{\"a\":1}""#), (1, None));
        assert_eq!(
            end("[1]"),
            (
                0,
                Some("the input for tool `t` is not a JSON object: it is `[1]`".into())
            )
        );
        assert_eq!(
            end(r#""a""#),
            (
                0,
                Some("the input for tool `t` is not a JSON object: it is a JSON string".into())
            )
        );
        assert!(end(r#"{"a":"#).1.is_some());
    }
}
