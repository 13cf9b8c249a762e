//! The session's integration tests, one binary, the lint allowances of
//! test code written once, here. `cargo test -p corral-session --test all
//! -- tickets::` runs one module. `project_watch.rs` stays a binary of its
//! own: it counts the inotify instances of its whole process.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::disallowed_methods
)]

mod grants;
mod hooks;
mod mcp_frames;
mod mcp_paths;
mod tickets;
