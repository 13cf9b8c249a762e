#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::disallowed_methods
)]
//! `exec_shell` on real temp folders with real processes: allowlist,
//! environment, process groups, caps, cancel, the sandbox and the
//! toolchains inside it. The argument rules are in `shell_rules.rs`.

mod shell_common;

use corral_fs::ErrorCode;
use corral_sandbox::{self as shell, exec_shell, CancelToken, ShellRun, Stream};
use shell_common::*;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

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
        "perl",
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
        ..ShellRun::default()
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
        ..ShellRun::default()
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
    let mark = marker();
    let script = format!(
        "const c = require('child_process').spawn('sleep', ['{mark}']);
        console.log(c.pid); setInterval(() => {{}}, 1000);"
    );
    let mut i = input("node", &["-e", &script]);
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
    assert!(
        wait_all_gone(&mark),
        "the grandchild survived the timeout: {:?}",
        processes_with(&mark)
    );
}

#[test]
fn a_grandchild_holding_the_pipes_does_not_hang_the_call() {
    if !has_node() {
        return;
    }
    let (_d, root) = project();
    let mark = marker();
    let script = format!(
        "const c = require('child_process').spawn('sleep', ['{mark}'], {{stdio: 'inherit'}});
        console.log(c.pid); process.exit(0);"
    );
    let started = Instant::now();
    let out = run(&root, "node", &["-e", &script]);
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(out.exit_code, Some(0));
    assert!(!out.timed_out);
    assert!(
        wait_all_gone(&mark),
        "the grandchild was left running: {:?}",
        processes_with(&mark)
    );
}

#[test]
fn a_detached_grandchild_holding_the_pipes_does_not_hang_the_call() {
    if !has_node() {
        return;
    }
    let (_d, root) = project();
    let mark = marker();
    // `detached` puts the grandchild in a new session, out of the group.
    let script = format!(
        "const c = require('child_process').spawn('sleep', ['{mark}'],
        {{stdio: 'inherit', detached: true}}); console.log(c.pid); process.exit(0);"
    );
    let started = Instant::now();
    let out = run(&root, "node", &["-e", &script]);
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(out.exit_code, Some(0));
    // The sandbox's PID namespace ends it with the call, session or not.
    assert!(wait_all_gone(&mark), "{:?}", processes_with(&mark));
}

#[test]
fn cancel_kills_the_group_and_answers_cancelled_with_partial_output() {
    if !has_node() {
        return;
    }
    let (_d, root) = project();
    let mut shell_run = ShellRun::default();
    // Cancelled once the first output is in, however long node took to
    // start on a busy machine.
    let cancel = shell_run.cancel.clone();
    shell_run.on_output = Some(std::sync::Arc::new(move |_, _: &[u8]| cancel.cancel()));
    let started = Instant::now();
    let script = "console.log('partial'); setInterval(() => {}, 1000);";
    let err = exec_shell(&root, &input("node", &["-e", script]), &shell_run).unwrap_err();
    assert!(
        started.elapsed() < Duration::from_secs(10),
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
        "RUSTUP_HOME",
        // Corral's own package caches
        "CARGO_HOME",
        "npm_config_cache",
        "YARN_CACHE_FOLDER",
        "YARN_GLOBAL_FOLDER",
        "npm_config_store_dir",
        "BUN_INSTALL_CACHE_DIR",
        "GOMODCACHE",
        "XDG_CACHE_HOME",
        // set by the sandbox's `--chdir`
        "PWD",
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

// ----------------------------------------------------------------- sandbox

#[test]
fn the_sandbox_confines_writes_to_the_root() {
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
    // A sibling temp folder is not even there (the sandbox's /tmp is its own).
    assert_eq!(out.stdout.trim(), "ENOENT");
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
    assert_ne!(out.stdout.trim(), "wrote", "{out:?}");
    assert!(!probe.exists());
}

#[test]
fn the_sandbox_stops_git_writing_outside() {
    // git's clone target is not an argument rule; the sandbox is the fence.
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
    // It may clone into the sandbox's own /tmp, which vanishes with it.
    assert!(!target.join(".git").exists(), "{out:?}");
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

// ---------------------------------------------------------------- servers

/// A global npm install (`npm i -g --prefix P`): `P/bin/tool` links to a
/// file deep in `P/lib/node_modules/tool`, which needs the package's own
/// `node_modules`. Started by its link or by a link in a folder that is no
/// `bin`, the server sees the link, the file and the package around it.
#[test]
fn a_server_installed_by_a_global_npm_prefix_starts_in_the_sandbox() {
    use std::os::unix::fs::{symlink, PermissionsExt};
    if !has_node() || !shell::namespaces_available() {
        return;
    }
    let (_d, root) = project();
    // Outside /tmp and any home: the sandbox sees it only if it binds it.
    let place = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let prefix = place.path().join("prefix");
    let package = prefix.join("lib/node_modules/fake-ls");
    std::fs::create_dir_all(package.join("lib")).unwrap();
    std::fs::create_dir_all(package.join("node_modules/dep")).unwrap();
    std::fs::write(
        package.join("node_modules/dep/index.js"),
        "module.exports = 'dep reached';\n",
    )
    .unwrap();
    let cli = package.join("lib/cli.js");
    std::fs::write(&cli, "#!/usr/bin/env node\nconsole.log(require('dep'));\n").unwrap();
    std::fs::set_permissions(&cli, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::create_dir_all(prefix.join("bin")).unwrap();
    symlink(
        "../lib/node_modules/fake-ls/lib/cli.js",
        prefix.join("bin/fake-ls"),
    )
    .unwrap();
    std::fs::create_dir_all(place.path().join("links")).unwrap();
    symlink(&cli, place.path().join("links/fake-ls")).unwrap();

    for program in [
        prefix.join("bin/fake-ls"),
        place.path().join("links/fake-ls"),
    ] {
        let mut server = shell::language_server_command(&root, &program, &[]).unwrap();
        let out = server
            .command
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        assert_eq!(
            String::from_utf8_lossy(&out.stdout).trim(),
            "dep reached",
            "{}: {}",
            program.display(),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn every_command_gets_a_tmpdir_of_its_own_even_when_made_ahead() {
    if !has_node() {
        return;
    }
    let (_d, root) = project();
    // The first command of a process makes its own; the ones after get
    // one made ahead. Each writes a file there and lists what it found.
    let script = "const fs = require('fs'); const d = process.env.TMPDIR; \
                  const found = fs.readdirSync(d); fs.writeFileSync(d + '/left.txt', 'x'); \
                  console.log(d + ' ' + found.length)";
    let mut seen = Vec::new();
    for _ in 0..4 {
        let out = run(&root, "node", &["-e", script]);
        assert_eq!(out.exit_code, Some(0), "{out:?}");
        let (dir, found) = out.stdout.trim().rsplit_once(' ').unwrap();
        assert_eq!(
            found, "0",
            "a TMPDIR held what another command left: {out:?}"
        );
        assert!(!Path::new(dir).exists(), "TMPDIR {dir} is still there");
        assert!(!seen.contains(&dir.to_string()), "{dir} was used twice");
        seen.push(dir.to_string());
    }
}

#[test]
fn stop_ends_a_command_running_on_a_set_made_ahead() {
    if !has_node() {
        return;
    }
    let (_d, root) = project();
    // The pool is the process's, shared with the tests beside this one: a
    // try whose set another test took first (its TMPDIR made after the
    // call began) is tried again. A set made ahead was made at least the
    // pause before; 100 ms of margin cover the file system's coarse clock.
    // Inside, TMPDIR is a tmpfs of its own: the folder on the host under
    // it is looked at from here, while the command runs.
    let script = "console.log(process.env.TMPDIR); setInterval(() => console.log('tick'), 50);";
    for _ in 0..20 {
        run(&root, "node", &["-e", ""]);
        std::thread::sleep(Duration::from_millis(200));
        let mut shell_run = ShellRun::default();
        let cancel = shell_run.cancel.clone();
        let printed = Arc::new(Mutex::new(String::new()));
        let seen = printed.clone();
        let made_at = Arc::new(Mutex::new(None::<f64>));
        let made = made_at.clone();
        shell_run.on_output = Some(Arc::new(move |_, bytes: &[u8]| {
            let mut seen = seen.lock().unwrap();
            seen.push_str(&String::from_utf8_lossy(bytes));
            if let Some((dir, _)) = seen.split_once('\n') {
                let mut made = made.lock().unwrap();
                if made.is_none() {
                    let modified = std::fs::metadata(dir).and_then(|m| m.modified()).unwrap();
                    let since = modified.duration_since(std::time::UNIX_EPOCH).unwrap();
                    *made = Some(since.as_secs_f64() * 1000.0);
                }
                cancel.cancel();
            }
        }));
        let began = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs_f64()
            * 1000.0;
        let started = Instant::now();
        let err = exec_shell(&root, &input("node", &["-e", script]), &shell_run).unwrap_err();
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "Stop took {:?}",
            started.elapsed()
        );
        assert_eq!(err.code, ErrorCode::Cancelled, "{err:?}");
        let printed = printed.lock().unwrap().clone();
        let dir = printed.lines().next().unwrap();
        assert!(!Path::new(dir).exists(), "TMPDIR {dir} is still there");
        if made_at.lock().unwrap().unwrap() < began - 100.0 {
            return;
        }
    }
    panic!("no command of twenty ran on a set made ahead");
}

#[test]
fn a_program_run_once_gets_its_stdin_and_is_stopped_at_its_time() {
    if !shell::namespaces_available() {
        eprintln!("note: no namespaces here; skipping");
        return;
    }
    let (_d, root) = project();
    let sh = |script: &str, stdin: Vec<u8>, secs: u64| {
        let args = ["-c".to_string(), script.to_string()];
        shell::run_fenced(
            &root,
            "/bin/sh",
            &args,
            &[("SEEN".into(), "yes".into())],
            stdin,
            Duration::from_secs(secs),
        )
        .unwrap()
    };
    // All of a large stdin arrives, and the variables given.
    let big = vec![b'x'; 1 << 20];
    let ran = sh("wc -c; echo $SEEN >&2", big.clone(), 30);
    assert_eq!(ran.exit_code, Some(0), "{ran:?}");
    assert_eq!(ran.stdout.trim(), "1048576");
    assert_eq!(ran.stderr.trim(), "yes");
    // A program that never reads it does not stall on it.
    let ran = sh("exit 3", big, 30);
    assert_eq!((ran.exit_code, ran.timed_out), (Some(3), false), "{ran:?}");
    // Past its time: stopped, and so is what it started.
    let ran = sh("sleep 60 & sleep 60", Vec::new(), 1);
    assert!(ran.timed_out, "{ran:?}");
    assert_eq!(ran.exit_code, None, "{ran:?}");
}
