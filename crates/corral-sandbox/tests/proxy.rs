//! The egress proxy, end to end: real curl and node in the real sandbox,
//! through the proxy, to real HTTP/1.1 servers.
//!
//! The servers need addresses of the test's choosing, so each test runs
//! itself again inside a user, network and mount namespace of its own
//! (`unshare -rnm`): there the test puts 198.51.100.7 (a documentation
//! address, reachable by the rules), 10.20.30.40 (private) and
//! 169.254.169.254 (the metadata address) on its loopback, serves HTTP
//! on them and on 127.0.0.1, and binds its own `/etc/hosts` naming them,
//! so the proxy resolves names through the system's ordinary lookup. The
//! proxy's rules are the product's own: nothing is relaxed for tests.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::disallowed_methods
)]

mod shell_common;

use corral_fs::ProjectRoot;
use corral_sandbox::{self as shell, exec_shell, Egress, ExecShellOutput, Profile, ShellRun};
use shell_common::*;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener};
use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// Set in the re-run test inside its namespaces.
const INSIDE: &str = "CORRAL_PROXY_TEST_INSIDE";

/// What the namespace's `/etc/hosts` says.
const HOSTS: &str = "127.0.0.1 localhost\n\
    198.51.100.7 registry.test other.test\n\
    127.0.0.1 loopback.test\n\
    10.20.30.40 private.test\n\
    169.254.169.254 metadata.test\n\
    ::ffff:127.0.0.1 mapped.test\n";

/// Prepares the namespace, then runs the test `$3` of the binary `$2`.
const SETUP: &str = "set -e
ip link set lo up
for a in 198.51.100.7 10.20.30.40 169.254.169.254; do ip addr add $a/32 dev lo; done
mount --bind \"$1\" /etc/hosts
exec \"$2\" --exact \"$3\" --nocapture --test-threads=1";

/// Whether this is the run inside the namespaces; otherwise runs the test
/// `name` there and fails with its output if it failed.
fn inside(name: &str) -> bool {
    if std::env::var_os(INSIDE).is_some() {
        return true;
    }
    let tools = ["/usr/bin/unshare", "/usr/bin/curl"];
    if !shell::namespaces_available()
        || tools.iter().any(|t| !Path::new(t).exists())
        || !(Path::new("/usr/sbin/ip").exists() || Path::new("/sbin/ip").exists())
    {
        eprintln!("note: bubblewrap, unshare, ip or curl is missing; skipping a proxy test");
        return false;
    }
    let dir = tempfile::tempdir().unwrap();
    let hosts = dir.path().join("hosts");
    std::fs::write(&hosts, HOSTS).unwrap();
    let exe = std::env::current_exe().unwrap();
    let out = Command::new("unshare")
        .args(["-r", "-n", "-m", "sh", "-c", SETUP, "sh"])
        .arg(&hosts)
        .arg(&exe)
        .arg(name)
        .env(INSIDE, "1")
        .output()
        .unwrap();
    let said = format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "inside the namespaces:\n{said}");
    assert!(said.contains("1 passed"), "the test did not run:\n{said}");
    false
}

/// A real HTTP/1.1 server on `address`, answering each request with where
/// it was reached and what it was asked; counts its connections.
fn server(address: &str) -> Arc<AtomicUsize> {
    let listener = TcpListener::bind(address).unwrap();
    let reached = Arc::new(AtomicUsize::new(0));
    let count = reached.clone();
    let at: SocketAddr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(mut conn) = conn else { continue };
            count.fetch_add(1, Ordering::SeqCst);
            let mut head = Vec::new();
            let mut byte = [0u8; 1];
            while !head.ends_with(b"\r\n\r\n") && conn.read(&mut byte).unwrap_or(0) == 1 {
                head.push(byte[0]);
            }
            let head = String::from_utf8_lossy(&head).into_owned();
            let line = head.lines().next().unwrap_or("").to_string();
            let host = head
                .lines()
                .find_map(|l| l.strip_prefix("Host: "))
                .unwrap_or("-")
                .to_string();
            let body = format!("reached {at}: {line} host={host}\n");
            let _ = write!(
                conn,
                "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    reached
}

fn allowing(domains: &[&str]) -> ShellRun {
    ShellRun {
        network: true,
        extra_programs: vec!["curl".into()],
        egress: Egress {
            allowed_domains: domains.iter().map(|d| d.to_string()).collect(),
            ask: None,
        },
        ..ShellRun::default()
    }
}

fn curl(root: &ProjectRoot, run: &ShellRun, args: &[&str]) -> ExecShellOutput {
    let mut all = vec!["-sS", "--fail", "--max-time", "10"];
    all.extend_from_slice(args);
    exec_shell(root, &input("curl", &all), run).unwrap()
}

#[test]
fn an_allowed_domain_is_reached_over_plain_http_and_connect_and_each_is_logged() {
    if !inside("an_allowed_domain_is_reached_over_plain_http_and_connect_and_each_is_logged") {
        return;
    }
    let (_d, root) = project();
    let (plain, tls) = (server("198.51.100.7:80"), server("198.51.100.7:443"));
    let run = allowing(&["registry.test"]);

    let out = curl(&root, &run, &["http://registry.test/pkg?v=1"]);
    assert_eq!(
        (out.exit_code, out.profile, out.stdout.as_str()),
        (
            Some(0),
            Profile::Network,
            "reached 198.51.100.7:80: GET /pkg?v=1 HTTP/1.1 host=registry.test\n"
        ),
        "{out:?}"
    );
    assert!(
        out.stderr.contains(
            "corral proxy: allowed GET http://registry.test:80/pkg?v=1 (connected to 198.51.100.7)"
        ),
        "{out:?}"
    );
    assert_eq!(out.network_refused, None);

    // CONNECT: curl opens a tunnel and speaks HTTP through it.
    let out = curl(
        &root,
        &run,
        &["--proxytunnel", "http://registry.test:443/crate"],
    );
    assert_eq!(
        (out.exit_code, out.stdout.as_str()),
        (
            Some(0),
            "reached 198.51.100.7:443: GET /crate HTTP/1.1 host=registry.test:443\n"
        ),
        "{out:?}"
    );
    assert!(
        out.stderr.contains(
            "corral proxy: allowed CONNECT registry.test:443 (connected to 198.51.100.7)"
        ),
        "{out:?}"
    );
    // SOCKS5, with the name resolved by the proxy.
    let out = curl(
        &root,
        &run,
        &["-x", "socks5h://127.0.0.1:3128", "http://registry.test/s"],
    );
    assert!(
        out.stdout.starts_with("reached 198.51.100.7:80: GET /s "),
        "{out:?}"
    );
    assert!(
        out.stderr
            .contains("corral proxy: allowed SOCKS registry.test:80"),
        "{out:?}"
    );
    assert_eq!(
        (plain.load(Ordering::SeqCst), tls.load(Ordering::SeqCst)),
        (2, 1)
    );
}

#[test]
fn another_domain_is_refused_or_asked_about_once() {
    if !inside("another_domain_is_refused_or_asked_about_once") {
        return;
    }
    let (_d, root) = project();
    let reached = server("198.51.100.7:80");
    // other.test resolves to the same server: only the rules keep it out.
    let out = curl(
        &root,
        &allowing(&["registry.test"]),
        &["http://other.test/"],
    );
    assert_ne!(out.exit_code, Some(0), "{out:?}");
    assert!(
        out.stderr.contains(
            "corral proxy: refused GET http://other.test:80/: `other.test` is not on the network allowlist"
        ),
        "{out:?}"
    );
    let refused = out.network_refused.unwrap_or_default();
    assert!(
        refused.contains("other.test") && refused.contains("--allow-domain"),
        "{refused}"
    );
    let out = curl(
        &root,
        &allowing(&["registry.test"]),
        &["--proxytunnel", "http://other.test:443/"],
    );
    assert_ne!(out.exit_code, Some(0), "{out:?}");
    assert!(
        out.stderr.contains("refused CONNECT other.test:443"),
        "{out:?}"
    );
    assert_eq!(reached.load(Ordering::SeqCst), 0);

    // With a caller that asks: once per domain, whatever the answer.
    let asked: Arc<Mutex<Vec<String>>> = Arc::default();
    let mut run = allowing(&["registry.test"]);
    let seen = asked.clone();
    run.egress.ask = Some(Arc::new(move |domain: &str| {
        seen.lock().unwrap().push(domain.to_string());
        domain == "other.test"
    }));
    let out = curl(
        &root,
        &run,
        &[
            "http://other.test/a",
            "http://other.test/b",
            "http://registry.test/c",
        ],
    );
    assert_eq!(out.exit_code, Some(0), "{out:?}");
    assert_eq!(
        out.stdout.matches("reached 198.51.100.7:80").count(),
        3,
        "{out:?}"
    );
    let out = curl(&root, &run, &["--proxytunnel", "http://no.test:443/"]);
    assert_ne!(out.exit_code, Some(0), "{out:?}");
    assert!(out.stderr.contains("the user did not allow it"), "{out:?}");
    assert_eq!(*asked.lock().unwrap(), ["other.test", "no.test"]);
    assert_eq!(reached.load(Ordering::SeqCst), 3);
}

#[test]
fn names_and_addresses_of_this_computer_or_the_local_network_are_refused() {
    if !inside("names_and_addresses_of_this_computer_or_the_local_network_are_refused") {
        return;
    }
    let (_d, root) = project();
    let servers = [
        server("127.0.0.1:80"),
        server("10.20.30.40:80"),
        server("169.254.169.254:80"),
    ];
    // Allowed by name: the addresses they resolve to still refuse them.
    let run = allowing(&[
        "loopback.test",
        "private.test",
        "metadata.test",
        "mapped.test",
    ]);
    for (args, refused) in [
        (
            &["http://loopback.test/"][..],
            "127.0.0.1, a loopback address",
        ),
        (&["http://private.test/"], "10.20.30.40, a private address"),
        (
            &["http://metadata.test/latest/meta-data/"],
            "169.254.169.254, a link-local",
        ),
        (&["http://mapped.test/"], "127.0.0.1, a loopback address"),
        (
            &["--proxytunnel", "http://loopback.test:443/"],
            "127.0.0.1, a loopback",
        ),
        (&["http://127.0.0.1/"], "127.0.0.1 is a loopback address"),
        (&["http://[::ffff:10.20.30.40]/"], "a private address"),
        (
            &["--proxytunnel", "http://169.254.169.254:443/"],
            "a link-local",
        ),
        (&["http://loopback.test:8080/"], "port 8080 is not allowed"),
    ] {
        let out = curl(&root, &run, args);
        assert_ne!(out.exit_code, Some(0), "{args:?}: {out:?}");
        assert!(
            out.stderr.contains("corral proxy: refused"),
            "{args:?}: {out:?}"
        );
        assert!(out.stderr.contains(refused), "{args:?}: {out:?}");
        assert!(out.network_refused.is_some(), "{args:?}: {out:?}");
    }
    for reached in &servers {
        assert_eq!(reached.load(Ordering::SeqCst), 0);
    }
}

#[test]
fn a_program_that_ignores_the_proxy_reaches_nothing() {
    if !inside("a_program_that_ignores_the_proxy_reaches_nothing") {
        return;
    }
    if !has_node() {
        return;
    }
    let (_d, root) = project();
    let servers = [server("198.51.100.7:80"), server("127.0.0.1:80")];
    let script = "const net = require('net');
        for (const host of ['198.51.100.7', '127.0.0.1']) {
            const c = net.connect(80, host);
            c.setTimeout(3000, () => { console.log(host + '=timeout'); c.destroy() });
            c.on('connect', () => { console.log(host + '=ok'); c.end() });
            c.on('error', (e) => console.log(host + '=' + e.code));
        }";
    let run = allowing(&["registry.test"]);
    let out = exec_shell(&root, &input("node", &["-e", script]), &run).unwrap();
    assert_eq!(out.profile, Profile::Network);
    let mut said: Vec<&str> = out.stdout.lines().collect();
    said.sort();
    assert_eq!(
        said,
        ["127.0.0.1=ECONNREFUSED", "198.51.100.7=ENETUNREACH"],
        "{out:?}"
    );
    // curl told to skip the proxy finds no route.
    let out = curl(&root, &run, &["--noproxy", "*", "http://registry.test/"]);
    assert_ne!(out.exit_code, Some(0), "{out:?}");
    for reached in &servers {
        assert_eq!(reached.load(Ordering::SeqCst), 0);
    }
}

#[test]
fn a_background_command_goes_through_the_proxy_and_its_output_shows_the_log() {
    if !inside("a_background_command_goes_through_the_proxy_and_its_output_shows_the_log") {
        return;
    }
    let (_d, root) = project();
    let reached = server("198.51.100.7:80");
    let bg = corral_sandbox::background::Background::default();
    let run = allowing(&["registry.test"]);
    let started = bg
        .start(
            &root,
            &input(
                "curl",
                &["-sS", "http://registry.test/bg", "http://other.test/"],
            ),
            &run,
        )
        .unwrap();
    let until = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let mut out = bg.output(&started.run_id, 0).unwrap();
    while out.running && std::time::Instant::now() < until {
        std::thread::sleep(std::time::Duration::from_millis(50));
        out = bg.output(&started.run_id, 0).unwrap();
    }
    assert!(!out.running, "{out:?}");
    for said in [
        "reached 198.51.100.7:80: GET /bg HTTP/1.1 host=registry.test",
        "corral proxy: allowed GET http://registry.test:80/bg",
        "corral proxy: refused GET http://other.test:80/",
    ] {
        assert!(out.output.contains(said), "{said}: {out:?}");
    }
    assert_eq!(reached.load(Ordering::SeqCst), 1);
}

/// A real HTTP/1.1 server on `address` that keeps each connection open
/// and answers every request it reads on it, `Connection: close` or not
/// (as a server that serves pipelined requests does), until the peer
/// closes or is silent for a second; returns each request it read, as
/// `LINE host=HOST body=BODY`.
fn recording_server(address: &str) -> Arc<Mutex<Vec<String>>> {
    let listener = TcpListener::bind(address).unwrap();
    let seen: Arc<Mutex<Vec<String>>> = Arc::default();
    let record = seen.clone();
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(mut conn) = conn else { continue };
            conn.set_read_timeout(Some(std::time::Duration::from_secs(1)))
                .unwrap();
            loop {
                let mut head = Vec::new();
                let mut byte = [0u8; 1];
                while !head.ends_with(b"\r\n\r\n") && conn.read(&mut byte).unwrap_or(0) == 1 {
                    head.push(byte[0]);
                }
                if !head.ends_with(b"\r\n\r\n") {
                    break;
                }
                let head = String::from_utf8_lossy(&head).into_owned();
                let field = |name: &str| {
                    head.lines().find_map(|l| {
                        let (n, v) = l.split_once(':')?;
                        n.eq_ignore_ascii_case(name).then(|| v.trim().to_string())
                    })
                };
                let length = field("content-length").map_or(0, |l| l.parse().unwrap_or(0));
                let mut body = vec![0u8; length];
                let _ = conn.read_exact(&mut body);
                let said = format!(
                    "{} host={} body={}",
                    head.lines().next().unwrap_or(""),
                    field("host").unwrap_or_else(|| "-".into()),
                    String::from_utf8_lossy(&body)
                );
                record.lock().unwrap().push(said.clone());
                let reply = format!("reached: {said}\n");
                let _ = write!(
                    conn,
                    "HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n{reply}",
                    reply.len()
                );
            }
        }
    });
    seen
}

/// Writes each of `payloads` whole, at once, on a connection of its own
/// to the proxy from inside the sandbox (node, so that the bytes are the
/// test's own), and prints what came back on each as a JSON string.
fn raw_to_proxy(root: &ProjectRoot, run: &ShellRun, payloads: &[&str]) -> ExecShellOutput {
    let script = "const net = require('net');
        const send = (payload) => new Promise((done) => {
            const c = net.connect(3128, '127.0.0.1');
            let got = '';
            c.on('connect', () => c.write(payload));
            c.on('data', (d) => { got += d });
            c.on('error', (e) => { got += '[' + e.code + ']' });
            c.on('close', () => done(got));
            c.setTimeout(8000, () => { got += '[timeout]'; c.destroy() });
        });
        (async () => {
            for (const payload of process.argv.slice(1)) {
                console.log(JSON.stringify(await send(payload)));
            }
        })();";
    let mut args = vec!["-e", script];
    args.extend_from_slice(payloads);
    exec_shell(root, &input("node", &args), run).unwrap()
}

#[test]
fn a_second_request_on_a_plain_http_connection_is_never_forwarded() {
    if !inside("a_second_request_on_a_plain_http_connection_is_never_forwarded") {
        return;
    }
    if !has_node() {
        return;
    }
    let (_d, root) = project();
    // other.test resolves to the same server, as a shared host would.
    let seen = recording_server("198.51.100.7:80");
    let run = allowing(&["registry.test"]);
    let second = "GET http://other.test/second HTTP/1.1\r\nHost: other.test\r\n\r\n";
    let out = raw_to_proxy(
        &root,
        &run,
        &[
            &format!("GET http://registry.test/first HTTP/1.1\r\nHost: registry.test\r\n\r\n{second}"),
            &format!(
                "POST http://registry.test/upload HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello{second}"
            ),
        ],
    );
    assert_eq!(out.exit_code, Some(0), "{out:?}");
    assert_eq!(
        *seen.lock().unwrap(),
        [
            "GET /first HTTP/1.1 host=registry.test body=",
            "POST /upload HTTP/1.1 host=registry.test body=hello",
        ],
        "{out:?}"
    );
    assert!(out.stdout.contains("reached: GET /first"), "{out:?}");
    assert!(out.stdout.contains("reached: POST /upload"), "{out:?}");
    assert!(!out.stdout.contains("second"), "{out:?}");
    assert!(!out.stderr.contains("other.test"), "{out:?}");
    assert_eq!(
        out.stderr.matches("corral proxy: allowed").count(),
        2,
        "{out:?}"
    );
}

#[test]
fn a_plain_http_request_whose_end_is_not_known_is_refused_unforwarded() {
    if !inside("a_plain_http_request_whose_end_is_not_known_is_refused_unforwarded") {
        return;
    }
    if !has_node() {
        return;
    }
    let (_d, root) = project();
    let seen = recording_server("198.51.100.7:80");
    let run = allowing(&["registry.test"]);
    let post = "POST http://registry.test/up HTTP/1.1\r\nHost: registry.test\r\n";
    let out = raw_to_proxy(
        &root,
        &run,
        &[
            &format!("{post}Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n"),
            &format!("{post}Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\nhello"),
            &format!("{post}Content-Length: 5\r\nContent-Length: 6\r\n\r\nhello!"),
            &format!("{post}Content-Length: +5\r\n\r\nhello"),
            // A head that ends, by bare line feeds, before the blank line.
            "GET http://registry.test/a HTTP/1.1\nHost: registry.test\n\nGET http://other.test/b HTTP/1.1\r\n\r\n",
        ],
    );
    let answers: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(answers.len(), 5, "{out:?}");
    for (answer, status) in answers.iter().zip([
        "411 Length Required",
        "411 Length Required",
        "400 Bad Request",
        "400 Bad Request",
        "400 Bad Request",
    ]) {
        assert!(
            answer.starts_with(&format!("\"HTTP/1.1 {status}")),
            "{status}: {out:?}"
        );
    }
    assert!(
        out.stderr
            .contains("corral proxy: refused POST http://registry.test:80/up: a request body"),
        "{out:?}"
    );
    assert!(seen.lock().unwrap().is_empty(), "{out:?}");
}
