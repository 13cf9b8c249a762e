//! What the app keeps on disk, in its own folders (never in the project):
//! settings, the API keys (the OS keychain, else a 0600 file), recent
//! projects and one conversation per project. Every write is atomic (temp file + rename).
//!
//! A key is bound to the origin (scheme, host, port) of the base URL it was
//! saved with and is only sent there: pointing the OpenAI provider at a
//! local server does not hand that server the OpenAI key.

use crate::key_origin::{default_origin, key_name, key_origin, no_origin};
use corral_llm::Provider;
use corral_tools::policy::Mode;
use corral_tools::{Error, ErrorCode};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Settings the user chose (the API key is kept apart).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Settings {
    pub provider: Provider,
    pub base_url: String,
    pub model: String,
    pub max_tokens: u32,
    pub mode: Mode,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            provider: Provider::Anthropic,
            base_url: "https://api.anthropic.com".to_string(),
            model: "claude-sonnet-4-5".to_string(),
            max_tokens: 8192,
            mode: Mode::Ask,
        }
    }
}

/// Settings as the webview sees them: never the key, only whether one is set.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SettingsView {
    #[serde(flatten)]
    pub settings: Settings,
    pub has_api_key: bool,
}

/// Settings as the webview sends them: the key is write-only.
#[derive(Clone, Deserialize)]
pub struct SettingsInput {
    #[serde(flatten)]
    pub settings: Settings,
    /// A new key for the base URL's origin; `""` clears it; absent keeps it.
    #[serde(default)]
    pub api_key: Option<String>,
}

/// Never prints the key.
impl std::fmt::Debug for SettingsInput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SettingsInput")
            .field("settings", &self.settings)
            .field("api_key", &self.api_key.as_ref().map(|_| "[redacted]"))
            .finish()
    }
}

/// A project opened before.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProjectInfo {
    pub root: String,
    pub name: String,
}

/// The app's folders, and whether to try the OS keychain for API keys.
#[derive(Debug, Clone)]
pub struct Store {
    config: PathBuf,
    data: PathBuf,
    keychain: bool,
}

/// The keychain service name (the app's identifier).
const KEYCHAIN_SERVICE: &str = "dev.corral.desktop";

const MAX_RECENT: usize = 10;

impl Store {
    /// A store that keeps API keys in the OS keychain where one answers.
    pub fn new(config: PathBuf, data: PathBuf) -> Store {
        Store {
            config,
            data,
            keychain: true,
        }
    }

    /// A store that never touches the OS keychain (tests, headless runs).
    pub fn without_keychain(config: PathBuf, data: PathBuf) -> Store {
        Store {
            config,
            data,
            keychain: false,
        }
    }

    fn keychain_entry(&self, name: &str) -> Option<keyring::Entry> {
        if !self.keychain {
            return None;
        }
        keyring::Entry::new(KEYCHAIN_SERVICE, name).ok()
    }

    pub fn settings(&self) -> Settings {
        read_json(&self.config.join("settings.json")).unwrap_or_default()
    }

    pub fn save_settings(&self, settings: &Settings) -> Result<(), Error> {
        write_json(&self.config.join("settings.json"), settings, 0o644)
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

    pub fn recent(&self) -> Vec<ProjectInfo> {
        read_json(&self.config.join("recent.json")).unwrap_or_default()
    }

    pub fn push_recent(&self, project: &ProjectInfo) -> Result<(), Error> {
        let mut recent = self.recent();
        recent.retain(|p| p.root != project.root);
        recent.insert(0, project.clone());
        recent.truncate(MAX_RECENT);
        write_json(&self.config.join("recent.json"), &recent, 0o644)
    }

    /// The project's saved conversation. A file that cannot be read back
    /// (cut short, hand-edited) is moved aside as `NAME.corrupt-SECS.json`
    /// rather than overwritten by the next save: nothing is lost.
    pub fn conversation(&self, root: &Path) -> Option<Value> {
        let file = self.conversation_file(root);
        let text = std::fs::read(&file).ok()?;
        match serde_json::from_slice(&text) {
            Ok(value) => Some(value),
            Err(_) => {
                let secs = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map(|d| d.as_secs())
                    .unwrap_or(0);
                let _ = std::fs::rename(&file, file.with_extension(format!("corrupt-{secs}.json")));
                None
            }
        }
    }

    pub fn save_conversation(&self, root: &Path, conversation: &Value) -> Result<(), Error> {
        write_json(&self.conversation_file(root), conversation, 0o600)
    }

    fn conversation_file(&self, root: &Path) -> PathBuf {
        let name = root
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let safe: String = name
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                    c
                } else {
                    '_'
                }
            })
            .take(40)
            .collect();
        self.data.join("conversations").join(format!(
            "{safe}-{:016x}.json",
            fnv1a(root.as_os_str().as_encoded_bytes())
        ))
    }
}

/// A stable hash for file names (std's hasher may change between releases).
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, b| {
        (hash ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    })
}

fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Option<T> {
    let text = std::fs::read_to_string(path).ok()?;
    serde_json::from_str(&text).ok()
}

fn write_json<T: Serialize>(path: &Path, value: &T, mode: u32) -> Result<(), Error> {
    use std::os::unix::fs::OpenOptionsExt;
    let shown = path.display().to_string();
    let io = |e: std::io::Error| {
        Error::new(ErrorCode::Io, format!("could not save `{shown}`: {e}"))
            .detail("path", shown.clone())
    };
    let parent = path
        .parent()
        .ok_or_else(|| io(std::io::Error::other("no parent folder")))?;
    std::fs::create_dir_all(parent).map_err(io)?;
    let text = serde_json::to_vec_pretty(value).map_err(|e| io(std::io::Error::other(e)))?;
    let tmp = path.with_extension(format!("tmp-{}", std::process::id()));
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(mode)
        .open(&tmp)
        .map_err(io)?;
    file.write_all(&text)
        .and_then(|()| file.sync_all())
        .map_err(io)?;
    std::fs::rename(&tmp, path).map_err(io)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn store() -> (tempfile::TempDir, Store) {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::without_keychain(dir.path().join("config"), dir.path().join("data"));
        (dir, store)
    }

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
    fn settings_input_debug_hides_the_key() {
        let input: SettingsInput = serde_json::from_value(serde_json::json!({
            "provider": "openai", "base_url": OPENAI, "model": "m", "max_tokens": 1,
            "mode": "ask", "api_key": "sk-very-secret"}))
        .unwrap();
        let shown = format!("{input:?}");
        assert!(!shown.contains("sk-very-secret"), "{shown}");
        assert!(shown.contains("[redacted]"), "{shown}");
    }

    #[test]
    fn recent_projects_are_newest_first_without_duplicates() {
        let (_dir, store) = store();
        for root in ["/a", "/b", "/a"] {
            store
                .push_recent(&ProjectInfo {
                    root: root.into(),
                    name: root.into(),
                })
                .unwrap();
        }
        let roots: Vec<String> = store.recent().into_iter().map(|p| p.root).collect();
        assert_eq!(roots, vec!["/a", "/b"]);
    }

    #[test]
    fn conversations_are_kept_per_project() {
        let (_dir, store) = store();
        store
            .save_conversation(Path::new("/p/app"), &serde_json::json!({"n": 1}))
            .unwrap();
        store
            .save_conversation(Path::new("/q/app"), &serde_json::json!({"n": 2}))
            .unwrap();
        assert_eq!(
            store.conversation(Path::new("/p/app")),
            Some(serde_json::json!({"n": 1}))
        );
        assert_eq!(
            store.conversation(Path::new("/q/app")),
            Some(serde_json::json!({"n": 2}))
        );
        assert_eq!(store.conversation(Path::new("/r")), None);
    }

    #[test]
    fn an_unreadable_conversation_is_kept_aside_not_overwritten() {
        let (dir, store) = store();
        let root = Path::new("/p/app");
        store
            .save_conversation(root, &serde_json::json!({"n": 1}))
            .unwrap();
        let file = store.conversation_file(root);
        std::fs::write(&file, b"{\"messages\": [cut sh").unwrap();
        assert_eq!(store.conversation(root), None);
        store
            .save_conversation(root, &serde_json::json!({"n": 2}))
            .unwrap();
        let kept: Vec<_> = std::fs::read_dir(file.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.to_string_lossy().contains(".corrupt-"))
            .collect();
        assert_eq!(kept.len(), 1, "{:?}", dir.path());
        assert_eq!(std::fs::read(&kept[0]).unwrap(), b"{\"messages\": [cut sh");
        assert_eq!(store.conversation(root), Some(serde_json::json!({"n": 2})));
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

    #[test]
    fn settings_default_until_saved() {
        let (_dir, store) = store();
        assert_eq!(store.settings(), Settings::default());
        let s = Settings {
            mode: Mode::FullAuto,
            ..Settings::default()
        };
        store.save_settings(&s).unwrap();
        assert_eq!(store.settings(), s);
    }
}
