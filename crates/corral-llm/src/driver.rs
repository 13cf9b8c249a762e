//! The streaming driver: send, retry, read the body with the idle timeout,
//! decode, and end with exactly one terminal event.

use crate::anthropic::{self, AnthropicDecoder};
use crate::config::{Provider, ProviderConfig};
use crate::decode::{Decoder, Step};
use crate::error::{display_url, root_cause, LlmError, WireContext};
use crate::http;
use crate::ollama::{self, OllamaDecoder};
use crate::openai::{self, OpenAiDecoder};
use crate::sse::SseParser;
use crate::types::{ChatRequest, StreamEvent};
use futures_util::StreamExt;
use serde_json::Value;
use std::time::Duration;
use tokio::time::{timeout_at, Instant};
use tokio_util::sync::CancellationToken;

/// No wait between retries is longer than this, whatever `retry-after` says.
pub const MAX_RETRY_DELAY: Duration = Duration::from_secs(30);

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
    if let Err(error) = request.check_images() {
        return StreamEvent::Error { error };
    }
    if config.lacks_key() {
        return StreamEvent::Error {
            error: LlmError::NoKey.to_wire(&ctx),
        };
    }
    let max_tokens = request.reply_limit(config.max_tokens);
    let body = match config.provider {
        Provider::Anthropic => anthropic::body(config, request, max_tokens, true),
        Provider::OpenAi => openai::body(config, request, max_tokens, true),
        Provider::Ollama => ollama::body(config, request, max_tokens, true),
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
        let refused = request
            .has_images()
            .then(|| failure.images_refused(&ctx, request.newest_user_has_images()))
            .flatten();
        let error = refused.unwrap_or_else(|| failure.to_wire(&ctx));
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
    let (mut decoder, mut parser): (Box<dyn Decoder>, _) = match config.provider {
        Provider::Anthropic => (Box::<AnthropicDecoder>::default(), SseParser::default()),
        Provider::OpenAi => (Box::<OpenAiDecoder>::default(), SseParser::default()),
        // Newline-delimited JSON, not SSE.
        Provider::Ollama => (Box::<OllamaDecoder>::default(), SseParser::lines()),
    };
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
}
