//! The models a server offers: `GET {base}/models`, which OpenAI, Anthropic
//! (`/v1/models`), OpenRouter, Ollama, LM Studio, llama.cpp's llama-server
//! and vLLM all answer, each with a `data` list of `{"id"}` (Anthropic adds
//! `display_name`; Ollama's native `{"models": [{"name"}]}` is read too).

use crate::config::{Provider, ProviderConfig};
use crate::error::{display_url, LlmError, WireContext};
use crate::http;
use corral_protocol::error::{Error, ErrorCode};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A model a server lists.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
pub struct ListedModel {
    /// The name to send as `model`.
    pub id: String,
    /// A name for people, when the server gives one (Anthropic).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub display_name: Option<String>,
}

/// The URL the model list is asked at: `{base}/models` for OpenAI-compatible
/// servers; Anthropic's `/v1/models` (one page of up to 1000); Ollama's
/// `/api/tags`.
pub fn models_url(config: &ProviderConfig) -> String {
    let base = config.base();
    match config.provider {
        Provider::Anthropic if base.ends_with("/v1") => format!("{base}/models?limit=1000"),
        Provider::Anthropic => format!("{base}/v1/models?limit=1000"),
        Provider::OpenAi => format!("{base}/models"),
        Provider::Ollama => format!("{}/api/tags", config.origin()),
    }
}

/// Asks the configured server which models it offers, in its order, with
/// the config's key (the caller picks it for the base URL's origin). No
/// retries. A server that has no list (404, 405, 501, or a body that is not
/// one) is `not_found` with a hint to type the model's name instead; other
/// failures are the usual `llm_*` errors.
pub async fn list_models(config: &ProviderConfig) -> Result<Vec<ListedModel>, Error> {
    let url = models_url(config);
    let shown = display_url(&url);
    let ctx = WireContext {
        provider: config.provider,
        url: &shown,
        api_key: config.key(),
    };
    let no_list = |why: String| {
        Error::new(
            ErrorCode::NotFound,
            format!("the server at `{shown}` does not list its models ({why})"),
        )
        .hint("Type the model's name instead.")
        .detail("provider", config.provider.as_str())
        .detail("url", shown.as_str())
    };
    let response = match http::send(config, &url, None).await {
        Ok(response) => response,
        Err(LlmError::Status { status, .. }) if matches!(status, 404 | 405 | 501) => {
            return Err(no_list(format!("HTTP {status}")).detail("status", status))
        }
        Err(err) => return Err(err.to_wire(&ctx)),
    };
    let text = http::read_text(response, config.read_timeout, 8 * 1024 * 1024)
        .await
        .map_err(|e| e.to_wire(&ctx))?;
    let value: Value =
        serde_json::from_str(&text).map_err(|_| no_list("its answer is not JSON".into()))?;
    listed(&value).ok_or_else(|| no_list("its answer has no model list".into()))
}

/// The models of a list in any of the shapes servers use.
pub(crate) fn listed(list: &Value) -> Option<Vec<ListedModel>> {
    let (entries, key) = match (list.get("data"), list.get("models")) {
        (Some(Value::Array(entries)), _) => (entries, "id"),
        (_, Some(Value::Array(entries))) => (entries, "name"),
        _ => return None,
    };
    Some(
        entries
            .iter()
            .filter_map(|m| {
                let id = m.get(key).and_then(Value::as_str)?.trim();
                (!id.is_empty()).then(|| ListedModel {
                    id: id.to_string(),
                    display_name: m
                        .get("display_name")
                        .and_then(Value::as_str)
                        .filter(|n| !n.trim().is_empty() && *n != id)
                        .map(str::to_owned),
                })
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn urls_per_provider() {
        let mut a = ProviderConfig::new(Provider::Anthropic, "m");
        assert_eq!(
            models_url(&a),
            "https://api.anthropic.com/v1/models?limit=1000"
        );
        a.base_url = "http://127.0.0.1:9/v1/".into();
        assert_eq!(models_url(&a), "http://127.0.0.1:9/v1/models?limit=1000");
        let mut o = ProviderConfig::new(Provider::OpenAi, "m");
        o.base_url = "http://127.0.0.1:11434/v1".into();
        assert_eq!(models_url(&o), "http://127.0.0.1:11434/v1/models");
    }

    #[test]
    fn reads_the_shapes() {
        let ollama = json!({"models": [{"name": "qwen3:8b"}, {"name": ""}]});
        assert_eq!(
            listed(&ollama),
            Some(vec![ListedModel {
                id: "qwen3:8b".into(),
                display_name: None
            }])
        );
        assert_eq!(listed(&json!({"ok": true})), None);
    }
}
