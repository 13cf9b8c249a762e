//! What Corral's integration tests share, written once: a fixture project
//! in a temp folder ([`Project`]), a session opened on it
//! ([`SessionBuilder`]), a call checked into a ticket and run with the
//! user's answer as a window does ([`answered`]), the fixture MCP servers
//! ([`mcp`]), the checkpoint store's faults ([`faults`]) and a small disk
//! to fill ([`disk`]), a folder's whole state to compare ([`tree`]),
//! language servers real and fake
//! ([`language_servers`]), a release of the
//! app for its updater ([`release`]), an sshd of the test's own for remote
//! projects ([`sshd`]), and the waits and skips every suite
//! needs ([`wait_until`], [`fenced`]).
//!
//! It is built on the session, so it serves the hosts above it (the app,
//! and the CLI and the MCP server when their tests move to it); the
//! session's own tests cannot use it, since no crate may depend on one
//! that depends on it back (corral-tools' `modules.rs` checks).
//!
//! A dev-dependency only (never published). Its helpers panic on a broken
//! fixture, as a test should, which is why the lint allowances below sit
//! here once instead of atop every test file.
//!
//! ```
//! use corral_testkit::{Project, SessionBuilder};
//! use corral_session::Call;
//! use serde_json::json;
//!
//! let project = Project::new().file("src/a.txt", "one\ntwo\n");
//! let session = SessionBuilder::new().open(&project);
//! let ticket = session.check(Call::new("read_file", json!({"path": "src/a.txt"}))).unwrap();
//! assert!(!ticket.ticket.is_empty());
//! assert_eq!(project.read("src/a.txt").as_deref(), Some("one\ntwo\n"));
//! ```
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::disallowed_methods
)]

pub mod disk;
pub mod faults;
pub mod language_servers;
pub mod mcp;
mod project;
pub mod release;
mod session;
pub mod sshd;
pub mod task_image;
pub mod tree;

pub use project::Project;
pub use session::{answered, checked, SessionBuilder};

use std::path::Path;
use std::time::{Duration, Instant};

/// Waits up to `secs` for `done`, polling every 20 ms; fails the test
/// naming `what` when it does not come.
pub fn wait_until(secs: u64, what: &str, mut done: impl FnMut() -> bool) {
    let until = Instant::now() + Duration::from_secs(secs);
    while !done() {
        assert!(Instant::now() < until, "waited {secs} s for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Whether commands run in the real sandbox here and each of `programs`
/// (absolute paths) exists; a test that needs them returns early when
/// not, saying so.
pub fn fenced(programs: &[&str]) -> bool {
    let missing: Vec<&str> = programs
        .iter()
        .copied()
        .filter(|p| !Path::new(p).exists())
        .collect();
    let namespaces = corral_tools::shell::namespaces_available();
    if !namespaces || !missing.is_empty() {
        eprintln!("note: namespaces available: {namespaces}, missing: {missing:?}; skipping");
        return false;
    }
    true
}
