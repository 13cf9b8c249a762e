//! The security suite's hostile paths, given through the tools of a user's
//! MCP server (the fixture server, in the real sandbox): a path argument
//! is judged as Corral's own tools' paths are, before the server sees it.
//! Outside the project by its text or through a symlink, into `.git/` for
//! a tool that may write: refused with the codes a file tool gives; a
//! secret, or a link to one: asked about in every mode. The outside is
//! never read through nor changed; a path inside works.

use corral_session::mcp::{McpServerConfig, McpState};
use corral_session::{Call, Consent, Fixed, Options, RunContext, Session};
use corral_tools::policy::Mode;
use serde_json::{json, Value};
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::sync::Arc;

const PYTHON: &str = "/usr/bin/python3";

/// The fixture server of the hosts' MCP client tests (a file of the
/// test kit, which the session cannot depend on: the kit is built on it).
fn fixture_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../corral-testkit/fixtures/mcp_server.py")
}

/// A temp folder holding `app/` (the project, with `a.txt`, `.env`,
/// `.git/config` and links) and `outside/data.txt`, and a session on
/// `app` in full-auto mode whose server `fs` runs in the project: its
/// `read` marked read-only, and `trusted` the same server trusted (its
/// `write` runs without asking).
struct Project {
    tmp: tempfile::TempDir,
    app: PathBuf,
    session: Session,
    runtime: tokio::runtime::Runtime,
}

impl Project {
    fn new() -> Project {
        let tmp = tempfile::tempdir().unwrap();
        let app = tmp.path().join("app");
        let outside = tmp.path().join("outside");
        std::fs::create_dir_all(app.join(".fixture")).unwrap();
        std::fs::create_dir_all(app.join(".git")).unwrap();
        std::fs::create_dir_all(app.join("docs")).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(outside.join("data.txt"), "outside secret\n").unwrap();
        std::fs::write(app.join("a.txt"), "inside\n").unwrap();
        std::fs::write(app.join(".env"), "KEY=1\n").unwrap();
        std::fs::write(app.join(".git/config"), "[core]\n").unwrap();
        symlink(outside.join("data.txt"), app.join("link.txt")).unwrap();
        symlink("../outside/data.txt", app.join("rel-link.txt")).unwrap();
        symlink(&outside, app.join("dirlink")).unwrap();
        symlink(".git", app.join("gitlink")).unwrap();
        symlink("../.env", app.join("docs/notes.txt")).unwrap();
        symlink("loop-b", app.join("loop-a")).unwrap();
        symlink("loop-a", app.join("loop-b")).unwrap();
        let script = app.join(".fixture/mcp_server.py");
        std::fs::copy(fixture_script(), &script).unwrap();
        let server = |name: &str, trusted: bool| McpServerConfig {
            name: name.into(),
            command: PYTHON.into(),
            url: None,
            args: vec![script.display().to_string()],
            env: Vec::new(),
            network: false,
            in_project: true,
            trusted,
            read_only_tools: vec!["read".into()],
            timeout_secs: Some(10),
        };
        let settings = Arc::new(Fixed {
            mode: Mode::FullAuto,
            ..Fixed::default()
        });
        let options = Options {
            mcp_servers: vec![
                (server("fs", false), Vec::new()),
                (server("trusted", true), Vec::new()),
            ],
            ..Options::default()
        };
        let session = Session::open(&app, settings, options).unwrap();
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(session.start_servers());
        let status = session.server_status();
        assert!(
            status.iter().all(|s| s.state == McpState::Running),
            "{status:?}"
        );
        Project {
            tmp,
            app,
            session,
            runtime,
        }
    }

    /// The call's result, or its error's code.
    fn call(&self, tool: &str, input: Value) -> Result<Value, String> {
        self.runtime
            .block_on(self.session.call(
                Call::new(tool, input),
                Consent::None,
                RunContext::default(),
            ))
            .map_err(|e| e.code.as_str().to_string())
    }

    /// Every file outside the project, with its bytes.
    fn outside(&self) -> Vec<(PathBuf, Vec<u8>)> {
        let mut files = Vec::new();
        for entry in std::fs::read_dir(self.tmp.path().join("outside")).unwrap() {
            let path = entry.unwrap().path();
            files.push((path.clone(), std::fs::read(&path).unwrap()));
        }
        files.sort();
        files
    }

    fn expand(&self, payload: &str) -> String {
        payload.replace("{tmp}", self.tmp.path().to_str().unwrap())
    }
}

fn text_of(result: &Value) -> String {
    result["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

fn ready() -> bool {
    let ok = Path::new(PYTHON).exists() && corral_tools::shell::namespaces_available();
    if !ok {
        eprintln!("note: no {PYTHON} or no namespaces here; skipping");
    }
    ok
}

/// (path, the code a server's `read` and `write` are refused with), as
/// `read_file` and `write_file` are refused (the security suite's payloads
/// that leave the project).
const REFUSED: &[(&str, &str)] = &[
    ("../outside/data.txt", "path_outside_root"),
    ("..", "path_outside_root"),
    ("../../../../../../etc/passwd", "path_outside_root"),
    ("a/../../outside/data.txt", "path_outside_root"),
    ("..\\outside\\secret.txt", "path_outside_root"),
    ("/etc/passwd", "path_outside_root"),
    ("//etc/passwd", "path_outside_root"),
    ("{tmp}/outside/data.txt", "path_outside_root"),
    ("{tmp}/app/../outside/data.txt", "path_outside_root"),
    ("{tmp}/app-evil/x.txt", "path_outside_root"),
    ("link.txt", "path_outside_root"),
    ("rel-link.txt", "path_outside_root"),
    ("dirlink/data.txt", "path_outside_root"),
    ("dirlink/new.txt", "path_outside_root"),
    ("a.txt\0../../outside/data.txt", "invalid_input"),
    ("", "invalid_input"),
];

#[test]
fn hostile_paths_through_a_servers_tools_are_refused_as_for_the_file_tools() {
    if !ready() {
        return;
    }
    let p = Project::new();
    let before = p.outside();
    // The file tools' own answers, for the same paths: the server's are these.
    for (payload, want) in REFUSED {
        let path = p.expand(payload);
        let own = p.call("read_file", json!({"path": path}));
        assert_eq!(
            own.as_ref().err(),
            Some(&want.to_string()),
            "read_file {payload:?}"
        );
        for tool in ["fs__read", "trusted__write"] {
            let got = p.call(tool, json!({"path": path, "text": "pwned"}));
            assert_eq!(got.err(), Some(want.to_string()), "{tool} {payload:?}");
        }
    }
    assert_eq!(p.outside(), before);
    // A path inside works, through both.
    let read = p.call("fs__read", json!({"path": "a.txt"})).unwrap();
    assert_eq!(text_of(&read), "inside\n");
    let wrote = p
        .call(
            "trusted__write",
            json!({"path": "b.txt", "text": "by the server"}),
        )
        .unwrap();
    assert_eq!(wrote["is_error"], false, "{wrote}");
    assert_eq!(
        std::fs::read_to_string(p.app.join("b.txt")).unwrap(),
        "by the server"
    );
}

#[test]
fn secrets_ask_git_internals_are_protected_and_a_loop_fails_cleanly() {
    if !ready() {
        return;
    }
    let p = Project::new();
    // A secret, or a link to one, asks in every mode, as `read_file` does
    // (full auto here); a trusted server's write to it too.
    for path in [".env", "docs/notes.txt"] {
        for (tool, input) in [
            ("read_file", json!({"path": path})),
            ("fs__read", json!({"path": path})),
            ("trusted__write", json!({"path": path, "text": "KEY=2\n"})),
        ] {
            let got = p.call(tool, input);
            assert_eq!(
                got.err().as_deref(),
                Some("approval_required"),
                "{tool} {path}"
            );
        }
    }
    assert_eq!(
        std::fs::read_to_string(p.app.join(".env")).unwrap(),
        "KEY=1\n"
    );
    // `.git/` is never written by a tool that may write, directly or
    // through a link; a read-only tool reads it.
    for path in [".git/config", "gitlink/config", "gitlink/hooks/pre-commit"] {
        let got = p.call("trusted__write", json!({"path": path, "text": "x"}));
        assert_eq!(got.err().as_deref(), Some("path_protected"), "{path}");
    }
    assert_eq!(
        std::fs::read_to_string(p.app.join(".git/config")).unwrap(),
        "[core]\n"
    );
    assert!(!p.app.join(".git/hooks").exists());
    let config = p.call("fs__read", json!({"path": ".git/config"})).unwrap();
    assert_eq!(text_of(&config), "[core]\n");
    // A symlink loop fails as it does for the file tools.
    let own = p.call("read_file", json!({"path": "loop-a"})).unwrap_err();
    let got = p.call("fs__read", json!({"path": "loop-a"})).unwrap_err();
    assert_eq!(got, own);
    // An argument that is not a path is the server's business.
    let echoed = p
        .call("trusted__echo", json!({"text": "../outside"}))
        .unwrap();
    assert_eq!(text_of(&echoed), "echo: ../outside");
}

#[test]
fn a_servers_tool_is_found_read_and_judged_like_corrals_own() {
    if !ready() {
        return;
    }
    let p = Project::new();
    // Its input is read against its schema before the server sees it.
    let err = p.call("fs__read", json!({})).unwrap_err();
    assert_eq!(err, "invalid_input");
    let err = p.call("fs__read", json!({"path": 3})).unwrap_err();
    assert_eq!(err, "invalid_input");
    // An untrusted server's tool asks in every mode, even full auto.
    let err = p.call("fs__write", json!({"path": "c.txt"})).unwrap_err();
    assert_eq!(err, "approval_required");
    assert!(!p.app.join("c.txt").exists());
    // Unknown: a tool of no server is named among every tool there is.
    let session = &p.session;
    let unknown = p
        .runtime
        .block_on(session.call(
            Call::new("nobody__read", json!({})),
            Consent::None,
            RunContext::default(),
        ))
        .unwrap_err();
    assert_eq!(unknown.code.as_str(), "invalid_input");
    assert!(unknown.hint.contains("fs__read"), "{}", unknown.hint);
    assert!(unknown.hint.contains("read_file"), "{}", unknown.hint);
    let missing = p.call("fs__nope", json!({})).unwrap_err();
    assert_eq!(missing, "not_found");
}
