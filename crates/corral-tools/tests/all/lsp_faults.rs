//! Language servers that fail: one killed while an edit waits for its
//! answer, one that never answers `initialize`, one that answers it and
//! then nothing, one that crashes on every document, and none at all.
//! Each must leave the edit fast (at most its wait) and correct (the file
//! written, a note saying what happened), never an error or a hang.
use crate::common::Project;
use crate::language_servers::{fake_server, installed, scripted_server};
use crate::lsp_common::{call, servers, warm_up};
use corral_tools::lsp::{self, Lsp, Options};
use serde_json::json;
use std::time::{Duration, Instant};

/// An edit whose server dies under it (killed while the edit waits for
/// its diagnostics) returns at once, with the file changed and a note.
#[test]
fn a_server_killed_mid_request_leaves_the_edit_fast_and_correct() {
    let Some(bin) = installed() else { return };
    let p = Project::new();
    p.write("tsconfig.json", "{}");
    // Long enough that its check is still running when the server is
    // killed, 100 ms into the edit.
    let body: String = (0..20_000)
        .map(|n| format!("export const v{n}: number = {n};\n"))
        .collect();
    p.write("a.ts", format!("export const a: number = 1;\n{body}"));
    let servers = servers(&p, &[bin]);
    warm_up(&p, &servers, "a.ts");
    let running = servers.running();
    assert_eq!(running.len(), 1, "{running:?}");
    let pgid = running[0].1;
    let killer = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(100));
        rustix::process::kill_process_group(
            rustix::process::Pid::from_raw(pgid).unwrap(),
            rustix::process::Signal::KILL,
        )
        .unwrap();
    });
    let started = Instant::now();
    let out = call(
        &p,
        &servers,
        "edit_file",
        json!({"path": "a.ts", "old_string": "const a: number = 1;", "new_string": "const a: number = 'x';"}),
    );
    killer.join().unwrap();
    assert!(
        started.elapsed() < Duration::from_millis(2_500),
        "{:?}",
        started.elapsed()
    );
    assert!(p
        .read("a.ts")
        .starts_with(b"export const a: number = 'x';\nexport const v0"));
    let notes = out["diagnostics"]["notes"].to_string();
    assert!(notes.contains("stopped"), "{out}");
    // The next call starts it again.
    warm_up(&p, &servers, "a.ts");
    assert_ne!(servers.running(), running);
}

#[test]
fn a_server_that_never_answers_costs_an_edit_at_most_its_wait() {
    let (_dir, bin) = fake_server("typescript-language-server", "#!/bin/sh\nexec sleep 600\n");
    let p = Project::new();
    p.write("a.ts", "export const a = 1;\n");
    let servers = servers(&p, &[bin]);
    for round in 0..2 {
        let started = Instant::now();
        let out = call(
            &p,
            &servers,
            "edit_file",
            json!({"path": "a.ts", "old_string": "a = ", "new_string": "a = 1 + "}),
        );
        let took = started.elapsed();
        assert!(
            took >= lsp::EDIT_WAIT && took < lsp::EDIT_WAIT + Duration::from_millis(700),
            "{took:?}"
        );
        assert_eq!(out["diagnostics"]["files"], json!([]), "{out}");
        let notes = out["diagnostics"]["notes"].to_string();
        assert!(
            notes.contains("still starting after 2.0 s"),
            "round {round}: {out}"
        );
    }
    assert_eq!(p.read("a.ts"), b"export const a = 1 + 1 + 1;\n");
}

/// A server that starts and then answers nothing (it says it can be asked
/// for diagnostics, and is asked, and never says): each edit costs its
/// wait, no more, and says the server did not report.
#[test]
fn a_server_that_answers_nothing_after_starting_costs_an_edit_at_most_its_wait() {
    let (_dir, bin) = scripted_server("pyright-langserver", "silent");
    let p = Project::new();
    p.write("a.py", "x = 1\n");
    let servers = servers(&p, &[bin]);
    for n in 2..5 {
        let started = Instant::now();
        let out = call(
            &p,
            &servers,
            "write_file",
            json!({"path": "a.py", "content": format!("x = {n}\n")}),
        );
        let took = started.elapsed();
        assert!(
            took >= lsp::EDIT_WAIT && took < lsp::EDIT_WAIT + Duration::from_millis(700),
            "{took:?}"
        );
        assert_eq!(p.read("a.py"), format!("x = {n}\n").as_bytes());
        if n == 2
            && out["diagnostics"]["notes"]
                .to_string()
                .contains("still starting")
        {
            continue; // a first start slower than the wait, on a busy machine
        }
        assert_eq!(
            out["diagnostics"],
            json!({"files": [], "notes": ["the Python server (pyright-langserver) did not report on `a.py` within 2.0 s"]}),
        );
    }
}

#[test]
fn a_server_that_crashes_on_each_document_leaves_edits_correct() {
    let (_dir, bin) = scripted_server("pyright-langserver", "crash");
    let p = Project::new();
    p.write("a.py", "x = 1\n");
    let servers = servers(&p, &[bin]);
    for n in 2..5 {
        let started = Instant::now();
        let out = call(
            &p,
            &servers,
            "write_file",
            json!({"path": "a.py", "content": format!("x = {n}\n")}),
        );
        assert!(
            started.elapsed() < lsp::EDIT_WAIT + Duration::from_millis(700),
            "{:?}",
            started.elapsed()
        );
        assert_eq!(p.read("a.py"), format!("x = {n}\n").as_bytes());
        let notes = out["diagnostics"]["notes"].to_string();
        // Still starting, or seen to stop: never an error, never a hang.
        assert!(
            notes.contains("stopped") || notes.contains("still starting"),
            "{out}"
        );
    }
}

#[test]
fn without_servers_diagnostics_says_so_and_symbols_fails_clearly() {
    let p = Project::new();
    p.write("a.ts", "export const a = 1;\n");
    let out = p.call("diagnostics", json!({"path": "a.ts"})).unwrap();
    assert_eq!(
        out,
        json!({"files": [], "notes": ["no language servers run in this session"]})
    );
    let err = p
        .call("symbols", json!({"path": "a.ts", "name": "a"}))
        .unwrap_err();
    assert_eq!(err.code.as_str(), "language_server");
    let missing = p
        .call("symbols", json!({"path": "a.ts", "name": "b"}))
        .unwrap_err();
    assert_eq!(missing.code.as_str(), "no_match");
    // A write without servers has no diagnostics field.
    let written = p
        .call("write_file", json!({"path": "b.ts", "content": "x\n"}))
        .unwrap();
    assert!(written.get("diagnostics").is_none(), "{written}");
}

#[test]
fn a_language_without_its_server_is_named_by_diagnostics_not_by_each_write() {
    let p = Project::new();
    let servers = Lsp::new(
        p.root.path(),
        Vec::new(),
        corral_lsp::Unsandboxed,
        Options::default(),
    );
    let out = call(
        &p,
        &servers,
        "write_file",
        json!({"path": "main.go", "content": "package main\n"}),
    );
    assert!(out.get("diagnostics").is_none(), "{out}");
    let report = call(&p, &servers, "diagnostics", json!({"path": "main.go"}));
    assert_eq!(
        report,
        json!({"files": [], "notes": ["no Go language server is installed (gopls)"]})
    );
}
