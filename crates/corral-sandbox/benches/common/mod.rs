//! What the sandbox benches share: the programs they run and the project
//! they run them in.

use std::path::Path;
use std::process::{Command, Stdio};

pub fn which(name: &str) -> String {
    find(name).unwrap_or_else(|| panic!("{name} not found"))
}

pub fn find(name: &str) -> Option<String> {
    ["/usr/local/bin", "/usr/bin", "/bin"]
        .iter()
        .map(|dir| format!("{dir}/{name}"))
        .find(|p| Path::new(p).exists())
}

/// A small git project: 10 folders of 20 files, a `.env`, one commit.
pub fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for d in 0..10 {
        let folder = dir.path().join(format!("src{d}"));
        std::fs::create_dir(&folder).unwrap();
        for f in 0..20 {
            std::fs::write(folder.join(format!("f{f}.rs")), "fn main() {}\n").unwrap();
        }
    }
    std::fs::write(dir.path().join("a.txt"), "a\n").unwrap();
    std::fs::write(dir.path().join(".env"), "KEY=1\n").unwrap();
    let git = |args: &[&str]| {
        let ok = Command::new(which("git"))
            .args(["-c", "user.name=b", "-c", "user.email=b@b"])
            .args(args)
            .current_dir(dir.path())
            .stdout(Stdio::null())
            .status()
            .unwrap()
            .success();
        assert!(ok, "git {args:?}");
    };
    git(&["init", "-q"]);
    git(&["add", "."]);
    git(&["commit", "-q", "-m", "x"]);
    dir
}

/// Runs `program` with `args` in bare bwrap (`/` read-only, `/dev`,
/// `/proc`, no network, its own pids, `project` writable), as the
/// sandbox's measure, and checks it succeeded.
pub fn bare_bwrap(bwrap: &str, project: &Path, program: &str, args: &[&str]) {
    let out = Command::new(bwrap)
        .args(["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"])
        .args(["--unshare-net", "--unshare-pid", "--die-with-parent"])
        .arg("--bind")
        .arg(project)
        .arg(project)
        .arg("--")
        .arg(program)
        .args(args)
        .current_dir(project)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
}
