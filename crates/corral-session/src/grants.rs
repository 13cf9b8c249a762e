//! What "allow in this conversation" covers: exactly what the user was
//! shown and chose, never a tool or a program as a whole. A command grant
//! is its argv, or a pattern the user saw and edited (these words, then
//! any further arguments); a path grant is one file, or a folder the user
//! picked, judged both by the path as written and by where it really
//! leads, as located when the grant was given (a file later swapped for a
//! link elsewhere is no longer covered). Anything else is that very call.

use corral_tools::dispatch::PolicyCheck;
use corral_tools::policy::Decision;
use corral_tools::{Error, ProjectRoot, RelPath};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// What one grant covers, as the user chose it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Grant {
    /// `exec_shell` of `command` with exactly `args`; with `more`, also
    /// with any arguments after them.
    Command {
        command: String,
        args: Vec<String>,
        #[serde(default)]
        more: bool,
    },
    /// `tool` on this one path.
    Path { tool: String, path: String },
    /// `tool` on any path inside this folder (`.`: the whole project).
    Folder { tool: String, folder: String },
    /// `tool` with exactly this input (null fields aside).
    Call {
        tool: String,
        #[ts(type = "Record<string, unknown>")]
        input: Value,
    },
}

/// A grant held for a conversation, with its id for the list and revoke.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
pub struct GrantEntry {
    pub id: String,
    pub grant: Grant,
}

/// `check_call`'s answer: the policy's, the conversation's grant that
/// let the call run without asking, and whether the call can only be
/// approved by itself.
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
pub struct CallCheck {
    #[serde(flatten)]
    pub check: PolicyCheck,
    /// The grant of the conversation that made it `allow`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub grant: Option<GrantEntry>,
    /// It touches a secret-like file: approved one call at a time, never
    /// granted for the conversation or saved as a rule.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    #[ts(as = "Option<bool>", optional)]
    pub one_at_a_time: bool,
}

impl CallCheck {
    /// The policy's check with the grant covering the call, if any: it
    /// turns an `ask` into `allow`, except for a call that asks for the
    /// network (granted call by call).
    pub fn new(check: PolicyCheck, covering: Option<GrantEntry>, secret: bool) -> CallCheck {
        let grants = matches!(check.decision, Decision::Ask { .. }) && !check.network;
        let grant = covering.filter(|_| grants);
        let mut check = check;
        if grant.is_some() {
            check.decision = Decision::Allow;
        }
        CallCheck {
            check,
            grant,
            one_at_a_time: secret,
        }
    }
}

/// What a grant is judged on: a call as checked, its input read once.
#[derive(Debug, Clone, Copy)]
pub struct CallFacts<'a> {
    pub tool: &'a str,
    /// Its input as the model sent it.
    pub input: &'a Value,
    /// A tool of Corral's registry (not of an MCP server).
    pub registry: bool,
    /// The paths it works on, as typed.
    pub paths: &'a [String],
    /// For a command: its program and arguments.
    pub command: Option<(&'a str, &'a [String])>,
    /// It touches a secret-like file (by a path, where one leads, or an
    /// argument naming one).
    pub secret: bool,
}

/// A grant as held: paths normalized, and where they led when granted.
#[derive(Debug, Clone)]
pub(crate) struct Held {
    pub entry: GrantEntry,
    /// For a path or folder: its normalized path and its real location.
    place: Option<(RelPath, RelPath)>,
    /// Given for a tool of one of the user's MCP servers: it goes when the
    /// servers are replaced, as a name may then stand for another tool.
    pub server: bool,
}

impl Held {
    /// The grant as it will be held in `root`: a path or folder normalized
    /// and located, the input of a call normalized. `invalid_input` for a
    /// grant that cannot be held (an empty program, a path outside).
    pub fn new(root: &ProjectRoot, grant: Grant) -> Result<Held, Error> {
        let (grant, place) = match grant {
            Grant::Command { command, .. } if command.is_empty() => {
                return Err(Error::invalid_input("a command grant needs a program"))
            }
            Grant::Path { tool, path } => {
                let place = located_where_shown(root, &path)?;
                let path = place.0.display();
                (Grant::Path { tool, path }, Some(place))
            }
            Grant::Folder { tool, folder } => {
                let place = located_where_shown(root, &folder)?;
                let folder = place.0.display();
                (Grant::Folder { tool, folder }, Some(place))
            }
            Grant::Call { tool, input } => {
                let input = normalize(&input);
                (Grant::Call { tool, input }, None)
            }
            command @ Grant::Command { .. } => (command, None),
        };
        let id = uuid::Uuid::new_v4().to_string();
        Ok(Held {
            entry: GrantEntry { id, grant },
            place,
            server: false,
        })
    }

    /// Whether this grant covers the call (a secret-like path aside: the
    /// caller keeps those out).
    pub fn covers(&self, root: &ProjectRoot, call: &CallFacts<'_>) -> bool {
        let tool = call.tool;
        match (&self.entry.grant, &self.place) {
            (
                Grant::Command {
                    command,
                    args,
                    more,
                },
                _,
            ) => call.command.is_some_and(|(program, given)| {
                program == command
                    && if *more {
                        given.starts_with(args)
                    } else {
                        given == args.as_slice()
                    }
            }),
            (Grant::Path { tool: granted, .. }, Some((path, real))) => {
                granted == tool
                    && all_paths(root, call, |lexical, located| {
                        lexical == path && located == real
                    })
            }
            (Grant::Folder { tool: granted, .. }, Some((folder, real))) => {
                granted == tool
                    && all_paths(root, call, |lexical, located| {
                        inside(lexical, folder) && inside(located, real)
                    })
            }
            (
                Grant::Call {
                    tool: granted,
                    input: granted_input,
                },
                _,
            ) => granted == tool && *granted_input == normalize(call.input),
            (Grant::Path { .. } | Grant::Folder { .. }, None) => false,
        }
    }

    /// Whether this grant may be given for this call: a command grant for
    /// a command, a path or folder grant for a registry tool with a path,
    /// a call grant for any other tool.
    pub fn fits(&self, call: &CallFacts<'_>) -> bool {
        let command = call.command.is_some();
        match &self.entry.grant {
            Grant::Command { .. } => command,
            Grant::Path { .. } | Grant::Folder { .. } => !command && call.registry,
            Grant::Call { .. } => !command,
        }
    }
}

/// The path normalized by its text and where it really leads (the part
/// not created yet joined on), or why it cannot be granted.
fn locate(root: &ProjectRoot, path: &str) -> Result<(RelPath, RelPath), Error> {
    let located = root.locate(path)?;
    let real = located.real_path().ok_or_else(|| {
        Error::invalid_input(format!("`{path}` cannot be located in the project"))
    })?;
    Ok((located.lexical, real))
}

/// [`locate`] for a path or folder to grant: the chooser shows it by its
/// name, so it must lead where its name says. One that a link leads
/// elsewhere (`vendor/pkg -> ..`) is refused, naming its real place.
fn located_where_shown(root: &ProjectRoot, path: &str) -> Result<(RelPath, RelPath), Error> {
    let (lexical, real) = locate(root, path)?;
    if lexical != real {
        return Err(Error::invalid_input(format!(
            "`{}` leads to `{}` through a link: a grant names a place by where it really is",
            lexical.display(),
            real.display()
        ))
        .hint("Grant the real place, or approve this call once."));
    }
    Ok((lexical, real))
}

/// Whether the call has paths and each of them, as written and where it
/// leads now, passes `ok`.
fn all_paths(
    root: &ProjectRoot,
    call: &CallFacts<'_>,
    ok: impl Fn(&RelPath, &RelPath) -> bool,
) -> bool {
    !call.paths.is_empty()
        && call
            .paths
            .iter()
            .all(|path| locate(root, path).is_ok_and(|(lexical, located)| ok(&lexical, &located)))
}

/// Whether `path` is `folder` or inside it, component by component.
fn inside(path: &RelPath, folder: &RelPath) -> bool {
    folder.is_root() || path.as_path().starts_with(folder.as_path())
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
