#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::disallowed_methods
)]
//! The one table of the built-in programs ([`PROGRAMS`]) against what is
//! made of it and what is said of it: every program has argument rules
//! that judge a call, and `docs/security.md` lists the same programs, in
//! the same order, with the same kind of read-only verdict.

mod shell_common;

use corral_fs::ErrorCode;
use corral_sandbox::{check_with, ReadOnly, ShellRun, ALLOWED_PROGRAMS, PROGRAMS};
use shell_common::*;
use std::path::Path;

/// Per program, a call its rules let through and one they refuse, naming
/// the argument they refuse.
const CALLS: &[(&str, &[&str], &[&str], &str)] = &[
    ("git", &["status"], &["-C", "/etc", "status"], "/etc"),
    (
        "cargo",
        &["build"],
        &["build", "--target-dir", "/tmp/t"],
        "/tmp/t",
    ),
    ("npm", &["test"], &["install", "-g", "x"], "-g"),
    ("yarn", &["install"], &["--cwd", "/tmp", "install"], "/tmp"),
    ("pnpm", &["install"], &["-C", "/etc", "install"], "/etc"),
    ("node", &["-e", "1"], &["/tmp/evil.js"], "/tmp/evil.js"),
    ("bun", &["install"], &["add", "--global", "x"], "--global"),
    (
        "python3",
        &["-m", "unittest"],
        &["/tmp/evil.py"],
        "/tmp/evil.py",
    ),
    ("pytest", &["-q"], &["--rootdir=/"], "--rootdir=/"),
    ("uv", &["sync"], &["run", "--project", ".."], ".."),
    ("make", &["test"], &["-C", "/tmp"], "/tmp"),
    ("go", &["test", "./..."], &["-C", "..", "build"], ".."),
    ("ls", &["-la"], &["/etc"], "/etc"),
    (
        "find",
        &[".", "-name", "*.rs"],
        &[".", "-delete"],
        "-delete",
    ),
    (
        "grep",
        &["-n", "x", "a.txt"],
        &["x", "/etc/passwd"],
        "/etc/passwd",
    ),
    ("mkdir", &["-p", "new/dir"], &["-p", "../up"], "../up"),
    ("rm", &["-f", "a.txt"], &["-rf", "."], "."),
    (
        "mv",
        &["a.txt", "b.txt"],
        &["a.txt", "../b.txt"],
        "../b.txt",
    ),
    (
        "cp",
        &["a.txt", "b.txt"],
        &["/etc/passwd", "b.txt"],
        "/etc/passwd",
    ),
    ("touch", &["a.txt"], &["../a.txt"], "../a.txt"),
];

/// The argument the rules refused, or `None` when they let the call
/// through (whether or not the program is installed here: the rules
/// judge before it is looked up).
fn refused(run: &ShellRun, program: &str, args: &[&str]) -> Option<String> {
    let (_dir, root) = project();
    std::fs::write(root.path().join("a.txt"), "x\n").unwrap();
    match check_with(&root, &input(program, args), run) {
        Ok(()) => None,
        Err(e) if e.code == ErrorCode::NotFound => None,
        Err(e) => {
            assert_eq!(
                e.code,
                ErrorCode::ArgumentNotAllowed,
                "{program} {args:?}: {e:?}"
            );
            Some(
                e.details["argument"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
            )
        }
    }
}

#[test]
fn every_program_has_argument_rules_that_judge_a_call() {
    let names: Vec<&str> = CALLS.iter().map(|(name, ..)| *name).collect();
    assert_eq!(
        names, ALLOWED_PROGRAMS,
        "one row of calls per program of the table, in its order"
    );
    let run = ShellRun::default();
    for (program, allowed, denied, argument) in CALLS {
        assert_eq!(
            refused(&run, program, allowed),
            None,
            "{program} {allowed:?}"
        );
        assert_eq!(
            refused(&run, program, denied).as_deref(),
            Some(*argument),
            "{program} {denied:?}"
        );
    }
}

#[test]
fn a_program_without_rules_lets_the_same_calls_through() {
    // What the test above would see of a program with no rules: the user's
    // own (`perl` standing in for one) is judged by none.
    let run = ShellRun {
        extra_programs: vec!["perl".to_string()],
        ..ShellRun::default()
    };
    for (_, _, denied, _) in CALLS {
        assert_eq!(refused(&run, "perl", denied), None, "perl {denied:?}");
    }
}

/// The rows of the table `docs/security.md` gives under "The built-in
/// programs": each one's name (the first cell, backquoted) and its
/// read-only cell.
fn documented() -> Vec<(String, String)> {
    let doc = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/security.md"),
    )
    .unwrap();
    let section = doc
        .split("\n## The built-in programs\n")
        .nth(1)
        .expect("docs/security.md has a section \"The built-in programs\"");
    let section = section.split("\n## ").next().unwrap_or_default();
    section
        .lines()
        .filter(|line| line.starts_with("| `"))
        .map(|line| {
            let cells: Vec<&str> = line.split('|').map(str::trim).collect();
            let name = cells.get(1).map_or("", |c| c.trim_matches('`'));
            let read_only = cells.get(2).copied().unwrap_or_default();
            (name.to_string(), read_only.to_string())
        })
        .collect()
}

/// The kind of verdict a read-only cell says, by its first words.
fn kind_said(cell: &str) -> &'static str {
    if cell.starts_with("never") {
        "never"
    } else if cell.starts_with("`--version` or `-V` alone") {
        "--version alone"
    } else if cell.starts_with("when ") {
        "judged"
    } else {
        "unsaid"
    }
}

fn kind_of(read_only: ReadOnly) -> &'static str {
    match read_only {
        ReadOnly::Never => "never",
        ReadOnly::VersionOnly => "--version alone",
        ReadOnly::Judged(_) => "judged",
    }
}

#[test]
fn the_security_doc_lists_the_table() {
    let documented = documented();
    let names: Vec<&str> = documented.iter().map(|(name, _)| name.as_str()).collect();
    let table: Vec<&str> = PROGRAMS.iter().map(|p| p.name).collect();
    assert_eq!(names, table, "docs/security.md, The built-in programs");
    for ((name, cell), program) in documented.iter().zip(PROGRAMS) {
        assert_eq!(
            kind_said(cell),
            kind_of(program.read_only),
            "docs/security.md says `{name}` is read-only {cell:?}"
        );
    }
}

#[test]
fn the_docs_parser_reads_a_row_and_its_verdict() {
    assert_eq!(kind_said("never: it runs project code"), "never");
    assert_eq!(
        kind_said("`--version` or `-V` alone, unless"),
        "--version alone"
    );
    assert_eq!(kind_said("when it follows no link"), "judged");
    assert_eq!(kind_said("always"), "unsaid");
    assert!(documented()
        .iter()
        .all(|(name, cell)| !name.is_empty() && !cell.is_empty()));
}
