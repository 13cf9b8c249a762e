//! A server's life: stopped once unused for the idle time (never while a
//! call waits on it, however slow its start), and started again by the
//! next check. The server is a small Node script that takes a second to
//! start and answers `textDocument/diagnostic` with one error.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods)]

use corral_lsp::{Language, Lsp, Options, ServerSpec, Source, Unsandboxed};
use std::time::{Duration, Instant};

const SERVER: &str = r#"
let buffer = Buffer.alloc(0);
const send = (message) => {
  const body = JSON.stringify({ jsonrpc: '2.0', ...message });
  process.stdout.write(`Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
};
process.stdin.on('data', (chunk) => {
  buffer = Buffer.concat([buffer, chunk]);
  for (;;) {
    const end = buffer.indexOf('\r\n\r\n');
    if (end < 0) return;
    const length = Number(/Content-Length: (\d+)/i.exec(buffer.slice(0, end).toString())[1]);
    if (buffer.length < end + 4 + length) return;
    const message = JSON.parse(buffer.slice(end + 4, end + 4 + length).toString());
    buffer = buffer.slice(end + 4 + length);
    if (message.method === 'initialize') {
      const capabilities = { textDocumentSync: 1, diagnosticProvider: { interFileDependencies: false, workspaceDiagnostics: false } };
      setTimeout(() => send({ id: message.id, result: { capabilities } }), 1000);
    } else if (message.method === 'textDocument/diagnostic') {
      const range = { start: { line: 0, character: 4 }, end: { line: 0, character: 5 } };
      send({ id: message.id, result: { kind: 'full', items: [{ range, severity: 1, message: 'slow but sure' }] } });
    } else if (message.method === 'shutdown') {
      send({ id: message.id, result: null });
    } else if (message.method === 'exit') {
      process.exit(0);
    }
  }
});
"#;

fn alive(pgid: i32) -> bool {
    rustix::process::Pid::from_raw(pgid)
        .is_some_and(|pid| rustix::process::test_kill_process_group(pid).is_ok())
}

#[test]
fn a_server_is_stopped_when_idle_not_while_waited_on_and_the_next_check_starts_it_again() {
    let dir = tempfile::tempdir().unwrap();
    let spec = ServerSpec {
        language: Language::Python,
        program: "node".into(),
        args: vec!["-e".into(), SERVER.into()],
    };
    let idle = Duration::from_millis(300);
    let options = Options {
        idle,
        restart_after: Duration::ZERO,
    };
    let lsp = Lsp::new(dir.path(), vec![spec], Unsandboxed, options);
    let source = Source::new("a.py", "x = 1\n");
    let wait = Duration::from_secs(10);

    // Its start takes longer than the idle time; the check waits it out.
    let report = lsp.check(std::slice::from_ref(&source), wait);
    assert_eq!(report.notes, Vec::<String>::new());
    assert_eq!(report.files.len(), 1, "{report:?}");
    assert_eq!(report.files[0].errors, 1);
    assert_eq!(report.files[0].diagnostics[0].message, "slow but sure");
    let used = Instant::now();
    let running = lsp.running();
    assert_eq!(running.len(), 1, "{running:?}");
    let pgid = running[0].1;

    while !lsp.running().is_empty() && used.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(10));
    }
    let stopped_after = used.elapsed();
    assert!(
        stopped_after >= idle && stopped_after < Duration::from_secs(2),
        "{stopped_after:?}"
    );
    let gone = Instant::now();
    while alive(pgid) && gone.elapsed() < Duration::from_secs(2) {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(!alive(pgid), "the idle server's process lives on");
    // Nothing starts it again but a check.
    std::thread::sleep(idle * 2);
    assert_eq!(lsp.running(), []);

    let again = lsp.check(&[source], wait);
    assert_eq!(again.files.len(), 1, "{again:?}");
    assert_eq!(again.files[0].errors, 1);
    let restarted = lsp.running();
    assert_eq!(restarted.len(), 1, "{restarted:?}");
    assert_ne!(restarted[0].1, pgid);
}

/// The servers on the machine are looked for once, and only when first
/// needed: a project opened and never checked never looks (finding
/// rust-analyzer behind rustup alone asks rustup, tens of milliseconds).
#[test]
fn the_servers_are_looked_for_once_and_only_when_needed() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    let dir = tempfile::tempdir().unwrap();
    let looked = Arc::new(AtomicUsize::new(0));
    let counted = looked.clone();
    let find = move || {
        counted.fetch_add(1, Ordering::SeqCst);
        vec![ServerSpec {
            language: Language::Python,
            program: "node".into(),
            args: vec!["-e".into(), SERVER.into()],
        }]
    };
    let lsp = Lsp::lazy(dir.path(), find, Unsandboxed, Options::default());
    assert_eq!(looked.load(Ordering::SeqCst), 0, "looked for at open");
    assert_eq!(lsp.languages(), [Language::Python]);
    assert_eq!(lsp.languages(), [Language::Python]);
    assert_eq!(looked.load(Ordering::SeqCst), 1);
}

/// Warmed, the servers of the languages of the files given start before
/// any file is checked (a project's at its opening) and open one of them;
/// a language with no server is left out.
#[test]
fn warmed_servers_start_before_any_check() {
    let dir = tempfile::tempdir().unwrap();
    let spec = ServerSpec {
        language: Language::Python,
        program: "node".into(),
        args: vec!["-e".into(), SERVER.into()],
    };
    let lsp = Lsp::new(dir.path(), vec![spec], Unsandboxed, Options::default());
    assert!(lsp.running().is_empty());
    lsp.warm(|| {
        vec![
            Source::new("a.py", "x = 1\n"),
            Source::new("b.go", "package b\n"),
        ]
    });
    let deadline = Instant::now() + Duration::from_secs(10);
    while lsp.running().is_empty() {
        assert!(Instant::now() < deadline, "no server was started");
        std::thread::sleep(Duration::from_millis(20));
    }
    let running: Vec<Language> = lsp.running().into_iter().map(|(l, _)| l).collect();
    assert_eq!(running, [Language::Python]);
    // Its start (a second) is over by the time the first check comes, so
    // a check that waits less than a start still gets its report: one not
    // warmed would answer "still starting".
    std::thread::sleep(Duration::from_millis(1500));
    let report = lsp.check(
        &[Source::new("a.py", "x = 1\n")],
        Duration::from_millis(500),
    );
    assert_eq!(report.notes, Vec::<String>::new());
    assert_eq!(report.files.len(), 1, "{report:?}");
}
