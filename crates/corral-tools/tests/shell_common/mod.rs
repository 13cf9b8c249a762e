//! Helpers of the shell suites: a temp project, calls, processes.
#![allow(
    dead_code,
    clippy::unwrap_used,
    clippy::panic,
    clippy::disallowed_methods
)]

use corral_tools::shell::{exec_shell, ExecShellInput, ExecShellOutput, ShellRun};
use corral_tools::ProjectRoot;
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

pub fn git_repo(dir: &Path) {
    let root = ProjectRoot::open(dir).unwrap();
    run(&root, "git", &["init", "-q"]);
}
