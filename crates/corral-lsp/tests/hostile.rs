//! A language server is the project's code (the TypeScript server runs
//! the project's own `node_modules/typescript`), so what it sends is not
//! trusted: a frame announcing a length no memory holds, or a header line
//! that never ends, costs that server, never the process. Before the
//! frames were bounded, the first of these aborted the test process
//! (`memory allocation of 99999999999999 bytes failed`).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods)]

use corral_lsp::{Language, Lsp, Options, ServerSpec, Source, Unsandboxed};
use std::time::Duration;

/// A server that answers `initialize` with `reply` (raw bytes), written
/// by Node.
fn server(reply: &str) -> ServerSpec {
    let script = format!(
        r#"process.stdin.once('data', () => {{ process.stdout.write({reply}); }}); setInterval(() => {{}}, 1000);"#
    );
    ServerSpec {
        language: Language::Python,
        program: "node".into(),
        args: vec!["-e".into(), script],
    }
}

#[test]
fn a_lying_or_endless_frame_costs_the_server_not_the_process() {
    for (reply, said) in [
        (
            r#"'Content-Length: 99999999999999\r\n\r\n{}'"#,
            "announced a message of 99999999999999 bytes",
        ),
        (r#"'X-Flood: ' + 'A'.repeat(1 << 20)"#, "header line over"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let lsp = Lsp::new(
            dir.path(),
            vec![server(reply)],
            Unsandboxed,
            Options::default(),
        );
        let report = lsp.check(&[Source::new("a.py", "x = 1\n")], Duration::from_secs(10));
        let notes = report.notes.join("\n");
        assert!(notes.contains(said), "{notes}");
        assert!(report.files.is_empty(), "{report:?}");
        // Dropped, not kept running.
        assert_eq!(lsp.running(), [], "{notes}");
    }
}
