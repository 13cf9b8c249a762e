//! Approvals the user gave in the window. The UI asks the user, then calls
//! `approve_call`; the token it gets is good for that one call (same tool,
//! same input) once. A session grant covers the tool (for `exec_shell`, the
//! program) until the project closes, except calls on a secret-like path
//! (`.env`, `*.pem`, ...): those ask every time. The LLM never sees or
//! makes tokens.
//!
//! A once token is used up when the call is checked, before the tool reads
//! its input: a call that then fails validation has spent it (the UI asks
//! again for the corrected call).

use corral_tools::policy::{is_secret_like, Approval};
use serde::Deserialize;
use serde_json::Value;
use std::collections::{HashMap, HashSet};

/// How long an approval lasts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Scope {
    Once,
    Session,
}

/// The approvals of the open project.
#[derive(Debug, Default)]
pub struct Approvals {
    once: HashMap<String, (String, Value)>,
    session: HashSet<String>,
}

impl Approvals {
    /// Records the user's approval and returns its token.
    pub fn grant(&mut self, tool: &str, input: &Value, scope: Scope) -> String {
        if scope == Scope::Session {
            self.session.insert(session_key(tool, input));
        }
        let token = uuid::Uuid::new_v4().to_string();
        self.once
            .insert(token.clone(), (tool.to_string(), normalize(input)));
        token
    }

    /// Whether a session grant covers this call. It never covers a call on
    /// a secret-like path.
    pub fn covers(&self, tool: &str, input: &Value) -> bool {
        !touches_secret(tool, input) && self.session.contains(&session_key(tool, input))
    }

    /// The approval of one call: a matching token is used up; a session
    /// grant stays.
    pub fn take(&mut self, tool: &str, input: &Value, token: Option<&str>) -> Approval {
        if let Some(token) = token {
            if let Some((granted_tool, granted_input)) = self.once.get(token) {
                if granted_tool == tool && *granted_input == normalize(input) {
                    self.once.remove(token);
                    return Approval::Granted;
                }
            }
        }
        if self.covers(tool, input) {
            Approval::Granted
        } else {
            Approval::None
        }
    }
}

/// Whether a call names a secret-like path: its `path` (by the name it
/// resolves to, as the policy sees it), or for `exec_shell` any argument
/// (`cp .env out.txt`, `--output=id_rsa`).
fn touches_secret(tool: &str, input: &Value) -> bool {
    let path_is_secret = input
        .get("path")
        .and_then(Value::as_str)
        .is_some_and(|path| is_secret_like(&final_name(path)));
    let arg_is_secret = || {
        tool == "exec_shell"
            && input
                .get("args")
                .and_then(Value::as_array)
                .is_some_and(|args| {
                    args.iter().filter_map(Value::as_str).any(|arg| {
                        let value = arg.rsplit('=').next().unwrap_or(arg);
                        is_secret_like(&final_name(value))
                    })
                })
    };
    path_is_secret || arg_is_secret()
}

/// The last name a path resolves to, lexically as `ProjectRoot::resolve`
/// does (`\` is a separator, `.` is skipped, `..` goes up): `a/.env/.`
/// and `.env/x/..` are `.env`.
fn final_name(path: &str) -> String {
    let unified = path.replace('\\', "/");
    let mut names: Vec<&str> = Vec::new();
    for part in unified.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                names.pop();
            }
            name => names.push(name),
        }
    }
    names
        .last()
        .map(|name| name.to_string())
        .unwrap_or_default()
}

fn session_key(tool: &str, input: &Value) -> String {
    match (tool, input.get("command").and_then(Value::as_str)) {
        ("exec_shell", Some(program)) => format!("exec_shell:{program}"),
        _ => tool.to_string(),
    }
}

/// Drops null fields, so `{"a": 1, "b": null}` and `{"a": 1}` are one input.
pub fn normalize(input: &Value) -> Value {
    match input {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| (k.clone(), normalize(v)))
                .collect(),
        ),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn once_tokens_are_single_use_and_bound_to_the_input() {
        let mut a = Approvals::default();
        let input = json!({"path": "a.txt", "content": "x"});
        let token = a.grant("write_file", &input, Scope::Once);
        let other = json!({"path": "b.txt", "content": "x"});
        assert_eq!(a.take("write_file", &other, Some(&token)), Approval::None);
        assert_eq!(a.take("delete_file", &input, Some(&token)), Approval::None);
        let with_null = json!({"path": "a.txt", "content": "x", "extra": null});
        assert_eq!(
            a.take("write_file", &with_null, Some(&token)),
            Approval::Granted
        );
        assert_eq!(a.take("write_file", &input, Some(&token)), Approval::None);
        assert_eq!(a.take("write_file", &input, Some("forged")), Approval::None);
    }

    #[test]
    fn session_grants_cover_the_tool_or_program() {
        let mut a = Approvals::default();
        a.grant(
            "exec_shell",
            &json!({"command": "cargo", "args": ["build"]}),
            Scope::Session,
        );
        assert!(a.covers("exec_shell", &json!({"command": "cargo", "args": ["test"]})));
        assert!(!a.covers("exec_shell", &json!({"command": "rm", "args": ["x"]})));
        a.grant("edit_file", &json!({"path": "a"}), Scope::Session);
        assert_eq!(
            a.take("edit_file", &json!({"path": "b"}), None),
            Approval::Granted
        );
    }

    #[test]
    fn session_grants_never_cover_secret_like_paths() {
        let mut a = Approvals::default();
        a.grant("edit_file", &json!({"path": "src/a.rs"}), Scope::Session);
        a.grant("read_file", &json!({"path": ".env"}), Scope::Session);
        assert!(a.covers("edit_file", &json!({"path": "src/b.rs"})));
        for path in [
            ".env",
            "config/.env.local",
            "certs/server.pem",
            "a/.env/.",
            "./.env/",
            ".env/x/..",
            "keys\\id_rsa",
            "api-token.txt",
        ] {
            assert!(!a.covers("edit_file", &json!({"path": path})), "{path}");
            assert!(!a.covers("read_file", &json!({"path": path})), "{path}");
            assert_eq!(
                a.take("edit_file", &json!({"path": path}), None),
                Approval::None,
                "{path}"
            );
        }
        // `..` leaving the secret name behind is judged by where it lands.
        assert!(a.covers("edit_file", &json!({"path": ".env/../src/c.rs"})));

        a.grant(
            "exec_shell",
            &json!({"command": "cp", "args": ["a", "b"]}),
            Scope::Session,
        );
        assert!(a.covers("exec_shell", &json!({"command": "cp", "args": ["x", "y"]})));
        for args in [
            json!([".env", "leak.txt"]),
            json!(["notes.txt", "deploy/server.key"]),
            json!(["--target-directory=.ssh/id_ed25519", "x"]),
        ] {
            assert!(
                !a.covers("exec_shell", &json!({"command": "cp", "args": args})),
                "{args}"
            );
        }

        // A once token for exactly that secret-like call still works, once.
        let input = json!({"path": ".env", "old_string": "a", "new_string": "b"});
        let token = a.grant("edit_file", &input, Scope::Once);
        assert_eq!(a.take("edit_file", &input, Some(&token)), Approval::Granted);
        assert_eq!(a.take("edit_file", &input, Some(&token)), Approval::None);
    }

    #[test]
    fn final_names_resolve_like_the_root_does() {
        for (path, name) in [
            ("a/b.txt", "b.txt"),
            ("a/.env/.", ".env"),
            ("./x/../y", "y"),
            ("a\\b", "b"),
            (".", ""),
            ("/abs/inside/.env", ".env"),
        ] {
            assert_eq!(final_name(path), name, "{path}");
        }
    }
}
