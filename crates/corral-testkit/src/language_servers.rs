//! Language servers for tests: the real ones `scripts/setup.sh --test`
//! installs (typescript-language-server and pyright), and fake ones that
//! misbehave on purpose.
//!
//! Shared by path (`#[path]`) with corral-tools' suites, which cannot
//! depend on the kit (it is built on corral-tools). Paths are found from
//! the crate being built (`CARGO_MANIFEST_DIR`), one folder below
//! `crates/` for the kit and for corral-tools alike.

use std::path::{Path, PathBuf};

/// The test servers' folder, or `None` (with a message) when the test
/// set-up has not installed them.
pub fn installed() -> Option<PathBuf> {
    let bin =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../corral-lsp/tests/servers/node_modules/.bin");
    if bin.join("typescript-language-server").exists() && bin.join("pyright-langserver").exists() {
        Some(bin)
    } else {
        eprintln!(
            "SKIPPED: the test language servers are not installed; run `scripts/setup.sh --test` ({} is missing)",
            bin.display()
        );
        None
    }
}

/// A fake server installed as `name` in a folder of its own, outside the
/// project: the shell `script`.
pub fn fake_server(name: &str, script: &str) -> (tempfile::TempDir, PathBuf) {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("servers/bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::write(bin.join(name), script).unwrap();
    std::fs::set_permissions(bin.join(name), std::fs::Permissions::from_mode(0o755)).unwrap();
    (dir, bin)
}

/// A fake server installed as `name` that runs the kit's
/// `fixtures/fake_language_server.js` in `mode` (`crash`, `silent`).
pub fn scripted_server(name: &str, mode: &str) -> (tempfile::TempDir, PathBuf) {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../corral-testkit/fixtures/fake_language_server.js");
    let (dir, bin) = fake_server(
        name,
        &format!("#!/bin/sh\nexec node \"$(dirname \"$0\")/../fake_language_server.js\" {mode}\n"),
    );
    // Beside `bin`, in the install prefix the sandbox shows the server.
    std::fs::copy(fixture, dir.path().join("servers/fake_language_server.js")).unwrap();
    (dir, bin)
}
