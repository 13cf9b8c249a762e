//! Where the store keeps API keys (the OS keychain, else a 0600 file) and
//! which one a request may carry: the key saved for its origin.

use super::{read_json, write_json, Store, KEYCHAIN_SERVICE};
use crate::key_origin::{default_origin, key_name, key_origin, no_origin};
use corral_llm::Provider;
use corral_tools::Error;
use serde_json::Value;
use std::path::PathBuf;

impl Store {
    fn keychain_entry(&self, name: &str) -> Option<keyring::Entry> {
        if !self.keychain {
            return None;
        }
        keyring::Entry::new(KEYCHAIN_SERVICE, name).ok()
    }

    /// The key for requests of `provider` to `base_url`: the one saved for
    /// that origin (OS keychain, else the 0600 key file); for the provider's
    /// own origin only, else the usual environment variable. `None` for any
    /// other origin without a key of its own (local servers need none).
    pub fn api_key(&self, provider: Provider, base_url: &str) -> Option<String> {
        let origin = key_origin(provider, base_url)?;
        let name = key_name(provider, &origin);
        let from_keychain = self
            .keychain_entry(&name)
            .and_then(|entry| entry.get_password().ok())
            .filter(|k| !k.is_empty());
        let from_file = || {
            let stored: Option<Value> = read_json(&self.key_file());
            stored
                .as_ref()
                .and_then(|keys| keys.get(&name))
                .and_then(Value::as_str)
                .filter(|k| !k.is_empty())
                .map(str::to_string)
        };
        let from_env = || {
            if Some(origin.as_str()) != default_origin(provider).as_deref() {
                return None;
            }
            let var = match provider {
                Provider::Anthropic => "ANTHROPIC_API_KEY",
                Provider::OpenAi => "OPENAI_API_KEY",
                Provider::Ollama => "OLLAMA_API_KEY",
            };
            std::env::var(var).ok().filter(|k| !k.is_empty())
        };
        from_keychain.or_else(from_file).or_else(from_env)
    }

    /// Stores the key for requests of `provider` to `base_url`'s origin in
    /// the OS keychain, or where none answers in a 0600 file; `""` removes
    /// it from both. Keys of other origins are kept.
    pub fn set_api_key(&self, provider: Provider, base_url: &str, key: &str) -> Result<(), Error> {
        let origin = match key_origin(provider, base_url) {
            Some(origin) => origin,
            None if key.is_empty() => return Ok(()),
            None => return Err(no_origin(base_url)),
        };
        let name = key_name(provider, &origin);
        let in_keychain = match self.keychain_entry(&name) {
            Some(entry) if key.is_empty() => {
                let _ = entry.delete_credential();
                false
            }
            Some(entry) => entry.set_password(key).is_ok(),
            None => false,
        };
        let mut keys: serde_json::Map<String, Value> =
            read_json(&self.key_file()).unwrap_or_default();
        if key.is_empty() || in_keychain {
            keys.remove(&name);
        } else {
            keys.insert(name, Value::String(key.to_string()));
        }
        write_json(&self.key_file(), &keys, 0o600)
    }

    fn key_file(&self) -> PathBuf {
        self.config.join("api-keys.json")
    }

    /// Once per config folder: a key saved before keys had origins (under
    /// the bare provider name) was sent to whatever base URL was set, so it
    /// is bound to that base URL's origin, not to the provider's own server
    /// (it may be a proxy's or a gateway's key). Later bare keys are the
    /// provider's own.
    pub fn bind_legacy_keys(&self) -> Result<(), Error> {
        let marker = self.config.join(".keys-bound-to-origins");
        if marker.exists() {
            return Ok(());
        }
        if self.config.join("settings.json").exists() {
            let settings = self.settings();
            let provider = settings.provider;
            let origin = key_origin(provider, &settings.base_url);
            let default = provider.default_base_url();
            if origin.is_some() && origin != key_origin(provider, default) {
                let bare = self.api_key(provider, default);
                let from_env = std::env::var(match provider {
                    Provider::Anthropic => "ANTHROPIC_API_KEY",
                    Provider::OpenAi => "OPENAI_API_KEY",
                    Provider::Ollama => "OLLAMA_API_KEY",
                })
                .ok();
                let own = self.api_key(provider, &settings.base_url);
                if let Some(key) = bare.filter(|k| Some(k) != from_env.as_ref()) {
                    if own.is_none() {
                        self.set_api_key(provider, &settings.base_url, &key)?;
                    }
                    self.set_api_key(provider, default, "")?;
                }
            }
        }
        write_json(&marker, &Value::Null, 0o644)
    }
}

#[cfg(test)]
mod tests {
    // Test fixtures in temporary folders, not a project's files.
    #![allow(clippy::disallowed_methods)]
    use super::super::tests::store;
    use super::super::Settings;
    use super::*;
    use corral_tools::ErrorCode;
    use std::os::unix::fs::PermissionsExt;

    const OPENAI: &str = "https://api.openai.com/v1";
    const LOCAL: &str = "http://127.0.0.1:11434/v1";

    #[test]
    fn api_key_file_is_0600_and_clearable() {
        let (dir, store) = store();
        store
            .set_api_key(Provider::OpenAi, OPENAI, "sk-test")
            .unwrap();
        assert_eq!(
            store.api_key(Provider::OpenAi, OPENAI).as_deref(),
            Some("sk-test")
        );
        let mode = std::fs::metadata(dir.path().join("config/api-keys.json"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        store.set_api_key(Provider::OpenAi, OPENAI, "").unwrap();
        assert_eq!(
            store.api_key(Provider::OpenAi, OPENAI),
            std::env::var("OPENAI_API_KEY").ok()
        );
    }

    #[test]
    fn a_key_goes_only_to_the_origin_it_was_saved_for() {
        let (_dir, store) = store();
        store
            .set_api_key(Provider::OpenAi, OPENAI, "sk-openai")
            .unwrap();
        // The same provider pointed at a local server gets no key...
        for other in [
            LOCAL,
            "http://api.openai.com/v1",
            "https://api.openai.com:8443/v1",
            "https://api.openai.com.evil.example/v1",
            "https://openrouter.ai/api/v1",
        ] {
            assert_eq!(store.api_key(Provider::OpenAi, other), None, "{other}");
        }
        // ...and nor does the other provider at the same place.
        assert_eq!(store.api_key(Provider::Anthropic, OPENAI), None);
        // Any path, a trailing slash, an empty base (the default) or an
        // explicit default port are the same origin.
        for same in [
            "https://api.openai.com/v1/",
            "https://API.openai.com:443/other",
            "",
        ] {
            assert_eq!(
                store.api_key(Provider::OpenAi, same).as_deref(),
                Some("sk-openai"),
                "{same:?}"
            );
        }

        // A key saved for the local server is its own, and clearing it
        // leaves the other one.
        store
            .set_api_key(Provider::OpenAi, LOCAL, "local-key")
            .unwrap();
        assert_eq!(
            store
                .api_key(Provider::OpenAi, "http://127.0.0.1:11434/v1/")
                .as_deref(),
            Some("local-key")
        );
        assert_eq!(
            store.api_key(Provider::OpenAi, "http://127.0.0.1:1234/v1"),
            None
        );
        store.set_api_key(Provider::OpenAi, LOCAL, "").unwrap();
        assert_eq!(store.api_key(Provider::OpenAi, LOCAL), None);
        assert_eq!(
            store.api_key(Provider::OpenAi, OPENAI).as_deref(),
            Some("sk-openai")
        );
    }

    #[test]
    fn a_key_saved_without_an_origin_is_the_providers_own() {
        let (dir, store) = store();
        std::fs::create_dir_all(dir.path().join("config")).unwrap();
        std::fs::write(
            dir.path().join("config/api-keys.json"),
            r#"{"anthropic": "sk-ant-old", "openai": "sk-old"}"#,
        )
        .unwrap();
        assert_eq!(
            store
                .api_key(Provider::Anthropic, "https://api.anthropic.com")
                .as_deref(),
            Some("sk-ant-old")
        );
        assert_eq!(
            store.api_key(Provider::OpenAi, OPENAI).as_deref(),
            Some("sk-old")
        );
        assert_eq!(store.api_key(Provider::OpenAi, LOCAL), None);
        assert_eq!(
            store.api_key(Provider::Anthropic, "http://127.0.0.1:8080"),
            None
        );
    }

    #[test]
    fn a_key_needs_an_http_base_url() {
        let (_dir, store) = store();
        let err = store
            .set_api_key(Provider::OpenAi, "file:///tmp/x", "sk-x")
            .unwrap_err();
        assert_eq!(err.code, ErrorCode::InvalidInput);
        assert_eq!(store.api_key(Provider::OpenAi, "file:///tmp/x"), None);
        store
            .set_api_key(Provider::OpenAi, "not a url", "")
            .unwrap();
    }

    #[test]
    fn a_key_saved_before_origins_is_bound_to_the_base_url_it_was_used_with() {
        let (dir, store) = store();
        let proxy = "https://gateway.example/v1";
        store
            .save_settings(&Settings {
                provider: Provider::OpenAi,
                base_url: proxy.into(),
                ..Settings::default()
            })
            .unwrap();
        // The old store kept one key per provider, under its bare name.
        std::fs::write(
            dir.path().join("config/api-keys.json"),
            r#"{"openai": "gateway-key"}"#,
        )
        .unwrap();
        store.bind_legacy_keys().unwrap();
        assert_eq!(
            store.api_key(Provider::OpenAi, proxy).as_deref(),
            Some("gateway-key")
        );
        let default = Provider::OpenAi.default_base_url();
        if std::env::var_os("OPENAI_API_KEY").is_none() {
            assert_eq!(store.api_key(Provider::OpenAi, default), None);
        }
        // Once only: a key saved later for the provider's own server stays.
        store
            .set_api_key(Provider::OpenAi, default, "openai-key")
            .unwrap();
        store.bind_legacy_keys().unwrap();
        assert_eq!(
            store.api_key(Provider::OpenAi, default).as_deref(),
            Some("openai-key")
        );
        assert_eq!(
            store.api_key(Provider::OpenAi, proxy).as_deref(),
            Some("gateway-key")
        );
    }
}
