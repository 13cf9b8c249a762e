//! The language-server tests' helpers on this crate's fixture project: a
//! project's servers, calls with them, and whether a server's process
//! group lives (the test servers' folder and the fake servers are the
//! kit's, `language_servers`).

use crate::common::Project;
use corral_tools::dispatch::{self, CallContext};
use corral_tools::lsp::{self, Lsp, Options};
use corral_tools::policy::{Approval, Mode};
use serde_json::{json, Value};
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// The project's servers found in `dirs`, restarted at once after a crash.
pub fn servers(p: &Project, dirs: &[PathBuf]) -> Lsp {
    servers_with(p, dirs, Duration::from_secs(600))
}

/// The same, stopped after `idle` unused.
pub fn servers_with(p: &Project, dirs: &[PathBuf], idle: Duration) -> Lsp {
    let options = Options {
        idle,
        restart_after: Duration::ZERO,
    };
    lsp::servers(&p.root, dirs, options).unwrap()
}

/// A tool call with the servers in its context.
pub fn call(p: &Project, servers: &Lsp, name: &str, input: Value) -> Value {
    let mut ctx = CallContext::new(Mode::FullAuto, Approval::Granted);
    ctx.lsp = Some(servers.clone());
    dispatch::call(&p.root, name, input, &ctx).unwrap()
}

/// Waits (through the `diagnostics` tool) until the server reports on
/// `path`: its first start may take longer than one call waits.
pub fn warm_up(p: &Project, servers: &Lsp, path: &str) {
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
pub fn only_file(out: &Value) -> (String, u64, Option<u64>) {
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

/// Whether any process of the group `pgid` is alive.
pub fn group_alive(pgid: i32) -> bool {
    rustix::process::Pid::from_raw(pgid)
        .is_some_and(|pid| rustix::process::test_kill_process_group(pid).is_ok())
}
