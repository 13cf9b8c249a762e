//! Ways out of the sandbox found by attacking it as a hostile project
//! would, each reproduced with its vector and now closed: moving or
//! templating the repository, the clone's hard links into `.git/objects`,
//! a hard-linked `.env`, host unix sockets, cache poisoning, a fork bomb
//! and a file past the size limit.
use crate::shell_common::*;
use corral_tools::dispatch::{call, decide, CallContext};
use corral_tools::policy::{Approval, Decision, Mode};
use corral_tools::shell::{self, exec_shell, ExecShellOutput, Limit, Limits, Profile, ShellRun};
use corral_tools::{ErrorCode, ProjectRoot};
use serde_json::{json, Value};
use std::path::Path;
use std::process::Command;

fn fenced() -> bool {
    let ok = shell::namespaces_available();
    if !ok {
        eprintln!("note: bubblewrap cannot build namespaces here; skipping a sandbox test");
    }
    ok && has_node()
}

fn host_git(dir: &Path, args: &[&str]) {
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

/// A repository with `a.txt` committed and changed, and `evil.sh`, a
/// program that leaves `pwned` in the project when something runs it.
fn repository() -> (tempfile::TempDir, ProjectRoot) {
    let (dir, root) = project();
    host_git(dir.path(), &["init", "-q"]);
    std::fs::write(dir.path().join("a.txt"), "one\n").unwrap();
    host_git(dir.path(), &["add", "a.txt"]);
    host_git(dir.path(), &["commit", "-qm", "one"]);
    std::fs::write(dir.path().join("a.txt"), "two\n").unwrap();
    let evil = dir.path().join("evil.sh");
    std::fs::write(&evil, "#!/bin/sh\necho PLANTED-RAN\n").unwrap();
    std::fs::set_permissions(&evil, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    (dir, root)
}

/// A call through the dispatch, as the agent makes it: `Approval::Granted`
/// is the user's approval of it.
fn dispatch(
    root: &ProjectRoot,
    mode: Mode,
    approved: bool,
    name: &str,
    input: Value,
) -> Result<Value, corral_tools::Error> {
    let approval = if approved {
        Approval::Granted
    } else {
        Approval::None
    };
    call(root, name, input, &CallContext::new(mode, approval))
}

fn git_call(args: &[&str]) -> Value {
    json!({"command": "git", "args": args})
}

/// The unasked `git diff` at the end of each chain: it runs, and does not
/// run the planted program; or it asks.
fn unasked_diff_runs_nothing_planted(root: &ProjectRoot) {
    match dispatch(
        root,
        Mode::AutoEdit,
        false,
        "exec_shell",
        git_call(&["diff"]),
    ) {
        Ok(out) => {
            assert_eq!(out["profile"], "read_only", "{out}");
            assert!(!out.to_string().contains("PLANTED-RAN"), "{out}");
        }
        Err(e) => assert_eq!(e.code, ErrorCode::ApprovalRequired, "{e:?}"),
    }
}

#[test]
fn git_init_separate_git_dir_is_refused_and_the_chain_runs_nothing() {
    let (dir, root) = repository();
    // 1. One approval would move the repository out of `.git/`...
    for args in [
        &["init", "--separate-git-dir=gd"][..],
        &["init", "--separate-git-dir", "gd"],
        &["init", "--separate-git=gd"],
        &["clone", "--separate-git-dir=gd", ".", "sub"],
    ] {
        let err = dispatch(&root, Mode::FullAuto, true, "exec_shell", git_call(args)).unwrap_err();
        assert_eq!(err.code, ErrorCode::ArgumentNotAllowed, "{args:?}: {err:?}");
        assert!(err.message.contains("moves or templates"), "{err:?}");
    }
    assert!(!dir.path().join("gd").exists());
    // 2. ...so `gd/config` is an ordinary file and stays one...
    std::fs::create_dir(dir.path().join("gd")).unwrap();
    let config = "[diff]\n\texternal = ./evil.sh\n";
    dispatch(
        &root,
        Mode::AutoEdit,
        false,
        "write_file",
        json!({"path": "gd/config", "content": config}),
    )
    .unwrap();
    // 3. ...and the unasked `git diff` does not run what it names.
    unasked_diff_runs_nothing_planted(&root);
}

#[test]
fn a_repository_moved_into_a_project_folder_makes_git_ask() {
    // Moved some way the rules did not see: `.git` a file leading to `gd/`.
    let (dir, root) = project();
    host_git(dir.path(), &["init", "-q", "--separate-git-dir=gd"]);
    std::fs::write(dir.path().join("a.txt"), "one\n").unwrap();
    host_git(dir.path(), &["add", "a.txt"]);
    host_git(dir.path(), &["commit", "-qm", "one"]);
    std::fs::write(dir.path().join("a.txt"), "two\n").unwrap();
    std::fs::write(dir.path().join("evil.sh"), "#!/bin/sh\necho PLANTED-RAN\n").unwrap();
    let mut cfg = std::fs::OpenOptions::new()
        .append(true)
        .open(dir.path().join("gd/config"))
        .unwrap();
    std::io::Write::write_all(&mut cfg, b"[diff]\n\texternal = ./evil.sh\n").unwrap();
    assert!(!shell::is_read_only(&root, &input("git", &["diff"])));
    let d = decide(
        &root,
        "exec_shell",
        &git_call(&["diff"]),
        &CallContext::new(Mode::AutoEdit, Approval::None),
    )
    .unwrap();
    assert!(matches!(d, Decision::Ask { .. }), "{d:?}");
    // Approved, the moved repository is still held read-only for others.
    if fenced() {
        let out = run(
            &root,
            "node",
            &["-e", "try { require('fs').appendFileSync('gd/config', 'x'); console.log('wrote') } catch (e) { console.log(e.code) }"],
        );
        assert_eq!(out.stdout, "EROFS\n", "{out:?}");
    }
}

#[test]
fn git_init_template_is_refused_and_a_planted_commondir_makes_git_ask() {
    let (dir, root) = repository();
    std::fs::create_dir_all(dir.path().join("tpl")).unwrap();
    std::fs::write(dir.path().join("tpl/commondir"), "../evil\n").unwrap();
    std::fs::create_dir_all(dir.path().join("evil")).unwrap();
    std::fs::write(
        dir.path().join("evil/config"),
        "[diff]\n\texternal = ./evil.sh\n",
    )
    .unwrap();
    for args in [
        &["init", "--template=tpl"][..],
        &["init", "--template", "tpl"],
        &["init", "--templ=tpl"],
        &["clone", "--template=tpl", ".", "sub"],
    ] {
        let err = dispatch(&root, Mode::FullAuto, true, "exec_shell", git_call(args)).unwrap_err();
        assert_eq!(err.code, ErrorCode::ArgumentNotAllowed, "{args:?}: {err:?}");
    }
    assert!(!dir.path().join(".git/commondir").exists());
    unasked_diff_runs_nothing_planted(&root);
    // Planted some other way, `commondir` leading into the project takes
    // git off the read-only table.
    std::fs::copy(
        dir.path().join("tpl/commondir"),
        dir.path().join(".git/commondir"),
    )
    .unwrap();
    let d = decide(
        &root,
        "exec_shell",
        &git_call(&["diff"]),
        &CallContext::new(Mode::AutoEdit, Approval::None),
    )
    .unwrap();
    assert!(matches!(d, Decision::Ask { .. }), "{d:?}");
}

fn inodes(dir: &Path) -> std::collections::HashSet<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    walk_files(dir)
        .iter()
        .map(|p| std::fs::metadata(p).unwrap())
        .map(|m| (m.dev(), m.ino()))
        .collect()
}

#[test]
fn a_clone_s_hard_linked_objects_cannot_be_rewritten_by_other_programs() {
    if !fenced() {
        return;
    }
    let (dir, root) = repository();
    // An approved clone in the sandbox shares no object with ours: the
    // repository is a mount of its own, and `link(2)` across mounts fails,
    // so git copies.
    let out = run(&root, "git", &["clone", "-q", ".", "sub"]);
    assert_eq!(
        (out.profile, out.exit_code),
        (Profile::Build, Some(0)),
        "{out:?}"
    );
    let ours = inodes(&dir.path().join(".git/objects"));
    let theirs = inodes(&dir.path().join("sub/.git/objects"));
    assert!(!theirs.is_empty());
    assert!(
        ours.is_disjoint(&theirs),
        "the clone hard-linked our objects"
    );
    // One made outside the sandbox does share them: other programs still
    // cannot write through it.
    host_git(dir.path(), &["clone", "-q", ".", "linked"]);
    let shared = walk_files(&dir.path().join("linked/.git/objects"))
        .into_iter()
        .find(|p| {
            use std::os::unix::fs::MetadataExt;
            std::fs::metadata(p).unwrap().nlink() > 1
        })
        .expect("git clone of a local path outside the sandbox hard-links its objects");
    let before = std::fs::read(&shared).unwrap();
    let script = format!(
        "const fs = require('fs'); const r = [];
        for (const f of [() => fs.appendFileSync({shared:?}, 'x'), () => fs.chmodSync({shared:?}, 0o644),
                         () => fs.writeFileSync('linked/.git/config', '[core]\\n')]) {{
            try {{ f(); r.push('ok') }} catch (e) {{ r.push(e.code) }}
        }} console.log(r.join(' '))"
    );
    let out = run(&root, "node", &["-e", &script]);
    // The object is read-only by its mode too (EACCES: no capability
    // overrides it); its metadata and the config meet the mount.
    assert!(!out.stdout.contains("ok"), "{out:?}");
    assert!(out.stdout.ends_with(" EROFS EROFS\n"), "{out:?}");
    assert_eq!(std::fs::read(&shared).unwrap(), before);
    let show = run(&root, "git", &["show", "HEAD:a.txt"]);
    assert_eq!(show.stdout, "one\n");
}

fn walk_files(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            files.extend(walk_files(&path));
        } else {
            files.push(path);
        }
    }
    files
}

#[test]
fn a_hard_link_to_env_asks_and_is_masked_as_the_file_itself() {
    let (dir, root) = project();
    std::fs::write(dir.path().join(".env"), "API_KEY=hunter2\n").unwrap();
    std::fs::hard_link(dir.path().join(".env"), dir.path().join("notes.txt")).unwrap();
    for mode in [Mode::Ask, Mode::AutoEdit] {
        let d = decide(
            &root,
            "exec_shell",
            &json!({"command": "grep", "args": ["API", "notes.txt"]}),
            &CallContext::new(mode, Approval::None),
        )
        .unwrap();
        assert!(matches!(d, Decision::Ask { .. }), "{mode:?}: {d:?}");
        let d = decide(
            &root,
            "read_file",
            &json!({"path": "notes.txt"}),
            &CallContext::new(mode, Approval::None),
        )
        .unwrap();
        assert!(matches!(d, Decision::Ask { .. }), "{mode:?}: {d:?}");
    }
    // Run anyway in the read-only profile: the link is masked as `.env` is.
    if fenced() {
        let out = run(&root, "grep", &["-c", "API", "notes.txt"]);
        assert_eq!(out.profile, Profile::ReadOnly);
        assert!(!out.stdout.contains('1'), "{out:?}");
        assert!(!out.stdout.contains("hunter2"), "{out:?}");
    }
    // A file with one name is judged by its name alone.
    std::fs::write(dir.path().join("plain.txt"), "API\n").unwrap();
    let d = decide(
        &root,
        "exec_shell",
        &json!({"command": "grep", "args": ["API", "plain.txt"]}),
        &CallContext::new(Mode::Ask, Approval::None),
    )
    .unwrap();
    assert!(!matches!(d, Decision::Ask { .. }), "{d:?}");
}

fn node_with(root: &ProjectRoot, script: &str, run: &ShellRun) -> ExecShellOutput {
    exec_shell(root, &input("node", &["-e", script]), run).unwrap()
}

#[test]
fn no_host_unix_socket_is_reachable_from_any_profile() {
    if !fenced() {
        return;
    }
    use std::os::linux::net::SocketAddrExt;
    use std::os::unix::net::{SocketAddr, UnixListener};
    let (dir, root) = project();
    let outside = tempfile::tempdir().unwrap();
    let paths = [
        outside.path().join("host.sock"),
        dir.path().join("inside.sock"),
    ];
    let listeners: Vec<UnixListener> = paths
        .iter()
        .map(|p| UnixListener::bind(p).unwrap())
        .collect();
    let name = format!("corral-test-{}", std::process::id());
    let abstract_listener =
        UnixListener::bind_addr(&SocketAddr::from_abstract_name(name.as_bytes()).unwrap()).unwrap();
    for l in listeners.iter().chain([&abstract_listener]) {
        l.set_nonblocking(true).unwrap();
    }
    let script = format!(
        "const net = require('net'); const r = []; let left = 3;
        for (const p of [{a:?}, {b:?}, '\\0' + {name:?}]) {{
            const c = net.connect(p);
            c.on('connect', () => {{ r.push('connected'); c.end(); if (!--left) console.log(r.join(' ')) }});
            c.on('error', (e) => {{ r.push(e.code); if (!--left) console.log(r.join(' ')) }});
        }}
        // A pair of its own still works (node talks to its children so).
        require('child_process').execFileSync('/bin/true');",
        a = paths[0].to_str().unwrap(),
        b = paths[1].to_str().unwrap(),
    );
    for network in [false, true] {
        let out = node_with(
            &root,
            &script,
            &ShellRun {
                network,
                ..ShellRun::default()
            },
        );
        assert_eq!(out.exit_code, Some(0), "{out:?}");
        assert!(!out.stdout.contains("connected"), "{network}: {out:?}");
        assert_eq!(
            out.stdout.matches("EACCES").count(),
            3,
            "{network}: {out:?}"
        );
    }
    for l in listeners.iter().chain([&abstract_listener]) {
        assert!(
            l.accept().is_err(),
            "a sandboxed child reached a host socket"
        );
    }
}

#[test]
fn a_cache_poisoning_attempt_does_not_outlive_the_call_in_the_user_s_folders() {
    if !fenced() {
        return;
    }
    let (_dir, root) = project();
    let home = std::env::var("HOME").unwrap();
    let cargo = std::env::var("CARGO_HOME").unwrap_or_else(|_| format!("{home}/.cargo"));
    let targets = [
        format!("{cargo}/registry/src/poisoned.rs"),
        format!("{cargo}/registry/cache/poisoned.crate"),
        format!("{home}/.npm/_npx/poisoned/index.js"),
        format!("{home}/.npm/_cacache/poisoned"),
    ];
    let script = format!(
        "const fs = require('fs'), path = require('path'); const r = [];
        for (const p of {targets:?}) {{
            try {{ fs.mkdirSync(path.dirname(p), {{ recursive: true }}); fs.writeFileSync(p, 'evil'); r.push('ok') }}
            catch (e) {{ r.push(e.code) }}
        }}
        // The caches the tools are pointed at are Corral's own.
        fs.mkdirSync(process.env.npm_config_cache, {{ recursive: true }});
        fs.writeFileSync(path.join(process.env.npm_config_cache, 'corral-probe'), 'x');
        console.log(r.join(' ') + ' ' + process.env.npm_config_cache + ' ' + process.env.CARGO_HOME)"
    );
    let out = node_with(&root, &script, &ShellRun::default());
    assert_eq!(out.exit_code, Some(0), "{out:?}");
    assert!(!out.stdout.contains("ok "), "{out:?}");
    for target in &targets {
        assert!(!Path::new(target).exists(), "{target} outlived the call");
    }
    let words: Vec<&str> = out.stdout.split_whitespace().collect();
    let (npm_cache, cargo_home) = (words[targets.len()], words[targets.len() + 1]);
    assert!(npm_cache.contains("corral/sandbox"), "{out:?}");
    assert!(cargo_home.contains("corral/sandbox"), "{out:?}");
    assert!(!npm_cache.starts_with(&format!("{home}/.npm")));
    assert!(Path::new(npm_cache).join("corral-probe").exists());
}

#[test]
fn a_fork_bomb_ends_cleanly_at_the_process_limit() {
    if !fenced() {
        return;
    }
    let (_dir, root) = project();
    let marker = marker();
    let bomb = format!("b() {{ b | b & }}; b; : {marker}");
    let script = format!(
        "require('child_process').spawnSync('/bin/sh', ['-c', {bomb:?}], {{ stdio: 'inherit' }}); console.log('survived')"
    );
    let run = ShellRun {
        limits: Limits {
            processes: 64,
            ..Limits::default()
        },
        ..ShellRun::default()
    };
    let mut call = input("node", &["-e", &script]);
    call.timeout_secs = Some(20);
    let started = std::time::Instant::now();
    let out = exec_shell(&root, &call, &run).unwrap();
    assert!(started.elapsed().as_secs() < 25, "{out:?}");
    if out.limit_hit.is_some() {
        assert_eq!(out.limit_hit, Some(Limit::Processes), "{out:?}");
        assert!(out
            .sandbox_note
            .unwrap_or_default()
            .contains("process limit (64"));
    } else {
        // No cgroup could be made here: RLIMIT_NPROC refused the forks.
        assert!(
            out.stderr.contains("fork") || out.stderr.contains("resource"),
            "{out:?}"
        );
    }
    assert!(
        wait_all_gone(&marker),
        "processes of the bomb outlived the call"
    );
}

#[test]
fn a_file_past_the_size_limit_ends_cleanly_and_says_so() {
    if !fenced() {
        return;
    }
    let (dir, root) = project();
    let run = ShellRun {
        limits: Limits {
            file_size_bytes: 1 << 20,
            ..Limits::default()
        },
        ..ShellRun::default()
    };
    let out = node_with(
        &root,
        "require('fs').writeFileSync('big.bin', Buffer.alloc(2 << 20)); console.log('wrote')",
        &run,
    );
    assert_ne!(out.stdout, "wrote\n", "{out:?}");
    assert_eq!(out.limit_hit, Some(Limit::FileSize), "{out:?}");
    assert!(out
        .sandbox_note
        .unwrap_or_default()
        .contains("file-size limit (1 MiB)"));
    let size = std::fs::metadata(dir.path().join("big.bin"))
        .map(|m| m.len())
        .unwrap_or(0);
    assert!(size <= 1 << 20, "{size}");
}
