#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::disallowed_methods
)]
//! `exec_shell` on real temp folders with real processes: allowlist,
//! argument rules (one row per rule), environment, process groups, caps,
//! cancel, and the Landlock sandbox.

use corral_tools::dispatch::{self, CallContext};
use corral_tools::policy::{Approval, Decision, Mode};
use corral_tools::shell::{
    self, exec_shell, CancelToken, ExecShellInput, ExecShellOutput, ShellRun, Stream,
};
use corral_tools::{ErrorCode, ProjectRoot};
use serde_json::json;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

fn project() -> (tempfile::TempDir, ProjectRoot) {
    let dir = tempfile::tempdir().unwrap();
    let root = ProjectRoot::open(dir.path()).unwrap();
    (dir, root)
}

fn input(command: &str, args: &[&str]) -> ExecShellInput {
    ExecShellInput {
        command: command.to_string(),
        args: args.iter().map(|s| s.to_string()).collect(),
        timeout_secs: None,
    }
}

fn run(root: &ProjectRoot, command: &str, args: &[&str]) -> ExecShellOutput {
    exec_shell(root, &input(command, args), &ShellRun::default())
        .unwrap_or_else(|e| panic!("{command} {args:?}: {e:?}"))
}

fn has_node() -> bool {
    let found = ["/usr/local/bin/node", "/usr/bin/node", "/bin/node"]
        .iter()
        .any(|p| Path::new(p).exists());
    if !found {
        eprintln!("note: node is not installed; skipping a node-based shell test");
    }
    found
}

/// Whether a pid is still a live process (a zombie counts as gone).
fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => {
            let state = stat.rsplit(')').next().unwrap_or("").trim_start();
            !state.starts_with('Z') && !state.starts_with('X')
        }
        Err(_) => false,
    }
}

fn wait_gone(pid: u32) -> bool {
    let until = Instant::now() + Duration::from_secs(3);
    while Instant::now() < until {
        if !alive(pid) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

fn git_repo(dir: &Path) {
    let root = ProjectRoot::open(dir).unwrap();
    run(&root, "git", &["init", "-q"]);
}

// ---------------------------------------------------------------- allowlist

#[test]
fn only_allowlisted_programs_run() {
    let (_d, root) = project();
    for command in [
        "bash",
        "sh",
        "/usr/bin/git",
        "./git",
        "git ",
        "GIT",
        "python3",
        "curl",
        "env",
        "",
    ] {
        let err =
            exec_shell(&root, &input(command, &["--version"]), &ShellRun::default()).unwrap_err();
        assert_eq!(err.code, ErrorCode::CommandNotAllowed, "{command:?}");
        assert_eq!(err.details["command"], command);
    }
    let out = run(&root, "git", &["--version"]);
    assert_eq!(out.exit_code, Some(0));
    assert!(out.stdout.starts_with("git version"), "{}", out.stdout);
}

#[test]
fn a_project_local_program_does_not_shadow_the_real_one() {
    use std::os::unix::fs::PermissionsExt;
    let (dir, root) = project();
    let fake = "#!/bin/sh\necho FAKE\n";
    for place in ["git", "node_modules/.bin/git", "bin/git"] {
        let path = dir.path().join(place);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, fake).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let out = run(&root, "git", &["--version"]);
    assert!(!out.stdout.contains("FAKE"));
    assert!(out.stdout.starts_with("git version"));
}

#[test]
fn an_allowed_program_that_is_missing_is_not_found_with_a_hint() {
    let (_d, root) = project();
    let home = std::env::var("HOME").unwrap_or_default();
    for program in ["bun", "yarn", "pnpm"] {
        let installed = [
            format!("{home}/.cargo/bin"),
            "/usr/local/sbin".into(),
            "/usr/local/bin".into(),
            "/usr/sbin".into(),
            "/usr/bin".into(),
            "/sbin".into(),
            "/bin".into(),
        ]
        .iter()
        .any(|d| Path::new(d).join(program).exists());
        if installed {
            continue;
        }
        let err =
            exec_shell(&root, &input(program, &["--version"]), &ShellRun::default()).unwrap_err();
        assert_eq!(err.code, ErrorCode::NotFound, "{program}");
        assert!(err.hint.contains("Install"), "{}", err.hint);
    }
}

#[test]
fn timeout_must_be_between_1_and_600() {
    let (_d, root) = project();
    for secs in [0, 601, u64::MAX] {
        let mut i = input("ls", &[]);
        i.timeout_secs = Some(secs);
        let err = exec_shell(&root, &i, &ShellRun::default()).unwrap_err();
        assert_eq!(err.code, ErrorCode::InvalidInput, "{secs}");
    }
    let mut i = input("ls", &[]);
    i.timeout_secs = Some(600);
    assert!(exec_shell(&root, &i, &ShellRun::default()).is_ok());
}

#[test]
fn nul_in_an_argument_is_invalid_input() {
    let (_d, root) = project();
    let err = exec_shell(&root, &input("ls", &["a\0b"]), &ShellRun::default()).unwrap_err();
    assert_eq!(err.code, ErrorCode::InvalidInput);
}

// ------------------------------------------------------------------ results

#[test]
fn output_exit_codes_and_shape() {
    let (dir, root) = project();
    std::fs::write(dir.path().join("a.txt"), "hello\n").unwrap();
    let out = run(&root, "ls", &[]);
    assert_eq!(out.stdout, "a.txt\n");
    assert_eq!(out.stderr, "");
    assert_eq!(out.exit_code, Some(0));
    assert!(!out.timed_out);
    assert_eq!(out.stdout_truncated_bytes, 0);
    let missing = run(&root, "ls", &["missing"]);
    assert_eq!(missing.exit_code, Some(2));
    assert!(missing.stderr.contains("missing"));
    let grep = run(&root, "grep", &["-n", "hello", "a.txt"]);
    assert_eq!(grep.stdout, "1:hello\n");
    let nomatch = run(&root, "grep", &["absent", "a.txt"]);
    assert_eq!(nomatch.exit_code, Some(1));
    let json = serde_json::to_value(&out).unwrap();
    let keys: Vec<&str> = json
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    for key in [
        "command",
        "args",
        "stdout",
        "stderr",
        "exit_code",
        "timed_out",
        "duration_ms",
        "stdout_truncated_bytes",
        "stderr_truncated_bytes",
        "sandboxed",
    ] {
        assert!(keys.contains(&key), "{key} in {keys:?}");
    }
    if has_node() {
        let code = run(&root, "node", &["-e", "process.exit(3)"]);
        assert_eq!(code.exit_code, Some(3));
    }
}

#[test]
fn non_utf8_output_is_lossy() {
    if !has_node() {
        return;
    }
    let (_d, root) = project();
    let out = run(
        &root,
        "node",
        &[
            "-e",
            "process.stdout.write(Buffer.from([0xff, 0xfe, 0x41, 0x0a]))",
        ],
    );
    assert_eq!(out.stdout, "\u{fffd}\u{fffd}A\n");
}

#[test]
fn output_is_streamed_to_the_sink_by_stream() {
    if !has_node() {
        return;
    }
    let (_d, root) = project();
    type Chunks = Vec<(Stream, Vec<u8>)>;
    let seen: Arc<Mutex<Chunks>> = Arc::default();
    let sink = seen.clone();
    let shell_run = ShellRun {
        cancel: CancelToken::default(),
        on_output: Some(Arc::new(move |s, b: &[u8]| {
            sink.lock().unwrap().push((s, b.to_vec()))
        })),
    };
    let out = exec_shell(
        &root,
        &input("node", &["-e", "console.log('out'); console.error('err')"]),
        &shell_run,
    )
    .unwrap();
    assert_eq!(out.stdout, "out\n");
    assert_eq!(out.stderr, "err\n");
    let seen = seen.lock().unwrap();
    let joined = |stream| {
        seen.iter()
            .filter(|(s, _)| *s == stream)
            .flat_map(|(_, b)| b.clone())
            .collect::<Vec<u8>>()
    };
    assert_eq!(joined(Stream::Stdout), b"out\n");
    assert_eq!(joined(Stream::Stderr), b"err\n");
}

fn peak_rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

#[test]
fn hundred_megabytes_of_output_stay_in_bounded_memory() {
    if !has_node() {
        return;
    }
    let (_d, root) = project();
    let script = "
        const mb = Buffer.alloc(1 << 20, 0x61);
        process.stdout.write('START');
        let i = 0;
        (function go() {
            while (i < 100) {
                i++;
                if (!process.stdout.write(mb)) { process.stdout.once('drain', go); return; }
            }
            process.stdout.write('END');
        })();";
    let total = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let counter = total.clone();
    let shell_run = ShellRun {
        cancel: CancelToken::default(),
        on_output: Some(Arc::new(move |_, b: &[u8]| {
            counter.fetch_add(b.len() as u64, std::sync::atomic::Ordering::Relaxed);
        })),
    };
    let before = peak_rss_kib();
    let mut i = input("node", &["-e", script]);
    i.timeout_secs = Some(120);
    let out = exec_shell(&root, &i, &shell_run).unwrap();
    let grown_mib = (peak_rss_kib().saturating_sub(before)) / 1024;
    let written = 100 * (1u64 << 20) + 8;
    assert_eq!(out.exit_code, Some(0));
    assert_eq!(total.load(std::sync::atomic::Ordering::Relaxed), written);
    let kept = (shell::HEAD_BYTES + shell::TAIL_BYTES) as u64;
    assert_eq!(out.stdout_truncated_bytes, written - kept);
    assert!(out.stdout.starts_with("STARTaaaa"));
    assert!(out.stdout.ends_with("aaaaEND"));
    assert!(out
        .stdout
        .contains(&format!("{} bytes omitted", written - kept)));
    assert!(out.stdout.len() < 140 * 1024);
    assert!(grown_mib < 48, "peak RSS grew by {grown_mib} MiB");
}

// ------------------------------------------------- process groups and time

#[test]
fn timeout_kills_the_whole_process_tree_and_returns_partial_output() {
    if !has_node() {
        return;
    }
    let (_d, root) = project();
    let script = "const c = require('child_process').spawn('sleep', ['30']);
        console.log(c.pid); setInterval(() => {}, 1000);";
    let mut i = input("node", &["-e", script]);
    i.timeout_secs = Some(1);
    let started = Instant::now();
    let out = exec_shell(&root, &i, &ShellRun::default()).unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "{:?}",
        started.elapsed()
    );
    assert!(out.timed_out);
    assert_eq!(out.exit_code, None);
    let pid: u32 = out.stdout.trim().parse().unwrap();
    assert!(wait_gone(pid), "grandchild {pid} survived the timeout");
}

#[test]
fn a_grandchild_holding_the_pipes_does_not_hang_the_call() {
    if !has_node() {
        return;
    }
    let (_d, root) = project();
    let script = "const c = require('child_process').spawn('sleep', ['30'], {stdio: 'inherit'});
        console.log(c.pid); process.exit(0);";
    let started = Instant::now();
    let out = run(&root, "node", &["-e", script]);
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(out.exit_code, Some(0));
    assert!(!out.timed_out);
    let pid: u32 = out.stdout.trim().parse().unwrap();
    assert!(wait_gone(pid), "grandchild {pid} was left running");
}

#[test]
fn a_detached_grandchild_holding_the_pipes_does_not_hang_the_call() {
    if !has_node() {
        return;
    }
    let (_d, root) = project();
    // `detached` puts the grandchild in a new session, out of the group.
    let script = "const c = require('child_process').spawn('sleep', ['5'],
        {stdio: 'inherit', detached: true}); console.log(c.pid); process.exit(0);";
    let started = Instant::now();
    let out = run(&root, "node", &["-e", script]);
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(out.exit_code, Some(0));
    let pid: u32 = out.stdout.trim().parse().unwrap();
    let _ = std::process::Command::new("kill")
        .arg(pid.to_string())
        .status();
}

#[test]
fn cancel_kills_the_group_and_answers_cancelled_with_partial_output() {
    if !has_node() {
        return;
    }
    let (_d, root) = project();
    let shell_run = ShellRun::default();
    let cancel = shell_run.cancel.clone();
    let canceller = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
        cancel.cancel();
    });
    let started = Instant::now();
    let script = "console.log('partial'); setInterval(() => {}, 1000);";
    let err = exec_shell(&root, &input("node", &["-e", script]), &shell_run).unwrap_err();
    canceller.join().unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(err.code, ErrorCode::Cancelled);
    assert_eq!(err.details["stdout"], "partial\n");
    assert_eq!(err.details["command"], "node");
}

// -------------------------------------------------------------- environment

#[test]
fn the_child_environment_is_built_from_nothing() {
    if !has_node() {
        return;
    }
    // Set before any child starts in this test; other tests only read.
    std::env::set_var("CORRAL_TEST_SECRET", "hunter2");
    std::env::set_var("ANTHROPIC_API_KEY", "sk-ant-test-secret");
    let (_d, root) = project();
    let out = run(
        &root,
        "node",
        &["-e", "console.log(JSON.stringify(process.env))"],
    );
    assert!(!out.stdout.contains("hunter2"));
    assert!(!out.stdout.contains("sk-ant-test-secret"));
    let env: serde_json::Map<String, serde_json::Value> =
        serde_json::from_str(&out.stdout).unwrap();
    assert!(!env.contains_key("CORRAL_TEST_SECRET"));
    assert!(!env.contains_key("ANTHROPIC_API_KEY"));
    for (key, value) in [
        ("PAGER", "cat"),
        ("GIT_PAGER", "cat"),
        ("GIT_TERMINAL_PROMPT", "0"),
        ("GIT_EDITOR", "true"),
        ("TERM", "dumb"),
    ] {
        assert_eq!(env[key], value, "{key}");
    }
    let path = env["PATH"].as_str().unwrap();
    assert!(path.contains("/usr/bin"));
    assert!(!path.contains(root.path().to_str().unwrap()));
    assert!(env.contains_key("HOME"));
    assert!(env.contains_key("LANG"));
    let tmpdir = env["TMPDIR"].as_str().unwrap();
    assert!(tmpdir.contains("corral-shell-"));
    assert!(
        !Path::new(tmpdir).exists(),
        "TMPDIR {tmpdir} was not removed"
    );
    let allowed = [
        "PATH",
        "HOME",
        "LANG",
        "TMPDIR",
        "PAGER",
        "GIT_PAGER",
        "GIT_TERMINAL_PROMPT",
        "GIT_EDITOR",
        "TERM",
        "CARGO_HOME",
        "RUSTUP_HOME",
    ];
    for key in env.keys() {
        assert!(allowed.contains(&key.as_str()), "unexpected variable {key}");
    }
}

#[test]
fn git_runs_with_fsmonitor_and_hooks_neutralized_despite_a_hostile_config() {
    let (dir, root) = project();
    git_repo(dir.path());
    let config = dir.path().join(".git/config");
    let mut text = std::fs::read_to_string(&config).unwrap();
    text.push_str(
        "[core]\n\tfsmonitor = \"touch fsmonitor-ran; false\"\n\thooksPath = evil-hooks\n",
    );
    std::fs::write(&config, text).unwrap();
    let hook = dir.path().join("evil-hooks/pre-commit");
    std::fs::create_dir_all(hook.parent().unwrap()).unwrap();
    std::fs::write(&hook, "#!/bin/sh\ntouch hook-ran\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();

    let out = run(&root, "git", &["config", "--get", "core.fsmonitor"]);
    assert_eq!(out.stdout.trim(), "false");
    let out = run(&root, "git", &["config", "--get", "core.hooksPath"]);
    assert_eq!(out.stdout.trim(), "/dev/null");
    std::fs::write(dir.path().join("a.txt"), "a\n").unwrap();
    run(&root, "git", &["status"]);
    run(&root, "git", &["add", "a.txt"]);
    let out = exec_shell(
        &root,
        &input("git", &["commit", "-qm", "x", "--author", "A <a@b.c>"]),
        &ShellRun::default(),
    )
    .unwrap();
    let _ = out;
    assert!(!dir.path().join("fsmonitor-ran").exists());
    assert!(!dir.path().join("hook-ran").exists());
}

// ------------------------------------------------------------ argument rules

/// One row per rule: (program, args, allowed). A denied row must fail with
/// `argument_not_allowed` naming `denied_arg`.
#[test]
fn file_tools_cannot_plant_a_bare_repository_whose_config_runs_programs() {
    // What write_file may write at the root (only `.git/` is refused) is
    // enough for git to see a bare repository there, whose `config` names
    // an external diff program; a read-only `git diff` would run it.
    let (dir, root) = project();
    let auto_edit = CallContext::new(Mode::AutoEdit, Approval::None);
    let config =
        "[core]\n\tbare = false\n\tworktree = .\n[diff]\n\texternal = \"touch pwned; echo ran\"\n";
    for (path, content) in [
        ("HEAD", "ref: refs/heads/main\n"),
        ("objects/info/keep", ""),
        ("refs/heads/keep", ""),
        ("config", config),
        ("a.txt", "a\n"),
    ] {
        let input = json!({"path": path, "content": content});
        dispatch::call(&root, "write_file", input, &auto_edit).unwrap();
    }
    let call = json!({"command": "git", "args": ["diff", "a.txt", "/dev/null"]});
    let full_auto = CallContext::new(Mode::FullAuto, Approval::None);
    let out = dispatch::call(&root, "exec_shell", call, &full_auto).unwrap();
    assert!(!dir.path().join("pwned").exists(), "{out}");
    assert!(!out["stdout"].as_str().unwrap().contains("ran"), "{out}");
    // git refuses to use the planted repository at all.
    let out = run(&root, "git", &["status"]);
    assert!(out.stderr.contains("bare repository"), "{}", out.stderr);
}

#[test]
fn git_refuses_abbreviated_options_the_rules_might_miss() {
    let (dir, root) = project();
    git_repo(dir.path());
    std::fs::write(dir.path().join("a.txt"), "needle\n").unwrap();
    run(&root, "git", &["add", "a.txt"]);
    // `--cou` would be `--count`; git refuses it under our environment.
    let out = run(&root, "git", &["grep", "--cou", "needle"]);
    assert_ne!(out.exit_code, Some(0), "{out:?}");
    assert!(
        out.stderr.contains("disallowed abbreviated"),
        "{}",
        out.stderr
    );
    let out = run(&root, "git", &["grep", "--count", "needle"]);
    assert_eq!(out.stdout.trim(), "a.txt:1");
}

#[test]
fn argument_rules_table() {
    let (dir, root) = project();
    let outside = tempfile::tempdir().unwrap();
    let out = outside.path().to_str().unwrap().to_string();
    let r = root.path().to_str().unwrap().to_string();
    std::fs::create_dir_all(dir.path().join("src/sub")).unwrap();
    std::fs::write(dir.path().join("src/a.txt"), "a\n").unwrap();
    std::fs::write(dir.path().join("patterns"), "a\n").unwrap();
    std::os::unix::fs::symlink(outside.path(), dir.path().join("escape")).unwrap();
    std::os::unix::fs::symlink("src", dir.path().join("inner")).unwrap();
    std::os::unix::fs::symlink(".", dir.path().join("self")).unwrap();
    std::os::unix::fs::symlink(".git", dir.path().join("gitlink")).unwrap();
    let sibling = format!("{r}-evil");
    let outside_file = format!("{out}/x");
    let root_slash = format!("{r}/");

    // (program, args, None = allowed | Some(named argument) = denied)
    let rows: Vec<(&str, Vec<&str>, Option<&str>)> = vec![
        // paths of the file utilities stay inside
        ("ls", vec!["-la", "src"], None),
        ("ls", vec!["src/../src"], None),
        ("ls", vec!["inner/"], None),
        ("ls", vec!["-I", "*.o", "--color=never", "."], None),
        ("ls", vec![".."], Some("..")),
        ("ls", vec!["/etc"], Some("/etc")),
        ("ls", vec![&out], Some(&out)),
        ("ls", vec![&sibling], Some(&sibling)),
        ("ls", vec!["escape"], Some("escape")),
        ("ls", vec!["escape/new/deeper"], Some("escape/new/deeper")),
        ("ls", vec!["--", "../x"], Some("../x")),
        ("ls", vec!["--frobnicate"], Some("--frobnicate")),
        ("cat", vec![], Some("")),
        ("mkdir", vec!["-p", "new/dir"], None),
        ("mkdir", vec!["-p", "../up"], Some("../up")),
        ("mkdir", vec!["escape/x"], Some("escape/x")),
        ("mkdir", vec![".git/hooks2"], Some(".git/hooks2")),
        ("touch", vec!["src/t.txt"], None),
        // the kernel follows `self` before `..`: `self/../x` is outside
        ("touch", vec!["self/../x"], Some("self/../x")),
        ("mkdir", vec!["-p", "self/../up"], Some("self/../up")),
        (
            "mkdir",
            vec!["-p", "self/new/../../out"],
            Some("self/new/../../out"),
        ),
        ("mkdir", vec!["-p", "new/../src/x"], Some("new/../src/x")),
        ("touch", vec!["inner/../a.txt"], None),
        // `.git/` through a symlink
        ("touch", vec!["gitlink/x"], Some("gitlink/x")),
        (
            "cp",
            vec!["src/a.txt", "gitlink/hooks/"],
            Some("gitlink/hooks/"),
        ),
        ("touch", vec![&outside_file], Some(&outside_file)),
        (
            "touch",
            vec!["-r", "/etc/passwd", "src/a.txt"],
            Some("/etc/passwd"),
        ),
        (
            "touch",
            vec!["--reference=/etc/passwd", "x"],
            Some("--reference=/etc/passwd"),
        ),
        ("cp", vec!["src/a.txt", "src/b.txt"], None),
        ("cp", vec!["-r", "src", "copy"], None),
        ("cp", vec!["/etc/passwd", "src/"], Some("/etc/passwd")),
        ("cp", vec!["src/a.txt", &out], Some(&out)),
        ("cp", vec!["-t", &out, "src/a.txt"], Some(&out)),
        (
            "cp",
            vec!["--target-directory", &out, "src/a.txt"],
            Some(&out),
        ),
        (
            "cp",
            vec!["--target-dir=/tmp", "src/a.txt"],
            Some("--target-dir=/tmp"),
        ),
        ("cp", vec!["-t/tmp", "src/a.txt"], Some("-t/tmp")),
        ("cp", vec!["src/a.txt", ".git/x"], Some(".git/x")),
        ("mv", vec!["src/b.txt", "src/c.txt"], None),
        ("mv", vec!["src/c.txt", "../c.txt"], Some("../c.txt")),
        ("mv", vec!["-t", "/tmp", "src/c.txt"], Some("/tmp")),
        ("mv", vec![".", "elsewhere"], Some(".")),
        ("rm", vec!["-f", "src/c.txt"], None),
        ("rm", vec!["-rf", "copy"], None),
        ("rm", vec!["-rf", "."], Some(".")),
        ("rm", vec!["-rf", "./"], Some("./")),
        ("rm", vec!["-r", &r], Some(&r)),
        ("rm", vec!["-r", &root_slash], Some(&root_slash)),
        ("rm", vec!["-rf", "src/.."], Some("src/..")),
        ("rm", vec!["-rf", "self/"], Some("self/")),
        ("rm", vec!["-rf", "/"], Some("/")),
        (
            "rm",
            vec!["-rf", "--no-preserve-root", "x"],
            Some("--no-preserve-root"),
        ),
        ("rm", vec!["-rf", "--no-pres", "x"], Some("--no-pres")),
        ("rm", vec!["-rf", ".git"], Some(".git")),
        ("rm", vec!["-rf", "escape/"], Some("escape/")),
        ("rm", vec!["--", "-rf", "../x"], Some("../x")),
        // grep: path operands and pattern files stay inside
        ("grep", vec!["-rn", "a", "src"], None),
        ("grep", vec!["-e", "/etc/passwd", "src/a.txt"], None),
        ("grep", vec!["/etc/passwd", "src/a.txt"], None),
        ("grep", vec!["-f", "patterns", "src/a.txt"], None),
        ("grep", vec!["-C3", "a", "-5", "src/a.txt"], None),
        ("grep", vec!["root", "/etc/passwd"], Some("/etc/passwd")),
        (
            "grep",
            vec!["-f", "/etc/passwd", "src"],
            Some("/etc/passwd"),
        ),
        ("grep", vec!["-f/etc/passwd", "src"], Some("-f/etc/passwd")),
        (
            "grep",
            vec!["--file=/etc/passwd", "src"],
            Some("--file=/etc/passwd"),
        ),
        (
            "grep",
            vec!["--fi=/etc/passwd", "src"],
            Some("--fi=/etc/passwd"),
        ),
        (
            "grep",
            vec!["--exclude-from=/etc/passwd", "a"],
            Some("--exclude-from=/etc/passwd"),
        ),
        ("grep", vec!["-r", "x", "escape"], Some("escape")),
        // find: starting points inside, no actions
        ("find", vec![".", "-name", "*.txt", "-type", "f"], None),
        ("find", vec!["-L", "src", "-maxdepth", "2", "-print0"], None),
        (
            "find",
            vec!["src", "(", "-name", "a*", "-o", "-newer", "patterns", ")"],
            None,
        ),
        ("find", vec!["/", "-name", "x"], Some("/")),
        ("find", vec!["..", "-name", "x"], Some("..")),
        ("find", vec![".", "-exec", "rm", "{}", ";"], Some("-exec")),
        ("find", vec![".", "-execdir", "id", ";"], Some("-execdir")),
        ("find", vec![".", "-ok", "id", ";"], Some("-ok")),
        ("find", vec![".", "-okdir", "id", ";"], Some("-okdir")),
        ("find", vec![".", "-delete"], Some("-delete")),
        ("find", vec![".", "-fprint", "x"], Some("-fprint")),
        ("find", vec![".", "-fprint0", "x"], Some("-fprint0")),
        ("find", vec![".", "-fprintf", "x", "%p"], Some("-fprintf")),
        ("find", vec![".", "-fls", "x"], Some("-fls")),
        (
            "find",
            vec![".", "-files0-from", "list"],
            Some("-files0-from"),
        ),
        (
            "find",
            vec![".", "-newer", "/etc/passwd"],
            Some("/etc/passwd"),
        ),
        ("find", vec![".", "-frobnicate"], Some("-frobnicate")),
        // git
        ("git", vec!["status"], None),
        ("git", vec!["add", "-u"], None),
        ("git", vec!["-C", "src", "status"], None),
        ("git", vec!["--no-pager", "log", "--oneline"], None),
        ("git", vec!["-C", &out, "status"], Some(&out)),
        ("git", vec!["-C", "..", "status"], Some("..")),
        ("git", vec!["--git-dir=/tmp/x", "status"], Some("/tmp/x")),
        ("git", vec!["--work-tree", "/", "status"], Some("/")),
        ("git", vec!["-c", "core.pager=id", "log"], Some("-c")),
        (
            "git",
            vec!["-ccore.pager=id", "log"],
            Some("-ccore.pager=id"),
        ),
        (
            "git",
            vec!["--config-env=core.pager=X", "log"],
            Some("--config-env=core.pager=X"),
        ),
        (
            "git",
            vec!["--exec-path=/tmp", "status"],
            Some("--exec-path=/tmp"),
        ),
        ("git", vec!["--exec-path"], Some("--exec-path")),
        (
            "git",
            vec!["fetch", "--upload-pack=touch x", "origin"],
            Some("--upload-pack=touch x"),
        ),
        (
            "git",
            vec!["pull", "--upload-pack", "x"],
            Some("--upload-pack"),
        ),
        ("git", vec!["clone", "-u", "x", "a", "b"], Some("-u")),
        ("git", vec!["ls-remote", "-ux", "a"], Some("-ux")),
        (
            "git",
            vec!["clone", "-c", "core.fsmonitor=x", "a", "b"],
            Some("-c"),
        ),
        (
            "git",
            vec!["push", "--receive-pack=x"],
            Some("--receive-pack=x"),
        ),
        ("git", vec!["archive", "--exec=x", "HEAD"], Some("--exec=x")),
        ("git", vec!["rebase", "-x", "make", "main"], Some("-x")),
        ("git", vec!["grep", "-Ovim", "x"], Some("-Ovim")),
        ("git", vec!["bisect", "run", "make"], Some("run")),
        ("git", vec!["submodule", "foreach", "id"], Some("foreach")),
        (
            "git",
            vec!["config", "core.fsmonitor", "touch x"],
            Some("config"),
        ),
        ("git", vec!["config", "--get", "user.name"], None),
        ("git", vec!["some-alias"], Some("some-alias")),
        ("git", vec!["--frobnicate", "status"], Some("--frobnicate")),
        ("git", vec!["init", "--separate-git-dir", &out], Some(&out)),
        ("git", vec!["--git-dir=.git", "status"], None),
        ("git", vec!["--work-tree", ".", "status"], None),
        // clustered short options and abbreviated long ones
        ("git", vec!["clone", "-qu", "x", "a", "b"], Some("-qu")),
        ("git", vec!["clone", "-bdebug", "a", "b"], None),
        (
            "git",
            vec!["clone", "--upload-pa=x", "a", "b"],
            Some("--upload-pa=x"),
        ),
        ("git", vec!["clone", "-qc", "k=v", "a", "b"], Some("-qc")),
        (
            "git",
            vec!["clone", "--conf", "k=v", "a", "b"],
            Some("--conf"),
        ),
        ("git", vec!["rebase", "-ix", "make", "main"], Some("-ix")),
        ("git", vec!["rebase", "--ex", "make", "main"], Some("--ex")),
        ("git", vec!["rebase", "-i", "main"], None),
        ("git", vec!["grep", "-iO", "x"], Some("-iO")),
        (
            "git",
            vec!["grep", "--open-files=vim", "x"],
            Some("--open-files=vim"),
        ),
        ("git", vec!["grep", "-in", "x"], None),
        // `git config NAME get` is the legacy *set* form
        (
            "git",
            vec!["config", "core.hooksPath", "get"],
            Some("config"),
        ),
        (
            "git",
            vec!["config", "--global", "--get", "user.name"],
            None,
        ),
        (
            "git",
            vec!["commit", "--file=/etc/passwd"],
            Some("/etc/passwd"),
        ),
        ("git", vec!["commit", "--file", "src/a.txt"], None),
        (
            "git",
            vec!["config", "--list", "-f", "/etc/my.cnf"],
            Some("/etc/my.cnf"),
        ),
        (
            "git",
            vec!["config", "-f/etc/my.cnf", "--list"],
            Some("/etc/my.cnf"),
        ),
        ("git", vec!["config", "-f", "src/a.txt", "--list"], None),
        ("git", vec!["checkout", "-f", "main"], None),
        // cargo, npm & co: folders they point at stay inside
        ("cargo", vec!["--version"], None),
        (
            "cargo",
            vec!["metadata", "--manifest-path", "Cargo.toml"],
            None,
        ),
        (
            "cargo",
            vec!["build", "--manifest-path", "/etc/Cargo.toml"],
            Some("/etc/Cargo.toml"),
        ),
        (
            "cargo",
            vec!["build", "--manifest-path=../x/Cargo.toml"],
            Some("../x/Cargo.toml"),
        ),
        ("cargo", vec!["build", "--target-dir", &out], Some(&out)),
        (
            "cargo",
            vec!["install", "--root", "/usr/local", "x"],
            Some("/usr/local"),
        ),
        (
            "cargo",
            vec!["build", "--config", "/tmp/evil.toml"],
            Some("/tmp/evil.toml"),
        ),
        ("cargo", vec!["run", "--", "--manifest-path", "/etc"], None),
        (
            "cargo",
            vec!["build", "--config", "profile.dev.opt-level=1"],
            None,
        ),
        ("cargo", vec!["build", "--target-dir", "target/x"], None),
        ("npm", vec!["--version"], None),
        (
            "npm",
            vec!["install", "--prefix", "/usr/local"],
            Some("/usr/local"),
        ),
        ("npm", vec!["install", "--prefix=../x"], Some("../x")),
        ("npm", vec!["install", "--prefix", "src"], None),
        ("npm", vec!["install", "-g", "x"], Some("-g")),
        ("npm", vec!["install", "--global", "x"], Some("--global")),
        (
            "npm",
            vec!["install", "--location=global", "x"],
            Some("--location=global"),
        ),
        ("yarn", vec!["install"], None),
        ("yarn", vec!["--cwd", "src", "install"], None),
        ("yarn", vec!["--cwd", "/tmp", "install"], Some("/tmp")),
        ("yarn", vec!["global", "add", "x"], Some("global")),
        ("pnpm", vec!["install", "--dir", "src"], None),
        ("pnpm", vec!["-C", "/etc", "install"], Some("/etc")),
        ("pnpm", vec!["add", "-g", "x"], Some("-g")),
        ("bun", vec!["install"], None),
        ("bun", vec!["install", "--cwd", "../x"], Some("../x")),
        ("bun", vec!["add", "--global", "x"], Some("--global")),
        // node: modules given as paths and the script stay inside
        ("node", vec!["-e", "1"], None),
        ("node", vec!["-r", "./src/a.txt", "-e", "1"], None),
        ("node", vec!["-e", "1", "/etc/passwd"], None),
        ("node", vec!["/tmp/evil.js"], Some("/tmp/evil.js")),
        ("node", vec!["../evil.js"], Some("../evil.js")),
        (
            "node",
            vec!["--require", "/tmp/evil.js", "-e", "1"],
            Some("/tmp/evil.js"),
        ),
        (
            "node",
            vec!["-r", "../evil.js", "-e", "1"],
            Some("../evil.js"),
        ),
        (
            "node",
            vec!["--import=/tmp/evil.mjs", "-e", "1"],
            Some("/tmp/evil.mjs"),
        ),
        (
            "node",
            vec!["--env-file=/root/.env", "-e", "1"],
            Some("/root/.env"),
        ),
        ("node", vec!["--env-file=src/a.txt", "-e", "1"], None),
        (
            "node",
            vec!["--inspect=0.0.0.0:9229", "-e", "1"],
            Some("--inspect=0.0.0.0:9229"),
        ),
    ];
    git_repo(dir.path());
    for (program, args, denied) in &rows {
        let call = input(program, args);
        let got = shell::check(&root, &call);
        match (denied, got) {
            (None, Ok(())) => {}
            // The rules passed; the program is just not on this machine.
            (None, Err(e))
                if e.code == ErrorCode::NotFound && e.message.contains("not installed") => {}
            (None, Err(e)) => panic!("{program} {args:?} should be allowed: {e:?}"),
            (Some(_), Ok(())) => panic!("{program} {args:?} should be denied"),
            (Some(_), Err(e)) if *program == "cat" => {
                assert_eq!(e.code, ErrorCode::CommandNotAllowed)
            }
            (Some(arg), Err(e)) => {
                assert_eq!(
                    e.code,
                    ErrorCode::ArgumentNotAllowed,
                    "{program} {args:?}: {e:?}"
                );
                assert_eq!(e.details["argument"], *arg, "{program} {args:?}: {e:?}");
                assert!(e.message.contains(&format!("`{arg}`")), "{}", e.message);
            }
        }
    }
    // The allowed file-utility rows really run (in order) and stay inside.
    for (program, args, denied) in &rows {
        if denied.is_none()
            && ["mkdir", "touch", "cp", "mv", "rm", "ls", "grep", "find"].contains(program)
        {
            let out = run(
                &root,
                program,
                &args.iter().map(|s| &**s).collect::<Vec<_>>(),
            );
            assert!(out.exit_code.is_some(), "{program} {args:?}");
        }
    }
    assert!(dir.path().join("new/dir").is_dir());
    assert!(!dir.path().join("copy").exists());
    assert!(root.path().is_dir());
    assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0);
}

#[test]
fn a_denied_call_runs_nothing() {
    let (dir, root) = project();
    std::fs::write(dir.path().join("keep.txt"), "x").unwrap();
    let err = exec_shell(&root, &input("rm", &["-rf", "."]), &ShellRun::default()).unwrap_err();
    assert_eq!(err.code, ErrorCode::ArgumentNotAllowed);
    assert!(dir.path().join("keep.txt").exists());
}

// ---------------------------------------------------------------- Landlock

#[test]
fn landlock_confines_writes_to_the_root() {
    if !has_node() {
        return;
    }
    let (dir, root) = project();
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("escaped.txt");
    let write = "try { require('fs').writeFileSync(process.argv[1], 'x'); console.log('wrote') }
        catch (e) { console.log(e.code); process.exit(1) }";
    let out = run(&root, "node", &["-e", write, target.to_str().unwrap()]);
    assert!(out.sandboxed, "{:?}", out.sandbox_note);
    assert_eq!(out.sandbox_note, None);
    assert_eq!(out.exit_code, Some(1), "{out:?}");
    assert_eq!(out.stdout.trim(), "EACCES");
    assert!(!target.exists());

    let inside = dir.path().join("inside.txt");
    let out = run(&root, "node", &["-e", write, inside.to_str().unwrap()]);
    assert_eq!(out.stdout.trim(), "wrote", "{out:?}");
    assert!(inside.exists());

    // TMPDIR is writable; /dev/null too.
    let tmp = "const p = require('path').join(require('os').tmpdir(), 't');
        require('fs').writeFileSync(p, 'x'); require('fs').writeFileSync('/dev/null', 'x');
        console.log('ok')";
    let out = run(&root, "node", &["-e", tmp]);
    assert_eq!(out.stdout.trim(), "ok", "{out:?}");

    // Not the home folder outside the caches either.
    let home = std::env::var("HOME").unwrap();
    let probe = Path::new(&home).join(format!("corral-landlock-probe-{}", std::process::id()));
    let out = run(&root, "node", &["-e", write, probe.to_str().unwrap()]);
    assert_eq!(out.stdout.trim(), "EACCES", "{out:?}");
    assert!(!probe.exists());
}

#[test]
fn landlock_stops_git_writing_outside() {
    // git's clone target is not an argument rule; Landlock is the fence.
    let (dir, root) = project();
    let outside = tempfile::tempdir().unwrap();
    git_repo(dir.path());
    let out = run(&root, "git", &["init", "-q", "sub"]);
    assert_eq!(out.exit_code, Some(0));
    assert!(out.sandboxed);
    let target = outside.path().join("repo");
    let out = run(
        &root,
        "git",
        &["clone", "-q", ".", target.to_str().unwrap()],
    );
    assert_ne!(out.exit_code, Some(0), "{out:?}");
    assert!(!target.join(".git").exists());
}

// -------------------------------------------------------- policy decisions

#[test]
fn policy_uses_the_read_only_table() {
    let (_d, root) = project();
    // (args, mode, decision)
    let rows: &[(&[&str], &str, Mode, &str)] = &[
        (&["status"], "git", Mode::Ask, "allow"),
        (&["status"], "git", Mode::AutoEdit, "allow"),
        (&["status"], "git", Mode::ReadOnly, "deny"),
        (&["commit", "-m", "x"], "git", Mode::Ask, "ask"),
        (&["commit", "-m", "x"], "git", Mode::AutoEdit, "ask"),
        (&["commit", "-m", "x"], "git", Mode::FullAuto, "allow"),
        (&["-la"], "ls", Mode::Ask, "allow"),
        (&[".", "-name", "x"], "find", Mode::AutoEdit, "allow"),
        (&["x"], "touch", Mode::AutoEdit, "ask"),
        (&["-rf", "x"], "rm", Mode::AutoEdit, "ask"),
        (&["test"], "npm", Mode::Ask, "ask"),
        (&["-e", "1"], "node", Mode::Ask, "ask"),
        // A command that reads a secret asks, as read_file does.
        (&["KEY", ".env"], "grep", Mode::Ask, "ask"),
        (&["-rn", "KEY", "."], "grep", Mode::AutoEdit, "ask"),
        (&["show", "HEAD:.env"], "git", Mode::Ask, "ask"),
    ];
    for (args, command, mode, want) in rows {
        let ctx = CallContext::new(*mode, Approval::None);
        let call = json!({"command": command, "args": args});
        let got = dispatch::decide(&root, "exec_shell", &call, &ctx).unwrap();
        let kind = match got {
            Decision::Allow => "allow",
            Decision::Ask { .. } => "ask",
            Decision::Deny { .. } => "deny",
        };
        assert_eq!(kind, *want, "{command} {args:?} in {mode:?}");
    }
    // What the rules refuse is refused before anyone is asked.
    let ctx = CallContext::new(Mode::AutoEdit, Approval::None);
    let call = json!({"command": "find", "args": [".", "-delete"]});
    let err = dispatch::decide(&root, "exec_shell", &call, &ctx).unwrap_err();
    assert_eq!(err.code.as_str(), "argument_not_allowed");
}

#[test]
fn a_command_naming_a_secret_asks_in_every_mode() {
    let (dir, root) = project();
    std::fs::write(dir.path().join(".env"), "API_KEY=sk-live\n").unwrap();
    std::os::unix::fs::symlink(".env", dir.path().join("notes.txt")).unwrap();
    for args in [
        vec!["", "-H", ".env"],
        vec!["-H", "", "notes.txt"],
        vec!["-H", "", "./notes.txt"],
    ] {
        for mode in [Mode::Ask, Mode::AutoEdit, Mode::FullAuto] {
            let ctx = CallContext::new(mode, Approval::None);
            let call = json!({"command": "grep", "args": args});
            let decision = dispatch::decide(&root, "exec_shell", &call, &ctx).unwrap();
            assert!(
                matches!(&decision, Decision::Ask { reason } if reason.contains("secret")),
                "grep {args:?} in {mode:?}: {decision:?}"
            );
            let err = dispatch::call(&root, "exec_shell", call, &ctx).unwrap_err();
            assert_eq!(err.code.as_str(), "approval_required");
        }
    }
    let call = json!({"command": "git", "args": ["show", "HEAD:.env"]});
    let ctx = CallContext::new(Mode::FullAuto, Approval::None);
    let decision = dispatch::decide(&root, "exec_shell", &call, &ctx).unwrap();
    assert!(matches!(decision, Decision::Ask { .. }), "{decision:?}");
}

#[test]
fn dispatch_runs_exec_shell_and_returns_its_json() {
    let (_d, root) = project();
    let ctx = CallContext::new(Mode::FullAuto, Approval::None);
    let out = dispatch::call(
        &root,
        "exec_shell",
        json!({"command": "ls", "args": ["-a"]}),
        &ctx,
    )
    .unwrap();
    assert_eq!(out["exit_code"], 0);
    assert_eq!(out["timed_out"], false);
    assert!(out["stdout"].as_str().unwrap().contains('.'));
}

#[test]
fn cargo_builds_a_crate_inside_the_sandbox() {
    let (dir, root) = project();
    std::fs::write(
        dir.path().join("Cargo.toml"),
        "[package]\nname = \"probe\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\n",
    )
    .unwrap();
    std::fs::create_dir_all(dir.path().join("src")).unwrap();
    std::fs::write(
        dir.path().join("src/main.rs"),
        "fn main() { println!(\"built\"); }\n",
    )
    .unwrap();
    let mut call = input("cargo", &["run", "--offline", "-q"]);
    call.timeout_secs = Some(300);
    let out = exec_shell(&root, &call, &ShellRun::default()).unwrap();
    assert!(out.sandboxed);
    assert_eq!(out.exit_code, Some(0), "{out:?}");
    assert_eq!(out.stdout, "built\n");
}

#[test]
fn cargo_builds_a_crate_with_a_registry_dependency_inside_the_sandbox() {
    let (dir, root) = project();
    std::fs::write(
        dir.path().join("Cargo.toml"),
        "[package]\nname = \"probe\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n\
         [dependencies]\nitoa = \"1\"\n\n[workspace]\n",
    )
    .unwrap();
    std::fs::create_dir_all(dir.path().join("src")).unwrap();
    std::fs::write(
        dir.path().join("src/main.rs"),
        "fn main() { println!(\"{}\", itoa::Buffer::new().format(42)); }\n",
    )
    .unwrap();
    let mut call = input("cargo", &["run", "--offline", "-q"]);
    call.timeout_secs = Some(300);
    let out = exec_shell(&root, &call, &ShellRun::default()).unwrap();
    assert!(out.sandboxed);
    assert_eq!(out.exit_code, Some(0), "{out:?}");
    assert_eq!(out.stdout, "42\n");
    assert!(!out.stderr.contains("warning"), "{}", out.stderr);
}

#[test]
fn npm_runs_inside_the_sandbox() {
    if !has_node()
        || !Path::new("/usr/bin/npm").exists() && !Path::new("/usr/local/bin/npm").exists()
    {
        return;
    }
    let (dir, root) = project();
    let out = run(&root, "npm", &["--version"]);
    assert_eq!(out.exit_code, Some(0), "{out:?}");
    assert!(out.sandboxed);
    std::fs::write(
        dir.path().join("package.json"),
        r#"{"name":"probe","version":"1.0.0","scripts":{"hello":"node -e \"console.log('hi')\""}}"#,
    )
    .unwrap();
    let out = run(&root, "npm", &["run", "-s", "hello"]);
    assert_eq!(out.exit_code, Some(0), "{out:?}");
    assert_eq!(out.stdout, "hi\n");
}
