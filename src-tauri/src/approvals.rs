//! Approvals the user gave in the window. The UI asks the user, then calls
//! `approve_call`; the token it gets is good for that one call (same tool,
//! same input) once. A session grant covers the tool (for `exec_shell`, the
//! program) until the project closes. The LLM never sees or makes tokens.

use corral_tools::policy::Approval;
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

    /// Whether a session grant covers this call.
    pub fn covers(&self, tool: &str, input: &Value) -> bool {
        self.session.contains(&session_key(tool, input))
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

    /// Forgets everything (the project closed).
    pub fn clear(&mut self) {
        self.once.clear();
        self.session.clear();
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
        a.clear();
        assert_eq!(
            a.take("edit_file", &json!({"path": "b"}), None),
            Approval::None
        );
    }
}
