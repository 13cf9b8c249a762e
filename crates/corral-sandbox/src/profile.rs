//! The sandbox profiles, and which one a call gets.
//!
//! Chosen here from the call itself and the grants the caller passes in
//! [`super::ShellRun`], never from anything the model writes:
//! - **read-only**: the project read-only, no network, no home, secret-like
//!   files masked. Calls on the read-only table run here; it is the only
//!   profile in which a command may run without approval in `ask` and
//!   `auto_edit`.
//! - **build**: the project writable (but `.git/` read-only unless git
//!   itself was approved to write), the toolchain caches writable, no
//!   network.
//! - **network**: build plus the network, only when the caller granted it.

use super::gitdir::Repository;
use super::rules::{self, CommandLine};
use super::ExecShellInput;
use corral_fs::ProjectRoot;
use serde::{Deserialize, Serialize};

/// What a command may do, enforced by the mount and network namespaces.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema, ts_rs::TS,
)]
#[serde(rename_all = "snake_case")]
pub enum Profile {
    /// Project read-only, no network, no home, secrets masked.
    ReadOnly,
    /// Project writable (`.git/` only for git), no network.
    Build,
    /// Build plus the network.
    Network,
}

impl Profile {
    /// Whether the project is mounted writable.
    pub(crate) fn writes_project(self) -> bool {
        !matches!(self, Profile::ReadOnly)
    }

    /// Whether the command keeps the network.
    pub(crate) fn has_network(self) -> bool {
        matches!(self, Profile::Network)
    }
}

/// Whether the call only looks, so it may run in the read-only profile
/// (and, with the namespaces available, without asking): it is on the
/// read-only table; read-only git needs the project's own repository
/// (outside one, `git diff a b` compares any two folders; one moved into
/// an ordinary folder of the project reads config the file tools write);
/// and no file of
/// the project chooses which program really runs (`rust-toolchain.toml`
/// can point rustup's `cargo` at a program in the project).
pub fn is_read_only(root: &ProjectRoot, input: &ExecShellInput) -> bool {
    read_only(root, &CommandLine::read(input))
}

/// [`is_read_only`] of a call already read.
pub(crate) fn read_only(root: &ProjectRoot, line: &CommandLine<'_>) -> bool {
    let program = line.program();
    rules::is_read_only(root, line)
        && (program != "git" || own_repository(root))
        && rules::toolchain_override(root, program).is_none()
}

/// Whether the project has a repository of its own whose git dir and
/// common dir are its `.git/` (or lie outside it, as a linked worktree's):
/// a `.git` file or `commondir` leading to an ordinary folder of the
/// project would let a file written there (`gd/config`) name the programs
/// a read-only `git diff` runs.
fn own_repository(root: &ProjectRoot) -> bool {
    Repository::of(root.path()).is_some_and(|repo| repo.is_plain(root.path()))
}

/// The profile a call runs in.
pub(crate) fn choose(root: &ProjectRoot, line: &CommandLine<'_>, network: bool) -> Profile {
    if read_only(root, line) {
        Profile::ReadOnly
    } else if network {
        Profile::Network
    } else {
        Profile::Build
    }
}
