//! The sandbox is the fence: what a command can and cannot do in each
//! profile, whatever its arguments say. Each way out found by an attack
//! on the argument rules is here, reproduced, and now refused or harmless.
use crate::shell_common::*;
use corral_tools::dispatch::{decide, CallContext};
use corral_tools::policy::{Approval, Decision, Mode};
use corral_tools::shell::{self, exec_shell, ExecShellOutput, Profile, Sandbox, ShellRun};
use corral_tools::{ErrorCode, ProjectRoot};
use serde_json::json;
use std::net::{TcpListener, UdpSocket};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Whether the namespaces can be made here; the suite needs them.
fn fenced() -> bool {
    let ok = shell::namespaces_available();
    if !ok {
        eprintln!("note: bubblewrap cannot build namespaces here; skipping a sandbox test");
    }
    ok && has_node()
}

fn node(root: &ProjectRoot, script: &str, network: bool) -> ExecShellOutput {
    let run = ShellRun {
        network,
        ..ShellRun::default()
    };
    exec_shell(root, &input("node", &["-e", script]), &run).unwrap()
}

/// A folder outside the project that the sandbox can see (beside the
/// build's own files; `/tmp` and homes are emptied in the sandbox).
fn visible_outside() -> tempfile::TempDir {
    tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap()
}

fn decision(root: &ProjectRoot, mode: Mode, command: &str, args: &[&str]) -> Decision {
    let call = json!({"command": command, "args": args});
    decide(
        root,
        "exec_shell",
        &call,
        &CallContext::new(mode, Approval::None),
    )
    .unwrap()
}

fn asks(d: &Decision) -> bool {
    matches!(d, Decision::Ask { .. })
}

// ------------------------------------------------------------ profiles

#[test]
fn the_result_says_which_profile_ran_and_what_fenced_it() {
    if !fenced() {
        return;
    }
    let (_d, root) = project();
    let out = run(&root, "ls", &["-a"]);
    assert_eq!(
        (out.profile, out.sandbox, out.sandboxed, out.sandbox_note),
        (Profile::ReadOnly, Sandbox::Namespaces, true, None)
    );
    let out = run(&root, "touch", &["x"]);
    assert_eq!(
        (out.profile, out.sandbox),
        (Profile::Build, Sandbox::Namespaces)
    );
    let out = node(&root, "1", true);
    assert_eq!(out.profile, Profile::Network);
    // The read-only table wins over a network grant.
    let run = ShellRun {
        network: true,
        ..ShellRun::default()
    };
    let out = exec_shell(&root, &input("ls", &[]), &run).unwrap();
    assert_eq!(out.profile, Profile::ReadOnly);
}

#[test]
fn metadata_outside_the_project_cannot_change_from_any_profile() {
    if !fenced() {
        return;
    }
    let (_d, root) = project();
    let outside = visible_outside();
    let target = outside.path().join("victim");
    std::fs::write(&target, "x").unwrap();
    std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o644)).unwrap();
    let before = std::fs::metadata(&target).unwrap();
    let script = format!(
        "const fs = require('fs'); const p = {target:?}; const r = [];
        for (const [name, f] of [
            ['chmod', () => fs.chmodSync(p, 0o4777)],
            ['chown', () => fs.chownSync(p, 65534, 65534)],
            ['utimes', () => fs.utimesSync(p, 0, 0)],
            ['write', () => fs.appendFileSync(p, 'y')],
        ]) {{ try {{ f(); r.push(name + '=ok') }} catch (e) {{ r.push(name + '=' + e.code) }} }}
        console.log(r.join(' '))"
    );
    for network in [false, true] {
        let out = node(&root, &script, network);
        assert_eq!(out.exit_code, Some(0), "{out:?}");
        assert!(!out.stdout.contains("=ok"), "{network}: {}", out.stdout);
    }
    // ls is on the read-only table: no write of any kind from there either.
    let after = std::fs::metadata(&target).unwrap();
    assert_eq!(
        (after.mode(), after.uid(), after.mtime(), after.len()),
        (before.mode(), before.uid(), before.mtime(), before.len())
    );
}

#[test]
fn setxattr_outside_fails_and_inside_works_in_build() {
    if !fenced() {
        return;
    }
    // node has no xattr call; `cp --preserve=xattr` sets them on what it
    // writes, and its destination must be inside: from inside, the fence
    // is what stops a link leading out.
    let (dir, root) = project();
    let outside = visible_outside();
    std::fs::write(dir.path().join("src.txt"), "x").unwrap();
    std::os::unix::fs::symlink(outside.path(), dir.path().join("out")).unwrap();
    let err = exec_shell(
        &root,
        &input("cp", &["--preserve=xattr", "src.txt", "out/copied"]),
        &ShellRun::default(),
    )
    .unwrap_err();
    assert_eq!(err.code, ErrorCode::ArgumentNotAllowed);
    let out = run(&root, "cp", &["--preserve=xattr", "src.txt", "copied"]);
    assert_eq!(out.exit_code, Some(0), "{out:?}");
    assert!(dir.path().join("copied").exists());
}

#[test]
fn build_writes_inside_and_read_only_writes_nothing() {
    if !fenced() {
        return;
    }
    let (dir, root) = project();
    let out = run(&root, "mkdir", &["made"]);
    assert_eq!((out.profile, out.exit_code), (Profile::Build, Some(0)));
    assert!(dir.path().join("made").is_dir());
    // Read-only git runs in the read-only profile and leaves the index be.
    git_repo(dir.path());
    std::fs::write(dir.path().join("a.txt"), "a\n").unwrap();
    let index = dir.path().join(".git/index");
    let before = std::fs::metadata(&index).ok().map(|m| m.mtime());
    let out = run(&root, "git", &["status", "--porcelain"]);
    assert_eq!(
        (out.profile, out.exit_code),
        (Profile::ReadOnly, Some(0)),
        "{out:?}"
    );
    assert_eq!(out.stdout, "?? a.txt\n");
    assert_eq!(std::fs::metadata(&index).ok().map(|m| m.mtime()), before);
}

#[test]
fn the_hosts_own_sockets_are_out_of_reach_with_or_without_the_network_grant() {
    if !fenced() {
        return;
    }
    let (_d, root) = project();
    let tcp = TcpListener::bind("127.0.0.1:0").unwrap();
    tcp.set_nonblocking(true).unwrap();
    let udp = UdpSocket::bind("127.0.0.1:0").unwrap();
    udp.set_read_timeout(Some(Duration::from_millis(500)))
        .unwrap();
    let script = format!(
        "const net = require('net'), dgram = require('dgram');
        const s = dgram.createSocket('udp4');
        s.send('ping', {udp}, '127.0.0.1', (e) => {{
            console.log('udp=' + (e ? e.code : 'sent')); s.close();
            const c = net.connect({tcp}, '127.0.0.1');
            c.on('connect', () => {{ console.log('tcp=ok'); c.end() }});
            c.on('error', (e) => console.log('tcp=' + e.code));
        }});",
        udp = udp.local_addr().unwrap().port(),
        tcp = tcp.local_addr().unwrap().port(),
    );
    // With the grant the command still has a network namespace of its
    // own: the egress proxy (tests/proxy.rs) is its only way out.
    for (network, profile) in [(false, Profile::Build), (true, Profile::Network)] {
        let out = node(&root, &script, network);
        assert_eq!(out.profile, profile);
        assert!(out.stdout.contains("tcp=ECONNREFUSED"), "{out:?}");
        assert!(tcp.accept().is_err(), "a connection reached the host");
        let mut buf = [0u8; 16];
        assert!(udp.recv(&mut buf).is_err(), "a datagram reached the host");
    }
}

#[test]
fn secret_like_files_are_masked_for_read_only_commands() {
    if !fenced() {
        return;
    }
    let (dir, root) = project();
    std::fs::write(dir.path().join(".env"), "API_KEY=hunter2\n").unwrap();
    std::fs::create_dir(dir.path().join("keys")).unwrap();
    std::fs::write(dir.path().join("keys/server.pem"), "PRIVATE\n").unwrap();
    std::fs::write(dir.path().join("notes.txt"), "hunter2 is not here\n").unwrap();
    // `find` is read-only: the masked files are there, but empty.
    let out = run(&root, "find", &[".", "-size", "+0", "-type", "f"]);
    assert_eq!(out.profile, Profile::ReadOnly);
    let mut found: Vec<&str> = out.stdout.lines().collect();
    found.sort();
    assert_eq!(found, vec!["./notes.txt"], "{out:?}");
    // An approved build command sees them (a dev server reads its .env).
    let out = node(
        &root,
        "console.log(require('fs').readFileSync('.env', 'utf8').trim())",
        false,
    );
    assert_eq!(out.stdout, "API_KEY=hunter2\n");
}

#[test]
fn home_and_other_folders_are_not_there() {
    if !fenced() {
        return;
    }
    let (_d, root) = project();
    let sibling = tempfile::tempdir().unwrap();
    std::fs::write(sibling.path().join("other.txt"), "x").unwrap();
    let home = std::env::var("HOME").unwrap();
    let script = format!(
        "const fs = require('fs'); const r = [];
        for (const p of [{sibling:?}, {home:?}]) {{
            try {{ r.push(fs.readdirSync(p).filter(n => !n.startsWith('.') && n !== 'go').length) }}
            catch (e) {{ r.push(e.code) }}
        }} console.log(r.join(' '))",
        sibling = sibling.path().join("other.txt").parent().unwrap(),
    );
    let out = node(&root, &script, false);
    // The sibling project is gone; the home shows at most its toolchains.
    assert!(out.stdout.starts_with("ENOENT "), "{out:?}");
}

// ---------------------------------------------- the four ways out, closed

/// A project whose `rust-toolchain.toml` points rustup at a folder of the
/// project: `cargo --version` would run the project's own program.
#[test]
fn a_path_toolchain_makes_cargo_version_ask() {
    let (dir, root) = project();
    if shell::check(&root, &input("cargo", &["--version"])).is_err() {
        return; // no cargo here
    }
    // Without the toolchain file, `cargo --version` runs without asking.
    if shell::namespaces_available() {
        assert!(!asks(&decision(&root, Mode::Ask, "cargo", &["--version"])));
    }
    std::fs::write(
        dir.path().join("rust-toolchain.toml"),
        "[toolchain]\npath = \"/proc/self/cwd/tc\"\n",
    )
    .unwrap();
    std::fs::create_dir_all(dir.path().join("tc/bin")).unwrap();
    for mode in [Mode::Ask, Mode::AutoEdit] {
        assert!(
            asks(&decision(&root, mode, "cargo", &["--version"])),
            "{mode:?}"
        );
    }
    // And when it runs after approval, it is in build: nothing outside.
    if fenced() {
        let out = run(&root, "cargo", &["--version"]);
        assert_eq!(out.profile, Profile::Build);
    }
}

#[test]
fn yarn_path_and_package_manager_make_version_ask() {
    let (dir, root) = project();
    for program in ["yarn", "pnpm"] {
        if shell::check(&root, &input(program, &["--version"])).is_err() {
            continue;
        }
        std::fs::write(
            dir.path().join("package.json"),
            r#"{"name":"x","packageManager":"yarn@4.0.0"}"#,
        )
        .unwrap();
        assert!(asks(&decision(&root, Mode::Ask, program, &["--version"])));
    }
    std::fs::write(dir.path().join(".yarnrc.yml"), "yarnPath: evil.cjs\n").unwrap();
    let call = input("yarn", &["--version"]);
    assert!(!shell::is_read_only(&root, &call));
}

#[test]
fn a_planted_program_cannot_change_metadata_outside() {
    if !fenced() {
        return;
    }
    // The finding: a sandboxed `node -e` made a file outside setuid-root,
    // changed another's owner and set its mtime to 1970, and the result
    // said `sandboxed: true`. Covered in every profile above; here as found.
    let (_d, root) = project();
    let outside = visible_outside();
    let bin = outside.path().join("bin");
    std::fs::write(&bin, "#!/bin/sh\n").unwrap();
    let script = format!(
        "const fs = require('fs'); try {{ fs.chmodSync({bin:?}, 0o4755) }} catch (e) {{}}
        try {{ fs.chownSync({bin:?}, 0, 0) }} catch (e) {{}}
        try {{ fs.utimesSync({bin:?}, 0, 0) }} catch (e) {{}}"
    );
    let before = std::fs::metadata(&bin).unwrap();
    let out = node(&root, &script, false);
    assert!(out.sandboxed);
    let after = std::fs::metadata(&bin).unwrap();
    assert_eq!(after.mode() & 0o7000, 0);
    assert_eq!(
        (after.mode(), after.mtime()),
        (before.mode(), before.mtime())
    );
}

#[test]
fn git_options_through_a_link_out_ask_and_cannot_read_it() {
    let (dir, root) = project();
    git_repo(dir.path());
    let outside = tempfile::tempdir().unwrap();
    let secret = outside.path().join("secret.txt");
    std::fs::write(&secret, "outside-line-1\noutside-line-2\n").unwrap();
    std::fs::write(dir.path().join("a.txt"), "a\n").unwrap();
    std::os::unix::fs::symlink(&secret, dir.path().join("notes.txt")).unwrap();
    for args in [
        &["blame", "-S", "notes.txt", "a.txt"][..],
        &["blame", "-Snotes.txt", "a.txt"],
        &["blame", "--ignore-revs-file=notes.txt", "a.txt"],
        &["blame", "--ignore-revs-file", "notes.txt", "a.txt"],
    ] {
        let call = input("git", args);
        assert!(!shell::is_read_only(&root, &call), "{args:?}");
        if shell::namespaces_available() {
            assert!(asks(&decision(&root, Mode::Ask, "git", args)), "{args:?}");
        }
    }
    if fenced() {
        // Even approved, the outside file is not in the sandbox's world.
        let out = run(&root, "git", &["blame", "-S", "notes.txt", "a.txt"]);
        assert!(!out.stderr.contains("outside-line"), "{out:?}");
        assert!(!out.stdout.contains("outside-line"), "{out:?}");
    }
}

fn git_config(dir: &Path) -> PathBuf {
    dir.join(".git/config")
}

#[test]
fn a_hard_link_to_git_config_is_refused_and_cannot_be_written_through() {
    let (dir, root) = project();
    git_repo(dir.path());
    std::fs::write(dir.path().join("p.txt"), "[diff]\n\texternal = ./evil\n").unwrap();
    let original = std::fs::read_to_string(git_config(dir.path())).unwrap();
    // Making the link is refused...
    let err = exec_shell(
        &root,
        &input("cp", &["-l", ".git/config", "notes.txt"]),
        &ShellRun::default(),
    )
    .unwrap_err();
    assert_eq!(err.code, ErrorCode::ArgumentNotAllowed);
    assert!(!dir.path().join("notes.txt").exists());
    // ...and a link that exists already is not a write target.
    std::fs::hard_link(git_config(dir.path()), dir.path().join("notes.txt")).unwrap();
    for (program, args) in [
        ("cp", &["p.txt", "notes.txt"][..]),
        ("mv", &["p.txt", "notes.txt"]),
    ] {
        let err = exec_shell(&root, &input(program, args), &ShellRun::default()).unwrap_err();
        assert_eq!(err.code, ErrorCode::ArgumentNotAllowed, "{program}");
    }
    // The mount holds even for a program the rules cannot read: `.git/`
    // is read-only for everything but git.
    if fenced() {
        let out = node(
            &root,
            "try { require('fs').appendFileSync('notes.txt', 'x'); console.log('wrote') }
            catch (e) { console.log(e.code) }",
            false,
        );
        assert_eq!(out.stdout, "EROFS\n", "{out:?}");
        let out = node(
            &root,
            "try { require('fs').appendFileSync('.git/config', 'x'); console.log('wrote') }
            catch (e) { console.log(e.code) }",
            false,
        );
        assert_eq!(out.stdout, "EROFS\n", "{out:?}");
    }
    assert_eq!(
        std::fs::read_to_string(git_config(dir.path())).unwrap(),
        original
    );
}

#[test]
fn a_symlink_into_git_is_refused_and_cannot_be_written_through() {
    let (dir, root) = project();
    git_repo(dir.path());
    let abs = dir.path().join(".git/config");
    let abs = abs.to_str().unwrap();
    std::fs::create_dir(dir.path().join("d")).unwrap();
    let err = exec_shell(
        &root,
        &input("cp", &["-s", abs, "d/config"]),
        &ShellRun::default(),
    )
    .unwrap_err();
    assert_eq!(err.code, ErrorCode::ArgumentNotAllowed);
    // Planted some other way: writing through it meets a read-only mount.
    std::os::unix::fs::symlink(abs, dir.path().join("d/config")).unwrap();
    std::fs::create_dir(dir.path().join("p")).unwrap();
    std::fs::write(dir.path().join("p/config"), "[diff]\n\texternal = ./evil\n").unwrap();
    let before = std::fs::read_to_string(git_config(dir.path())).unwrap();
    if fenced() {
        let out = node(
            &root,
            "try { require('fs').copyFileSync('p/config', 'd/config'); console.log('wrote') }
            catch (e) { console.log(e.code) }",
            false,
        );
        assert_eq!(out.stdout, "EROFS\n", "{out:?}");
    }
    assert_eq!(
        std::fs::read_to_string(git_config(dir.path())).unwrap(),
        before
    );
}

#[test]
fn git_itself_may_write_its_repository() {
    if !fenced() {
        return;
    }
    let (dir, root) = project();
    git_repo(dir.path());
    std::fs::write(dir.path().join("a.txt"), "a\n").unwrap();
    let out = run(&root, "git", &["add", "a.txt"]);
    assert_eq!(
        (out.profile, out.exit_code),
        (Profile::Build, Some(0)),
        "{out:?}"
    );
    let out = run(&root, "git", &["status", "--porcelain"]);
    assert_eq!(out.stdout, "A  a.txt\n");
}
