//! The provider config every host talks to the model with: the saved
//! settings (or one conversation's model), and the key saved for the base
//! URL's origin. The app's commands and `corral-cli exec` both build it
//! here.

use crate::{Settings, SettingsInput, Store};
use corral_llm::{Provider, ProviderConfig};
use corral_tools::Error;
use serde::{Deserialize, Serialize};

/// The server and model one conversation talks to instead of the settings'
/// (the model switcher). The rest (max tokens, timeouts) stays as set; the
/// key is the one saved for this base URL's origin, if any.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
pub struct LlmTarget {
    pub provider: Provider,
    pub base_url: String,
    pub model: String,
}

impl Store {
    /// The saved settings' config, with `target`'s server and model when given.
    pub fn provider_config(&self, target: Option<LlmTarget>) -> ProviderConfig {
        let mut settings = self.settings();
        if let Some(target) = target {
            settings.provider = target.provider;
            settings.base_url = target.base_url;
            settings.model = target.model;
        }
        self.provider_config_of(settings, None)
    }

    /// The config for `input`, settings as the window shows them (not
    /// saved), or without it for the saved settings. A key typed with them
    /// goes only to a base URL it may be saved for.
    pub fn provider_config_for(
        &self,
        input: Option<SettingsInput>,
    ) -> Result<ProviderConfig, Error> {
        let Some(SettingsInput { settings, api_key }) = input else {
            return Ok(self.provider_config(None));
        };
        if api_key.as_deref().is_some_and(|k| !k.trim().is_empty()) {
            crate::key_origin::check_key_base_url(settings.provider, &settings.base_url)?;
        }
        Ok(self.provider_config_of(settings, api_key.as_deref()))
    }

    /// A config for `settings`: `key` when one is given, else the key saved
    /// for the base URL's origin.
    pub fn provider_config_of(&self, settings: Settings, key: Option<&str>) -> ProviderConfig {
        let mut config = ProviderConfig::new(settings.provider, settings.model);
        if !settings.base_url.trim().is_empty() {
            config.base_url = settings.base_url;
        }
        config.max_tokens = settings.max_tokens;
        config.context_window = settings.context_window;
        config.api_key = match key.map(str::trim).filter(|k| !k.is_empty()) {
            Some(key) => Some(key.to_string()),
            None => self.api_key(settings.provider, &config.base_url),
        };
        config
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests::store;

    #[test]
    fn a_target_keeps_the_settings_limits_and_takes_the_key_of_its_own_origin() {
        let (_dir, store) = store();
        let settings = Settings {
            provider: Provider::OpenAi,
            base_url: "http://127.0.0.1:9/v1".into(),
            model: "saved".into(),
            max_tokens: 321,
            ..Settings::default()
        };
        store.save_settings(&settings).unwrap();
        store
            .set_api_key(Provider::OpenAi, "http://127.0.0.1:9/v1", "sk-saved")
            .unwrap();
        let saved = store.provider_config(None);
        assert_eq!(
            (
                saved.model.as_str(),
                saved.max_tokens,
                saved.api_key.as_deref()
            ),
            ("saved", 321, Some("sk-saved"))
        );
        let other = store.provider_config(Some(LlmTarget {
            provider: Provider::OpenAi,
            base_url: "http://127.0.0.1:10/v1".into(),
            model: "switched".into(),
        }));
        assert_eq!(
            (other.model.as_str(), other.max_tokens, other.api_key),
            ("switched", 321, None)
        );
        let given = store.provider_config_of(settings, Some(" sk-given "));
        assert_eq!(given.api_key.as_deref(), Some("sk-given"));
    }

    #[test]
    fn settings_the_window_shows_are_tried_with_the_key_typed_only_where_it_may_go() {
        let (_dir, store) = store();
        let shown = Settings {
            provider: Provider::OpenAi,
            base_url: "http://127.0.0.1:9/v1".into(),
            model: "shown".into(),
            ..Settings::default()
        };
        let input = |base_url: &str, api_key: Option<&str>| SettingsInput {
            settings: Settings {
                base_url: base_url.into(),
                ..shown.clone()
            },
            api_key: api_key.map(str::to_string),
        };
        let saved = store.provider_config_for(None).unwrap();
        assert_eq!(saved.model, Settings::default().model);
        let typed = store
            .provider_config_for(Some(input("http://127.0.0.1:9/v1", Some("sk-typed"))))
            .unwrap();
        assert_eq!(
            (typed.model.as_str(), typed.api_key.as_deref()),
            ("shown", Some("sk-typed"))
        );
        let keyless = store
            .provider_config_for(Some(input("http://127.0.0.1:9/v1", None)))
            .unwrap();
        assert_eq!(keyless.api_key, None);
        assert!(store
            .provider_config_for(Some(input("file:///tmp/v1", Some("sk-typed"))))
            .is_err());
        // Nothing was saved.
        assert_eq!(store.settings(), Settings::default());
    }
}
