//! The argument rules of `exec_shell`, one row per rule, allowed and
//! denied (the policy's decisions for commands: `shell_policy.rs`).

use crate::shell_common::*;
use corral_tools::dispatch::{self, CallContext};
use corral_tools::policy::{Approval, Mode};
use corral_tools::shell::{self, exec_shell, ShellRun};
use corral_tools::ErrorCode;
use serde_json::json;

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
    let joined_c = format!("-C{out}");

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
        (
            "git",
            vec!["init", "--separate-git-dir", &out],
            Some("--separate-git-dir"),
        ),
        // moving or templating the repository, inside the root too
        (
            "git",
            vec!["init", "--separate-git-dir=gd"],
            Some("--separate-git-dir=gd"),
        ),
        (
            "git",
            vec!["init", "--template=tpl"],
            Some("--template=tpl"),
        ),
        ("git", vec!["init", "--templ", "tpl"], Some("--templ")),
        (
            "git",
            vec!["clone", "--separate-git=gd", "a", "b"],
            Some("--separate-git=gd"),
        ),
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
        // the project runners: what they are pointed at stays inside
        ("python3", vec!["-m", "unittest"], None),
        ("python3", vec!["-m", "pytest", "/etc"], None),
        ("python3", vec!["-c", "print(1)", "/etc"], None),
        ("python3", vec!["-u", "src/a.txt", "/etc"], None),
        ("python3", vec!["/tmp/evil.py"], Some("/tmp/evil.py")),
        ("python3", vec!["-B", "../evil.py"], Some("../evil.py")),
        ("python3", vec!["escape/x.py"], Some("escape/x.py")),
        ("pytest", vec!["-q", "-k", "not slow", "src/sub"], None),
        (
            "pytest",
            vec!["src/a.txt::test_a", "-p", "no:cacheprovider"],
            None,
        ),
        ("pytest", vec!["--rootdir=/"], Some("--rootdir=/")),
        ("pytest", vec!["-c", &outside_file], Some(&outside_file)),
        ("pytest", vec!["../tests::test_x"], Some("../tests::test_x")),
        ("pytest", vec!["--basetemp", "escape/t"], Some("escape/t")),
        ("uv", vec!["run", "python3", "-m", "unittest"], None),
        ("uv", vec!["sync", "--project", "src"], None),
        ("uv", vec!["run", "--project", ".."], Some("..")),
        (
            "uv",
            vec!["--directory=/", "run", "x"],
            Some("--directory=/"),
        ),
        ("make", vec!["-j4", "test"], None),
        ("make", vec!["-C", "src", "check"], None),
        ("make", vec!["-C", &out], Some(&out)),
        ("make", vec![&joined_c], Some(&joined_c)),
        (
            "make",
            vec!["--file=../Makefile"],
            Some("--file=../Makefile"),
        ),
        ("go", vec!["test", "./..."], None),
        (
            "go",
            vec!["test", "-run", "TestX", "-overlay=src/a.txt", "./..."],
            None,
        ),
        ("go", vec!["-C", "..", "build"], Some("..")),
        ("go", vec!["build", "-o", "/tmp/bin"], Some("/tmp/bin")),
        (
            "go",
            vec!["build", "-overlay=/tmp/o.json"],
            Some("-overlay=/tmp/o.json"),
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

/// A git call that must write git's own `config` (a remote, an upstream)
/// asks in every mode, saying why, and no saved rule covers it; once
/// approved it runs with that file writable, and an ordinary git call
/// still cannot write it.
#[test]
fn a_git_call_that_writes_its_config_asks_says_why_and_then_works() {
    let (dir, root) = project();
    git_repo(dir.path());
    let add =
        json!({"command": "git", "args": ["remote", "add", "origin", "https://example.com/r.git"]});
    let full_auto = CallContext::new(Mode::FullAuto, Approval::None);
    let err = dispatch::call(&root, "exec_shell", add.clone(), &full_auto).unwrap_err();
    assert_eq!(err.code, ErrorCode::ApprovalRequired, "{err:?}");
    let reason = err.details["reason"].as_str().unwrap_or_default();
    assert!(
        reason.contains("config") && reason.contains("remote"),
        "{reason}"
    );
    if !shell::namespaces_available() {
        return;
    }
    let approved = CallContext::new(Mode::FullAuto, Approval::Granted);
    let out = dispatch::call(&root, "exec_shell", add, &approved).unwrap();
    assert_eq!(out["exit_code"], 0, "{out}");
    let config = std::fs::read_to_string(dir.path().join(".git/config")).unwrap();
    assert!(config.contains("https://example.com/r.git"), "{config}");
    // An ordinary approved git cannot write it.
    let cfg = dir.path().join(".git/config");
    let before = std::fs::read_to_string(&cfg).unwrap();
    let call = json!({"command": "git", "args": ["branch", "topic"]});
    dispatch::call(&root, "exec_shell", call, &approved).unwrap();
    assert_eq!(std::fs::read_to_string(&cfg).unwrap(), before);
}
