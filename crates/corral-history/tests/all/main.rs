//! The history's integration tests, one binary, the lint allowances of
//! test code written once, here. `cargo test -p corral-history --test all
//! -- kill::` runs one module.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::disallowed_methods
)]

mod common;
mod conversations;
mod kill;
mod opening;
mod recovery;
mod storage;
mod usage;
