//! The model list, asked of a real HTTP server on loopback answering in
//! OpenAI's and Anthropic's formats, and of one that has no list.

use crate::common::{Reply, Server, KEY};
use corral_llm::{list_models, ListedModel, Provider};
use pretty_assertions::assert_eq;

fn ids(models: &[ListedModel]) -> Vec<&str> {
    models.iter().map(|m| m.id.as_str()).collect()
}

#[tokio::test]
async fn openai_format_list_with_the_bearer_key() {
    let body = r#"{"object":"list","data":[{"id":"gpt-4.1","object":"model","created":1744316542,"owned_by":"system"},{"id":"qwen3:8b","object":"model","created":1,"owned_by":"library"}]}"#;
    let server = Server::start(vec![Reply::json(200, body)]).await;
    let models = list_models(&server.config(Provider::OpenAi)).await.unwrap();
    assert_eq!(ids(&models), ["gpt-4.1", "qwen3:8b"]);
    assert_eq!(models[0].display_name, None);
    let got = &server.received()[0];
    assert_eq!(
        (got.method.as_str(), got.path.as_str()),
        ("GET", "/v1/models")
    );
    assert_eq!(
        got.header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
    assert_eq!(got.header("x-api-key"), None);
}

#[tokio::test]
async fn anthropic_format_list_with_display_names_and_its_headers() {
    let body = r#"{"data":[{"type":"model","id":"claude-sonnet-4-5-20250929","display_name":"Claude Sonnet 4.5","created_at":"2025-09-29T00:00:00Z"},{"type":"model","id":"claude-haiku-4-5","display_name":"Claude Haiku 4.5","created_at":"2025-10-01T00:00:00Z"}],"has_more":false,"first_id":"claude-sonnet-4-5-20250929","last_id":"claude-haiku-4-5"}"#;
    let server = Server::start(vec![Reply::json(200, body)]).await;
    let models = list_models(&server.config(Provider::Anthropic))
        .await
        .unwrap();
    assert_eq!(
        models,
        [
            ListedModel {
                id: "claude-sonnet-4-5-20250929".into(),
                display_name: Some("Claude Sonnet 4.5".into())
            },
            ListedModel {
                id: "claude-haiku-4-5".into(),
                display_name: Some("Claude Haiku 4.5".into())
            },
        ]
    );
    let got = &server.received()[0];
    assert_eq!(
        (got.method.as_str(), got.path.as_str()),
        ("GET", "/v1/models?limit=1000")
    );
    assert_eq!(got.header("x-api-key"), Some(KEY));
    assert_eq!(got.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(got.header("authorization"), None);
}

#[tokio::test]
async fn a_server_without_a_list_says_so_and_suggests_typing_the_name() {
    for reply in [
        Reply::json(404, r#"{"error":{"message":"Not found"}}"#),
        Reply::json(200, r#"{"status":"ok"}"#),
    ] {
        let server = Server::start(vec![reply]).await;
        let err = list_models(&server.config(Provider::OpenAi))
            .await
            .unwrap_err();
        assert_eq!(err.code.as_str(), "not_found", "{err:?}");
        assert!(
            err.message.contains("does not list its models"),
            "{}",
            err.message
        );
        assert!(err.hint.contains("Type the model's name"), "{err:?}");
    }
}

#[tokio::test]
async fn a_rejected_key_is_llm_auth_and_never_shown() {
    let server = Server::start(vec![Reply::json(
        401,
        &format!(r#"{{"type":"error","error":{{"type":"authentication_error","message":"invalid x-api-key {KEY}"}}}}"#),
    )])
    .await;
    let err = list_models(&server.config(Provider::Anthropic))
        .await
        .unwrap_err();
    assert_eq!(err.code.as_str(), "llm_auth");
    assert!(!format!("{err:?}").contains(KEY), "{err:?}");
}
