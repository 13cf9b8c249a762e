//! What the sandbox benches share: the programs they run and the project
//! they run them in.

use corral_sandbox::{ExecShellInput, ShellRun};
use std::path::Path;
use std::process::{Command, Stdio};

/// One command the benches time, in the profile it gets.
pub struct Case {
    pub group: &'static str,
    /// The profile `exec_shell` must choose for it.
    pub profile: &'static str,
    pub program: &'static str,
    pub args: &'static [&'static str],
    /// The network granted.
    pub network: bool,
}

/// `touch` starts no other program, so it gets none of the home's
/// toolchains nor the caches; `make` can start any, so it gets them all.
/// An approved git (`git log --output`, off the read-only table) gets its
/// own folder writable only where ordinary work writes, the rest held.
pub const CASES: [Case; 5] = [
    Case {
        group: "read_only",
        profile: "read_only",
        program: "ls",
        args: &["-la"],
        network: false,
    },
    Case {
        group: "build",
        profile: "build",
        program: "touch",
        args: &["a.txt"],
        network: false,
    },
    Case {
        group: "network",
        profile: "network",
        program: "touch",
        args: &["a.txt"],
        network: true,
    },
    Case {
        group: "build_toolchains",
        profile: "build",
        program: "make",
        args: &["--version"],
        network: false,
    },
    Case {
        group: "build_git",
        profile: "build",
        program: "git",
        args: &["log", "-1", "--output=log.txt"],
        network: false,
    },
];

impl Case {
    pub fn input(&self) -> ExecShellInput {
        ExecShellInput {
            command: self.program.to_string(),
            args: self.args.iter().map(|s| s.to_string()).collect(),
            timeout_secs: None,
            background: false,
        }
    }

    pub fn run(&self) -> ShellRun {
        ShellRun {
            network: self.network,
            ..ShellRun::default()
        }
    }
}

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
