//! Approvals the user gave in the window. The UI asks the user, then calls
//! `approve_call`; the token it gets is good for that one call (same tool,
//! same input) once. A grant "in this conversation" covers exactly what
//! the user chose (`grants::Grant`: the argv or an edited pattern, the path
//! or a picked folder, the very call) and only calls that carry the same
//! conversation key; it ends when the window leaves the conversation, or
//! with the project. A call on a secret-like path (`.env`, `*.pem`, ...)
//! is never granted beyond itself. The LLM never sees or makes tokens. A
//! once token may carry the network for that one command (the user
//! approved it "with network"); a grant never does.
//!
//! A once token is used up when the call is checked, before the tool reads
//! its input: a call that then fails validation has spent it (the UI asks
//! again for the corrected call).

use crate::grants::{Grant, GrantEntry, Held};
use corral_tools::dispatch::touches_secret;
use corral_tools::policy::Approval;
use corral_tools::{Error, ProjectRoot};
use serde::Deserialize;
use serde_json::Value;
use std::collections::{HashMap, HashSet};

/// How far an approval reaches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
#[ts(rename = "ApprovalScope")]
pub enum Scope {
    /// This call, once.
    Once,
    /// This call, and later calls of the conversation its grant covers.
    Conversation,
    /// A command: this call, and a rule (program + argv prefix) saved for
    /// the project, which the user confirmed as shown.
    Always,
}

/// The user's answer to one approval, as the window sends it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    pub scope: Scope,
    /// This one call runs with the network.
    pub network: bool,
    /// The window's key of the conversation (for `Conversation`).
    pub conversation: Option<String>,
    /// What the grant covers (for `Conversation`).
    pub grant: Option<Grant>,
    /// The rule the user confirmed, as shown (for `Always`).
    pub rule: Option<String>,
}

impl Answer {
    /// Approve this call once.
    pub fn once() -> Answer {
        Answer {
            scope: Scope::Once,
            network: false,
            conversation: None,
            grant: None,
            rule: None,
        }
    }

    /// Approve this call and grant `grant` in `conversation`.
    pub fn conversation(conversation: &str, grant: Grant) -> Answer {
        Answer {
            scope: Scope::Conversation,
            conversation: Some(conversation.to_string()),
            grant: Some(grant),
            ..Answer::once()
        }
    }
}

/// The approvals of the open project.
#[derive(Debug, Default)]
pub struct Approvals {
    once: HashMap<String, (String, Value)>,
    /// Once tokens that grant their command the network.
    network: HashSet<String>,
    /// The grants of each conversation, by the window's key for it.
    conversations: HashMap<String, Vec<Held>>,
}

impl Approvals {
    /// Records the user's approval of this one call and returns its token;
    /// with `network`, the token also grants its command the network (only
    /// that call, only with the token).
    pub fn approve(&mut self, tool: &str, input: &Value, network: bool) -> String {
        let token = uuid::Uuid::new_v4().to_string();
        self.once
            .insert(token.clone(), (tool.to_string(), normalize(input)));
        if network {
            self.network.insert(token.clone());
        }
        token
    }

    /// Holds `grant` for `conversation`, given while approving this call:
    /// it must fit the tool and cover this very call, and the call must
    /// not touch a secret (those are approved one at a time).
    pub fn grant(
        &mut self,
        root: &ProjectRoot,
        conversation: &str,
        tool: &str,
        input: &Value,
        grant: Grant,
    ) -> Result<GrantEntry, Error> {
        if conversation.is_empty() {
            return Err(Error::invalid_input(
                "a grant in a conversation needs the conversation's key",
            ));
        }
        if touches_secret(root, tool, input) {
            return Err(Error::invalid_input(format!(
                "`{tool}` here touches a secret-like file: such calls are approved one at a time"
            ))
            .hint("Approve this call once."));
        }
        let held = Held::new(root, grant)?;
        if !held.fits(tool) || !held.covers(root, tool, input) {
            return Err(Error::invalid_input(format!(
                "the grant does not cover the `{tool}` call it was given for"
            )));
        }
        let grants = self
            .conversations
            .entry(conversation.to_string())
            .or_default();
        if let Some(same) = grants.iter().find(|h| h.entry.grant == held.entry.grant) {
            return Ok(same.entry.clone());
        }
        let entry = held.entry.clone();
        grants.push(held);
        Ok(entry)
    }

    /// The grant of `conversation` that covers this call, if any. None
    /// covers a call on a secret-like path, by its name or where it leads.
    pub fn covering(
        &self,
        root: &ProjectRoot,
        conversation: Option<&str>,
        tool: &str,
        input: &Value,
    ) -> Option<GrantEntry> {
        let grants = self.conversations.get(conversation?)?;
        let held = grants.iter().find(|h| h.covers(root, tool, input))?;
        (!touches_secret(root, tool, input)).then(|| held.entry.clone())
    }

    /// The grants of `conversation`, oldest first.
    pub fn grants(&self, conversation: &str) -> Vec<GrantEntry> {
        self.conversations
            .get(conversation)
            .map(|grants| grants.iter().map(|h| h.entry.clone()).collect())
            .unwrap_or_default()
    }

    /// Revokes one grant of `conversation` (an unknown id is not an error).
    pub fn revoke(&mut self, conversation: &str, id: &str) {
        if let Some(grants) = self.conversations.get_mut(conversation) {
            grants.retain(|h| h.entry.id != id);
        }
    }

    /// Ends `conversation`: every grant of it goes.
    pub fn end(&mut self, conversation: &str) {
        self.conversations.remove(conversation);
    }

    /// Forgets every approval of an MCP server's tool (`SERVER__TOOL`): the
    /// servers were replaced, and a name may now stand for another one.
    pub fn forget_mcp(&mut self) {
        for grants in self.conversations.values_mut() {
            grants.retain(
                |h| !matches!(&h.entry.grant, Grant::Call { tool, .. } if tool.contains("__")),
            );
        }
        self.once.retain(|_, (tool, _)| !tool.contains("__"));
    }

    /// The approval of one call: a matching token is used up; a grant of
    /// its conversation stays.
    pub fn take(
        &mut self,
        root: &ProjectRoot,
        conversation: Option<&str>,
        tool: &str,
        input: &Value,
        token: Option<&str>,
    ) -> Approval {
        self.take_grant(root, conversation, tool, input, token).0
    }

    /// [`Approvals::take`], and whether the token granted the network.
    pub fn take_grant(
        &mut self,
        root: &ProjectRoot,
        conversation: Option<&str>,
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
        if self.covering(root, conversation, tool, input).is_some() {
            (Approval::Granted, false)
        } else {
            (Approval::None, false)
        }
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

    fn node(code: &str) -> Value {
        json!({"command": "node", "args": ["-e", code]})
    }

    fn exact(call: &Value) -> Grant {
        let args = call["args"].as_array().unwrap();
        Grant::Command {
            command: call["command"].as_str().unwrap().to_string(),
            args: args
                .iter()
                .map(|a| a.as_str().unwrap().to_string())
                .collect(),
            more: false,
        }
    }

    fn write(path: &str) -> Value {
        json!({"path": path, "content": "x"})
    }

    #[test]
    fn once_tokens_are_single_use_and_bound_to_the_input() {
        let (_dir, r) = root();
        let mut a = Approvals::default();
        let input = json!({"path": "a.txt", "content": "x"});
        let token = a.approve("write_file", &input, false);
        let other = json!({"path": "b.txt", "content": "x"});
        assert_eq!(
            a.take(&r, None, "write_file", &other, Some(&token)),
            Approval::None
        );
        assert_eq!(
            a.take(&r, None, "delete_file", &input, Some(&token)),
            Approval::None
        );
        let with_null = json!({"path": "a.txt", "content": "x", "extra": null});
        assert_eq!(
            a.take(&r, None, "write_file", &with_null, Some(&token)),
            Approval::Granted
        );
        assert_eq!(
            a.take(&r, None, "write_file", &input, Some(&token)),
            Approval::None
        );
        assert_eq!(
            a.take(&r, None, "write_file", &input, Some("forged")),
            Approval::None
        );
    }

    #[test]
    fn a_command_grant_covers_its_argv_and_nothing_else() {
        let (_dir, r) = root();
        let mut a = Approvals::default();
        let shown = node("console.log(1)");
        a.grant(&r, "c1", "exec_shell", &shown, exact(&shown))
            .unwrap();
        assert!(a.covering(&r, Some("c1"), "exec_shell", &shown).is_some());
        // The same program with other code, other or more arguments: asked.
        for other in [
            node("require('fs').rmSync('src',{recursive:true})"),
            json!({"command": "node", "args": ["-e", "console.log(1)", "x"]}),
            json!({"command": "node", "args": ["-e"]}),
            json!({"command": "node", "args": ["tick.js"]}),
            json!({"command": "npm", "args": ["-e", "console.log(1)"]}),
        ] {
            assert!(
                a.covering(&r, Some("c1"), "exec_shell", &other).is_none(),
                "{other}"
            );
            assert_eq!(
                a.take(&r, Some("c1"), "exec_shell", &other, None),
                Approval::None
            );
        }
        // The timeout or background do not change what runs.
        let later = json!({"command": "node", "args": ["-e", "console.log(1)"], "timeout_secs": 5});
        assert_eq!(
            a.take(&r, Some("c1"), "exec_shell", &later, None),
            Approval::Granted
        );
    }

    #[test]
    fn a_pattern_covers_what_it_shows_and_must_cover_its_own_call() {
        let (_dir, r) = root();
        let mut a = Approvals::default();
        let test = json!({"command": "cargo", "args": ["test", "-p", "a"]});
        let pattern = Grant::Command {
            command: "cargo".into(),
            args: vec!["test".into()],
            more: true,
        };
        a.grant(&r, "c1", "exec_shell", &test, pattern).unwrap();
        let other = json!({"command": "cargo", "args": ["test", "--lib"]});
        assert!(a.covering(&r, Some("c1"), "exec_shell", &other).is_some());
        let run = json!({"command": "cargo", "args": ["run"]});
        assert!(a.covering(&r, Some("c1"), "exec_shell", &run).is_none());
        // A pattern that does not cover the call it comes with is refused.
        let wrong = Grant::Command {
            command: "cargo".into(),
            args: vec!["build".into()],
            more: true,
        };
        let err = a.grant(&r, "c1", "exec_shell", &test, wrong).unwrap_err();
        assert_eq!(err.code, corral_tools::ErrorCode::InvalidInput);
        let empty = Grant::Command {
            command: String::new(),
            args: vec![],
            more: true,
        };
        assert!(a.grant(&r, "c1", "exec_shell", &test, empty).is_err());
        // A command grant is for commands only.
        let as_write = Grant::Command {
            command: "x".into(),
            args: vec![],
            more: true,
        };
        assert!(a
            .grant(&r, "c1", "write_file", &write("x"), as_write)
            .is_err());
    }

    #[test]
    fn a_path_grant_covers_that_file_for_that_tool_only() {
        let (dir, r) = root();
        let mut a = Approvals::default();
        let grant = Grant::Path {
            tool: "write_file".into(),
            path: "./notes.txt".into(),
        };
        let entry = a
            .grant(&r, "c1", "write_file", &write("notes.txt"), grant)
            .unwrap();
        assert_eq!(
            entry.grant,
            Grant::Path {
                tool: "write_file".into(),
                path: "notes.txt".into()
            },
            "held as the normalized path"
        );
        let again = json!({"path": "notes.txt", "content": "other"});
        assert!(a.covering(&r, Some("c1"), "write_file", &again).is_some());
        for other in ["src/greet.js", "notes.txt.bak", "src/notes.txt"] {
            assert!(
                a.covering(&r, Some("c1"), "write_file", &write(other))
                    .is_none(),
                "{other}"
            );
        }
        let edit = json!({"path": "notes.txt", "old_string": "a", "new_string": "b"});
        assert!(a.covering(&r, Some("c1"), "edit_file", &edit).is_none());
        assert!(a
            .covering(&r, Some("c1"), "delete_file", &json!({"path": "notes.txt"}))
            .is_none());

        // notes.txt swapped for a link to another file: no longer what was granted.
        std::fs::create_dir(dir.path().join("src")).unwrap();
        std::fs::write(dir.path().join("src/greet.js"), "x").unwrap();
        std::os::unix::fs::symlink("src/greet.js", dir.path().join("notes.txt")).unwrap();
        assert!(a.covering(&r, Some("c1"), "write_file", &again).is_none());

        // A path grant must name the call's own path.
        let elsewhere = Grant::Path {
            tool: "write_file".into(),
            path: "a.txt".into(),
        };
        assert!(a
            .grant(&r, "c1", "write_file", &write("b.txt"), elsewhere)
            .is_err());
        let outside = Grant::Path {
            tool: "write_file".into(),
            path: "../x".into(),
        };
        assert!(a
            .grant(&r, "c1", "write_file", &write("../x"), outside)
            .is_err());
    }

    #[test]
    fn a_folder_grant_covers_what_is_inside_it() {
        let (dir, r) = root();
        std::fs::create_dir_all(dir.path().join("src/lib")).unwrap();
        std::fs::create_dir(dir.path().join("srcs")).unwrap();
        std::os::unix::fs::symlink("..", dir.path().join("src/up")).unwrap();
        let mut a = Approvals::default();
        let grant = Grant::Folder {
            tool: "write_file".into(),
            folder: "src".into(),
        };
        a.grant(&r, "c1", "write_file", &write("src/lib/a.js"), grant)
            .unwrap();
        for inside in ["src/a.js", "src/lib/b.js", "src/new/c.js"] {
            assert!(
                a.covering(&r, Some("c1"), "write_file", &write(inside))
                    .is_some(),
                "{inside}"
            );
        }
        // Beside it, by a look-alike prefix, or out of it through a link: asked.
        for outside in ["srcs/a.js", "a.js", "src/up/a.js", "src/../a.js"] {
            assert!(
                a.covering(&r, Some("c1"), "write_file", &write(outside))
                    .is_none(),
                "{outside}"
            );
        }
        // The picked folder must hold the call's path.
        let beside = Grant::Folder {
            tool: "write_file".into(),
            folder: "srcs".into(),
        };
        assert!(a
            .grant(&r, "c1", "write_file", &write("src/a.js"), beside)
            .is_err());
    }

    #[test]
    fn grants_belong_to_their_conversation_and_are_listed_revoked_and_ended() {
        let (_dir, r) = root();
        let mut a = Approvals::default();
        let shown = node("console.log(1)");
        let first = a
            .grant(&r, "c1", "exec_shell", &shown, exact(&shown))
            .unwrap();
        let file = Grant::Path {
            tool: "write_file".into(),
            path: "notes.txt".into(),
        };
        let second = a
            .grant(&r, "c1", "write_file", &write("notes.txt"), file)
            .unwrap();
        // The same grant twice is held once.
        let same = a
            .grant(&r, "c1", "exec_shell", &shown, exact(&shown))
            .unwrap();
        assert_eq!(same, first);
        assert_eq!(a.grants("c1"), vec![first.clone(), second.clone()]);

        // Another conversation, or none named, has none of them.
        assert!(a.grants("c2").is_empty());
        assert!(a.covering(&r, Some("c2"), "exec_shell", &shown).is_none());
        assert!(a.covering(&r, None, "exec_shell", &shown).is_none());
        assert_eq!(
            a.take(&r, Some("c2"), "exec_shell", &shown, None),
            Approval::None
        );
        assert!(a
            .grant(&r, "", "exec_shell", &shown, exact(&shown))
            .is_err());

        a.revoke("c1", &first.id);
        assert_eq!(a.grants("c1"), vec![second.clone()]);
        assert_eq!(
            a.take(&r, Some("c1"), "exec_shell", &shown, None),
            Approval::None
        );
        assert!(a
            .covering(&r, Some("c1"), "write_file", &write("notes.txt"))
            .is_some());

        a.end("c1");
        assert!(a.grants("c1").is_empty());
        assert!(a
            .covering(&r, Some("c1"), "write_file", &write("notes.txt"))
            .is_none());
    }

    #[test]
    fn a_call_grant_is_that_very_input_and_mcp_ones_go_with_their_servers() {
        let (_dir, r) = root();
        let mut a = Approvals::default();
        let input = json!({"text": "a"});
        let grant = Grant::Call {
            tool: "srv__echo".into(),
            input: input.clone(),
        };
        a.grant(&r, "c1", "srv__echo", &input, grant).unwrap();
        assert!(a
            .covering(
                &r,
                Some("c1"),
                "srv__echo",
                &json!({"text": "a", "x": null})
            )
            .is_some());
        assert!(a
            .covering(&r, Some("c1"), "srv__echo", &json!({"text": "b"}))
            .is_none());
        assert!(a.covering(&r, Some("c1"), "srv__other", &input).is_none());
        a.forget_mcp();
        assert!(a.grants("c1").is_empty());
    }

    #[test]
    fn only_a_once_token_given_with_network_carries_it() {
        let (_dir, r) = root();
        let mut a = Approvals::default();
        let call = json!({"command": "npm", "args": ["ci"]});
        let token = a.approve("exec_shell", &call, true);
        assert_eq!(
            a.take_grant(&r, None, "exec_shell", &call, Some(&token)),
            (Approval::Granted, true)
        );
        a.grant(&r, "c1", "exec_shell", &call, exact(&call))
            .unwrap();
        // The grant covers the command, without the network.
        assert_eq!(
            a.take_grant(&r, Some("c1"), "exec_shell", &call, None),
            (Approval::Granted, false)
        );
        let token = a.approve("exec_shell", &call, false);
        assert_eq!(
            a.take_grant(&r, None, "exec_shell", &call, Some(&token)),
            (Approval::Granted, false)
        );
    }

    #[test]
    fn nothing_on_a_secret_is_granted_beyond_the_call() {
        let (dir, r) = root();
        let mut a = Approvals::default();
        let secret = json!({"path": ".env", "content": "KEY=2\n"});
        let grant = Grant::Path {
            tool: "write_file".into(),
            path: ".env".into(),
        };
        assert!(a.grant(&r, "c1", "write_file", &secret, grant).is_err());
        let cp = json!({"command": "cp", "args": [".env", "leak.txt"]});
        assert!(a.grant(&r, "c1", "exec_shell", &cp, exact(&cp)).is_err());

        // A folder grant does not reach the secrets inside it.
        let all = Grant::Folder {
            tool: "write_file".into(),
            folder: ".".into(),
        };
        a.grant(&r, "c1", "write_file", &write("a.txt"), all)
            .unwrap();
        assert!(a
            .covering(&r, Some("c1"), "write_file", &write("b.txt"))
            .is_some());
        for path in [
            ".env",
            "config/.env.local",
            "certs/server.pem",
            "keys\\id_rsa",
            "api-token.txt",
        ] {
            assert!(
                a.covering(&r, Some("c1"), "write_file", &write(path))
                    .is_none(),
                "{path}"
            );
        }
        // Nor a link to one.
        std::fs::write(dir.path().join(".env"), "KEY=1\n").unwrap();
        std::os::unix::fs::symlink(".env", dir.path().join("notes.txt")).unwrap();
        assert!(a
            .covering(&r, Some("c1"), "write_file", &write("notes.txt"))
            .is_none());

        // A pattern does not reach a command naming a secret.
        let pattern = Grant::Command {
            command: "cp".into(),
            args: vec![],
            more: true,
        };
        let copy = json!({"command": "cp", "args": ["a", "b"]});
        a.grant(&r, "c1", "exec_shell", &copy, pattern).unwrap();
        assert!(a.covering(&r, Some("c1"), "exec_shell", &cp).is_none());

        // A once token for exactly that secret-like call still works, once.
        let token = a.approve("write_file", &secret, false);
        assert_eq!(
            a.take(&r, None, "write_file", &secret, Some(&token)),
            Approval::Granted
        );
        assert_eq!(
            a.take(&r, None, "write_file", &secret, Some(&token)),
            Approval::None
        );
    }
}
