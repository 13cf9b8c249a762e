//! `corral-cli serve` spoken to directly on its pipes, as ssh carries it
//! for a remote project (docs/remote.md): its first line, answers by id,
//! and what it says of requests it cannot take.

use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Stdio};

struct Serve {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
}

impl Serve {
    fn start(root: &std::path::Path) -> Serve {
        Serve::start_in(root, "ask")
    }

    fn start_in(root: &std::path::Path, mode: &str) -> Serve {
        Serve::start_with(root, mode, None)
    }

    /// serve with its data folder (where a task's worktree goes) in `data`.
    fn start_with(root: &std::path::Path, mode: &str, data: Option<&std::path::Path>) -> Serve {
        let mut command = crate::common::corral_cli();
        if let Some(data) = data {
            command.env("XDG_DATA_HOME", data);
        }
        let mut child = command
            .args(["serve", "--root"])
            .arg(root)
            .args(["--mode", mode, "--no-lsp", "--no-checkpoint"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        Serve {
            child,
            stdin,
            stdout,
        }
    }

    fn send(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{line}").unwrap();
        stdin.flush().unwrap();
    }

    fn read(&mut self) -> Value {
        let mut line = String::new();
        self.stdout.read_line(&mut line).unwrap();
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line:?}"))
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn serve_says_it_is_ready_answers_by_id_and_ends_with_its_stdin() {
    let project = tempfile::tempdir().unwrap();
    std::fs::write(project.path().join("a.txt"), "hello\n").unwrap();
    let mut serve = Serve::start(project.path());
    let ready = serve.read();
    assert_eq!(
        ready["ready"]["version"],
        env!("CARGO_PKG_VERSION"),
        "{ready}"
    );

    serve.send(
        &json!({"id": 7, "command": "call_tool", "args": {"name": "read_file", "input": {"path": "a.txt"}}})
            .to_string(),
    );
    let answer = serve.read();
    assert_eq!(answer["id"], 7);
    assert_eq!(answer["ok"]["content"], "hello\n", "{answer}");

    // In `ask`, a write is not run unanswered: the session's own error.
    serve.send(
        &json!({"id": 8, "command": "call_tool", "args": {"name": "write_file", "input": {"path": "b.txt", "content": "x"}}})
            .to_string(),
    );
    let answer = serve.read();
    assert_eq!(
        (&answer["id"], &answer["error"]["code"]),
        (&json!(8), &json!("approval_required")),
        "{answer}"
    );
    assert!(!project.path().join("b.txt").exists());

    serve.send("not json");
    let answer = serve.read();
    assert_eq!(answer["id"], Value::Null);
    assert_eq!(answer["error"]["code"], "invalid_input", "{answer}");

    serve.send(&json!({"id": 9, "command": "open_project", "args": {}}).to_string());
    let answer = serve.read();
    assert_eq!(answer["error"]["code"], "not_found", "{answer}");

    // Its stdin closed (the connection gone): it exits.
    drop(serve.stdin.take());
    assert!(serve.child.wait().unwrap().success());
}

#[test]
fn a_root_that_is_not_a_folder_is_said_on_the_first_line() {
    let file = tempfile::NamedTempFile::new().unwrap();
    let mut serve = Serve::start(file.path());
    let first = serve.read();
    assert!(first.get("ready").is_none(), "{first}");
    assert_eq!(first["failed"]["code"], "not_a_directory", "{first}");
    assert_eq!(serve.child.wait().unwrap().code(), Some(1));
}

#[test]
fn a_character_split_between_two_chunks_of_output_is_streamed_whole() {
    let project = tempfile::tempdir().unwrap();
    let mut serve = Serve::start_in(project.path(), "full_auto");
    assert!(serve.read().get("ready").is_some());
    // "é" is 0xC3 0xA9: its two bytes leave the command 300 ms apart.
    let script = "process.stdout.write(Buffer.from([0xc3])); \
        setTimeout(() => process.stdout.write(Buffer.from([0xa9, 0x0a])), 300)";
    let input = json!({"command": "node", "args": ["-e", script]});
    serve.send(
        &json!({"id": 1, "command": "call_tool", "output": true,
            "args": {"name": "exec_shell", "input": input}})
        .to_string(),
    );
    let mut streamed = String::new();
    let answer = loop {
        let message = serve.read();
        match message.get("event") {
            Some(event) => streamed.push_str(event["data"].as_str().unwrap()),
            None => break message,
        }
    };
    assert_eq!(answer["ok"]["exit_code"], 0, "{answer}");
    assert_eq!(streamed, "é\n");
}

impl Serve {
    /// Sends request `id` and reads until its answer, keeping the
    /// questions serve pushed meanwhile in `questions`.
    fn ask(&mut self, id: u64, command: &str, args: Value, questions: &mut Vec<Value>) -> Value {
        self.send(&json!({"id": id, "command": command, "args": args}).to_string());
        loop {
            let line = self.read();
            if line["id"] == id {
                return line;
            }
            if let Some(question) = line.get("question") {
                questions.push(question.clone());
            }
        }
    }
}

#[test]
fn a_domain_off_the_allowlist_is_asked_about_only_once_the_client_listens() {
    if !corral_sandbox::namespaces_available() || !std::path::Path::new("/usr/bin/python3").exists()
    {
        eprintln!("note: no namespaces or no python3 here; skipping");
        return;
    }
    let project = tempfile::tempdir().unwrap();
    let mut serve = Serve::start(project.path());
    serve.read();
    let mut questions = Vec::new();
    let sent = serve.ask(
        1,
        "use_settings",
        json!({"programs": ["python3"]}),
        &mut questions,
    );
    assert!(sent.get("ok").is_some(), "{sent}");
    let code = "import urllib.request\ntry:\n    urllib.request.urlopen('http://elsewhere.invalid/', timeout=30)\nexcept Exception as e:\n    print('failed', e)";
    let input = json!({"command": "python3", "args": ["-c", code]});
    let checked = serve.ask(
        2,
        "check_call",
        json!({"tool": "exec_shell", "input": input, "conversation": "c1"}),
        &mut questions,
    );
    let ticket = checked["ok"]["ticket"].clone();
    let approval = json!({"scope": "once", "network": true});

    // No one listens (exec without a terminal): refused at once, with the
    // hint of a host that cannot ask.
    let ran = serve.ask(
        3,
        "run_call",
        json!({"ticket": ticket, "approval": approval}),
        &mut questions,
    );
    let stderr = ran["ok"]["stderr"].as_str().unwrap_or_default();
    assert!(
        stderr.contains("refused GET http://elsewhere.invalid"),
        "{ran}"
    );
    assert!(stderr.contains("--allow-domain"), "{ran}");
    assert!(questions.is_empty(), "{questions:?}");

    // The client listens: the question is pushed, with no id, and the
    // command waits for the answer.
    let listening = serve.ask(4, "domain_questions", json!({}), &mut questions);
    assert_eq!(listening["ok"], Value::Null, "{listening}");
    let checked = serve.ask(
        5,
        "check_call",
        json!({"tool": "exec_shell", "input": input, "conversation": "c1"}),
        &mut questions,
    );
    serve.send(
        &json!({"id": 6, "command": "run_call",
            "args": {"ticket": checked["ok"]["ticket"], "approval": approval}})
        .to_string(),
    );
    let asked = serve.read();
    assert_eq!(asked["question"]["kind"], "asked", "{asked}");
    assert_eq!(asked["question"]["conversation"], "c1", "{asked}");
    assert_eq!(asked["question"]["domain"], "elsewhere.invalid", "{asked}");
    assert!(asked.get("id").is_none(), "{asked}");
    let id = asked["question"]["id"].clone();
    serve.send(
        &json!({"id": 7, "command": "answer_domain", "args": {"id": id, "allow": false}})
            .to_string(),
    );
    let (mut answered, mut ran) = (None, None);
    while answered.is_none() || ran.is_none() {
        let line = serve.read();
        match line["id"].as_u64() {
            Some(7) => answered = Some(line),
            Some(6) => ran = Some(line),
            _ => questions.push(line["question"].clone()),
        }
    }
    assert_eq!(answered.unwrap()["ok"], true);
    let ran = ran.unwrap();
    let stderr = ran["ok"]["stderr"].as_str().unwrap_or_default();
    assert!(stderr.contains("the user did not allow it"), "{ran}");
    assert_eq!(questions, [json!({"kind": "closed", "id": id})]);
}

/// serve answers every project command of the table (the window's and
/// exec's, from the same code): each with a result or the standardized
/// error of its arguments, none with "not a command". The model's and
/// the history's stay on the near side: serve has no keys nor history.
#[test]
fn serve_answers_every_command_of_the_projects_table() {
    let project = tempfile::tempdir().unwrap();
    let mut serve = Serve::start(project.path());
    serve.read();
    let project = corral_host::COMMANDS
        .iter()
        .filter(|c| c.serves == corral_host::Serves::Session);
    for (id, command) in project.enumerate() {
        serve.send(&json!({"id": id, "command": command.name, "args": {}}).to_string());
        // Answered as they finish: a question may come between.
        let answer = loop {
            let line = serve.read();
            if line.get("id").is_some() {
                break line;
            }
        };
        assert_eq!(answer["id"], id, "{answer}");
        let message = answer["error"]["message"].as_str().unwrap_or_default();
        assert!(
            !message.contains("not a command"),
            "{}: {answer}",
            command.name
        );
        if answer.get("error").is_some() {
            assert!(answer["error"]["code"].is_string(), "{answer}");
        }
    }
}

/// A remote project's tasks are serve's: `task_new` makes a worktree in
/// the remote's data folder, a command naming the task runs in its
/// session there (never in the project's folder), `task_list` and
/// `task_diff` say what it changed, and `task_merge` lands it.
#[test]
fn serve_makes_runs_and_lands_a_task() {
    let project = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    std::fs::write(project.path().join("a.txt"), "one\n").unwrap();
    let git = |args: &[&str]| {
        let ok = std::process::Command::new("git")
            .arg("-C")
            .arg(project.path())
            .args(["-c", "user.name=t", "-c", "user.email=t@t"])
            .args(args)
            .status()
            .unwrap();
        assert!(ok.success(), "git {args:?}");
    };
    git(&["init", "--quiet"]);
    git(&["add", "."]);
    git(&["commit", "--quiet", "-m", "first"]);
    let mut serve = Serve::start_with(project.path(), "full_auto", Some(data.path()));
    serve.read();
    let mut ask = |id: u64, command: &str, args: Value| {
        serve.send(&json!({"id": id, "command": command, "args": args}).to_string());
        let answer = serve.read();
        assert_eq!(answer["id"], id, "{answer}");
        answer
    };
    let made = ask(1, "task_new", json!({"name": "Fix it"}));
    assert_eq!(made["ok"]["branch"], "corral/fix-it", "{made}");
    let place = std::path::PathBuf::from(made["ok"]["path"].as_str().unwrap());
    assert!(place.starts_with(data.path()), "{}", place.display());

    let wrote = ask(
        2,
        "call_tool",
        json!({"task": "fix-it", "name": "write_file", "input": {"path": "a.txt", "content": "fixed\n"}}),
    );
    assert!(wrote.get("ok").is_some(), "{wrote}");
    assert_eq!(
        std::fs::read_to_string(place.join("a.txt")).unwrap(),
        "fixed\n"
    );
    assert_eq!(
        std::fs::read_to_string(project.path().join("a.txt")).unwrap(),
        "one\n"
    );
    let listed = ask(3, "task_list", json!({}));
    assert_eq!(listed["ok"][0]["size"]["files"], 1, "{listed}");
    let diff = ask(4, "task_diff", json!({"task": "fix-it"}));
    assert_eq!(diff["ok"]["files"][0]["after"], "fixed\n", "{diff}");
    let unknown = ask(
        5,
        "call_tool",
        json!({"task": "nope", "name": "read_file", "input": {"path": "a.txt"}}),
    );
    assert_eq!(unknown["error"]["code"], "not_found", "{unknown}");
    let merged = ask(6, "task_merge", json!({"task": "fix-it", "prefer": null}));
    assert_eq!(merged["ok"]["removed"], true, "{merged}");
    assert_eq!(
        std::fs::read_to_string(project.path().join("a.txt")).unwrap(),
        "fixed\n"
    );
    assert!(!place.exists());
}

/// The window goes away (serve's stdin ends: the connection dropped, or
/// the app was killed) while a command runs: serve and the command are
/// gone within 2 s, not at the command's time limit.
#[test]
fn a_connection_that_ends_mid_command_ends_everything_at_once() {
    let project = tempfile::tempdir().unwrap();
    let marker = format!("corral-serve-left-{}", std::process::id());
    let mut serve = Serve::start_in(project.path(), "full_auto");
    assert!(serve.read().get("ready").is_some());
    let input = json!({"command": "python3",
        "args": ["-c", "import time; time.sleep(60)", &marker], "timeout_secs": 120});
    serve.send(
        &json!({"id": 1, "command": "call_tool", "args": {"name": "exec_shell", "input": input}})
            .to_string(),
    );
    let started = std::time::Instant::now();
    while crate::ssh::processes("python3", &marker).is_empty() {
        assert!(
            started.elapsed() < std::time::Duration::from_secs(30),
            "the command never started"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    drop(serve.stdin.take());
    let left = std::time::Instant::now();
    while serve.child.try_wait().unwrap().is_none() {
        assert!(
            left.elapsed() < std::time::Duration::from_secs(2),
            "serve lives on"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert_eq!(crate::ssh::processes("python3", &marker), Vec::<u32>::new());
}
