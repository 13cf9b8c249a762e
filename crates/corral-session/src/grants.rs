//! What "allow in this conversation" covers: exactly what the user was
//! shown and chose, never a tool or a program as a whole. A command grant
//! is its argv, or a pattern the user saw and edited (these words, then
//! any further arguments); a path grant is one file, or a folder the user
//! picked, judged both by the path as written and by where it really
//! leads, as located when the grant was given (a file later swapped for a
//! link elsewhere is no longer covered). Anything else is that very call.
//!
//! What the window may offer is decided here too, beside what a grant
//! covers ([`choices`]): the grant of this very call, the folders a path
//! grant may widen to, the pattern proposed for a command and the patterns
//! that cover it, each one [`Held::for_call`] takes for this call. So is
//! whether a hook's `allow` may stand for the user's answer
//! ([`CallCheck::hook_may_answer`]). The window only shows them.

use corral_tools::dispatch::PolicyCheck;
use corral_tools::policy::Decision;
use corral_tools::shell::SavedRule;
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
    /// It asks every time (a secret-like file, the agent's configuration
    /// or another program's auto-run file, git writing its own folder):
    /// approved one call at a time, never granted for the conversation or
    /// saved as a rule.
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

    /// Whether a PreToolUse hook's `allow` may stand for the user's "once":
    /// only for the question the mode asks, never for one asked every time
    /// (a secret-like file, the agent's configuration, a file another
    /// program runs by itself) nor about the network, which only the user
    /// answers.
    pub fn hook_may_answer(&self) -> bool {
        matches!(self.check.decision, Decision::Ask { .. })
            && !self.one_at_a_time
            && !self.check.network
    }
}

/// What "allow in this conversation" may grant for a call, each one a
/// grant [`Held::for_call`] takes for it. All empty for a call approved
/// one at a time.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Choices {
    /// The grant of this very call: its argv, its path, or its input.
    /// None for a path reached through a link.
    pub exact: Option<Grant>,
    /// The folders a path grant may widen to, nearest first, ending with
    /// `.` (the whole project); only `.` where a link lies on the way.
    pub folders: Vec<String>,
    /// The first part of the path that is a link (`vendor/pkg`), when one
    /// is: neither the file nor its folders are offered.
    pub link: Option<String>,
    /// For a command: the pattern proposed for editing, the words a saved
    /// rule would take ([`SavedRule::proposed`]) then any further
    /// arguments (`npm test *`).
    pub pattern: Option<Grant>,
    /// For a command: the patterns that cover it, its argv as it is and
    /// its first words then any further arguments, shortest first, as
    /// many as [`PATTERN_WORDS_BYTES`] holds (and the proposed one). An
    /// edited pattern covers the call when it is one of them.
    pub patterns: Vec<Grant>,
}

/// How many bytes of words the patterns of a command's choices hold in
/// all, beyond its own argv: a call of thousands of arguments is not sent
/// back thousands of times.
pub const PATTERN_WORDS_BYTES: usize = 64 * 1024;

/// What may be granted for this call (see [`Choices`]); `rule` is the
/// rule "always allow" would propose for a command.
pub fn choices(root: &ProjectRoot, call: &CallFacts<'_>, rule: Option<&SavedRule>) -> Choices {
    if call.secret {
        return Choices::default();
    }
    let given = |grant: Grant| {
        Held::for_call(root, call, grant)
            .ok()
            .map(|held| held.entry.grant)
    };
    if let Some((program, args)) = call.command {
        let command = |args: &[String], more: bool| Grant::Command {
            command: program.to_string(),
            args: args.to_vec(),
            more,
        };
        let exact = given(command(args, false));
        let pattern = rule.and_then(|rule| {
            given(Grant::Command {
                command: rule.program.clone(),
                args: rule.args.clone(),
                more: true,
            })
        });
        let mut patterns: Vec<Grant> = exact.iter().cloned().collect();
        // Each word counts its separator too, so empty words add up.
        let (mut words, mut bytes) = (0, 0);
        for kept in 0..=args.len() {
            if let Some(word) = kept.checked_sub(1).and_then(|last| args.get(last)) {
                words += word.len() + 1;
            }
            bytes += words;
            if bytes > PATTERN_WORDS_BYTES {
                break;
            }
            patterns.extend(given(command(&args[..kept], true)));
        }
        if let Some(proposed) = pattern.as_ref().filter(|p| !patterns.contains(p)) {
            patterns.push(proposed.clone());
        }
        return Choices {
            exact,
            pattern,
            patterns,
            ..Choices::default()
        };
    }
    match call.paths.first().filter(|_| call.registry) {
        Some(path) => {
            let tool = call.tool.to_string();
            let link = link_on_the_way(root, path);
            let exact = match link {
                Some(_) => None,
                None => given(Grant::Path {
                    tool: tool.clone(),
                    path: path.clone(),
                }),
            };
            // Through a link, only the whole project holds the path
            // wherever it leads.
            let mut places = vec![RelPath::root()];
            if let (None, Ok(lexical)) = (&link, root.resolve(path)) {
                places = folders_of(&lexical);
            }
            let folders = places
                .into_iter()
                .filter_map(|folder| {
                    given(Grant::Folder {
                        tool: tool.clone(),
                        folder: folder.display(),
                    })
                })
                .filter_map(|grant| match grant {
                    Grant::Folder { folder, .. } => Some(folder),
                    _ => None,
                })
                .collect();
            Choices {
                exact,
                folders,
                link,
                ..Choices::default()
            }
        }
        None => Choices {
            exact: given(Grant::Call {
                tool: call.tool.to_string(),
                input: call.input.clone(),
            }),
            ..Choices::default()
        },
    }
}

/// The folders of a path, nearest first, ending with the root.
fn folders_of(path: &RelPath) -> Vec<RelPath> {
    let mut folders = Vec::new();
    let mut at = path.clone();
    while !at.is_root() {
        at = at.parent();
        folders.push(at.clone());
    }
    folders
}

/// The first part of `path`, as its text names it, that is a link
/// (`vendor/pkg`); none when every part on the way is a real folder, or
/// is not created yet.
fn link_on_the_way(root: &ProjectRoot, path: &str) -> Option<String> {
    let lexical = root.resolve(path).ok()?;
    let mut at = std::path::PathBuf::new();
    for part in lexical.as_path().components() {
        at.push(part);
        let meta = root.dir().symlink_metadata(&at).ok()?;
        if meta.is_symlink() {
            return RelPath::from_resolved(&at).ok().map(|rel| rel.display());
        }
        if !meta.is_dir() {
            return None;
        }
    }
    None
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

    /// The grant as it will be held for this call: it must fit the call's
    /// tool and cover the call ([`Held::fits`], [`Held::covers`]); a call
    /// that touches a secret is the caller's to keep out.
    pub fn for_call(root: &ProjectRoot, call: &CallFacts<'_>, grant: Grant) -> Result<Held, Error> {
        let mut held = Held::new(root, grant)?;
        held.server = !call.registry;
        if !held.fits(call) || !held.covers(root, call) {
            return Err(Error::invalid_input(format!(
                "the grant does not cover the `{}` call it was given for",
                call.tool
            )));
        }
        Ok(held)
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

#[cfg(test)]
mod tests {
    // Test fixtures in temporary folders, not a project's files.
    #![allow(clippy::unwrap_used, clippy::disallowed_methods)]
    use super::*;
    use corral_tools::dispatch::{self, CallContext};
    use corral_tools::shell::ExecShellInput;
    use serde_json::json;

    fn project() -> (tempfile::TempDir, ProjectRoot) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("src/lib")).unwrap();
        std::fs::write(dir.path().join("src/greet.js"), "hi").unwrap();
        let root = ProjectRoot::open(dir.path()).unwrap();
        (dir, root)
    }

    /// `f` of a call's facts as a ticket keeps them (a tool not in the
    /// registry stands for an MCP server's).
    fn facts<R>(
        root: &ProjectRoot,
        tool: &str,
        input: Value,
        f: impl FnOnce(&CallFacts<'_>) -> R,
    ) -> R {
        let Ok(registered) = dispatch::tool(tool) else {
            return f(&CallFacts {
                tool,
                input: &input,
                registry: false,
                paths: &[],
                command: None,
                secret: false,
            });
        };
        let parsed = registered.parse(&input).unwrap();
        let assessed = registered
            .assess_parsed(root, &parsed, &CallContext::default(), false)
            .unwrap();
        let command = parsed
            .get::<ExecShellInput>()
            .map(|c| (c.command.as_str(), c.args.as_slice()));
        f(&CallFacts {
            tool,
            input: &input,
            registry: true,
            paths: &assessed.paths,
            command,
            secret: dispatch::asks_every_time(root, &assessed),
        })
    }

    fn choices_of(root: &ProjectRoot, tool: &str, input: Value) -> Choices {
        let rule = dispatch::tool(tool)
            .ok()
            .and_then(|t| t.parse(&input).ok())
            .and_then(|p| p.get::<ExecShellInput>().map(SavedRule::proposed));
        facts(root, tool, input, |call| choices(root, call, rule.as_ref()))
    }

    fn shell(command: &str, args: &[&str]) -> Value {
        json!({"command": command, "args": args})
    }

    fn pattern(command: &str, args: &[&str], more: bool) -> Grant {
        Grant::Command {
            command: command.into(),
            args: args.iter().map(|a| a.to_string()).collect(),
            more,
        }
    }

    fn check(decision: Decision, network: bool, secret: bool) -> CallCheck {
        let check = PolicyCheck {
            decision,
            preview: None,
            preview_error: None,
            rule: None,
            network,
        };
        CallCheck::new(check, None, secret)
    }

    #[test]
    fn a_hooks_allow_stands_only_for_the_modes_own_question() {
        let ask = || Decision::Ask {
            reason: "write_file changes `a`".into(),
        };
        assert!(check(ask(), false, false).hook_may_answer());
        // One at a time (a secret, the agent's configuration): the user's.
        assert!(!check(ask(), false, true).hook_may_answer());
        // The network: the user's, call by call.
        assert!(!check(ask(), true, false).hook_may_answer());
        // Nothing to answer, or nothing that may be answered.
        assert!(!check(Decision::Allow, false, false).hook_may_answer());
        let deny = Decision::Deny {
            reason: "no".into(),
        };
        assert!(!check(deny, false, false).hook_may_answer());
    }

    #[test]
    fn a_path_offers_itself_and_its_own_folders_nearest_first_then_the_project() {
        let (_dir, root) = project();
        let write =
            |path: &str| choices_of(&root, "write_file", json!({"path": path, "content": "x"}));
        let got = write("./src/lib/../ui/a.js");
        assert_eq!(
            got.exact,
            Some(Grant::Path {
                tool: "write_file".into(),
                path: "src/ui/a.js".into()
            })
        );
        assert_eq!(got.folders, ["src/ui", "src", "."]);
        assert_eq!(got.link, None);
        assert!(got.pattern.is_none() && got.patterns.is_empty());
        assert_eq!(write("notes.txt").folders, ["."]);
        // Folders not created yet are the path's own too.
        assert_eq!(write("src/new/deep.js").folders, ["src/new", "src", "."]);
    }

    #[test]
    fn a_link_on_the_way_offers_only_the_whole_project() {
        let (dir, root) = project();
        std::fs::create_dir(dir.path().join("vendor")).unwrap();
        std::os::unix::fs::symlink("..", dir.path().join("vendor/pkg")).unwrap();
        std::os::unix::fs::symlink("src/greet.js", dir.path().join("hello.js")).unwrap();
        let write =
            |path: &str| choices_of(&root, "write_file", json!({"path": path, "content": "x"}));
        let through = write("vendor/pkg/src/greet.js");
        assert_eq!(through.link.as_deref(), Some("vendor/pkg"));
        assert_eq!(through.exact, None);
        assert_eq!(through.folders, ["."]);
        // The file itself a link.
        let linked = write("hello.js");
        assert_eq!(linked.link.as_deref(), Some("hello.js"));
        assert_eq!(
            (linked.exact, linked.folders),
            (None, vec![".".to_string()])
        );
        // What is offered is what is held: the project covers it.
        facts(
            &root,
            "write_file",
            json!({"path": "vendor/pkg/src/greet.js", "content": "x"}),
            |call| {
                let folder = |folder: &str| Grant::Folder {
                    tool: "write_file".into(),
                    folder: folder.into(),
                };
                assert!(Held::for_call(&root, call, folder(".")).is_ok());
                assert!(Held::for_call(&root, call, folder("vendor")).is_err());
            },
        );
    }

    #[test]
    fn the_proposed_pattern_takes_the_saved_rules_words_then_any_further_arguments() {
        let (_dir, root) = project();
        let proposed = |command: &str, args: &[&str]| {
            choices_of(&root, "exec_shell", shell(command, args)).pattern
        };
        // It stops at `--`, at a word that is not plain, and after two words.
        assert_eq!(
            proposed("npm", &["test", "--", "x"]),
            Some(pattern("npm", &["test"], true))
        );
        assert_eq!(
            proposed("node", &["-e", "console.log(1)"]),
            Some(pattern("node", &["-e"], true))
        );
        assert_eq!(
            proposed("cargo", &["test", "--lib", "x"]),
            Some(pattern("cargo", &["test", "--lib"], true))
        );
        assert_eq!(proposed("ls", &[]), Some(pattern("ls", &[], true)));
    }

    #[test]
    fn a_command_offers_its_argv_and_the_patterns_that_cover_it() {
        let (_dir, root) = project();
        let got = choices_of(
            &root,
            "exec_shell",
            shell("node", &["-e", "console.log(1)"]),
        );
        let exact = pattern("node", &["-e", "console.log(1)"], false);
        assert_eq!(got.exact.as_ref(), Some(&exact));
        assert_eq!(
            got.patterns,
            [
                exact,
                pattern("node", &[], true),
                pattern("node", &["-e"], true),
                pattern("node", &["-e", "console.log(1)"], true),
            ]
        );
        assert!(got.folders.is_empty() && got.link.is_none());
        // Each is what a grant of the conversation holds (`Approvals::grant`
        // takes it by `Held::for_call`); others are refused.
        facts(
            &root,
            "exec_shell",
            shell("node", &["-e", "console.log(1)"]),
            |call| {
                for offered in &got.patterns {
                    assert!(
                        Held::for_call(&root, call, offered.clone()).is_ok(),
                        "{offered:?}"
                    );
                }
                for refused in [
                    pattern("node", &["-e"], false),
                    pattern("node", &["-x"], true),
                    pattern("npm", &[], true),
                    pattern("node", &["-e", "console.log(1)", "x"], true),
                ] {
                    assert!(!got.patterns.contains(&refused));
                    assert!(Held::for_call(&root, call, refused).is_err());
                }
            },
        );
    }

    #[test]
    fn a_command_of_many_arguments_is_not_sent_back_many_times() {
        let (_dir, root) = project();
        let many: Vec<String> = (0..2_000).map(|_| String::new()).collect();
        let words: Vec<&str> = many.iter().map(String::as_str).collect();
        let got = choices_of(&root, "exec_shell", shell("echo", &words));
        let sent: usize = got
            .patterns
            .iter()
            .map(|p| match p {
                Grant::Command { args, .. } => args.len(),
                _ => 0,
            })
            .sum();
        assert!(sent <= PATTERN_WORDS_BYTES + many.len(), "{sent}");
        assert_eq!(got.patterns.first(), got.exact.as_ref());
        assert!(got.patterns.contains(&pattern("echo", &[], true)));
    }

    #[test]
    fn a_secret_is_offered_nothing_and_a_servers_tool_its_very_input() {
        let (dir, root) = project();
        std::fs::write(dir.path().join(".env"), "K=1").unwrap();
        assert_eq!(
            choices_of(&root, "read_file", json!({"path": ".env"})),
            Choices::default()
        );
        let wide = choices_of(
            &root,
            "write_file",
            json!({"path": ".claude/settings.json", "content": "{}"}),
        );
        assert_eq!(wide, Choices::default());
        assert_eq!(
            choices_of(&root, "exec_shell", shell("cat", &[".env"])),
            Choices::default()
        );
        let server = choices_of(&root, "srv__tool", json!({"path": "x", "n": null}));
        assert_eq!(
            server.exact,
            Some(Grant::Call {
                tool: "srv__tool".into(),
                input: json!({"path": "x"})
            })
        );
        assert!(server.folders.is_empty());
    }
}
