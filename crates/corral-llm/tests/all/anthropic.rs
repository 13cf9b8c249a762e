//! Anthropic Messages against a local server replaying the real wire format.

use crate::common::{collect, object, offset_in, terminal_error, Reply, Server, KEY};
use corral_llm::{
    test_connection, Block, ChatRequest, Message, Provider, Role, StreamEvent, ToolDef,
};
use pretty_assertions::assert_eq;
use serde_json::{json, Map};

/// A thinking block (its text in two pieces, then its signature), a text
/// block, a tool call whose arguments arrive in pieces (the first empty,
/// one cut inside a JSON string), pings, and usage — as the API streams
/// them.
const TOOL_STREAM: &str = concat!(
    "event: message_start\n",
    r#"data: {"type":"message_start","message":{"id":"msg_014p7gG3wDgGV9EUtLvnow3U","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":472,"cache_creation_input_tokens":0,"cache_read_input_tokens":100,"output_tokens":2}}}"#,
    "\n\n",
    "event: content_block_start\n",
    r#"data: {"type":"content_block_start","index":3,"content_block":{"type":"thinking","thinking":""}}"#,
    "\n\n",
    "event: content_block_delta\n",
    r#"data: {"type":"content_block_delta","index":3,"delta":{"type":"thinking_delta","thinking":"The file is "}}"#,
    "\n\n",
    "event: content_block_delta\n",
    r#"data: {"type":"content_block_delta","index":3,"delta":{"type":"thinking_delta","thinking":"src/main.rs."}}"#,
    "\n\n",
    "event: content_block_delta\n",
    r#"data: {"type":"content_block_delta","index":3,"delta":{"type":"signature_delta","signature":"EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds"}}"#,
    "\n\n",
    "event: content_block_stop\n",
    r#"data: {"type":"content_block_stop","index":3}"#,
    "\n\n",
    "event: content_block_start\n",
    r#"data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
    "\n\n",
    "event: ping\n",
    r#"data: {"type": "ping"}"#,
    "\n\n",
    "event: content_block_delta\n",
    r#"data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Grüße 🦀, "}}"#,
    "\n\n",
    "event: content_block_delta\n",
    r#"data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"let me read it."}}"#,
    "\n\n",
    "event: content_block_stop\n",
    r#"data: {"type":"content_block_stop","index":0}"#,
    "\n\n",
    "event: content_block_start\n",
    r#"data: {"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_01T1x1fJ34qAmk2tNTrN7Up6","name":"read_file","input":{}}}"#,
    "\n\n",
    "event: content_block_delta\n",
    r#"data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":""}}"#,
    "\n\n",
    "event: content_block_delta\n",
    r#"data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"path\": \"src/ma"}}"#,
    "\n\n",
    "event: content_block_delta\n",
    r#"data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"in.rs\", \"start_line\": 3}"}}"#,
    "\n\n",
    "event: content_block_stop\n",
    r#"data: {"type":"content_block_stop","index":1}"#,
    "\n\n",
    "event: message_delta\n",
    r#"data: {"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":89}}"#,
    "\n\n",
    "event: message_stop\n",
    r#"data: {"type":"message_stop"}"#,
    "\n\n",
);

fn request() -> ChatRequest {
    let mut input = Map::new();
    input.insert("path".into(), json!("Cargo.toml"));
    ChatRequest {
        system: "You are Corral.".into(),
        messages: vec![
            Message::user("Read main.rs"),
            Message {
                role: Role::Assistant,
                content: vec![
                    Block::text(""),
                    Block::ToolUse {
                        id: "toolu_0".into(),
                        name: "read_file".into(),
                        input,
                    },
                ],
            },
            Message {
                role: Role::User,
                content: vec![Block::ToolResult {
                    tool_use_id: "toolu_0".into(),
                    content: "[package]".into(),
                    is_error: false,
                }],
            },
        ],
        tools: vec![ToolDef {
            name: "read_file".into(),
            description: "Reads a file.".into(),
            input_schema: json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}),
        }],
        max_tokens: None,
    }
}

#[tokio::test]
async fn streams_text_and_a_tool_call_split_anywhere() {
    // Cut inside the crab's four UTF-8 bytes, inside the JSON string
    // "src/ma|in.rs", and between "\n" and "\n" — then everything in 7s.
    let cuts = [
        offset_in(TOOL_STREAM, "🦀", 2),
        offset_in(TOOL_STREAM, "src/ma", 4),
        offset_in(TOOL_STREAM, "\n\n", 1),
    ];
    for reply in [
        Reply::sse(TOOL_STREAM).split_at(&cuts),
        Reply::sse(TOOL_STREAM).every(7),
    ] {
        let server = Server::start(vec![reply]).await;
        let events = collect(&server.config(Provider::Anthropic), &request()).await;
        assert_eq!(
            events,
            vec![
                StreamEvent::ReasoningDelta {
                    text: "The file is ".into()
                },
                StreamEvent::ReasoningDelta {
                    text: "src/main.rs.".into()
                },
                StreamEvent::TextDelta {
                    text: "Grüße 🦀, ".into()
                },
                StreamEvent::TextDelta {
                    text: "let me read it.".into()
                },
                StreamEvent::ToolCallStart {
                    id: "toolu_01T1x1fJ34qAmk2tNTrN7Up6".into(),
                    name: "read_file".into()
                },
                StreamEvent::ToolCallDelta {
                    id: "toolu_01T1x1fJ34qAmk2tNTrN7Up6".into(),
                    json: "{\"path\": \"src/ma".into()
                },
                StreamEvent::ToolCallDelta {
                    id: "toolu_01T1x1fJ34qAmk2tNTrN7Up6".into(),
                    json: "in.rs\", \"start_line\": 3}".into()
                },
                StreamEvent::ToolCallEnd {
                    id: "toolu_01T1x1fJ34qAmk2tNTrN7Up6".into(),
                    name: "read_file".into(),
                    input: object(json!({"path": "src/main.rs", "start_line": 3})),
                    input_error: None,
                },
                StreamEvent::Usage {
                    input_tokens: 572,
                    output_tokens: 89,
                    cache_read_tokens: 100,
                    cache_write_tokens: 0
                },
                StreamEvent::Done {
                    stop_reason: "tool_use".into()
                },
            ]
        );
    }
}

#[tokio::test]
async fn message_stop_ends_a_tool_call_left_open() {
    // Some Anthropic-compatible servers skip the tool block's
    // `content_block_stop`. The call ends at `message_stop` as it is: its
    // input, or an `input_error` for the model when that input is cut.
    let stop = concat!(
        "event: content_block_stop\n",
        r#"data: {"type":"content_block_stop","index":1}"#,
        "\n\n"
    );
    let last_delta = concat!(
        "event: content_block_delta\n",
        r#"data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"in.rs\", \"start_line\": 3}"}}"#,
        "\n\n",
    );
    let unclosed = TOOL_STREAM.replace(stop, "");
    let cut = unclosed.replace(last_delta, "");
    assert!(unclosed.len() < TOOL_STREAM.len() && cut.len() < unclosed.len());
    let cases = [
        (
            unclosed,
            object(json!({"path": "src/main.rs", "start_line": 3})),
            None,
        ),
        (
            cut,
            Map::new(),
            Some("the input for tool `read_file` is not a JSON object: EOF while parsing a string at line 1 column 16"),
        ),
    ];
    for (body, want_input, want_error) in cases {
        let server = Server::start(vec![Reply::sse(&body)]).await;
        let events = collect(&server.config(Provider::Anthropic), &request()).await;
        let [.., usage, StreamEvent::ToolCallEnd {
            id,
            name,
            input,
            input_error,
        }, done] = &events[..]
        else {
            panic!("no tool call end before the end: {events:#?}");
        };
        assert_eq!(
            usage,
            &StreamEvent::Usage {
                input_tokens: 572,
                output_tokens: 89,
                cache_read_tokens: 100,
                cache_write_tokens: 0
            }
        );
        assert_eq!(
            (id.as_str(), name.as_str(), input),
            ("toolu_01T1x1fJ34qAmk2tNTrN7Up6", "read_file", &want_input)
        );
        assert_eq!(
            input_error
                .as_ref()
                .map(|e| (e.code.as_str(), e.message.as_str())),
            want_error.map(|message| ("invalid_input", message))
        );
        assert_eq!(
            done,
            &StreamEvent::Done {
                stop_reason: "tool_use".into()
            }
        );
    }
}

#[tokio::test]
async fn sends_the_messages_request() {
    let server = Server::start(vec![Reply::sse(TOOL_STREAM)]).await;
    collect(&server.config(Provider::Anthropic), &request()).await;
    let received = server.received();
    assert_eq!(received.len(), 1);
    let sent = &received[0];
    assert_eq!(
        (sent.method.as_str(), sent.path.as_str()),
        ("POST", "/v1/messages")
    );
    assert_eq!(sent.header("x-api-key"), Some(KEY));
    assert_eq!(sent.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(sent.header("content-type"), Some("application/json"));
    assert_eq!(sent.header("authorization"), None);
    // The empty text block is dropped: the API refuses empty text.
    assert_eq!(
        sent.json(),
        json!({
            "model": "test-model",
            "max_tokens": 1024,
            "system": "You are Corral.",
            "stream": true,
            "messages": [
                {"role": "user", "content": [{"type": "text", "text": "Read main.rs"}]},
                {"role": "assistant", "content": [
                    {"type": "tool_use", "id": "toolu_0", "name": "read_file", "input": {"path": "Cargo.toml"}}
                ]},
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_0", "content": "[package]"}
                ]},
            ],
            "tools": [{
                "name": "read_file",
                "description": "Reads a file.",
                "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
            }],
        })
    );
}

#[tokio::test]
async fn an_error_event_after_text_ends_the_stream() {
    let body = concat!(
        "event: message_start\n",
        r#"data: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":10,"output_tokens":1}}}"#,
        "\n\n",
        "event: content_block_start\n",
        r#"data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
        "\n\n",
        "event: content_block_delta\n",
        r#"data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hel"}}"#,
        "\n\n",
        "event: error\n",
        r#"data: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
        "\n\n",
    );
    let server = Server::start(vec![Reply::sse(body)]).await;
    let events = collect(&server.config(Provider::Anthropic), &request()).await;
    assert_eq!(events[0], StreamEvent::TextDelta { text: "Hel".into() });
    assert_eq!(events.len(), 2);
    assert_eq!(
        terminal_error(&events).to_json(),
        json!({
            "code": "llm_unavailable",
            "message": "The server reported an error in the stream (overloaded_error): Overloaded",
            "hint": "The provider had a problem on its side; retry in a moment (the conversation is kept).",
            "retryable": true,
            "details": {"type": "overloaded_error", "provider": "anthropic", "url": server.url("/v1/messages")},
        })
    );
    // Something was already shown: no silent retry.
    assert_eq!(server.received().len(), 1);
}

#[tokio::test]
async fn an_error_event_before_any_output_is_retried() {
    let overloaded = concat!(
        "event: error\n",
        r#"data: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
        "\n\n",
    );
    let server = Server::start(vec![Reply::sse(overloaded), Reply::sse(TOOL_STREAM)]).await;
    let events = collect(&server.config(Provider::Anthropic), &request()).await;
    match &events[0] {
        StreamEvent::Retrying {
            attempt: 1,
            delay_ms: 10,
            error,
        } => {
            assert_eq!(error.code.as_str(), "llm_unavailable");
        }
        other => panic!("expected a retry, got {other:?}"),
    }
    assert_eq!(
        events.last(),
        Some(&StreamEvent::Done {
            stop_reason: "tool_use".into()
        })
    );
    assert_eq!(server.received().len(), 2);
}

#[tokio::test]
async fn unauthorized_is_llm_auth_with_the_providers_message() {
    let body =
        r#"{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}"#;
    let server = Server::start(vec![
        Reply::json(401, body).header("request-id", "req_011CSHoEeqs5C35K2UUqR7Fy")
    ])
    .await;
    let events = collect(&server.config(Provider::Anthropic), &request()).await;
    assert_eq!(
        events,
        vec![StreamEvent::Error {
            error: corral_protocol::Error {
                code: corral_protocol::error::ErrorCode::LlmAuth,
                message: "The server rejected the credentials (HTTP 401): invalid x-api-key".into(),
                hint: "Check the API key in Settings.".into(),
                retryable: false,
                details: object(json!({
                    "status": 401,
                    "type": "authentication_error",
                    "request_id": "req_011CSHoEeqs5C35K2UUqR7Fy",
                    "provider": "anthropic",
                    "url": server.url("/v1/messages"),
                })),
            }
        }]
    );
}

#[tokio::test]
async fn a_malformed_event_is_a_bad_response() {
    let body = concat!(
        "event: message_start\n",
        r#"data: {"type":"message_start","message":{"usage":{"input_tokens":3}}}"#,
        "\n\n",
        "event: content_block_start\n",
        r#"data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":"Hi"}}"#,
        "\n\n",
        "event: content_block_delta\n",
        r#"data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"#,
        "\n\n",
    );
    let server = Server::start(vec![Reply::sse(body)]).await;
    let events = collect(&server.config(Provider::Anthropic), &request()).await;
    assert_eq!(events[0], StreamEvent::TextDelta { text: "Hi".into() });
    let error = terminal_error(&events);
    assert_eq!(error.code.as_str(), "llm_bad_response");
    assert_eq!(
        error.message,
        "The server sent a stream event that could not be read: EOF while parsing a value at line 1 column 76"
    );
    assert_eq!(
        error.details["data"],
        json!(r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"#)
    );
}

#[tokio::test]
async fn a_stream_cut_before_message_stop_is_unavailable() {
    let cut = &TOOL_STREAM[..TOOL_STREAM.find("event: content_block_stop").unwrap()];
    let server = Server::start(vec![Reply::sse(cut).end(crate::common::End::CloseDelimited)]).await;
    let events = collect(&server.config(Provider::Anthropic), &request()).await;
    assert_eq!(events.len(), 3, "{events:#?}");
    let error = terminal_error(&events);
    assert_eq!(error.code.as_str(), "llm_unavailable");
    assert_eq!(
        error.message,
        "The server ended the stream before the response was complete"
    );
    assert_eq!(
        error.hint,
        "The response was cut off; retry (the conversation is kept)."
    );
}

#[tokio::test]
async fn test_connection_returns_the_answering_model() {
    let body = r#"{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929","content":[{"type":"text","text":"P"}],"stop_reason":"max_tokens","stop_sequence":null,"usage":{"input_tokens":8,"output_tokens":1}}"#;
    let server = Server::start(vec![Reply::json(200, body)]).await;
    let model = test_connection(&server.config(Provider::Anthropic)).await;
    assert_eq!(model, Ok("claude-sonnet-4-5-20250929".to_string()));
    let sent = server.received()[0].json();
    assert_eq!(
        sent,
        json!({"model": "test-model", "max_tokens": 1, "stream": false,
               "messages": [{"role": "user", "content": [{"type": "text", "text": "ping"}]}]})
    );
}
