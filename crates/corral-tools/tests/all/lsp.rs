//! Diagnostics after edits, and the `diagnostics` and `symbols` tools, with
//! real language servers (typescript-language-server and pyright, from
//! `crates/corral-lsp/tests/servers`, installed by `scripts/setup.sh
//! --test`) running in the sandbox: an edit's type error with its file and
//! line, its fix, an unchanged file answered without the whole wait, and a
//! server stopped when idle and started again by the next edit. Servers
//! that crash or never answer are in `lsp_faults.rs`.
use crate::common::Project;
use crate::language_servers::installed;
use crate::lsp_common::{call, group_alive, only_file, servers, servers_with, warm_up};
use serde_json::json;
use std::time::{Duration, Instant};

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

/// A server unused for the idle time is stopped (its processes gone), is
/// not started again by itself, and the next edit starts it again.
#[test]
fn a_server_idle_for_its_time_is_stopped_and_the_next_edit_starts_it_again() {
    let Some(bin) = installed() else { return };
    let p = Project::new();
    p.write("a.py", "a: int = 1\n");
    let idle = Duration::from_secs(2);
    let servers = servers_with(&p, &[bin], idle);
    warm_up(&p, &servers, "a.py");
    let used = Instant::now();
    let running = servers.running();
    assert_eq!(running.len(), 1, "{running:?}");
    let pgid = running[0].1;
    assert!(group_alive(pgid));

    while !servers.running().is_empty() && used.elapsed() < idle * 5 {
        std::thread::sleep(Duration::from_millis(50));
    }
    let stopped_after = used.elapsed();
    assert!(
        stopped_after >= idle && stopped_after < idle * 5,
        "{stopped_after:?}"
    );
    let gone = Instant::now();
    while group_alive(pgid) && gone.elapsed() < Duration::from_secs(2) {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(!group_alive(pgid), "the stopped server's processes live on");
    std::thread::sleep(idle / 2);
    assert_eq!(servers.running(), []);

    let out = call(
        &p,
        &servers,
        "edit_file",
        json!({"path": "a.py", "old_string": "= 1", "new_string": "= 'x'"}),
    );
    let restarted = servers.running();
    assert_eq!(restarted.len(), 1, "{restarted:?}");
    assert_ne!(restarted[0].1, pgid);
    // The edit's own wait may end before a cold start is done; the
    // server it started reports the type error either way.
    if out["diagnostics"]["files"] != json!([]) {
        assert_eq!(only_file(&out), ("a.py".into(), 1, Some(1)), "{out}");
    }
    let report = call(&p, &servers, "diagnostics", json!({"path": "a.py"}));
    assert_eq!(report["files"][0]["errors"], 1, "{report}");
    assert_eq!(report["files"][0]["diagnostics"][0]["line"], 1, "{report}");
}

/// A TypeScript 7 project (the real `typescript@7` from npm, in the
/// project's `node_modules`), with typescript-language-server installed
/// beside TypeScript 7 as `npm i -g typescript typescript-language-server`
/// installs them now (`crates/corral-lsp/tests/ts7`, by `scripts/setup.sh
/// --test`): TypeScript 7's own server, `tsc --lsp --stdio`, run by node
/// in the sandbox, reports an edit's type error. typescript-language-server
/// finds no `tsserver.js` in TypeScript 7, so without it the edit would
/// come back with no diagnostics.
#[test]
fn a_typescript_7_project_s_type_error_comes_back_after_an_edit() {
    let fixture = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../corral-lsp/tests/ts7");
    assert!(
        fixture
            .join("node_modules/typescript/package.json")
            .exists(),
        "TypeScript 7 is missing: run `scripts/setup.sh --test`"
    );
    let p = Project::new();
    p.write("tsconfig.json", r#"{"compilerOptions":{"strict":true}}"#);
    p.write("src/main.ts", "export const n: number = 1;\n");
    // The project's own node_modules: a copy (a link out would not be seen
    // in the sandbox).
    let copied = std::process::Command::new("cp")
        .arg("-r")
        .arg(fixture.join("node_modules"))
        .arg(p.root.path().join("node_modules"))
        .status()
        .unwrap();
    assert!(copied.success());
    let servers = servers(&p, &[fixture.join("node_modules/.bin")]);
    let broken = call(
        &p,
        &servers,
        "edit_file",
        json!({"path": "src/main.ts", "old_string": "const n: number", "new_string": "const n: string"}),
    );
    assert_eq!(
        only_file(&broken),
        ("src/main.ts".into(), 1, Some(1)),
        "{broken}"
    );
    assert_eq!(
        broken["diagnostics"]["files"][0]["diagnostics"][0]["code"], "2322",
        "{broken}"
    );
}

/// A project's servers warmed at its opening: the languages its files
/// show get theirs started before any edit (TypeScript here), and the
/// others none (no Python file, no pyright).
#[test]
fn the_servers_of_a_project_s_languages_start_when_it_opens() {
    let Some(bin) = installed() else { return };
    let p = Project::new();
    p.write("tsconfig.json", r#"{"compilerOptions":{"strict":true}}"#);
    p.write("src/main.ts", "export const n: number = 1;\n");
    p.write("notes.txt", "no language\n");
    let servers = servers(&p, &[bin]);
    assert!(servers.running().is_empty());
    corral_tools::lsp::warm(&p.root, &servers);
    let deadline = Instant::now() + Duration::from_secs(20);
    while servers.running().is_empty() {
        assert!(Instant::now() < deadline, "no server started at opening");
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(300));
    let running: Vec<_> = servers.running().into_iter().map(|(l, _)| l).collect();
    assert_eq!(running, [corral_lsp::Language::TypeScript]);
}
