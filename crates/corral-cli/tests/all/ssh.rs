//! `call --root ssh://…` against a real OpenSSH server on 127.0.0.1,
//! started here with a host key and a user key made for the test, the
//! client's `known_hosts` holding that host key (host checking stays on).
//! The "remote" is this machine, so its results can be compared with a
//! local call's; its corral-cli is the one this side copies there.

use serde_json::{json, Value};
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The test kit's sshd, by path (this suite does not depend on the kit),
/// with what this suite adds: a `corral-cli` reaching it.
#[allow(dead_code)]
#[path = "../../../corral-testkit/src/sshd.rs"]
mod kit;

/// An sshd of the test's own, and the client config that reaches it as
/// the host alias `corral-test`.
pub struct Sshd(kit::Sshd);

impl Sshd {
    pub fn start() -> Sshd {
        Sshd(kit::Sshd::start())
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.0.path(name)
    }

    /// `corral-cli call` with this server's client config.
    pub fn cli(&self) -> Command {
        let mut cli = crate::common::corral_cli();
        cli.env(corral_remote::CONFIG_VAR, self.0.config());
        cli
    }

    /// Where the remote keeps the corral-cli it was given.
    fn installed(&self) -> PathBuf {
        self.0.installed(env!("CARGO_PKG_VERSION"))
    }
}

/// A project of a few files, in a folder of its own.
pub fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("src")).unwrap();
    std::fs::write(
        dir.path().join("src/main.rs"),
        "fn main() {\n    println!(\"hello\");\n}\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("README.md"), "# Demo\nSays hello.\n").unwrap();
    dir
}

fn json_of(out: &Output) -> Value {
    let stdout = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(&stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {stdout}\nstderr: {}",
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

/// `call` at `root` (a path or an ssh:// name); its exit code and JSON.
pub fn call(
    cli: &mut Command,
    root: &str,
    flags: &[&str],
    tool: &str,
    input: Value,
) -> (i32, Value) {
    let out = cli
        .args(["call", "--root", root])
        .args(flags)
        .args([tool, &input.to_string()])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    (out.status.code().unwrap_or(-1), json_of(&out))
}

/// What a result says that does not depend on where or when it ran.
fn lasting(mut value: Value) -> Value {
    if let Some(object) = value.as_object_mut() {
        for key in ["duration_ms", "checkpoint", "sandbox"] {
            object.remove(key);
        }
    }
    value
}

#[test]
fn read_write_search_and_exec_give_the_same_results_as_locally() {
    let sshd = Sshd::start();
    let (here, there) = (project(), project());
    let remote = format!("ssh://corral-test{}", there.path().display());
    let local = here.path().to_str().unwrap().to_string();
    let calls = [
        ("read_file", json!({"path": "src/main.rs"})),
        ("search_files", json!({"query": "hello"})),
        ("glob", json!({"pattern": "**/*.rs"})),
        (
            "write_file",
            json!({"path": "notes.txt", "content": "remote and local\n"}),
        ),
        (
            "edit_file",
            json!({"path": "README.md", "old_string": "Says hello.", "new_string": "Says hi."}),
        ),
        (
            "exec_shell",
            json!({"command": "node", "args": ["-e", "console.log(require('fs').readFileSync('README.md', 'utf8'))"]}),
        ),
    ];
    for (n, (tool, input)) in calls.into_iter().enumerate() {
        let store_here = sshd.path("store-here");
        let (code_here, said_here) = call(
            &mut sshd.cli(),
            &local,
            &["--store", store_here.to_str().unwrap()],
            tool,
            input.clone(),
        );
        // The first remote call copies corral-cli there.
        let flags: &[&str] = if n == 0 { &["--install-remote"] } else { &[] };
        let (code_there, said_there) = call(&mut sshd.cli(), &remote, flags, tool, input);
        assert_eq!(code_here, 0, "{tool} here: {said_here}");
        assert_eq!(
            (code_there, lasting(said_there)),
            (code_here, lasting(said_here)),
            "{tool}"
        );
    }
    for file in ["notes.txt", "README.md"] {
        assert_eq!(
            std::fs::read_to_string(there.path().join(file)).unwrap(),
            std::fs::read_to_string(here.path().join(file)).unwrap(),
            "{file}"
        );
    }
    // The remote's checkpoints are the remote's: taken in its data folder.
    let kept: Vec<_> = std::fs::read_dir(sshd.path("remote-data"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert!(
        !kept.is_empty(),
        "checkpoints on the remote, in its data folder: {kept:?}"
    );
}

/// An input over what one argument may hold (128 KiB on Linux), given on
/// stdin, reaches the remote whole: it goes there on ssh's stdin, not as a
/// word of the remote command.
#[test]
fn an_input_larger_than_an_argument_reaches_the_remote_whole() {
    use std::io::Write;
    let sshd = Sshd::start();
    let there = project();
    let remote = format!("ssh://corral-test{}", there.path().display());
    let content = "a line of the big file, with \"quotes\" and \\ too\n".repeat(8_000);
    assert!(content.len() > 300 * 1024);
    let mut child = sshd
        .cli()
        .args(["call", "--root", &remote, "--install-remote", "write_file"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let input = json!({"path": "big.txt", "content": content}).to_string();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        std::fs::read_to_string(there.path().join("big.txt")).unwrap(),
        content
    );
}

#[test]
fn a_path_outside_the_root_is_refused_on_the_remote() {
    let sshd = Sshd::start();
    let there = project();
    std::fs::write(there.path().parent().unwrap().join("secret.txt"), "no").ok();
    let remote = format!("corral-test:{}", there.path().display());
    for (tool, input) in [
        ("read_file", json!({"path": "../secret.txt"})),
        (
            "write_file",
            json!({"path": "/etc/corral-test", "content": "x"}),
        ),
    ] {
        let (code, said) = call(&mut sshd.cli(), &remote, &["--install-remote"], tool, input);
        assert_eq!(code, 1);
        assert_eq!(said["code"], "path_outside_root", "{said}");
    }
}

#[test]
fn corral_cli_is_copied_only_when_agreed_and_only_of_this_version() {
    let sshd = Sshd::start();
    let there = project();
    let remote = format!("ssh://corral-test{}", there.path().display());
    let read = || json!({"path": "README.md"});
    // Another version on the remote's PATH is not used.
    let old = sshd.path("remote-bin/corral-cli");
    std::fs::write(&old, "#!/bin/sh\necho 'corral-cli 0.0.1'\n").unwrap();
    Command::new("chmod").arg("755").arg(&old).status().unwrap();

    // No terminal, no flag: nothing copied, and the error says how.
    let (code, said) = call(&mut sshd.cli(), &remote, &[], "read_file", read());
    assert_eq!(
        (code, said["code"].as_str()),
        (1, Some("approval_required")),
        "{said}"
    );
    assert!(said["hint"].as_str().unwrap().contains("--install-remote"));
    assert!(!sshd.installed().exists());

    let (code, said) = call(
        &mut sshd.cli(),
        &remote,
        &["--install-remote"],
        "read_file",
        read(),
    );
    assert_eq!(code, 0, "{said}");
    assert!(said["content"].as_str().unwrap().contains("Says hello."));
    let copied = std::fs::metadata(sshd.installed())
        .unwrap()
        .modified()
        .unwrap();

    // Found there next time: not asked, not copied again.
    let (code, _) = call(&mut sshd.cli(), &remote, &[], "read_file", read());
    assert_eq!(code, 0);
    assert_eq!(
        std::fs::metadata(sshd.installed())
            .unwrap()
            .modified()
            .unwrap(),
        copied
    );
}

#[test]
fn a_host_key_not_in_known_hosts_is_refused() {
    let sshd = Sshd::start();
    std::fs::write(sshd.path("known_hosts"), "").unwrap();
    let remote = format!("ssh://corral-test{}", project().path().display());
    let (code, said) = call(
        &mut sshd.cli(),
        &remote,
        &["--install-remote"],
        "read_file",
        json!({"path": "README.md"}),
    );
    assert_eq!((code, said["code"].as_str()), (1, Some("io")), "{said}");
    assert!(
        said["message"]
            .as_str()
            .unwrap()
            .contains("connection to corral-test"),
        "{said}"
    );
    assert!(
        !sshd.installed().exists(),
        "nothing sent to an unknown host"
    );
}

/// Pids of `comm` processes whose command line holds `marker`.
pub fn processes(comm: &str, marker: &str) -> Vec<u32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let name = std::fs::read_to_string(entry.path().join("comm")).unwrap_or_default();
        let line = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        if name.trim() == comm && String::from_utf8_lossy(&line).contains(marker) {
            found.push(pid);
        }
    }
    found
}

pub fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_connection_killed_during_a_command_is_an_error_here_and_ends_the_command_there() {
    let sshd = Sshd::start();
    let there = project();
    let remote = format!("ssh://corral-test{}", there.path().display());
    // Copied first, so the call below is the command alone.
    let (code, _) = call(
        &mut sshd.cli(),
        &remote,
        &["--install-remote"],
        "glob",
        json!({"pattern": "*"}),
    );
    assert_eq!(code, 0);

    let marker = format!("corral-ssh-drop-{}", std::process::id());
    let input = json!({"command": "node", "args": ["-e", "setInterval(() => console.log('tick'), 100)", &marker], "timeout_secs": 120});
    let running = sshd
        .cli()
        .args(["call", "--root", &remote, "exec_shell", &input.to_string()])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for("the command running on the remote", || {
        !processes("node", &marker).is_empty()
    });
    // The input goes on ssh's stdin: the call's ssh is known by its words.
    let ssh = processes("ssh", &format!("{} exec_shell", there.path().display()));
    assert_eq!(ssh.len(), 1, "one ssh carries the call");
    Command::new("kill")
        .args(["-KILL", &ssh[0].to_string()])
        .status()
        .unwrap();

    let out = running.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let said = json_of(&out);
    assert_eq!(said["code"], "io", "{said}");
    assert!(
        said["message"]
            .as_str()
            .unwrap()
            .contains("failed or was lost"),
        "{said}"
    );
    assert_eq!(said["retryable"], true);
    // The remote saw its line close and stopped the command.
    wait_for("the remote command to end", || {
        processes("node", &marker).is_empty()
    });
}
