//! Helpers of the shell suites: a temp project, calls, processes.
#![allow(
    dead_code, // each test file uses what it needs
    // The tests' own kit: a failed set-up step fails the test.
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::disallowed_methods
)]

use corral_fs::ProjectRoot;
use corral_sandbox::{exec_shell, ExecShellInput, ExecShellOutput, ShellRun};
use std::path::Path;
use std::time::{Duration, Instant};

pub fn project() -> (tempfile::TempDir, ProjectRoot) {
    let dir = tempfile::tempdir().unwrap();
    let root = ProjectRoot::open(dir.path()).unwrap();
    (dir, root)
}

pub fn input(command: &str, args: &[&str]) -> ExecShellInput {
    ExecShellInput {
        command: command.to_string(),
        args: args.iter().map(|s| s.to_string()).collect(),
        timeout_secs: None,
        background: false,
    }
}

pub fn run(root: &ProjectRoot, command: &str, args: &[&str]) -> ExecShellOutput {
    exec_shell(root, &input(command, args), &ShellRun::default())
        .unwrap_or_else(|e| panic!("{command} {args:?}: {e:?}"))
}

pub fn has_node() -> bool {
    let found = ["/usr/local/bin/node", "/usr/bin/node", "/bin/node"]
        .iter()
        .any(|p| Path::new(p).exists());
    if !found {
        eprintln!("note: node is not installed; skipping a node-based shell test");
    }
    found
}

/// Whether a pid is still a live process (a zombie counts as gone).
pub fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => {
            let state = stat.rsplit(')').next().unwrap_or("").trim_start();
            !state.starts_with('Z') && !state.starts_with('X')
        }
        Err(_) => false,
    }
}

pub fn wait_gone(pid: u32) -> bool {
    let until = Instant::now() + Duration::from_secs(3);
    while Instant::now() < until {
        if !alive(pid) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

/// A marker unique to this call, to find a command's processes by their
/// command line (the sandbox's PID namespace hides their real pids).
pub fn marker() -> String {
    use std::sync::atomic::{AtomicU32, Ordering};
    static N: AtomicU32 = AtomicU32::new(1);
    format!(
        "{}.{}",
        40 + N.fetch_add(1, Ordering::Relaxed),
        std::process::id()
    )
}

/// Live processes whose command line contains `marker`, other than us.
pub fn processes_with(marker: &str) -> Vec<u32> {
    let me = std::process::id();
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|&pid| pid != me && alive(pid))
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|c| String::from_utf8_lossy(&c).contains(marker))
        })
        .collect()
}

/// Waits up to 3 s for every process with `marker` to end.
pub fn wait_all_gone(marker: &str) -> bool {
    let until = Instant::now() + Duration::from_secs(3);
    while Instant::now() < until {
        if processes_with(marker).is_empty() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

pub fn git_repo(dir: &Path) {
    let root = ProjectRoot::open(dir).unwrap();
    run(&root, "git", &["init", "-q"]);
}

/// git on the host (no sandbox), for a fixture: a commit's author set,
/// the system's config left out.
pub fn host_git(dir: &Path, args: &[&str]) {
    let ok = std::process::Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@t")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@t")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .status()
        .unwrap()
        .success();
    assert!(ok, "git {args:?}");
}
