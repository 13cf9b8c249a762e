//! Where the user's home and cargo's home are: a leaf that the child's
//! environment and Corral's caches both ask, so neither imports the other.

use std::path::PathBuf;

/// The user's home, if known.
pub fn home() -> Option<PathBuf> {
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
}

/// Cargo's home: `$CARGO_HOME`, else `~/.cargo`.
pub(crate) fn cargo_home() -> Option<PathBuf> {
    std::env::var_os("CARGO_HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
        .or_else(|| home().map(|h| h.join(".cargo")))
}
