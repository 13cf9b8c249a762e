//! An attacker feeds the agent hostile paths. Every attempt fails with the
//! right code, or lands harmlessly inside the project; the outside folder is
//! never read through, written, or changed.
use crate::common::Project;
use corral_tools::policy::Risk;
use corral_tools::tool::DynTool;
use corral_tools::tools;
use pretty_assertions::assert_eq;
use serde_json::json;
use std::os::unix::fs::symlink;

/// (payload, the code `read_file` must fail with). `{tmp}` is the temp
/// folder holding `app/` (the project) and `outside/`.
const PAYLOADS: &[(&str, &str)] = &[
    ("../outside/secret.txt", "path_outside_root"),
    ("..", "path_outside_root"),
    ("../", "path_outside_root"),
    ("../../../../../../etc/passwd", "path_outside_root"),
    ("a/../../outside/secret.txt", "path_outside_root"),
    ("./../outside/secret.txt", "path_outside_root"),
    ("a/b/../../../outside/secret.txt", "path_outside_root"),
    ("..\\outside\\secret.txt", "path_outside_root"),
    ("a\\..\\..\\outside\\secret.txt", "path_outside_root"),
    ("..\\/outside/secret.txt", "path_outside_root"),
    ("/etc/passwd", "path_outside_root"),
    ("//etc/passwd", "path_outside_root"),
    ("/./etc/./passwd", "path_outside_root"),
    ("{tmp}/outside/secret.txt", "path_outside_root"),
    ("{tmp}/app/../outside/secret.txt", "path_outside_root"),
    ("{tmp}/app-evil/x.txt", "path_outside_root"),
    ("{tmp}/app-evil/../outside/secret.txt", "path_outside_root"),
    ("{tmp}/ap", "path_outside_root"),
    ("\\etc\\passwd", "path_outside_root"),
    ("C:\\Windows\\win.ini", "not_found"),
    ("%2e%2e/outside/secret.txt", "not_found"),
    ("%252e%252e%252foutside", "not_found"),
    ("..%2f..%2foutside", "not_found"),
    ("..%c0%af..%c0%afoutside", "not_found"),
    ("....//....//outside/secret.txt", "not_found"),
    ("...", "not_found"),
    ("\u{2025}/outside/secret.txt", "not_found"),
    ("\u{FF0E}\u{FF0E}/outside/secret.txt", "not_found"),
    ("..\u{2215}outside\u{2215}secret.txt", "not_found"),
    ("\u{FE52}\u{FE52}/outside/secret.txt", "not_found"),
    ("..\u{202E}/txt.terces", "not_found"),
    ("~/.ssh/id_rsa", "not_found"),
    ("$HOME/.bashrc", "not_found"),
    ("file:///etc/passwd", "not_found"),
    ("a.txt\0../../outside/secret.txt", "invalid_input"),
    ("\0", "invalid_input"),
    ("", "invalid_input"),
];

fn expand(p: &Project, payload: &str) -> String {
    payload.replace("{tmp}", p.tmp.path().to_str().unwrap())
}

/// Runs one payload through one tool in a fresh project (so a look-alike
/// one tool creates is not what the next one finds) and checks that the
/// outside, and the sibling whose name extends the project's, are untouched.
fn run_payload(tool: &dyn DynTool, payload: &str, want: &str) {
    let p = Project::new();
    std::fs::create_dir(p.tmp.path().join("app-evil")).unwrap();
    std::fs::write(p.tmp.path().join("app-evil/x.txt"), "evil\n").unwrap();
    p.write("a.txt", "inside\n");
    let before = p.outside_snapshot();
    let evil_before = crate::common::snapshot(&p.tmp.path().join("app-evil"));
    let name = tool.name();
    let input = tool.probe(&expand(&p, payload));
    // A tool that works on no path (the plan) only has to leave the outside alone.
    let pathless = tool.risk() != Risk::Shell
        && tool
            .assess(&p.root, &input, false)
            .is_ok_and(|a| a.paths.is_empty());
    match p.call(name, input) {
        Ok(out) if pathless => assert!(
            !out.to_string().contains("outside secret"),
            "{name} {payload:?}: {out}"
        ),
        Err(e) if pathless => assert_eq!(e.code.as_str(), "invalid_input", "{name} {payload:?}"),
        // Look-alikes are just odd names: anything created stays inside,
        // and nothing outside is read through them.
        Ok(out) => {
            assert_eq!(
                want, "not_found",
                "{name} {payload:?} should have failed: {out}"
            );
            assert!(
                !out.to_string().contains("outside secret"),
                "{name} {payload:?}: {out}"
            );
        }
        // A command's arguments are judged by its argument rules: what a
        // file tool refuses, they refuse too.
        Err(e) if tool.risk() == Risk::Shell && want != "not_found" => assert!(
            [want, "argument_not_allowed"].contains(&e.code.as_str()),
            "{name} {payload:?}: {e:?}"
        ),
        // Every file and search tool fails the way read_file does.
        Err(e) => assert_eq!(e.code.as_str(), want, "{name} {payload:?}"),
    }
    assert_eq!(p.outside_snapshot(), before, "{name} {payload:?}");
    assert_eq!(
        crate::common::snapshot(&p.tmp.path().join("app-evil")),
        evil_before,
        "{name} {payload:?}"
    );
}

/// Every registered tool, every payload: a tool added to the registry is
/// covered without anyone adding it here.
#[test]
fn traversal_payloads_fail_with_the_right_code_for_every_tool() {
    assert!(PAYLOADS.len() >= 30);
    assert!(tools::REGISTRY.len() >= 8);
    for tool in tools::REGISTRY {
        for (payload, want) in PAYLOADS {
            run_payload(*tool, payload, want);
        }
    }
}

#[test]
fn absolute_path_inside_the_root_is_accepted() {
    let p = Project::new();
    p.write("src/a.txt", "hi\n");
    let abs = p.path("src/a.txt");
    let out = p.call("read_file", json!({"path": abs})).unwrap();
    assert_eq!(out["path"], "src/a.txt");
}

/// Every registered tool that works on a path (its assessment of its
/// probe names one), with its name and risk: the tests below run each
/// hostile path through all of them, so a tool added to the registry is
/// covered without anyone adding it here.
fn path_tools(p: &Project) -> Vec<&'static dyn DynTool> {
    let tools: Vec<&'static dyn DynTool> = tools::REGISTRY
        .iter()
        .copied()
        .filter(|tool| {
            tool.assess(&p.root, &tool.probe("a.txt"), false)
                .is_ok_and(|a| !a.paths.is_empty())
        })
        .collect();
    let names: Vec<&str> = tools.iter().map(|t| t.name()).collect();
    for name in [
        "read_file",
        "write_file",
        "edit_file",
        "delete_file",
        "list_directory",
    ] {
        assert!(names.contains(&name), "{name} is not among {names:?}");
    }
    tools
}

/// The error code `tool`'s probe of `path` fails with, or `"ok"`; the
/// output of a success must not show the outside secret.
fn outcome(p: &Project, tool: &dyn DynTool, path: &str) -> String {
    match p.call(tool.name(), tool.probe(path)) {
        Ok(out) => {
            assert!(
                !out.to_string().contains("outside secret"),
                "{} {path:?} read the outside: {out}",
                tool.name()
            );
            "ok".to_string()
        }
        Err(e) => e.code.as_str().to_string(),
    }
}

/// Checks that `tool`'s probe of `path` fails with `want`, in a fresh
/// project `setup` prepares (so what one tool changed is not what the next
/// one finds), the outside untouched. A writing tool may instead succeed
/// on a path that is itself a link (deleting it removes the link, not what
/// it leads to): then the link is gone.
fn fails_or_unlinks(setup: &dyn Fn() -> Project, tool: &dyn DynTool, path: &str, want: &str) {
    let p = setup();
    let before = p.outside_snapshot();
    let name = tool.name();
    match p.call(name, tool.probe(path)) {
        Ok(out) => {
            assert_eq!(
                tool.risk(),
                Risk::Write,
                "{name} {path:?} should fail: {out}"
            );
            let link = p.path(path);
            assert!(
                std::fs::symlink_metadata(&link).is_err(),
                "{name} {path:?} succeeded and left the link: {out}"
            );
        }
        Err(e) => {
            assert_eq!(e.code.as_str(), want, "{name} {path:?}: {}", e.message);
            if want == "invalid_input" {
                assert!(
                    e.message.contains("symlink loop"),
                    "{name} {path:?}: {}",
                    e.message
                );
            }
        }
    }
    assert_eq!(p.outside_snapshot(), before, "{name} {path:?}");
}

/// Every path tool on every path of `through` (paths that go through a
/// link: each fails with `want`) and of `links` (links themselves: each
/// fails with `want`, or is removed by a writing tool).
fn every_tool(setup: &dyn Fn() -> Project, links: &[&str], through: &[&str], want: &str) {
    for tool in path_tools(&setup()) {
        for path in links {
            fails_or_unlinks(setup, tool, path, want);
        }
        for path in through {
            let p = setup();
            let before = p.outside_snapshot();
            let got = outcome(&p, tool, path);
            assert_eq!(got, want, "{} {path:?}", tool.name());
            assert_eq!(p.outside_snapshot(), before, "{} {path:?}", tool.name());
        }
    }
}

#[test]
fn final_symlink_out_is_refused_and_outside_untouched() {
    let setup = || {
        let p = Project::new();
        symlink(p.outside("secret.txt"), p.path("link.txt")).unwrap();
        symlink("../outside/secret.txt", p.path("rel-link.txt")).unwrap();
        p
    };
    every_tool(
        &setup,
        &["link.txt", "rel-link.txt"],
        &[],
        "path_outside_root",
    );
}

#[test]
fn intermediate_symlink_out_is_refused() {
    let setup = || {
        let p = Project::new();
        symlink(p.tmp.path().join("outside"), p.path("dirlink")).unwrap();
        symlink("../outside", p.path("rel-dirlink")).unwrap();
        p
    };
    let through = [
        "dirlink/secret.txt",
        "dirlink/new.txt",
        "dirlink/deeper/new.txt",
        "rel-dirlink/secret.txt",
        "rel-dirlink/new.txt",
        "rel-dirlink/deeper/new.txt",
    ];
    every_tool(
        &setup,
        &["dirlink", "rel-dirlink"],
        &through,
        "path_outside_root",
    );
}

#[test]
fn symlink_to_sibling_prefix_folder_is_refused() {
    let setup = || {
        let p = Project::new();
        std::fs::create_dir(p.tmp.path().join("app-evil")).unwrap();
        std::fs::write(p.tmp.path().join("app-evil/x.txt"), "evil\n").unwrap();
        symlink(p.tmp.path().join("app-evil"), p.path("evil")).unwrap();
        p
    };
    for tool in path_tools(&setup()) {
        for path in ["evil/x.txt", "evil/y.txt"] {
            let p = setup();
            let evil = p.tmp.path().join("app-evil");
            let before = crate::common::snapshot(&evil);
            assert_eq!(
                outcome(&p, tool, path),
                "path_outside_root",
                "{} {path}",
                tool.name()
            );
            assert_eq!(
                crate::common::snapshot(&evil),
                before,
                "{} {path}",
                tool.name()
            );
        }
    }
    every_tool(&setup, &["evil"], &[], "path_outside_root");
}

#[test]
fn symlink_loop_fails_cleanly() {
    let setup = || {
        let p = Project::new();
        symlink("loop-b", p.path("loop-a")).unwrap();
        symlink("loop-a", p.path("loop-b")).unwrap();
        symlink("self", p.path("self")).unwrap();
        p
    };
    every_tool(&setup, &["loop-a", "self"], &["loop-a/x"], "invalid_input");
    // Listing shows the links without following them.
    let p = setup();
    let out = p.call("list_directory", json!({"depth": 5})).unwrap();
    assert_eq!(out["entries"].as_array().unwrap().len(), 3);
}

#[test]
fn symlink_into_git_is_protected() {
    let setup = || {
        let p = Project::new();
        p.write(".git/config", "[core] secret\n");
        symlink(".git", p.path("gitlink")).unwrap();
        symlink(".git/config", p.path("config-link")).unwrap();
        p
    };
    let writers: Vec<_> = path_tools(&setup())
        .into_iter()
        .filter(|tool| tool.risk() == Risk::Write)
        .collect();
    assert!(writers.len() >= 3, "{} writing tools", writers.len());
    for tool in writers {
        let name = tool.name();
        for (path, allowed) in [
            // The repository's files, through a link to `.git` or to one of
            // them: never changed.
            ("gitlink/config", &["path_protected"][..]),
            ("config-link", &["path_protected", "ok"][..]),
            // A file that does not exist cannot be edited or deleted, and
            // is never created.
            (
                "gitlink/hooks/pre-commit",
                &["path_protected", "not_found"][..],
            ),
        ] {
            let p = setup();
            let got = outcome(&p, tool, path);
            assert!(allowed.contains(&got.as_str()), "{name} {path}: {got}");
            if got == "ok" {
                // Only the link itself was removed.
                assert!(p.path(path).symlink_metadata().is_err(), "{name} {path}");
            }
            assert_eq!(p.read(".git/config"), b"[core] secret\n", "{name} {path}");
            assert!(!p.path(".git/hooks").exists(), "{name} {path}");
        }
    }
}

#[test]
fn hard_link_to_outside_file_is_never_written_through() {
    let p = Project::new();
    let mut written = 0;
    for tool in path_tools(&p) {
        let _ = std::fs::remove_file(p.path("hl.txt"));
        std::fs::hard_link(p.outside("secret.txt"), p.path("hl.txt")).unwrap();
        let result = p.call(tool.name(), tool.probe("hl.txt"));
        let name = tool.name();
        // The link is a file of the project: every tool works on it, and a
        // change replaces the project's name, never the shared file.
        if tool.risk() == Risk::Write {
            assert!(result.is_ok(), "{name}: {result:?}");
            written += 1;
        }
        assert_eq!(
            std::fs::read(p.outside("secret.txt")).unwrap(),
            b"outside secret\n",
            "{name}"
        );
    }
    assert!(written >= 3, "{written} writing tools");
}

#[test]
fn swapping_a_folder_for_a_symlink_during_writes_never_writes_outside() {
    use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
    let p = Project::new();
    std::fs::create_dir(p.path("sub")).unwrap();
    let tools = path_tools(&p);
    let before = p.outside_snapshot();
    let stop = std::sync::Arc::new(AtomicBool::new(false));
    let swaps = std::sync::Arc::new(AtomicU32::new(0));
    let swapper = {
        let sub = p.path("sub");
        let parked = p.path("sub-real");
        let target = p.tmp.path().join("outside");
        let (stop, swaps) = (stop.clone(), swaps.clone());
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                // Folder -> symlink out -> folder, as fast as possible.
                if std::fs::rename(&sub, &parked).is_ok() {
                    let _ = symlink(&target, &sub);
                    let _ = std::fs::remove_file(&sub);
                    let _ = std::fs::rename(&parked, &sub);
                    swaps.fetch_add(1, Ordering::Relaxed);
                }
            }
        })
    };
    // Every path tool in turn, on a new file and on `sub/secret.txt`
    // (outside's `secret.txt` while the link is in place), until the
    // swapper has raced them many times (a loaded machine may give it
    // little time), or for 60 s at most.
    let until = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let mut succeeded = 0;
    let mut i = 0;
    while (i < 3000 || swaps.load(Ordering::Relaxed) < 200) && std::time::Instant::now() < until {
        let tool = tools[i % tools.len()];
        let path = if (i / tools.len()) % 2 == 0 {
            format!("sub/f{i}.txt")
        } else {
            "sub/secret.txt".to_string()
        };
        if outcome(&p, tool, &path) == "ok" {
            succeeded += 1;
        }
        i += 1;
    }
    stop.store(true, Ordering::Relaxed);
    swapper.join().unwrap();
    let swaps = swaps.load(Ordering::Relaxed);
    assert!(swaps > 10, "the race did not run ({swaps} swaps in 60 s)");
    assert_eq!(
        p.outside_snapshot(),
        before,
        "{succeeded} calls succeeded; nothing outside changed"
    );
    assert_eq!(
        std::fs::read(p.outside("secret.txt")).unwrap(),
        b"outside secret\n"
    );
}

#[test]
fn oversize_inputs_are_too_large() {
    let p = Project::new();
    let huge = "x".repeat(16 * 1024 * 1024 + 1);
    assert_eq!(
        p.code("write_file", json!({"path": "big.txt", "content": huge})),
        "too_large"
    );
    assert!(!p.path("big.txt").exists());
    p.write("small.txt", "a");
    assert_eq!(
        p.code(
            "edit_file",
            json!({"path": "small.txt", "old_string": "a", "new_string": huge})
        ),
        "too_large"
    );
    assert_eq!(p.read("small.txt"), b"a");
    let file = std::fs::File::create(p.path("sparse.log")).unwrap();
    file.set_len(65 * 1024 * 1024).unwrap();
    assert_eq!(
        p.code("read_file", json!({"path": "sparse.log"})),
        "too_large"
    );
    let long_path = "a/".repeat(3000);
    assert_eq!(p.code("read_file", json!({"path": long_path})), "too_large");
}

#[test]
fn non_utf8_file_names_are_listed_without_panic() {
    use std::os::unix::ffi::OsStrExt;
    let p = Project::new();
    let name = std::ffi::OsStr::from_bytes(b"bad\xffname.txt");
    std::fs::write(p.path("").join(name), "x").unwrap();
    let out = p.call("list_directory", json!({})).unwrap();
    assert_eq!(out["entries"][0]["path"], "bad\u{FFFD}name.txt");
}

#[test]
fn approval_is_required_when_the_policy_asks() {
    use corral_tools::dispatch::{call, CallContext};
    use corral_tools::policy::{Approval, Mode};
    let p = Project::new();
    let ask = CallContext::new(Mode::Ask, Approval::None);
    let err = call(
        &p.root,
        "write_file",
        json!({"path": "a.txt", "content": "x"}),
        &ask,
    )
    .unwrap_err();
    assert_eq!(err.code.as_str(), "approval_required");
    assert!(!p.path("a.txt").exists());
    let approved = CallContext::new(Mode::Ask, Approval::Granted);
    call(
        &p.root,
        "write_file",
        json!({"path": "a.txt", "content": "x"}),
        &approved,
    )
    .unwrap();
    let read_only = CallContext::new(Mode::ReadOnly, Approval::Granted);
    let err = call(&p.root, "delete_file", json!({"path": "a.txt"}), &read_only).unwrap_err();
    assert_eq!(err.code.as_str(), "denied");
    assert!(p.path("a.txt").exists());
    p.write(".env", "KEY=1");
    let err = call(&p.root, "read_file", json!({"path": ".env"}), &read_only).unwrap_err();
    assert_eq!(err.code.as_str(), "denied");
    let full = CallContext::new(Mode::FullAuto, Approval::None);
    let err = call(&p.root, "read_file", json!({"path": ".env"}), &full).unwrap_err();
    assert_eq!(err.code.as_str(), "approval_required");
}

#[test]
fn a_shell_call_the_rules_refuse_is_refused_before_anyone_is_asked() {
    use corral_tools::dispatch::{decide, CallContext};
    use corral_tools::policy::{Approval, Mode};
    let p = Project::new();
    let ask = CallContext::new(Mode::Ask, Approval::None);
    let err = decide(
        &p.root,
        "exec_shell",
        &json!({"command": "bash", "args": ["-c", "id"]}),
        &ask,
    )
    .unwrap_err();
    assert_eq!(err.code.as_str(), "command_not_allowed");
    let err = decide(
        &p.root,
        "exec_shell",
        &json!({"command": "rm", "args": ["-rf", "."]}),
        &ask,
    )
    .unwrap_err();
    assert_eq!(err.code.as_str(), "argument_not_allowed");
    let err = decide(&p.root, "exec_shell", &json!({"command": "git"}), &ask);
    assert!(err.is_ok(), "{err:?}");
}

#[test]
fn a_symlink_to_a_secret_is_judged_as_the_secret() {
    use corral_tools::dispatch::{call, CallContext};
    use corral_tools::policy::{Approval, Mode};
    let p = Project::new();
    p.write(".env", "KEY=1\n");
    std::fs::create_dir(p.path("docs")).unwrap();
    std::os::unix::fs::symlink("../.env", p.path("docs/notes.txt")).unwrap();
    let read = json!({"path": "docs/notes.txt"});
    let read_only = CallContext::new(Mode::ReadOnly, Approval::None);
    let err = call(&p.root, "read_file", read.clone(), &read_only).unwrap_err();
    assert_eq!(err.code.as_str(), "denied");
    assert!(err.message.contains(".env"), "{}", err.message);
    let full = CallContext::new(Mode::FullAuto, Approval::None);
    let err = call(&p.root, "read_file", read.clone(), &full).unwrap_err();
    assert_eq!(err.code.as_str(), "approval_required");
    let write = json!({"path": "docs/notes.txt", "content": "KEY=2\n"});
    let err = call(&p.root, "write_file", write, &full).unwrap_err();
    assert_eq!(err.code.as_str(), "approval_required");
    assert_eq!(std::fs::read_to_string(p.path(".env")).unwrap(), "KEY=1\n");
}

#[test]
fn a_boundary_cannot_be_stepped_over_through_a_symlink() {
    use corral_tools::dispatch::{call, CallContext};
    use corral_tools::policy::{Approval, Boundaries, Mode};
    let p = Project::new();
    p.write("src/main.rs", "fn main() {}\n");
    std::fs::create_dir(p.path("tests")).unwrap();
    std::os::unix::fs::symlink("../src", p.path("tests/link")).unwrap();
    let mut ctx = CallContext::new(Mode::FullAuto, Approval::Granted);
    ctx.boundaries = Boundaries {
        writable: Some(vec!["tests".into()]),
        blocked: vec![],
    };
    // A new file in a new folder inside the boundary is fine.
    call(
        &p.root,
        "write_file",
        json!({"path": "tests/unit/a.rs", "content": "x"}),
        &ctx,
    )
    .unwrap();
    for path in ["tests/link/main.rs", "tests/link/new.rs"] {
        let input = json!({"path": path, "content": "pwned"});
        let err = call(&p.root, "write_file", input, &ctx).unwrap_err();
        assert_eq!(err.code.as_str(), "denied", "{path}");
    }
    assert_eq!(
        std::fs::read_to_string(p.path("src/main.rs")).unwrap(),
        "fn main() {}\n"
    );
    assert!(!p.path("src/new.rs").exists());
    ctx.boundaries = Boundaries {
        writable: None,
        blocked: vec!["src".into()],
    };
    let err = call(
        &p.root,
        "read_file",
        json!({"path": "tests/link/main.rs"}),
        &ctx,
    )
    .unwrap_err();
    assert_eq!(err.code.as_str(), "denied");
}
