//! What the app keeps on disk, in its own folders (never in the project):
//! settings, the API keys (the OS keychain, else a 0600 file), recent
//! projects (every write atomic: temp file + rename), the user's MCP
//! servers, added programs and saved command rules, and the update
//! settings. No Tauri: the app, the CLI and other hosts read the same
//! files.
//!
//! A key is bound to the origin (scheme, host, port) of the base URL it was
//! saved with and is only sent there: pointing the OpenAI provider at a
//! local server does not hand that server the OpenAI key.

use corral_llm::Provider;
use corral_tools::policy::Mode;
use corral_tools::{Error, ErrorCode};
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Settings the user chose (the API key is kept apart).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[ts(rename = "SavedSettings")]
pub struct Settings {
    pub provider: Provider,
    pub base_url: String,
    pub model: String,
    pub max_tokens: u32,
    /// The context window to assume for a server that reports none; a
    /// window the server reports wins (a settings file from before it: none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional, type = "number")]
    pub context_window: Option<u64>,
    pub mode: Mode,
    /// A desktop notification when a reply finishes or an approval waits
    /// while the window is not focused (a settings file from before it: on).
    #[serde(default = "on")]
    pub notifications: bool,
    /// How many of a project's tasks may run at once (none: half the
    /// machine's cores, at least one); a task started over it waits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional, type = "number")]
    pub tasks_at_once: Option<u32>,
    /// Where a task may run besides here: a container of this engine and
    /// image, with these limits (none: tasks run here only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub task_container: Option<TaskContainer>,
    /// Folders to look for language servers in first (nvm's or volta's
    /// global packages, say), before cargo's, the system's and
    /// `~/.local/bin`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[ts(as = "Option<Vec<String>>", optional)]
    pub language_server_folders: Vec<String>,
}

/// A task's container, as the user set it in Settings.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
pub struct TaskContainer {
    /// `podman` or `docker`, or `kubernetes` (a pod of the user's
    /// cluster, through `kubectl`: see `kube`).
    pub engine: String,
    /// Corral's image (`scripts/image.sh`) or one built on it; unused
    /// when `toolchain` is set.
    #[serde(default)]
    pub image: String,
    /// The project's toolchain instead: an image to add corral-cli to, the
    /// project's devcontainer, or a Dockerfile in the project, built by
    /// the engine.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub toolchain: Option<ToolchainSetting>,
    /// CPUs each task's container may use (`--cpus`); none: the engine's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub cpus: Option<u32>,
    /// Memory each may use, in MiB (`--memory`); none: the engine's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional, type = "number")]
    pub memory_mib: Option<u64>,
    /// More of the engine's words for `run` (a runtime, ulimits...).
    #[serde(default)]
    pub options: Vec<String>,
    /// Where in the cluster, for the engine `kubernetes`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub kube: Option<KubeSetting>,
}

/// The engine `kubernetes`: where the task's objects are made, with the
/// user's own kubeconfig.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
pub struct KubeSetting {
    /// The namespace the task's objects are made in.
    pub namespace: String,
    /// The kubeconfig's context; its current one when none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub context: Option<String>,
    /// What makes the pod: a batch Job, or an agent-sandbox `Sandbox`.
    #[serde(default)]
    pub kind: KubeKind,
}

/// What makes a task's pod in the cluster.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum KubeKind {
    /// A batch/v1 Job.
    #[default]
    Job,
    /// A kubernetes-sigs/agent-sandbox `Sandbox`.
    Sandbox,
}

/// Where a task's toolchain comes from (Settings, "A task's container").
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum ToolchainSetting {
    /// An image the engine has or can pull (`node:22`), corral-cli added.
    Image(String),
    /// The project's `.devcontainer/devcontainer.json`: its `image`, or
    /// its `build` built by the engine.
    Devcontainer,
    /// A Dockerfile of the project (its path in the project), built by
    /// the engine in its folder.
    Dockerfile(String),
}

impl ToolchainSetting {
    /// As exec's `--toolchain` names it: `devcontainer`, `image:NAME`,
    /// `dockerfile:PATH`.
    pub fn spec(&self) -> String {
        match self {
            ToolchainSetting::Image(image) => format!("image:{image}"),
            ToolchainSetting::Devcontainer => "devcontainer".into(),
            ToolchainSetting::Dockerfile(file) => format!("dockerfile:{file}"),
        }
    }
}

impl TaskContainer {
    /// The engine `kubernetes`: where in the cluster (`None`: another
    /// engine); `invalid_input` when its namespace is missing, or for
    /// what a cluster cannot take (a toolchain built here, the engine's
    /// own options: a pod's fences are Corral's).
    pub fn in_cluster(&self) -> Result<Option<&KubeSetting>, Error> {
        if self.engine != "kubernetes" {
            return Ok(None);
        }
        let kube = self
            .kube
            .as_ref()
            .filter(|kube| !kube.namespace.trim().is_empty())
            .ok_or_else(|| {
                Error::invalid_input("a task in Kubernetes needs the namespace to make it in")
                    .hint("Write the namespace under \"A task's container\" in Settings.")
            })?;
        if self.toolchain.is_some() {
            return Err(Error::invalid_input(
                "a cluster pulls its image: a toolchain built here cannot be a pod's",
            )
            .hint("Build the toolchain into an image on Corral's (scripts/image.sh), push it where the cluster pulls from, and name it as the image."));
        }
        if self.image.trim().is_empty() {
            return Err(Error::invalid_input("a task in Kubernetes needs an image")
                .hint("Name Corral's image (scripts/image.sh) as pushed where the cluster pulls from."));
        }
        if let Some(word) = self.options.first() {
            return Err(Error::invalid_input(format!(
                "`{word}` means nothing to a pod: a task in Kubernetes takes only CPUs and memory"
            ))
            .hint("Leave the engine's options empty; the pod's other fences are Corral's own."));
        }
        Ok(Some(kube))
    }

    /// The engine's words for `run` before the image: the limits, then
    /// the user's own; `invalid_input` for an engine that is not one, or
    /// a word that is not an option (one starting with `-`).
    pub fn run_options(&self) -> Result<Vec<String>, Error> {
        if !matches!(self.engine.as_str(), "podman" | "docker") {
            return Err(Error::invalid_input(format!(
                "`{}` is not a container engine Corral runs (podman or docker)",
                self.engine
            )));
        }
        if let Some(word) = self.options.iter().find(|w| !w.starts_with('-')) {
            return Err(Error::invalid_input(format!(
                "`{word}` is not an option of the engine's `run`"
            ))
            .hint("Write each option as one word, e.g. --ulimit=nofile=20000:20000."));
        }
        let mut words = Vec::new();
        if let Some(cpus) = self.cpus {
            words.push(format!("--cpus={cpus}"));
        }
        if let Some(mib) = self.memory_mib {
            words.push(format!("--memory={mib}m"));
        }
        words.extend(self.options.iter().cloned());
        Ok(words)
    }

    /// The user's options a `build` of the task's image takes too: its
    /// `--ulimit`s (an engine whose defaults are over the hard limits
    /// fails a build's steps as it fails a run).
    pub fn build_options(&self) -> Vec<String> {
        build_options(&self.options)
    }
}

/// Of the engine's `run` words `options`, those a `build` takes too.
pub fn build_options(options: &[String]) -> Vec<String> {
    options
        .iter()
        .filter(|word| word.starts_with("--ulimit="))
        .cloned()
        .collect()
}

impl Settings {
    /// How many of a project's tasks may run at once: the setting, else
    /// half the machine's cores, at least one.
    pub fn tasks_at_once(&self) -> u32 {
        self.tasks_at_once.filter(|n| *n > 0).unwrap_or_else(|| {
            let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
            u32::try_from(cores / 2).unwrap_or(u32::MAX).max(1)
        })
    }
}

fn on() -> bool {
    true
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            provider: Provider::Anthropic,
            base_url: "https://api.anthropic.com".to_string(),
            model: "claude-sonnet-4-5".to_string(),
            max_tokens: 8192,
            context_window: None,
            mode: Mode::Ask,
            notifications: true,
            tasks_at_once: None,
            task_container: None,
            language_server_folders: Vec::new(),
        }
    }
}

/// Settings as the webview sees them: never the key, only whether one is set.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
#[ts(rename = "Settings")]
pub struct SettingsView {
    #[serde(flatten)]
    pub settings: Settings,
    pub has_api_key: bool,
}

/// Settings as the webview sends them: the key is write-only.
#[derive(Clone, Deserialize, ts_rs::TS)]
pub struct SettingsInput {
    #[serde(flatten)]
    pub settings: Settings,
    /// A new key for the base URL's origin; `""` clears it; absent keeps it.
    #[serde(default)]
    #[ts(optional)]
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
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

pub mod hook_trust;
pub mod key_origin;
mod keys;
pub mod mcp;
mod provider;
pub mod shell;
mod task_places;
pub mod updates;

pub use provider::LlmTarget;

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

    pub fn settings(&self) -> Settings {
        read_json(&self.config.join("settings.json")).unwrap_or_default()
    }

    pub fn save_settings(&self, settings: &Settings) -> Result<(), Error> {
        write_json(&self.config.join("settings.json"), settings, 0o644)
    }

    /// The settings as the window sees them: whether a key is saved for
    /// the base URL's origin, never the key.
    pub fn settings_view(&self) -> SettingsView {
        let settings = self.settings();
        let has_api_key = self
            .api_key(settings.provider, &settings.base_url)
            .is_some();
        SettingsView {
            settings,
            has_api_key,
        }
    }

    /// Saves the settings as the window sends them; a key given with them
    /// is saved for the origin of their base URL (`""` clears it). A
    /// `max_tokens` of 0, or a key that cannot be kept for that base URL,
    /// fails before anything is saved.
    pub fn save_settings_input(&self, input: SettingsInput) -> Result<SettingsView, Error> {
        let SettingsInput { settings, api_key } = input;
        if settings.max_tokens == 0 {
            return Err(Error::invalid_input("max_tokens must be at least 1"));
        }
        let key = api_key.as_deref().map(str::trim);
        if key.is_some_and(|k| !k.is_empty()) {
            key_origin::check_key_base_url(settings.provider, &settings.base_url)?;
        }
        self.save_settings(&settings)?;
        if let Some(key) = key {
            self.set_api_key(settings.provider, &settings.base_url, key)?;
        }
        Ok(self.settings_view())
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

    /// The app's own folders for this user, where the app finds them
    /// (`$XDG_CONFIG_HOME` or `~/.config`, and `$XDG_DATA_HOME` or
    /// `~/.local/share`, each with the app's identifier): a host without
    /// Tauri reads the same settings, keys and history. `CORRAL_NO_KEYCHAIN`
    /// keeps keys in the 0600 file, as in the app. `None` without a home.
    pub fn for_user() -> Option<Store> {
        let config = std::env::var_os("XDG_CONFIG_HOME")
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
            .or_else(|| {
                std::env::var_os("HOME")
                    .map(PathBuf::from)
                    .filter(|p| p.is_absolute())
                    .map(|home| home.join(".config"))
            })?
            .join(KEYCHAIN_SERVICE);
        let data = corral_tools::checkpoint::default_data_dir()?;
        Some(match std::env::var_os("CORRAL_NO_KEYCHAIN") {
            Some(_) => Store::without_keychain(config, data),
            None => Store::new(config, data),
        })
    }

    /// The user's price table, `prices.json` in the config folder: a list
    /// of rules, each `{"model": PATTERN, "input": $, "output": $,
    /// "cache_read"?: $, "cache_write"?: $}` in US dollars per million
    /// tokens, the first that matches a model's name winning over the
    /// built-in list prices (`corral_llm::prices`). A rule that cannot be
    /// read (a typo, a negative rate) is passed over, the others kept; no
    /// file: no rules.
    pub fn prices(&self) -> Vec<corral_llm::PriceRule> {
        let rules: Vec<serde_json::Value> =
            read_json(&self.config.join("prices.json")).unwrap_or_default();
        rules
            .into_iter()
            .filter_map(|rule| serde_json::from_value::<corral_llm::PriceRule>(rule).ok())
            .filter(corral_llm::PriceRule::is_valid)
            .collect()
    }

    /// The app's data folder (the conversation history lives there).
    pub fn data_dir(&self) -> &Path {
        &self.data
    }

    /// Where an earlier Corral saved the project's one conversation as
    /// JSON; the history imports it once.
    pub fn legacy_conversation_file(&self, root: &Path) -> PathBuf {
        self.data
            .join("conversations")
            .join(format!("{}.json", project_file_stem(root)))
    }
}

/// A stable hash for file names (std's hasher may change between releases).
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, b| {
        (hash ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    })
}

// The user's config folder (XDG), never a project's.
#[allow(clippy::disallowed_methods)]
fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Option<T> {
    let text = std::fs::read_to_string(path).ok()?;
    serde_json::from_str(&text).ok()
}

// The user's config folder (XDG), never a project's.
#[allow(clippy::disallowed_methods)]
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

/// A file name for what is kept per project: the folder's name (made safe,
/// at most 40 characters) and a hash of its whole path.
pub(crate) fn project_file_stem(root: &Path) -> String {
    let name: String = root
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
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
    format!("{name}-{:016x}", fnv1a(root.as_os_str().as_encoded_bytes()))
}

#[cfg(test)]
mod tests {
    // Test fixtures in temporary folders, not a project's files.
    #![allow(clippy::disallowed_methods)]
    use super::*;

    const OPENAI: &str = "https://api.openai.com/v1";

    pub(super) fn store() -> (tempfile::TempDir, Store) {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::without_keychain(dir.path().join("config"), dir.path().join("data"));
        (dir, store)
    }

    #[test]
    fn tasks_at_once_is_the_setting_else_half_the_cores_and_never_none() {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as u32;
        let default = Settings::default();
        assert_eq!(default.tasks_at_once(), (cores / 2).max(1));
        let set = |n| Settings {
            tasks_at_once: Some(n),
            ..Settings::default()
        };
        assert_eq!(set(3).tasks_at_once(), 3);
        assert_eq!(set(0).tasks_at_once(), (cores / 2).max(1));
        // A settings file from before it reads as the default.
        let old: Settings = serde_json::from_value(serde_json::json!({
            "provider": "openai", "base_url": OPENAI, "model": "m", "max_tokens": 1, "mode": "ask"
        }))
        .unwrap();
        assert_eq!(old.tasks_at_once, None);
    }

    #[test]
    fn a_task_container_s_words_are_its_limits_then_the_user_s_options() {
        let mut container = TaskContainer {
            engine: "podman".into(),
            image: "corral-task:1".into(),
            toolchain: None,
            cpus: Some(2),
            memory_mib: Some(512),
            options: vec!["--ulimit=nofile=20000:20000".into()],
            kube: None,
        };
        assert_eq!(container.in_cluster().unwrap(), None);
        assert_eq!(
            container.run_options().unwrap(),
            ["--cpus=2", "--memory=512m", "--ulimit=nofile=20000:20000"]
        );
        // A word that is not an option could be read as the image.
        container.options.push("alpine".into());
        assert!(container.run_options().is_err());
        container.options.pop();
        container.engine = "sh".into();
        assert_eq!(
            container.run_options().unwrap_err().code,
            ErrorCode::InvalidInput
        );
    }

    #[test]
    fn a_task_in_kubernetes_needs_a_namespace_and_an_image_and_nothing_built_here() {
        let read: TaskContainer = serde_json::from_value(serde_json::json!({
            "engine": "kubernetes", "image": "registry.example/corral-task:1",
            "kube": {"namespace": "agents"}, "options": []
        }))
        .unwrap();
        let kube = read.in_cluster().unwrap().unwrap();
        assert_eq!(
            (kube.namespace.as_str(), kube.kind),
            ("agents", KubeKind::Job)
        );
        assert_eq!(kube.context, None);
        // A pod is not run with the engine's words.
        assert!(read.run_options().is_err());
        let refused = |change: &dyn Fn(&mut TaskContainer)| {
            let mut container = read.clone();
            change(&mut container);
            let error = container.in_cluster().unwrap_err();
            assert_eq!(error.code, ErrorCode::InvalidInput);
            assert!(!error.hint.is_empty(), "{error:?}");
        };
        refused(&|c| c.kube = None);
        refused(&|c| c.kube.as_mut().unwrap().namespace = " ".into());
        refused(&|c| c.image = String::new());
        refused(&|c| c.toolchain = Some(ToolchainSetting::Devcontainer));
        refused(&|c| c.options = vec!["--privileged".into()]);
        let sandbox: KubeSetting = serde_json::from_value(
            serde_json::json!({"namespace": "agents", "context": "work", "kind": "sandbox"}),
        )
        .unwrap();
        assert_eq!(sandbox.kind, KubeKind::Sandbox);
    }

    #[test]
    fn a_toolchain_is_an_image_the_devcontainer_or_a_dockerfile() {
        for (json, toolchain) in [
            (
                serde_json::json!({"image": "node:22"}),
                ToolchainSetting::Image("node:22".into()),
            ),
            (
                serde_json::json!("devcontainer"),
                ToolchainSetting::Devcontainer,
            ),
            (
                serde_json::json!({"dockerfile": "ci/Dockerfile"}),
                ToolchainSetting::Dockerfile("ci/Dockerfile".into()),
            ),
        ] {
            let read: TaskContainer = serde_json::from_value(
                serde_json::json!({"engine": "podman", "toolchain": json, "options": []}),
            )
            .unwrap();
            assert_eq!(read.toolchain, Some(toolchain));
            assert_eq!(read.image, "");
        }
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

    #[test]
    fn settings_from_the_window_are_saved_with_their_key_and_shown_without_it() {
        let (_dir, store) = store();
        let local = Settings {
            provider: Provider::OpenAi,
            base_url: "http://127.0.0.1:9/v1".into(),
            model: "m".into(),
            ..Settings::default()
        };
        let input = |settings: &Settings, api_key: Option<&str>| SettingsInput {
            settings: settings.clone(),
            api_key: api_key.map(str::to_string),
        };
        assert!(!store.settings_view().has_api_key);
        let view = store
            .save_settings_input(input(&local, Some(" sk-local ")))
            .unwrap();
        assert_eq!(view.settings, local);
        assert!(view.has_api_key);
        assert_eq!(
            store.api_key(Provider::OpenAi, &local.base_url).as_deref(),
            Some("sk-local")
        );
        assert!(!serde_json::to_string(&view).unwrap().contains("sk-local"));
        // No key given keeps the saved one; "" clears it.
        assert!(
            store
                .save_settings_input(input(&local, None))
                .unwrap()
                .has_api_key
        );
        assert!(
            !store
                .save_settings_input(input(&local, Some("")))
                .unwrap()
                .has_api_key
        );

        // Refused before anything is saved: no tokens, or a key for a base
        // URL that has no origin to bind it to.
        let none = Settings {
            max_tokens: 0,
            model: "none".into(),
            ..local.clone()
        };
        let err = store.save_settings_input(input(&none, None)).unwrap_err();
        assert_eq!(err.code, ErrorCode::InvalidInput);
        let nowhere = Settings {
            base_url: "file:///tmp/v1".into(),
            model: "nowhere".into(),
            ..local.clone()
        };
        assert!(store
            .save_settings_input(input(&nowhere, Some("sk-x")))
            .is_err());
        assert_eq!(store.settings(), local);
    }

    #[test]
    fn the_price_table_keeps_the_rules_it_can_read() {
        let (dir, store) = store();
        assert!(store.prices().is_empty());
        std::fs::create_dir_all(dir.path().join("config")).unwrap();
        std::fs::write(
            dir.path().join("config/prices.json"),
            r#"[{"model": "qwen3*", "input": 0.2, "output": 0.6},
                {"model": "typo", "inptu": 1, "output": 2},
                {"model": "negative", "input": -1, "output": 2},
                {"model": "gpt-4o", "input": 2.5, "output": 10, "cache_read": 1.25}]"#,
        )
        .unwrap();
        let rules = store.prices();
        let names: Vec<&str> = rules.iter().map(|r| r.model.as_str()).collect();
        assert_eq!(names, ["qwen3*", "gpt-4o"]);
        assert_eq!(rules[1].price.cache_read, Some(1.25));
        let config = corral_llm::ProviderConfig {
            base_url: "https://llm.example.net/v1".into(),
            ..corral_llm::ProviderConfig::new(Provider::OpenAi, "qwen3-32b")
        };
        assert_eq!(
            corral_llm::price_for(&rules, &config).map(|p| p.output),
            Some(0.6)
        );
    }

    #[test]
    fn settings_saved_before_the_context_window_setting_still_load() {
        let (dir, store) = store();
        std::fs::create_dir_all(dir.path().join("config")).unwrap();
        std::fs::write(
            dir.path().join("config/settings.json"),
            r#"{"provider": "openai", "base_url": "http://127.0.0.1:8080/v1", "model": "qwen",
                "max_tokens": 4096, "mode": "auto_edit"}"#,
        )
        .unwrap();
        let settings = store.settings();
        assert_eq!(
            settings,
            Settings {
                provider: Provider::OpenAi,
                base_url: "http://127.0.0.1:8080/v1".into(),
                model: "qwen".into(),
                max_tokens: 4096,
                context_window: None,
                mode: Mode::AutoEdit,
                notifications: true,
                tasks_at_once: None,
                task_container: None,
                language_server_folders: Vec::new(),
            }
        );
        let set = Settings {
            context_window: Some(16_384),
            ..settings
        };
        store.save_settings(&set).unwrap();
        assert_eq!(store.settings(), set);
    }
}
