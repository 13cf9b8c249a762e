//! What the configured model can hold and do: its context window (from the
//! server where it says so, else from a table of hosted models) and, where
//! the server tells, whether its chat template can call tools.
//!
//! Servers answer in their own places:
//! - llama.cpp's `llama-server`: `GET /props` →
//!   `default_generation_settings.n_ctx` and `chat_template_caps.supports_tools`
//!   (and that it counts tokens: see [`crate::prompt_tokens`]);
//! - LM Studio: `GET /api/v0/models/{model}` → `loaded_context_length`
//!   (else `max_context_length`);
//! - Ollama through its OpenAI-compatible `/v1`: `POST /api/show {model}` →
//!   the `num_ctx` parameter when the model sets one, else Ollama's default
//!   of 4,096 tokens (never more than the model's own `*.context_length`);
//! - Ollama's native API ([`crate::Provider::Ollama`]): the window Corral
//!   sends as `num_ctx` (the settings', else 4,096), never more than the
//!   model's `*.context_length` from `/api/show`, which is also reported as
//!   the most the settings may ask for;
//! - any OpenAI-compatible list: `GET {base}/models` → the model's
//!   `meta.n_ctx` (llama.cpp), `max_model_len` (vLLM) or `context_length`
//!   (OpenRouter).
//!
//! Each probe has a short time limit and failures are simply skipped: the
//! answer is never an error, only less known.

use crate::config::{Provider, ProviderConfig};
use crate::http;
use crate::prices::{price_for, Price};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::time::Duration;
use tokio::time::timeout;

/// How long one probe may take.
pub const INFO_TIMEOUT: Duration = Duration::from_millis(1500);

/// Ollama's context length when a model sets no `num_ctx`.
pub const OLLAMA_DEFAULT_CONTEXT: u64 = 4096;

/// What is known of the configured model.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, ts_rs::TS)]
pub struct ModelInfo {
    /// Tokens the model can hold, prompt and reply together.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional, type = "number")]
    pub context_window: Option<u64>,
    /// Where `context_window` comes from: `server` (it said so),
    /// `known_model` (the table of hosted models) or `settings` (the
    /// window the user set for servers that say none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub source: Option<String>,
    /// The most tokens the model can hold whatever window it runs with,
    /// when the server says (Ollama's `<arch>.context_length`): a window
    /// asked for in the settings is capped by it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional, type = "number")]
    pub max_context_window: Option<u64>,
    /// Whether the server's chat template can call tools, when it says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub supports_tools: Option<bool>,
    /// Whether the server counts a request's tokens with the model's own
    /// template and tokenizer ([`crate::prompt_tokens`]): llama.cpp's
    /// `llama-server`, known by its `/props`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub counts_tokens: Option<bool>,
    /// Whether the model's chat template writes each tool's JSON indented,
    /// one key per line (Llama 3's Hugging Face template does): such a
    /// template costs about two tokens per line, and the loop's estimate
    /// counts them. From llama-server's own template (`/props`), else from a
    /// Llama 3 model's name on a server that runs Hugging Face templates
    /// (LM Studio, vLLM); unknown for Ollama (its own templates print the
    /// tools compact) and hosted providers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub indents_tools: Option<bool>,
    /// What a million tokens cost, when known: the built-in list price of
    /// a hosted model, nothing on this machine (see [`crate::prices`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub price: Option<Price>,
}

/// Asks the configured server what it knows of the model; falls back to
/// [`known_context_window`] for the providers' own APIs, then to the
/// window the settings give (`ProviderConfig::context_window`): a window
/// the server reports always wins over the setting.
pub async fn model_info(config: &ProviderConfig) -> ModelInfo {
    let info = ModelInfo {
        price: price_for(&[], config),
        ..ask(config).await
    };
    match (info.context_window, config.context_window) {
        (None, Some(window)) if window > 0 => ModelInfo {
            context_window: Some(window),
            source: Some("settings".into()),
            ..info
        },
        _ => info,
    }
}

/// What the server (or the table of hosted models) says of the model.
async fn ask(config: &ProviderConfig) -> ModelInfo {
    let base = config.base_url.trim_end_matches('/');
    if config.provider == Provider::Ollama && !config.provider.is_own_api(base) {
        return ollama_info(config).await;
    }
    if config.provider.is_own_api(base) {
        return from_table(&config.model);
    }
    let origin = base.strip_suffix("/v1").unwrap_or(base);
    let Ok(client) = http::client(INFO_TIMEOUT, http::is_loopback(base)) else {
        return from_table(&config.model);
    };
    let get = |url: String| {
        let client = client.clone();
        async move { fetch(client.get(url)).await }
    };
    let mut info = ModelInfo::default();
    let mut ollama = false;
    if let Some(props) = get(format!("{origin}/props")).await {
        info.counts_tokens = Some(true);
        info.supports_tools = props
            .pointer("/chat_template_caps/supports_tools")
            .and_then(Value::as_bool);
        info.indents_tools = props
            .get("chat_template")
            .and_then(Value::as_str)
            .map(|template| template.contains("tojson(indent="));
        info.context_window = props
            .pointer("/default_generation_settings/n_ctx")
            .or_else(|| props.get("n_ctx"))
            .and_then(Value::as_u64);
    }
    if info.context_window.is_none() {
        let url = format!("{origin}/api/v0/models/{}", config.model);
        if let Some(model) = get(url).await {
            info.context_window = ["loaded_context_length", "max_context_length"]
                .iter()
                .find_map(|key| model.get(*key).and_then(Value::as_u64));
        }
    }
    if info.context_window.is_none() {
        let show = client
            .post(format!("{origin}/api/show"))
            .json(&json!({"model": config.model}));
        if let Some(show) = fetch(show).await {
            info.context_window = ollama_context(&show);
            ollama = true;
        }
    }
    if info.context_window.is_none() {
        if let Some(list) = get(format!("{base}/models")).await {
            info.context_window = listed_context(&list, &config.model);
        }
    }
    if info.indents_tools.is_none() && !ollama && is_llama3(&config.model) {
        info.indents_tools = Some(true);
    }
    if info.context_window.is_some() {
        info.source = Some("server".into());
        return info;
    }
    ModelInfo {
        supports_tools: info.supports_tools,
        counts_tokens: info.counts_tokens,
        indents_tools: info.indents_tools,
        ..from_table(&config.model)
    }
}

/// Whether a model's name says Llama 3 (3, 3.1, 3.2, 3.3), whose Hugging
/// Face template indents each tool's JSON: `Meta-Llama-3.1-8B-Instruct`,
/// `meta-llama/llama-3.2-3b-instruct`, `llama3.1:8b`.
pub fn is_llama3(model: &str) -> bool {
    let name = model.to_ascii_lowercase();
    name.match_indices("llama").any(|(at, _)| {
        let rest = name[at + "llama".len()..].trim_start_matches(['-', '_', ' ', '.']);
        rest.starts_with('3') && !rest[1..].starts_with(|c: char| c.is_ascii_digit())
    })
}

/// The context windows of well-known hosted models, by id prefix.
pub fn known_context_window(model: &str) -> Option<u64> {
    const TABLE: [(&str, u64); 9] = [
        ("claude-", 200_000),
        ("gpt-4.1", 1_047_576),
        ("gpt-5", 400_000),
        ("gpt-4o", 128_000),
        ("gpt-4-turbo", 128_000),
        ("o1", 200_000),
        ("o3", 200_000),
        ("o4", 200_000),
        ("gpt-3.5-turbo", 16_385),
    ];
    let model = model.rsplit('/').next().unwrap_or(model);
    TABLE
        .iter()
        .find(|(prefix, _)| model.starts_with(prefix))
        .map(|(_, window)| *window)
}

fn from_table(model: &str) -> ModelInfo {
    match known_context_window(model) {
        Some(window) => ModelInfo {
            context_window: Some(window),
            source: Some("known_model".into()),
            ..ModelInfo::default()
        },
        None => ModelInfo::default(),
    }
}

async fn fetch(request: reqwest::RequestBuilder) -> Option<Value> {
    let answer = async {
        let response = request.send().await.ok()?;
        if !response.status().is_success() {
            return None;
        }
        response.json::<Value>().await.ok()
    };
    timeout(INFO_TIMEOUT, answer).await.ok()?
}

/// What Ollama's native API runs the model with: the window sent as
/// `num_ctx`, capped by the model's trained length (Ollama caps it so too),
/// and whether the model calls tools (`capabilities`, in newer versions).
async fn ollama_info(config: &ProviderConfig) -> ModelInfo {
    let set = config.context_window.filter(|w| *w > 0);
    let sent = set.unwrap_or(OLLAMA_DEFAULT_CONTEXT);
    let show = match http::client(INFO_TIMEOUT, http::is_loopback(config.base())) {
        Ok(client) => {
            let url = format!("{}/api/show", config.origin());
            fetch(client.post(url).json(&json!({"model": config.model}))).await
        }
        Err(_) => None,
    };
    let show = show.unwrap_or(Value::Null);
    let trained = trained_context(&show);
    let supports_tools = show
        .get("capabilities")
        .and_then(Value::as_array)
        .map(|caps| caps.iter().any(|c| c.as_str() == Some("tools")));
    ModelInfo {
        context_window: Some(trained.map_or(sent, |trained| sent.min(trained))),
        source: Some(if set.is_some() { "settings" } else { "server" }.into()),
        max_context_window: trained,
        supports_tools,
        ..ModelInfo::default()
    }
}

/// The model's trained context length from `/api/show`'s `model_info`
/// (`<arch>.context_length`).
fn trained_context(show: &Value) -> Option<u64> {
    show.get("model_info")
        .and_then(Value::as_object)?
        .iter()
        .find(|(key, _)| key.ends_with(".context_length"))
        .and_then(|(_, value)| value.as_u64())
}

/// Ollama's `/api/show`: the model's `num_ctx` parameter, else Ollama's
/// default, never more than the model's trained length.
fn ollama_context(show: &Value) -> Option<u64> {
    show.get("model_info").and_then(Value::as_object)?;
    let trained = trained_context(show);
    let set = show
        .get("parameters")
        .and_then(Value::as_str)
        .and_then(|parameters| {
            parameters.lines().find_map(|line| {
                let mut words = line.split_whitespace();
                (words.next() == Some("num_ctx"))
                    .then(|| words.next()?.parse().ok())
                    .flatten()
            })
        });
    let window = set.unwrap_or(OLLAMA_DEFAULT_CONTEXT);
    Some(trained.map_or(window, |trained| window.min(trained)))
}

/// The model's context from an OpenAI-style `/models` list, in any of the
/// fields servers use.
fn listed_context(list: &Value, model: &str) -> Option<u64> {
    let entries = list.get("data")?.as_array()?;
    let entry = entries
        .iter()
        .find(|e| e.get("id").and_then(Value::as_str) == Some(model))
        .or_else(|| (entries.len() == 1).then(|| &entries[0]))?;
    ["/meta/n_ctx", "/max_model_len", "/context_length"]
        .iter()
        .find_map(|pointer| entry.pointer(pointer).and_then(Value::as_u64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosted_models_come_from_the_table() {
        assert_eq!(known_context_window("claude-sonnet-4-5"), Some(200_000));
        assert_eq!(known_context_window("openai/gpt-4o-mini"), Some(128_000));
        assert_eq!(known_context_window("qwen3:8b"), None);
    }

    #[test]
    fn ollama_uses_num_ctx_else_its_default_capped_by_the_model() {
        let show = json!({"parameters": "stop \"<|im_end|>\"\nnum_ctx 16384", "model_info": {"qwen3.context_length": 40960}});
        assert_eq!(ollama_context(&show), Some(16_384));
        let unset = json!({"model_info": {"llama.context_length": 131072}});
        assert_eq!(ollama_context(&unset), Some(OLLAMA_DEFAULT_CONTEXT));
        let small = json!({"model_info": {"gemma.context_length": 2048}});
        assert_eq!(ollama_context(&small), Some(2048));
        assert_eq!(ollama_context(&json!({"error": "model not found"})), None);
    }

    #[test]
    fn llama_3_is_known_by_its_name() {
        for name in [
            "Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf",
            "meta-llama/llama-3.2-3b-instruct",
            "llama3.1:8b",
            "lmstudio-community/Llama-3.3-70B",
            "llama_3",
        ] {
            assert!(is_llama3(name), "{name}");
        }
        for name in [
            "llama2:7b",
            "codellama:13b",
            "qwen3:8b",
            "llama-30b",
            "tinyllama",
        ] {
            assert!(!is_llama3(name), "{name}");
        }
    }

    #[test]
    fn model_lists_say_the_context_in_their_own_fields() {
        let llama =
            json!({"data": [{"id": "m.gguf", "meta": {"n_ctx": 4096, "n_ctx_train": 32768}}]});
        assert_eq!(listed_context(&llama, "other"), Some(4096));
        let vllm = json!({"data": [{"id": "a", "max_model_len": 8192}, {"id": "b", "max_model_len": 32768}]});
        assert_eq!(listed_context(&vllm, "b"), Some(32_768));
        assert_eq!(listed_context(&vllm, "c"), None);
    }
}
