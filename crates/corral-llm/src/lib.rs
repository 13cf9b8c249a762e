//! Corral's LLM provider clients.
//!
//! One call, [`stream`], sends a [`ChatRequest`] (system prompt, messages of
//! text / tool-use / tool-result [`Block`]s, tool definitions) in a
//! protocol Corral speaks — Anthropic Messages, OpenAI-compatible Chat
//! Completions (OpenAI, OpenRouter, LM Studio, llama.cpp, vLLM) or Ollama's
//! own chat API (the one that takes the context size) — and hands back
//! one normalized [`StreamEvent`] sequence: text deltas,
//! tool call start / argument delta / end, usage, retries, and exactly one
//! terminal `Done` or `Error`. Failures are the standardized
//! [`corral_protocol::Error`] with an `llm_*` code (see [`error`]
//! for the mapping). The crate knows nothing of Tauri; the app forwards the
//! events to a channel.
//!
//! ```no_run
//! use corral_llm::{stream, ChatRequest, Message, Provider, ProviderConfig, StreamEvent};
//! use tokio_util::sync::CancellationToken;
//!
//! # async fn demo() {
//! let mut config = ProviderConfig::new(Provider::Anthropic, "claude-sonnet-4-5");
//! config.api_key = std::env::var("ANTHROPIC_API_KEY").ok();
//! let request = ChatRequest {
//!     system: "You are terse.".into(),
//!     messages: vec![Message::user("Say hi.")],
//!     tools: vec![],
//!     max_tokens: None,
//! };
//! stream(&config, &request, CancellationToken::new(), |event| match event {
//!     StreamEvent::TextDelta { text } => print!("{text}"),
//!     StreamEvent::Done { stop_reason } => println!("\n[{stop_reason}]"),
//!     StreamEvent::Error { error } => eprintln!("{}: {}", error.code, error.message),
//!     _ => {}
//! })
//! .await;
//! # }
//! ```
//!
//! Local OpenAI-compatible servers need no key:
//! `ProviderConfig { base_url: "http://127.0.0.1:11434/v1".into(), ..ProviderConfig::new(Provider::OpenAi, "qwen3:8b") }`,
//! and [`detect_local_servers`] finds the usual ones. Ollama is best spoken
//! to as [`Provider::Ollama`] (base URL `http://127.0.0.1:11434`), which
//! sends the window as `num_ctx`; [`with_native_api`] turns an
//! OpenAI-compatible config that Ollama serves into that.

mod anthropic;
mod config;
mod decode;
mod driver;
pub mod error;
mod http;
mod local;
mod model_info;
mod models;
mod ollama;
mod openai;
pub mod prices;
mod sse;
mod token_count;
mod types;

pub use config::{Provider, ProviderConfig};
pub use driver::MAX_RETRY_DELAY;
pub use local::{
    detect_local_servers, probe_server, with_native_api, LocalServer, LOCAL_SERVERS, PROBE_TIMEOUT,
};
pub use model_info::{known_context_window, model_info, ModelInfo};
pub use models::{list_models, models_url, ListedModel};
pub use prices::{known_price, price_for, Price, PriceRule};
pub use token_count::{prompt_tokens, COUNT_TIMEOUT};
pub use types::{
    Block, ChatRequest, Message, Role, StreamEvent, ToolDef, IMAGES_PER_MESSAGE,
    IMAGES_PER_REQUEST, IMAGE_MAX_BYTES, IMAGE_TYPES,
};

use crate::error::{display_url, LlmError, ProviderMessage, WireContext};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

/// Streams the model's answer to `request`, calling `on_event` for each
/// normalized event as it arrives.
///
/// - The last event is always exactly one [`StreamEvent::Done`] or
///   [`StreamEvent::Error`]; nothing follows it, and this function returns
///   right after it. It never panics, and never waits longer than
///   `read_timeout` for the next complete event (or keep-alive comment):
///   bytes that never complete one do not keep the stream alive.
/// - Cancelling `cancel` stops the request at once (the connection is
///   dropped) and ends with `Done { stop_reason: "cancelled" }` — a normal
///   end the user asked for, not an error. Tool calls still open get no
///   `ToolCallEnd`.
/// - HTTP 408/429/5xx, connection failures and timeouts are retried up to
///   `max_retries` times, but only while nothing of the answer has been
///   emitted: each retry is announced by a [`StreamEvent::Retrying`] and
///   waits for the server's `retry-after` (or `retry-after-ms`), else
///   `retry_base_delay` doubled per retry, never more than
///   [`MAX_RETRY_DELAY`]. A stream that fails after emitting ends in
///   `Error` (the caller decides whether to resend).
/// - Redirects are not followed (the key would go along): a 3xx ends in
///   `llm_bad_response` naming where it points.
/// - Memory is bounded: one event, and a response's tool call input, may
///   hold 16 MiB each; past that the stream ends in `llm_bad_response`.
/// - An Anthropic `message_stop` ends tool calls whose block was not closed,
///   as their input stands (an `input_error` if it is cut).
/// - A body that ends before the protocol's end (Anthropic `message_stop`;
///   OpenAI `[DONE]` or a finish reason) is `llm_unavailable`, so a cut
///   answer is never taken for a whole one.
pub async fn stream(
    config: &ProviderConfig,
    request: &ChatRequest,
    cancel: CancellationToken,
    on_event: impl FnMut(StreamEvent) + Send,
) {
    driver::stream(config, request, cancel, on_event).await;
}

/// Checks the settings with the smallest real request: a non-streamed
/// completion of one token for the prompt "ping" (it checks the base URL,
/// the key and the model at once, for about one token). No retries. A
/// refusal to answer in one token (HTTP 400 naming `max_tokens` or the
/// output limit, as reasoning models give) counts as success.
/// Returns the model the provider says answered (it may be a dated name,
/// e.g. `claude-sonnet-4-5-20250929`), else the configured one.
pub async fn test_connection(config: &ProviderConfig) -> Result<String, corral_protocol::Error> {
    let url = config.endpoint();
    let shown = display_url(&url);
    let ctx = WireContext {
        provider: config.provider,
        url: &shown,
        api_key: config.key(),
    };
    ping(config, &url).await.map_err(|e| e.to_wire(&ctx))
}

async fn ping(config: &ProviderConfig, url: &str) -> Result<String, LlmError> {
    if config.lacks_key() {
        return Err(LlmError::NoKey);
    }
    let request = ChatRequest {
        system: String::new(),
        messages: vec![Message::user("ping")],
        tools: Vec::new(),
        max_tokens: None,
    };
    let body = match config.provider {
        Provider::Anthropic => anthropic::body(config, &request, 1, false),
        Provider::OpenAi => openai::body(config, &request, 1, false),
        Provider::Ollama => ollama::body(config, &request, 1, false),
    };
    let response = match http::send(config, url, Some(&body)).await {
        Ok(response) => response,
        // Reasoning models may refuse to stop after one token; the refusal
        // still proves the URL, the key and the model.
        Err(LlmError::Status {
            status: 400, body, ..
        }) if hit_output_limit(&body) => return Ok(config.model.clone()),
        Err(err) => return Err(err),
    };
    let text = http::read_text(response, config.read_timeout, 1024 * 1024).await?;
    let value: Value = serde_json::from_str(&text).map_err(|e| LlmError::BadEvent {
        cause: e.to_string(),
        data: text.clone(),
    })?;
    if value.get("error").is_some_and(|e| !e.is_null()) {
        return Err(LlmError::Event(ProviderMessage::from_json(&value)));
    }
    // Both protocols name the model that answered in `model`.
    let model = value
        .get("model")
        .and_then(Value::as_str)
        .filter(|m| !m.is_empty());
    Ok(model.map_or_else(|| config.model.clone(), str::to_owned))
}

/// Whether a 400 only says the one-token answer was too short.
fn hit_output_limit(body: &ProviderMessage) -> bool {
    let message = body.message.as_deref().unwrap_or("").to_ascii_lowercase();
    ["max_tokens", "max_completion_tokens", "output limit"]
        .iter()
        .any(|needle| message.contains(needle))
}
