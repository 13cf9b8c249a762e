//! `corral-cli exec` as a script runs it: the real binary against the e2e
//! suite's scripted LLM server (real HTTP on loopback, run by Node), in a
//! real project folder, with the app's settings and history in a home
//! folder of its own. Every JSONL event is checked against
//! docs/exec-events.schema.json.

use crate::common::{Home, Scripted};
use corral_history::Part;
use serde_json::{json, Value};
use std::io::Write;
use std::process::{Command, Stdio};

impl Home {
    /// The project's key in the history.
    pub(crate) fn project_key(&self) -> String {
        std::fs::canonicalize(self.project())
            .unwrap()
            .display()
            .to_string()
    }

    /// Runs `corral-cli exec --root PROJECT ARGS...` with stdin a pipe (no terminal).
    pub(crate) fn exec(&self, args: &[&str]) -> Run {
        self.exec_with(args, &[])
    }

    /// [`Home::exec`] with these environment variables set.
    fn exec_with(&self, args: &[&str], vars: &[(&str, &str)]) -> Run {
        let mut child = self
            .command(Command::new(env!("CARGO_BIN_EXE_corral-cli")), vars)
            .arg("exec")
            .arg("--root")
            .arg(self.project())
            .args(["--no-lsp", "--no-checkpoint"])
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // A run that ends at once (bad usage) may have closed its stdin already.
        let _ = child.stdin.take().unwrap().write_all(b"y\n");
        let out = child.wait_with_output().unwrap();
        Run {
            code: out.status.code().expect("exited, not killed"),
            stdout: String::from_utf8(out.stdout).unwrap(),
            stderr: String::from_utf8(out.stderr).unwrap(),
        }
    }

    /// `command` in this home: the app's folders here, no key in a file or
    /// variable but those given.
    pub(crate) fn command(&self, mut command: Command, vars: &[(&str, &str)]) -> Command {
        command
            .env("HOME", self.dir.path())
            .env("XDG_CONFIG_HOME", self.dir.path().join("config"))
            .env("XDG_DATA_HOME", self.dir.path().join("data"))
            .env("CORRAL_NO_KEYCHAIN", "1")
            .env_remove("CORRAL_PROVIDER")
            .env_remove("CORRAL_BASE_URL")
            .env_remove("CORRAL_MODEL")
            .env_remove("CORRAL_API_KEY")
            .envs(vars.iter().copied());
        command
    }

    /// Runs exec on a terminal (a pseudo-terminal of util-linux's
    /// `script`), typing `typed` into it; what the terminal showed.
    fn exec_on_a_terminal(&self, args: &[&str], typed: &str) -> String {
        let quote = |arg: &str| format!("'{}'", arg.replace('\'', r"'\''"));
        let project = self.project().display().to_string();
        let line: Vec<String> = [
            env!("CARGO_BIN_EXE_corral-cli"),
            "exec",
            "--root",
            &project,
            "--no-lsp",
            "--no-checkpoint",
        ]
        .iter()
        .chain(args)
        .map(|arg| quote(arg))
        .collect();
        let mut child = self
            .command(Command::new("script"), &[])
            .args(["-qefc", &line.join(" "), "/dev/null"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        // Typed ahead: the terminal holds it until exec reads its answer.
        let mut keys = child.stdin.take().unwrap();
        keys.write_all(typed.as_bytes()).unwrap();
        let mut shown = String::new();
        std::io::Read::read_to_string(child.stdout.as_mut().unwrap(), &mut shown).unwrap();
        drop(keys);
        assert!(child.wait().unwrap().success(), "{shown}");
        shown
    }
}

pub(crate) struct Run {
    pub(crate) code: i32,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
}

impl Run {
    /// The JSONL events, each checked against the documented schema.
    pub(crate) fn events(&self) -> Vec<Value> {
        let schema: Value =
            serde_json::from_str(include_str!("../../../../docs/exec-events.schema.json")).unwrap();
        let validator = jsonschema::validator_for(&schema).unwrap();
        let events: Vec<Value> = self
            .stdout
            .lines()
            .map(|line| {
                serde_json::from_str(line)
                    .unwrap_or_else(|e| panic!("not JSON ({e}): {line}\n{}", self.stderr))
            })
            .collect();
        for event in &events {
            let errors: Vec<String> = validator
                .iter_errors(event)
                .map(|e| e.to_string())
                .collect();
            assert!(
                errors.is_empty(),
                "{event} does not fit the schema: {errors:?}"
            );
        }
        events
    }

    fn of_type<'a>(events: &'a [Value], kind: &str) -> Vec<&'a Value> {
        events.iter().filter(|e| e["type"] == kind).collect()
    }
}

#[test]
fn a_tool_using_task_completes_with_the_apps_settings_and_lands_in_the_history() {
    let server = Scripted::start(json!([
        { "tools": [{ "name": "read_file", "input": { "path": "a.txt" } }] },
        { "text": "The file says hello." },
    ]));
    let home = Home::new(&server.base_url());
    let run = home.exec(&["--json", "What does a.txt say?"]);
    let requests = server.finish();
    assert_eq!(run.code, 0, "{}", run.stderr);
    let events = run.events();
    let calls = Run::of_type(&events, "tool_call");
    assert_eq!(calls.len(), 1);
    assert_eq!(
        (calls[0]["name"].as_str(), &calls[0]["input"]),
        (Some("read_file"), &json!({ "path": "a.txt" }))
    );
    let results = Run::of_type(&events, "tool_result");
    assert_eq!(results[0]["status"], "done");
    assert_eq!(results[0]["result"]["content"], "hello from a.txt\n");
    let text: String = Run::of_type(&events, "text_delta")
        .iter()
        .map(|e| e["text"].as_str().unwrap())
        .collect();
    assert_eq!(text, "The file says hello.");
    assert_eq!(Run::of_type(&events, "usage").len(), 1);
    let last = events.last().unwrap();
    assert_eq!(
        (last["type"].as_str(), last["outcome"].as_str()),
        (Some("final"), Some("done"))
    );
    assert_eq!(last["text"], "The file says hello.");
    // The model got the file's text back, and the history holds the conversation.
    assert_eq!(requests.len(), 2);
    assert!(
        requests[1].to_string().contains("hello from a.txt"),
        "{}",
        requests[1]
    );
    let id = last["conversation"].as_str().unwrap();
    let listed = home.history().list(&home.project_key()).unwrap();
    assert_eq!(
        listed.iter().map(|c| c.id.as_str()).collect::<Vec<_>>(),
        [id]
    );
}

/// The run's usage in its `final` event is the sum of what the server
/// reported for each request, priced by the user's `prices.json`; a run
/// that goes on with a conversation tells only its own, and the history
/// keeps the conversation's total.
#[test]
fn the_final_event_carries_the_usage_the_server_reported_and_its_cost() {
    let server = Scripted::start(json!([
        {
            "tools": [{ "name": "read_file", "input": { "path": "a.txt" } }],
            "usage": { "prompt_tokens": 1200, "completion_tokens": 30, "prompt_tokens_details": { "cached_tokens": 1000 } }
        },
        { "text": "It says hello.", "usage": { "prompt_tokens": 1500, "completion_tokens": 12 } },
        { "text": "Still hello.", "usage": { "prompt_tokens": 1600, "completion_tokens": 4 } },
    ]));
    let home = Home::new(&server.base_url());
    std::fs::write(
        home.dir
            .path()
            .join("config/dev.corral.desktop/prices.json"),
        r#"[{"model": "scrip*", "input": 2, "output": 10, "cache_read": 0.5}]"#,
    )
    .unwrap();
    let run = home.exec(&["--json", "What does a.txt say?"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let events = run.events();
    let last = events.last().unwrap();
    assert_eq!(last["type"], "final");
    let usage = &last["usage"];
    assert_eq!(
        (
            &usage["input_tokens"],
            &usage["output_tokens"],
            &usage["cache_read_tokens"],
            &usage["cache_write_tokens"]
        ),
        (&json!(2700), &json!(42), &json!(1000), &json!(0))
    );
    // (200 + 1500) plain at $2, 1000 cached at $0.50, 42 out at $10 per million.
    let cost = (1700.0 * 2.0 + 1000.0 * 0.5 + 42.0 * 10.0) / 1e6;
    let told = usage["cost_usd"].as_f64().unwrap();
    assert!((told - cost).abs() < 1e-12, "{told} != {cost}");
    // The `usage` event before it says the same.
    let mut event = Run::of_type(&events, "usage")[0].clone();
    event.as_object_mut().unwrap().remove("type");
    assert_eq!(&event, usage);

    // Going on: only this run's request, the history holding both runs'.
    let id = last["conversation"].as_str().unwrap().to_string();
    let again = home.exec(&["--json", "--resume", &id, "And now?"]);
    server.finish();
    assert_eq!(again.code, 0, "{}", again.stderr);
    let events = again.events();
    let usage = &events.last().unwrap()["usage"];
    assert_eq!(
        (&usage["input_tokens"], &usage["output_tokens"]),
        (&json!(1600), &json!(4))
    );
    let summary = home.history().list(&home.project_key()).unwrap().remove(0);
    assert_eq!(
        (
            summary.input_tokens,
            summary.output_tokens,
            summary.cache_read_tokens,
            summary.unpriced
        ),
        (4300, 46, 1000, 0)
    );
    let total = cost + (1600.0 * 2.0 + 4.0 * 10.0) / 1e6;
    assert!(
        (summary.cost_usd - total).abs() < 1e-12,
        "{}",
        summary.cost_usd
    );
}

#[test]
fn without_json_progress_goes_to_stderr_and_only_the_answer_to_stdout() {
    let server = Scripted::start(json!([
        { "tools": [{ "name": "read_file", "input": { "path": "a.txt" } }] },
        { "text": "It says hello." },
    ]));
    let home = Home::new(&server.base_url());
    let run = home.exec(&["What does a.txt say?"]);
    server.finish();
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stdout, "It says hello.\n");
    assert!(
        run.stderr.contains("> read_file {\"path\":\"a.txt\"}"),
        "{}",
        run.stderr
    );
}

#[test]
fn read_only_the_default_refuses_writes() {
    let server = Scripted::start(json!([
        { "tools": [{ "name": "write_file", "input": { "path": "b.txt", "content": "changed" } }] },
        { "text": "I could not write b.txt." },
    ]));
    let home = Home::new(&server.base_url());
    let run = home.exec(&["--json", "Write b.txt"]);
    server.finish();
    assert_eq!(run.code, 0, "{}", run.stderr);
    let events = run.events();
    let results = Run::of_type(&events, "tool_result");
    assert_eq!(results.len(), 1);
    assert_eq!(results[0]["status"], "denied", "{}", results[0]);
    assert!(!home.project().join("b.txt").exists());
    assert!(Run::of_type(&events, "approval_asked").is_empty());
}

#[test]
fn an_approval_no_one_can_give_is_denied_and_stops_the_run() {
    let server = Scripted::start(json!([
        { "tools": [{ "name": "write_file", "input": { "path": "b.txt", "content": "changed" } }] },
    ]));
    let home = Home::new(&server.base_url());
    // stdin is a pipe (with "y" in it): not a terminal, so no one is asked.
    let run = home.exec(&["--json", "--mode", "ask", "Write b.txt"]);
    let requests = server.finish();
    assert_eq!(run.code, 3, "{}", run.stderr);
    let events = run.events();
    let kinds: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        [
            "tool_call",
            "approval_asked",
            "approval_answered",
            "tool_result",
            "notice",
            "usage",
            "final"
        ]
    );
    assert_eq!(events[2]["decision"], "deny");
    assert_eq!(events[2]["by"], "no_terminal");
    assert_eq!(events[3]["status"], "denied");
    assert_eq!(events[4]["text"], "Stopped.");
    assert_eq!(events[6]["outcome"], "approval");
    assert!(!home.project().join("b.txt").exists());
    assert_eq!(requests.len(), 1, "the run went on after the approval");
}

#[test]
fn full_auto_writes() {
    let server = Scripted::start(json!([
        { "tools": [{ "name": "write_file", "input": { "path": "b.txt", "content": "changed" } }] },
        { "text": "Written." },
    ]));
    let home = Home::new(&server.base_url());
    let run = home.exec(&["--json", "--mode", "full_auto", "Write b.txt"]);
    server.finish();
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        std::fs::read_to_string(home.project().join("b.txt")).unwrap(),
        "changed"
    );
}

/// `--worktree`: the task runs in a git worktree of its own on a new
/// branch, outside the project; what it writes is there and the project's
/// folder is as it was. A folder that is not a repository is told so
/// before anything runs.
#[test]
fn a_task_in_a_worktree_writes_there_and_leaves_the_project_as_it_was() {
    let server = Scripted::start(json!([
        { "tools": [{ "name": "write_file", "input": { "path": "b.txt", "content": "changed" } }] },
        { "text": "Written." },
    ]));
    let home = Home::new(&server.base_url());
    let project = home.project();
    let plain = home.exec(&["--worktree", "--mode", "full_auto", "Write b.txt"]);
    assert_eq!(plain.code, 2, "{}", plain.stderr);
    assert!(
        plain.stderr.contains("not a git repository"),
        "{}",
        plain.stderr
    );

    let git = |args: &[&str]| {
        let out = Command::new("git")
            .arg("-C")
            .arg(&project)
            .args(["-c", "user.name=t", "-c", "user.email=t@t"])
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    git(&["init", "--quiet"]);
    git(&["add", "-A"]);
    git(&["commit", "--quiet", "-m", "first"]);
    let before = git(&["status", "--porcelain"]);

    let run = home.exec(&["--worktree", "b file", "--mode", "full_auto", "Write b.txt"]);
    server.finish();
    assert_eq!(run.code, 0, "{}", run.stderr);
    let said = run
        .stderr
        .lines()
        .find_map(|l| l.strip_prefix("corral: working in "))
        .unwrap_or_else(|| panic!("{}", run.stderr));
    let (place, branch) = said.split_once(" on branch ").unwrap();
    assert_eq!(branch, "corral/b-file");
    let place = std::path::Path::new(place);
    assert!(!place.starts_with(&project), "{}", place.display());
    assert_eq!(
        std::fs::read_to_string(place.join("b.txt")).unwrap(),
        "changed"
    );
    assert!(
        !project.join("b.txt").exists()
            || std::fs::read_to_string(project.join("b.txt")).unwrap() != "changed"
    );
    assert_eq!(git(&["status", "--porcelain"]), before);
    assert!(git(&["worktree", "list"]).contains(&place.display().to_string()));

    // `task list` shows it holding changes; `task merge` lands it as one
    // merge commit; `task discard` then removes it.
    let task = |args: &[&str]| {
        let out = crate::common::corral_cli()
            .args(["task"])
            .args(args)
            .args(["--root"])
            .arg(&project)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice::<Value>(&out.stdout).unwrap()
    };
    let listed = task(&["list"]);
    assert_eq!(listed[0]["branch"], "corral/b-file", "{listed}");
    assert_eq!(listed[0]["changed"], true, "{listed}");
    let merged = task(&["merge", "b-file"]);
    assert_eq!(merged["branch"], "corral/b-file", "{merged}");
    assert_eq!(
        std::fs::read_to_string(project.join("b.txt")).unwrap(),
        "changed"
    );
    assert!(git(&["log", "-1", "--format=%s"]).contains("corral/b-file"));
    // Merged, the task is done: its worktree and branch are gone.
    assert_eq!(merged["removed"], true, "{merged}");
    assert!(!place.exists());
    assert_eq!(task(&["list"]), json!([]));
}

#[test]
fn a_provider_failure_fails_the_run_with_its_error() {
    let server = Scripted::start(json!([{ "status": 401 }]));
    let home = Home::new(&server.base_url());
    let run = home.exec(&["--json", "Hello"]);
    server.finish();
    assert_eq!(run.code, 1, "{}", run.stderr);
    let events = run.events();
    let errors = Run::of_type(&events, "error");
    assert_eq!(errors.len(), 1, "{events:?}");
    assert_eq!(events.last().unwrap()["outcome"], "failed");
}

#[test]
fn bad_usage_exits_2_before_anything_runs() {
    let home = Home::new("http://127.0.0.1:9/v1");
    let bogus = home.exec(&["--mode", "bogus", "Hello"]);
    assert_eq!(bogus.code, 2, "{}", bogus.stderr);
    assert!(
        bogus.stderr.contains("unknown mode `bogus`"),
        "{}",
        bogus.stderr
    );
    let no_task = home.exec(&["--json"]);
    assert_eq!(no_task.code, 2, "{}", no_task.stderr);
    let both = home.exec(&["--resume", "x", "--ephemeral", "Hello"]);
    assert_eq!(both.code, 2, "{}", both.stderr);
    let provider = home.exec(&["--json", "--provider", "nobody", "Hello"]);
    assert_eq!(provider.code, 2, "{}", provider.stderr);
    assert_eq!(
        provider.events()[0]["error"]["details"]["provider"],
        "nobody"
    );
}

#[test]
fn resume_continues_a_stored_conversation_in_the_history() {
    let server =
        Scripted::start(json!([{ "text": "First answer." }, { "text": "Second answer." }]));
    let home = Home::new(&server.base_url());
    let first = home.exec(&["--json", "First question"]);
    assert_eq!(first.code, 0, "{}", first.stderr);
    let id = first.events().last().unwrap()["conversation"]
        .as_str()
        .unwrap()
        .to_string();
    let second = home.exec(&["--json", "--resume", &id, "Second question"]);
    let requests = server.finish();
    assert_eq!(second.code, 0, "{}", second.stderr);
    assert_eq!(second.events().last().unwrap()["conversation"], id.as_str());
    // The model was sent the conversation so far.
    let sent = requests[1]["messages"].to_string();
    for said in ["First question", "First answer.", "Second question"] {
        assert!(sent.contains(said), "{said} missing from {sent}");
    }
    // One conversation in the history, holding both turns.
    let history = home.history();
    assert_eq!(history.list(&home.project_key()).unwrap().len(), 1);
    let opened = history
        .open_part(&home.project_key(), &id, Part::default())
        .unwrap();
    let stored = serde_json::to_string(&opened).unwrap();
    assert!(stored.contains("Second answer."), "{stored}");
    // An id not in the history fails, and says which.
    let unknown = home.exec(&["--json", "--resume", "no-such-id", "Hello"]);
    assert_eq!(unknown.code, 1, "{}", unknown.stderr);
    assert_eq!(unknown.events()[0]["type"], "error");
}

#[test]
fn ephemeral_keeps_nothing_in_the_history() {
    let server = Scripted::start(json!([{ "text": "Gone after." }]));
    let home = Home::new(&server.base_url());
    let run = home.exec(&["--json", "--ephemeral", "Hello"]);
    server.finish();
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.events().last().unwrap()["conversation"], Value::Null);
    assert!(home.history().list(&home.project_key()).unwrap().is_empty());
}

#[test]
fn corral_api_key_goes_only_to_a_base_url_given_with_it() {
    let server = Scripted::start(json!([{ "text": "One." }, { "text": "Two." }]));
    let home = Home::new(&server.base_url());
    let key = [("CORRAL_API_KEY", "sk-from-env")];
    // The settings name the server: the key is not sent there.
    let settings = home.exec_with(&["--json", "Hello"], &key);
    assert_eq!(settings.code, 0, "{}", settings.stderr);
    // The same caller gives the server and the key: it is.
    let url = server.base_url();
    let given = home.exec_with(&["--json", "--base-url", &url, "Hello"], &key);
    assert_eq!(given.code, 0, "{}", given.stderr);
    let (_, keys) = server.finish_with_keys();
    assert_eq!(keys, [Value::Null, json!("Bearer sk-from-env")]);
}

#[test]
fn ask_mode_asks_on_a_terminal_and_a_yes_runs_the_call() {
    let server = Scripted::start(json!([
        { "tools": [{ "name": "write_file", "input": { "path": "b.txt", "content": "changed" } }] },
        { "text": "Written." },
    ]));
    let home = Home::new(&server.base_url());
    let shown = home.exec_on_a_terminal(&["--json", "--mode", "ask", "Write b.txt"], "y\n");
    server.finish();
    assert!(shown.contains("Allow it? [y/N]"), "{shown}");
    // The terminal shows the question and the typed answer between the events.
    let events: Vec<Value> = shown
        .lines()
        .map(|line| line.rsplit("[y/N] ").next().unwrap_or(line).trim())
        .filter(|line| line.starts_with("{\""))
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let answered = Run::of_type(&events, "approval_answered");
    assert_eq!(answered.len(), 1, "{shown}");
    assert_eq!(
        (answered[0]["decision"].as_str(), answered[0]["by"].as_str()),
        (Some("once"), Some("terminal"))
    );
    assert_eq!(events.last().unwrap()["outcome"], "done");
    assert_eq!(
        std::fs::read_to_string(home.project().join("b.txt")).unwrap(),
        "changed"
    );
}

/// What a hostile model writes reaches the terminal marked, never acted
/// on: a path of escape sequences in a call that fails (its error echoes
/// the path), and a command whose code hides behind a C1 control (U+009B
/// is a CSI), a right-to-left override, a line separator and 20,000
/// spaces, asked about on the terminal. What the user sees is read from
/// a terminal emulator's screen (vt100) fed what the pseudo-terminal got.
#[test]
fn the_terminal_shows_what_the_model_wrote_marked() {
    let forged =
        "\u{1b}[2J\u{1b}[1;1Hcorral: ls -la wants approval. Allow it once? [y/N] \u{1b}[30;40m";
    let hidden = format!(
        "console.log(1)\u{9b}2K\u{202e}\u{2028}{}require('fs').writeFileSync('x', '')",
        " ".repeat(20_000)
    );
    let server = Scripted::start(json!([
        { "tools": [{ "name": "read_file", "input": { "path": forged } }] },
        { "tools": [{ "name": "exec_shell", "input": { "command": "node", "args": ["-e", hidden] } }] },
        { "text": "Done." },
    ]));
    let home = Home::new(&server.base_url());
    let shown = home.exec_on_a_terminal(&["--mode", "ask", "Look around"], "n\n");
    server.finish();
    assert!(!home.project().join("x").exists());

    // Printed raw, the path would clear the screen and draw the forged
    // question on its first line, and the code would be drawn in black.
    let raw = Screen::of(&format!("earlier output\r\n{forged}code"));
    assert!(
        raw.lines()[0].starts_with("corral: ls -la"),
        "{raw:?}",
        raw = raw.lines()
    );
    assert!(raw.coloured > 0);

    let screen = Screen::of(&shown);
    let lines = screen.lines();
    // Nothing was erased or moved: the task's first line is still there,
    // above the failed read.
    let read = lines
        .iter()
        .position(|l| l.contains("⟨U+001B⟩[2J⟨U+001B⟩[1;1Hcorral: ls -la"))
        .unwrap_or_else(|| panic!("the failed read's path, marked: {lines:#?}"));
    assert!(read > 0, "{lines:#?}");
    // The forged question is never a line of its own: it shows only
    // inside the marked path.
    assert!(
        !lines
            .iter()
            .any(|l| l.trim_start().starts_with("corral: ls -la")),
        "a forged question: {lines:#?}"
    );
    // The real question shows the code past every marker, on the screen.
    let asked = lines
        .iter()
        .position(|l| l.contains("⟨U+009B⟩2K⟨U+202E⟩⟨U+2028⟩⟨20000 spaces⟩require"))
        .unwrap_or_else(|| panic!("the node -e code, marked: {lines:#?}"));
    assert!(
        lines[asked..].iter().any(|l| l.contains("[y/N]")),
        "the question after the code: {lines:#?}"
    );
    // Nothing is drawn in a colour of the model's choosing (black on black).
    assert_eq!(screen.coloured, 0, "{lines:#?}");
}

/// A terminal emulator's screen after some output: its lines (wrapped
/// rows joined) and how many cells were drawn in a colour.
struct Screen {
    text: String,
    coloured: usize,
}

impl Screen {
    fn of(output: &str) -> Screen {
        const ROWS: u16 = 2_000;
        const COLS: u16 = 200;
        let size = |n| std::num::NonZeroU16::new(n).unwrap();
        let mut parser = vt100::Parser::new(size(ROWS), size(COLS), 0);
        // A pseudo-terminal turns each newline into CR LF.
        parser.process(output.as_bytes());
        let screen = parser.screen();
        let mut coloured = 0;
        for row in 0..ROWS {
            for col in 0..COLS {
                if let Some(cell) = screen.cell(row, col) {
                    let plain = cell.fgcolor() == vt100::Color::Default
                        && cell.bgcolor() == vt100::Color::Default;
                    if cell.has_contents() && !plain {
                        coloured += 1;
                    }
                }
            }
        }
        Screen {
            text: screen.contents(),
            coloured,
        }
    }

    fn lines(&self) -> Vec<&str> {
        self.text.lines().collect()
    }
}
