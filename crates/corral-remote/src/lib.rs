//! Projects on other machines. A remote folder is named
//! `ssh://[user@]host[:port]/abs/path` (or scp's `[user@]host:/abs/path`),
//! `host` being a name or an alias of the user's ssh config. Corral reaches
//! it with the user's own `ssh`: their keys, agent and config, and their
//! `known_hosts` checked (nothing here turns host checking off). On the
//! other side `corral-cli` runs the session core, so the sandbox, the
//! checkpoints and the indexes live there; this crate finds that binary
//! (the same version as this one), or puts it there once the user agreed.

mod forwards;
mod install;
mod questions;
mod session;
mod target;
pub mod toolchain;

pub use install::{
    cli_command, connection_error, failed, install, missing, spawn_cli, Install, MISSING, VERSION,
};
pub use questions::OnQuestion;
pub use session::RemoteSession;
pub use target::{Container, Pod, Remote, CONNECT_TIMEOUT};

/// The ssh config file to use instead of the user's (`ssh -F`): for a
/// setup of its own, as the tests make one.
pub const CONFIG_VAR: &str = "CORRAL_SSH_CONFIG";

/// `ssh`'s exit code when the connection failed or was lost (the remote
/// command's own code otherwise).
pub const SSH_FAILED: i32 = 255;
