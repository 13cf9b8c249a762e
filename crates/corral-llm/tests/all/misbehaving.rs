//! Servers that misbehave: a base URL that redirects, an endless line,
//! bodies that drip in byte by byte. Each ends in one clear
//! error, soon, with bounded memory.

use crate::common::{collect, terminal_error, End, Reply, Server};
use corral_llm::{ChatRequest, Message, Provider, StreamEvent};
use pretty_assertions::assert_eq;
use serde_json::json;
use std::time::{Duration, Instant};

const TEXT: &str = concat!(
    r#"data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"Hello"},"finish_reason":null}]}"#,
    "\n\n",
    r#"data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#,
    "\n\n",
    "data: [DONE]\n\n",
);

/// What the bridge holds at most of one event (the decoders' unit tests
/// check the same limit on a response's tool input, with a smaller one).
const LIMIT: usize = 16 * 1024 * 1024;

fn request() -> ChatRequest {
    ChatRequest {
        system: String::new(),
        messages: vec![Message::user("Hi")],
        tools: vec![],
        max_tokens: None,
    }
}

#[tokio::test]
async fn a_redirect_is_not_followed() {
    // (provider, the API path after the base URL, how the provider is named)
    let cases = [
        (Provider::OpenAi, "/chat/completions", "The server"),
        (Provider::Anthropic, "/v1/messages", "The server"),
    ];
    for (provider, path, who) in cases {
        // The target would answer; it must not be asked (the key would go along).
        let target = Server::start(vec![Reply::sse(TEXT)]).await;
        let target_base = match provider {
            Provider::OpenAi => target.url("/v1"),
            Provider::Anthropic | Provider::Ollama => target.url(""),
        };
        let location = format!("{target_base}{path}");
        let server = Server::start(vec![Reply::json(307, "").header("location", &location)]).await;
        let config = server.config(provider);
        let events = collect(&config, &request()).await;
        assert_eq!(
            terminal_error(&events).to_json(),
            json!({
                "code": "llm_bad_response",
                "message": format!("{who} redirected the request to `{location}` (HTTP 307)"),
                "hint": format!("Set the base URL in Settings to `{target_base}`, where it redirects; redirects are not followed, so the key only goes where you set it."),
                "retryable": false,
                "details": {"status": 307, "location": location, "provider": provider.as_str(),
                            "url": format!("{}{path}", config.base_url)},
            })
        );
        assert_eq!(events.len(), 1);
        assert_eq!(server.received().len(), 1);
        assert_eq!(target.received().len(), 0, "the redirect was followed");
    }
}

#[tokio::test]
async fn a_relative_redirect_to_another_path_names_it() {
    let server = Server::start(vec![Reply::json(301, "").header("location", "/api/?x=1")]).await;
    let events = collect(&server.config(Provider::OpenAi), &request()).await;
    let error = terminal_error(&events);
    assert_eq!(
        (error.message.as_str(), error.hint.as_str()),
        (
            format!("The server redirected the request to `{}` (HTTP 301)", server.url("/api/")).as_str(),
            "Set the base URL in Settings to the address it redirects to; redirects are not followed, so the key only goes where you set it.",
        )
    );
}

#[tokio::test]
async fn an_endless_line_is_cut_at_the_limit() {
    // One `data:` line longer than the limit, and no end in sight.
    let mut line = b"data: ".to_vec();
    line.resize(LIMIT + 1, b'x');
    let mut reply = Reply::sse("").end(End::Hang);
    reply.pieces = line.chunks(1024 * 1024).map(<[u8]>::to_vec).collect();
    reply.delay = Duration::ZERO;
    let server = Server::start(vec![reply]).await;
    let started = Instant::now();
    let events = collect(&server.config(Provider::Anthropic), &request()).await;
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(
        terminal_error(&events).to_json(),
        json!({
            "code": "llm_bad_response",
            "message": "The server sent a stream event larger than 16 MiB, the limit; the response was stopped",
            "hint": "Retry; if it persists, try another model or provider.",
            "retryable": false,
            "details": {"limit_bytes": LIMIT, "provider": "anthropic", "url": server.url("/v1/messages")},
        })
    );
}

/// Serves `reply` one byte every 50 ms to a client with a 300 ms read
/// timeout and no retries; returns the events and how long it took.
async fn dripped(reply: Reply) -> (Vec<StreamEvent>, Duration) {
    let reply = Reply {
        delay: Duration::from_millis(50),
        ..reply.every(1)
    };
    let server = Server::start(vec![reply]).await;
    let mut config = server.config(Provider::OpenAi);
    config.read_timeout = Duration::from_millis(300);
    config.max_retries = 0;
    let started = Instant::now();
    let events = collect(&config, &request()).await;
    (events, started.elapsed())
}

#[tokio::test]
async fn a_stream_dripping_in_byte_by_byte_times_out() {
    // Each byte comes well within the read timeout; no event is ever complete.
    let (events, took) = dripped(Reply::sse(TEXT)).await;
    // The whole stream would take over 10 s to drip in.
    assert!(took < Duration::from_secs(5), "{took:?}");
    assert_eq!(events.len(), 1);
    let error = terminal_error(&events);
    assert_eq!(
        (error.code.as_str(), error.message.as_str(), error.retryable),
        (
            "llm_unavailable",
            "The server sent pieces of data but nothing complete for 0.3 s; the response was cut off",
            true
        )
    );
}

#[tokio::test]
async fn keep_alive_comments_keep_a_slow_stream_open() {
    let mut reply = Reply::sse(TEXT);
    reply.pieces = std::iter::repeat_n(b": keep-alive\n\n".to_vec(), 6)
        .chain(reply.pieces)
        .collect();
    reply.delay = Duration::from_millis(100);
    let server = Server::start(vec![reply]).await;
    let mut config = server.config(Provider::OpenAi);
    config.read_timeout = Duration::from_millis(300);
    let events = collect(&config, &request()).await;
    assert_eq!(
        events,
        vec![
            StreamEvent::TextDelta {
                text: "Hello".into()
            },
            StreamEvent::Done {
                stop_reason: "end_turn".into()
            },
        ]
    );
}

#[tokio::test]
async fn a_dripping_error_body_is_read_within_the_read_timeout() {
    let body = r#"{"error":{"message":"The server had an error while processing your request","type":"server_error"}}"#;
    let (events, took) = dripped(Reply::json(500, body)).await;
    // The whole body would take 5 s to drip in.
    assert!(took < Duration::from_secs(3), "{took:?}");
    // The status is known; the message that was still dripping is not.
    assert_eq!(
        terminal_error(&events).message,
        "The server failed with HTTP 500"
    );
}
