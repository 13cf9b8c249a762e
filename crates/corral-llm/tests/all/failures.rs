//! Retries, timeouts, dropped connections and cancellation: every stream
//! ends with exactly one terminal event, and none hangs.

use crate::common::{collect, collect_with, terminal_error, End, Reply, Server};
use corral_llm::{ChatRequest, Message, Provider, StreamEvent};
use pretty_assertions::assert_eq;
use serde_json::json;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

const TEXT: &str = concat!(
    r#"data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"Hello"},"finish_reason":null}]}"#,
    "\n\n",
    r#"data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":" there"},"finish_reason":null}]}"#,
    "\n\n",
    r#"data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#,
    "\n\n",
    "data: [DONE]\n\n",
);

const ANTHROPIC_TEXT: &str = concat!(
    "event: message_start\n",
    r#"data: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":5,"output_tokens":1}}}"#,
    "\n\nevent: content_block_start\n",
    r#"data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
    "\n\nevent: content_block_delta\n",
    r#"data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}"#,
    "\n\nevent: content_block_stop\n",
    r#"data: {"type":"content_block_stop","index":0}"#,
    "\n\nevent: message_delta\n",
    r#"data: {"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":2}}"#,
    "\n\nevent: message_stop\n",
    r#"data: {"type":"message_stop"}"#,
    "\n\n",
);

const OLLAMA_TEXT: &str = concat!(
    r#"{"model":"m","created_at":"2025-10-26T17:15:24.097767Z","message":{"role":"assistant","content":"Hello"},"done":false}"#,
    "\n",
    r#"{"model":"m","created_at":"2025-10-26T17:15:24.109172Z","message":{"role":"assistant","content":" there"},"done":false}"#,
    "\n",
    r#"{"model":"m","created_at":"2025-10-26T17:15:24.166576Z","message":{"role":"assistant","content":""},"done":true,"done_reason":"stop","prompt_eval_count":5,"eval_count":2}"#,
    "\n",
);

fn request() -> ChatRequest {
    ChatRequest {
        system: String::new(),
        messages: vec![Message::user("Hi")],
        tools: vec![],
        max_tokens: None,
    }
}

fn text_events() -> Vec<StreamEvent> {
    vec![
        StreamEvent::TextDelta {
            text: "Hello".into(),
        },
        StreamEvent::TextDelta {
            text: " there".into(),
        },
        StreamEvent::Done {
            stop_reason: "end_turn".into(),
        },
    ]
}

const PROVIDERS: [Provider; 3] = [Provider::OpenAi, Provider::Anthropic, Provider::Ollama];

/// A provider's text answer as its server streams it, and the events it becomes.
fn answer(provider: Provider) -> (&'static str, Vec<StreamEvent>) {
    match provider {
        Provider::OpenAi => (TEXT, text_events()),
        Provider::Anthropic => (
            ANTHROPIC_TEXT,
            vec![
                StreamEvent::TextDelta { text: "Hi".into() },
                StreamEvent::Usage {
                    input_tokens: 5,
                    output_tokens: 2,
                    cache_read_tokens: 0,
                    cache_write_tokens: 0,
                },
                StreamEvent::Done {
                    stop_reason: "end_turn".into(),
                },
            ],
        ),
        Provider::Ollama => {
            let mut events = text_events();
            events.insert(
                2,
                StreamEvent::Usage {
                    input_tokens: 5,
                    output_tokens: 2,
                    cache_read_tokens: 0,
                    cache_write_tokens: 0,
                },
            );
            (OLLAMA_TEXT, events)
        }
    }
}

/// The endpoint a provider's requests go to on `server`.
fn endpoint(server: &Server, provider: Provider) -> String {
    match provider {
        Provider::OpenAi => server.url("/v1/chat/completions"),
        Provider::Anthropic => server.url("/v1/messages"),
        Provider::Ollama => server.url("/api/chat"),
    }
}

/// `details` with the provider's error type, when it gives one.
fn typed(mut details: serde_json::Value, kind: &str) -> serde_json::Value {
    if !kind.is_empty() {
        details["type"] = json!(kind);
    }
    details
}

/// Runs one test body per provider, concurrently (some wait a second).
async fn for_each_provider<F: std::future::Future<Output = ()>>(test: impl Fn(Provider) -> F) {
    futures_util::future::join_all(PROVIDERS.map(test)).await;
}

#[tokio::test]
async fn rate_limited_waits_for_retry_after_then_succeeds() {
    for_each_provider(|provider| async move {
        // Each provider's 429, as it sends it.
        let (limited, kind, said) = match provider {
            Provider::OpenAi => (
                r#"{"error":{"message":"Rate limit reached for requests","type":"requests","param":null,"code":"rate_limit_exceeded"}}"#,
                "requests",
                "The server is rate limiting requests (HTTP 429): Rate limit reached for requests",
            ),
            Provider::Anthropic => (
                r#"{"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded your per-minute rate limit"}}"#,
                "rate_limit_error",
                "The server is rate limiting requests (HTTP 429): Number of request tokens has exceeded your per-minute rate limit",
            ),
            // Ollama's errors are a bare message, with no type.
            Provider::Ollama => (
                r#"{"error":"too many requests"}"#,
                "",
                "The server is rate limiting requests (HTTP 429): too many requests",
            ),
        };
        let (stream, events) = answer(provider);
        let server = Server::start(vec![
            Reply::json(429, limited).header("retry-after", "1"),
            Reply::sse(stream),
        ])
        .await;
        let started = Instant::now();
        let got = collect(&server.config(provider), &request()).await;
        let waited = started.elapsed();
        assert!(waited >= Duration::from_millis(1000), "waited {waited:?}");
        assert!(waited < Duration::from_secs(3), "waited {waited:?}");
        let mut want = vec![StreamEvent::Retrying {
            attempt: 1,
            delay_ms: 1000,
            error: serde_json::from_value(json!({
                "code": "llm_rate_limited",
                "message": said,
                "hint": "Wait a moment and retry.",
                "retryable": true,
                "details": typed(json!({"status": 429, "retry_after_ms": 1000,
                            "provider": provider.as_str(), "url": endpoint(&server, provider)}), kind),
            }))
            .unwrap(),
        }];
        want.extend(events);
        assert_eq!(got, want);
        assert_eq!(server.received().len(), 2);
    })
    .await;
}

#[tokio::test]
async fn a_server_error_is_retried_with_backoff() {
    for_each_provider(|provider| async move {
        let (failed, kind, said) = match provider {
            Provider::OpenAi => (
                r#"{"error":{"message":"The server had an error while processing your request. Sorry about that!","type":"server_error","param":null,"code":null}}"#,
                "server_error",
                "The server failed with HTTP 500: The server had an error while processing your request. Sorry about that!",
            ),
            Provider::Anthropic => (
                r#"{"type":"error","error":{"type":"api_error","message":"Internal server error"}}"#,
                "api_error",
                "The server failed with HTTP 500: Internal server error",
            ),
            Provider::Ollama => (
                r#"{"error":"llama runner process has terminated: exit status 2"}"#,
                "",
                "The server failed with HTTP 500: llama runner process has terminated: exit status 2",
            ),
        };
        let (stream, events) = answer(provider);
        let server = Server::start(vec![Reply::json(500, failed), Reply::sse(stream)]).await;
        let got = collect(&server.config(provider), &request()).await;
        let mut want = vec![StreamEvent::Retrying {
            attempt: 1,
            delay_ms: 10,
            error: serde_json::from_value(json!({
                "code": "llm_unavailable",
                "message": said,
                "hint": "The provider had a problem on its side; retry in a moment (the conversation is kept).",
                "retryable": true,
                "details": typed(json!({"status": 500, "provider": provider.as_str(), "url": endpoint(&server, provider)}), kind),
            }))
            .unwrap(),
        }];
        want.extend(events);
        assert_eq!(got, want);
        assert_eq!(server.received().len(), 2);
    })
    .await;
}

#[tokio::test]
async fn retries_stop_at_max_retries() {
    let busy = r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#;
    let server = Server::start(vec![Reply::json(529, busy); 3]).await;
    let mut config = server.config(Provider::Anthropic);
    config.max_retries = 2;
    let events = collect(&config, &request()).await;
    let shape: Vec<(u32, u64)> = events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::Retrying {
                attempt, delay_ms, ..
            } => Some((*attempt, *delay_ms)),
            _ => None,
        })
        .collect();
    assert_eq!(shape, vec![(1, 10), (2, 20)]);
    assert_eq!(events.len(), 3);
    let error = terminal_error(&events);
    assert_eq!(error.message, "The server failed with HTTP 529: Overloaded");
    assert_eq!(server.received().len(), 3);
}

#[tokio::test]
async fn client_errors_are_not_retried() {
    let cases = [
        (
            400,
            r#"{"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: 999999 > 64000"}}"#,
            "invalid_input",
            false,
        ),
        (
            404,
            r#"{"type":"error","error":{"type":"not_found_error","message":"model: nope"}}"#,
            "llm_unavailable",
            false,
        ),
    ];
    for (status, body, code, retryable) in cases {
        let server = Server::start(vec![Reply::json(status, body)]).await;
        let events = collect(&server.config(Provider::Anthropic), &request()).await;
        let error = terminal_error(&events);
        assert_eq!(
            (error.code.as_str(), error.retryable),
            (code, retryable),
            "{error:?}"
        );
        assert_eq!(events.len(), 1);
        assert_eq!(server.received().len(), 1);
    }
}

#[tokio::test]
async fn a_connection_dropped_mid_stream_is_one_error() {
    for_each_provider(|provider| async move {
        // Cut before the last events (no finish reason, no `message_stop`):
        // the server closes the socket inside a chunked body.
        let (stream, events) = answer(provider);
        let (last, who) = match provider {
            Provider::OpenAi => (r#"data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"#, "the server"),
            Provider::Anthropic => ("event: content_block_stop", "the server"),
            Provider::Ollama => (r#"{"model":"m","created_at":"2025-10-26T17:15:24.166576Z","message":{"role":"assistant","content":""},"done":true"#, "the server"),
        };
        let cut = stream.find(last).unwrap();
        let server = Server::start(vec![Reply::sse(&stream[..cut]).end(End::Drop)]).await;
        let started = Instant::now();
        let got = collect(&server.config(provider), &request()).await;
        assert!(started.elapsed() < Duration::from_secs(2));
        let shown: Vec<_> = events
            .into_iter()
            .filter(|e| matches!(e, StreamEvent::TextDelta { .. }))
            .collect();
        assert_eq!(got[..got.len() - 1], shown, "{provider:?}");
        let error = terminal_error(&got);
        assert_eq!(error.code.as_str(), "llm_unavailable");
        let prefix = format!("the connection to {who} dropped before the response was complete: ");
        assert!(error.message.starts_with(&prefix), "{}", error.message);
        assert_eq!(
            error.hint,
            "The response was cut off; retry (the conversation is kept)."
        );
        // Text was already shown: not sent again.
        assert_eq!(server.received().len(), 1);
    })
    .await;
}

#[tokio::test]
async fn a_silent_server_times_out() {
    let cut = TEXT.find("\n\n").unwrap() + 2;
    let server = Server::start(vec![Reply::sse(&TEXT[..cut]).end(End::Hang)]).await;
    let mut config = server.config(Provider::OpenAi);
    config.read_timeout = Duration::from_millis(300);
    let started = Instant::now();
    let events = collect(&config, &request()).await;
    assert!(started.elapsed() < Duration::from_secs(2));
    assert_eq!(
        events[0],
        StreamEvent::TextDelta {
            text: "Hello".into()
        }
    );
    let error = terminal_error(&events);
    assert_eq!(
        (error.code.as_str(), error.message.as_str()),
        (
            "llm_unavailable",
            "The server sent nothing for 0.3 s; the response was cut off"
        )
    );
}

#[tokio::test]
async fn a_server_that_never_answers_times_out() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = listener.accept().await {
            held.push(socket);
        }
    });
    let mut config = corral_llm::ProviderConfig::new(Provider::OpenAi, "m");
    config.base_url = format!("http://127.0.0.1:{port}/v1");
    config.read_timeout = Duration::from_millis(200);
    config.max_retries = 0;
    let events = collect(&config, &request()).await;
    assert_eq!(
        terminal_error(&events).message,
        format!("`http://127.0.0.1:{port}/v1/chat/completions` did not answer within 0.2 s")
    );
}

#[tokio::test]
async fn connection_refused_is_retried_then_unavailable() {
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let mut config = corral_llm::ProviderConfig::new(Provider::OpenAi, "m");
    config.base_url = format!("http://127.0.0.1:{port}/v1");
    config.max_retries = 1;
    config.retry_base_delay = Duration::from_millis(10);
    let events = collect(&config, &request()).await;
    assert!(
        matches!(
            events[0],
            StreamEvent::Retrying {
                attempt: 1,
                delay_ms: 10,
                ..
            }
        ),
        "{events:?}"
    );
    assert_eq!(events.len(), 2);
    let error = terminal_error(&events);
    assert_eq!(error.code.as_str(), "llm_unavailable");
    let prefix = format!("could not connect to `http://127.0.0.1:{port}/v1/chat/completions`: ");
    assert!(error.message.starts_with(&prefix), "{}", error.message);
}

#[tokio::test]
async fn cancel_mid_stream_ends_with_done_cancelled() {
    let cut = TEXT.find("\n\n").unwrap() + 2;
    let server = Server::start(vec![Reply::sse(&TEXT[..cut]).end(End::Hang)]).await;
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    let started = Instant::now();
    let events = collect_with(
        &server.config(Provider::OpenAi),
        &request(),
        cancel,
        move |event| {
            if matches!(event, StreamEvent::TextDelta { .. }) {
                trigger.cancel();
            }
        },
    )
    .await;
    assert!(started.elapsed() < Duration::from_secs(2));
    assert_eq!(
        events,
        vec![
            StreamEvent::TextDelta {
                text: "Hello".into()
            },
            StreamEvent::Done {
                stop_reason: "cancelled".into()
            },
        ]
    );
}

#[tokio::test]
async fn cancel_during_a_retry_wait() {
    let limited = r#"{"error":{"message":"slow down","type":"rate_limit_error"}}"#;
    let server = Server::start(vec![Reply::json(429, limited).header("retry-after", "1")]).await;
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    let started = Instant::now();
    let events = collect_with(
        &server.config(Provider::OpenAi),
        &request(),
        cancel,
        move |event| {
            if matches!(event, StreamEvent::Retrying { .. }) {
                trigger.cancel();
            }
        },
    )
    .await;
    assert!(started.elapsed() < Duration::from_millis(900));
    assert!(matches!(
        events[0],
        StreamEvent::Retrying {
            attempt: 1,
            delay_ms: 1000,
            ..
        }
    ));
    assert_eq!(
        events[1..],
        [StreamEvent::Done {
            stop_reason: "cancelled".into()
        }]
    );
}

#[tokio::test]
async fn cancelled_before_the_start_sends_nothing() {
    let server = Server::start(vec![Reply::sse(TEXT)]).await;
    let cancel = CancellationToken::new();
    cancel.cancel();
    let events = collect_with(&server.config(Provider::OpenAi), &request(), cancel, |_| {}).await;
    assert_eq!(
        events,
        vec![StreamEvent::Done {
            stop_reason: "cancelled".into()
        }]
    );
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(server.received().len(), 0);
}

#[tokio::test]
async fn a_web_page_instead_of_a_stream_is_a_bad_response() {
    let page = Reply::typed(
        200,
        "text/html; charset=utf-8",
        "<!doctype html><title>Home</title>",
    );
    let server = Server::start(vec![page]).await;
    let events = collect(&server.config(Provider::OpenAi), &request()).await;
    let error = terminal_error(&events);
    assert_eq!(
        (error.code.as_str(), error.message.as_str()),
        (
            "llm_bad_response",
            "The server answered with `text/html; charset=utf-8` instead of an event stream"
        )
    );
}

#[tokio::test]
async fn json_instead_of_a_stream_is_a_bad_response() {
    let body = r#"{"id":"c","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"Hi"}}]}"#;
    let server = Server::start(vec![Reply::json(200, body)]).await;
    let events = collect(&server.config(Provider::OpenAi), &request()).await;
    let error = terminal_error(&events);
    assert_eq!(error.code.as_str(), "llm_bad_response");
    assert_eq!(
        error.message,
        "The server answered with `application/json` instead of an event stream"
    );
}

/// llama.cpp's answer to a request larger than its context, as
/// `llama-server` sends it: the bridge says so with its own code and the
/// sizes, and does not retry (the same request would fail again).
#[tokio::test]
async fn a_request_over_the_context_window_is_context_overflow() {
    let body = r#"{"error":{"code":400,"message":"request (6872 tokens) exceeds the available context size (4096 tokens), try increasing it","type":"exceed_context_size_error","n_prompt_tokens":6872,"n_ctx":4096}}"#;
    for_each_provider(|provider| async move {
        let server = Server::start(vec![Reply::json(400, body)]).await;
        let events = collect(&server.config(provider), &request()).await;
        assert_eq!(events.len(), 1, "{events:?}");
        let error = terminal_error(&events);
        assert_eq!(error.code.as_str(), "llm_context_overflow");
        assert_eq!(
            error.message,
            "The server cannot fit the request in the model's context window (HTTP 400): request (6872 tokens) exceeds the available context size (4096 tokens), try increasing it"
        );
        assert_eq!(error.details["prompt_tokens"], 6872);
        assert_eq!(error.details["context_window"], 4096);
        assert!(!error.retryable);
        assert_eq!(server.received().len(), 1);
    })
    .await;
}

#[tokio::test]
async fn a_providers_own_api_without_a_key_fails_at_once_with_nothing_sent() {
    for provider in [Provider::Anthropic, Provider::OpenAi] {
        // The provider's own address, no key: it refuses every request, and
        // offline it would be retried for seconds as unreachable.
        let mut config = corral_llm::ProviderConfig::new(provider, "m");
        config.retry_base_delay = Duration::from_secs(5);
        let started = Instant::now();
        let events = collect(&config, &request()).await;
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "{provider:?} waited"
        );
        assert_eq!(events.len(), 1, "one terminal error, no retry: {events:?}");
        let error = terminal_error(&events);
        assert_eq!(error.code.as_str(), "llm_auth");
        assert!(!error.retryable);
        assert!(
            error.message.contains("no API key is set"),
            "{}",
            error.message
        );
        assert!(error.hint.contains("Settings"), "{}", error.hint);
        let checked = corral_llm::test_connection(&config).await;
        assert_eq!(
            checked.map_err(|e| e.code.as_str().to_string()),
            Err("llm_auth".into())
        );
    }
}

#[tokio::test]
async fn a_local_server_without_a_key_is_asked() {
    let server = Server::start(vec![Reply::sse(TEXT)]).await;
    let mut config = server.config(Provider::OpenAi);
    config.api_key = None;
    assert_eq!(collect(&config, &request()).await, text_events());
}
