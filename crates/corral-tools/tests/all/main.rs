//! corral-tools' integration tests, one binary: the tools on real temp
//! folders, the policy, checkpoints, search, the security and sandbox
//! suites, the language servers, and the workspace's module and crate
//! graph. One link instead of one per file, and the lint allowances of
//! test code written once, here. `cargo test -p corral-tools --test all
//! -- security::` runs one module.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::disallowed_methods
)]

mod agent_config;
mod background;
mod checkpoint;
mod checkpoint_faults;
mod checkpoint_undo;
mod common;
mod errors;
mod files;
mod lsp;
mod lsp_common;
mod lsp_faults;
mod modules;
mod plan;
mod preview;
mod sandbox;
mod sandbox_escapes;
mod search;
mod search_index;
mod security;
mod shell_policy;
mod shell_programs;
mod shell_rules;
mod spec_fixture;
mod web_fetch;

/// The shell suites' helpers, shared with corral-sandbox's own.
#[path = "../../../corral-sandbox/tests/shell_common/mod.rs"]
mod shell_common;

/// The kit's small disk to fill and language servers, by path: the kit
/// is built on corral-tools, so these tests cannot depend on it.
#[path = "../../../corral-testkit/src/disk.rs"]
mod disk;
#[path = "../../../corral-testkit/src/language_servers.rs"]
mod language_servers;
