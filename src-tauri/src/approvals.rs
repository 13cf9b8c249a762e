//! Approvals the user gave in the window. The UI asks the user, then calls
//! `approve_call`; the token it gets is good for that one call (same tool,
//! same input) once. A session grant covers the tool (for `exec_shell`, the
//! program) until the project closes, except calls on a secret-like path
//! (`.env`, `*.pem`, ...): those ask every time. The LLM never sees or
//! makes tokens. A once token may carry the network for that one command
//! (the user approved it "with network"); a session grant never does.
//!
//! A once token is used up when the call is checked, before the tool reads
//! its input: a call that then fails validation has spent it (the UI asks
//! again for the corrected call).

use corral_tools::dispatch::touches_secret;
use corral_tools::policy::Approval;
use corral_tools::ProjectRoot;
use serde::Deserialize;
use serde_json::Value;
use std::collections::{HashMap, HashSet};

/// How long an approval lasts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
#[ts(rename = "ApprovalScope")]
pub enum Scope {
    Once,
    Session,
    /// A command: save a rule (program + argv prefix) for the project;
    /// other tools: as `session`.
    Always,
}

/// The approvals of the open project.
#[derive(Debug, Default)]
pub struct Approvals {
    once: HashMap<String, (String, Value)>,
    session: HashSet<String>,
    /// Once tokens that grant their command the network.
    network: HashSet<String>,
}

impl Approvals {
    /// Records the user's approval and returns its token. "For this
    /// session" on a call that touches a secret grants that call only: the
    /// user agreed to this secret, not to every other call of the tool.
    pub fn grant(&mut self, root: &ProjectRoot, tool: &str, input: &Value, scope: Scope) -> String {
        self.grant_with(root, tool, input, scope, false)
    }

    /// [`Approvals::grant`]; with `network`, the token also grants its
    /// command the network (only that call, only with the token).
    pub fn grant_with(
        &mut self,
        root: &ProjectRoot,
        tool: &str,
        input: &Value,
        scope: Scope,
        network: bool,
    ) -> String {
        let covers_tool =
            scope == Scope::Session || (scope == Scope::Always && tool != "exec_shell");
        if covers_tool && !touches_secret(root, tool, input) {
            self.session.insert(session_key(tool, input));
        }
        let token = uuid::Uuid::new_v4().to_string();
        self.once
            .insert(token.clone(), (tool.to_string(), normalize(input)));
        if network {
            self.network.insert(token.clone());
        }
        token
    }

    /// Whether a session grant covers this call in `root`. It never covers
    /// a call on a secret-like path, by its name or where it leads.
    pub fn covers(&self, root: &ProjectRoot, tool: &str, input: &Value) -> bool {
        self.session.contains(&session_key(tool, input)) && !touches_secret(root, tool, input)
    }

    /// Forgets every approval of an MCP server's tool (`SERVER__TOOL`): the
    /// servers were replaced, and a name may now stand for another one.
    pub fn forget_mcp(&mut self) {
        self.session.retain(|key| !key.contains("__"));
        self.once.retain(|_, (tool, _)| !tool.contains("__"));
    }

    /// The approval of one call: a matching token is used up; a session
    /// grant stays.
    pub fn take(
        &mut self,
        root: &ProjectRoot,
        tool: &str,
        input: &Value,
        token: Option<&str>,
    ) -> Approval {
        self.take_grant(root, tool, input, token).0
    }

    /// [`Approvals::take`], and whether the token granted the network.
    pub fn take_grant(
        &mut self,
        root: &ProjectRoot,
        tool: &str,
        input: &Value,
        token: Option<&str>,
    ) -> (Approval, bool) {
        if let Some(token) = token {
            if let Some((granted_tool, granted_input)) = self.once.get(token) {
                if granted_tool == tool && *granted_input == normalize(input) {
                    self.once.remove(token);
                    return (Approval::Granted, self.network.remove(token));
                }
            }
        }
        if self.covers(root, tool, input) {
            (Approval::Granted, false)
        } else {
            (Approval::None, false)
        }
    }
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

    fn root() -> (tempfile::TempDir, ProjectRoot) {
        let dir = tempfile::tempdir().unwrap();
        let root = ProjectRoot::open(dir.path()).unwrap();
        (dir, root)
    }

    #[test]
    fn once_tokens_are_single_use_and_bound_to_the_input() {
        let (_dir, r) = root();
        let mut a = Approvals::default();
        let input = json!({"path": "a.txt", "content": "x"});
        let token = a.grant(&r, "write_file", &input, Scope::Once);
        let other = json!({"path": "b.txt", "content": "x"});
        assert_eq!(
            a.take(&r, "write_file", &other, Some(&token)),
            Approval::None
        );
        assert_eq!(
            a.take(&r, "delete_file", &input, Some(&token)),
            Approval::None
        );
        let with_null = json!({"path": "a.txt", "content": "x", "extra": null});
        assert_eq!(
            a.take(&r, "write_file", &with_null, Some(&token)),
            Approval::Granted
        );
        assert_eq!(
            a.take(&r, "write_file", &input, Some(&token)),
            Approval::None
        );
        assert_eq!(
            a.take(&r, "write_file", &input, Some("forged")),
            Approval::None
        );
    }

    #[test]
    fn session_grants_cover_the_tool_or_program() {
        let (_dir, r) = root();
        let mut a = Approvals::default();
        a.grant(
            &r,
            "exec_shell",
            &json!({"command": "cargo", "args": ["build"]}),
            Scope::Session,
        );
        assert!(a.covers(
            &r,
            "exec_shell",
            &json!({"command": "cargo", "args": ["test"]})
        ));
        assert!(!a.covers(&r, "exec_shell", &json!({"command": "rm", "args": ["x"]})));
        a.grant(&r, "edit_file", &json!({"path": "a"}), Scope::Session);
        assert_eq!(
            a.take(&r, "edit_file", &json!({"path": "b"}), None),
            Approval::Granted
        );
    }

    #[test]
    fn only_a_once_token_given_with_network_carries_it() {
        let (_dir, r) = root();
        let mut a = Approvals::default();
        let call = json!({"command": "npm", "args": ["ci"]});
        let token = a.grant_with(&r, "exec_shell", &call, Scope::Once, true);
        assert_eq!(
            a.take_grant(&r, "exec_shell", &call, Some(&token)),
            (Approval::Granted, true)
        );
        a.grant_with(&r, "exec_shell", &call, Scope::Session, true);
        // The session grant covers npm, without the network.
        assert_eq!(
            a.take_grant(&r, "exec_shell", &call, None),
            (Approval::Granted, false)
        );
        let token = a.grant(&r, "exec_shell", &call, Scope::Once);
        assert_eq!(
            a.take_grant(&r, "exec_shell", &call, Some(&token)),
            (Approval::Granted, false)
        );
        // "Always" on a command grants no session (the saved rule does the rest).
        let mut a = Approvals::default();
        let test = json!({"command": "cargo", "args": ["test"]});
        a.grant(&r, "exec_shell", &test, Scope::Always);
        assert!(!a.covers(&r, "exec_shell", &test));
    }

    #[test]
    fn session_grants_never_cover_secret_like_paths() {
        let (_dir, r) = root();
        let mut a = Approvals::default();
        a.grant(
            &r,
            "edit_file",
            &json!({"path": "src/a.rs"}),
            Scope::Session,
        );
        a.grant(&r, "read_file", &json!({"path": ".env"}), Scope::Session);
        assert!(a.covers(&r, "edit_file", &json!({"path": "src/b.rs"})));
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
            assert!(!a.covers(&r, "edit_file", &json!({"path": path})), "{path}");
            assert!(!a.covers(&r, "read_file", &json!({"path": path})), "{path}");
            assert_eq!(
                a.take(&r, "edit_file", &json!({"path": path}), None),
                Approval::None,
                "{path}"
            );
        }
        // `..` leaving the secret name behind is judged by where it lands.
        assert!(a.covers(&r, "edit_file", &json!({"path": ".env/../src/c.rs"})));

        a.grant(
            &r,
            "exec_shell",
            &json!({"command": "cp", "args": ["a", "b"]}),
            Scope::Session,
        );
        assert!(a.covers(
            &r,
            "exec_shell",
            &json!({"command": "cp", "args": ["x", "y"]})
        ));
        for args in [
            json!([".env", "leak.txt"]),
            json!(["notes.txt", "deploy/server.key"]),
            json!(["--target-directory=.ssh/id_ed25519", "x"]),
        ] {
            assert!(
                !a.covers(&r, "exec_shell", &json!({"command": "cp", "args": args})),
                "{args}"
            );
        }

        // A once token for exactly that secret-like call still works, once.
        let input = json!({"path": ".env", "old_string": "a", "new_string": "b"});
        let token = a.grant(&r, "edit_file", &input, Scope::Once);
        assert_eq!(
            a.take(&r, "edit_file", &input, Some(&token)),
            Approval::Granted
        );
        assert_eq!(
            a.take(&r, "edit_file", &input, Some(&token)),
            Approval::None
        );
    }

    #[test]
    fn a_link_to_a_secret_is_a_secret_and_a_session_grant_on_one_grants_nothing_more() {
        let (dir, r) = root();
        std::fs::write(dir.path().join(".env"), "KEY=1\n").unwrap();
        std::os::unix::fs::symlink(".env", dir.path().join("notes.txt")).unwrap();
        let mut a = Approvals::default();
        a.grant(&r, "write_file", &json!({"path": "a.txt"}), Scope::Session);
        assert!(a.covers(&r, "write_file", &json!({"path": "b.txt"})));
        assert!(!a.covers(&r, "write_file", &json!({"path": "notes.txt"})));
        assert!(!a.covers(&r, "read_file", &json!({"path": "notes.txt"})));

        let mut a = Approvals::default();
        let secret = json!({"path": ".env", "content": "KEY=2\n"});
        let token = a.grant(&r, "write_file", &secret, Scope::Session);
        assert!(!a.covers(&r, "write_file", &json!({"path": "src/main.rs"})));
        assert_eq!(
            a.take(&r, "write_file", &secret, Some(&token)),
            Approval::Granted
        );
    }
}
