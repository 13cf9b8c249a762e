//! The user's MCP servers, kept in the app's config folder (`mcp.json`,
//! never in the project): how each starts and how far it is trusted. The
//! values of their environment variables are secrets, kept like API keys:
//! in the OS keychain, else in a 0600 file (`mcp-secrets.json`).

use super::{read_json, write_json, Store, KEYCHAIN_SERVICE};
pub use corral_session::mcp::{McpServerConfig, DEFAULT_TIMEOUT_SECS};
use corral_tools::Error;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// What Settings saves: the servers, and the values of their variables
/// (`{ "server": { "VAR": "value" } }`); a variable left out keeps its
/// value, an empty one removes it.
#[derive(Debug, Clone, Default, Deserialize, ts_rs::TS)]
pub struct McpSettings {
    pub servers: Vec<McpServerConfig>,
    #[serde(default)]
    pub secrets: BTreeMap<String, BTreeMap<String, String>>,
}

/// What Settings shows: the servers and which variables have a value
/// (never the values).
#[derive(Debug, Clone, Default, Serialize, ts_rs::TS)]
pub struct McpSettingsView {
    pub servers: Vec<McpServerConfig>,
    /// `server/VAR` of each variable that has a value.
    pub secrets_set: Vec<String>,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct McpFile {
    #[serde(default)]
    servers: Vec<McpServerConfig>,
}

/// A server name fit to prefix tool names.
/// A server name fit to prefix tool names: no `__` in it and no `_` or `-`
/// at either end, so `NAME__TOOL` splits back into the two.
pub fn is_valid_server_name(name: &str) -> bool {
    (1..=32).contains(&name.len())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        && !name.contains("__")
        && name.starts_with(|c: char| c.is_ascii_alphanumeric())
        && name.ends_with(|c: char| c.is_ascii_alphanumeric())
}

fn valid_var(name: &str) -> bool {
    !name.is_empty()
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !name.starts_with(|c: char| c.is_ascii_digit())
}

impl Store {
    fn mcp_file(&self) -> PathBuf {
        self.config.join("mcp.json")
    }

    fn mcp_secret_file(&self) -> PathBuf {
        self.config.join("mcp-secrets.json")
    }

    /// The servers the user added (a hand-edited entry with a name that
    /// could not prefix tools is left out).
    pub fn mcp_servers(&self) -> Vec<McpServerConfig> {
        let mut servers = read_json::<McpFile>(&self.mcp_file())
            .unwrap_or_default()
            .servers;
        let mut seen = std::collections::HashSet::new();
        servers.retain(|s| is_valid_server_name(&s.name) && seen.insert(s.name.clone()));
        servers
    }

    /// The servers and which variables have values.
    pub fn mcp_settings(&self) -> McpSettingsView {
        let servers = self.mcp_servers();
        let secrets_set = servers
            .iter()
            .flat_map(|s| s.env.iter().map(move |var| (s, var)))
            .filter(|(s, var)| self.mcp_secret(&s.name, var).is_some())
            .map(|(s, var)| format!("{}/{var}", s.name))
            .collect();
        McpSettingsView {
            servers,
            secrets_set,
        }
    }

    /// Saves the servers and the values given. A bad name, a duplicate, an
    /// empty command or a bad variable name is refused and nothing is saved.
    pub fn save_mcp_settings(&self, settings: McpSettings) -> Result<(), Error> {
        let mut names = std::collections::HashSet::new();
        for server in &settings.servers {
            if !is_valid_server_name(&server.name) {
                return Err(Error::invalid_input(format!(
                    "`{}` is not a server name: use 1 to 32 letters, digits, `-` or `_` (no `__`, a letter or digit at each end)",
                    server.name
                )));
            }
            if !names.insert(server.name.as_str()) {
                return Err(Error::invalid_input(format!(
                    "two servers are named `{}`",
                    server.name
                )));
            }
            match (server.command.trim().is_empty(), &server.url) {
                (true, None) => {
                    return Err(Error::invalid_input(format!(
                        "the server `{}` has no command and no URL",
                        server.name
                    )))
                }
                (false, Some(_)) => {
                    return Err(Error::invalid_input(format!(
                        "the server `{}` has a command and a URL: give one",
                        server.name
                    )))
                }
                (_, Some(url)) if !(url.starts_with("http://") || url.starts_with("https://")) => {
                    return Err(Error::invalid_input(format!(
                        "`{url}` is not an http:// or https:// URL"
                    )))
                }
                _ => {}
            }
            if let Some(bad) = server.env.iter().find(|v| !valid_var(v)) {
                return Err(Error::invalid_input(format!(
                    "`{bad}` is not an environment variable name"
                )));
            }
            if server.timeout_secs == Some(0) {
                return Err(Error::invalid_input("a timeout of 0 s lets no call run"));
            }
        }
        // A server removed, or a variable it no longer has, takes its value
        // with it: a later server of the same name must not inherit it.
        for before in self.mcp_servers() {
            let now = settings.servers.iter().find(|s| s.name == before.name);
            for var in &before.env {
                if !now.is_some_and(|s| s.env.contains(var)) {
                    self.set_mcp_secret(&before.name, var, "")?;
                }
            }
        }
        for (server, vars) in &settings.secrets {
            for (var, value) in vars {
                self.set_mcp_secret(server, var, value)?;
            }
        }
        write_json(
            &self.mcp_file(),
            &McpFile {
                servers: settings.servers,
            },
            0o644,
        )
    }

    /// The value of `server`'s variable `var`.
    pub fn mcp_secret(&self, server: &str, var: &str) -> Option<String> {
        let name = format!("mcp/{server}/{var}");
        let from_keychain = self
            .keychain
            .then(|| keyring::Entry::new(KEYCHAIN_SERVICE, &name).ok())
            .flatten()
            .and_then(|entry| entry.get_password().ok());
        from_keychain.filter(|v| !v.is_empty()).or_else(|| {
            read_json::<BTreeMap<String, String>>(&self.mcp_secret_file())
                .and_then(|mut all| all.remove(&name))
                .filter(|v| !v.is_empty())
        })
    }

    fn set_mcp_secret(&self, server: &str, var: &str, value: &str) -> Result<(), Error> {
        let name = format!("mcp/{server}/{var}");
        let entry = self
            .keychain
            .then(|| keyring::Entry::new(KEYCHAIN_SERVICE, &name).ok())
            .flatten();
        let in_keychain = match entry {
            Some(entry) if value.is_empty() => {
                let _ = entry.delete_credential();
                false
            }
            Some(entry) => entry.set_password(value).is_ok(),
            None => false,
        };
        let mut all: BTreeMap<String, String> =
            read_json(&self.mcp_secret_file()).unwrap_or_default();
        if value.is_empty() || in_keychain {
            all.remove(&name);
        } else {
            all.insert(name, value.to_string());
        }
        write_json(&self.mcp_secret_file(), &all, 0o600)
    }

    /// `server`'s variables with their values (those without one are left out).
    pub fn mcp_vars(&self, server: &McpServerConfig) -> Vec<(String, String)> {
        server
            .env
            .iter()
            .filter_map(|var| Some((var.clone(), self.mcp_secret(&server.name, var)?)))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server(name: &str, env: &[&str]) -> McpServerConfig {
        McpServerConfig {
            name: name.into(),
            command: "srv".into(),
            url: None,
            args: Vec::new(),
            env: env.iter().map(|v| v.to_string()).collect(),
            network: false,
            in_project: false,
            trusted: false,
            read_only_tools: Vec::new(),
            timeout_secs: None,
        }
    }

    #[test]
    fn a_removed_server_or_variable_takes_its_secret_with_it() {
        let tmp = tempfile::tempdir().unwrap();
        let store = Store::without_keychain(tmp.path().join("config"), tmp.path().join("data"));
        let secrets = BTreeMap::from([(
            "gh".to_string(),
            BTreeMap::from([
                ("TOKEN".to_string(), "one".to_string()),
                ("OTHER".to_string(), "two".to_string()),
            ]),
        )]);
        store
            .save_mcp_settings(McpSettings {
                servers: vec![server("gh", &["TOKEN", "OTHER"])],
                secrets,
            })
            .unwrap();
        assert_eq!(store.mcp_secret("gh", "TOKEN").as_deref(), Some("one"));
        // OTHER dropped from the server: its value goes.
        store
            .save_mcp_settings(McpSettings {
                servers: vec![server("gh", &["TOKEN"])],
                secrets: BTreeMap::new(),
            })
            .unwrap();
        assert_eq!(store.mcp_secret("gh", "OTHER"), None);
        assert_eq!(store.mcp_secret("gh", "TOKEN").as_deref(), Some("one"));
        // The server removed, then one of the same name added: no token.
        store.save_mcp_settings(McpSettings::default()).unwrap();
        store
            .save_mcp_settings(McpSettings {
                servers: vec![server("gh", &["TOKEN"])],
                secrets: BTreeMap::new(),
            })
            .unwrap();
        assert_eq!(store.mcp_secret("gh", "TOKEN"), None);
        assert!(store.mcp_settings().secrets_set.is_empty());
    }

    #[test]
    fn a_server_name_splits_back_out_of_its_tool_names() {
        for good in ["github", "a", "my-server_2"] {
            assert!(is_valid_server_name(good), "{good}");
        }
        for bad in [
            "",
            "a__b",
            "a_",
            "_a",
            "-a",
            "a-",
            "a b",
            "a/b",
            &"x".repeat(33),
        ] {
            assert!(!is_valid_server_name(bad), "{bad}");
        }
    }
}
