//! A command's limits hold from its first instruction: bwrap's child,
//! waiting at its gate before it runs the program, is moved into the
//! command's cgroups (on cgroup v1 through `tasks`, which moves its one
//! thread without the system-wide lock whose grace period cost every
//! command 10 to 40 ms) and given its rlimits; a program that takes more
//! memory than its limit is killed and the result says so; and the
//! command dies with its caller, even one killed by SIGKILL. Real
//! programs in the real sandbox.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::disallowed_methods
)]

mod shell_common;

use corral_sandbox::{self as shell, exec_shell, ExecShellInput, Limit, Limits, ShellRun};
use shell_common::*;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Where this process could make a memory cgroup, as the sandbox does:
/// beneath its own in v1's `memory` hierarchy, or its own in v2.
fn memory_cgroup_parent() -> Option<PathBuf> {
    cgroup_parent("memory", &["memory.max", "memory.limit_in_bytes"])
}

/// Where this process could make a cgroup limiting `controller` (v1's
/// hierarchy of that name, or v2), one that has one of `files`.
fn cgroup_parent(controller: &str, files: &[&str]) -> Option<PathBuf> {
    let own = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let unified = Path::new("/sys/fs/cgroup/cgroup.controllers").exists();
    let path = own.lines().find_map(|line| {
        let mut parts = line.splitn(3, ':');
        let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
        let wanted = if unified {
            controllers.is_empty()
        } else {
            controllers.split(',').any(|c| c == controller)
        };
        wanted.then(|| path.trim_start_matches('/').to_string())
    })?;
    let base = if unified {
        PathBuf::from("/sys/fs/cgroup")
    } else {
        Path::new("/sys/fs/cgroup").join(controller)
    };
    let parent = base.join(path);
    let probe = parent.join(format!("corral-test-{}", std::process::id()));
    std::fs::create_dir(&probe).ok()?;
    let limited = files.iter().any(|file| probe.join(file).exists());
    let _ = std::fs::remove_dir(&probe);
    limited.then_some(parent)
}

#[test]
fn a_command_past_its_memory_limit_is_stopped_and_says_so() {
    if !shell::namespaces_available() || !has_node() {
        return;
    }
    let (_dir, root) = project();
    let run = ShellRun {
        limits: Limits {
            memory_bytes: 128 << 20,
            ..Limits::default()
        },
        ..ShellRun::default()
    };
    // 512 MiB, touched, kept.
    let script = "const b = []; for (let i = 0; i < 64; i++) b.push(Buffer.alloc(8 << 20, 1)); console.log('kept ' + b.length)";
    let out = exec_shell(&root, &input("node", &["-e", script]), &run).unwrap();
    assert_ne!(out.stdout, "kept 64\n", "{out:?}");
    assert_ne!(out.exit_code, Some(0), "{out:?}");
    if memory_cgroup_parent().is_some() {
        // The cgroup was joined: it counted the kill.
        assert_eq!(out.limit_hit, Some(Limit::Memory), "{out:?}");
        let note = out.sandbox_note.unwrap_or_default();
        assert!(note.contains("memory limit (128 MiB, "), "{note}");
    }
}

#[test]
fn the_program_is_under_its_rlimits_from_its_first_instruction() {
    if !shell::namespaces_available() {
        return;
    }
    let (_dir, root) = project();
    let run = ShellRun {
        limits: Limits {
            processes: 77,
            file_size_bytes: 3 << 20,
            open_files: 333,
            ..Limits::default()
        },
        extra_programs: vec!["cat".into()],
        ..ShellRun::default()
    };
    // What cat reads first is the state it started in.
    let out = exec_shell(&root, &input("cat", &["/proc/self/limits"]), &run).unwrap();
    assert_eq!(out.exit_code, Some(0), "{out:?}");
    let limit = |name: &str| {
        out.stdout
            .lines()
            .find(|l| l.starts_with(name))
            .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
            .unwrap_or_default()
    };
    assert!(
        limit("Max file size").ends_with("3145728 3145728 bytes"),
        "{}",
        out.stdout
    );
    assert!(
        limit("Max open files").ends_with("333 333 files"),
        "{}",
        out.stdout
    );
    if cgroup_parent("pids", &["pids.max"]).is_none() {
        // No cgroup counts its processes: the rlimit does.
        assert!(
            limit("Max processes").ends_with("77 77 processes"),
            "{}",
            out.stdout
        );
    }
}

#[test]
fn the_program_runs_in_the_command_s_own_cgroup() {
    if !shell::namespaces_available() || !has_node() {
        return;
    }
    let Some(_) = cgroup_parent("pids", &["pids.max"]) else {
        return;
    };
    let (_dir, root) = project();
    let marker = marker();
    let run = ShellRun::default();
    let cancel = run.cancel.clone();
    let script = format!("/* {marker} */ setTimeout(() => {{}}, 20000)");
    let call =
        std::thread::spawn(move || exec_shell(&root, &input("node", &["-e", &script]), &run));
    let started = Instant::now();
    let node = loop {
        let node = processes_with(&marker).into_iter().find(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/comm")).is_ok_and(|c| c.trim() == "node")
        });
        if let Some(node) = node {
            break node;
        }
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "node never started"
        );
        std::thread::sleep(Duration::from_millis(10));
    };
    // Seen from here, outside the sandbox's cgroup namespace.
    let cgroups = std::fs::read_to_string(format!("/proc/{node}/cgroup")).unwrap();
    cancel.cancel();
    let _ = call.join();
    let own = format!("/corral-{}-", std::process::id());
    let line = cgroups
        .lines()
        .find(|l| l.starts_with("0::") || l.split(':').nth(1) == Some("pids"))
        .unwrap_or_default();
    assert!(line.contains(&own), "{cgroups}");
}

/// Set in the copy of this test binary that plays the caller.
const CALLER: &str = "CORRAL_TEST_CALLER";

#[test]
fn a_command_dies_with_its_caller_killed_by_sigkill() {
    if let (Some(dir), Some(marker)) = (std::env::var_os(CALLER), std::env::var_os("MARKER")) {
        // The caller: runs a command that would never end by itself.
        let root = corral_fs::ProjectRoot::open(Path::new(&dir)).unwrap();
        let script = format!(
            "/* {} */ require('fs').writeFileSync('started', ''); setInterval(() => {{}}, 1000)",
            marker.to_string_lossy()
        );
        let _ = exec_shell(
            &root,
            &input("node", &["-e", &script]),
            &ShellRun::default(),
        );
        return;
    }
    if !shell::namespaces_available() || !has_node() {
        return;
    }
    let (dir, _root) = project();
    let marker = marker();
    let mut caller = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "a_command_dies_with_its_caller_killed_by_sigkill",
            "--test-threads=1",
        ])
        .env(CALLER, dir.path())
        .env("MARKER", &marker)
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while !dir.path().join("started").exists() {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "the command never started"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(!processes_with(&marker).is_empty());
    caller.kill().unwrap(); // SIGKILL: nothing of the caller runs after.
    caller.wait().unwrap();
    assert!(
        wait_all_gone(&marker),
        "the command outlived its caller: {:?}",
        processes_with(&marker)
    );
}

/// A command's temporary space is bounded: what an unasked read-only
/// command (or a build) writes in its TMPDIR or `/tmp` stops at the
/// limit with `limit_hit: "disk"`, and nothing of it reaches the host's
/// disk.
#[test]
fn a_command_filling_its_tmpdir_or_tmp_stops_at_the_limit() {
    if !shell::namespaces_available() || !has_node() {
        return;
    }
    let (_dir, root) = project();
    let run = ShellRun {
        limits: Limits {
            tmp_bytes: 4 << 20,
            ..Limits::default()
        },
        ..ShellRun::default()
    };
    for place in ["process.env.TMPDIR", "'/tmp'"] {
        // 16 MiB in 1 MiB writes.
        let script = format!(
            "const fs = require('fs'); const f = {place} + '/fill';
             try {{ for (let i = 0; i < 16; i++) fs.appendFileSync(f, Buffer.alloc(1 << 20, 1)); console.log('wrote all') }}
             catch (e) {{ console.error(e.code); process.exit(1) }}"
        );
        let out = exec_shell(&root, &input("node", &["-e", &script]), &run).unwrap();
        assert_ne!(out.stdout, "wrote all\n", "{place}: {out:?}");
        assert!(out.stderr.contains("ENOSPC"), "{place}: {out:?}");
        assert_eq!(out.limit_hit, Some(Limit::Disk), "{place}: {out:?}");
        let note = out.sandbox_note.unwrap_or_default();
        assert!(note.contains("4 MiB"), "{note}");
    }
}

/// Set, to the test's name, in the copy of this test binary that runs one
/// test with what a process sets once (its budget, its caches' limit).
const COPY: &str = "CORRAL_TEST_COPY";

/// In the test binary: runs the test `name` again in a copy of it with
/// `vars` set, checks that the copy passed and printed `DONE name`, and
/// says false. In that copy: true, and the test goes on.
fn in_a_copy(name: &str, vars: &[(&str, &std::ffi::OsStr)]) -> bool {
    if std::env::var_os(COPY).is_some_and(|n| n == name) {
        return true;
    }
    let out = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", name, "--nocapture", "--test-threads=1"])
        .env(COPY, name)
        .envs(vars.iter().copied())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains(&format!("DONE {name}")), "{stdout}");
    false
}

/// Every command of a process runs inside one budget below the
/// machine's: with a budget of 40 processes, a command whose own limit is
/// 4096 cannot start 60, and says so. (In a copy of this test binary: the
/// budget is the process's, set once.)
#[test]
fn every_command_of_the_process_shares_one_budget() {
    if !shell::namespaces_available() || !has_node() {
        return;
    }
    let Some(parent) = cgroup_parent("pids", &["pids.max"]) else {
        return;
    };
    let name = "every_command_of_the_process_shares_one_budget";
    if !in_a_copy(name, &[("CORRAL_PROCESS_BUDGET", "40".as_ref())]) {
        return;
    }
    let (_dir, root) = project();
    let script = "const cp = require('child_process'); let failed = null; const kids = [];
        for (let i = 0; i < 60 && !failed; i++) {
          try { const c = cp.spawn('sleep', ['5']); c.on('error', (e) => { failed = e.code }); kids.push(c) }
          catch (e) { failed = e.code }
        }
        setTimeout(() => { console.log('failed=' + failed); for (const k of kids) try { k.kill() } catch (e) {} }, 300);";
    let out = exec_shell(&root, &input("node", &["-e", script]), &ShellRun::default()).unwrap();
    assert!(out.stdout.contains("failed=EAGAIN"), "{out:?}");
    assert_eq!(out.limit_hit, Some(Limit::Processes), "{out:?}");
    let budget = parent.join(format!("corral-{}-budget", std::process::id()));
    let max = std::fs::read_to_string(budget.join("pids.max")).unwrap();
    assert_eq!(max.trim(), "40");
    println!("DONE every_command_of_the_process_shares_one_budget");
}

/// The budget is the process's, not a project's: a command in one project
/// holding 20 `sleep`s leaves a command in another project of the same
/// process too few of a budget of 50 to start 20 more (each alone could:
/// node and bwrap take about ten more).
/// A host opens one project per process, and its tasks (worktrees) run
/// in that process: their commands share it so.
#[test]
fn commands_of_two_projects_in_one_process_share_the_budget() {
    if !shell::namespaces_available() || !has_node() {
        return;
    }
    if cgroup_parent("pids", &["pids.max"]).is_none() {
        return;
    }
    let name = "commands_of_two_projects_in_one_process_share_the_budget";
    if !in_a_copy(name, &[("CORRAL_PROCESS_BUDGET", "50".as_ref())]) {
        return;
    }
    // Starts up to 20 `sleep`s and keeps them; says how far it got.
    const SPAWN: &str = "const cp = require('child_process'); let failed = null; const kids = [];
        for (let i = 0; i < 20 && !failed; i++) {
          try { const c = cp.spawn('sleep', ['30']); c.on('error', (e) => { failed = e.code }); kids.push(c) }
          catch (e) { failed = e.code }
        }
        setTimeout(() => { console.log('started=' + kids.length + ' failed=' + failed);
          if (process.argv[1] === 'hold') setInterval(() => {}, 1000);
          else for (const k of kids) try { k.kill() } catch (e) {} }, 300);";
    let (_first_dir, first) = project();
    let (_second_dir, second) = project();
    let (tx, started) = std::sync::mpsc::channel();
    let holding = ShellRun {
        on_output: Some(std::sync::Arc::new(move |_, bytes: &[u8]| {
            let _ = tx.send(String::from_utf8_lossy(bytes).into_owned());
        })),
        ..ShellRun::default()
    };
    let cancel = holding.cancel.clone();
    let holder = std::thread::spawn(move || {
        exec_shell(&first, &input("node", &["-e", SPAWN, "hold"]), &holding).unwrap()
    });
    let printed = started.recv_timeout(Duration::from_secs(30)).unwrap();
    assert!(printed.contains("started=20 failed=null"), "{printed}");
    let once = ExecShellInput {
        timeout_secs: Some(20),
        ..input("node", &["-e", SPAWN, "once"])
    };
    let out = exec_shell(&second, &once, &ShellRun::default()).unwrap();
    cancel.cancel();
    let _ = holder.join();
    assert!(out.stdout.contains("failed=EAGAIN"), "{out:?}");
    assert_eq!(out.limit_hit, Some(Limit::Processes), "{out:?}");
    println!("DONE commands_of_two_projects_in_one_process_share_the_budget");
}

/// Corral's caches are bounded: once measured over their limit (1 MiB
/// here), the next commands find them read-only, their writes there fail
/// with `limit_hit: "disk"`, and the note says why. (In a copy of this
/// test binary, with caches of its own.)
#[test]
fn caches_over_their_limit_are_read_only_to_the_next_commands() {
    if !shell::namespaces_available() || !has_node() {
        return;
    }
    let caches = tempfile::tempdir().unwrap();
    let name = "caches_over_their_limit_are_read_only_to_the_next_commands";
    let vars = [
        ("CORRAL_CACHE_LIMIT_MIB", "1".as_ref()),
        ("XDG_CACHE_HOME", caches.path().as_os_str()),
    ];
    if !in_a_copy(name, &vars) {
        return;
    }
    let (_dir, root) = project();
    // 2 MiB into npm's cache, which the first command may still write.
    let fill = "const fs = require('fs'); const d = process.env.npm_config_cache;
        try { fs.mkdirSync(d, { recursive: true }); fs.writeFileSync(d + '/big', Buffer.alloc(2 << 20, 1)); console.log('wrote') }
        catch (e) { console.log(e.code); process.exit(1) }";
    let first = exec_shell(&root, &input("node", &["-e", fill]), &ShellRun::default()).unwrap();
    assert_eq!(first.stdout.trim(), "wrote", "{first:?}");
    // The measure runs on a thread: the next commands see it done.
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let out = exec_shell(&root, &input("node", &["-e", fill]), &ShellRun::default()).unwrap();
        let note = out.sandbox_note.clone().unwrap_or_default();
        if note.contains("over their limit") {
            assert_eq!(out.stdout.trim(), "EROFS", "{out:?}");
            assert_eq!(out.limit_hit, Some(Limit::Disk), "{out:?}");
            assert!(note.contains("1 MiB"), "{note}");
            break;
        }
        assert!(Instant::now() < deadline, "never measured over: {out:?}");
        std::thread::sleep(Duration::from_millis(200));
    }
    println!("DONE caches_over_their_limit_are_read_only_to_the_next_commands");
}
