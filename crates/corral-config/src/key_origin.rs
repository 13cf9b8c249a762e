//! Where an API key may be sent: the origin (scheme, host, port) of the
//! base URL it was saved with, and the name it is stored under.

use corral_llm::{Provider, ProviderConfig};
use corral_tools::Error;

/// Where a key for `provider` at `base_url` may be sent: the origin
/// (`scheme://host[:port]`, default port left out) of the endpoint the
/// requests go to. `None` for anything but an http(s) URL.
pub fn key_origin(provider: Provider, base_url: &str) -> Option<String> {
    let mut config = ProviderConfig::new(provider, "");
    config.base_url = base_url.to_string();
    let url = url::Url::parse(&config.endpoint()).ok()?;
    if !matches!(url.scheme(), "http" | "https") {
        return None;
    }
    let origin = url.origin();
    origin.is_tuple().then(|| origin.ascii_serialization())
}

/// Checks that a key can be saved for `base_url` (see [`key_origin`]).
pub fn check_key_base_url(provider: Provider, base_url: &str) -> Result<(), Error> {
    key_origin(provider, base_url)
        .map(|_| ())
        .ok_or_else(|| no_origin(base_url))
}

pub(crate) fn no_origin(base_url: &str) -> Error {
    Error::invalid_input(format!(
        "`{base_url}` is not an http or https URL, so there is nowhere to send a key"
    ))
    .hint("Set the base URL of the provider's API, then enter the key.")
    .detail("base_url", base_url)
}

/// The provider's own origin (`https://api.anthropic.com`, `https://api.openai.com`).
pub(crate) fn default_origin(provider: Provider) -> Option<String> {
    key_origin(provider, provider.default_base_url())
}

/// The name a key is stored under, in the keychain and in the key file:
/// the provider's name for its own origin (so keys saved before keys had
/// origins stay where they were, bound to it), else `provider origin`.
pub(crate) fn key_name(provider: Provider, origin: &str) -> String {
    if Some(origin) == default_origin(provider).as_deref() {
        provider.as_str().to_string()
    } else {
        format!("{} {origin}", provider.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOCAL: &str = "http://127.0.0.1:11434/v1";

    #[test]
    fn key_origins() {
        for (provider, base, origin) in [
            (Provider::Anthropic, "", Some("https://api.anthropic.com")),
            (Provider::OpenAi, " ", Some("https://api.openai.com")),
            (Provider::OpenAi, LOCAL, Some("http://127.0.0.1:11434")),
            (
                Provider::OpenAi,
                "http://[::1]:8080/v1",
                Some("http://[::1]:8080"),
            ),
            (
                Provider::OpenAi,
                "https://user:pw@host.example:443/v1",
                Some("https://host.example"),
            ),
            (Provider::OpenAi, "file:///etc", None),
            (Provider::OpenAi, "localhost:1234", None),
        ] {
            assert_eq!(key_origin(provider, base).as_deref(), origin, "{base}");
        }
    }
}
