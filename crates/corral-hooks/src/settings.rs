//! The `hooks` of Claude Code's settings files:
//! `{"hooks": {"PreToolUse": [{"matcher": "Bash|Edit", "hooks":
//! [{"type": "command", "command": "...", "timeout": 60}]}]}}`.
//! Other keys of the file are not Corral's business and are ignored; an
//! event Corral does not raise is kept out, and a hook of another type
//! than `command` too.

use regex::Regex;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

/// The events Corral raises.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Deserialize, Serialize, ts_rs::TS)]
#[ts(rename = "HookEvent")]
pub enum Event {
    PreToolUse,
    PostToolUse,
    UserPromptSubmit,
    Stop,
    SessionStart,
    PreCompact,
}

impl Event {
    /// Its name in the settings and on a hook's stdin.
    pub fn name(self) -> &'static str {
        match self {
            Event::PreToolUse => "PreToolUse",
            Event::PostToolUse => "PostToolUse",
            Event::UserPromptSubmit => "UserPromptSubmit",
            Event::Stop => "Stop",
            Event::SessionStart => "SessionStart",
            Event::PreCompact => "PreCompact",
        }
    }

    /// Whether its matcher is matched against a tool's name.
    fn matches_tools(self) -> bool {
        matches!(self, Event::PreToolUse | Event::PostToolUse)
    }
}

/// Where a hook was set: the project's hooks run only once trusted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    User,
    Project,
}

/// One hook: its command (run by `sh -c`), time limit and matcher.
#[derive(Debug, Clone)]
pub struct Hook {
    pub event: Event,
    /// The matcher as written (empty: every tool).
    pub matcher: String,
    pub command: String,
    pub timeout_secs: u64,
    pub source: Source,
    pattern: Option<Regex>,
}

/// A hook's time limit when the settings give none (Claude Code's).
pub const DEFAULT_TIMEOUT_SECS: u64 = 60;
/// The longest a hook may run, whatever the settings say.
pub const MAX_TIMEOUT_SECS: u64 = 600;

impl Hook {
    /// Whether it runs for a tool of these names (Claude's and Corral's):
    /// an empty matcher or `*` matches every tool; otherwise the matcher is
    /// a regular expression matched against the whole name.
    pub fn matches(&self, names: &[&str]) -> bool {
        if !self.event.matches_tools() {
            return true;
        }
        match &self.pattern {
            None => true,
            Some(re) => names.iter().any(|n| re.is_match(n)),
        }
    }
}

/// The project's settings files that may hold hooks, relative to it, in
/// the order they are read.
pub const PROJECT_SETTINGS: [&str; 2] = [".claude/settings.json", ".claude/settings.local.json"];

/// The hooks of every source, in order (the user's first).
#[derive(Debug, Clone, Default)]
pub struct HookSet {
    pub hooks: Vec<Hook>,
    /// What could not be read, one line each (a bad file never stops the
    /// others).
    pub problems: Vec<String>,
    /// The project's settings files the user has not trusted as they are
    /// now: their hooks are left out until the user trusts this text.
    pub untrusted: Vec<Untrusted>,
}

/// A project's settings file whose hooks wait for the user's trust.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Untrusted {
    pub path: std::path::PathBuf,
    /// The file relative to the project (`.claude/settings.json`), as
    /// trust is kept.
    pub file: String,
    /// The exact text to trust: trust is keyed on it, and lapses when it
    /// changes.
    pub text: String,
}

#[derive(Deserialize)]
struct Group {
    #[serde(default)]
    matcher: String,
    #[serde(default)]
    hooks: Vec<Value>,
}

#[derive(Deserialize)]
struct CommandHook {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    command: String,
    timeout: Option<u64>,
}

impl HookSet {
    /// Adds the hooks of one settings file's text.
    pub fn add_text(&mut self, text: &str, source: Source, shown: &str) {
        let value: Value = match serde_json::from_str(text) {
            Ok(v) => v,
            Err(e) => return self.problems.push(format!("{shown}: not JSON ({e})")),
        };
        let Some(events) = value.get("hooks") else {
            return;
        };
        let events: BTreeMap<String, Vec<Group>> = match serde_json::from_value(events.clone()) {
            Ok(e) => e,
            Err(e) => return self.problems.push(format!("{shown}: hooks: {e}")),
        };
        for (name, groups) in events {
            let Ok(event) = serde_json::from_value::<Event>(Value::String(name.clone())) else {
                self.problems
                    .push(format!("{shown}: the event {name} is not raised by Corral"));
                continue;
            };
            for group in groups {
                let pattern = match group.matcher.as_str() {
                    "" | "*" => None,
                    m => match Regex::new(&format!("^(?:{m})$")) {
                        Ok(re) => Some(re),
                        Err(e) => {
                            self.problems
                                .push(format!("{shown}: {name}: the matcher {m:?}: {e}"));
                            continue;
                        }
                    },
                };
                for hook in group.hooks {
                    match serde_json::from_value::<CommandHook>(hook) {
                        Ok(h) if h.kind == "command" && !h.command.trim().is_empty() => {
                            self.hooks.push(Hook {
                                event,
                                matcher: group.matcher.clone(),
                                command: h.command,
                                timeout_secs: h
                                    .timeout
                                    .unwrap_or(DEFAULT_TIMEOUT_SECS)
                                    .clamp(1, MAX_TIMEOUT_SECS),
                                source,
                                pattern: pattern.clone(),
                            })
                        }
                        Ok(h) => self.problems.push(format!(
                            "{shown}: {name}: a hook of type {:?} without a command is not run",
                            h.kind
                        )),
                        Err(e) => self.problems.push(format!("{shown}: {name}: {e}")),
                    }
                }
            }
        }
    }

    /// The text of a settings file, if there is one.
    fn read(&mut self, path: &Path) -> Option<String> {
        // Settings files the user keeps, read where Claude Code reads them.
        #[allow(clippy::disallowed_methods)]
        match std::fs::read_to_string(path) {
            Ok(text) => Some(text),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => {
                self.problems.push(format!("{}: {e}", path.display()));
                None
            }
        }
    }

    /// The user's hooks (`~/.claude/settings.json`, when `home` is given)
    /// and the project's (`.claude/settings.json`, then
    /// `.claude/settings.local.json`), each of the project's only if
    /// `trusted(file, text)` says its exact text is; the others are listed
    /// in [`HookSet::untrusted`].
    pub fn load(
        project: &Path,
        home: Option<&Path>,
        trusted: &dyn Fn(&str, &str) -> bool,
    ) -> HookSet {
        let mut set = HookSet::default();
        if let Some(home) = home {
            let path = home.join(".claude/settings.json");
            if let Some(text) = set.read(&path) {
                set.add_text(&text, Source::User, &path.display().to_string());
            }
        }
        for name in PROJECT_SETTINGS {
            let path = project.join(name);
            let Some(text) = set.read(&path) else {
                continue;
            };
            if trusted(name, &text) {
                set.add_text(&text, Source::Project, name);
            } else {
                set.untrusted.push(Untrusted {
                    path,
                    file: name.to_string(),
                    text,
                });
            }
        }
        set
    }

    /// The hooks of `event` that match a tool of these names.
    pub fn matching<'a>(
        &'a self,
        event: Event,
        names: &'a [&'a str],
    ) -> impl Iterator<Item = &'a Hook> {
        self.hooks
            .iter()
            .filter(move |h| h.event == event && h.matches(names))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn claude_codes_format_is_read_and_matched() {
        let mut set = HookSet::default();
        set.add_text(
            r#"{"model": "x", "hooks": {
                "PreToolUse": [{"matcher": "Bash|Edit", "hooks": [
                    {"type": "command", "command": "check.sh", "timeout": 5}]}],
                "Stop": [{"hooks": [{"type": "command", "command": "done.sh"}]}],
                "Notification": [{"hooks": [{"type": "command", "command": "n.sh"}]}]
            }}"#,
            Source::Project,
            "s.json",
        );
        assert_eq!(set.hooks.len(), 2, "{:?}", set.problems);
        assert_eq!(set.hooks[0].timeout_secs, 5);
        assert_eq!(set.hooks[1].timeout_secs, DEFAULT_TIMEOUT_SECS);
        assert!(
            set.problems[0].contains("Notification"),
            "{:?}",
            set.problems
        );
        let pre = |names: &[&str]| set.matching(Event::PreToolUse, names).count();
        assert_eq!(pre(&["Bash", "exec_shell"]), 1);
        assert_eq!(pre(&["Edit", "edit_file"]), 1);
        assert_eq!(pre(&["Read", "read_file"]), 0);
        // The whole name: `Bash` is not `BashOutput`.
        assert_eq!(pre(&["BashOutput"]), 0);
        assert_eq!(set.matching(Event::Stop, &[]).count(), 1);
    }

    #[test]
    fn a_bad_file_or_matcher_is_a_problem_not_a_failure() {
        let mut set = HookSet::default();
        set.add_text("{", Source::User, "a.json");
        set.add_text(
            r#"{"hooks": {"PreToolUse": [{"matcher": "(", "hooks": [{"type": "command", "command": "x"}]}]}}"#,
            Source::User,
            "b.json",
        );
        set.add_text(
            r#"{"hooks": {"PreToolUse": [{"hooks": [{"type": "prompt", "prompt": "x"}]}]}}"#,
            Source::User,
            "c.json",
        );
        assert!(set.hooks.is_empty());
        assert_eq!(set.problems.len(), 3, "{:?}", set.problems);
    }

    #[test]
    fn a_projects_hooks_wait_for_trust_of_their_exact_text() {
        let project = tempfile::tempdir().unwrap();
        let home = tempfile::tempdir().unwrap();
        let hook = |cmd: &str| {
            format!(
                r#"{{"hooks": {{"Stop": [{{"hooks": [{{"type": "command", "command": "{cmd}"}}]}}]}}}}"#
            )
        };
        std::fs::create_dir_all(home.path().join(".claude")).unwrap();
        std::fs::write(home.path().join(".claude/settings.json"), hook("mine")).unwrap();
        std::fs::create_dir_all(project.path().join(".claude")).unwrap();
        let settings = project.path().join(".claude/settings.json");
        std::fs::write(&settings, hook("theirs")).unwrap();
        let trusted_text = hook("theirs");
        let trust = |_: &str, text: &str| text == trusted_text;

        let set = HookSet::load(project.path(), Some(home.path()), &|_, _| false);
        let commands: Vec<&str> = set.hooks.iter().map(|h| h.command.as_str()).collect();
        assert_eq!(commands, ["mine"]);
        assert_eq!(set.untrusted[0].text, hook("theirs"));

        let set = HookSet::load(project.path(), Some(home.path()), &trust);
        let commands: Vec<&str> = set.hooks.iter().map(|h| h.command.as_str()).collect();
        assert_eq!(commands, ["mine", "theirs"]);
        assert!(set.untrusted.is_empty());

        // A change asks again.
        std::fs::write(&settings, hook("changed")).unwrap();
        let set = HookSet::load(project.path(), Some(home.path()), &trust);
        assert_eq!(set.hooks.len(), 1);
        assert_eq!(set.untrusted[0].text, hook("changed"));
    }
}
