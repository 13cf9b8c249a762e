//! Finding OpenAI-compatible servers running on this machine.

use crate::http;
use futures_util::future::join_all;
use serde::{Deserialize, Serialize};
use serde_json::Value;
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
