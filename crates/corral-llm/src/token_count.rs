//! The server's own count of a request's tokens, where it can give one.
//!
//! llama.cpp's `llama-server` renders a chat request with the model's chat
//! template (`POST /apply-template`, the same body a completion sends:
//! messages and tools) and counts the prompt with the model's tokenizer
//! (`POST /tokenize`). The agent loop asks once per model for its fixed
//! prefix and corrects its own estimate with the answer, before the first
//! request is sized. Any other server (a 404), an error or a timeout is
//! `None`: the estimate then stands as it is.

use crate::config::{Provider, ProviderConfig};
use crate::types::ChatRequest;
use crate::{http, openai};
use serde_json::{json, Value};
use std::time::Duration;
use tokio::time::timeout;

/// How long each of the two questions may take (a CPU server renders and
/// counts a few thousand tokens in well under a second).
pub const COUNT_TIMEOUT: Duration = Duration::from_secs(3);

/// The tokens `request` makes as the server's template and tokenizer see
/// it, or `None` when the server cannot say (only llama-server can).
/// Hosted APIs are never asked.
pub async fn prompt_tokens(config: &ProviderConfig, request: &ChatRequest) -> Option<u64> {
    let base = config.base();
    if config.provider.is_own_api(base) || config.provider == Provider::Ollama {
        return None;
    }
    let origin = base.strip_suffix("/v1").unwrap_or(base);
    let client = http::client(COUNT_TIMEOUT, http::is_loopback(base)).ok()?;
    let post = |path: &str, body: Value| {
        let mut builder = client.post(format!("{origin}{path}")).json(&body);
        // llama-server started with `--api-key` wants it here too.
        if let Some(key) = config.key() {
            builder = builder.bearer_auth(key);
        }
        ask(builder)
    };
    // The body a completion sends, so the template sees what it will render.
    let body = openai::body(config, request, 1, false);
    let templated = post("/apply-template", body).await?;
    let prompt = templated.get("prompt")?.as_str()?;
    // As the server tokenizes a completion's prompt: special tokens parsed, BOS added.
    let counted = post(
        "/tokenize",
        json!({"content": prompt, "add_special": true, "parse_special": true}),
    )
    .await?;
    Some(counted.get("tokens")?.as_array()?.len() as u64)
}

async fn ask(request: reqwest::RequestBuilder) -> Option<Value> {
    let answer = async {
        let response = request.send().await.ok()?;
        if !response.status().is_success() {
            return None;
        }
        response.json::<Value>().await.ok()
    };
    timeout(COUNT_TIMEOUT, answer).await.ok()?
}
