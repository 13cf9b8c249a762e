//! The provider tests, one binary: each provider's wire format, failures
//! and misbehaving servers against a scripted server on loopback
//! (`common`). One link instead of one per file, and the lint allowances
//! of test code written once, here. `cargo test -p corral-llm --test all
//! -- openai::` runs one module.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::disallowed_methods
)]

mod anthropic;
mod common;
mod failures;
mod images;
mod local;
mod misbehaving;
mod model_info;
mod models;
mod ollama;
mod openai;
mod token_count;
mod wire;
