//! The policy's decisions for commands: the read-only table, the network
//! a fetch asks for, secrets named in any form, the repository a git
//! command may use, and `exec_shell` through `dispatch::call`.

use crate::shell_common::*;
use corral_tools::dispatch::{self, CallContext};
use corral_tools::policy::{Approval, Decision, Mode};
use corral_tools::shell::{self, exec_shell, ShellRun};
use corral_tools::{ErrorCode, ProjectRoot};
use serde_json::json;

#[test]
fn policy_uses_the_read_only_table() {
    let (dir, root) = project();
    // Read-only git needs the project's own repository.
    git_repo(dir.path());
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
        // The project runners are known programs that run in the build
        // profile: they ask as other build commands do.
        (&["-m", "unittest"], "python3", Mode::Ask, "ask"),
        (&["-m", "unittest"], "python3", Mode::AutoEdit, "ask"),
        (&["-m", "unittest"], "python3", Mode::FullAuto, "allow"),
        (&["-m", "unittest"], "python3", Mode::ReadOnly, "deny"),
        (&["--version"], "python3", Mode::Ask, "ask"),
        (&["-q"], "pytest", Mode::Ask, "ask"),
        (&["run", "pytest"], "uv", Mode::AutoEdit, "ask"),
        (&["test"], "make", Mode::Ask, "ask"),
        (&["test", "./..."], "go", Mode::Ask, "ask"),
        (&["test"], "cargo", Mode::Ask, "ask"),
        // A command that reads a secret asks, as read_file does.
        (&["KEY", ".env"], "grep", Mode::Ask, "ask"),
        (&["-rn", "KEY", "."], "grep", Mode::AutoEdit, "ask"),
        (&["show", "HEAD:.env"], "git", Mode::Ask, "ask"),
    ];
    for (args, command, mode, want) in rows {
        let ctx = CallContext::new(*mode, Approval::None);
        let call = json!({"command": command, "args": args});
        let got = match dispatch::decide(&root, "exec_shell", &call, &ctx) {
            // Known, but not on this machine (go, uv, pytest on a bare one).
            Err(e) if e.code == ErrorCode::NotFound && !["python3", "make"].contains(command) => {
                continue
            }
            got => got.unwrap(),
        };
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
fn git_fetches_behind_options_before_the_subcommand_ask_for_the_network() {
    let (dir, root) = project();
    git_repo(dir.path());
    std::fs::create_dir_all(dir.path().join("a/b")).unwrap();
    // Even in full_auto a fetch asks, naming the network; git's one reading
    // finds the subcommand past `-C`, `--git-dir=` and the like.
    let ctx = CallContext::new(Mode::FullAuto, Approval::None);
    for (args, network) in [
        (vec!["fetch"], true),
        (vec!["-C", "a", "fetch"], true),
        (vec!["-C", "a", "-C", "b", "fetch"], true),
        (vec!["--git-dir=.git", "fetch"], true),
        (vec!["--no-pager", "-C", "a", "pull"], true),
        (vec!["-C", "a", "-C", "b", "log"], false),
        (vec!["help", "fetch"], false),
    ] {
        let call = json!({"command": "git", "args": args});
        let check = dispatch::check(&root, "exec_shell", &call, &ctx).unwrap();
        assert_eq!(check.network, network, "git {args:?}: {check:?}");
        let asks =
            matches!(&check.decision, Decision::Ask { reason } if reason.contains("network"));
        assert_eq!(asks, network, "git {args:?}: {check:?}");
    }
    // `-c` is refused whatever follows it.
    let call = json!({"command": "git", "args": ["-c", "x=y", "pull"]});
    let err = dispatch::check(&root, "exec_shell", &call, &ctx).unwrap_err();
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
fn read_only_git_needs_the_projects_own_repository() {
    // Not a repository: `git diff a b` would compare any two folders.
    let (dir, root) = project();
    std::fs::create_dir(dir.path().join("src")).unwrap();
    std::fs::write(dir.path().join(".env"), "API_KEY=sk-live\n").unwrap();
    let ask = CallContext::new(Mode::Ask, Approval::None);
    for args in [vec!["diff", "src", "."], vec!["status"]] {
        let call = json!({"command": "git", "args": args});
        let err = dispatch::call(&root, "exec_shell", call, &ask).unwrap_err();
        assert_eq!(err.code.as_str(), "approval_required", "git {args:?}");
    }
    // Its own repository: plain reads run without asking.
    git_repo(dir.path());
    let call = json!({"command": "git", "args": ["status", "--short"]});
    dispatch::call(&root, "exec_shell", call, &ask).unwrap();
}

#[test]
fn git_never_uses_a_repository_above_the_project() {
    // The project is a folder of a larger repository (a monorepo, `~`).
    let outer = tempfile::tempdir().unwrap();
    git_repo(outer.path());
    std::fs::create_dir_all(outer.path().join("other")).unwrap();
    std::fs::write(outer.path().join("other/data.txt"), "outside-data\n").unwrap();
    std::fs::create_dir(outer.path().join("proj")).unwrap();
    let git = |args: &[&str]| {
        let status = std::process::Command::new("git")
            .args(args)
            .current_dir(outer.path())
            .status()
            .unwrap();
        assert!(status.success(), "git {args:?}");
    };
    git(&["add", "."]);
    git(&[
        "-c",
        "user.email=a@b",
        "-c",
        "user.name=a",
        "commit",
        "-qm",
        "x",
    ]);
    let root = ProjectRoot::open(outer.path().join("proj")).unwrap();
    let out = run(&root, "git", &["show", "HEAD:other/data.txt"]);
    assert!(!out.stdout.contains("outside-data"), "{out:?}");
    assert!(
        out.stderr.contains("not a git repository"),
        "{}",
        out.stderr
    );
    let ask = CallContext::new(Mode::Ask, Approval::None);
    let call = json!({"command": "git", "args": ["status"]});
    let err = dispatch::call(&root, "exec_shell", call, &ask).unwrap_err();
    assert_eq!(err.code.as_str(), "approval_required");
}

#[test]
fn a_secret_attached_to_an_option_is_a_secret() {
    let (dir, root) = project();
    git_repo(dir.path());
    std::fs::write(
        dir.path().join(".npmrc"),
        "//registry/:_authToken=npm_SECRET\n",
    )
    .unwrap();
    std::fs::write(dir.path().join(".env"), "API_KEY=sk-live\n").unwrap();
    std::os::unix::fs::symlink(".env", dir.path().join("cfglink")).unwrap();
    let ask = CallContext::new(Mode::Ask, Approval::None);
    for args in [
        vec!["blame", "-S.npmrc", "a.txt"],
        vec!["blame", "-Scfglink", "a.txt"],
        vec!["blame", "--ignore-revs-file=.npmrc", "a.txt"],
    ] {
        let call = json!({"command": "git", "args": args});
        let decision = dispatch::decide(&root, "exec_shell", &call, &ask).unwrap();
        assert!(
            matches!(&decision, Decision::Ask { reason } if reason.contains("secret")),
            "git {args:?}: {decision:?}"
        );
    }
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
fn a_python_projects_tests_run_with_python3_in_the_build_profile() {
    let (dir, root) = project();
    if !std::path::Path::new("/usr/bin/python3").exists() {
        eprintln!("skipped: no python3");
        return;
    }
    std::fs::write(
        dir.path().join("test_temp.py"),
        "import unittest\n\nclass T(unittest.TestCase):\n    def test_it(self):\n        \
         open('made.txt', 'w').write('x')\n        self.assertEqual(1 + 1, 2)\n",
    )
    .unwrap();
    // Known without any program added in Settings.
    let out = exec_shell(
        &root,
        &input("python3", &["-m", "unittest", "-v"]),
        &ShellRun::default(),
    )
    .unwrap();
    assert_eq!(out.exit_code, Some(0), "{out:?}");
    assert!(out.stderr.contains("test_it"), "{}", out.stderr);
    assert_eq!(out.profile, shell::Profile::Build);
    // The build profile writes the project.
    assert!(dir.path().join("made.txt").exists());
}
