//! The model's context window and tool support, asked of real HTTP servers
//! on loopback answering as llama.cpp, LM Studio and Ollama do.

use crate::common::{Reply, Server};
use corral_llm::{model_info, ModelInfo, Provider};
use pretty_assertions::assert_eq;

fn paths(server: &Server) -> Vec<String> {
    server
        .received()
        .into_iter()
        .map(|r| format!("{} {}", r.method, r.path))
        .collect()
}

#[tokio::test]
async fn llama_server_says_its_context_and_whether_its_template_calls_tools() {
    // llama-server started with `-c 4096` and a template without tool calls.
    let props = r#"{"default_generation_settings":{"n_ctx":4096,"params":{"n_predict":-1}},"total_slots":1,"model_path":"m.gguf","chat_template":"...","chat_template_caps":{"supports_tools":false,"supports_tool_calls":false},"build_info":"b6000"}"#;
    for provider in [Provider::OpenAi, Provider::Anthropic] {
        let server = Server::start(vec![Reply::json(200, props)]).await;
        let info = model_info(&server.config(provider)).await;
        assert_eq!(
            info,
            ModelInfo {
                context_window: Some(4096),
                source: Some("server".into()),
                supports_tools: Some(false),
                counts_tokens: Some(true),
                indents_tools: Some(false),
                price: Some(corral_llm::Price::FREE),
                max_context_window: None,
            }
        );
        assert_eq!(paths(&server), ["GET /props"]);
    }
}

#[tokio::test]
async fn llama_server_with_llama_3s_template_says_it_indents_the_tools() {
    // The part of Llama-3.1-8B-Instruct's template that prints the tools.
    let template = r#"{%- for t in tools %}\n        {{- t | tojson(indent=4) }}\n        {{- \"\\n\\n\" }}\n    {%- endfor %}"#;
    let props = format!(
        r#"{{"default_generation_settings":{{"n_ctx":4096}},"chat_template":"{template}","chat_template_caps":{{"supports_tools":true}}}}"#
    );
    let server = Server::start(vec![Reply::json(200, &props)]).await;
    let info = model_info(&server.config(Provider::OpenAi)).await;
    assert_eq!(info.indents_tools, Some(true));
    assert_eq!(info.counts_tokens, Some(true));
}

#[tokio::test]
async fn a_llama_3_model_on_lm_studio_indents_its_tools_but_not_on_ollama() {
    let model = r#"{"id":"meta-llama-3.1-8b-instruct","type":"llm","arch":"llama","loaded_context_length":4096}"#;
    let server = Server::start(vec![Reply::json(404, "{}"), Reply::json(200, model)]).await;
    let mut config = server.config(Provider::OpenAi);
    config.model = "meta-llama-3.1-8b-instruct".into();
    let info = model_info(&config).await;
    assert_eq!(
        (info.context_window, info.indents_tools),
        (Some(4096), Some(true))
    );

    // Ollama's own templates print the tools compact, whatever the model.
    let show = r#"{"model_info":{"general.architecture":"llama","llama.context_length":131072}}"#;
    let server = Server::start(vec![
        Reply::json(404, "404 page not found"),
        Reply::json(404, "404 page not found"),
        Reply::json(200, show),
    ])
    .await;
    let mut config = server.config(Provider::OpenAi);
    config.model = "llama3.1:8b".into();
    let info = model_info(&config).await;
    assert_eq!(
        (info.context_window, info.indents_tools),
        (Some(4096), None)
    );
}

#[tokio::test]
async fn lm_studio_says_the_loaded_context() {
    let model = r#"{"id":"test-model","object":"model","type":"llm","publisher":"qwen","arch":"qwen3","state":"loaded","max_context_length":32768,"loaded_context_length":8192}"#;
    let server = Server::start(vec![Reply::json(404, "{}"), Reply::json(200, model)]).await;
    let info = model_info(&server.config(Provider::OpenAi)).await;
    assert_eq!(info.context_window, Some(8192));
    assert_eq!(
        paths(&server),
        ["GET /props", "GET /api/v0/models/test-model"]
    );
}

#[tokio::test]
async fn ollama_says_num_ctx_through_api_show() {
    let show = r#"{"parameters":"num_ctx 8192\nstop \"<|im_end|>\"","model_info":{"general.architecture":"qwen3","qwen3.context_length":40960}}"#;
    let server = Server::start(vec![
        Reply::json(404, "404 page not found"),
        Reply::json(404, "404 page not found"),
        Reply::json(200, show),
    ])
    .await;
    let info = model_info(&server.config(Provider::OpenAi)).await;
    assert_eq!(info.context_window, Some(8192));
    assert_eq!(
        paths(&server),
        [
            "GET /props",
            "GET /api/v0/models/test-model",
            "POST /api/show"
        ]
    );
    assert_eq!(server.received()[2].json()["model"], "test-model");
}

#[tokio::test]
async fn a_server_that_says_nothing_leaves_the_window_unknown() {
    let server = Server::start(vec![
        Reply::json(404, "{}"),
        Reply::json(404, "{}"),
        Reply::json(404, "{}"),
        Reply::json(
            200,
            r#"{"object":"list","data":[{"id":"test-model","object":"model"}]}"#,
        ),
    ])
    .await;
    let info = model_info(&server.config(Provider::OpenAi)).await;
    // Only its price is known: a server on this machine costs nothing.
    assert_eq!(
        info,
        ModelInfo {
            price: Some(corral_llm::Price::FREE),
            ..ModelInfo::default()
        }
    );
    assert_eq!(server.received().len(), 4);
}

fn silent_server_replies() -> Vec<Reply> {
    vec![
        Reply::json(404, "{}"),
        Reply::json(404, "{}"),
        Reply::json(404, "{}"),
        Reply::json(404, "{}"),
    ]
}

#[tokio::test]
async fn the_window_set_for_silent_servers_is_used_when_the_server_says_none() {
    let server = Server::start(silent_server_replies()).await;
    let mut config = server.config(Provider::OpenAi);
    config.context_window = Some(16_384);
    let info = model_info(&config).await;
    assert_eq!(
        info,
        ModelInfo {
            context_window: Some(16_384),
            source: Some("settings".into()),
            price: Some(corral_llm::Price::FREE),
            ..ModelInfo::default()
        }
    );
}

#[tokio::test]
async fn a_window_the_server_reports_wins_over_the_setting() {
    let props = r#"{"default_generation_settings":{"n_ctx":4096}}"#;
    let server = Server::start(vec![Reply::json(200, props)]).await;
    let mut config = server.config(Provider::OpenAi);
    config.context_window = Some(65_536);
    let info = model_info(&config).await;
    assert_eq!(info.context_window, Some(4096));
    assert_eq!(info.source.as_deref(), Some("server"));
}
