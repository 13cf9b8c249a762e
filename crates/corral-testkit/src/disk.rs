//! A small disk to fill: a test of the running binary run again in a user
//! and mount namespace of its own, on a tmpfs of a given size, where a
//! write really fails with `ENOSPC`.
//!
//! Shared by path (`#[path]`) with the crates below the kit, whose tests
//! cannot depend on it (it is built on them): corral-checkpoint's fault
//! tests and corral-tools' suites. So it uses nothing but std and
//! `tempfile`.

use std::path::{Path, PathBuf};

/// Runs `test` (an ignored test of the running test binary, named with
/// its module path) in a user and mount namespace of its own, with a tmpfs of `size` mounted on a fresh
/// folder that it finds in `CORRAL_TMPFS`: a small disk to fill. `None`
/// (and a note) where such namespaces cannot be made.
pub fn in_small_tmpfs(test: &str, size: &str) -> Option<std::process::Output> {
    let ns = ["--user", "--map-root-user", "--mount"];
    let probe = std::process::Command::new("unshare")
        .args(ns)
        .arg("true")
        .output();
    if !probe.is_ok_and(|o| o.status.success()) {
        eprintln!("note: no user and mount namespace here; skipping a full-disk test");
        return None;
    }
    let tmp = tempfile::tempdir().unwrap();
    let mount = tmp.path().join("small");
    std::fs::create_dir(&mount).unwrap();
    let output = std::process::Command::new("unshare")
        .args(ns)
        .args([
            "sh",
            "-c",
            "mount -t tmpfs -o size=\"$1\" tmpfs \"$2\" && exec \"$3\" \"$4\" --exact --ignored --nocapture --test-threads=1",
            "sh",
            size,
        ])
        .arg(&mount)
        .arg(std::env::current_exe().unwrap())
        .arg(test)
        .env("CORRAL_TMPFS", &mount)
        .output()
        .unwrap();
    Some(output)
}

/// [`in_small_tmpfs`], asserting that the test ran there and passed.
pub fn on_small_tmpfs(test: &str, size: &str) {
    let Some(out) = in_small_tmpfs(test, size) else {
        return;
    };
    assert!(
        out.status.success() && String::from_utf8_lossy(&out.stdout).contains("1 passed"),
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// In a test run by [`in_small_tmpfs`]: the small disk.
pub fn small_tmpfs() -> PathBuf {
    PathBuf::from(std::env::var_os("CORRAL_TMPFS").expect("run on a tmpfs"))
}

/// Fills the file system of `dir` (with `dir/filler`) to the last byte.
pub fn fill(dir: &Path) {
    use std::io::Write;
    let mut file = std::fs::File::create(dir.join("filler")).unwrap();
    let chunk = vec![1u8; 64 * 1024];
    while file.write_all(&chunk).is_ok() {}
    // The last bytes, one at a time.
    while file.write_all(&[1]).is_ok() {}
}
