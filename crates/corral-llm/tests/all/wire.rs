//! The JSON shapes of `docs/ipc.md`, pinned: `LlmRequest`, `Message`,
//! `Block`, `LlmEvent`, `Provider`.

use crate::common::object;
use corral_llm::{Block, ChatRequest, Message, Provider, Role, StreamEvent, ToolDef};
use corral_protocol::error::{Error, ErrorCode};
use pretty_assertions::assert_eq;
use serde_json::json;

#[test]
fn requests_read_the_ipc_shape() {
    let wire = json!({
        "system": "Be brief.",
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "hi"}]},
            {"role": "assistant", "content": [
                {"type": "tool_use", "id": "t1", "name": "glob", "input": {"pattern": "*"}}
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "t1", "content": "a.rs"},
                {"type": "tool_result", "tool_use_id": "t2", "content": "{}", "is_error": true}
            ]}
        ],
        "tools": [{"name": "glob", "description": "Finds files.", "input_schema": {"type": "object"}}]
    });
    let request: ChatRequest = serde_json::from_value(wire.clone()).unwrap();
    assert_eq!(
        request,
        ChatRequest {
            system: "Be brief.".into(),
            messages: vec![
                Message::user("hi"),
                Message {
                    role: Role::Assistant,
                    content: vec![Block::ToolUse {
                        id: "t1".into(),
                        name: "glob".into(),
                        input: object(json!({"pattern": "*"})),
                    }],
                },
                Message {
                    role: Role::User,
                    content: vec![
                        Block::ToolResult {
                            tool_use_id: "t1".into(),
                            content: "a.rs".into(),
                            is_error: false
                        },
                        Block::ToolResult {
                            tool_use_id: "t2".into(),
                            content: "{}".into(),
                            is_error: true
                        },
                    ],
                },
            ],
            tools: vec![ToolDef {
                name: "glob".into(),
                description: "Finds files.".into(),
                input_schema: json!({"type": "object"}),
            }],
            max_tokens: None,
        }
    );
    assert_eq!(serde_json::to_value(&request).unwrap(), wire);
    // `system` and `tools` may be left out.
    let bare: ChatRequest = serde_json::from_value(json!({"messages": []})).unwrap();
    assert_eq!(bare, ChatRequest::default());
}

#[test]
fn events_have_the_ipc_shape() {
    let error = Error::new(ErrorCode::LlmRateLimited, "slow down");
    let cases = [
        (
            StreamEvent::TextDelta { text: "Hi".into() },
            json!({"type": "text_delta", "text": "Hi"}),
        ),
        (
            StreamEvent::ToolCallStart {
                id: "c".into(),
                name: "glob".into(),
            },
            json!({"type": "tool_call_start", "id": "c", "name": "glob"}),
        ),
        (
            StreamEvent::ToolCallDelta {
                id: "c".into(),
                json: "{\"pa".into(),
            },
            json!({"type": "tool_call_delta", "id": "c", "json": "{\"pa"}),
        ),
        (
            StreamEvent::ToolCallEnd {
                id: "c".into(),
                name: "glob".into(),
                input: object(json!({"pattern": "*"})),
                input_error: None,
            },
            json!({"type": "tool_call_end", "id": "c", "name": "glob", "input": {"pattern": "*"}}),
        ),
        (
            StreamEvent::Usage {
                input_tokens: 3,
                output_tokens: 4,
                cache_read_tokens: 0,
                cache_write_tokens: 0,
            },
            json!({"type": "usage", "input_tokens": 3, "output_tokens": 4}),
        ),
        (
            StreamEvent::PromptProgress {
                processed: 512,
                total: 4000,
            },
            json!({"type": "prompt_progress", "processed": 512, "total": 4000}),
        ),
        (
            StreamEvent::Retrying {
                attempt: 1,
                delay_ms: 500,
                error: error.clone(),
            },
            json!({"type": "retrying", "attempt": 1, "delay_ms": 500, "error": {
                "code": "llm_rate_limited", "message": "slow down", "hint": "Wait a moment and retry.",
                "retryable": true, "details": {}}}),
        ),
        (
            StreamEvent::Done {
                stop_reason: "end_turn".into(),
            },
            json!({"type": "done", "stop_reason": "end_turn"}),
        ),
        (
            StreamEvent::Error { error },
            json!({"type": "error", "error": {
                "code": "llm_rate_limited", "message": "slow down", "hint": "Wait a moment and retry.",
                "retryable": true, "details": {}}}),
        ),
    ];
    for (event, wire) in cases {
        assert_eq!(serde_json::to_value(&event).unwrap(), wire);
        assert_eq!(serde_json::from_value::<StreamEvent>(wire).unwrap(), event);
    }
}

#[test]
fn providers_are_snake_case_names() {
    assert_eq!(
        serde_json::to_value(Provider::Anthropic).unwrap(),
        json!("anthropic")
    );
    assert_eq!(
        serde_json::to_value(Provider::OpenAi).unwrap(),
        json!("openai")
    );
    assert_eq!(
        serde_json::from_value::<Provider>(json!("openai")).unwrap(),
        Provider::OpenAi
    );
}

/// The app spawns these on a multi-threaded runtime: their futures must be `Send`.
#[test]
fn futures_are_send() {
    fn send<T: Send>(_: T) {}
    let config = corral_llm::ProviderConfig::new(Provider::OpenAi, "m");
    let request = ChatRequest::default();
    let mut events = Vec::new();
    send(corral_llm::stream(
        &config,
        &request,
        tokio_util::sync::CancellationToken::new(),
        |e| events.push(e),
    ));
    send(corral_llm::test_connection(&config));
    send(corral_llm::detect_local_servers());
}
