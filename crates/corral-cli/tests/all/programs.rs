//! The user's own programs (`--allow-program`), saved rules (`--rule`) and
//! the network on request, through the CLI as a user would call it: real
//! programs in the real sandbox, against a fixture home holding
//! `~/.ssh/id_test` and a sibling project beside the project.

use serde_json::{json, Value};
use std::net::TcpListener;
use std::path::{Path, PathBuf};

/// A fixture home: `~/.ssh/id_test`, the project `~/src/app` and a sibling
/// project `~/src/other` holding a secret of its own.
struct Fixture {
    _dir: tempfile::TempDir,
    home: PathBuf,
    root: PathBuf,
    sibling: PathBuf,
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    std::fs::write(home.join(".ssh/id_test"), "PRIVATE KEY\n").unwrap();
    let root = home.join("src/app");
    let sibling = home.join("src/other");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::create_dir_all(&sibling).unwrap();
    std::fs::write(sibling.join("notes.txt"), "SIBLING DATA\n").unwrap();
    Fixture {
        _dir: dir,
        home,
        root,
        sibling,
    }
}

fn fenced() -> bool {
    let ok = ["/usr/bin/bwrap", "/bin/bwrap", "/usr/local/bin/bwrap"]
        .iter()
        .any(|p| Path::new(p).exists())
        && Path::new("/usr/bin/python3").exists()
        && Path::new("/usr/bin/make").exists();
    if !ok {
        eprintln!("note: bubblewrap, python3 or make is missing; skipping");
    }
    ok
}

/// `corral-cli call --root ROOT FLAGS exec_shell INPUT`, with the fixture home.
fn call(f: &Fixture, flags: &[&str], command: &str, args: &[&str]) -> Value {
    let input = json!({"command": command, "args": args}).to_string();
    let out = crate::common::corral_cli()
        .args(["call", "--root", f.root.to_str().unwrap()])
        .args(flags)
        .args(["exec_shell", &input])
        .env("HOME", &f.home)
        .env_remove("XDG_DATA_HOME")
        .output()
        .unwrap();
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)))
}

/// python3 is a known program (a project runner): no `--allow-program`.
fn python(f: &Fixture, flags: &[&str], script: &str) -> Value {
    call(f, flags, "python3", &["-c", script])
}

#[test]
fn a_program_the_user_did_not_add_is_not_allowed() {
    let f = fixture();
    let result = call(&f, &[], "perl", &["-e", "print 1"]);
    assert_eq!(result["code"], "command_not_allowed", "{result}");
    // Added under another name, or given as a path: still refused.
    let result = call(&f, &["--allow-program", "perl"], "/usr/bin/perl", &[]);
    assert_eq!(result["code"], "command_not_allowed", "{result}");
    let result = call(&f, &["--allow-program", "../perl"], "../perl", &[]);
    assert_eq!(result["code"], "command_not_allowed", "{result}");
    // Added, it asks, and runs in the build profile once approved.
    if fenced() && Path::new("/usr/bin/perl").exists() {
        let added = ["--allow-program", "perl", "--mode", "ask"];
        let result = call(&f, &added, "perl", &["-e", "print qq(hi\n)"]);
        assert_eq!(result["code"], "approval_required", "{result}");
        let approved = [&added[..], &["--approve"]].concat();
        let result = call(&f, &approved, "perl", &["-e", "print qq(hi\n)"]);
        assert_eq!(result["stdout"], "hi\n", "{result}");
        assert_eq!(result["profile"], "build", "{result}");
    }
}

#[test]
fn project_runners_ask_outside_full_auto_and_are_never_read_only() {
    if !fenced() {
        return;
    }
    let f = fixture();
    for mode in ["ask", "auto_edit"] {
        let result = python(&f, &["--mode", mode], "print('hi')");
        assert_eq!(result["code"], "approval_required", "{mode}: {result}");
    }
    let result = python(&f, &["--mode", "read_only"], "print('hi')");
    assert_eq!(result["code"], "denied", "{result}");
    let result = python(&f, &["--mode", "ask", "--approve"], "print('hi')");
    assert_eq!(result["stdout"], "hi\n", "{result}");
    assert_eq!(result["profile"], "build", "{result}");
    let result = python(&f, &[], "print('hi')");
    assert_eq!(result["exit_code"], 0, "{result}");
}

#[test]
fn python_writes_inside_but_not_outside_and_cannot_read_the_home_or_a_sibling() {
    if !fenced() {
        return;
    }
    let f = fixture();
    // A folder outside the project the sandbox can see (not under /tmp or a home).
    let outside = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let script = format!(
        r#"
import os
open('inside.txt', 'w').write('ok')
r = []
for name, act in [
    ('write_outside', lambda: open({outside:?} + '/pwned', 'w').write('x')),
    ('read_key', lambda: open({home:?} + '/.ssh/id_test').read()),
    ('read_sibling', lambda: open({sibling:?} + '/notes.txt').read()),
]:
    try:
        r.append(name + '=' + str(act()))
    except OSError as e:
        r.append(name + '=refused:' + type(e).__name__)
r.append('usr_lib=' + str(len(os.listdir('/usr/lib')) > 0))
print(' '.join(r))
"#,
        outside = outside.path().to_str().unwrap(),
        home = f.home.to_str().unwrap(),
        sibling = f.sibling.to_str().unwrap(),
    );
    let result = python(&f, &[], &script);
    let out = result["stdout"].as_str().unwrap_or_default();
    assert_eq!(result["exit_code"], 0, "{result}");
    assert!(out.contains("write_outside=refused"), "{out}");
    assert!(out.contains("read_key=refused"), "{out}");
    assert!(out.contains("read_sibling=refused"), "{out}");
    assert!(out.contains("usr_lib=True"), "{out}");
    assert!(
        !out.contains("PRIVATE") && !out.contains("SIBLING"),
        "{out}"
    );
    assert_eq!(
        std::fs::read_to_string(f.root.join("inside.txt")).unwrap(),
        "ok"
    );
    assert!(!outside.path().join("pwned").exists());
}

#[test]
fn make_runs_after_approval_inside_the_project() {
    if !fenced() {
        return;
    }
    let f = fixture();
    std::fs::write(
        f.root.join("Makefile"),
        "built.txt:\n\techo made > built.txt\n",
    )
    .unwrap();
    let result = call(&f, &["--mode", "ask"], "make", &[]);
    assert_eq!(result["code"], "approval_required", "{result}");
    assert!(!f.root.join("built.txt").exists());
    let result = call(&f, &["--mode", "ask", "--approve"], "make", &[]);
    assert_eq!(result["exit_code"], 0, "{result}");
    assert_eq!(
        std::fs::read_to_string(f.root.join("built.txt")).unwrap(),
        "made\n"
    );
}

#[test]
fn the_hosts_loopback_is_never_reached_and_a_refusal_says_how_to_allow_the_network() {
    if !fenced() {
        return;
    }
    let f = fixture();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let script = format!(
        "import socket\ns = socket.create_connection(('127.0.0.1', {port}), timeout=5)\ns.sendall(b'hello')\nprint('connected')"
    );
    let result = python(&f, &[], &script);
    assert_ne!(result["exit_code"], 0, "{result}");
    assert_eq!(result["profile"], "build", "{result}");
    let refused = result["network_refused"].as_str().unwrap_or_default();
    assert!(refused.contains("--network"), "{result}");

    // The grant goes through the egress proxy: the host's own loopback
    // stays out of reach.
    let result = python(&f, &["--network"], &script);
    assert_ne!(result["exit_code"], 0, "{result}");
    assert_eq!(result["profile"], "network", "{result}");
    listener.set_nonblocking(true).unwrap();
    assert!(listener.accept().is_err(), "a connection reached the host");
}

#[test]
fn allow_domain_takes_domain_names_only() {
    let f = fixture();
    for bad in ["*", "com", "127.0.0.1", "a.com/x"] {
        let result = call(&f, &["--network", "--allow-domain", bad], "ls", &[]);
        assert_eq!(result["code"], "invalid_input", "{bad}: {result}");
        assert!(
            result["message"].as_str().unwrap().contains(bad),
            "{bad}: {result}"
        );
    }
    let result = call(&f, &["--allow-domain", "*.example.org"], "ls", &[]);
    assert_eq!(result["exit_code"], 0, "{result}");
}

#[test]
fn a_saved_rule_lets_its_prefix_run_without_asking_but_not_paths_outside_or_secrets() {
    if !fenced() {
        return;
    }
    let f = fixture();
    std::fs::write(
        f.root.join("package.json"),
        r#"{"name":"t","version":"1.0.0","scripts":{"test":"node -e \"console.log('tested')\""}}"#,
    )
    .unwrap();
    std::fs::write(f.root.join(".env"), "KEY=1\n").unwrap();
    let ask = ["--mode", "ask", "--rule", "npm test"];
    let result = call(&f, &ask, "npm", &["test"]);
    assert_eq!(result["exit_code"], 0, "{result}");
    assert!(
        result["stdout"]
            .as_str()
            .unwrap_or_default()
            .contains("tested"),
        "{result}"
    );
    assert_eq!(result["profile"], "build", "{result}");
    for args in [
        &["test", "--", "--config", "../x"][..],
        &["test", "--", ".env"],
        &["test", "--", "--env-file=.env"],
        &["run", "build"],
    ] {
        let result = call(&f, &ask, "npm", args);
        assert_eq!(result["code"], "approval_required", "{args:?}: {result}");
    }
    // A rule never grants the network: an install still asks.
    let result = call(
        &f,
        &["--mode", "full_auto", "--rule", "npm"],
        "npm",
        &["ci"],
    );
    assert_eq!(result["code"], "approval_required", "{result}");
}
