//! `corral-cli acp` driven by an editor's side written with the official
//! ACP TypeScript SDK (tests/acp/client.mjs, pinned in tests/acp/package.json,
//! installed by `scripts/setup.sh --test`), the real binary against the
//! scripted LLM server the exec tests use (real HTTP on loopback), in a real
//! project folder with the app's settings and history in a home of its own.

use crate::common::{Home, Scripted};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn tests_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests")
}

impl Home {
    /// Runs the SDK's client against `corral-cli acp` with `plan`
    /// (client.mjs); its report.
    fn client(&self, mut plan: Value) -> Report {
        let modules = tests_dir().join("acp/node_modules/@agentclientprotocol/sdk");
        assert!(
            modules.exists(),
            "the ACP test client is missing: run `scripts/setup.sh --test`"
        );
        plan["command"] = json!([
            env!("CARGO_BIN_EXE_corral-cli"),
            "acp",
            "--no-lsp",
            "--no-checkpoint"
        ]);
        plan["cwd"] = json!(self.project());
        let out = Command::new("node")
            .arg(tests_dir().join("acp/client.mjs"))
            .arg(plan.to_string())
            .env("HOME", self.dir.path())
            .env("XDG_CONFIG_HOME", self.dir.path().join("config"))
            .env("XDG_DATA_HOME", self.dir.path().join("data"))
            .env("CORRAL_NO_KEYCHAIN", "1")
            .env_remove("CORRAL_PROVIDER")
            .env_remove("CORRAL_BASE_URL")
            .env_remove("CORRAL_MODEL")
            .env_remove("CORRAL_API_KEY")
            .stderr(Stdio::inherit())
            .output()
            .unwrap();
        assert!(out.status.success(), "the client failed");
        Report(serde_json::from_slice(&out.stdout).unwrap())
    }
}

struct Report(Value);

impl Report {
    /// The updates of prompt `turn` (-1: those before any prompt, a load's).
    fn updates(&self, turn: i64) -> Vec<Value> {
        self.0["updates"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|pair| pair[0] == turn)
            .map(|pair| pair[1].clone())
            .collect()
    }

    fn kinds(&self, turn: i64, kind: &str) -> Vec<Value> {
        self.updates(turn)
            .into_iter()
            .filter(|u| u["sessionUpdate"] == kind)
            .collect()
    }

    /// The agent's message of prompt `turn`, its chunks joined.
    fn message(&self, turn: i64, kind: &str) -> String {
        self.kinds(turn, kind)
            .iter()
            .map(|u| u["content"]["text"].as_str().unwrap().to_string())
            .collect()
    }

    fn stops(&self) -> Vec<Value> {
        self.0["stops"].as_array().unwrap().clone()
    }
}

#[test]
fn a_prompt_streams_the_answer_as_message_chunks() {
    let llm = Scripted::start(json!([{ "text": "Hello from the scripted model." }]));
    let home = Home::new(&llm.base_url());
    let report = home.client(json!({ "prompts": ["say hello"] }));
    assert_eq!(report.0["initialize"]["protocolVersion"], 1);
    assert_eq!(
        report.0["initialize"]["agentCapabilities"]["loadSession"],
        true
    );
    assert_eq!(report.stops(), vec![json!("end_turn")]);
    assert_eq!(
        report.message(0, "agent_message_chunk"),
        "Hello from the scripted model."
    );
    // The prompt is the editor's own: not echoed back.
    assert!(report.kinds(0, "user_message_chunk").is_empty());
    let requests = llm.finish();
    assert_eq!(requests.len(), 1);
    assert!(requests[0].to_string().contains("say hello"));
    // Stored where the window shows it.
    let project = home.project().display().to_string();
    assert_eq!(home.history().list(&project).unwrap().len(), 1);
}

#[test]
fn each_change_asks_the_editor_and_runs_only_when_it_allows() {
    let write = |path: &str| json!({ "tools": [{ "name": "write_file", "input": { "path": path, "content": "new\n" } }] });
    let llm = Scripted::start(json!([
        write("b.txt"), { "text": "wrote b" },
        write("c.txt"), { "text": "c was refused" },
    ]));
    let home = Home::new(&llm.base_url());
    let report = home.client(json!({
        "prompts": ["write b", "write c"],
        "answers": ["once", "deny"],
    }));
    assert_eq!(report.stops(), vec![json!("end_turn"), json!("end_turn")]);
    assert_eq!(
        std::fs::read_to_string(home.project().join("b.txt")).unwrap(),
        "new\n"
    );
    assert!(
        !home.project().join("c.txt").exists(),
        "a refused write ran"
    );

    let asked = report.0["permissions"].as_array().unwrap();
    assert_eq!(asked.len(), 2, "{asked:?}");
    let b = home.project().join("b.txt").display().to_string();
    assert_eq!(asked[0]["toolCall"]["kind"], "edit");
    assert_eq!(asked[0]["toolCall"]["locations"][0]["path"], b);
    let kinds: Vec<&str> = asked[0]["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["allow_once", "allow_always", "reject_once"]);

    // The granted call: pending, running, completed, with its diff.
    let calls = report.kinds(0, "tool_call");
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0]["locations"][0]["path"], b);
    let id = calls[0]["toolCallId"].clone();
    let updates: Vec<Value> = report
        .kinds(0, "tool_call_update")
        .into_iter()
        .filter(|u| u["toolCallId"] == id)
        .collect();
    let statuses: Vec<&str> = updates
        .iter()
        .map(|u| u["status"].as_str().unwrap())
        .collect();
    assert_eq!(statuses, ["in_progress", "completed"]);
    let diff = &updates[1]["content"][0];
    assert_eq!(diff["type"], "diff");
    assert_eq!(diff["path"], b);
    assert_eq!(diff["newText"], "new\n");
    assert_eq!(report.message(0, "agent_message_chunk"), "wrote b");

    // The refused one fails, and the model is told.
    let refused = report.kinds(1, "tool_call_update");
    assert_eq!(refused.last().unwrap()["status"], "failed");
    let requests = llm.finish();
    assert!(
        requests[3].to_string().contains("denied"),
        "{}",
        requests[3]
    );
}

#[test]
fn allowing_in_the_conversation_stops_asking_for_that_call() {
    let write = || json!({ "tools": [{ "name": "write_file", "input": { "path": "b.txt", "content": "new\n" } }] });
    let llm = Scripted::start(json!([write(), { "text": "one" }, write(), { "text": "two" }]));
    let home = Home::new(&llm.base_url());
    let report = home.client(json!({ "prompts": ["write", "again"], "answers": ["grant"] }));
    assert_eq!(report.stops(), vec![json!("end_turn"), json!("end_turn")]);
    assert_eq!(report.0["permissions"].as_array().unwrap().len(), 1);
    assert_eq!(
        report.kinds(1, "tool_call_update").last().unwrap()["status"],
        "completed"
    );
    llm.finish();
}

#[test]
fn cancel_stops_the_turn_and_its_running_command() {
    let command = json!({ "name": "exec_shell", "input": {
        "command": "python3", "args": ["-c", "import time; time.sleep(60)"] } });
    let llm = Scripted::start(json!([{ "tools": [command] }, { "text": "not reached" }]));
    let home = Home::new(&llm.base_url());
    let started = Instant::now();
    let report = home.client(json!({
        "meta": { "corral": { "mode": "full_auto" } },
        "prompts": ["wait a minute"],
        "cancelAfter": "tool_call_update",
    }));
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(report.stops(), vec![json!("cancelled")]);
    let last = report.kinds(0, "tool_call_update").last().unwrap().clone();
    assert_eq!(last["status"], "failed", "{last}");
    let requests = llm.finish();
    assert_eq!(requests.len(), 1, "the turn went on after the cancel");
}

#[test]
fn load_replays_a_stored_conversation() {
    let llm = Scripted::start(json!([
        { "tools": [{ "name": "read_file", "input": { "path": "a.txt" } }] },
        { "text": "It says hello." },
        { "text": "Still hello." },
    ]));
    let home = Home::new(&llm.base_url());
    let first = home.client(json!({
        "meta": { "corral": { "mode": "read_only" } },
        "prompts": ["what is in a.txt?"],
    }));
    assert_eq!(first.stops(), vec![json!("end_turn")]);
    let project = home.project().display().to_string();
    let stored = home.history().list(&project).unwrap();
    assert_eq!(stored.len(), 1);
    let id = stored[0].id.clone();

    // A new editor process loads it by its id, then goes on with it.
    let loaded = home.client(json!({ "load": id, "prompts": ["and now?"] }));
    assert_eq!(
        loaded.message(-1, "user_message_chunk"),
        "what is in a.txt?"
    );
    assert_eq!(loaded.message(-1, "agent_message_chunk"), "It says hello.");
    let read = loaded.kinds(-1, "tool_call");
    assert_eq!(read[0]["kind"], "read");
    assert_eq!(
        loaded.kinds(-1, "tool_call_update").last().unwrap()["status"],
        "completed"
    );
    assert_eq!(loaded.stops(), vec![json!("end_turn")]);
    assert_eq!(loaded.message(0, "agent_message_chunk"), "Still hello.");
    let requests = llm.finish();
    // The third request carries the whole conversation.
    assert!(requests[2].to_string().contains("what is in a.txt?"));
    assert!(requests[2].to_string().contains("and now?"));
    assert_eq!(home.history().list(&project).unwrap().len(), 1);
}

/// `_meta.corral.worktree` asks for a task's worktree: the session works
/// there, on its own branch, judged with the project's settings; the
/// project's folder stays as it was, and the answer says where it works.
#[test]
fn a_session_may_ask_for_a_worktree_of_its_own() {
    let write =
        json!({ "name": "write_file", "input": { "path": "b.txt", "content": "from the task\n" } });
    let llm = Scripted::start(json!([{ "tools": [write] }, { "text": "Written." }]));
    let home = Home::new(&llm.base_url());
    let project = home.project();
    let git = |args: &[&str]| {
        let ok = Command::new("git")
            .arg("-C")
            .arg(&project)
            .args(["-c", "user.name=t", "-c", "user.email=t@t"])
            .args(args)
            .status()
            .unwrap();
        assert!(ok.success(), "git {args:?}");
    };
    // Not a repository: refused before anything runs.
    let refused = home.client(json!({
        "meta": { "corral": { "mode": "full_auto", "worktree": "fix-it" } },
        "prompts": [],
    }));
    assert!(
        refused.0["newError"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("not a git repository")),
        "{}",
        refused.0
    );
    git(&["init", "--quiet"]);
    git(&["add", "."]);
    git(&["commit", "--quiet", "-m", "first"]);
    let report = home.client(json!({
        "meta": { "corral": { "mode": "full_auto", "worktree": "fix-it" } },
        "prompts": ["write b.txt"],
    }));
    assert_eq!(report.stops(), vec![json!("end_turn")]);
    let made = &report.0["created"]["_meta"]["corral"];
    assert_eq!(made["branch"], "corral/fix-it", "{}", report.0);
    let place = PathBuf::from(made["worktree"].as_str().unwrap());
    assert!(!place.starts_with(&project));
    assert_eq!(
        std::fs::read_to_string(place.join("b.txt")).unwrap(),
        "from the task\n"
    );
    assert!(!project.join("b.txt").exists());
    // Its conversation is kept under the worktree's folder.
    let key = place.display().to_string();
    assert_eq!(home.history().list(&key).unwrap().len(), 1);
    llm.finish();
}

/// The session methods made stable during 2026, through the official
/// SDK: a turn ends with `usage_update`; the new session's id is its
/// conversation's in the history; a later editor process lists the
/// project's sessions (by their history ids), resumes one without replay
/// and goes on with it, closes it, and deletes it.
#[test]
fn sessions_are_listed_resumed_closed_and_deleted() {
    let llm = Scripted::start(json!([{ "text": "First answer." }, { "text": "Second answer." }]));
    let home = Home::new(&llm.base_url());
    let first = home.client(json!({ "prompts": ["remember the kettle"] }));
    assert_eq!(first.stops(), vec![json!("end_turn")]);
    let usage = first.kinds(0, "usage_update");
    assert_eq!(usage.len(), 1, "{:?}", first.updates(0));
    assert!(usage[0]["used"].is_number() && usage[0]["size"].is_number());
    let caps = &first.0["initialize"]["agentCapabilities"]["sessionCapabilities"];
    for method in ["list", "resume", "close", "delete"] {
        assert!(caps.get(method).is_some(), "{caps}");
    }
    let project = home.project().display().to_string();
    let id = home.history().list(&project).unwrap()[0].id.clone();
    // The session's id is the history's.
    assert_eq!(first.0["session"], json!(id), "{}", first.0);

    let later = home.client(json!({
        "noSession": true,
        "steps": [
            { "method": "list", "params": { "cwd": "$cwd" } },
            { "method": "resume", "params": { "sessionId": id, "cwd": "$cwd", "mcpServers": [] } },
            { "method": "prompt", "params": { "sessionId": id, "prompt": [{ "type": "text", "text": "which kettle?" }] } },
            { "method": "close", "params": { "sessionId": id } },
            { "method": "delete", "params": { "sessionId": id } },
            { "method": "list", "params": { "cwd": "$cwd" } },
            { "method": "delete", "params": { "sessionId": "no-such-session" } },
        ],
    }));
    let steps = later.0["steps"].as_array().unwrap().clone();
    let listed = &steps[0]["ok"]["sessions"];
    assert_eq!(listed[0]["sessionId"], json!(id), "{listed}");
    assert_eq!(listed[0]["cwd"], json!(project));
    assert!(
        listed[0]["updatedAt"].as_str().unwrap().ends_with('Z'),
        "{listed}"
    );
    assert!(steps[1].get("ok").is_some(), "{}", steps[1]);
    assert_eq!(steps[2]["ok"]["stopReason"], "end_turn", "{}", steps[2]);
    // Resumed, not replayed: nothing of the first turn was sent again as updates.
    assert!(later.updates(-1).is_empty(), "{:?}", later.updates(-1));
    assert!(
        steps[3].get("ok").is_some() && steps[4].get("ok").is_some(),
        "{steps:?}"
    );
    assert_eq!(steps[5]["ok"]["sessions"], json!([]), "{}", steps[5]);
    assert!(steps[6].get("error").is_some(), "{}", steps[6]);
    let requests = llm.finish();
    assert_eq!(requests.len(), 2);
    // The resumed turn carried the first one.
    assert!(requests[1].to_string().contains("remember the kettle"));
}

#[test]
fn an_unknown_session_is_a_standardized_error() {
    let llm = Scripted::start(json!([]));
    let home = Home::new(&llm.base_url());
    let report = home.client(json!({ "load": "no-such-conversation", "prompts": [] }));
    assert!(report.0["session"].is_null(), "{}", report.0);
    let error = &report.0["loadError"];
    assert_eq!(error["code"], -32602, "{error}");
    assert_eq!(error["data"]["code"], "not_found", "{error}");
    llm.finish();
}

#[test]
fn the_users_mcp_servers_start_and_their_tools_run() {
    let llm = Scripted::start(json!([
        { "tools": [{ "name": "fixture__echo", "input": { "text": "from the server" } }] },
        { "text": "echoed" },
    ]));
    let home = Home::new(&llm.base_url());
    // The fixture server, copied into the project (the sandbox shows a
    // server a /tmp of its own), added as the app's settings keep it.
    let script = home.project().join(".fixture/mcp_server.py");
    std::fs::create_dir_all(script.parent().unwrap()).unwrap();
    std::fs::copy(
        tests_dir().join("../../corral-testkit/fixtures/mcp_server.py"),
        &script,
    )
    .unwrap();
    let servers = json!({ "servers": [{ "name": "fixture", "command": "/usr/bin/python3",
        "args": [script], "timeout_secs": 5 }] });
    let config = home.dir.path().join("config/dev.corral.desktop/mcp.json");
    std::fs::write(config, servers.to_string()).unwrap();
    let report = home.client(json!({ "prompts": ["echo"], "answers": ["once"] }));
    assert_eq!(report.stops(), vec![json!("end_turn")]);
    let end = report.kinds(0, "tool_call_update").last().unwrap().clone();
    assert_eq!(end["status"], "completed", "{end}");
    assert!(
        end["rawOutput"].to_string().contains("from the server"),
        "{end}"
    );
    let requests = llm.finish();
    assert!(requests[0].to_string().contains("fixture__echo"));
}

/// The permission request marks what the model wrote: a command's title
/// (its argv joined) shows U+2028, a run of spaces and U+202E as markers,
/// and its content lists each argument on its own line, so `touch ["a b"]`
/// and `touch ["a","b"]` read apart.
#[test]
fn a_permission_request_shows_a_command_marked_and_whole() {
    let hidden = format!("a\u{2028}b{}c\u{202e}d", " ".repeat(400));
    let llm = Scripted::start(json!([
        { "tools": [{ "name": "exec_shell", "input": { "command": "touch", "args": [hidden] } }] },
        { "text": "refused" },
    ]));
    let home = Home::new(&llm.base_url());
    let report = home.client(json!({ "prompts": ["touch it"], "answers": ["deny"] }));
    llm.finish();
    let asked = report.0["permissions"].as_array().unwrap();
    assert_eq!(asked.len(), 1, "{asked:?}");
    let call = &asked[0]["toolCall"];
    let title = call["title"].as_str().unwrap();
    for raw in ['\u{2028}', '\u{202e}'] {
        assert!(!title.contains(raw), "{title:?}");
    }
    assert!(title.contains("⟨U+2028⟩b⟨400 spaces⟩c⟨U+202E⟩d"), "{title}");
    let text = call["content"][0]["content"]["text"].as_str().unwrap();
    assert!(text.contains("command: touch\n"), "{text}");
    assert!(
        text.contains("args: [\"a⟨U+2028⟩b⟨400 spaces⟩c⟨U+202E⟩d\"]"),
        "{text}"
    );
    assert!(!home.project().join("a").exists());
}

/// The editor leaves (its end of stdin closes: it quit or was killed)
/// while a command runs: the command and the agent end within 2 s, not
/// at the command's time limit (they used to take its whole 30 s).
#[test]
fn an_editor_that_leaves_mid_command_ends_everything_at_once() {
    use std::io::{BufRead, BufReader, Write};
    let marker = format!("corral-acp-left-{}", std::process::id());
    let command = json!({ "name": "exec_shell", "input": {
        "command": "python3", "args": ["-c", "import time, sys; time.sleep(60)", &marker],
        "timeout_secs": 120 } });
    let llm = Scripted::start(json!([{ "tools": [command] }, { "text": "not reached" }]));
    let home = Home::new(&llm.base_url());
    let mut agent = home
        .command(Command::new(env!("CARGO_BIN_EXE_corral-cli")), &[])
        .args(["acp", "--no-lsp", "--no-checkpoint"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = agent.stdin.take().unwrap();
    let mut lines = BufReader::new(agent.stdout.take().unwrap()).lines();
    let mut send = |message: Value| writeln!(stdin, "{message}").unwrap();
    let mut answer = |id: u64| loop {
        let line: Value = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
        if line["id"] == json!(id) && line.get("method").is_none() {
            return line;
        }
    };
    send(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": 1, "clientCapabilities": {}}}));
    answer(1);
    send(
        json!({"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": {
        "cwd": home.project(), "mcpServers": [],
        "_meta": { "corral": { "mode": "full_auto" } } }}),
    );
    let session = answer(2)["result"]["sessionId"].clone();
    send(
        json!({"jsonrpc": "2.0", "id": 3, "method": "session/prompt", "params": {
        "sessionId": session, "prompt": [{ "type": "text", "text": "wait a minute" }] }}),
    );
    // What it says from now on is read and let go, as an editor would. The
    // command is known by its program and marker (the scripted model's
    // process holds the marker too).
    let reading = std::thread::spawn(move || lines.count());
    let started = Instant::now();
    while crate::ssh::processes("python3", &marker).is_empty() {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the command never started"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    drop(stdin);
    let left = Instant::now();
    let ended = loop {
        if let Some(status) = agent.try_wait().unwrap() {
            break status;
        }
        assert!(
            left.elapsed() < Duration::from_secs(2),
            "the agent lives on"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(ended.success(), "{ended:?}");
    assert_eq!(crate::ssh::processes("python3", &marker), Vec::<u32>::new());
    reading.join().unwrap();
    llm.finish();
}
