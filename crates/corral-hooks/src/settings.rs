//! The `hooks` of Claude Code's settings files:
//! `{"hooks": {"PreToolUse": [{"matcher": "Bash|Edit", "hooks":
//! [{"type": "command", "command": "...", "timeout": 60}]}]}}`.
//! Other keys of the file are not Corral's business and are ignored; an
//! event Corral does not raise is kept out, and a hook of another type
//! than `command` too.

use corral_fs::{Error, ErrorCode, ProjectRoot};
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

/// The largest settings file read for its hooks.
pub const MAX_SETTINGS_BYTES: u64 = 1024 * 1024;

fn too_large(shown: &str, len: u64) -> Error {
    Error::new(
        ErrorCode::TooLarge,
        format!("`{shown}` is {len} bytes; the limit is {MAX_SETTINGS_BYTES}"),
    )
    .detail("path", shown)
    .detail("bytes", len)
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

    /// The text of the user's settings file, if there is one. It is the
    /// user's own, outside the project: read at its path, links followed
    /// as the user set them, but a FIFO or a device is refused at once.
    fn read_home(&mut self, path: &Path) -> Option<String> {
        let shown = path.display().to_string();
        let read = corral_fs::read_regular_outside(path, MAX_SETTINGS_BYTES);
        self.text_of(&shown, read)
    }

    /// The text of one of the project's settings files (`name`, relative
    /// to it), if there is one: read beneath the project's root handle,
    /// so a link leading out of the project (`.claude/settings.json ->
    /// /elsewhere`, `.claude -> ../outside`) is refused
    /// (`path_outside_root`), and so is a FIFO or a device, without
    /// waiting for a writer.
    fn read_project(&mut self, root: &ProjectRoot, name: &str) -> Option<String> {
        let read = root.resolve(name).and_then(|rel| {
            corral_fs::read_regular(root, &rel).and_then(|(bytes, _)| {
                if bytes.len() as u64 > MAX_SETTINGS_BYTES {
                    return Err(too_large(name, bytes.len() as u64));
                }
                Ok(bytes)
            })
        });
        self.text_of(name, read)
    }

    /// The text of what was read; `None` when there is no such file, and
    /// when it could not be read or is not UTF-8 text: then the
    /// standardized error is a problem, and its hooks are not read.
    fn text_of(&mut self, shown: &str, read: corral_fs::Result<Vec<u8>>) -> Option<String> {
        let refused = match read {
            Ok(bytes) => match String::from_utf8(bytes) {
                Ok(text) => return Some(text),
                Err(_) => Error::new(ErrorCode::NotText, format!("`{shown}` is not UTF-8 text"))
                    .detail("path", shown),
            },
            Err(e) if e.code == ErrorCode::NotFound => return None,
            Err(e) => e,
        };
        self.problems
            .push(format!("{refused}; its hooks are not read"));
        None
    }

    /// The user's hooks (`~/.claude/settings.json`, when `home` is given)
    /// and the project's (`.claude/settings.json`, then
    /// `.claude/settings.local.json`, read beneath `root`), each of the
    /// project's only if `trusted(file, text)` says its exact text is; the
    /// others are listed in [`HookSet::untrusted`]. A file that cannot be
    /// read is a problem, never a failure.
    pub fn load(
        root: &ProjectRoot,
        home: Option<&Path>,
        trusted: &dyn Fn(&str, &str) -> bool,
    ) -> HookSet {
        let mut set = HookSet::default();
        if let Some(home) = home {
            let path = home.join(".claude/settings.json");
            if let Some(text) = set.read_home(&path) {
                set.add_text(&text, Source::User, &path.display().to_string());
            }
        }
        for name in PROJECT_SETTINGS {
            let Some(text) = set.read_project(root, name) else {
                continue;
            };
            if trusted(name, &text) {
                set.add_text(&text, Source::Project, name);
            } else {
                set.untrusted.push(Untrusted {
                    path: root.path().join(name),
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
    // Test fixtures in temporary folders, not a project's files.
    #![allow(clippy::unwrap_used, clippy::disallowed_methods)]
    use super::*;
    use std::os::unix::fs::symlink;
    use std::path::PathBuf;

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

        let root = ProjectRoot::open(project.path()).unwrap();
        let set = HookSet::load(&root, Some(home.path()), &|_, _| false);
        let commands: Vec<&str> = set.hooks.iter().map(|h| h.command.as_str()).collect();
        assert_eq!(commands, ["mine"]);
        assert_eq!(set.untrusted[0].text, hook("theirs"));

        let set = HookSet::load(&root, Some(home.path()), &trust);
        let commands: Vec<&str> = set.hooks.iter().map(|h| h.command.as_str()).collect();
        assert_eq!(commands, ["mine", "theirs"]);
        assert!(set.untrusted.is_empty());

        // A change asks again.
        std::fs::write(&settings, hook("changed")).unwrap();
        let set = HookSet::load(&root, Some(home.path()), &trust);
        assert_eq!(set.hooks.len(), 1);
        assert_eq!(set.untrusted[0].text, hook("changed"));
    }

    fn hook(cmd: &str) -> String {
        format!(
            r#"{{"hooks": {{"Stop": [{{"hooks": [{{"type": "command", "command": "{cmd}"}}]}}]}}}}"#
        )
    }

    /// A project folder `app/` beside a folder `outside/` holding a
    /// settings file with a hook, in a temporary folder kept alive.
    fn beside_outside() -> (tempfile::TempDir, PathBuf, PathBuf) {
        let tmp = tempfile::tempdir().unwrap();
        let app = tmp.path().join("app");
        let outside = tmp.path().join("outside");
        std::fs::create_dir_all(&app).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(outside.join("settings.json"), hook("outside")).unwrap();
        (tmp, app, outside)
    }

    /// Loads the project's hooks trusting every text, so a file read is a
    /// hook loaded.
    fn load_trusting(app: &Path, home: Option<&Path>) -> HookSet {
        let root = ProjectRoot::open(app).unwrap();
        HookSet::load(&root, home, &|_, _| true)
    }

    fn commands(set: &HookSet) -> Vec<&str> {
        set.hooks.iter().map(|h| h.command.as_str()).collect()
    }

    #[test]
    fn a_settings_file_linked_out_of_the_project_is_not_read() {
        let (_tmp, app, outside) = beside_outside();
        std::fs::create_dir_all(app.join(".claude")).unwrap();
        symlink(
            outside.join("settings.json"),
            app.join(".claude/settings.json"),
        )
        .unwrap();
        std::fs::write(app.join(".claude/settings.local.json"), hook("local")).unwrap();

        let set = load_trusting(&app, None);
        // The other file is still read.
        assert_eq!(commands(&set), ["local"], "{:?}", set.problems);
        assert!(set.untrusted.is_empty());
        assert_eq!(set.problems.len(), 1, "{:?}", set.problems);
        let problem = &set.problems[0];
        assert!(
            problem.starts_with("path_outside_root: `.claude/settings.json`"),
            "{problem}"
        );
    }

    #[test]
    fn a_claude_folder_linked_out_of_the_project_is_not_read() {
        let (_tmp, app, outside) = beside_outside();
        std::fs::write(outside.join("settings.local.json"), hook("local")).unwrap();
        symlink("../outside", app.join(".claude")).unwrap();

        let set = load_trusting(&app, None);
        assert!(set.hooks.is_empty(), "{:?}", commands(&set));
        assert!(set.untrusted.is_empty());
        assert_eq!(set.problems.len(), 2, "{:?}", set.problems);
        for (problem, name) in set.problems.iter().zip(PROJECT_SETTINGS) {
            assert!(
                problem.starts_with(&format!("path_outside_root: `{name}`")),
                "{problem}"
            );
        }
    }

    #[test]
    fn a_link_inside_the_project_is_followed() {
        let (_tmp, app, _outside) = beside_outside();
        std::fs::create_dir_all(app.join("shared")).unwrap();
        std::fs::write(app.join("shared/settings.json"), hook("shared")).unwrap();
        symlink("shared", app.join(".claude")).unwrap();
        let set = load_trusting(&app, None);
        assert_eq!(commands(&set), ["shared"], "{:?}", set.problems);
        assert!(set.problems.is_empty(), "{:?}", set.problems);
    }

    fn mkfifo(path: &Path) {
        let made = std::process::Command::new("mkfifo")
            .arg(path)
            .status()
            .unwrap();
        assert!(made.success());
    }

    /// `HookSet::load` on a thread: a read that waits fails the test
    /// instead of hanging it.
    fn load_within(app: PathBuf, home: Option<PathBuf>) -> HookSet {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(load_trusting(&app, home.as_deref()));
        });
        rx.recv_timeout(std::time::Duration::from_secs(10))
            .unwrap_or_else(|e| panic!("the hooks were not read within 10 s: {e}"))
    }

    #[test]
    fn a_fifo_for_settings_is_refused_at_once() {
        let (_tmp, app, _outside) = beside_outside();
        std::fs::create_dir_all(app.join(".claude")).unwrap();
        mkfifo(&app.join(".claude/settings.json"));
        std::fs::write(app.join(".claude/settings.local.json"), hook("local")).unwrap();

        let set = load_within(app, None);
        assert_eq!(commands(&set), ["local"], "{:?}", set.problems);
        assert_eq!(set.problems.len(), 1, "{:?}", set.problems);
        let problem = &set.problems[0];
        assert!(
            problem.starts_with("invalid_input: `.claude/settings.json` is not a regular file"),
            "{problem}"
        );
    }

    #[test]
    fn a_fifo_for_the_users_settings_is_refused_at_once() {
        let (tmp, app, _outside) = beside_outside();
        let home = tmp.path().join("home");
        std::fs::create_dir_all(home.join(".claude")).unwrap();
        mkfifo(&home.join(".claude/settings.json"));
        std::fs::create_dir_all(app.join(".claude")).unwrap();
        std::fs::write(app.join(".claude/settings.json"), hook("project")).unwrap();

        let set = load_within(app, Some(home.clone()));
        assert_eq!(commands(&set), ["project"], "{:?}", set.problems);
        assert_eq!(set.problems.len(), 1, "{:?}", set.problems);
        let shown = home.join(".claude/settings.json").display().to_string();
        assert!(
            set.problems[0].starts_with(&format!("invalid_input: `{shown}` is not a regular file")),
            "{:?}",
            set.problems
        );
    }

    #[test]
    fn a_settings_file_too_large_or_not_text_is_a_problem() {
        let (_tmp, app, _outside) = beside_outside();
        std::fs::create_dir_all(app.join(".claude")).unwrap();
        let big = format!("{}{}", hook("big"), " ".repeat(MAX_SETTINGS_BYTES as usize));
        std::fs::write(app.join(".claude/settings.json"), big).unwrap();
        std::fs::write(app.join(".claude/settings.local.json"), b"{\xff}").unwrap();
        let set = load_trusting(&app, None);
        assert!(set.hooks.is_empty());
        assert!(
            set.problems[0].starts_with("too_large: "),
            "{:?}",
            set.problems
        );
        assert!(
            set.problems[1].starts_with("not_text: "),
            "{:?}",
            set.problems
        );
    }
}
