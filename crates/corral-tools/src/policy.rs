//! The approval policy: may this call run, must the user be asked, or is it
//! refused? Computed here, for every caller; the UI only asks the user, and
//! the LLM never grants anything.
//!
//! Hard rules (root confinement, `.git/`, the shell allowlist) are enforced
//! by the tools themselves and hold whatever this module decides.

use crate::error::{Error, ErrorCode, Result};
pub use corral_fs::autorun::auto_run;
pub use corral_fs::secret::is_secret_like;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// How risky a tool is; the policy starts from this.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum Risk {
    Read,
    Write,
    Shell,
}

/// How much the session lets the agent do without asking.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// Reads only: writes and shell are denied.
    ReadOnly,
    /// Writes and shell ask (the default).
    #[default]
    Ask,
    /// Writes run; shell asks unless read-only.
    AutoEdit,
    /// Everything runs, within the hard rules.
    FullAuto,
}

impl std::str::FromStr for Mode {
    type Err = Error;
    fn from_str(s: &str) -> Result<Mode> {
        serde_json::from_value(Value::String(s.to_string())).map_err(|_| {
            Error::invalid_input(format!("unknown mode `{s}`"))
                .hint("Use one of read_only, ask, auto_edit, full_auto.")
                .detail("mode", s)
        })
    }
}

/// The decision for one call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[serde(tag = "decision", rename_all = "snake_case")]
#[ts(rename = "PolicyDecision")]
pub enum Decision {
    Allow,
    Ask { reason: String },
    Deny { reason: String },
}

impl Decision {
    /// The stricter of two decisions: deny over ask over allow (the first
    /// of two of a kind).
    pub fn stricter(self, other: Decision) -> Decision {
        let rank = |d: &Decision| match d {
            Decision::Allow => 0,
            Decision::Ask { .. } => 1,
            Decision::Deny { .. } => 2,
        };
        if rank(&other) > rank(&self) {
            other
        } else {
            self
        }
    }
}

/// Whether the user approved this call (the UI after asking, or
/// `corral-cli --approve`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Approval {
    #[default]
    None,
    Granted,
}

/// Optional per-project boundaries set by the user (never by the project's
/// own files, which the agent could edit): a read-only reviewer has
/// `writable: Some(vec![])`, a tests-only agent `writable: Some(vec!["tests"])`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Boundaries {
    /// If set, writes are allowed only beneath these paths.
    #[serde(default)]
    pub writable: Option<Vec<String>>,
    /// Paths no tool may touch.
    #[serde(default)]
    pub blocked: Vec<String>,
}

impl Boundaries {
    /// The boundaries with every path normalized against the root
    /// (`./secrets`, `secrets/`, `/abs/root/secrets` are all `secrets`), as
    /// the paths they are compared with are. A path outside the root is an
    /// error, not a boundary that silently matches nothing.
    pub fn normalized(self, root: &crate::root::ProjectRoot) -> Result<Boundaries> {
        let norm = |paths: Vec<String>| -> Result<Vec<String>> {
            paths
                .iter()
                .map(|p| root.resolve(p).map(|rel| rel.display()))
                .collect()
        };
        Ok(Boundaries {
            writable: self.writable.map(norm).transpose()?,
            blocked: norm(self.blocked)?,
        })
    }

    /// Whether `path` (relative to the root) is beneath a blocked path.
    pub fn blocks(&self, path: &str) -> bool {
        self.blocked.iter().any(|b| beneath(path, b))
    }
}

/// Decides one call. `subject_path` is the normalized path the call works
/// on (if any); `shell_read_only` says whether a shell call is on the
/// read-only table.
pub fn decide(
    risk: Risk,
    tool: &str,
    subject_path: Option<&str>,
    shell_read_only: bool,
    mode: Mode,
    boundaries: &Boundaries,
) -> Decision {
    if let Some(path) = subject_path {
        if let Some(blocked) = boundaries.blocked.iter().find(|b| beneath(path, b)) {
            return Decision::Deny {
                reason: format!("`{path}` is inside the blocked path `{blocked}`"),
            };
        }
        if risk == Risk::Write {
            if let Some(writable) = &boundaries.writable {
                if !writable.iter().any(|w| beneath(path, w)) {
                    return Decision::Deny {
                        reason: format!("`{path}` is outside this session's writable paths"),
                    };
                }
            }
        }
    }
    // A command's effects cannot be held to paths: with blocked paths no
    // command runs, with writable paths only read-only ones do.
    if risk == Risk::Shell {
        if !boundaries.blocked.is_empty() {
            return Decision::Deny {
                reason: "this session has blocked paths, and a command cannot be held to them"
                    .to_string(),
            };
        }
        if boundaries.writable.is_some() && !shell_read_only {
            return Decision::Deny {
                reason: "this session may write only in its writable paths, and a command that changes things cannot be held to them".to_string(),
            };
        }
    }
    let secret = subject_path.is_some_and(is_secret_like);
    let auto_run = subject_path.and_then(auto_run);
    match (risk, mode) {
        (Risk::Read, Mode::ReadOnly) if secret => Decision::Deny {
            reason: format!("`{}` looks like a secret", subject_path.unwrap_or_default()),
        },
        (Risk::Read, _) if secret => Decision::Ask {
            reason: format!(
                "{tool} reads `{}`, which looks like a secret",
                subject_path.unwrap_or_default()
            ),
        },
        (Risk::Read, _) => Decision::Allow,
        (Risk::Write | Risk::Shell, Mode::ReadOnly) => Decision::Deny {
            reason: format!("{tool} is not allowed in read-only mode"),
        },
        (Risk::Write, _) if secret => Decision::Ask {
            reason: format!(
                "{tool} changes `{}`, which looks like a secret",
                subject_path.unwrap_or_default()
            ),
        },
        (Risk::Write, _) if auto_run.is_some() => Decision::Ask {
            reason: format!(
                "{tool} changes `{}`, which another program runs or loads by itself: {}",
                subject_path.unwrap_or_default(),
                auto_run.map_or("", |row| row.runs_it)
            ),
        },
        (Risk::Write, Mode::Ask) => Decision::Ask {
            reason: format!("{tool} changes `{}`", subject_path.unwrap_or("a file")),
        },
        (Risk::Write, Mode::AutoEdit | Mode::FullAuto) => Decision::Allow,
        (Risk::Shell, Mode::FullAuto) => Decision::Allow,
        (Risk::Shell, Mode::Ask | Mode::AutoEdit) if shell_read_only => Decision::Allow,
        (Risk::Shell, Mode::Ask | Mode::AutoEdit) => Decision::Ask {
            reason: "running a command".to_string(),
        },
    }
}

/// Turns a decision and the approval into run-or-error.
pub fn enforce(decision: &Decision, approval: Approval, tool: &str) -> Result<()> {
    match (decision, approval) {
        (Decision::Allow, _) | (Decision::Ask { .. }, Approval::Granted) => Ok(()),
        (Decision::Ask { reason }, Approval::None) => Err(Error::new(
            ErrorCode::ApprovalRequired,
            format!("{tool} needs the user's approval: {reason}"),
        )
        .detail("tool", tool)
        .detail("reason", reason.as_str())),
        (Decision::Deny { reason }, _) => Err(Error::new(
            ErrorCode::Denied,
            format!("{tool} was refused: {reason}"),
        )
        .detail("tool", tool)
        .detail("reason", reason.as_str())),
    }
}

/// Whether `path` is `base` or beneath it (component-wise).
fn beneath(path: &str, base: &str) -> bool {
    let base = base.trim_matches('/');
    base.is_empty() || base == "." || path == base || path.starts_with(&format!("{base}/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(risk: Risk, path: Option<&str>, ro: bool, mode: Mode) -> Decision {
        decide(risk, "tool", path, ro, mode, &Boundaries::default())
    }
    fn kind(d: &Decision) -> &'static str {
        match d {
            Decision::Allow => "allow",
            Decision::Ask { .. } => "ask",
            Decision::Deny { .. } => "deny",
        }
    }

    #[test]
    fn decision_table() {
        use Mode::*;
        use Risk::*;
        // (risk, path, shell read-only, mode, expected)
        let rows: &[(Risk, Option<&str>, bool, Mode, &str)] = &[
            (Read, Some("src/a.rs"), false, ReadOnly, "allow"),
            (Read, Some("src/a.rs"), false, Ask, "allow"),
            (Read, Some(".env"), false, ReadOnly, "deny"),
            (Read, Some(".env.local"), false, Ask, "ask"),
            (Read, Some("certs/server.pem"), false, FullAuto, "ask"),
            (Write, Some("src/a.rs"), false, ReadOnly, "deny"),
            (Write, Some("src/a.rs"), false, Ask, "ask"),
            (Write, Some("src/a.rs"), false, AutoEdit, "allow"),
            (Write, Some("src/a.rs"), false, FullAuto, "allow"),
            (Write, Some("config/secrets.yaml"), false, FullAuto, "ask"),
            (Write, Some("id_rsa.pub"), false, AutoEdit, "ask"),
            (Write, Some(".claude/settings.json"), false, FullAuto, "ask"),
            (
                Write,
                Some(".claude/settings.local.json"),
                false,
                AutoEdit,
                "ask",
            ),
            (
                Write,
                Some(".claude/commands/review.md"),
                false,
                FullAuto,
                "ask",
            ),
            (
                Write,
                Some(".claude/skills/pdf/SKILL.md"),
                false,
                FullAuto,
                "ask",
            ),
            (
                Write,
                Some(".claude/agents/explore.md"),
                false,
                FullAuto,
                "ask",
            ),
            (Write, Some(".codex/config.toml"), false, FullAuto, "ask"),
            (Write, Some(".claude"), false, FullAuto, "ask"),
            (
                Write,
                Some(".claude/settings.json"),
                false,
                ReadOnly,
                "deny",
            ),
            (Write, Some(".claudex/a.md"), false, FullAuto, "allow"),
            (
                Write,
                Some("pkg/.claude/settings.json"),
                false,
                FullAuto,
                "ask",
            ),
            (Read, Some(".claude/settings.json"), false, Ask, "allow"),
            // Other programs' auto-run files, at any depth, in every mode.
            (Write, Some(".vscode/tasks.json"), false, AutoEdit, "ask"),
            (Write, Some(".mcp.json"), false, FullAuto, "ask"),
            (Write, Some(".cursor/mcp.json"), false, AutoEdit, "ask"),
            (Write, Some(".gemini/settings.json"), false, FullAuto, "ask"),
            (
                Write,
                Some("pkg/.zed/settings.json"),
                false,
                FullAuto,
                "ask",
            ),
            (Write, Some(".envrc"), false, AutoEdit, "ask"),
            (
                Write,
                Some(".devcontainer/devcontainer.json"),
                false,
                FullAuto,
                "ask",
            ),
            (
                Write,
                Some("src/.idea/workspace.xml"),
                false,
                AutoEdit,
                "ask",
            ),
            (Read, Some(".vscode/tasks.json"), false, Ask, "allow"),
            (Shell, None, true, ReadOnly, "deny"),
            (Shell, None, false, Ask, "ask"),
            (Shell, None, true, Ask, "allow"),
            (Shell, None, false, AutoEdit, "ask"),
            (Shell, None, true, AutoEdit, "allow"),
            (Shell, None, false, FullAuto, "allow"),
        ];
        for (risk, path, ro, mode, want) in rows {
            let got = d(*risk, *path, *ro, *mode);
            assert_eq!(
                kind(&got),
                *want,
                "{risk:?} {path:?} ro={ro} {mode:?}: {got:?}"
            );
        }
    }

    #[test]
    fn boundaries_block_and_limit_writes() {
        let b = Boundaries {
            writable: Some(vec!["tests".into()]),
            blocked: vec!["vendor".into()],
        };
        let run = |risk, path| kind(&decide(risk, "t", Some(path), false, Mode::FullAuto, &b));
        assert_eq!(run(Risk::Write, "tests/a.rs"), "allow");
        assert_eq!(run(Risk::Write, "src/a.rs"), "deny");
        assert_eq!(run(Risk::Write, "testsuite/a.rs"), "deny");
        assert_eq!(run(Risk::Read, "vendor/x.c"), "deny");
        assert_eq!(run(Risk::Read, "src/a.rs"), "allow");
    }

    #[test]
    fn enforce_needs_approval_for_ask() {
        let ask = Decision::Ask { reason: "r".into() };
        assert_eq!(
            enforce(&ask, Approval::None, "write_file")
                .unwrap_err()
                .code,
            ErrorCode::ApprovalRequired
        );
        assert!(enforce(&ask, Approval::Granted, "write_file").is_ok());
        let deny = Decision::Deny { reason: "r".into() };
        assert_eq!(
            enforce(&deny, Approval::Granted, "write_file")
                .unwrap_err()
                .code,
            ErrorCode::Denied
        );
    }
}
