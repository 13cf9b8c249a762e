//! corral-cli's integration tests, one binary: the real `corral-cli`
//! (`call`, `tools`, checkpoints, `exec`, `acp`, the MCP server against
//! the official Python SDK and the MCP Inspector, remote calls over a real
//! sshd) on real folders, in the real sandbox. One link instead of one per file, and the lint allowances of
//! test code written once, here. `cargo test -p corral-cli --test all --
//! mcp::` runs one module.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::disallowed_methods
)]

mod acp;
mod checkpoint;
mod cli;
mod common;
mod containers;
mod crash;
mod descriptors;
mod exec;
mod exec_history;
mod exec_hooks;
mod exec_skills;
mod hooks_settings;
mod kill_anywhere;
mod mcp;
mod mcp_sdks;
mod programs;
mod refusals;
mod sandbox;
mod sandbox_view;
mod search_index;
mod serve;
mod slash_commands;
mod ssh;
mod ssh_serve;
mod ssh_session;
mod subagents;
mod user_config;
