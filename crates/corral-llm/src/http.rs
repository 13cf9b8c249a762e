//! Sending one request: shared clients, headers, timeouts, and turning error
//! statuses into [`LlmError::Status`].

use crate::config::{Provider, ProviderConfig};
use crate::error::{display_url, root_cause, LlmError, ProviderMessage};
use futures_util::StreamExt;
use reqwest::header::{HeaderMap, HeaderValue, AUTHORIZATION, CONTENT_TYPE};
use reqwest::{Client, Response};
use serde_json::Value;
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};
use std::time::Duration;
use tokio::time::{timeout, timeout_at, Instant};

/// Error bodies are read up to this size; the rest is not needed.
const MAX_ERROR_BODY: usize = 64 * 1024;

/// A client per (connect timeout, loopback?) so connections are pooled
/// across requests. Loopback servers are reached without a proxy.
/// Redirects are not followed: reqwest would send Anthropic's `x-api-key`
/// along to any host a redirect names (it strips only the standard
/// credential headers), and an API base URL that redirects is better fixed
/// in the settings (see [`LlmError::Redirect`]).
pub(crate) fn client(connect_timeout: Duration, loopback: bool) -> Result<Client, LlmError> {
    static CLIENTS: OnceLock<Mutex<HashMap<(Duration, bool), Client>>> = OnceLock::new();
    let clients = CLIENTS.get_or_init(Default::default);
    let mut clients = clients
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(client) = clients.get(&(connect_timeout, loopback)) {
        return Ok(client.clone());
    }
    let mut builder = Client::builder()
        .connect_timeout(connect_timeout)
        .redirect(reqwest::redirect::Policy::none())
        .user_agent(concat!("corral/", env!("CARGO_PKG_VERSION")));
    if loopback {
        builder = builder.no_proxy();
    }
    let client = builder
        .build()
        .map_err(|e| LlmError::Request(root_cause(&e)))?;
    clients.insert((connect_timeout, loopback), client.clone());
    Ok(client)
}

/// Whether the URL's host is this machine (local servers).
pub(crate) fn is_loopback(url: &str) -> bool {
    match reqwest::Url::parse(url)
        .ok()
        .and_then(|u| u.host_str().map(str::to_owned))
    {
        Some(host) => {
            host == "localhost"
                || host
                    .trim_matches(|c| c == '[' || c == ']')
                    .parse::<std::net::IpAddr>()
                    .is_ok_and(|ip| ip.is_loopback())
        }
        None => false,
    }
}

/// The provider's headers: the key (marked sensitive so it is never
/// printed), the API version, JSON.
fn headers(config: &ProviderConfig) -> Result<HeaderMap, LlmError> {
    let mut headers = HeaderMap::new();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    let secret = |value: String| {
        HeaderValue::from_str(&value)
            .map(|mut v| {
                v.set_sensitive(true);
                v
            })
            .map_err(|_| {
                LlmError::Request("the API key contains characters a header cannot carry".into())
            })
    };
    match config.provider {
        Provider::Anthropic => {
            headers.insert("anthropic-version", HeaderValue::from_static("2023-06-01"));
            if let Some(key) = config.key() {
                headers.insert("x-api-key", secret(key.to_string())?);
            }
        }
        // Ollama takes a bearer key where it sits behind a proxy or in its cloud.
        Provider::OpenAi | Provider::Ollama => {
            if let Some(key) = config.key() {
                headers.insert(AUTHORIZATION, secret(format!("Bearer {key}"))?);
            }
        }
    }
    Ok(headers)
}

/// Sends `body` to `url` (the config's endpoint, or another path of the same
/// API) and waits for the headers. An error status becomes
/// [`LlmError::Status`] with the provider's message.
pub(crate) async fn send(
    config: &ProviderConfig,
    url: &str,
    body: Option<&Value>,
) -> Result<Response, LlmError> {
    let client = client(config.connect_timeout, is_loopback(url))?;
    let request = match body {
        Some(body) => client.post(url).json(body),
        None => client.get(url),
    };
    let request = request.headers(headers(config)?);
    let response = match timeout(config.read_timeout, request.send()).await {
        Err(_) => return Err(LlmError::NoResponse(config.read_timeout)),
        Ok(Err(err)) => return Err(from_reqwest(&err)),
        Ok(Ok(response)) => response,
    };
    let status = response.status();
    if status.is_success() {
        return Ok(response);
    }
    if status.is_redirection() {
        return Err(redirect(config, url, &response));
    }
    let retry_after = retry_after(response.headers());
    let request_id = ["request-id", "x-request-id"].iter().find_map(|name| {
        response
            .headers()
            .get(*name)?
            .to_str()
            .ok()
            .map(str::to_owned)
    });
    let text = read_text(response, config.read_timeout, MAX_ERROR_BODY)
        .await
        .unwrap_or_default();
    Err(LlmError::Status {
        status: status.as_u16(),
        body: ProviderMessage::from_body(&text),
        retry_after,
        request_id,
    })
}

/// The error for a 3xx answer to a request sent to `url`: where it
/// points, and the base URL that would reach that place directly (when the
/// target ends in the same API path).
fn redirect(config: &ProviderConfig, url: &str, response: &Response) -> LlmError {
    let location = response
        .headers()
        .get(reqwest::header::LOCATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|l| reqwest::Url::parse(url).ok()?.join(l).ok())
        .map(|l| display_url(l.as_str()));
    let api_path = url.strip_prefix(config.base()).filter(|p| !p.is_empty());
    let base = match (&location, api_path) {
        (Some(location), Some(path)) => location
            .strip_suffix(path)
            .filter(|b| !b.is_empty())
            .map(str::to_owned),
        _ => None,
    };
    LlmError::Redirect {
        status: response.status().as_u16(),
        location,
        base,
    }
}

/// Reads a (non-streamed) body as text, up to `limit` bytes, within the
/// read timeout as a whole (a body dripping in byte by byte ends too).
pub(crate) async fn read_text(
    response: Response,
    idle: Duration,
    limit: usize,
) -> Result<String, LlmError> {
    let deadline = Instant::now() + idle;
    let mut body = response.bytes_stream();
    let mut bytes = Vec::new();
    while bytes.len() < limit {
        match timeout_at(deadline, body.next()).await {
            Err(_) => {
                return Err(LlmError::Stalled {
                    waited: idle,
                    partial: !bytes.is_empty(),
                })
            }
            Ok(None) => break,
            Ok(Some(Err(err))) => return Err(LlmError::Dropped(root_cause(&err))),
            Ok(Some(Ok(piece))) => bytes.extend_from_slice(&piece),
        }
    }
    bytes.truncate(limit);
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// Classifies a failure of `send` (before any response).
pub(crate) fn from_reqwest(err: &reqwest::Error) -> LlmError {
    if err.is_builder() {
        LlmError::Request(root_cause(err))
    } else if err.is_connect() {
        LlmError::Connect(root_cause(err))
    } else if err.is_timeout() {
        LlmError::Connect("timed out".into())
    } else {
        LlmError::Dropped(root_cause(err))
    }
}

/// `retry-after-ms` (OpenAI, Azure) or `retry-after` in seconds. HTTP dates
/// are not honoured; the backoff applies then.
fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let number = |name: &str| headers.get(name)?.to_str().ok()?.trim().parse::<f64>().ok();
    let secs = number("retry-after-ms")
        .map(|ms| ms / 1000.0)
        .or_else(|| number("retry-after"))?;
    (secs.is_finite() && secs >= 0.0).then(|| Duration::from_secs_f64(secs.min(3600.0)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_hosts() {
        assert!(is_loopback("http://127.0.0.1:11434/v1"));
        assert!(is_loopback("http://localhost:1234/v1"));
        assert!(is_loopback("http://[::1]:8080/v1"));
        assert!(!is_loopback("https://api.openai.com/v1"));
        assert!(!is_loopback("not a url"));
    }

    #[test]
    fn retry_after_headers() {
        let mut h = HeaderMap::new();
        assert_eq!(retry_after(&h), None);
        h.insert("retry-after", HeaderValue::from_static("2"));
        assert_eq!(retry_after(&h), Some(Duration::from_secs(2)));
        h.insert("retry-after-ms", HeaderValue::from_static("1500"));
        assert_eq!(retry_after(&h), Some(Duration::from_millis(1500)));
        let mut d = HeaderMap::new();
        d.insert(
            "retry-after",
            HeaderValue::from_static("Wed, 21 Oct 2015 07:28:00 GMT"),
        );
        assert_eq!(retry_after(&d), None);
    }
}
