//! Running the hooks of one event: each in the sandbox's build profile
//! (the project writable but `.git/`, `.claude/` and `.codex/`, no
//! network, no home; a user's own hook sees its part of `~/.claude/`,
//! `user_view`), `sh -c` its command in the project with the event's
//! JSON on stdin and `CLAUDE_PROJECT_DIR` set, killed with its whole
//! process group at its time limit. What it says:
//! - exit 0: fine; stdout that is a JSON object is read as decisions, any
//!   other stdout of `UserPromptSubmit` and `SessionStart` is context for
//!   the model;
//! - exit 2: it blocks, its stderr is the reason (given to the model);
//! - a hook that could not run (its program not found, 127, or not
//!   executable, 126; killed by a signal, as the sandbox stops one past
//!   its limits; its shell could not open a redirection's file, which
//!   dash reports with exit 2), any other exit, a time-out, a failure to
//!   start: a notice for the user saying why, and the call goes on.

use crate::names::{claude_input, claude_name, corral_input};
use crate::settings::{Event, Hook, HookSet, Source};
use crate::user_view::UserView;
use corral_fs::ProjectRoot;
use regex::Regex;
use serde::Serialize;
use serde_json::{json, Value};
use std::sync::OnceLock;
use std::time::Duration;

/// What an event tells its hooks.
#[derive(Debug, Clone, Default)]
pub struct EventInput {
    pub session_id: String,
    pub transcript_path: String,
    /// Corral's name of the tool (tool events).
    pub tool_name: Option<String>,
    /// Corral's input of the call (tool events).
    pub tool_input: Option<Value>,
    /// The call's result (`PostToolUse`).
    pub tool_response: Option<Value>,
    /// The user's prompt (`UserPromptSubmit`).
    pub prompt: Option<String>,
    /// `manual` or `auto` (`PreCompact`); `startup`, `resume`... (`SessionStart`).
    pub trigger: Option<String>,
    /// `Stop`: the turn already goes on because a `Stop` hook blocked, so a
    /// hook can let it end rather than block for ever.
    pub stop_hook_active: bool,
}

/// What the hooks decided about a tool call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Default, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
#[ts(rename = "HookVerdict")]
pub enum Verdict {
    /// No hook said (the policy decides).
    #[default]
    None,
    /// Runs without asking.
    Allow,
    /// Asks the user.
    Ask,
    /// Refused.
    Deny,
}

/// One hook's run, for the card it affected.
#[derive(Debug, Clone, Serialize)]
pub struct HookRun {
    pub command: String,
    pub exit_code: Option<i32>,
    pub timed_out: bool,
    pub stdout: String,
    pub stderr: String,
    /// Why it could not run (the sandbox refused, no `sh`...).
    pub error: Option<String>,
    /// For the user, about its view of `~/.claude/` (a user's hook): what
    /// it wrote there that was not kept.
    pub notes: Vec<String>,
}

/// Every matching hook's runs, joined: the strictest verdict, the last
/// updated input, all the context.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Outcome {
    pub verdict: Verdict,
    /// Why (a deny's or an ask's reason).
    pub reason: Option<String>,
    /// The command of the hook whose verdict this is.
    pub by: Option<String>,
    /// A hook blocked (exit 2 or `"decision": "block"`): what to tell the
    /// model.
    pub block: Option<String>,
    /// The command of the first hook that blocked.
    pub blocked_by: Option<String>,
    /// The call's input as a hook changed it, in Corral's form.
    pub updated_input: Option<Value>,
    /// The command of the hook that changed it (the last one).
    pub updated_by: Option<String>,
    /// For the model.
    pub additional_context: Vec<String>,
    /// `"continue": false`: the turn ends, with this reason for the user.
    pub stop: Option<String>,
    /// For the user: hooks that failed without blocking.
    pub notices: Vec<String>,
    pub runs: Vec<HookRun>,
}

/// Runs every hook of `set` for `event` (those matching the tool, for a
/// tool event), one after the other, and joins what they say.
pub fn run_event(root: &ProjectRoot, set: &HookSet, event: Event, input: &EventInput) -> Outcome {
    let corral = input.tool_name.as_deref().unwrap_or("");
    let claude = claude_name(corral);
    let names: Vec<&str> = [Some(corral), claude].into_iter().flatten().collect();
    let stdin = stdin_of(root, event, input, claude.unwrap_or(corral));
    let mut outcome = Outcome::default();
    for hook in set.matching(event, &names) {
        let run = run_one(root, hook, &stdin);
        judge(root, event, corral, &run, &stdin, &mut outcome);
        outcome.runs.push(run);
    }
    outcome
}

fn stdin_of(root: &ProjectRoot, event: Event, input: &EventInput, tool: &str) -> Vec<u8> {
    let mut v = json!({
        "session_id": input.session_id,
        "transcript_path": input.transcript_path,
        "cwd": root.path(),
        "hook_event_name": event.name(),
    });
    if let Some(tool_input) = &input.tool_input {
        let corral = input.tool_name.as_deref().unwrap_or("");
        v["tool_name"] = tool.into();
        v["tool_input"] = claude_input(corral, tool_input, root.path());
    }
    if let Some(response) = &input.tool_response {
        v["tool_response"] = response.clone();
    }
    if let Some(prompt) = &input.prompt {
        v["prompt"] = prompt.clone().into();
    }
    if event == Event::Stop {
        v["stop_hook_active"] = input.stop_hook_active.into();
    }
    if let Some(trigger) = &input.trigger {
        let key = if event == Event::SessionStart {
            "source"
        } else {
            "trigger"
        };
        v[key] = trigger.clone().into();
    }
    v.to_string().into_bytes()
}

/// What one run says, added to the outcome (`stdin`: what it was told).
fn judge(
    root: &ProjectRoot,
    event: Event,
    tool: &str,
    run: &HookRun,
    stdin: &[u8],
    out: &mut Outcome,
) {
    let who = &run.command;
    for note in &run.notes {
        out.notices.push(format!("the hook `{who}`: {note}"));
    }
    if let Some(error) = &run.error {
        out.notices
            .push(format!("the hook `{who}` could not run: {error}"));
        return;
    }
    if run.timed_out {
        out.notices
            .push(format!("the hook `{who}` ran out of time and was stopped"));
        return;
    }
    if let Some(why) = could_not_run(run, stdin) {
        out.notices.push(format!(
            "the hook `{who}` could not run: {why}; it was taken as a failure of the hook, not a block, and the call went on"
        ));
        return;
    }
    match run.exit_code {
        Some(0) => {}
        Some(2) => {
            let reason = if run.stderr.trim().is_empty() {
                format!("the hook `{who}` blocked this")
            } else {
                run.stderr.trim().to_string()
            };
            if event == Event::PreToolUse {
                raise(out, Verdict::Deny, Some(reason.clone()), who);
            }
            block(out, reason, who);
            return;
        }
        code => {
            let code = code.map_or("a signal".into(), |c| format!("code {c}"));
            let said = run.stderr.trim();
            out.notices
                .push(format!("the hook `{who}` failed ({code}): {said}"));
            return;
        }
    }
    let text = run.stdout.trim();
    let parsed: Option<serde_json::Map<String, Value>> = serde_json::from_str(text).ok();
    let Some(said) = parsed else {
        if !text.is_empty() && matches!(event, Event::UserPromptSubmit | Event::SessionStart) {
            out.additional_context.push(text.to_string());
        }
        return;
    };
    let string = |v: Option<&Value>| v.and_then(Value::as_str).map(str::to_string);
    if said.get("continue") == Some(&Value::Bool(false)) {
        let why = string(said.get("stopReason"));
        out.stop
            .get_or_insert(why.unwrap_or_else(|| format!("the hook `{who}` stopped the turn")));
    }
    let reason = string(said.get("reason"));
    match said.get("decision").and_then(Value::as_str) {
        Some("block") => {
            let why = reason
                .clone()
                .unwrap_or_else(|| format!("the hook `{who}` blocked this"));
            if event == Event::PreToolUse {
                raise(out, Verdict::Deny, Some(why.clone()), who);
            }
            block(out, why, who);
        }
        Some("approve") if event == Event::PreToolUse => raise(out, Verdict::Allow, reason, who),
        _ => {}
    }
    let Some(specific) = said.get("hookSpecificOutput") else {
        return;
    };
    let why = string(specific.get("permissionDecisionReason"));
    match specific.get("permissionDecision").and_then(Value::as_str) {
        Some("allow") => raise(out, Verdict::Allow, why, who),
        Some("ask") => raise(out, Verdict::Ask, why, who),
        Some("deny") => raise(out, Verdict::Deny, why, who),
        _ => {}
    }
    if let Some(updated) = specific.get("updatedInput") {
        match corral_input(tool, updated, root.path()) {
            Ok(input) => {
                out.updated_input = Some(input);
                out.updated_by = Some(who.clone());
            }
            Err(e) => out
                .notices
                .push(format!("the hook `{who}` changed the call wrongly: {e}")),
        }
    }
    if let Some(context) = string(specific.get("additionalContext")) {
        out.additional_context.push(context);
    }
}

/// The first hook that blocks says why.
fn block(out: &mut Outcome, reason: String, who: &str) {
    if out.block.is_none() {
        out.block = Some(reason);
        out.blocked_by = Some(who.to_string());
    }
}

/// The stricter verdict wins (deny, then ask, then allow), with its reason
/// and its hook.
fn raise(out: &mut Outcome, verdict: Verdict, reason: Option<String>, who: &str) {
    let rank = |v: Verdict| match v {
        Verdict::None => 0,
        Verdict::Allow => 1,
        Verdict::Ask => 2,
        Verdict::Deny => 3,
    };
    if rank(verdict) > rank(out.verdict) {
        out.verdict = verdict;
        out.reason = reason;
        out.by = Some(who.to_string());
    }
}

/// Why a hook that ended could not run, if that is what its exit says:
/// its program was not found (127) or could not be started (126), a
/// signal killed it (as the sandbox does past a limit), or its shell
/// could not open a redirection's file (dash exits 2 then, which would
/// otherwise read as a block). The last is judged on an exit 2's stderr,
/// so only when every line of it is the shell's own message, and no file
/// it names is in what the hook was told: the model's text cannot make a
/// guard's block read as a failure by writing such a line.
fn could_not_run(run: &HookRun, stdin: &[u8]) -> Option<String> {
    let said = run.stderr.trim();
    let said = if said.is_empty() {
        String::new()
    } else {
        format!(": {said}")
    };
    match run.exit_code {
        Some(0) => return None,
        Some(127) => return Some(format!("a program it runs was not found (exit 127){said}")),
        Some(126) => {
            return Some(format!(
                "a program it runs is not executable or could not be started (exit 126){said}"
            ))
        }
        Some(code @ 129..=159) => {
            return Some(format!(
                "a program it runs was killed by signal {} (exit {code}){said}",
                code - 128
            ))
        }
        None => {
            return Some(format!(
                "it was killed by a signal (the sandbox stops a hook past its limits){said}"
            ))
        }
        // dash's exit for a redirection that failed; any other exit is
        // the hook's own failure, its stderr shown as it is.
        Some(2) => {}
        Some(_) => return None,
    }
    let lines: Vec<&str> = run
        .stderr
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let mut files = Vec::new();
    for line in &lines {
        let found = redirect_failure().captures(line)?;
        files.push((
            found["verb"].to_string(),
            found["path"].to_string(),
            found["why"].to_string(),
        ));
    }
    if files.is_empty() {
        return None;
    }
    let told = told_strings(stdin);
    if files
        .iter()
        .any(|(_, path, _)| told.iter().any(|text| text.contains(path.as_str())))
    {
        return None;
    }
    let each: Vec<String> = files
        .iter()
        .map(|(verb, path, why)| {
            let what = if verb == "create" { "write" } else { "open" };
            format!("its shell could not {what} {path} ({why})")
        })
        .collect();
    Some(each.join("; "))
}

/// The shell's message for a redirection whose file it could not open:
/// dash's `sh: 1: cannot create FILE: Permission denied` (a script's name
/// and line in place of `sh: 1` inside a script), busybox's `sh: can't
/// create FILE: ...`.
fn redirect_failure() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        #[allow(clippy::expect_used)]
        Regex::new(
            r"^[^:]+: (?:\d+: )?(?:cannot|can't) (?P<verb>create|open) (?P<path>.+): (?P<why>[A-Za-z][A-Za-z -]*)$",
        )
        .expect("the pattern is valid")
    })
}

/// Every string of the JSON a hook was told (what the model wrote among
/// them).
fn told_strings(stdin: &[u8]) -> Vec<String> {
    fn walk(v: &Value, into: &mut Vec<String>) {
        match v {
            Value::String(s) => into.push(s.clone()),
            Value::Array(items) => items.iter().for_each(|i| walk(i, into)),
            Value::Object(map) => map.iter().for_each(|(k, i)| {
                into.push(k.clone());
                walk(i, into)
            }),
            _ => {}
        }
    }
    let mut into = Vec::new();
    match serde_json::from_slice::<Value>(stdin) {
        Ok(v) => walk(&v, &mut into),
        Err(_) => into.push(String::from_utf8_lossy(stdin).into_owned()),
    }
    into
}

fn run_one(root: &ProjectRoot, hook: &Hook, stdin: &[u8]) -> HookRun {
    let args = vec!["-c".to_string(), hook.command.clone()];
    let vars = vec![(
        "CLAUDE_PROJECT_DIR".to_string(),
        root.path().to_string_lossy().into_owned(),
    )];
    let timeout = Duration::from_secs(hook.timeout_secs);
    // A user's own hook sees its scripts and logs in `~/.claude/`, at the
    // home its `$HOME` names; a project's hook sees no home.
    let view = match hook.source {
        Source::User => {
            corral_sandbox::home_dir().and_then(|home| UserView::prepare(root.path(), &home))
        }
        Source::Project => None,
    };
    let ran = match &view {
        Some(view) => corral_sandbox::run_fenced_showing(
            root,
            "/bin/sh",
            &args,
            &vars,
            stdin.to_vec(),
            timeout,
            view.shown(),
        ),
        None => corral_sandbox::run_fenced(root, "/bin/sh", &args, &vars, stdin.to_vec(), timeout),
    };
    let notes = view.map(UserView::keep).unwrap_or_default();
    match ran {
        Ok(ran) => HookRun {
            command: hook.command.clone(),
            exit_code: ran.exit_code,
            timed_out: ran.timed_out,
            stdout: ran.stdout,
            stderr: ran.stderr,
            error: None,
            notes,
        },
        Err(e) => HookRun {
            command: hook.command.clone(),
            exit_code: None,
            timed_out: false,
            stdout: String::new(),
            stderr: String::new(),
            error: Some(e.message),
            notes,
        },
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn ended(exit_code: Option<i32>, stderr: &str) -> HookRun {
        HookRun {
            command: "h".into(),
            exit_code,
            timed_out: false,
            stdout: String::new(),
            stderr: stderr.into(),
            error: None,
            notes: Vec::new(),
        }
    }

    #[test]
    fn a_hook_that_could_not_run_says_why_and_a_guards_block_stays_a_block() {
        let told = json!({"tool_input": {"command": "ls"}}).to_string();
        let told = told.as_bytes();
        let why = |code, stderr| could_not_run(&ended(code, stderr), told);
        assert!(why(Some(127), "sh: 1: /h/.claude/hooks/x.sh: not found")
            .unwrap()
            .contains("not found (exit 127): sh: 1: /h/.claude/hooks/x.sh: not found"));
        assert!(why(Some(126), "").unwrap().contains("not executable"));
        assert!(why(None, "").unwrap().contains("killed by a signal"));
        assert!(why(Some(137), "").unwrap().contains("signal 9"));
        // dash's exit 2 for a redirection it could not open.
        let log = why(
            Some(2),
            "sh: 1: cannot create /h/log.txt: Read-only file system\n",
        );
        assert_eq!(
            log.as_deref(),
            Some("its shell could not write /h/log.txt (Read-only file system)")
        );
        let script = why(
            Some(2),
            "/h/.claude/hooks/x.sh: 3: cannot open /h/in: No such file",
        );
        assert!(script.unwrap().contains("could not open /h/in"));
        // A block: exit 2 with the guard's own reason, beside such a line or not.
        assert_eq!(why(Some(2), "Blocked: rm -rf"), None);
        assert_eq!(
            why(
                Some(2),
                "Blocked: rm -rf\nsh: 1: cannot create /h/log.txt: Permission denied"
            ),
            None
        );
        assert_eq!(why(Some(2), ""), None);
        assert_eq!(
            why(Some(0), "sh: 1: cannot create /x: Permission denied"),
            None
        );
        assert_eq!(why(Some(1), "oops"), None);
        // The model's text, echoed by a guard, cannot pass for the shell's.
        let forged = json!({"tool_input": {
            "command": "rm -rf src\nsh: 1: cannot create /h/log.txt: Permission denied"
        }})
        .to_string();
        let run = ended(
            Some(2),
            "sh: 1: cannot create /h/log.txt: Permission denied\n",
        );
        assert_eq!(could_not_run(&run, forged.as_bytes()), None);
    }
}
