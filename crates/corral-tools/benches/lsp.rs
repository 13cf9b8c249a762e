//! The latency a language server adds to an edit: `edit_file` of a small
//! TypeScript and a small Python file through `dispatch::call`, without
//! servers and with typescript-language-server and pyright (the test
//! servers, in the sandbox) answering with the file's diagnostics.
//! Run: cargo bench -p corral-tools --bench lsp
//! (after `scripts/setup.sh --test`, which installs the servers).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods)]

use corral_tools::dispatch::{self, CallContext};
use corral_tools::lsp::{self, Options};
use corral_tools::policy::{Approval, Mode};
use corral_tools::ProjectRoot;
use criterion::{criterion_group, criterion_main, Criterion};
use serde_json::json;
use std::path::Path;
use std::time::Duration;

const TS: &str = "export function total(xs: number[]): number {\n  return xs.reduce((a, b) => a + b, 0);\n}\n\nexport const n: number = total([1, 2, 3]);\n";
const PY: &str =
    "def total(xs: list[int]) -> int:\n    return sum(xs)\n\n\nn: int = total([1, 2, 3])\n";

fn bench(c: &mut Criterion) {
    let bin =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../corral-lsp/tests/servers/node_modules/.bin");
    if !bin.join("typescript-language-server").exists() {
        eprintln!("SKIPPED: run `scripts/setup.sh --test` to install the test language servers");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("tsconfig.json"),
        r#"{"compilerOptions":{"strict":true}}"#,
    )
    .unwrap();
    std::fs::write(dir.path().join("a.ts"), TS).unwrap();
    std::fs::write(dir.path().join("a.py"), PY).unwrap();
    let root = ProjectRoot::open(dir.path()).unwrap();
    let servers = lsp::servers(&root, &[bin], Options::default()).unwrap();
    let plain = CallContext::new(Mode::FullAuto, Approval::Granted);
    let mut with_lsp = CallContext::new(Mode::FullAuto, Approval::Granted);
    with_lsp.lsp = Some(servers.clone());
    // Started and warm before anything is measured.
    for path in ["a.ts", "a.py"] {
        let ready = (0..6).any(|_| {
            let report =
                dispatch::call(&root, "diagnostics", json!({ "path": path }), &with_lsp).unwrap();
            report["files"][0]["errors"] == 0
        });
        assert!(ready, "no server reported on {path}");
    }

    let mut group = c.benchmark_group("edit_file");
    group
        .sample_size(20)
        .measurement_time(Duration::from_secs(20));
    for (path, old, new, label) in [
        ("a.ts", "total([1, 2, 3])", "total([1, 2, 4])", "TypeScript"),
        ("a.py", "total([1, 2, 3])", "total([1, 2, 4])", "Python"),
    ] {
        // Each iteration changes the file (back and forth), so the server
        // always has a new version to check.
        let edit = |ctx: &CallContext, flip: &mut bool| {
            let (from, to) = if *flip { (new, old) } else { (old, new) };
            *flip = !*flip;
            let out = dispatch::call(
                &root,
                "edit_file",
                json!({"path": path, "old_string": from, "new_string": to}),
                ctx,
            )
            .unwrap();
            // A server that misses the 2 s wait is part of what is measured;
            // say so rather than stop the run.
            if ctx.lsp.is_some() && out["diagnostics"]["files"][0]["errors"] != 0 {
                eprintln!("no diagnostics within the wait: {}", out["diagnostics"]);
            }
        };
        let mut flip = false;
        group.bench_function(format!("{label}, no servers"), |b| {
            b.iter(|| edit(&plain, &mut flip))
        });
        group.bench_function(format!("{label}, with its server's diagnostics"), |b| {
            b.iter(|| edit(&with_lsp, &mut flip))
        });
    }
    group.finish();
    servers.stop();
}

criterion_group!(benches, bench);
criterion_main!(benches);
