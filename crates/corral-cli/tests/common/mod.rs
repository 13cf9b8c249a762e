//! What the CLI's test files share: `corral-cli` never given the user's
//! data folder, where it keeps checkpoints when no `--store` is passed.
#![allow(
    dead_code, // each test file uses what it needs
    // The tests' own kit: a failed set-up step fails the test.
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
)]

use std::path::PathBuf;
use std::process::Command;

/// The data folder the tests' `corral-cli` runs get: in the build's
/// temporary folder.
pub fn data_home() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("corral-cli-data")
}

/// `corral-cli`, with `data_home()` as its data folder.
pub fn corral_cli() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_corral-cli"));
    command.env("XDG_DATA_HOME", data_home());
    command
}
