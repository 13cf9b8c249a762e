//! The app as an MCP client, against a fixture server (a Python script of
//! the standard library, `corral-testkit/fixtures/mcp_server.py`) started by the app in
//! the project under the same sandbox as commands: its tools reach the
//! model as `SERVER__TOOL`; a call asks unless the server is trusted or the
//! tool marked read-only, and runs only approved; a write outside the
//! project fails; a crash, a hang, a 50 MB result, a line that is not JSON
//! and a schema that is not an object each give a clear answer while the
//! other servers go on; closing the project stops the servers.

use corral_app::state::AppState;
use corral_app::store::mcp::{McpServerConfig, McpSettings};
use corral_app::store::Store;
use corral_session::approvals::Answer;
use corral_session::grants::Grant;
use corral_session::mcp::{McpServerStatus, McpState};
use corral_session::{Call, Consent, RunContext};
use corral_testkit::mcp::{self, text_of, PYTHON};
use corral_testkit::Project;
use corral_tools::policy::Decision;
use corral_tools::shell::ShellRun;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Stands for the fixture script in a server's arguments until the project
/// exists: the script is copied into it, since the sandbox shows the server
/// a `/tmp` of its own (a checkout under `/tmp` would be out of its sight).
const FIXTURE: &str = "{fixture}";

/// Whether the fixture can run here in the real sandbox.
fn ready() -> bool {
    corral_testkit::fenced(&[PYTHON])
}

fn server(name: &str, extra: &[&str]) -> McpServerConfig {
    mcp::stdio_server(name, Path::new(FIXTURE), extra)
}

struct Fixture {
    kit: Project,
    state: AppState,
    project: PathBuf,
}

/// An app with these servers saved, the project open, every server started.
fn open_with(
    servers: Vec<McpServerConfig>,
    secrets: BTreeMap<String, BTreeMap<String, String>>,
) -> Fixture {
    let kit = Project::new();
    let project = kit.root().to_path_buf();
    let script = mcp::stdio_script_in(&project);
    let servers = servers
        .into_iter()
        .map(|mut server| {
            for arg in &mut server.args {
                if arg == FIXTURE {
                    *arg = script.display().to_string();
                }
            }
            server
        })
        .collect();
    let store = Store::without_keychain(kit.config_dir(), kit.data_dir());
    store
        .save_mcp_settings(McpSettings { servers, secrets })
        .unwrap();
    let state = AppState::new(store);
    state.open_project(&project).unwrap();
    let f = Fixture {
        kit,
        state,
        project,
    };
    wait_until(&f, "every server started", |all| {
        all.iter()
            .all(|s| s.state != McpState::Starting && s.state != McpState::Stopped)
    });
    f
}

fn wait_until(
    f: &Fixture,
    what: &str,
    done: impl Fn(&[McpServerStatus]) -> bool,
) -> Vec<McpServerStatus> {
    let until = Instant::now() + Duration::from_secs(30);
    loop {
        let status = f.state.mcp_status();
        if done(&status) {
            return status;
        }
        assert!(Instant::now() < until, "waiting for {what}: {status:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A call no one is asked about.
fn call(f: &Fixture, tool: &str, input: Value) -> Result<Value, Value> {
    let session = f.state.session().unwrap();
    let call = session.call(Call::new(tool, input), Consent::None, RunContext::default());
    tauri::async_runtime::block_on(call).map_err(|e| e.to_json())
}

/// A call checked in `conversation`, run with the user's answer.
fn answered(
    f: &Fixture,
    tool: &str,
    input: Value,
    conversation: Option<&str>,
    answer: Answer,
) -> Result<Value, Value> {
    let session = f.state.session().unwrap();
    tauri::async_runtime::block_on(corral_testkit::answered(
        &session,
        tool,
        input,
        conversation,
        answer,
    ))
}

fn approved(f: &Fixture, tool: &str, input: Value) -> Result<Value, Value> {
    answered(f, tool, input, None, Answer::once())
}

/// The check of a call in `conversation`.
fn checked(
    f: &Fixture,
    tool: &str,
    input: Value,
    conversation: Option<&str>,
) -> corral_session::Ticket {
    corral_testkit::checked(&f.state.session().unwrap(), tool, input, conversation)
}

#[test]
fn its_tools_are_offered_and_a_call_runs_only_once_approved() {
    if !ready() {
        return;
    }
    // In the project folder: its relative paths are the project's.
    let mut fixture = server("fixture", &[]);
    fixture.in_project = true;
    let f = open_with(vec![fixture], BTreeMap::new());
    let specs = f.state.session().unwrap().tool_specs();
    let echo = specs
        .iter()
        .find(|s| s.name == "fixture__echo")
        .expect("fixture__echo offered");
    assert!(
        echo.description
            .starts_with("[MCP server `fixture`] Says the text back."),
        "{}",
        echo.description
    );
    assert_eq!(echo.input_schema["type"], "object");
    // The window knows it for the server's by its spec, not its name.
    assert_eq!(echo.display.server.as_deref(), Some("fixture"));
    assert_eq!(echo.display.label.as_deref(), Some("echo"));
    assert!(
        specs.iter().any(|s| s.name == "read_file"),
        "the registry's tools stay"
    );

    let check = checked(&f, "fixture__write", json!({}), None).check.check;
    assert!(matches!(check.decision, Decision::Ask { .. }), "{check:?}");
    // Not approved: it does not run.
    let input = json!({"path": "made-by-mcp.txt", "text": "hello"});
    let refused = call(&f, "fixture__write", input.clone()).unwrap_err();
    assert_eq!(refused["code"], "approval_required", "{refused}");
    assert!(!f.project.join("made-by-mcp.txt").exists());
    // Approved: it runs, in the project.
    let done = approved(&f, "fixture__write", input).unwrap();
    assert_eq!(done["is_error"], false, "{done}");
    assert_eq!(
        std::fs::read_to_string(f.project.join("made-by-mcp.txt")).unwrap(),
        "hello"
    );
    let echoed = approved(&f, "fixture__echo", json!({"text": "hi"})).unwrap();
    assert_eq!(text_of(&echoed), "echo: hi");
    // An answer is for its own ticket only, once.
    let ticket = checked(&f, "fixture__echo", json!({"text": "a"}), None);
    let once = || Consent::Answer(Answer::once());
    let run = |consent| {
        let session = f.state.session().unwrap();
        tauri::async_runtime::block_on(session.run(&ticket.ticket, consent, RunContext::default()))
    };
    assert_eq!(text_of(&run(once()).unwrap()), "echo: a");
    assert_eq!(run(once()).unwrap_err().code.as_str(), "invalid_input");
    // An unknown tool of a known server, and a server that is not there.
    let missing = approved(&f, "fixture__nope", json!({})).unwrap_err();
    assert_eq!(missing["code"], "not_found", "{missing}");
    let unknown = call(&f, "nobody__echo", json!({})).unwrap_err();
    assert_eq!(unknown["code"], "invalid_input", "{unknown}");
}

#[test]
fn trusted_servers_and_read_only_tools_run_without_asking() {
    if !ready() {
        return;
    }
    let mut trusted = server("trusted", &[]);
    trusted.trusted = true;
    let mut marked = server("marked", &[]);
    marked.read_only_tools = vec!["echo".into()];
    let f = open_with(vec![trusted, marked], BTreeMap::new());
    assert_eq!(
        text_of(&call(&f, "trusted__echo", json!({"text": "t"})).unwrap()),
        "echo: t"
    );
    assert_eq!(
        text_of(&call(&f, "marked__echo", json!({"text": "m"})).unwrap()),
        "echo: m"
    );
    let check = checked(&f, "marked__write", json!({}), None).check.check;
    assert!(matches!(check.decision, Decision::Ask { .. }), "{check:?}");
}

#[test]
fn the_sandbox_holds_a_server_to_the_project_and_its_own_variables() {
    if !ready() {
        return;
    }
    let mut with_env = server("fixture", &[]);
    with_env.env = vec!["FIXTURE_TOKEN".into()];
    let secrets = BTreeMap::from([(
        "fixture".to_string(),
        BTreeMap::from([("FIXTURE_TOKEN".to_string(), "s3cret".to_string())]),
    )]);
    let f = open_with(vec![with_env], secrets);
    // A folder outside the project that the sandbox shows read-only.
    let outside =
        Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("mcp-outside-{}", std::process::id()));
    // Through an argument not named as a path, so that only the sandbox
    // holds it (a path argument leading out is refused before the call).
    let write = |path: &Path| {
        approved(
            &f,
            "fixture__spill",
            json!({"to": path.display().to_string(), "text": "x"}),
        )
        .unwrap()
    };
    let wrote = write(&outside);
    assert_eq!(wrote["is_error"], true, "{wrote}");
    // Read-only, or not there at all when the target folder is under /tmp
    // (the sandbox's /tmp is its own).
    let refused = text_of(&wrote);
    assert!(
        refused.contains("Read-only file system") || refused.contains("No such file or directory"),
        "{wrote}"
    );
    assert!(!outside.exists(), "the server wrote outside the project");
    // Beside the project in /tmp: into the sandbox's own /tmp, gone with it.
    let beside = f.kit.tmp().join("beside.txt");
    write(&beside);
    assert!(!beside.exists(), "the server wrote beside the project");
    let token = approved(&f, "fixture__env", json!({"name": "FIXTURE_TOKEN"})).unwrap();
    assert_eq!(text_of(&token), "s3cret");
    // It starts in a private folder, not the project (whose files could
    // choose what a launcher runs), and Python ignores the folder it is in.
    let cwd = text_of(&approved(&f, "fixture__cwd", json!({})).unwrap());
    assert!(!cwd.starts_with(&f.project.display().to_string()), "{cwd}");
    let safe = approved(&f, "fixture__env", json!({"name": "PYTHONSAFEPATH"})).unwrap();
    assert_eq!(text_of(&safe), "1");
    // Nothing of the app's own environment (cargo sets this one for tests).
    assert!(std::env::var_os("CARGO_MANIFEST_DIR").is_some());
    let home = approved(&f, "fixture__env", json!({"name": "CARGO_MANIFEST_DIR"})).unwrap();
    assert_eq!(text_of(&home), "(unset)");
    // The value is a secret: Settings says it is set, never what it is.
    let view = f.state.store.mcp_settings();
    assert_eq!(view.secrets_set, ["fixture/FIXTURE_TOKEN"]);
    assert!(!serde_json::to_string(&view).unwrap().contains("s3cret"));
}

#[test]
fn a_crash_a_hang_a_huge_result_and_garbage_each_get_a_clear_answer_and_the_rest_goes_on() {
    if !ready() {
        return;
    }
    let mut crashing = server("crashing", &["--bad-schema"]);
    crashing.trusted = true;
    let mut steady = server("steady", &[]);
    steady.trusted = true;
    steady.timeout_secs = Some(120);
    let mut slow = server("slow", &[]);
    slow.trusted = true;
    slow.timeout_secs = Some(2);
    let f = open_with(vec![crashing, steady, slow], BTreeMap::new());
    let status = f.state.mcp_status();
    let crashing_status = status.iter().find(|s| s.name == "crashing").unwrap();
    assert_eq!(crashing_status.state, McpState::Running);
    assert!(
        crashing_status
            .problems
            .iter()
            .any(|p| p.contains("`stringy` left out: its input schema is not an object")),
        "{crashing_status:?}"
    );
    assert!(!crashing_status
        .tools
        .iter()
        .any(|t| t == "crashing__stringy"));
    assert!(crashing_status.tools.iter().any(|t| t == "echo"));

    // 50 MB: cut, not passed on whole.
    let big = call(&f, "steady__big", json!({"mb": 50})).unwrap();
    let text = text_of(&big);
    assert!(text.len() < 200 * 1024, "{} bytes passed on", text.len());
    assert!(
        text.ends_with("more bytes]"),
        "{}",
        &text[text.len() - 60..]
    );

    // A hang: the server's timeout.
    let hung = call(&f, "slow__hang", json!({})).unwrap_err();
    assert_eq!(hung["code"], "mcp_server", "{hung}");
    assert!(
        hung["message"]
            .as_str()
            .unwrap()
            .contains("did not answer within 2 s"),
        "{hung}"
    );

    // A crash mid-call: an error with its stderr, the server shown failed.
    let began = Instant::now();
    let crashed = call(&f, "crashing__crash", json!({})).unwrap_err();
    assert!(
        began.elapsed() < Duration::from_secs(4),
        "the crash was not seen for {:?}",
        began.elapsed()
    );
    assert_eq!(crashed["code"], "mcp_server", "{crashed}");
    assert!(
        crashed["message"]
            .as_str()
            .unwrap()
            .contains("fixture: crashing on purpose"),
        "{crashed}"
    );
    let failed = wait_until(&f, "the crashed server shown failed", |all| {
        all.iter()
            .any(|s| s.name == "crashing" && s.state == McpState::Failed)
    });
    let failed = failed.iter().find(|s| s.name == "crashing").unwrap();
    assert!(failed.stderr.contains("crashing on purpose"), "{failed:?}");
    assert!(!f
        .state
        .session()
        .unwrap()
        .tool_specs()
        .iter()
        .any(|s| s.name.starts_with("crashing__")));
    let again = call(&f, "crashing__echo", json!({"text": "x"})).unwrap_err();
    assert_eq!(again["code"], "mcp_server", "{again}");
    assert!(
        again["message"]
            .as_str()
            .unwrap()
            .contains("cannot take calls"),
        "{again}"
    );

    // Restart brings it back.
    tauri::async_runtime::block_on(f.state.session().unwrap().servers().restart("crashing"))
        .unwrap();
    let back = call(&f, "crashing__echo", json!({"text": "back"})).unwrap();
    assert_eq!(text_of(&back), "echo: back");

    // A line that is not JSON: a clear error, not a hang past the timeout.
    let began = Instant::now();
    let garbled = call(&f, "crashing__garble", json!({})).unwrap_err();
    assert_eq!(garbled["code"], "mcp_server", "{garbled}");
    assert!(
        began.elapsed() < Duration::from_secs(8),
        "{:?}",
        began.elapsed()
    );
}

#[test]
fn a_server_that_cannot_start_is_shown_failed_and_closing_the_project_stops_the_others() {
    if !ready() {
        return;
    }
    let mut missing = server("missing", &[]);
    missing.command = "no-such-mcp-server".into();
    let marker = format!("corral-mcp-test-{}", std::process::id());
    let f = open_with(
        vec![missing, server("fixture", &[&marker])],
        BTreeMap::new(),
    );
    let status = f.state.mcp_status();
    let missing = status.iter().find(|s| s.name == "missing").unwrap();
    assert_eq!(missing.state, McpState::Failed);
    assert!(
        missing.problems[0].contains("no-such-mcp-server"),
        "{missing:?}"
    );
    assert_eq!(
        status.iter().find(|s| s.name == "fixture").unwrap().state,
        McpState::Running
    );
    assert!(!processes_with(&marker).is_empty(), "the fixture runs");
    f.state.close_project();
    let until = Instant::now() + Duration::from_secs(5);
    while !processes_with(&marker).is_empty() {
        assert!(
            Instant::now() < until,
            "the server outlived its project: {:?}",
            processes_with(&marker)
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(f.state.mcp_status().is_empty());
}

/// Live processes whose command line holds `marker`.
fn processes_with(marker: &str) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let path = entry.path();
        let Ok(cmdline) = std::fs::read(path.join("cmdline")) else {
            continue;
        };
        let stat = std::fs::read_to_string(path.join("stat")).unwrap_or_default();
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        if cmdline.contains(marker) && !stat.contains(") Z ") {
            found.push(cmdline);
        }
    }
    found
}

#[test]
fn a_call_that_may_change_the_project_is_checkpointed_and_stop_ends_a_running_one() {
    if !ready() {
        return;
    }
    let mut fixture = server("fixture", &[]);
    fixture.trusted = true;
    fixture.in_project = true;
    fixture.read_only_tools = vec!["echo".into()];
    let f = open_with(vec![fixture], BTreeMap::new());
    let root = f.state.project().unwrap();
    let checkpoints = || {
        f.state
            .session()
            .unwrap()
            .checkpoint_store()
            .unwrap()
            .unwrap()
            .list(&root)
            .unwrap()
    };
    let tag = corral_session::checkpoints::CallTag {
        turn: Some("turn-1".into()),
        call: Some("card-1".into()),
    };
    let run = |tool: &str, input: Value, shell: ShellRun| {
        let run = RunContext {
            shell,
            tag: tag.clone(),
        };
        let session = f.state.session().unwrap();
        tauri::async_runtime::block_on(session.call(Call::new(tool, input), Consent::None, run))
    };
    run(
        "fixture__echo",
        json!({"text": "read-only"}),
        ShellRun::default(),
    )
    .unwrap();
    assert!(checkpoints().is_empty(), "a read-only tool takes none");
    run(
        "fixture__write",
        json!({"path": "notes.txt", "text": "by the server"}),
        ShellRun::default(),
    )
    .unwrap();
    let taken = checkpoints();
    assert_eq!(taken.len(), 1, "{taken:?}");
    assert_eq!(taken[0].tool, "fixture__write");
    assert_eq!(taken[0].call_id.as_deref(), Some("card-1"));

    // Stop: the hung call ends at once as cancelled.
    let shell = ShellRun::default();
    let cancel = shell.cancel.clone();
    let stopper = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
        cancel.cancel();
    });
    let began = Instant::now();
    let stopped = run("fixture__hang", json!({}), shell).unwrap_err();
    stopper.join().unwrap();
    assert_eq!(stopped.code.as_str(), "cancelled", "{stopped:?}");
    assert!(
        began.elapsed() < Duration::from_secs(3),
        "{:?}",
        began.elapsed()
    );
}

/// The official Python SDK's server over streamable HTTP (the venv that
/// `scripts/setup.sh --test` makes for the MCP tests), on a free port.
struct HttpServer {
    child: std::process::Child,
    url: String,
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn http_server(token: &str) -> HttpServer {
    let venv = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../crates/corral-cli/tests/mcp/.venv/bin/python");
    assert!(
        venv.exists(),
        "the MCP test SDK is missing: run `scripts/setup.sh --test` ({} not found)",
        venv.display()
    );
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let script = mcp::http_script();
    let child = std::process::Command::new(venv)
        .arg(script)
        .arg(port.to_string())
        .arg(token)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let until = Instant::now() + Duration::from_secs(30);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < until, "the HTTP MCP server did not start");
        std::thread::sleep(Duration::from_millis(50));
    }
    HttpServer {
        child,
        url: format!("http://127.0.0.1:{port}/mcp"),
    }
}

fn at_url(name: &str, url: &str) -> McpServerConfig {
    McpServerConfig {
        command: String::new(),
        url: Some(url.to_string()),
        args: Vec::new(),
        env: vec!["BEARER_TOKEN".into()],
        ..server(name, &[])
    }
}

#[test]
fn a_server_at_a_url_is_reached_with_its_token_and_a_wrong_token_is_a_clear_failure() {
    let remote = http_server("right-token");
    let secrets = |token: &str| {
        BTreeMap::from([
            (
                "remote".to_string(),
                BTreeMap::from([("BEARER_TOKEN".to_string(), token.to_string())]),
            ),
            (
                "wrong".to_string(),
                BTreeMap::from([("BEARER_TOKEN".to_string(), "wrong-token".to_string())]),
            ),
        ])
    };
    let f = open_with(
        vec![at_url("remote", &remote.url), at_url("wrong", &remote.url)],
        secrets("right-token"),
    );
    let status = f.state.mcp_status();
    let remote_status = status.iter().find(|s| s.name == "remote").unwrap();
    assert_eq!(remote_status.state, McpState::Running, "{status:?}");
    assert_eq!(remote_status.tools, ["shout"], "the tool's own name");
    let shouted = approved(&f, "remote__shout", json!({"text": "hello"})).unwrap();
    assert_eq!(text_of(&shouted), "HELLO", "{shouted}");
    let wrong = status.iter().find(|s| s.name == "wrong").unwrap();
    assert_eq!(wrong.state, McpState::Failed, "{status:?}");
    assert!(
        wrong.problems[0].contains("did not start an MCP session"),
        "{wrong:?}"
    );
}

#[test]
fn replacing_the_servers_forgets_the_approvals_given_to_their_tools() {
    if !ready() {
        return;
    }
    let f = open_with(vec![server("fixture", &[])], BTreeMap::new());
    let input = json!({"text": "a"});
    let grant = Grant::Call {
        tool: "fixture__echo".into(),
        input: input.clone(),
    };
    answered(
        &f,
        "fixture__echo",
        input.clone(),
        Some("c1"),
        Answer::conversation(grant),
    )
    .unwrap();
    let allowed = checked(&f, "fixture__echo", input.clone(), Some("c1")).check;
    assert!(
        matches!(allowed.check.decision, Decision::Allow),
        "{allowed:?}"
    );
    assert!(allowed.grant.is_some(), "{allowed:?}");
    // The grant is that very input, not the tool.
    let other = checked(&f, "fixture__echo", json!({"text": "b"}), Some("c1")).check;
    assert!(
        matches!(other.check.decision, Decision::Ask { .. }),
        "{other:?}"
    );
    tauri::async_runtime::block_on(f.state.reload_mcp());
    let again = checked(&f, "fixture__echo", input, Some("c1")).check;
    assert!(
        matches!(again.check.decision, Decision::Ask { .. }),
        "{again:?}"
    );
}

/// A server installed as a new user would: a venv made from the system
/// Python under `parent`, holding the fixture as its own program
/// (`bin/fixture-server`, run by the venv's `python3`). `parent` (the
/// home, `/tmp`) is otherwise out of the sandbox's sight.
fn venv_server(name: &str, parent: &Path) -> McpServerConfig {
    use std::os::unix::fs::PermissionsExt;
    let venv = parent.join(format!("{name}-venv"));
    let made = std::process::Command::new(PYTHON)
        .args(["-m", "venv", "--without-pip"])
        .arg(&venv)
        .status()
        .unwrap();
    assert!(made.success(), "python3 -m venv");
    let script = venv.join("lib/fixture_server.py");
    std::fs::copy(mcp::stdio_script(), &script).unwrap();
    let program = venv.join("bin/fixture-server");
    std::fs::write(
        &program,
        format!(
            "#!{}\nimport runpy\nrunpy.run_path({:?}, run_name='__main__')\n",
            venv.join("bin/python3").display(),
            script.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755)).unwrap();
    McpServerConfig {
        command: program.display().to_string(),
        args: Vec::new(),
        ..server(name, &[])
    }
}

#[test]
fn servers_in_a_venv_under_the_home_and_under_tmp_start_and_their_tools_work() {
    if !ready() {
        return;
    }
    let home = PathBuf::from(std::env::var("HOME").unwrap());
    let in_home = tempfile::tempdir_in(&home).unwrap();
    let in_tmp = tempfile::tempdir().unwrap();
    let f = open_with(
        vec![
            venv_server("homevenv", in_home.path()),
            venv_server("tmpvenv", in_tmp.path()),
        ],
        BTreeMap::new(),
    );
    let status = f.state.mcp_status();
    assert!(
        status.iter().all(|s| s.state == McpState::Running),
        "{status:?}"
    );
    for name in ["homevenv", "tmpvenv"] {
        let echoed = approved(&f, &format!("{name}__echo"), json!({"text": name})).unwrap();
        assert_eq!(text_of(&echoed), format!("echo: {name}"));
    }
    // Its prefix is there read-only: it cannot change its own program
    // (given through an argument not named as a path, which only the
    // sandbox holds).
    let script = in_tmp.path().join("tmpvenv-venv/lib/fixture_server.py");
    let written = approved(
        &f,
        "tmpvenv__spill",
        json!({"to": script.display().to_string(), "text": "x"}),
    );
    assert!(
        std::fs::read_to_string(&script)
            .unwrap()
            .contains("MCP server"),
        "{written:?}"
    );
}
