//! The streaming driver: send, retry, read the body with the idle timeout,
//! decode, and end with exactly one terminal event.

use crate::anthropic::{self, AnthropicDecoder};
use crate::config::{Provider, ProviderConfig};
use crate::error::{bad_tool_input, clip, display_url, root_cause, LlmError, WireContext};
use crate::http;
use crate::openai::{self, OpenAiDecoder};
use crate::sse::{SseEvent, SseParser};
use crate::types::{ChatRequest, StreamEvent};
use futures_util::StreamExt;
use serde_json::{Map, Value};
use std::time::Duration;
use tokio::time::{timeout_at, Instant};
use tokio_util::sync::CancellationToken;

/// No wait between retries is longer than this, whatever `retry-after` says.
pub const MAX_RETRY_DELAY: Duration = Duration::from_secs(30);

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

/// Streams one answer. See [`crate::stream()`].
pub(crate) async fn stream(
    config: &ProviderConfig,
    request: &ChatRequest,
    cancel: CancellationToken,
    mut on_event: impl FnMut(StreamEvent) + Send,
) {
    let terminal = tokio::select! {
        biased;
        () = cancel.cancelled() => StreamEvent::Done { stop_reason: "cancelled".into() },
        terminal = run(config, request, &mut on_event) => terminal,
    };
    on_event(terminal);
}

/// Sends the request, again on retryable failures before anything was
/// streamed, and returns the terminal event.
async fn run(
    config: &ProviderConfig,
    request: &ChatRequest,
    on_event: &mut (impl FnMut(StreamEvent) + Send),
) -> StreamEvent {
    let url = config.endpoint();
    let shown = display_url(&url);
    let ctx = WireContext {
        provider: config.provider,
        url: &shown,
        api_key: config.key(),
    };
    let body = match config.provider {
        Provider::Anthropic => anthropic::body(config, request, config.max_tokens, true),
        Provider::OpenAi => openai::body(config, request, config.max_tokens, true),
    };
    let mut retries = 0;
    loop {
        let mut emitted = false;
        let result = attempt(config, &url, &body, &mut |event| {
            emitted = true;
            on_event(event);
        })
        .await;
        let failure = match result {
            Ok(stop_reason) => return StreamEvent::Done { stop_reason },
            Err(failure) => failure,
        };
        let error = failure.to_wire(&ctx);
        if emitted || !error.retryable || retries >= config.max_retries {
            return StreamEvent::Error { error };
        }
        retries += 1;
        let delay = failure
            .retry_after()
            .unwrap_or_else(|| backoff(config.retry_base_delay, retries))
            .min(MAX_RETRY_DELAY);
        on_event(StreamEvent::Retrying {
            attempt: retries,
            delay_ms: u64::try_from(delay.as_millis()).unwrap_or(u64::MAX),
            error,
        });
        tokio::time::sleep(delay).await;
    }
}

/// `base`, doubled for each retry after the first.
fn backoff(base: Duration, retry: u32) -> Duration {
    base.saturating_mul(1 << retry.saturating_sub(1).min(16))
}

/// One request: its stop reason, or why it failed.
async fn attempt(
    config: &ProviderConfig,
    url: &str,
    body: &Value,
    emit: &mut (dyn FnMut(StreamEvent) + Send),
) -> Result<String, LlmError> {
    let response = http::send(config, url, Some(body)).await?;
    let content_type = response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_ascii_lowercase();
    if content_type.starts_with("text/html") {
        // A web page: the base URL points at a site, not at the API.
        return Err(LlmError::NotAStream(content_type));
    }
    if content_type.starts_with("application/json") {
        // A server that ignores `stream: true`, or a proxy's error with 200.
        let text = http::read_text(response, config.read_timeout, 64 * 1024).await?;
        let value: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
        if value.get("error").is_some_and(|e| !e.is_null()) {
            return Err(LlmError::Event(crate::error::ProviderMessage::from_json(
                &value,
            )));
        }
        return Err(LlmError::NotAStream(content_type));
    }
    let mut decoder: Box<dyn Decoder> = match config.provider {
        Provider::Anthropic => Box::<AnthropicDecoder>::default(),
        Provider::OpenAi => Box::<OpenAiDecoder>::default(),
    };
    let mut parser = SseParser::default();
    let mut bytes = response.bytes_stream();
    let mut events = Vec::new();
    let mut out = Vec::new();
    // The read timeout runs from one complete event (or keep-alive comment)
    // to the next, so a server dripping a line byte by byte ends too.
    let idle = config.read_timeout;
    let mut deadline = Instant::now() + idle;
    loop {
        let (parsed, ended) = match timeout_at(deadline, bytes.next()).await {
            Err(_) => {
                return Err(LlmError::Stalled {
                    waited: idle,
                    partial: parser.has_partial(),
                })
            }
            Ok(Some(Err(err))) => return Err(LlmError::Dropped(root_cause(&err))),
            Ok(Some(Ok(piece))) => (parser.push(&piece, &mut events), false),
            Ok(None) => (parser.finish(&mut events), true),
        };
        if parser.take_progress() {
            deadline = Instant::now() + idle;
        }
        for event in events.drain(..) {
            let step = decoder.event(&event, &mut out);
            out.drain(..).for_each(&mut *emit);
            if let Step::Finished(stop_reason) = step? {
                return Ok(stop_reason);
            }
        }
        parsed?;
        if ended {
            let stop_reason = decoder.end(&mut out);
            out.drain(..).for_each(&mut *emit);
            return stop_reason;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_and_is_capped_by_the_caller() {
        let base = Duration::from_millis(10);
        assert_eq!(backoff(base, 1), Duration::from_millis(10));
        assert_eq!(backoff(base, 2), Duration::from_millis(20));
        assert_eq!(backoff(base, 3), Duration::from_millis(40));
        assert!(backoff(Duration::from_secs(1), 40) >= MAX_RETRY_DELAY);
    }

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
