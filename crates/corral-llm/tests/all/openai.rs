//! OpenAI-compatible Chat Completions against a local server replaying the
//! wire format of OpenAI and of local servers (Ollama, llama.cpp) with
//! their quirks.

use crate::common::{collect, object, offset_in, terminal_error, End, Reply, Server, KEY};
use corral_llm::{
    test_connection, Block, ChatRequest, Message, Provider, Role, StreamEvent, ToolDef,
};
use pretty_assertions::assert_eq;
use serde_json::{json, Map};

/// OpenAI's text stream, with CRLF line ends and a keep-alive comment.
const TEXT_STREAM: &str = concat!(
    ": OPENROUTER PROCESSING\r\n\r\n",
    r#"data: {"id":"chatcmpl-9xA1","object":"chat.completion.chunk","created":1727000000,"model":"gpt-4o-mini-2024-07-18","system_fingerprint":"fp_44709d6fcb","choices":[{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"logprobs":null,"finish_reason":null}],"usage":null}"#,
    "\r\n\r\n",
    r#"data: {"id":"chatcmpl-9xA1","object":"chat.completion.chunk","created":1727000000,"model":"gpt-4o-mini-2024-07-18","system_fingerprint":"fp_44709d6fcb","choices":[{"index":0,"delta":{"content":"Grüße 🦀"},"logprobs":null,"finish_reason":null}],"usage":null}"#,
    "\r\n\r\n",
    ": keep-alive\r\n\r\n",
    r#"data: {"id":"chatcmpl-9xA1","object":"chat.completion.chunk","created":1727000000,"model":"gpt-4o-mini-2024-07-18","system_fingerprint":"fp_44709d6fcb","choices":[{"index":0,"delta":{"content":", world."},"logprobs":null,"finish_reason":null}],"usage":null}"#,
    "\r\n\r\n",
    r#"data: {"id":"chatcmpl-9xA1","object":"chat.completion.chunk","created":1727000000,"model":"gpt-4o-mini-2024-07-18","system_fingerprint":"fp_44709d6fcb","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}],"usage":null}"#,
    "\r\n\r\n",
    r#"data: {"id":"chatcmpl-9xA1","object":"chat.completion.chunk","created":1727000000,"model":"gpt-4o-mini-2024-07-18","system_fingerprint":"fp_44709d6fcb","choices":[],"usage":{"prompt_tokens":9,"completion_tokens":12,"total_tokens":21,"prompt_tokens_details":{"cached_tokens":0}}}"#,
    "\r\n\r\n",
    "data: [DONE]\r\n\r\n",
);

/// Two parallel tool calls; ids only on the first fragment of each; the
/// arguments cut inside a JSON string.
const TOOL_STREAM: &str = concat!(
    r#"data: {"id":"chatcmpl-B2","object":"chat.completion.chunk","created":1727000001,"model":"gpt-4o-2024-08-06","choices":[{"index":0,"delta":{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_DdmO9pD3xa9XTPNJ32zg2hcA","type":"function","function":{"name":"read_file","arguments":""}}],"refusal":null},"logprobs":null,"finish_reason":null}]}"#,
    "\n\n",
    r#"data: {"id":"chatcmpl-B2","object":"chat.completion.chunk","created":1727000001,"model":"gpt-4o-2024-08-06","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"path\": \"src/ma"}}]},"logprobs":null,"finish_reason":null}]}"#,
    "\n\n",
    r#"data: {"id":"chatcmpl-B2","object":"chat.completion.chunk","created":1727000001,"model":"gpt-4o-2024-08-06","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"in.rs\"}"}}]},"logprobs":null,"finish_reason":null}]}"#,
    "\n\n",
    r#"data: {"id":"chatcmpl-B2","object":"chat.completion.chunk","created":1727000001,"model":"gpt-4o-2024-08-06","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_7hN2","type":"function","function":{"name":"glob","arguments":""}}]},"logprobs":null,"finish_reason":null}]}"#,
    "\n\n",
    r#"data: {"id":"chatcmpl-B2","object":"chat.completion.chunk","created":1727000001,"model":"gpt-4o-2024-08-06","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":"{\"pattern\":\"**/*.rs\"}"}}]},"logprobs":null,"finish_reason":null}]}"#,
    "\n\n",
    r#"data: {"id":"chatcmpl-B2","object":"chat.completion.chunk","created":1727000001,"model":"gpt-4o-2024-08-06","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"tool_calls"}]}"#,
    "\n\n",
    r#"data: {"id":"chatcmpl-B2","object":"chat.completion.chunk","created":1727000001,"model":"gpt-4o-2024-08-06","choices":[],"usage":{"prompt_tokens":120,"completion_tokens":40,"total_tokens":160,"prompt_tokens_details":{"cached_tokens":64}}}"#,
    "\n\n",
    "data: [DONE]\n\n",
);

fn request() -> ChatRequest {
    ChatRequest {
        system: "You are Corral.".into(),
        messages: vec![Message::user("Hi")],
        tools: vec![],
        max_tokens: None,
    }
}

#[tokio::test]
async fn streams_text_with_crlf_comments_and_usage() {
    for reply in [
        Reply::sse(TEXT_STREAM).every(5),
        Reply::sse(TEXT_STREAM).split_at(&[
            offset_in(TEXT_STREAM, "🦀", 1),
            offset_in(TEXT_STREAM, "\r\n\r\n", 1),
        ]),
    ] {
        let server = Server::start(vec![reply]).await;
        let events = collect(&server.config(Provider::OpenAi), &request()).await;
        assert_eq!(
            events,
            vec![
                StreamEvent::TextDelta {
                    text: "Grüße 🦀".into()
                },
                StreamEvent::TextDelta {
                    text: ", world.".into()
                },
                StreamEvent::Usage {
                    input_tokens: 9,
                    output_tokens: 12,
                    cache_read_tokens: 0,
                    cache_write_tokens: 0
                },
                StreamEvent::Done {
                    stop_reason: "end_turn".into()
                },
            ]
        );
    }
}

#[tokio::test]
async fn streams_parallel_tool_calls_in_fragments() {
    let server = Server::start(vec![Reply::sse(TOOL_STREAM).every(11)]).await;
    let events = collect(&server.config(Provider::OpenAi), &request()).await;
    let (a, b) = ("call_DdmO9pD3xa9XTPNJ32zg2hcA", "call_7hN2");
    assert_eq!(
        events,
        vec![
            StreamEvent::ToolCallStart {
                id: a.into(),
                name: "read_file".into()
            },
            StreamEvent::ToolCallDelta {
                id: a.into(),
                json: "{\"path\": \"src/ma".into()
            },
            StreamEvent::ToolCallDelta {
                id: a.into(),
                json: "in.rs\"}".into()
            },
            StreamEvent::ToolCallStart {
                id: b.into(),
                name: "glob".into()
            },
            StreamEvent::ToolCallDelta {
                id: b.into(),
                json: "{\"pattern\":\"**/*.rs\"}".into()
            },
            StreamEvent::ToolCallEnd {
                id: a.into(),
                name: "read_file".into(),
                input: object(json!({"path": "src/main.rs"})),
                input_error: None,
            },
            StreamEvent::ToolCallEnd {
                id: b.into(),
                name: "glob".into(),
                input: object(json!({"pattern": "**/*.rs"})),
                input_error: None,
            },
            StreamEvent::Usage {
                input_tokens: 120,
                output_tokens: 40,
                cache_read_tokens: 64,
                cache_write_tokens: 0
            },
            StreamEvent::Done {
                stop_reason: "tool_use".into()
            },
        ]
    );
}

#[tokio::test]
async fn sends_the_chat_completions_request() {
    let server = Server::start(vec![Reply::sse(TEXT_STREAM)]).await;
    let mut input = Map::new();
    input.insert("path".into(), json!("a.txt"));
    let request = ChatRequest {
        system: "You are Corral.".into(),
        messages: vec![
            Message::user("Read a.txt and b.txt"),
            Message {
                role: Role::Assistant,
                content: vec![
                    Block::text("Reading both."),
                    Block::ToolUse {
                        id: "call_1".into(),
                        name: "read_file".into(),
                        input: input.clone(),
                    },
                    Block::ToolUse {
                        id: "call_2".into(),
                        name: "read_file".into(),
                        input: Map::new(),
                    },
                ],
            },
            Message {
                role: Role::User,
                content: vec![
                    Block::ToolResult {
                        tool_use_id: "call_1".into(),
                        content: "A".into(),
                        is_error: false,
                    },
                    Block::text("Also this:"),
                    Block::ToolResult {
                        tool_use_id: "call_2".into(),
                        content: r#"{"code":"not_found"}"#.into(),
                        is_error: true,
                    },
                ],
            },
            Message {
                role: Role::Assistant,
                content: vec![Block::ToolUse {
                    id: "call_3".into(),
                    name: "glob".into(),
                    input: Map::new(),
                }],
            },
        ],
        tools: vec![ToolDef {
            name: "read_file".into(),
            description: "Reads a file.".into(),
            input_schema: json!({"type": "object", "properties": {"path": {"type": "string"}}}),
        }],
        max_tokens: None,
    };
    collect(&server.config(Provider::OpenAi), &request).await;
    let sent = &server.received()[0];
    assert_eq!(
        (sent.method.as_str(), sent.path.as_str()),
        ("POST", "/v1/chat/completions")
    );
    assert_eq!(
        sent.header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
    assert_eq!(sent.header("x-api-key"), None);
    assert_eq!(
        sent.json(),
        json!({
            "model": "test-model",
            "max_tokens": 1024,
            "stream": true,
            "stream_options": {"include_usage": true},
            "return_progress": true,
            "messages": [
                {"role": "system", "content": "You are Corral."},
                {"role": "user", "content": "Read a.txt and b.txt"},
                {"role": "assistant", "content": "Reading both.", "tool_calls": [
                    {"id": "call_1", "type": "function", "function": {"name": "read_file", "arguments": "{\"path\":\"a.txt\"}"}},
                    {"id": "call_2", "type": "function", "function": {"name": "read_file", "arguments": "{}"}},
                ]},
                {"role": "tool", "tool_call_id": "call_1", "content": "A"},
                {"role": "tool", "tool_call_id": "call_2", "content": "{\"code\":\"not_found\"}"},
                {"role": "user", "content": "Also this:"},
                {"role": "assistant", "content": null, "tool_calls": [
                    {"id": "call_3", "type": "function", "function": {"name": "glob", "arguments": "{}"}},
                ]},
            ],
            "tools": [{"type": "function", "function": {
                "name": "read_file",
                "description": "Reads a file.",
                "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
            }}],
        })
    );
}

#[tokio::test]
async fn tolerates_local_server_quirks() {
    // No index and no id (and "" for no finish reason); then a new id at a reused index with arguments as
    // an object; "stop" after tool calls; usage with the finish reason;
    // extra fields; no [DONE] before the connection closes; no key.
    let body = concat!(
        r#"data: {"id":"chatcmpl-123","object":"chat.completion.chunk","created":1,"model":"qwen3:8b","system_fingerprint":"fp_ollama","choices":[{"index":0,"delta":{"role":"assistant","content":"Looking."},"finish_reason":null}]}"#,
        "\n\n",
        r#"data: {"id":"chatcmpl-123","object":"chat.completion.chunk","created":1,"model":"qwen3:8b","choices":[{"index":0,"delta":{"role":"assistant","content":null,"tool_calls":[{"function":{"name":"list_directory","arguments":"{\"path\":\".\"}"}}]},"finish_reason":""}]}"#,
        "\n\n",
        r#"data: {"id":"chatcmpl-123","object":"chat.completion.chunk","created":1,"model":"qwen3:8b","choices":[{"index":0,"delta":{"content":"","tool_calls":[{"id":"abc-77","index":0,"function":{"name":"glob","arguments":{"pattern":"*.md"}}}]},"finish_reason":null}]}"#,
        "\n\n",
        r#"data: {"id":"chatcmpl-123","object":"chat.completion.chunk","created":1,"model":"qwen3:8b","choices":[{"index":0,"delta":{"content":""},"finish_reason":"stop"}],"usage":{"prompt_tokens":30,"completion_tokens":5,"total_tokens":35},"timings":{"predicted_ms":12.5}}"#,
        "\n\n",
    );
    let server = Server::start(vec![Reply::sse(body).end(End::CloseDelimited)]).await;
    let mut config = server.config(Provider::OpenAi);
    config.api_key = None;
    let events = collect(&config, &request()).await;
    assert_eq!(
        events,
        vec![
            StreamEvent::TextDelta {
                text: "Looking.".into()
            },
            StreamEvent::ToolCallStart {
                id: "call_0".into(),
                name: "list_directory".into()
            },
            StreamEvent::ToolCallDelta {
                id: "call_0".into(),
                json: "{\"path\":\".\"}".into()
            },
            StreamEvent::ToolCallStart {
                id: "abc-77".into(),
                name: "glob".into()
            },
            StreamEvent::ToolCallDelta {
                id: "abc-77".into(),
                json: "{\"pattern\":\"*.md\"}".into()
            },
            StreamEvent::ToolCallEnd {
                id: "call_0".into(),
                name: "list_directory".into(),
                input: object(json!({"path": "."})),
                input_error: None,
            },
            StreamEvent::ToolCallEnd {
                id: "abc-77".into(),
                name: "glob".into(),
                input: object(json!({"pattern": "*.md"})),
                input_error: None,
            },
            StreamEvent::Usage {
                input_tokens: 30,
                output_tokens: 5,
                cache_read_tokens: 0,
                cache_write_tokens: 0
            },
            StreamEvent::Done {
                stop_reason: "tool_use".into()
            },
        ]
    );
    assert_eq!(server.received()[0].header("authorization"), None);
}

#[tokio::test]
async fn reasoning_streams_apart_from_the_answer() {
    // llama-server (`--reasoning-format deepseek`, its default `auto` for
    // thinking models) and DeepSeek send `reasoning_content`; other
    // servers `reasoning`. Empty and null ones are no event.
    let body = concat!(
        r#"data: {"choices":[{"finish_reason":null,"index":0,"delta":{"role":"assistant","content":null}}],"created":1,"id":"chatcmpl-q","model":"qwen3","object":"chat.completion.chunk"}"#,
        "\n\n",
        r#"data: {"choices":[{"finish_reason":null,"index":0,"delta":{"reasoning_content":"The user wants "}}],"created":1,"id":"chatcmpl-q","model":"qwen3","object":"chat.completion.chunk"}"#,
        "\n\n",
        r#"data: {"choices":[{"finish_reason":null,"index":0,"delta":{"reasoning_content":"a greeting."}}],"created":1,"id":"chatcmpl-q","model":"qwen3","object":"chat.completion.chunk"}"#,
        "\n\n",
        r#"data: {"choices":[{"finish_reason":null,"index":0,"delta":{"reasoning":"Short.","reasoning_content":null}}],"created":1,"id":"chatcmpl-q","model":"qwen3","object":"chat.completion.chunk"}"#,
        "\n\n",
        r#"data: {"choices":[{"finish_reason":null,"index":0,"delta":{"content":"Hello.","reasoning_content":""}}],"created":1,"id":"chatcmpl-q","model":"qwen3","object":"chat.completion.chunk"}"#,
        "\n\n",
        r#"data: {"choices":[{"finish_reason":"stop","index":0,"delta":{}}],"created":1,"id":"chatcmpl-q","model":"qwen3","object":"chat.completion.chunk","usage":{"completion_tokens":9,"prompt_tokens":12,"total_tokens":21}}"#,
        "\n\n",
        "data: [DONE]\n\n",
    );
    let server = Server::start(vec![Reply::sse(body)]).await;
    let events = collect(&server.config(Provider::OpenAi), &request()).await;
    assert_eq!(
        events,
        vec![
            StreamEvent::ReasoningDelta {
                text: "The user wants ".into()
            },
            StreamEvent::ReasoningDelta {
                text: "a greeting.".into()
            },
            StreamEvent::ReasoningDelta {
                text: "Short.".into()
            },
            StreamEvent::TextDelta {
                text: "Hello.".into()
            },
            StreamEvent::Usage {
                input_tokens: 12,
                output_tokens: 9,
                cache_read_tokens: 0,
                cache_write_tokens: 0
            },
            StreamEvent::Done {
                stop_reason: "end_turn".into()
            },
        ]
    );
}

#[tokio::test]
async fn length_is_max_tokens() {
    let body = concat!(
        r#"data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"Once upon"},"finish_reason":null}]}"#,
        "\n\n",
        r#"data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"length"}]}"#,
        "\n\ndata: [DONE]\n\n",
    );
    let server = Server::start(vec![Reply::sse(body)]).await;
    let events = collect(&server.config(Provider::OpenAi), &request()).await;
    assert_eq!(
        events,
        vec![
            StreamEvent::TextDelta {
                text: "Once upon".into()
            },
            StreamEvent::Done {
                stop_reason: "max_tokens".into()
            },
        ]
    );
}

/// The window keeps request and reply inside the context window: a reply
/// limit below the settings' max tokens is sent, one above it is not.
#[tokio::test]
async fn a_request_may_lower_the_reply_limit_but_never_raise_it() {
    for (asked, sent) in [
        (Some(300), 300),
        (Some(100_000), 1024),
        (Some(0), 1),
        (None, 1024),
    ] {
        let server = Server::start(vec![Reply::sse(TEXT_STREAM)]).await;
        let request = ChatRequest {
            max_tokens: asked,
            ..request()
        };
        collect(&server.config(Provider::OpenAi), &request).await;
        assert_eq!(server.received()[0].json()["max_tokens"], sent, "{asked:?}");
    }
}

#[tokio::test]
async fn an_error_object_in_a_chunk_ends_the_stream() {
    let body = concat!(
        r#"data: {"id":"gen-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":null}]}"#,
        "\n\n",
        r#"data: {"id":"gen-1","object":"chat.completion.chunk","created":1,"model":"m","provider":"X","error":{"code":502,"message":"Provider returned error"},"choices":[{"index":0,"delta":{"content":""},"finish_reason":"error"}]}"#,
        "\n\n",
    );
    let server = Server::start(vec![Reply::sse(body)]).await;
    let events = collect(&server.config(Provider::OpenAi), &request()).await;
    assert_eq!(events[0], StreamEvent::TextDelta { text: "Hi".into() });
    assert_eq!(
        terminal_error(&events).to_json(),
        json!({
            "code": "llm_unavailable",
            "message": "The server reported an error in the stream (502): Provider returned error",
            "hint": "The provider had a problem on its side; retry in a moment (the conversation is kept).",
            "retryable": true,
            "details": {"type": "502", "provider": "openai", "url": server.url("/v1/chat/completions")},
        })
    );
}

#[tokio::test]
async fn a_malformed_chunk_is_a_bad_response() {
    let body = concat!(
        r#"data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"ok"},"finish_reason":null}]}"#,
        "\n\n",
        "data: {\"id\":\"c\",\"choices\":[{\"delta\":{\"content\":\"x\"}}]\n\n",
        "data: [DONE]\n\n",
    );
    let server = Server::start(vec![Reply::sse(body)]).await;
    let events = collect(&server.config(Provider::OpenAi), &request()).await;
    assert_eq!(events.len(), 2, "{events:#?}");
    let error = terminal_error(&events);
    assert_eq!(error.code.as_str(), "llm_bad_response");
    assert!(!error.retryable);
    assert_eq!(
        error.details["data"],
        json!("{\"id\":\"c\",\"choices\":[{\"delta\":{\"content\":\"x\"}}]")
    );
}

#[tokio::test]
async fn invalid_tool_arguments_end_the_call_with_an_error_for_the_model() {
    // The first call's arguments are cut off; the second is fine. Neither
    // ends the stream: the first carries an error the agent gives back.
    let body = concat!(
        r#"data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"glob","arguments":"{\"pattern\": "}}]},"finish_reason":null}]}"#,
        "\n\n",
        r#"data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_2","type":"function","function":{"name":"glob","arguments":"{\"pattern\": \"*\"}"}}]},"finish_reason":null}]}"#,
        "\n\n",
        r#"data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#,
        "\n\ndata: [DONE]\n\n",
    );
    let server = Server::start(vec![Reply::sse(body)]).await;
    let events = collect(&server.config(Provider::OpenAi), &request()).await;
    let ends: Vec<&StreamEvent> = events
        .iter()
        .filter(|e| matches!(e, StreamEvent::ToolCallEnd { .. }))
        .collect();
    assert_eq!(ends.len(), 2, "{events:#?}");
    let StreamEvent::ToolCallEnd {
        id,
        input,
        input_error: Some(error),
        ..
    } = ends[0]
    else {
        panic!("the first call has no input_error: {:?}", ends[0]);
    };
    assert_eq!((id.as_str(), input.len()), ("call_1", 0));
    assert_eq!(
        error.to_json(),
        json!({
            "code": "invalid_input",
            "message": "the input for tool `glob` is not a JSON object: EOF while parsing a value at line 1 column 12",
            "hint": "Call the tool again with its input as one JSON object that matches its schema.",
            "retryable": false,
            "details": {"tool": "glob", "input": "{\"pattern\": "},
        })
    );
    assert!(
        matches!(ends[1], StreamEvent::ToolCallEnd { id, input_error: None, .. } if id == "call_2")
    );
    assert_eq!(
        events.last(),
        Some(&StreamEvent::Done {
            stop_reason: "tool_use".into()
        })
    );
}

#[tokio::test]
async fn unauthorized_is_llm_auth_and_the_key_is_scrubbed() {
    // A server that echoes the whole key back.
    let body = format!(
        r#"{{"error":{{"message":"Incorrect API key provided: {KEY}.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}}}"#
    );
    let server = Server::start(vec![Reply::json(401, &body)]).await;
    let events = collect(&server.config(Provider::OpenAi), &request()).await;
    let error = terminal_error(&events);
    assert_eq!(error.code.as_str(), "llm_auth");
    assert_eq!(
        error.message,
        "The server rejected the credentials (HTTP 401): Incorrect API key provided: [redacted]."
    );
    assert_eq!(server.received().len(), 1);
}

#[tokio::test]
async fn test_connection_uses_one_token() {
    let body = r#"{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"gpt-4o-mini-2024-07-18","choices":[{"index":0,"message":{"role":"assistant","content":"P"},"finish_reason":"length"}],"usage":{"prompt_tokens":8,"completion_tokens":1,"total_tokens":9}}"#;
    let server = Server::start(vec![Reply::json(200, body)]).await;
    let model = test_connection(&server.config(Provider::OpenAi)).await;
    assert_eq!(model, Ok("gpt-4o-mini-2024-07-18".to_string()));
    assert_eq!(
        server.received()[0].json(),
        json!({"model": "test-model", "max_tokens": 1, "stream": false,
               "messages": [{"role": "user", "content": "ping"}]})
    );
}

#[tokio::test]
async fn test_connection_reports_auth_errors() {
    let body = r#"{"error":{"message":"No auth credentials found","code":401}}"#;
    let server = Server::start(vec![Reply::json(401, body)]).await;
    let error = test_connection(&server.config(Provider::OpenAi))
        .await
        .unwrap_err();
    assert_eq!(error.code.as_str(), "llm_auth");
    assert_eq!(
        crate::common::unaddressed(&error.message),
        "The server rejected the credentials (HTTP 401): No auth credentials found"
    );
}

#[tokio::test]
async fn test_connection_accepts_a_refusal_to_stop_after_one_token() {
    let body = r#"{"error":{"message":"Could not finish the message because max_tokens or model output limit was reached. Please try again with higher max_tokens.","type":"invalid_request_error","param":null,"code":null}}"#;
    let server = Server::start(vec![Reply::json(400, body)]).await;
    let model = test_connection(&server.config(Provider::OpenAi)).await;
    assert_eq!(model, Ok("test-model".to_string()));
}

/// llama-server asked with `return_progress`: chunks with no choices and a
/// `prompt_progress` while it reads the prompt, then the answer.
const PROGRESS_STREAM: &str = concat!(
    r#"data: {"choices":[],"created":1764140000,"id":"chatcmpl-l1","model":"smollm2","object":"chat.completion.chunk","prompt_progress":{"total":3900,"cache":0,"processed":2048,"time_ms":21000}}"#,
    "\n\n",
    r#"data: {"choices":[],"created":1764140000,"id":"chatcmpl-l1","model":"smollm2","object":"chat.completion.chunk","prompt_progress":{"total":3900,"cache":0,"processed":3900,"time_ms":40100}}"#,
    "\n\n",
    r#"data: {"choices":[{"finish_reason":null,"index":0,"delta":{"content":"Hi"}}],"created":1764140041,"id":"chatcmpl-l1","model":"smollm2","object":"chat.completion.chunk"}"#,
    "\n\n",
    r#"data: {"choices":[{"finish_reason":"stop","index":0,"delta":{}}],"created":1764140041,"id":"chatcmpl-l1","model":"smollm2","object":"chat.completion.chunk"}"#,
    "\n\n",
    "data: [DONE]\n\n",
);

#[tokio::test]
async fn a_local_server_is_asked_for_prompt_progress_and_it_is_streamed() {
    let server = Server::start(vec![Reply::sse(PROGRESS_STREAM)]).await;
    let events = collect(&server.config(Provider::OpenAi), &request()).await;
    assert_eq!(
        events,
        vec![
            StreamEvent::PromptProgress {
                processed: 2048,
                total: 3900
            },
            StreamEvent::PromptProgress {
                processed: 3900,
                total: 3900
            },
            StreamEvent::TextDelta { text: "Hi".into() },
            StreamEvent::Done {
                stop_reason: "end_turn".into()
            },
        ]
    );
    assert_eq!(server.received()[0].json()["return_progress"], true);
}
