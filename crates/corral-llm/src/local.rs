//! Finding OpenAI-compatible servers running on this machine, and telling
//! Ollama from the others.

use crate::config::{Provider, ProviderConfig};
use crate::http;
use futures_util::future::join_all;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};
use std::time::Duration;
use tokio::time::timeout;

/// A local server that answered, with the models it offers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
pub struct LocalServer {
    /// Which program it likely is (by its usual port).
    pub name: String,
    /// The base URL to put in the settings (OpenAI-compatible, with `/v1`).
    pub base_url: String,
    /// The model ids from its `/models` list, in its order.
    pub models: Vec<String>,
}

/// The servers probed by [`detect_local_servers`]: name and base URL, at
/// each program's usual port (llama.cpp's `llama-server` and LocalAI share
/// 8080; text-generation-webui's OpenAI API listens on 5000).
pub const LOCAL_SERVERS: [(&str, &str); 7] = [
    ("llama.cpp or LocalAI", "http://127.0.0.1:8080/v1"),
    ("Ollama", "http://127.0.0.1:11434/v1"),
    ("LM Studio", "http://127.0.0.1:1234/v1"),
    ("Jan", "http://127.0.0.1:1337/v1"),
    ("vLLM", "http://127.0.0.1:8000/v1"),
    ("text-generation-webui", "http://127.0.0.1:5000/v1"),
    ("KoboldCpp", "http://127.0.0.1:5001/v1"),
];

/// How long one probe may take.
pub const PROBE_TIMEOUT: Duration = Duration::from_millis(300);

/// Probes the usual loopback ports of the local servers in
/// [`LOCAL_SERVERS`] at once and returns those that answer `GET /v1/models`
/// with a model list, in that order. Takes at most [`PROBE_TIMEOUT`] in
/// all (the probes run in parallel); never fails (a silent port is simply
/// left out).
pub async fn detect_local_servers() -> Vec<LocalServer> {
    let probes = LOCAL_SERVERS
        .iter()
        .map(|(name, base_url)| probe_server(name, base_url, PROBE_TIMEOUT));
    join_all(probes).await.into_iter().flatten().collect()
}

/// Asks one server for `{base_url}/models`. `Some` only when it answers
/// with a success status and an OpenAI-style list (`{"data": [{"id"}]}`;
/// Ollama's native `{"models": [{"name"}]}` is read too) within `limit`.
pub async fn probe_server(name: &str, base_url: &str, limit: Duration) -> Option<LocalServer> {
    let base_url = base_url.trim_end_matches('/');
    let url = format!("{base_url}/models");
    let client = http::client(limit, http::is_loopback(&url)).ok()?;
    let probe = async {
        let response = client.get(&url).send().await.ok()?;
        if !response.status().is_success() {
            return None;
        }
        response.json::<Value>().await.ok()
    };
    let list = timeout(limit, probe).await.ok()??;
    let models = model_ids(&list)?;
    Some(LocalServer {
        name: name.to_string(),
        base_url: base_url.to_string(),
        models,
    })
}

/// The config to talk with: an OpenAI-compatible base URL that Ollama
/// serves (its `GET /api/version` answers with a version) becomes
/// [`Provider::Ollama`] at the same address, so requests go to Ollama's
/// native API, the one that takes the context size. Every other config is
/// returned as it is; hosted APIs are never asked. The answer is kept per
/// address for the life of the process; a server that refuses the
/// connection (not started yet) is asked again next time.
pub async fn with_native_api(config: &ProviderConfig) -> ProviderConfig {
    static ANSWERS: OnceLock<Mutex<HashMap<String, bool>>> = OnceLock::new();
    if config.provider != Provider::OpenAi || config.provider.is_own_api(config.base()) {
        return config.clone();
    }
    let origin = config.origin().to_string();
    let answers = ANSWERS.get_or_init(Default::default);
    let known = answers
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .get(&origin)
        .copied();
    let is_ollama = match known {
        Some(known) => known,
        None => match ollama_version(&origin).await {
            Some(is_ollama) => {
                answers
                    .lock()
                    .unwrap_or_else(|poisoned| poisoned.into_inner())
                    .insert(origin.clone(), is_ollama);
                is_ollama
            }
            None => false,
        },
    };
    if !is_ollama {
        return config.clone();
    }
    ProviderConfig {
        provider: Provider::Ollama,
        base_url: origin,
        ..config.clone()
    }
}

/// Whether the server at `origin` is Ollama: `Some(true)` when
/// `/api/version` answers `{"version": "..."}`, `Some(false)` when it
/// answers anything else or not in time (a slow hosted server is not asked
/// again at every request), `None` when nothing listens there (yet).
async fn ollama_version(origin: &str) -> Option<bool> {
    let url = format!("{origin}/api/version");
    let client = http::client(PROBE_TIMEOUT, http::is_loopback(&url)).ok()?;
    let probe = async {
        let response = match client.get(&url).send().await {
            Ok(response) => response,
            Err(err) if err.is_connect() && !err.is_timeout() => return None,
            Err(_) => return Some(false),
        };
        if !response.status().is_success() {
            return Some(false);
        }
        let answer = response.json::<Value>().await.ok();
        Some(answer.is_some_and(|a| a.get("version").is_some_and(Value::is_string)))
    };
    timeout(PROBE_TIMEOUT, probe).await.unwrap_or(Some(false))
}

fn model_ids(list: &Value) -> Option<Vec<String>> {
    let (entries, key) = match (list.get("data"), list.get("models")) {
        (Some(Value::Array(entries)), _) => (entries, "id"),
        (_, Some(Value::Array(entries))) => (entries, "name"),
        _ => return None,
    };
    Some(
        entries
            .iter()
            .filter_map(|m| m.get(key).and_then(Value::as_str).map(str::to_owned))
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_model_lists() {
        let openai = json!({"object": "list", "data": [{"id": "qwen3:8b", "object": "model"}, {"id": "llama3.2"}]});
        assert_eq!(
            model_ids(&openai),
            Some(vec!["qwen3:8b".to_string(), "llama3.2".to_string()])
        );
        let ollama = json!({"models": [{"name": "qwen3:8b"}]});
        assert_eq!(model_ids(&ollama), Some(vec!["qwen3:8b".to_string()]));
        assert_eq!(model_ids(&json!({"status": "ok"})), None);
    }
}
