//! Nothing inherited: `corral-cli` started with a host socket at fd 5 (a
//! launcher that left one open) runs commands that see only their
//! standard streams, in every profile: read-only (a program the project
//! planted for `git diff`, unasked), build, network, and Landlock where
//! there are no namespaces. The program writes to fd 5 if it is there;
//! the host end must read nothing.

use serde_json::{json, Value};
use std::io::Read;
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Command;

/// Where the launcher leaves its socket.
const LEFT_OPEN: i32 = 5;

/// Lists the program's descriptors (`N=what`, `N=gone` for the folder
/// `listdir` itself opened and closed), after trying to write to fd 5;
/// with a file argument (git's textconv), its content too, so the two
/// sides of the diff differ.
const LIST: &str = r#"import os, sys
try:
    os.write(5, b"reached from inside\n")
except OSError:
    pass
def what(fd):
    try:
        return os.readlink("/proc/self/fd/%d" % fd)
    except OSError:
        return "gone"
fds = sorted(int(name) for name in os.listdir("/proc/self/fd"))
shown = open(sys.argv[1]).read().strip() if len(sys.argv) > 1 else ""
print("FDS " + " ".join("%d=%s" % (fd, what(fd)) for fd in fds) + " of " + shown)
"#;

fn here(program: &str) -> bool {
    let found = ["/usr/bin", "/bin", "/usr/local/bin"]
        .iter()
        .any(|dir| Path::new(dir).join(program).exists());
    if !found {
        eprintln!("note: no {program} here; skipping");
    }
    found
}

fn git(dir: &Path, args: &[&str]) {
    let ok = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@t")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@t")
        .status()
        .unwrap()
        .success();
    assert!(ok, "git {args:?}");
}

/// `corral-cli` as a careless launcher starts it: `fd` open at
/// [`LEFT_OPEN`], not close-on-exec.
fn with_fd_left_open(fd: &UnixStream) -> Command {
    extern "C" {
        fn dup2(from: i32, to: i32) -> i32;
        fn fcntl(fd: i32, cmd: i32, ...) -> i32;
    }
    const F_SETFD: i32 = 2;
    let from = fd.as_raw_fd();
    let mut command = crate::common::corral_cli();
    #[allow(unsafe_code)]
    // SAFETY: runs in the forked child before `exec`, and only makes two
    // system calls on numbers known before the fork.
    unsafe {
        command.pre_exec(move || {
            let done = if from == LEFT_OPEN {
                fcntl(LEFT_OPEN, F_SETFD, 0)
            } else {
                dup2(from, LEFT_OPEN)
            };
            if done < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    command
}

/// The descriptors each `FDS` line of `text` shows, but the ones gone
/// (the folder the listing read): exactly 0, 1 and 2 every time.
fn assert_only_standard_streams(text: &str, what: &str) -> usize {
    let mut lines = 0;
    for line in text.split("FDS ").skip(1) {
        lines += 1;
        let line = line.split(" of ").next().unwrap_or_default();
        let open: Vec<&str> = line
            .split(' ')
            .filter(|entry| !entry.ends_with("=gone"))
            .collect();
        let numbers: Vec<&str> = open
            .iter()
            .map(|entry| entry.split('=').next().unwrap_or_default())
            .collect();
        assert_eq!(numbers, ["0", "1", "2"], "{what}: {line}");
    }
    assert!(lines > 0, "{what}: the listing did not run: {text}");
    lines
}

#[test]
fn a_descriptor_the_cli_was_started_with_reaches_no_command_in_any_profile() {
    if !here("python3") || !here("git") {
        return;
    }
    let work = tempfile::tempdir().unwrap();
    let root = work.path().join("project");
    std::fs::create_dir_all(&root).unwrap();
    git(&root, &["init", "-q"]);
    std::fs::write(root.join("a.txt"), "one\n").unwrap();
    git(&root, &["add", "a.txt"]);
    git(&root, &["commit", "-qm", "one"]);
    std::fs::write(root.join("a.txt"), "two\n").unwrap();
    std::fs::write(root.join("list.py"), LIST).unwrap();
    // The program the read-only `git diff` runs on each side (textconv).
    let mut config = std::fs::OpenOptions::new()
        .append(true)
        .open(root.join(".git/config"))
        .unwrap();
    std::io::Write::write_all(
        &mut config,
        b"[diff \"list\"]\n\ttextconv = python3 list.py\n",
    )
    .unwrap();
    std::fs::write(root.join(".gitattributes"), "a.txt diff=list\n").unwrap();
    let root = root.to_str().unwrap();

    let (left_open, mut host) = UnixStream::pair().unwrap();
    host.set_nonblocking(true).unwrap();
    let namespaces = corral_sandbox::namespaces_available();
    let list = json!({"command": "python3", "args": ["list.py"]}).to_string();
    let diff = json!({"command": "git", "args": ["diff"]}).to_string();
    let runs: Vec<(&str, &str, Vec<&str>, Option<&str>)> = vec![
        ("read_only", &diff, vec!["--mode", "ask"], None),
        ("build", &list, vec!["--mode", "full_auto"], None),
        (
            "network",
            &list,
            vec!["--mode", "full_auto", "--network"],
            None,
        ),
        (
            "build",
            &list,
            vec!["--mode", "full_auto", "--approve"],
            Some("/nonexistent/bwrap"),
        ),
    ];
    for (profile, input, flags, bwrap) in runs {
        let landlock = bwrap.is_some();
        if !namespaces && !landlock {
            eprintln!("note: no namespaces here; only the Landlock run");
            continue;
        }
        let mut command = with_fd_left_open(&left_open);
        command
            .args(["call", "--root", root, "--no-checkpoint"])
            .args(&flags)
            .args(["exec_shell", input]);
        if let Some(bwrap) = bwrap {
            command.env("CORRAL_BWRAP", bwrap);
        }
        let out = command.output().unwrap();
        let result: Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|_| panic!("{}", String::from_utf8_lossy(&out.stderr)));
        let what = format!("{profile} (landlock: {landlock})");
        assert_eq!(result["profile"], profile, "{what}: {result}");
        let sandbox = if landlock { "landlock" } else { "namespaces" };
        assert_eq!(result["sandbox"], sandbox, "{what}: {result}");
        let text = format!("{}{}", result["stdout"], result["stderr"]);
        let lines = assert_only_standard_streams(&text, &what);
        if profile == "read_only" {
            // Both sides of the diff went through the planted program.
            assert_eq!(lines, 2, "{what}: {text}");
        }
        let mut reached = Vec::new();
        let _ = host.read_to_end(&mut reached);
        assert!(
            reached.is_empty(),
            "{what}: the command wrote to the launcher's socket: {}",
            String::from_utf8_lossy(&reached)
        );
    }
}
