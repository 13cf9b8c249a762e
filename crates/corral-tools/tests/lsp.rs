//! Diagnostics after edits, and the `diagnostics` and `symbols` tools, with
//! real language servers (typescript-language-server and pyright, from
//! `crates/corral-lsp/tests/servers`, installed by `scripts/setup.sh
//! --test`) running in the sandbox; and servers that crash or never
//! answer, which must leave an edit fast and correct.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods)]

mod common;

use common::Project;
use corral_tools::dispatch::{self, CallContext};
use corral_tools::lsp::{self, Lsp, Options};
use corral_tools::policy::{Approval, Mode};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The test servers' folder, or `None` (with a message) when the test
/// set-up has not installed them.
fn installed() -> Option<PathBuf> {
    let bin =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../corral-lsp/tests/servers/node_modules/.bin");
    if bin.join("typescript-language-server").exists() && bin.join("pyright-langserver").exists() {
        Some(bin)
    } else {
        eprintln!(
            "SKIPPED: the test language servers are not installed; run `scripts/setup.sh --test` ({} is missing)",
            bin.display()
        );
        None
    }
}

fn servers(p: &Project, dirs: &[PathBuf]) -> Lsp {
    let options = Options {
        restart_after: Duration::ZERO,
        ..Options::default()
    };
    lsp::servers(&p.root, dirs, options).unwrap()
}

fn call(p: &Project, servers: &Lsp, name: &str, input: Value) -> Value {
    let mut ctx = CallContext::new(Mode::FullAuto, Approval::Granted);
    ctx.lsp = Some(servers.clone());
    dispatch::call(&p.root, name, input, &ctx).unwrap()
}

/// Waits (through the `diagnostics` tool) until the server reports on
/// `path`: its first start may take longer than one call waits.
fn warm_up(p: &Project, servers: &Lsp, path: &str) {
    let started = Instant::now();
    let mut reported = false;
    while !reported && started.elapsed() < Duration::from_secs(120) {
        let report = call(p, servers, "diagnostics", json!({ "path": path }));
        reported = report["files"].as_array().is_some_and(|f| !f.is_empty());
    }
    assert!(reported, "no server reported on {path} within 120 s");
}

/// The one file of a write's diagnostics: its path, error count and the
/// first diagnostic's line.
fn only_file(out: &Value) -> (String, u64, Option<u64>) {
    let files = out["diagnostics"]["files"]
        .as_array()
        .expect("diagnostics in the result");
    assert_eq!(files.len(), 1, "{out}");
    let file = &files[0];
    (
        file["path"].as_str().unwrap().to_string(),
        file["errors"].as_u64().unwrap(),
        file["diagnostics"][0]["line"].as_u64(),
    )
}

#[test]
fn a_type_error_an_edit_makes_comes_back_with_file_and_line_and_the_fix_clears_it() {
    let Some(bin) = installed() else { return };
    let p = Project::new();
    p.write("tsconfig.json", r#"{"compilerOptions":{"strict":true}}"#);
    p.write(
        "src/total.ts",
        "export function total(xs: number[]): number {\n  return xs.length;\n}\n",
    );
    p.write(
        "src/main.ts",
        "import { total } from './total';\n\nconst n: number = total([1, 2]);\nexport { n };\n",
    );
    let servers = servers(&p, &[bin]);
    warm_up(&p, &servers, "src/main.ts");

    let broken = call(
        &p,
        &servers,
        "edit_file",
        json!({"path": "src/main.ts", "old_string": "const n: number", "new_string": "const n: string"}),
    );
    assert_eq!(
        only_file(&broken),
        ("src/main.ts".into(), 1, Some(3)),
        "{broken}"
    );
    let message = broken["diagnostics"]["files"][0]["diagnostics"][0]["message"]
        .as_str()
        .unwrap();
    assert!(
        message.contains("not assignable to type 'string'"),
        "{message}"
    );
    assert_eq!(
        broken["diagnostics"]["files"][0]["diagnostics"][0]["code"],
        "2322"
    );

    let fixed = call(
        &p,
        &servers,
        "edit_file",
        json!({"path": "src/main.ts", "old_string": "const n: string", "new_string": "const n: number"}),
    );
    assert_eq!(
        only_file(&fixed),
        ("src/main.ts".into(), 0, None),
        "{fixed}"
    );

    // A whole new file with an error, through write_file.
    let written = call(
        &p,
        &servers,
        "write_file",
        json!({"path": "src/extra.ts", "content": "import { total } from './total';\n\nexport const s = total('x');\n"}),
    );
    assert_eq!(
        only_file(&written),
        ("src/extra.ts".into(), 1, Some(3)),
        "{written}"
    );

    // A file no server reads gets no diagnostics field.
    let notes = call(
        &p,
        &servers,
        "write_file",
        json!({"path": "NOTES.md", "content": "hi\n"}),
    );
    assert!(notes.get("diagnostics").is_none(), "{notes}");

    // The tools for the model: the project's diagnostics, and a symbol.
    let project = call(&p, &servers, "diagnostics", json!({}));
    let paths: Vec<&str> = project["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert!(
        paths.contains(&"src/extra.ts") && paths.contains(&"src/total.ts"),
        "{project}"
    );
    let symbol = call(
        &p,
        &servers,
        "symbols",
        json!({"path": "src/main.ts", "name": "total", "line": 3}),
    );
    assert_eq!(
        symbol["definitions"],
        json!([{"path": "src/total.ts", "line": 1, "column": 17}]),
        "{symbol}"
    );
    assert!(
        symbol["hover"]
            .as_str()
            .unwrap()
            .contains("total(xs: number[]): number"),
        "{symbol}"
    );
    let refs = symbol["references"].as_array().unwrap();
    assert!(refs.len() >= 4, "{symbol}");
}

#[test]
fn pyright_reports_an_edit_s_type_error_and_its_fix() {
    let Some(bin) = installed() else { return };
    let p = Project::new();
    p.write(
        "app.py",
        "def double(x: int) -> int:\n    return x * 2\n\n\nresult: int = double(2)\n",
    );
    let servers = servers(&p, &[bin]);
    warm_up(&p, &servers, "app.py");
    let broken = call(
        &p,
        &servers,
        "edit_file",
        json!({"path": "app.py", "old_string": "double(2)", "new_string": "double(\"2\")"}),
    );
    assert_eq!(
        only_file(&broken),
        ("app.py".into(), 1, Some(5)),
        "{broken}"
    );
    let fixed = call(
        &p,
        &servers,
        "edit_file",
        json!({"path": "app.py", "old_string": "double(\"2\")", "new_string": "double(2)"}),
    );
    assert_eq!(only_file(&fixed), ("app.py".into(), 0, None), "{fixed}");
    assert_eq!(
        p.read("app.py"),
        b"def double(x: int) -> int:\n    return x * 2\n\n\nresult: int = double(2)\n"
    );
}

/// An edit that leaves a file's diagnostics as they were (clean before,
/// clean after) is answered as soon as the server has checked it: the
/// servers are asked for the file's diagnostics, not waited on for a
/// publication that typescript-language-server never sends in this case.
#[test]
fn an_edit_that_leaves_the_diagnostics_unchanged_returns_without_the_whole_wait() {
    let Some(bin) = installed() else { return };
    let p = Project::new();
    p.write("tsconfig.json", r#"{"compilerOptions":{"strict":true}}"#);
    p.write("a.ts", "export const a: number = 1;\n");
    p.write("a.py", "a: int = 1\n");
    let servers = servers(&p, &[bin]);
    for path in ["a.ts", "a.py"] {
        warm_up(&p, &servers, path);
        for n in 2..5 {
            let started = Instant::now();
            let out = call(
                &p,
                &servers,
                "edit_file",
                json!({"path": path, "old_string": format!("= {}", n - 1), "new_string": format!("= {n}")}),
            );
            let took = started.elapsed();
            assert_eq!(
                out["diagnostics"],
                json!({"files": [{"path": path, "errors": 0, "warnings": 0, "diagnostics": []}]}),
                "{path}"
            );
            assert!(took < Duration::from_millis(1_500), "{path}: {took:?}");
        }
    }
}

/// An edit whose server dies under it (killed while the edit waits for
/// its diagnostics) returns at once, with the file changed and a note.
#[test]
fn a_server_killed_mid_request_leaves_the_edit_fast_and_correct() {
    let Some(bin) = installed() else { return };
    let p = Project::new();
    p.write("tsconfig.json", "{}");
    p.write("a.ts", "export const a: number = 1;\n");
    let servers = servers(&p, &[bin]);
    warm_up(&p, &servers, "a.ts");
    let running = servers.running();
    assert_eq!(running.len(), 1, "{running:?}");
    let pgid = running[0].1;
    let killer = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(30));
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
        json!({"path": "a.ts", "old_string": "= 1", "new_string": "= 'x'"}),
    );
    killer.join().unwrap();
    assert!(
        started.elapsed() < Duration::from_millis(2_500),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(p.read("a.ts"), b"export const a: number = 'x';\n");
    let notes = out["diagnostics"]["notes"].to_string();
    assert!(notes.contains("stopped"), "{out}");
    // The next call starts it again.
    warm_up(&p, &servers, "a.ts");
    assert_ne!(servers.running(), running);
}

/// A fake server `program` (a script) installed as `name` in a folder of
/// its own, outside the project.
fn fake_server(name: &str, script: &str) -> (tempfile::TempDir, PathBuf) {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("servers/bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::write(bin.join(name), script).unwrap();
    std::fs::set_permissions(bin.join(name), std::fs::Permissions::from_mode(0o755)).unwrap();
    (dir, bin)
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

#[test]
fn a_server_that_crashes_on_each_document_leaves_edits_correct() {
    let script = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/crashing_language_server.js"),
    )
    .unwrap();
    let (_dir, bin) = fake_server("pyright-langserver", &script);
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
