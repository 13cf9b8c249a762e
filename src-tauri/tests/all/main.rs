//! The app's integration tests, one binary: one link instead of one per
//! file, and the lint allowances of test code written once, here.
//! `cargo test -p corral --test all -- shell_grants::` runs one module,
//! `-- --exact commands::settings_never_send_the_key_back` one test.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::disallowed_methods
)]

mod checkpoints;
mod command_list;
mod commands;
mod domain_questions;
mod mcp_client;
mod origins;
mod remote_project;
mod search_index;
mod shell_grants;
mod shell_runs;
mod tasks;
mod tree_watch;
mod updates;
mod window;
mod wire_types;
