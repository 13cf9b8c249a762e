//! The server's own count of a request's tokens, asked of a real HTTP server
//! on loopback answering `POST /apply-template` and `POST /tokenize` in
//! llama-server's wire format.

use crate::common::{Reply, Server, KEY};
use corral_llm::{prompt_tokens, ChatRequest, Message, Provider, ProviderConfig, ToolDef};
use pretty_assertions::assert_eq;
use serde_json::json;

fn prefix() -> ChatRequest {
    ChatRequest {
        system: "You are a coding agent.".into(),
        messages: vec![Message::user("")],
        tools: vec![ToolDef {
            name: "read_file".into(),
            description: "Read a file.".into(),
            input_schema: json!({"type": "object", "properties": {"path": {"type": "string"}}}),
        }],
        max_tokens: None,
    }
}

#[tokio::test]
async fn llama_server_renders_the_request_with_its_template_and_counts_the_prompt() {
    let prompt = "<|im_start|>system\nYou are a coding agent.\n\n# Tools\n<tools>…</tools><|im_end|>\n<|im_start|>assistant\n";
    // llama-server speaks both formats: its origin is asked either way.
    for provider in [Provider::OpenAi, Provider::Anthropic] {
        let server = Server::start(vec![
            Reply::json(200, &json!({"prompt": prompt}).to_string()),
            Reply::json(
                200,
                r#"{"tokens":[151644,8948,198,2610,525,264,10822,8315,13,151645,198]}"#,
            ),
        ])
        .await;
        let counted = prompt_tokens(&server.config(provider), &prefix()).await;
        let received = server.received();
        let paths: Vec<String> = received
            .iter()
            .map(|r| format!("{} {}", r.method, r.path))
            .collect();
        assert_eq!(paths, ["POST /apply-template", "POST /tokenize"]);
        // The body a completion sends: the system turn (the empty user turn is left out) and the tools.
        let templated = received[0].json();
        assert_eq!(
            templated["messages"],
            json!([{"role": "system", "content": "You are a coding agent."}])
        );
        assert_eq!(
            templated["tools"],
            json!([{"type": "function", "function": {"name": "read_file", "description": "Read a file.", "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}}}])
        );
        assert_eq!(
            received[1].json(),
            json!({"content": prompt, "add_special": true, "parse_special": true})
        );
        let bearer = format!("Bearer {KEY}");
        assert_eq!(received[1].header("authorization"), Some(bearer.as_str()));
        assert_eq!(counted, Some(11));
    }
}

#[tokio::test]
async fn a_server_without_the_endpoints_counts_nothing() {
    let server = Server::start(vec![Reply::json(404, r#"{"error":"404 page not found"}"#)]).await;
    assert_eq!(
        prompt_tokens(&server.config(Provider::OpenAi), &prefix()).await,
        None
    );
    assert_eq!(server.received().len(), 1);
}

#[tokio::test]
async fn an_answer_not_in_the_wire_format_counts_nothing() {
    let server = Server::start(vec![
        Reply::json(200, r#"{"prompt":"x"}"#),
        Reply::json(200, r#"{"count":12}"#),
    ])
    .await;
    assert_eq!(
        prompt_tokens(&server.config(Provider::OpenAi), &prefix()).await,
        None
    );
}

#[tokio::test]
async fn hosted_apis_are_never_asked() {
    for provider in [Provider::OpenAi, Provider::Anthropic] {
        let config = ProviderConfig::new(provider, "m");
        assert_eq!(prompt_tokens(&config, &prefix()).await, None);
    }
}
