//! Ollama's native chat API against a local server answering as Ollama
//! does: `POST /api/chat` streaming newline-delimited JSON, errors as
//! `{"error": "..."}`, `/api/version` and `/api/show`.

use crate::common::{collect, offset_in, terminal_error, unaddressed, End, Reply, Server, KEY};
use corral_llm::{
    model_info, test_connection, with_native_api, Block, ChatRequest, Message, ModelInfo, Provider,
    ProviderConfig, Role, StreamEvent, ToolDef,
};
use pretty_assertions::assert_eq;
use serde_json::{json, Map};
use std::time::Duration;

/// A thinking model's answer: its thinking first, then text (with a
/// multi-byte character), then the last line with the counts.
const TEXT_STREAM: &str = concat!(
    r#"{"model":"qwen3:4b","created_at":"2025-10-26T17:15:24.097767Z","message":{"role":"assistant","content":"","thinking":"The user greets."},"done":false}"#,
    "\n",
    r#"{"model":"qwen3:4b","created_at":"2025-10-26T17:15:24.109172Z","message":{"role":"assistant","content":"Grüße 🦀"},"done":false}"#,
    "\n",
    r#"{"model":"qwen3:4b","created_at":"2025-10-26T17:15:24.121485Z","message":{"role":"assistant","content":", world."},"done":false}"#,
    "\n",
    r#"{"model":"qwen3:4b","created_at":"2025-10-26T17:15:24.166576Z","message":{"role":"assistant","content":""},"done":true,"done_reason":"stop","total_duration":4883583458,"load_duration":1334875,"prompt_eval_count":26,"prompt_eval_duration":342546000,"eval_count":282,"eval_duration":4535599000}"#,
    "\n",
);

/// A tool call as Ollama sends it: whole, its arguments an object, no id.
const TOOL_STREAM: &str = concat!(
    r#"{"model":"qwen3:4b","created_at":"2025-07-07T20:22:19.184789Z","message":{"role":"assistant","content":"","tool_calls":[{"function":{"name":"read_file","arguments":{"path":"src/main.rs"}}}]},"done":false}"#,
    "\n",
    r#"{"model":"qwen3:4b","created_at":"2025-07-07T20:22:19.19314Z","message":{"role":"assistant","content":""},"done_reason":"stop","done":true,"total_duration":182242375,"load_duration":41295167,"prompt_eval_count":169,"prompt_eval_duration":24573166,"eval_count":15,"eval_duration":115959084}"#,
    "\n",
);

fn request() -> ChatRequest {
    ChatRequest {
        system: "You are Corral.".into(),
        messages: vec![Message::user("Hi")],
        tools: vec![],
        max_tokens: None,
    }
}

fn text_events() -> Vec<StreamEvent> {
    vec![
        StreamEvent::ReasoningDelta {
            text: "The user greets.".into(),
        },
        StreamEvent::TextDelta {
            text: "Grüße 🦀".into(),
        },
        StreamEvent::TextDelta {
            text: ", world.".into(),
        },
        StreamEvent::Usage {
            input_tokens: 26,
            output_tokens: 282,
            cache_read_tokens: 0,
            cache_write_tokens: 0,
        },
        StreamEvent::Done {
            stop_reason: "end_turn".into(),
        },
    ]
}

#[tokio::test]
async fn streams_text_and_usage_with_lines_split_anywhere() {
    for reply in [
        Reply::ndjson(TEXT_STREAM),
        Reply::ndjson(TEXT_STREAM).every(7),
        // Inside the crab's four bytes, and right before a line's end.
        Reply::ndjson(TEXT_STREAM).split_at(&[
            offset_in(TEXT_STREAM, "🦀", 2),
            offset_in(TEXT_STREAM, "}\n", 1),
        ]),
    ] {
        let server = Server::start(vec![reply]).await;
        let events = collect(&server.config(Provider::Ollama), &request()).await;
        assert_eq!(events, text_events());
        let received = server.received();
        assert_eq!(received.len(), 1);
        assert_eq!(received[0].path, "/api/chat");
    }
}

#[tokio::test]
async fn the_window_goes_as_num_ctx_with_the_tools_in_function_shape() {
    let server = Server::start(vec![Reply::ndjson(TEXT_STREAM)]).await;
    let mut config = server.config(Provider::Ollama);
    config.context_window = Some(8192);
    let mut req = request();
    req.max_tokens = Some(300);
    req.tools = vec![ToolDef {
        name: "read_file".into(),
        description: "Reads a file.".into(),
        input_schema: json!({"type": "object", "properties": {"path": {"type": "string"}}}),
    }];
    collect(&config, &req).await;
    let sent = server.received()[0].json();
    assert_eq!(
        sent,
        json!({
            "model": "test-model",
            "messages": [
                {"role": "system", "content": "You are Corral."},
                {"role": "user", "content": "Hi"},
            ],
            "stream": true,
            "options": {"num_ctx": 8192, "num_predict": 300},
            "tools": [{"type": "function", "function": {
                "name": "read_file",
                "description": "Reads a file.",
                "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
            }}],
        })
    );
    assert_eq!(
        server.received()[0].header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
}

#[tokio::test]
async fn a_tool_call_comes_whole_with_a_made_id() {
    let server = Server::start(vec![Reply::ndjson(TOOL_STREAM).every(11)]).await;
    let events = collect(&server.config(Provider::Ollama), &request()).await;
    let mut input = Map::new();
    input.insert("path".into(), json!("src/main.rs"));
    assert_eq!(
        events,
        vec![
            StreamEvent::ToolCallStart {
                id: "call_0".into(),
                name: "read_file".into(),
            },
            StreamEvent::ToolCallDelta {
                id: "call_0".into(),
                json: r#"{"path":"src/main.rs"}"#.into(),
            },
            StreamEvent::ToolCallEnd {
                id: "call_0".into(),
                name: "read_file".into(),
                input,
                input_error: None,
            },
            StreamEvent::Usage {
                input_tokens: 169,
                output_tokens: 15,
                cache_read_tokens: 0,
                cache_write_tokens: 0,
            },
            StreamEvent::Done {
                stop_reason: "tool_use".into(),
            },
        ]
    );
}

#[tokio::test]
async fn a_tool_result_goes_back_naming_its_tool() {
    let answer = concat!(
        r#"{"model":"qwen3:4b","created_at":"2025-07-07T20:43:37.688511Z","message":{"role":"assistant","content":"It prints hello."},"done":false}"#,
        "\n",
        r#"{"model":"qwen3:4b","created_at":"2025-07-07T20:43:37.7Z","message":{"role":"assistant","content":""},"done_reason":"stop","done":true,"prompt_eval_count":94,"eval_count":11}"#,
        "\n",
    );
    let server = Server::start(vec![Reply::ndjson(TOOL_STREAM), Reply::ndjson(answer)]).await;
    let config = server.config(Provider::Ollama);
    let first = collect(&config, &request()).await;
    let Some(StreamEvent::ToolCallEnd {
        id, name, input, ..
    }) = first
        .iter()
        .find(|e| matches!(e, StreamEvent::ToolCallEnd { .. }))
        .cloned()
    else {
        panic!("no tool call: {first:?}");
    };
    let mut req = request();
    req.messages.push(Message {
        role: Role::Assistant,
        content: vec![
            Block::text("Let me look."),
            Block::ToolUse {
                id: id.clone(),
                name,
                input,
            },
        ],
    });
    req.messages.push(Message {
        role: Role::User,
        content: vec![
            Block::ToolResult {
                tool_use_id: id,
                content: "fn main() { println!(\"hello\"); }".into(),
                is_error: false,
            },
            Block::text("And?"),
            Block::Image {
                media_type: "image/png".into(),
                data: "iVBORw0KGgo=".into(),
            },
        ],
    });
    let second = collect(&config, &req).await;
    assert_eq!(
        second.first(),
        Some(&StreamEvent::TextDelta {
            text: "It prints hello.".into()
        })
    );
    let sent = server.received()[1].json();
    assert_eq!(
        sent["messages"],
        json!([
            {"role": "system", "content": "You are Corral."},
            {"role": "user", "content": "Hi"},
            {"role": "assistant", "content": "Let me look.", "tool_calls": [
                {"id": "call_0", "function": {"name": "read_file", "arguments": {"path": "src/main.rs"}}},
            ]},
            {"role": "tool", "content": "fn main() { println!(\"hello\"); }", "tool_call_id": "call_0", "tool_name": "read_file"},
            {"role": "user", "content": "And?", "images": ["iVBORw0KGgo="]},
        ])
    );
}

#[tokio::test]
async fn an_error_line_mid_stream_ends_in_one_error_without_a_retry() {
    let body = concat!(
        r#"{"model":"qwen3:4b","created_at":"2025-10-26T17:21:21.196249Z","message":{"role":"assistant","content":" Yes"},"done":false}"#,
        "\n",
        r#"{"error":"an error was encountered while running the model"}"#,
        "\n",
    );
    let server = Server::start(vec![Reply::ndjson(body).every(9)]).await;
    let events = collect(&server.config(Provider::Ollama), &request()).await;
    assert_eq!(
        events[0],
        StreamEvent::TextDelta {
            text: " Yes".into()
        }
    );
    let error = terminal_error(&events);
    assert_eq!(error.code.as_str(), "llm_unavailable");
    assert_eq!(
        error.message,
        "The server reported an error in the stream (error): an error was encountered while running the model"
    );
    assert_eq!(events.len(), 2);
    assert_eq!(server.received().len(), 1, "nothing is sent again");
}

#[tokio::test]
async fn a_model_not_pulled_is_a_404_that_says_so() {
    let server = Server::start(vec![Reply::json(
        404,
        r#"{"error":"model 'qwen9:1b' not found"}"#,
    )])
    .await;
    let events = collect(&server.config(Provider::Ollama), &request()).await;
    let error = terminal_error(&events);
    assert_eq!(
        (error.code.as_str(), error.retryable),
        ("llm_unavailable", false)
    );
    assert!(
        error
            .message
            .ends_with("(HTTP 404): model 'qwen9:1b' not found"),
        "{}",
        error.message
    );
    assert!(error.hint.contains("ollama pull"), "{}", error.hint);
    assert_eq!(error.details["provider"], json!("ollama"));
    assert_eq!(events.len(), 1);
}

#[tokio::test]
async fn a_stream_without_its_done_line_is_cut_off() {
    let body = concat!(
        r#"{"model":"m","created_at":"2025-10-26T17:21:21Z","message":{"role":"assistant","content":"Par"},"done":false}"#,
        "\n",
    );
    let server = Server::start(vec![Reply::ndjson(body).end(End::Complete)]).await;
    let mut config = server.config(Provider::Ollama);
    config.max_retries = 0;
    let events = collect(&config, &request()).await;
    assert_eq!(terminal_error(&events).code.as_str(), "llm_unavailable");
    assert_eq!(
        unaddressed(&terminal_error(&events).message),
        "The server ended the stream before the response was complete"
    );
}

#[tokio::test]
async fn a_refused_connection_is_unavailable() {
    // A port that was just free: nothing listens there.
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap_or_else(|e| panic!("{e}"));
        listener.local_addr().map(|a| a.port()).unwrap_or(0)
    };
    let mut config = ProviderConfig::new(Provider::Ollama, "qwen3:4b");
    config.base_url = format!("http://127.0.0.1:{port}");
    config.max_retries = 0;
    config.connect_timeout = Duration::from_secs(2);
    let events = collect(&config, &request()).await;
    let error = terminal_error(&events);
    assert_eq!(
        (error.code.as_str(), error.retryable),
        ("llm_unavailable", true)
    );
    assert!(
        error.message.starts_with("could not connect to"),
        "{}",
        error.message
    );
}

#[tokio::test]
async fn test_connection_asks_for_one_token_unstreamed() {
    let answer = r#"{"model":"qwen3:4b","created_at":"2025-10-26T17:15:24Z","message":{"role":"assistant","content":"Hi"},"done":true,"done_reason":"length","prompt_eval_count":9,"eval_count":1}"#;
    let server = Server::start(vec![Reply::json(200, answer)]).await;
    let model = test_connection(&server.config(Provider::Ollama)).await;
    assert_eq!(model.map_err(|e| e.message), Ok("qwen3:4b".to_string()));
    let sent = server.received()[0].json();
    assert_eq!(
        (&sent["stream"], &sent["options"]["num_predict"]),
        (&json!(false), &json!(1))
    );
}

#[tokio::test]
async fn an_openai_base_url_that_ollama_serves_speaks_its_native_api() {
    let server = Server::start(vec![
        Reply::json(200, r#"{"version":"0.12.6"}"#),
        Reply::ndjson(TEXT_STREAM),
    ])
    .await;
    let config = server.config(Provider::OpenAi);
    let native = with_native_api(&config).await;
    assert_eq!(
        (native.provider, native.base_url.as_str()),
        (Provider::Ollama, server.url("").as_str())
    );
    assert_eq!(native.api_key, config.api_key);
    // The answer is kept: no second question.
    assert_eq!(with_native_api(&config).await.provider, Provider::Ollama);
    assert_eq!(collect(&native, &request()).await, text_events());
    let paths: Vec<String> = server.received().into_iter().map(|r| r.path).collect();
    assert_eq!(paths, ["/api/version", "/api/chat"]);

    // llama.cpp has no `/api/version`: it stays OpenAI-compatible.
    let other = Server::start(vec![Reply::json(
        404,
        r#"{"error":{"message":"File Not Found"}}"#,
    )])
    .await;
    let config = other.config(Provider::OpenAi);
    assert_eq!(with_native_api(&config).await, config);
    assert_eq!(with_native_api(&config).await, config);
    assert_eq!(other.received().len(), 1, "the answer is kept");

    // Nothing listening yet: asked again next time, and then it is Ollama.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap_or_else(|e| panic!("{e}"));
    let port = listener.local_addr().map(|a| a.port()).unwrap_or(0);
    drop(listener);
    let mut later = ProviderConfig::new(Provider::OpenAi, "m");
    later.base_url = format!("http://127.0.0.1:{port}/v1");
    assert_eq!(with_native_api(&later).await, later);
    let late = Server::start_on(port, vec![Reply::json(200, r#"{"version":"0.12.6"}"#)]).await;
    assert_eq!(with_native_api(&later).await.provider, Provider::Ollama);
    assert_eq!(late.received().len(), 1);

    // Hosted APIs are never asked.
    let hosted = ProviderConfig::new(Provider::OpenAi, "gpt-4o");
    assert_eq!(with_native_api(&hosted).await, hosted);
}

#[tokio::test]
async fn model_info_is_the_window_sent_capped_by_the_model() {
    let show = r#"{"license":"...","modelfile":"...","parameters":"num_ctx 2048","template":"...","details":{"family":"qwen3"},"model_info":{"general.architecture":"qwen3","qwen3.context_length":40960},"capabilities":["completion","tools","thinking"]}"#;
    let cases = [
        (Some(16_384), 16_384, "settings"),
        (Some(131_072), 40_960, "settings"),
        // No window set: Ollama's default is sent (its Modelfile's
        // `num_ctx` is overridden by what Corral sends).
        (None, 4096, "server"),
    ];
    for (set, window, source) in cases {
        let server = Server::start(vec![Reply::json(200, show)]).await;
        let mut config = server.config(Provider::Ollama);
        config.context_window = set;
        let info = model_info(&config).await;
        assert_eq!(
            info,
            ModelInfo {
                context_window: Some(window),
                source: Some(source.into()),
                max_context_window: Some(40_960),
                supports_tools: Some(true),
                counts_tokens: None,
                indents_tools: None,
                price: Some(corral_llm::Price::FREE),
            }
        );
        let received = server.received();
        assert_eq!(
            (received[0].path.as_str(), received[0].json()),
            ("/api/show", json!({"model": "test-model"}))
        );
    }
}
