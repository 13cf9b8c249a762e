//! Which provider to talk to, where, with which model and limits.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::time::Duration;

/// The wire protocol of a provider.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ts_rs::TS)]
pub enum Provider {
    /// Anthropic Messages (`POST /v1/messages`).
    #[serde(rename = "anthropic")]
    Anthropic,
    /// OpenAI-compatible Chat Completions (`POST /chat/completions`): OpenAI,
    /// OpenRouter, Ollama, LM Studio, llama.cpp's llama-server, vLLM...
    #[serde(rename = "openai")]
    OpenAi,
    /// Ollama's native API (`POST /api/chat`, NDJSON): the one place it
    /// takes the context size (`options.num_ctx`); its OpenAI-compatible
    /// endpoint runs every model at its default size and cuts the prompt
    /// from the front.
    #[serde(rename = "ollama")]
    Ollama,
}

impl Provider {
    /// The base URL used when the settings give none.
    pub fn default_base_url(self) -> &'static str {
        match self {
            Provider::Anthropic => "https://api.anthropic.com",
            Provider::OpenAi => "https://api.openai.com/v1",
            Provider::Ollama => "http://127.0.0.1:11434",
        }
    }

    /// How messages name the provider.
    pub(crate) fn label(self) -> &'static str {
        match self {
            Provider::Anthropic => "Anthropic",
            Provider::OpenAi => "the OpenAI-compatible server",
            Provider::Ollama => "Ollama",
        }
    }

    /// Whether `url` is this provider's own API (so messages may name the
    /// provider, hosted-model facts apply and provider-only features such
    /// as prompt caching may be used), rather than another server speaking
    /// its format.
    pub fn is_own_api(self, url: &str) -> bool {
        let host = reqwest::Url::parse(url)
            .ok()
            .and_then(|u| u.host_str().map(str::to_owned))
            .unwrap_or_default();
        let own = |domain: &str| host == domain || host.ends_with(&format!(".{domain}"));
        match self {
            Provider::Anthropic => own("anthropic.com"),
            Provider::OpenAi => own("openai.com"),
            Provider::Ollama => own("ollama.com"),
        }
    }

    /// The snake_case name (as in JSON and error details).
    pub fn as_str(self) -> &'static str {
        match self {
            Provider::Anthropic => "anthropic",
            Provider::OpenAi => "openai",
            Provider::Ollama => "ollama",
        }
    }
}

/// Everything needed to reach a model. Build it with [`ProviderConfig::new`]
/// and change the fields you need.
///
/// `Debug` never prints the API key.
#[derive(Clone, PartialEq)]
pub struct ProviderConfig {
    /// The wire protocol.
    pub provider: Provider,
    /// Where the API lives; see [`ProviderConfig::endpoint`] for the rule.
    pub base_url: String,
    /// The model name, as the provider spells it.
    pub model: String,
    /// The API key; `None` sends no credentials (local servers).
    pub api_key: Option<String>,
    /// The most tokens the model may generate in one response.
    pub max_tokens: u32,
    /// The context window to assume when neither the server nor the table
    /// of hosted models gives one (the user's setting); `None` leaves it unknown.
    pub context_window: Option<u64>,
    /// Limit for opening the TCP/TLS connection.
    pub connect_timeout: Duration,
    /// Limit for waiting on the server: for the response headers after the
    /// request was sent, between two complete events of a stream (or
    /// keep-alive comments; bytes that complete nothing do not count), and
    /// for the whole of a body that is not a stream.
    pub read_timeout: Duration,
    /// How many times a failed request is sent again (on 408, 429, 5xx,
    /// connection failures and timeouts, only before anything was streamed).
    pub max_retries: u32,
    /// The first retry's delay when the server gives no `retry-after`; each
    /// further retry doubles it (capped at 30 s).
    pub retry_base_delay: Duration,
}

impl ProviderConfig {
    /// Defaults: the provider's public base URL, no key, 8192 max tokens,
    /// 10 s to connect, 300 s of silence at most (local servers can take
    /// minutes on a long prompt before the first byte), 3 retries from 1 s.
    pub fn new(provider: Provider, model: impl Into<String>) -> Self {
        ProviderConfig {
            provider,
            base_url: provider.default_base_url().to_string(),
            model: model.into(),
            api_key: None,
            max_tokens: 8192,
            context_window: None,
            connect_timeout: Duration::from_secs(10),
            read_timeout: Duration::from_secs(300),
            max_retries: 3,
            retry_base_delay: Duration::from_secs(1),
        }
    }

    /// The URL requests are sent to.
    ///
    /// - Anthropic: `base_url` + `/v1/messages`, or + `/messages` when
    ///   `base_url` already ends in `/v1` (so both `https://api.anthropic.com`
    ///   and `https://api.anthropic.com/v1` work).
    /// - OpenAI-compatible: `base_url` + `/chat/completions`; `base_url`
    ///   includes the version (`https://api.openai.com/v1`,
    ///   `http://127.0.0.1:11434/v1`), as these servers document it.
    /// - Ollama: the server's origin + `/api/chat` (a base URL given with
    ///   the OpenAI-compatible `/v1` is read as its origin).
    ///
    /// A trailing `/` on `base_url` is ignored; an empty one means the
    /// provider's default.
    pub fn endpoint(&self) -> String {
        match self.provider {
            Provider::Anthropic => {
                let base = self.base();
                if base.ends_with("/v1") {
                    format!("{base}/messages")
                } else {
                    format!("{base}/v1/messages")
                }
            }
            Provider::OpenAi => format!("{}/chat/completions", self.base()),
            Provider::Ollama => format!("{}/api/chat", self.origin()),
        }
    }

    /// `base_url` without an OpenAI-compatible `/v1` (or `/api`) at its
    /// end: where a server's own endpoints (`/props`, `/api/show`) live.
    pub(crate) fn origin(&self) -> &str {
        let base = self.base();
        base.strip_suffix("/v1")
            .or_else(|| base.strip_suffix("/api"))
            .unwrap_or(base)
    }

    /// `base_url` without trailing slashes, or the default when empty.
    pub(crate) fn base(&self) -> &str {
        let base = self.base_url.trim().trim_end_matches('/');
        if base.is_empty() {
            self.provider.default_base_url()
        } else {
            base
        }
    }

    /// Whether this is a provider's own API and no key is set: it refuses
    /// every request without one, so none is sent.
    pub(crate) fn lacks_key(&self) -> bool {
        self.key().is_none() && self.provider.is_own_api(self.base())
    }

    /// The key, when one is set and not blank.
    pub(crate) fn key(&self) -> Option<&str> {
        self.api_key
            .as_deref()
            .map(str::trim)
            .filter(|k| !k.is_empty())
    }
}

impl fmt::Debug for ProviderConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ProviderConfig")
            .field("provider", &self.provider)
            .field("base_url", &self.base_url)
            .field("model", &self.model)
            .field("api_key", &self.key().map(|_| "[redacted]"))
            .field("max_tokens", &self.max_tokens)
            .field("context_window", &self.context_window)
            .field("connect_timeout", &self.connect_timeout)
            .field("read_timeout", &self.read_timeout)
            .field("max_retries", &self.max_retries)
            .field("retry_base_delay", &self.retry_base_delay)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_follow_the_documented_rule() {
        let mut c = ProviderConfig::new(Provider::Anthropic, "m");
        assert_eq!(c.endpoint(), "https://api.anthropic.com/v1/messages");
        c.base_url = "https://proxy.example/v1/".into();
        assert_eq!(c.endpoint(), "https://proxy.example/v1/messages");
        let mut o = ProviderConfig::new(Provider::OpenAi, "m");
        assert_eq!(o.endpoint(), "https://api.openai.com/v1/chat/completions");
        o.base_url = "http://127.0.0.1:11434/v1/".into();
        assert_eq!(o.endpoint(), "http://127.0.0.1:11434/v1/chat/completions");
        o.base_url = " ".into();
        assert_eq!(o.endpoint(), "https://api.openai.com/v1/chat/completions");
        let mut l = ProviderConfig::new(Provider::Ollama, "m");
        assert_eq!(l.endpoint(), "http://127.0.0.1:11434/api/chat");
        for base in [
            "http://10.0.0.2:11434/v1/",
            "http://10.0.0.2:11434/api",
            "http://10.0.0.2:11434",
        ] {
            l.base_url = base.into();
            assert_eq!(l.endpoint(), "http://10.0.0.2:11434/api/chat", "{base}");
        }
    }

    #[test]
    fn debug_hides_the_key() {
        let mut c = ProviderConfig::new(Provider::OpenAi, "m");
        c.api_key = Some("sk-secret-123".into());
        let shown = format!("{c:?}");
        assert!(!shown.contains("sk-secret-123"), "{shown}");
        assert!(shown.contains("[redacted]"), "{shown}");
    }
}
