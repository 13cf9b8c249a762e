//! Background commands: `exec_shell` with `background: true` returns a run
//! id at once; `command_output` reads the output as it grows, from a byte
//! offset; `stop_command` kills the command and what it started; at most 8
//! run at once; dropping the project's registry stops them all; a server's
//! ports are listed and forwarded to the host while it runs. Real
//! processes in the real sandbox.
use crate::shell_common::*;
use corral_tools::dispatch::{self, CallContext};
use corral_tools::policy::{Approval, Mode};
use corral_tools::shell::background::{Background, MAX_BACKGROUND};
use corral_tools::ProjectRoot;
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::{Duration, Instant};

fn ctx(background: &Arc<Background>) -> CallContext {
    let mut ctx = CallContext::new(Mode::FullAuto, Approval::None);
    ctx.shell.background = Some(background.clone());
    ctx
}

fn start(root: &ProjectRoot, bg: &Arc<Background>, script: &str) -> String {
    let started = dispatch::call(
        root,
        "exec_shell",
        json!({"command": "node", "args": ["-e", script], "background": true}),
        &ctx(bg),
    )
    .unwrap();
    started["run_id"].as_str().unwrap().to_string()
}

fn output(root: &ProjectRoot, bg: &Arc<Background>, run_id: &str, since: u64) -> Value {
    dispatch::call(
        root,
        "command_output",
        json!({"run_id": run_id, "since_byte": since}),
        &ctx(bg),
    )
    .unwrap()
}

/// Waits (up to 10 s) for the command's output to pass `done`.
fn wait_for(
    root: &ProjectRoot,
    bg: &Arc<Background>,
    run_id: &str,
    done: impl Fn(&Value) -> bool,
) -> Value {
    let until = Instant::now() + Duration::from_secs(10);
    loop {
        let out = output(root, bg, run_id, 0);
        if done(&out) {
            return out;
        }
        assert!(Instant::now() < until, "still waiting: {out}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_background_command_returns_at_once_and_its_output_is_read_from_an_offset() {
    if !has_node() {
        return;
    }
    let (_dir, root) = project();
    let bg = Arc::new(Background::default());
    let began = Instant::now();
    let id = start(
        &root,
        &bg,
        "console.log('first'); setTimeout(() => { console.log('second'); process.exit(3) }, 1500)",
    );
    assert!(
        began.elapsed() < Duration::from_millis(1000),
        "{:?}",
        began.elapsed()
    );
    let first = wait_for(&root, &bg, &id, |o| {
        o["output"].as_str().unwrap().contains("first")
    });
    assert_eq!(first["running"], true, "{first}");
    let next = first["next_byte"].as_u64().unwrap();
    let done = wait_for(&root, &bg, &id, |o| o["running"] == false);
    assert_eq!(done["exit_code"], 3, "{done}");
    assert_eq!(done["stopped"], false, "{done}");
    let rest = output(&root, &bg, &id, next);
    assert_eq!(rest["output"], "second\n", "{rest}");
    assert_eq!(
        rest["next_byte"].as_u64().unwrap(),
        "first\nsecond\n".len() as u64
    );
}

#[test]
fn stop_command_kills_the_command_and_what_it_started() {
    if !has_node() {
        return;
    }
    let (_dir, root) = project();
    let bg = Arc::new(Background::default());
    // A detached grandchild that leaves the group, writing as long as it lives.
    let script = "require('child_process').spawn('node', ['-e', \"setInterval(() => require('fs').appendFileSync('child', 'x'), 50)\"], {detached: true}); \
                  console.log('started'); setTimeout(() => {}, 60000)";
    let id = start(&root, &bg, script);
    let child = root.path().join("child");
    let until = Instant::now() + Duration::from_secs(10);
    while std::fs::metadata(&child).map(|m| m.len()).unwrap_or(0) < 3 {
        assert!(Instant::now() < until, "the grandchild did not start");
        std::thread::sleep(Duration::from_millis(20));
    }
    let stopped = dispatch::call(&root, "stop_command", json!({"run_id": id}), &ctx(&bg)).unwrap();
    assert_eq!(stopped["running"], false, "{stopped}");
    assert_eq!(stopped["stopped"], true, "{stopped}");
    assert_eq!(bg.running(), 0);
    let len = std::fs::metadata(&child).unwrap().len();
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(
        std::fs::metadata(&child).unwrap().len(),
        len,
        "the grandchild outlived stop_command"
    );
    let err = dispatch::call(
        &root,
        "command_output",
        json!({"run_id": "bg-999"}),
        &ctx(&bg),
    )
    .unwrap_err();
    assert_eq!(err.code.as_str(), "not_found");
}

#[test]
fn at_most_eight_run_at_once_and_dropping_the_registry_stops_them() {
    if !has_node() {
        return;
    }
    let (dir, root) = project();
    let bg = Arc::new(Background::default());
    let marker = dir.path().join("alive");
    let script = "require('fs').appendFileSync('alive', 'x'); setInterval(() => require('fs').appendFileSync('alive', 'x'), 50)";
    for _ in 0..MAX_BACKGROUND {
        start(&root, &bg, script);
    }
    let err = dispatch::call(
        &root,
        "exec_shell",
        json!({"command": "node", "args": ["-e", script], "background": true}),
        &ctx(&bg),
    )
    .unwrap_err();
    assert_eq!(err.code.as_str(), "invalid_input", "{err:?}");
    assert!(err.message.contains("8"), "{}", err.message);
    let until = Instant::now() + Duration::from_secs(10);
    while std::fs::metadata(&marker).map(|m| m.len()).unwrap_or(0) < 8 {
        assert!(Instant::now() < until, "the commands did not start");
        std::thread::sleep(Duration::from_millis(20));
    }
    drop(bg);
    let len = std::fs::metadata(&marker).unwrap().len();
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(
        std::fs::metadata(&marker).unwrap().len(),
        len,
        "a command outlived its registry"
    );
}

#[test]
fn starts_at_the_same_time_cannot_pass_the_limit_together() {
    if !has_node() {
        return;
    }
    let (_dir, root) = project();
    let root = Arc::new(root);
    let bg = Arc::new(Background::default());
    let script = "setInterval(() => {}, 1000)";
    let go = Arc::new(std::sync::Barrier::new(MAX_BACKGROUND + 4));
    let starts: Vec<_> = (0..MAX_BACKGROUND + 4)
        .map(|_| {
            let (root, bg, go) = (root.clone(), bg.clone(), go.clone());
            std::thread::spawn(move || {
                go.wait();
                dispatch::call(
                    &root,
                    "exec_shell",
                    json!({"command": "node", "args": ["-e", script], "background": true}),
                    &ctx(&bg),
                )
                .is_ok()
            })
        })
        .collect();
    let started = starts
        .into_iter()
        .map(|s| s.join().unwrap_or(false))
        .filter(|ok| *ok)
        .count();
    assert_eq!(started, MAX_BACKGROUND);
    assert_eq!(bg.running(), MAX_BACKGROUND);
}

#[test]
fn without_a_registry_background_is_refused() {
    let (_dir, root) = project();
    let ctx = CallContext::new(Mode::FullAuto, Approval::None);
    for (tool, input) in [
        ("exec_shell", json!({"command": "ls", "background": true})),
        ("command_output", json!({"run_id": "bg-1"})),
        ("stop_command", json!({"run_id": "bg-1"})),
    ] {
        let err = dispatch::call(&root, tool, input, &ctx).unwrap_err();
        assert_eq!(err.code.as_str(), "invalid_input", "{tool}");
    }
}

#[test]
fn a_server_in_the_background_lists_its_port_and_the_host_reaches_it_until_it_stops() {
    if !has_node() || !corral_tools::shell::namespaces_available() {
        eprintln!("note: no node or no namespaces here; skipping the forward test");
        return;
    }
    let (_dir, root) = project();
    let bg = Arc::new(Background::default());
    // No network granted: the server listens in the sandbox's own
    // namespace, on a port the host already uses, so the host reaches it
    // on another one.
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let taken_port = taken.local_addr().unwrap().port();
    let script = format!(
        "require('http').createServer((q, s) => s.end('hello from inside ' + q.url))\
         .listen({taken_port}, '127.0.0.1', function () {{ console.log('listening on ' + this.address().port) }})"
    );
    let id = start(&root, &bg, &script);
    let banner = wait_for(&root, &bg, &id, |o| {
        o["output"].as_str().unwrap().contains("listening on")
    });
    let text = banner["output"].as_str().unwrap();
    let port: u64 = text.trim().rsplit(' ').next().unwrap().parse().unwrap();
    let listed = wait_for(&root, &bg, &id, |o| {
        o["ports"].as_array().is_some_and(|p| !p.is_empty())
    });
    assert_eq!(port, u64::from(taken_port));
    assert_eq!(listed["ports"][0]["port"], port, "{listed}");
    let reach_at = listed["ports"][0]["reach_at"].as_u64().expect("forwarded") as u16;
    assert_ne!(reach_at, taken_port, "{listed}");
    let get = |path: &str| -> std::io::Result<String> {
        use std::io::{Read, Write};
        let mut conn = std::net::TcpStream::connect(("127.0.0.1", reach_at))?;
        conn.set_read_timeout(Some(Duration::from_secs(10)))?;
        write!(conn, "GET {path} HTTP/1.0\r\nHost: localhost\r\n\r\n")?;
        let mut reply = String::new();
        conn.read_to_string(&mut reply)?;
        Ok(reply)
    };
    for path in ["/one", "/two"] {
        let reply = get(path).unwrap();
        assert!(reply.starts_with("HTTP/1.1 200"), "{reply}");
        assert!(
            reply.ends_with(&format!("hello from inside {path}")),
            "{reply}"
        );
    }
    let stopped = dispatch::call(&root, "stop_command", json!({"run_id": id}), &ctx(&bg)).unwrap();
    assert_eq!(stopped["running"], false, "{stopped}");
    let until = Instant::now() + Duration::from_secs(5);
    loop {
        let out = output(&root, &bg, &id, 0);
        if out["ports"].as_array().is_some_and(Vec::is_empty) && get("/after").is_err() {
            break;
        }
        assert!(
            Instant::now() < until,
            "the forward outlived the server: {out}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}
