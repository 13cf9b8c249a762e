//! Read-only commands that run without asking stay harmless even when the
//! project plants code for them to run: each read-only git form below runs
//! a planted program (an external diff, a textconv filter) that tries to
//! write, to connect and to read `$HOME/.ssh/id_test` (a fixture home).
//! All three fail; the planted program did run, so the test can fail.

use serde_json::{json, Value};
use std::net::TcpListener;
use std::path::Path;
use std::process::Command;

fn git(dir: &Path, args: &[&str]) {
    let ok = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@t")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@t")
        .status()
        .unwrap()
        .success();
    assert!(ok, "git {args:?}");
}

fn namespaces_here() -> bool {
    let ok = ["/usr/bin/bwrap", "/bin/bwrap", "/usr/local/bin/bwrap"]
        .iter()
        .any(|p| Path::new(p).exists())
        && Path::new("/usr/bin/node").exists();
    if !ok {
        eprintln!("note: bubblewrap or node is missing; skipping the planted-code table");
    }
    ok
}

#[test]
fn read_only_commands_cannot_write_connect_or_read_home_with_planted_code() {
    if !namespaces_here() {
        return;
    }
    let work = tempfile::tempdir().unwrap();
    let root = work.path().join("project");
    let home = work.path().join("home");
    let outside = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    std::fs::write(home.join(".ssh/id_test"), "PRIVATE KEY\n").unwrap();
    std::fs::create_dir_all(&root).unwrap();
    git(&root, &["init", "-q"]);
    std::fs::write(root.join("a.txt"), "one\n").unwrap();
    git(&root, &["add", "a.txt"]);
    git(&root, &["commit", "-qm", "one"]);
    std::fs::write(root.join("a.txt"), "two\n").unwrap();

    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let evil = format!(
        "const fs = require('fs'), net = require('net'); const r = [];
        for (const p of [{root:?} + '/pwned', {home:?} + '/pwned', {outside:?} + '/pwned']) {{
            try {{ fs.writeFileSync(p, 'x'); r.push('write=ok') }} catch (e) {{ r.push('write=' + e.code) }}
        }}
        try {{ r.push('read=' + fs.readFileSync({home:?} + '/.ssh/id_test', 'utf8').trim()) }}
        catch (e) {{ r.push('read=' + e.code) }}
        const c = net.connect({port}, '127.0.0.1');
        c.on('connect', () => {{ console.log('PLANTED ' + r.join(' ') + ' connect=ok'); c.end() }});
        c.on('error', (e) => console.log('PLANTED ' + r.join(' ') + ' connect=' + e.code));",
        root = root.to_str().unwrap(),
        home = home.to_str().unwrap(),
        outside = outside.path().to_str().unwrap(),
    );
    // Planted with the file tools' reach: files of the project, and the
    // repository's own config, which a user's clone may carry.
    std::fs::write(root.join("evil.js"), evil).unwrap();
    let mut config = std::fs::OpenOptions::new()
        .append(true)
        .open(root.join(".git/config"))
        .unwrap();
    std::io::Write::write_all(
        &mut config,
        b"[diff]\n\texternal = node evil.js\n[diff \"evil\"]\n\ttextconv = node evil.js\n",
    )
    .unwrap();
    std::fs::write(root.join(".gitattributes"), "a.txt diff=evil\n").unwrap();

    let table: &[&[&str]] = &[
        &["diff"],
        &["diff", "HEAD"],
        &["show", "--ext-diff", "HEAD"],
        &["log", "-p", "-1"],
        &["show", "HEAD"],
    ];
    let mut ran = 0;
    for args in table {
        let input = json!({"command": "git", "args": args}).to_string();
        let out = crate::common::corral_cli()
            .args(["call", "--root", root.to_str().unwrap(), "--mode", "ask"])
            .args(["exec_shell", &input])
            .env("HOME", &home)
            .env(
                "CARGO_HOME",
                std::env::var("CARGO_HOME").unwrap_or_else(|_| "/nonexistent".into()),
            )
            .output()
            .unwrap();
        let result: Value = serde_json::from_slice(&out.stdout).unwrap();
        if result["code"] == "approval_required" {
            // Not on the read-only table (`--ext-diff`): it would ask.
            continue;
        }
        assert_eq!(result["profile"], "read_only", "{args:?}: {result}");
        let text = format!("{}{}", result["stdout"], result["stderr"]);
        if let Some(line) = text.split("PLANTED ").nth(1) {
            ran += 1;
            assert!(!line.contains("=ok"), "{args:?}: {line}");
            assert!(!line.contains("PRIVATE"), "{args:?}: {line}");
        }
    }
    assert!(ran >= 3, "the planted program ran only {ran} times");
    assert!(listener.accept().is_err(), "a planted program connected");
    for dir in [&root, &home, &outside.path().to_path_buf()] {
        assert!(!dir.join("pwned").exists(), "{dir:?}");
    }
}

#[test]
fn without_namespaces_every_command_asks_and_the_result_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_str().unwrap();
    let call = |extra: &[&str]| -> Value {
        let out = crate::common::corral_cli()
            .args(["call", "--root", root, "--mode", "ask"])
            .args(extra)
            .args(["exec_shell", r#"{"command":"ls","args":["-a"]}"#])
            // A bubblewrap that is not there: the fallback.
            .env("CORRAL_BWRAP", "/nonexistent/bwrap")
            .output()
            .unwrap();
        serde_json::from_slice(&out.stdout).unwrap()
    };
    // `ls` is read-only, but there is no read-only profile to run it in.
    assert_eq!(call(&[])["code"], "approval_required");
    let out = call(&["--approve"]);
    assert_eq!(out["exit_code"], 0, "{out}");
    assert_eq!(out["sandbox"], "landlock", "{out}");
    assert_eq!(out["profile"], "read_only", "{out}");
    let note = out["sandbox_note"].as_str().unwrap();
    assert!(note.starts_with("no namespaces (bubblewrap"), "{note}");
}

#[test]
fn without_namespaces_no_host_unix_socket_is_reachable_either() {
    if !Path::new("/usr/bin/node").exists() && !Path::new("/usr/local/bin/node").exists() {
        eprintln!("note: no node here; skipping");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let socket = outside.path().join("host.sock");
    let listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    listener.set_nonblocking(true).unwrap();
    let script = format!(
        "require('net').connect({:?}).on('connect', () => {{ console.log('connected'); process.exit(0) }}).on('error', (e) => console.log('refused ' + e.code))",
        socket.to_str().unwrap()
    );
    let input = json!({"command": "node", "args": ["-e", script]}).to_string();
    let out = crate::common::corral_cli()
        .args(["call", "--root", dir.path().to_str().unwrap(), "--approve"])
        .args(["exec_shell", &input])
        .env("CORRAL_BWRAP", "/nonexistent/bwrap")
        .output()
        .unwrap();
    let result: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(result["sandbox"], "landlock", "{result}");
    assert_eq!(result["stdout"], "refused EACCES\n", "{result}");
    assert!(listener.accept().is_err(), "the command connected");
}

#[test]
fn a_command_that_writes_the_project_leaves_no_mount_point_behind() {
    if !namespaces_here() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_str().unwrap();
    // One process, one command: the hold's mount points (an empty
    // `.claude` and `.codex` made for the command) go by the exit at the
    // latest, though their removal is not the command's to wait for.
    let out = crate::common::corral_cli()
        .args(["call", "--root", root, "--no-checkpoint"])
        .args(["exec_shell", r#"{"command":"touch","args":["made.txt"]}"#])
        .output()
        .unwrap();
    let result: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(result["exit_code"], 0, "{result}");
    assert_eq!(result["profile"], "build", "{result}");
    assert!(dir.path().join("made.txt").exists());
    for name in [".claude", ".codex"] {
        assert!(!dir.path().join(name).exists(), "{name} was left");
    }
}
