//! What can go wrong talking to a provider, and its one mapping to the
//! standardized wire error ([`corral_protocol::Error`]).
//!
//! | failure | code | retryable |
//! |---|---|---|
//! | HTTP 401, 403, 402; no key for a provider's own API (nothing is sent) | `llm_auth` | no |
//! | HTTP 429, rate-limit error event | `llm_rate_limited` | yes |
//! | HTTP 408, 5xx, connect failure, timeout, connection dropped, stream cut short, overloaded/other error event | `llm_unavailable` | yes |
//! | HTTP 404 | `llm_unavailable` | no (wrong base URL or model) |
//! | the request does not fit the context window (any status or error event whose type or message says so) | `llm_context_overflow` | no |
//! | HTTP 400, 413, 422, invalid-request error event, bad base URL | `invalid_input` | no |
//! | a body, event or tool input that is not what the protocol says, or over its size limit; HTTP 3xx (redirects are not followed) | `llm_bad_response` | no |
//!
//! The provider's own message (from its JSON error body or event) is kept in
//! `message`; the HTTP status, provider, error type and request id go in
//! `details`. The API key is scrubbed from everything, whatever echoed it.
//! Messages name the provider when the base URL is its own API and the
//! server's address otherwise ("the server at `127.0.0.1:8080`"), so an
//! error from a local server in the Anthropic format does not blame
//! Anthropic.

use crate::config::Provider;
use corral_protocol::error::{Error, ErrorCode};
use serde_json::Value;
use std::time::Duration;

/// A failed request or stream, before it is put on the wire.
#[derive(Debug, thiserror::Error)]
pub(crate) enum LlmError {
    /// The server answered with an error status.
    #[error("HTTP {status}")]
    Status {
        status: u16,
        body: ProviderMessage,
        retry_after: Option<Duration>,
        request_id: Option<String>,
    },
    /// An error event (Anthropic) or error object (OpenAI) inside the stream.
    #[error("error event {}", .0.kind.as_deref().unwrap_or("?"))]
    Event(ProviderMessage),
    /// The request could not be built (a malformed base URL).
    #[error("bad request: {0}")]
    Request(String),
    /// No connection could be made.
    #[error("connect: {0}")]
    Connect(String),
    /// The server took the request but sent no response headers in time.
    #[error("no response within {0:?}")]
    NoResponse(Duration),
    /// No complete event (or keep-alive comment) for longer than the read
    /// timeout; `partial` when bytes of an unfinished one did arrive.
    #[error("stalled for {waited:?}")]
    Stalled { waited: Duration, partial: bool },
    /// The connection broke while the body was read.
    #[error("dropped: {0}")]
    Dropped(String),
    /// The body ended cleanly but before the protocol's end.
    #[error("ended early")]
    EndedEarly,
    /// A stream event is not the JSON it should be.
    #[error("bad event: {cause}")]
    BadEvent { cause: String, data: String },
    /// A tool call that cannot be given back to the model (it names no
    /// tool). Bad input text is not this: see `bad_tool_input`.
    #[error("bad tool call: {0}")]
    BadToolCall(String),
    /// A 3xx answer. Redirects are not followed: the key would go along to
    /// wherever they point. `location` is absolute and shown without
    /// credentials; `base` is the base URL that would reach it directly.
    #[error("redirect {status}")]
    Redirect {
        status: u16,
        location: Option<String>,
        base: Option<String>,
    },
    /// The server sent more than the bridge holds in memory for one thing
    /// (`what`, e.g. "a stream event").
    #[error("{what} over {limit} bytes")]
    TooLarge { what: &'static str, limit: usize },
    /// A success status with something other than an event stream.
    #[error("not a stream: {0}")]
    NotAStream(String),
    /// No key is set for a provider's own API, which refuses every request
    /// without one: nothing is sent (offline, it would be retried for
    /// seconds before failing as unreachable).
    #[error("no API key")]
    NoKey,
}

/// The error type and message a provider gave, as far as it gave them.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct ProviderMessage {
    pub kind: Option<String>,
    pub message: Option<String>,
    /// The request's size in tokens, when the server said (llama.cpp's
    /// `n_prompt_tokens`, or read from a context-overflow message).
    pub prompt_tokens: Option<u64>,
    /// The model's context window in tokens, when the server said.
    pub context_window: Option<u64>,
}

impl ProviderMessage {
    /// Reads the error out of a JSON value in any of the shapes servers use:
    /// `{"error": {"type"|"code", "message"}}` (Anthropic, OpenAI, vLLM),
    /// `{"error": "text"}` (Ollama), `{"message"}`, `{"detail"}` (FastAPI).
    pub fn from_json(value: &Value) -> ProviderMessage {
        let text = |v: Option<&Value>| match v {
            Some(Value::String(s)) if !s.trim().is_empty() => Some(s.trim().to_string()),
            Some(Value::Number(n)) => Some(n.to_string()),
            Some(v @ (Value::Array(_) | Value::Object(_))) => Some(v.to_string()),
            _ => None,
        };
        let mut read = match value.get("error") {
            Some(err @ Value::Object(_)) => ProviderMessage {
                kind: text(err.get("type")).or_else(|| text(err.get("code"))),
                message: text(err.get("message")),
                prompt_tokens: err.get("n_prompt_tokens").and_then(Value::as_u64),
                context_window: err.get("n_ctx").and_then(Value::as_u64),
            },
            Some(Value::String(s)) => ProviderMessage {
                message: text(Some(&Value::String(s.clone()))),
                ..ProviderMessage::default()
            },
            _ => ProviderMessage {
                kind: text(value.get("type")).filter(|t| t != "error"),
                message: text(value.get("message")).or_else(|| text(value.get("detail"))),
                ..ProviderMessage::default()
            },
        };
        if read.is_context_overflow() && read.prompt_tokens.is_none() {
            if let Some((prompt, window)) = read.message.as_deref().and_then(overflow_sizes) {
                read.prompt_tokens = Some(prompt);
                read.context_window = Some(window);
            }
        }
        read
    }

    /// Whether the server refused the request because it does not fit the
    /// model's context window, in any of the ways servers say so.
    pub fn is_context_overflow(&self) -> bool {
        const KINDS: [&str; 3] = [
            "exceed_context_size_error", // llama.cpp
            "context_length_exceeded",   // OpenAI
            "request_too_large",         // Anthropic, past the request size
        ];
        const SAID: [&str; 6] = [
            "prompt is too long",                 // Anthropic
            "maximum context length",             // OpenAI, vLLM
            "exceeds the available context size", // llama.cpp
            "context length of only",             // LM Studio
            "context window",                     // others
            "context_length_exceeded",
        ];
        let kind = self
            .kind
            .as_deref()
            .unwrap_or_default()
            .to_ascii_lowercase();
        let said = self
            .message
            .as_deref()
            .unwrap_or_default()
            .to_ascii_lowercase();
        KINDS.iter().any(|k| kind == *k) || SAID.iter().any(|s| said.contains(s))
    }

    /// Reads an error body: JSON when it is, else its first few hundred
    /// characters (proxies answer in HTML or plain text).
    pub fn from_body(body: &str) -> ProviderMessage {
        match serde_json::from_str::<Value>(body) {
            Ok(value) => ProviderMessage::from_json(&value),
            Err(_) => ProviderMessage {
                message: Some(clip(body.trim(), 300)).filter(|m| !m.is_empty()),
                ..ProviderMessage::default()
            },
        }
    }
}

/// Where the failure happened, for messages.
pub(crate) struct WireContext<'a> {
    pub provider: Provider,
    /// The endpoint, as shown to people (see [`display_url`]).
    pub url: &'a str,
    pub api_key: Option<&'a str>,
}

impl LlmError {
    /// The delay the server asked for, if any.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            LlmError::Status { retry_after, .. } => *retry_after,
            _ => None,
        }
    }

    /// The standardized error: the one place failures get their code.
    pub fn to_wire(&self, ctx: &WireContext<'_>) -> Error {
        let speaker = speaker(ctx);
        let who = capitalized(&speaker);
        let url = ctx.url;
        let error = match self {
            LlmError::Status {
                status,
                body,
                retry_after,
                request_id,
            } => {
                let said = body.message.as_deref().map(|m| format!(": {m}")).unwrap_or_default();
                let (code, message, hint) = match status {
                    _ if body.is_context_overflow() => (
                        ErrorCode::LlmContextOverflow,
                        format!("{who} cannot fit the request in the model's context window (HTTP {status}){said}"),
                        None,
                    ),
                    401 | 403 => (
                        ErrorCode::LlmAuth,
                        format!("{who} rejected the credentials (HTTP {status}){said}"),
                        None,
                    ),
                    402 => (
                        ErrorCode::LlmAuth,
                        format!("{who} refused the request for billing reasons (HTTP 402){said}"),
                        Some("Check the account's credits or billing with the provider."),
                    ),
                    429 => (
                        ErrorCode::LlmRateLimited,
                        format!("{who} is rate limiting requests (HTTP 429){said}"),
                        None,
                    ),
                    404 => (
                        ErrorCode::LlmUnavailable,
                        format!("{who} has nothing at `{url}` (HTTP 404){said}"),
                        Some("Check the base URL and the model name in Settings."),
                    ),
                    400 | 413 | 422 => (
                        ErrorCode::InvalidInput,
                        format!("{who} refused the request (HTTP {status}){said}"),
                        Some("Check the model name and max tokens in Settings; the message says what the provider refused."),
                    ),
                    408 | 500..=599 => (
                        ErrorCode::LlmUnavailable,
                        format!("{who} failed with HTTP {status}{said}"),
                        Some(SERVER_SIDE),
                    ),
                    _ => (
                        ErrorCode::LlmBadResponse,
                        format!("{who} answered with unexpected HTTP {status}{said}"),
                        None,
                    ),
                };
                let mut error = Error::new(code, message).detail("status", *status);
                if *status == 404 {
                    error = error.retryable(false);
                }
                // Ollama's 404 for a model it has not pulled: "model 'x' not found".
                let unpulled = ctx.provider == Provider::Ollama
                    && *status == 404
                    && body.message.as_deref().is_some_and(|m| m.starts_with("model ") && m.ends_with("not found"));
                let hint = if unpulled {
                    Some("Pull the model first (`ollama pull` and its name), or choose one of Ollama's models in Settings.")
                } else {
                    hint
                };
                if let Some(hint) = hint {
                    error = error.hint(hint);
                }
                if let Some(kind) = &body.kind {
                    error = error.detail("type", kind.as_str());
                }
                error = with_sizes(error, body);
                if let Some(id) = request_id {
                    error = error.detail("request_id", id.as_str());
                }
                if let Some(delay) = retry_after {
                    error = error.detail("retry_after_ms", millis(*delay));
                }
                error
            }
            LlmError::Event(body) => {
                let kind = body.kind.as_deref().unwrap_or("error");
                let said = body.message.as_deref().unwrap_or("no message");
                let (code, message) = if body.is_context_overflow() {
                    (
                        ErrorCode::LlmContextOverflow,
                        format!("{who} cannot fit the request in the model's context window: {said}"),
                    )
                } else {
                    (event_code(kind), format!("{who} reported an error in the stream ({kind}): {said}"))
                };
                let mut error = with_sizes(Error::new(code, message), body);
                if code == ErrorCode::LlmUnavailable {
                    error = error.hint(SERVER_SIDE);
                }
                match body.kind.as_deref() {
                    Some(kind) => error.detail("type", kind),
                    None => error,
                }
            }
            LlmError::NoKey => Error::new(
                ErrorCode::LlmAuth,
                format!("no API key is set for {speaker}, so nothing was sent"),
            )
            .retryable(false)
            .hint("Open Settings and enter a key, or choose a local server there (those found running on this machine are offered)."),
            LlmError::Request(cause) => {
                Error::new(ErrorCode::InvalidInput, format!("the request to `{url}` could not be made: {cause}"))
                    .hint("Check the base URL in Settings.")
            }
            LlmError::Connect(cause) => {
                Error::new(ErrorCode::LlmUnavailable, format!("could not connect to `{url}`: {cause}"))
            }
            LlmError::NoResponse(waited) => Error::new(
                ErrorCode::LlmUnavailable,
                format!("`{url}` did not answer within {}", seconds(*waited)),
            ),
            LlmError::Stalled { waited, partial } => {
                let sent = if *partial { "pieces of data but nothing complete" } else { "nothing" };
                Error::new(
                    ErrorCode::LlmUnavailable,
                    format!("{who} sent {sent} for {}; the response was cut off", seconds(*waited)),
                )
                .hint(CUT_OFF)
            }
            LlmError::Dropped(cause) => Error::new(
                ErrorCode::LlmUnavailable,
                format!("the connection to {speaker} dropped before the response was complete: {cause}"),
            )
            .hint(CUT_OFF),
            LlmError::EndedEarly => Error::new(
                ErrorCode::LlmUnavailable,
                format!("{who} ended the stream before the response was complete"),
            )
            .hint(CUT_OFF),
            LlmError::BadEvent { cause, data } => Error::new(
                ErrorCode::LlmBadResponse,
                format!("{who} sent a stream event that could not be read: {cause}"),
            )
            .detail("data", clip(data, 500)),
            LlmError::BadToolCall(cause) => Error::new(
                ErrorCode::LlmBadResponse,
                format!("{who} sent a tool call that cannot be used: {cause}"),
            )
            .hint("Retry; if it persists, try a model that is better at tool calls."),
            LlmError::Redirect { status, location, base } => {
                let to = location.as_deref().map(|l| format!(" to `{l}`")).unwrap_or_default();
                let hint = match base {
                    Some(base) => format!("Set the base URL in Settings to `{base}`, where it redirects; redirects are not followed, so the key only goes where you set it."),
                    None => "Set the base URL in Settings to the address it redirects to; redirects are not followed, so the key only goes where you set it.".to_string(),
                };
                let error = Error::new(
                    ErrorCode::LlmBadResponse,
                    format!("{who} redirected the request{to} (HTTP {status})"),
                )
                .hint(hint)
                .detail("status", *status);
                match location {
                    Some(location) => error.detail("location", location.as_str()),
                    None => error,
                }
            }
            LlmError::TooLarge { what, limit } => Error::new(
                ErrorCode::LlmBadResponse,
                format!("{who} sent {what} larger than {}, the limit; the response was stopped", size(*limit)),
            )
            .detail("limit_bytes", *limit),
            LlmError::NotAStream(content_type) => Error::new(
                ErrorCode::LlmBadResponse,
                format!("{who} answered with `{content_type}` instead of an event stream"),
            )
            .hint("Check that the base URL points at the provider's API and that it supports streaming."),
        };
        let error = error
            .detail("provider", ctx.provider.as_str())
            .detail("url", url);
        redact(error, ctx.api_key)
    }
}

/// What a server says when the model takes no images: llama.cpp without
/// a multimodal projector, Ollama, LM Studio and OpenAI word it
/// differently, but name one of these.
const IMAGE_WORDS: [&str; 5] = ["image", "vision", "multimodal", "multi-modal", "mmproj"];

impl LlmError {
    /// For a request that carries images: when this failure is the server
    /// refusing them, the standardized error that says so: `invalid_input`,
    /// not retryable, with `details.reason` `"images_unsupported"`, the
    /// server's own message in `details.server_message`, and the hint to
    /// choose a model that takes images or send without them. `None`
    /// otherwise. A refusal is an error that names images, vision or
    /// multimodal input; a bare HTTP 400/415/422, whatever it says, counts
    /// only when `newest_has_images` (the newest user message carries
    /// images, so they are the likely cause): with images only earlier in
    /// the conversation, such a status is more likely another fault (a bad
    /// tool schema) and keeps its own error.
    pub fn images_refused(&self, ctx: &WireContext<'_>, newest_has_images: bool) -> Option<Error> {
        let says_images = |body: &ProviderMessage| {
            let said = format!(
                "{} {}",
                body.kind.as_deref().unwrap_or_default(),
                body.message.as_deref().unwrap_or_default()
            )
            .to_ascii_lowercase();
            IMAGE_WORDS.iter().any(|w| said.contains(w))
        };
        let (body, status) = match self {
            LlmError::Status { status, body, .. }
                if !body.is_context_overflow()
                    && (says_images(body)
                        || (newest_has_images && matches!(status, 400 | 415 | 422))) =>
            {
                (body, Some(*status))
            }
            LlmError::Event(body) if says_images(body) => (body, None),
            _ => return None,
        };
        let who = capitalized(&speaker(ctx));
        let said = body
            .message
            .as_deref()
            .map(|m| format!(": {m}"))
            .unwrap_or_default();
        let http = status.map(|s| format!(" (HTTP {s})")).unwrap_or_default();
        let mut error = Error::new(
            ErrorCode::InvalidInput,
            format!("{who} refused the message's images{http}; the model may not accept images{said}"),
        )
        .hint("Choose a model that accepts images (a vision model; llama.cpp needs its --mmproj) in the model switcher, or send the message without its images.")
        .retryable(false)
        .detail("reason", "images_unsupported");
        if let Some(status) = status {
            error = error.detail("status", status);
        }
        if let Some(kind) = &body.kind {
            error = error.detail("type", kind.as_str());
        }
        if let Some(message) = &body.message {
            error = error.detail("server_message", message.as_str());
        }
        let error = error
            .detail("provider", ctx.provider.as_str())
            .detail("url", ctx.url);
        Some(redact(error, ctx.api_key))
    }
}

/// Who answered, as messages name it: the provider when the URL is its own
/// API, else the server by its address (a local server speaking the
/// Anthropic format is not Anthropic).
fn speaker(ctx: &WireContext<'_>) -> String {
    let parsed = reqwest::Url::parse(ctx.url).ok();
    let host = parsed
        .as_ref()
        .and_then(|u| u.host_str())
        .unwrap_or_default();
    if ctx.provider.is_own_api(ctx.url) {
        return match ctx.provider {
            Provider::Anthropic => "Anthropic".to_string(),
            Provider::OpenAi => "OpenAI".to_string(),
            Provider::Ollama => "Ollama".to_string(),
        };
    }
    match parsed.as_ref().and_then(|u| u.port()) {
        Some(port) => format!("the server at `{host}:{port}`"),
        None if !host.is_empty() => format!("the server at `{host}`"),
        None => ctx.provider.label().to_string(),
    }
}

/// Adds the request's size and the context window when the server gave them.
fn with_sizes(mut error: Error, body: &ProviderMessage) -> Error {
    if let Some(tokens) = body.prompt_tokens {
        error = error.detail("prompt_tokens", tokens);
    }
    if let Some(tokens) = body.context_window {
        error = error.detail("context_window", tokens);
    }
    error
}

/// The hint when the provider was reached but failed on its side (the
/// default one says to check the base URL and the connection).
const SERVER_SIDE: &str =
    "The provider had a problem on its side; retry in a moment (the conversation is kept).";
/// The hint when a response was cut off after it began.
const CUT_OFF: &str = "The response was cut off; retry (the conversation is kept).";

/// The error a tool call carries when the model's input for it is not a
/// JSON object (see [`crate::StreamEvent::ToolCallEnd`]).
pub(crate) fn bad_tool_input(name: &str, json: &str, cause: &str) -> Error {
    Error::new(
        ErrorCode::InvalidInput,
        format!("the input for tool `{name}` is not a JSON object: {cause}"),
    )
    .hint("Call the tool again with its input as one JSON object that matches its schema.")
    .detail("tool", name)
    .detail("input", clip(json, 500))
}

/// Error event types, of either provider, to codes.
fn event_code(kind: &str) -> ErrorCode {
    let kind = kind.to_ascii_lowercase();
    let has = |s: &str| kind.contains(s);
    if has("rate_limit") || has("rate limit") || kind == "429" {
        ErrorCode::LlmRateLimited
    } else if has("auth") || has("permission") || has("api_key") || kind == "401" || kind == "403" {
        ErrorCode::LlmAuth
    } else if has("invalid_request") || has("too_large") || kind == "400" {
        ErrorCode::InvalidInput
    } else {
        ErrorCode::LlmUnavailable // overloaded_error, api_error, server_error, 5xx...
    }
}

/// The URL without credentials or query, for messages.
pub(crate) fn display_url(url: &str) -> String {
    match reqwest::Url::parse(url) {
        Ok(mut parsed) => {
            // Neither fails on http(s) URLs; ignoring keeps the original parts.
            let _ = parsed.set_username("");
            let _ = parsed.set_password(None);
            parsed.set_query(None);
            parsed.to_string()
        }
        Err(_) => url.to_string(),
    }
}

/// Scrubs the key out of every string of the error (keys of 8 characters
/// or more; shorter "keys" are placeholders of local servers).
pub(crate) fn redact(mut error: Error, key: Option<&str>) -> Error {
    let Some(key) = key.filter(|k| k.len() >= 8) else {
        return error;
    };
    let scrub = |s: &str| s.replace(key, "[redacted]");
    error.message = scrub(&error.message);
    error.hint = scrub(&error.hint);
    for value in error.details.values_mut() {
        if let Value::String(s) = value {
            *s = scrub(s);
        }
    }
    error
}

/// The innermost cause of an error chain: the most specific text
/// ("Connection refused (os error 111)").
pub(crate) fn root_cause(err: &(dyn std::error::Error + 'static)) -> String {
    let mut current = err;
    while let Some(source) = current.source() {
        current = source;
    }
    current.to_string()
}

/// The request's size and the context window, read from a context-overflow
/// message: the first two numbers, in the order the server's wording puts
/// them ("maximum context length is W tokens ... resulted in P tokens" puts
/// the window first; llama.cpp, Anthropic and LM Studio put the request
/// first).
fn overflow_sizes(message: &str) -> Option<(u64, u64)> {
    let numbers: Vec<u64> = message
        .split(|c: char| !c.is_ascii_digit())
        .filter_map(|n| n.parse().ok())
        .collect();
    let [first, second, ..] = numbers[..] else {
        return None;
    };
    if message
        .to_ascii_lowercase()
        .contains("maximum context length is")
    {
        Some((second, first))
    } else {
        Some((first, second))
    }
}

fn capitalized(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

pub(crate) fn clip(text: &str, max_chars: usize) -> String {
    match text.char_indices().nth(max_chars) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_string(),
    }
}

fn seconds(duration: Duration) -> String {
    format!("{:.1} s", duration.as_secs_f64())
}

/// `16 MiB`, or `300 bytes` when not a whole number of MiB.
fn size(bytes: usize) -> String {
    const MIB: usize = 1024 * 1024;
    if bytes >= MIB && bytes % MIB == 0 {
        format!("{} MiB", bytes / MIB)
    } else {
        format!("{bytes} bytes")
    }
}

fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_every_error_body_shape() {
        let cases = [
            (
                r#"{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}"#,
                Some("authentication_error"),
                Some("invalid x-api-key"),
            ),
            (
                r#"{"error":{"message":"Bad key","type":null,"code":"invalid_api_key"}}"#,
                Some("invalid_api_key"),
                Some("Bad key"),
            ),
            (
                r#"{"error":"model 'x' not found"}"#,
                None,
                Some("model 'x' not found"),
            ),
            (r#"{"detail":"Not Found"}"#, None, Some("Not Found")),
            (
                "<html>502 Bad Gateway</html>",
                None,
                Some("<html>502 Bad Gateway</html>"),
            ),
            ("", None, None),
        ];
        for (body, kind, message) in cases {
            let got = ProviderMessage::from_body(body);
            assert_eq!(got.kind.as_deref(), kind, "{body}");
            assert_eq!(got.message.as_deref(), message, "{body}");
        }
    }

    #[test]
    fn status_errors_name_the_provider_and_hide_the_key() {
        let key = "sk-ant-very-secret";
        let ctx = WireContext {
            provider: Provider::Anthropic,
            url: "https://api.anthropic.com/v1/messages",
            api_key: Some(key),
        };
        let err = LlmError::Status {
            status: 401,
            body: ProviderMessage {
                kind: Some("authentication_error".into()),
                message: Some(format!("invalid x-api-key {key}")),
                ..ProviderMessage::default()
            },
            retry_after: None,
            request_id: Some("req_1".into()),
        };
        let wire = err.to_wire(&ctx).to_json();
        assert_eq!(
            wire,
            json!({
                "code": "llm_auth",
                "message": "Anthropic rejected the credentials (HTTP 401): invalid x-api-key [redacted]",
                "hint": "Check the API key in Settings.",
                "retryable": false,
                "details": {"status": 401, "type": "authentication_error", "request_id": "req_1",
                    "provider": "anthropic", "url": "https://api.anthropic.com/v1/messages"}
            })
        );
    }

    #[test]
    fn event_kinds_map_to_codes() {
        assert_eq!(event_code("overloaded_error"), ErrorCode::LlmUnavailable);
        assert_eq!(event_code("rate_limit_error"), ErrorCode::LlmRateLimited);
        assert_eq!(event_code("authentication_error"), ErrorCode::LlmAuth);
        assert_eq!(event_code("invalid_request_error"), ErrorCode::InvalidInput);
        assert_eq!(event_code("502"), ErrorCode::LlmUnavailable);
    }

    #[test]
    fn urls_lose_credentials_and_query() {
        assert_eq!(
            display_url("https://u:p@host.example/v1/x?key=1"),
            "https://host.example/v1/x"
        );
    }

    /// Each server's own context-overflow body, as it sends it.
    #[test]
    fn context_overflow_is_recognized_in_each_servers_words() {
        let bodies = [
            // llama.cpp's llama-server
            (
                r#"{"error":{"code":400,"message":"request (6872 tokens) exceeds the available context size (4096 tokens), try increasing it","type":"exceed_context_size_error","n_prompt_tokens":6872,"n_ctx":4096}}"#,
                Some((6872, 4096)),
            ),
            // OpenAI
            (
                r#"{"error":{"message":"This model's maximum context length is 128000 tokens. However, your messages resulted in 130211 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}"#,
                Some((130211, 128000)),
            ),
            // Anthropic
            (
                r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 208310 tokens > 200000 maximum"}}"#,
                Some((208310, 200000)),
            ),
            // LM Studio
            (
                r#"{"error":"Trying to keep the first 6872 tokens when context the overflows. However, the model is loaded with context length of only 4096 tokens, which is not enough. Try to load the model with a larger context length, or provide a shorter input"}"#,
                Some((6872, 4096)),
            ),
        ];
        for (body, sizes) in bodies {
            let read = ProviderMessage::from_body(body);
            assert!(read.is_context_overflow(), "{body}");
            assert_eq!(read.prompt_tokens.zip(read.context_window), sizes, "{body}");
        }
        let other = ProviderMessage::from_body(
            r#"{"error":{"message":"max_tokens: 100000 > 64000, which is the maximum allowed","type":"invalid_request_error"}}"#,
        );
        assert!(!other.is_context_overflow());
    }

    #[test]
    fn a_local_server_is_named_by_its_address_not_by_the_format_it_speaks() {
        let err = LlmError::Status {
            status: 400,
            body: ProviderMessage::from_body(
                r#"{"error":{"code":400,"message":"request (6872 tokens) exceeds the available context size (4096 tokens), try increasing it","type":"exceed_context_size_error","n_prompt_tokens":6872,"n_ctx":4096}}"#,
            ),
            retry_after: None,
            request_id: None,
        };
        let local = WireContext {
            provider: Provider::Anthropic,
            url: "http://127.0.0.1:8080/v1/messages",
            api_key: None,
        };
        let wire = err.to_wire(&local);
        assert_eq!(wire.code, ErrorCode::LlmContextOverflow);
        assert_eq!(
            wire.message,
            "The server at `127.0.0.1:8080` cannot fit the request in the model's context window (HTTP 400): request (6872 tokens) exceeds the available context size (4096 tokens), try increasing it"
        );
        assert_eq!(wire.details["prompt_tokens"], 6872);
        assert_eq!(wire.details["context_window"], 4096);
        let hosted = WireContext {
            provider: Provider::OpenAi,
            url: "https://api.openai.com/v1/chat/completions",
            api_key: None,
        };
        assert!(err
            .to_wire(&hosted)
            .message
            .starts_with("OpenAI cannot fit"));
    }
}
