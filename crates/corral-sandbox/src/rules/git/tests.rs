//! The one reading of git's arguments, and the verdicts drawn from it.

#![allow(clippy::unwrap_used, clippy::disallowed_methods)]

use super::super::Ctx;
use super::*;
use corral_fs::ProjectRoot;

fn args(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

/// An item in a short form: `-name=value` for an option (`?` when it
/// names no row), `word`, `/pathspec`, with `^` when taken.
fn show(item: &Item<'_>) -> String {
    let taken = if item.taken { "^" } else { "" };
    match &item.what {
        What::Word { pathspec: false } => format!("{taken}{}", item.arg),
        What::Word { pathspec: true } => format!("{taken}/{}", item.arg),
        What::Opt(o) => {
            let known = match o.rows.as_slice() {
                [] => "?".to_string(),
                rows => rows
                    .iter()
                    .map(|r| {
                        if r.long.is_empty() {
                            r.short.map(String::from).unwrap_or_default()
                        } else {
                            r.long.to_string()
                        }
                    })
                    .collect::<Vec<_>>()
                    .join("|"),
            };
            let value = o.value.map(|v| format!("={v}")).unwrap_or_default();
            format!("{taken}-{}({known}){value}", o.name)
        }
    }
}

fn read(list: &[&str]) -> (Vec<String>, Option<String>, Vec<String>) {
    let a = args(list);
    let parsed = GitArgs::parse(&a);
    (
        parsed.global.iter().map(show).collect(),
        parsed.sub.map(str::to_string),
        parsed.items.iter().map(show).collect(),
    )
}

#[test]
fn global_options_are_read_by_exact_name() {
    let (global, sub, items) = read(&["--no-pager", "-C", "src", "--git-dir=.git", "log"]);
    assert_eq!(
        global,
        ["-no-pager(no-pager)", "-C(C)=src", "-git-dir(git-dir)=.git"]
    );
    assert_eq!(sub.as_deref(), Some("log"));
    assert!(items.is_empty());
    // `-ccore.pager=id` is `-c` with its value; `--git-d` is no option.
    let (global, sub, _) = read(&["-ccore.pager=id", "--git-d=x", "-C=src", "status"]);
    assert_eq!(global, ["-c(c)=core.pager=id", "-git-d(?)=x", "-C(?)==src"]);
    assert_eq!(sub.as_deref(), Some("status"));
    // `-c` and `--config-env` take the next argument, as git reads
    // them (the rules refuse both): it is not the subcommand.
    let (global, sub, _) = read(&["-c", "x=y", "--config-env", "a=B", "pull"]);
    assert_eq!(global, ["-c(c)=x=y", "-config-env(config-env)=a=B"]);
    assert_eq!(sub.as_deref(), Some("pull"));
    // Only flags: no subcommand.
    let (global, sub, _) = read(&["-P", "--version"]);
    assert_eq!(global, ["-P(no-pager)", "-version(version)"]);
    assert_eq!(sub, None);
}

#[test]
fn long_options_abbreviated_and_with_values() {
    let (_, _, items) = read(&[
        "clone",
        "--upload-pa=x",
        "--conf",
        "k=v",
        "--branch",
        "dev",
        "--origin=up",
        "a",
    ]);
    assert_eq!(
        items,
        [
            "-upload-pa(upload-pack)=x",
            "-conf(config)",
            "k=v",
            "-branch(branch)=dev",
            "^dev",
            "-origin(origin)=up",
            "a",
        ]
    );
    // An abbreviation of several rows names them all, and takes no
    // value from the next argument: which one git means is not known.
    let (_, _, items) = read(&["diff", "--out", "x.patch", "--ou=y", "--cont"]);
    assert_eq!(
        items,
        [
            "-out(output|output-directory)",
            "x.patch",
            "-ou(output|output-directory)=y",
            "-cont(contents)",
        ]
    );
    // An exact name wins over the longer one it is a prefix of.
    let (_, _, items) = read(&["format-patch", "--output", "p", "--output-d=q"]);
    assert_eq!(
        items,
        ["-output(output)=p", "^p", "-output-d(output-directory)=q"]
    );
    // The subcommand's own row shadows the one of every subcommand.
    let (_, _, items) = read(&["grep", "--open-files=vim", "--cont", "3"]);
    assert_eq!(
        items,
        [
            "-open-files(open-files-in-pager)=vim",
            "-cont(context|contents)",
            "3",
        ]
    );
}

#[test]
fn short_options_cluster_and_take_the_rest_or_the_next_argument() {
    let (_, _, items) = read(&["clone", "-qu", "x", "-bdebug", "-qb", "main", "a"]);
    assert_eq!(
        items,
        [
            "-q(?)=u",
            "-u(upload-pack)",
            "x",
            "-b(branch)=debug",
            "-q(?)=b",
            "-b(branch)=main",
            "^main",
            "a",
        ]
    );
    // `-S<keyid>` takes only what is attached: `x` is its value here.
    let (_, _, items) = read(&["rebase", "-ix", "main", "-Sx"]);
    assert_eq!(items, ["-i(?)=x", "-x(exec)", "main", "-S(gpg-sign)=x"]);
    // A letter is the subcommand's: `-f` is `--file` only in config.
    let (_, _, items) = read(&["config", "-f/etc/my.cnf", "--list"]);
    assert_eq!(items, ["-f(file)=/etc/my.cnf", "-list(?)"]);
    let (_, _, items) = read(&["checkout", "-f", "main"]);
    assert_eq!(items, ["-f(?)", "main"]);
    // An unknown letter keeps what would be its value.
    let (_, _, items) = read(&["blame", "-nS.npmrc", "a.txt"]);
    assert_eq!(items, ["-n(?)=S.npmrc", "-S(S)=.npmrc", "a.txt"]);
}

#[test]
fn double_dash_ends_the_options_unless_it_is_a_value() {
    let (_, _, items) = read(&["log", "-p", "--", "--output=x", "a.txt"]);
    assert_eq!(items, ["-p(?)", "/--output=x", "/a.txt"]);
    let (_, _, items) = read(&["grep", "-e", "--", "-O"]);
    assert_eq!(items, ["-e(e)=--", "^--", "-O(open-files-in-pager)"]);
}

/// The three verdicts of one reading, side by side.
#[test]
fn one_reading_drives_the_rules_the_read_only_table_and_secrets() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join(".npmrc"), "token\n").unwrap();
    std::fs::write(dir.path().join("a.txt"), "a\n").unwrap();
    let outside = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(outside.path(), dir.path().join("out")).unwrap();
    let root = ProjectRoot::open(dir.path()).unwrap();
    let ctx = Ctx {
        root: &root,
        program: "git",
    };
    // (args, refused argument, read-only, named secret)
    type Row<'a> = (&'a [&'a str], Option<&'a str>, bool, Option<&'a str>);
    let rows: &[Row<'_>] = &[
        (&["status"], None, true, None),
        (&["show", "HEAD:.env"], None, true, Some("HEAD:.env")),
        // the blame revisions file, attached, abbreviated or separate
        (
            &["blame", "-S.npmrc", "a.txt"],
            None,
            true,
            Some("-S.npmrc"),
        ),
        (
            &["blame", "-S", ".npmrc", "a.txt"],
            None,
            true,
            Some(".npmrc"),
        ),
        (
            &["blame", "--ignore-revs=.npmrc", "a.txt"],
            None,
            true,
            Some("--ignore-revs=.npmrc"),
        ),
        (&["blame", "-Sout/x", "a.txt"], None, false, None),
        (
            &["blame", "--cont", "/etc/hostname", "a.txt"],
            None,
            false,
            None,
        ),
        // writes, runs, reads outside: abbreviated or `=`
        (&["diff", "--ou=x.patch"], None, false, None),
        (&["diff", "--output", "x.patch"], None, false, None),
        (&["log", "-m", "--ext-diff"], None, false, None),
        (&["log", "--pretty=%G?"], None, false, None),
        (&["diff", "out/x", "a.txt"], None, false, None),
        (&["diff", "main..dev"], None, true, None),
        // a pathspec that looks like an option is a pathspec
        (&["log", "--", "--output=x"], None, true, None),
        // refused, whatever the reading around it
        (&["clone", "-qu", "x", "a"], Some("-qu"), false, None),
        (
            &["clone", "--conf", "k=v", "a"],
            Some("--conf"),
            false,
            None,
        ),
        (&["grep", "-e", "x", "-iO"], Some("-iO"), false, None),
        (
            &["log", "--", "--upload-pa=x"],
            Some("--upload-pa=x"),
            true,
            None,
        ),
        (&["-C", "out", "status"], Some("out"), false, None),
        (
            &["commit", "--file", "out/msg"],
            Some("out/msg"),
            false,
            None,
        ),
        (
            &["config", "--file=.npmrc", "--get", "a.b"],
            None,
            false,
            Some("--file=.npmrc"),
        ),
        (&["config", "-f", "a.txt", "--list"], None, false, None),
        (
            &["config", "--fi", "a.txt", "--get", "x.y"],
            None,
            false,
            None,
        ),
        (
            &["config", "core.hooksPath", "get"],
            Some("config"),
            false,
            None,
        ),
        // a key that holds a credential asks
        (&["config", "--get", "user.name"], None, true, None),
        (
            &["config", "--get", "http.https://example.com/.extraheader"],
            None,
            false,
            None,
        ),
        (
            &["config", "get", "credential.helper"],
            None,
            false,
            Some("credential.helper"),
        ),
        (&["config", "--get", "url.x.insteadOf"], None, false, None),
        (&["stash", "list"], None, true, None),
        (&["stash", "--", "list"], None, false, None),
        (&["branch", "-vv"], None, true, None),
        (&["branch", "--", "-a"], None, false, None),
        (&["-P", "--version"], None, true, None),
        (&["--version", "status"], None, false, None),
    ];
    for (list, refused, read_only, secret) in rows {
        let a = args(list);
        let parsed = GitArgs::parse(&a);
        let checked = parsed.check(&ctx);
        match refused {
            None => assert!(checked.is_ok(), "{list:?}: {checked:?}"),
            Some(arg) => {
                let err = checked.unwrap_err();
                assert_eq!(err.details["argument"], *arg, "{list:?}: {err:?}");
            }
        }
        assert_eq!(parsed.is_read_only(&root), *read_only, "{list:?}");
        assert_eq!(parsed.named_secret(&root).as_deref(), *secret, "{list:?}");
    }
}

/// git's write targets (`--output`, `--work-tree`, `format-patch -o`)
/// never lead into a git dir, named so, through a link the clone ships, or
/// from where `-C` moved git.
#[test]
fn no_write_target_leads_into_git_s_own_folder() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    std::fs::create_dir_all(p.join(".git/hooks")).unwrap();
    std::fs::write(p.join(".git/config"), "").unwrap();
    std::fs::create_dir_all(p.join("sub/.git")).unwrap();
    std::fs::create_dir(p.join("src")).unwrap();
    std::os::unix::fs::symlink(".git/config", p.join("CHANGELOG.md")).unwrap();
    std::os::unix::fs::symlink(".git", p.join("dist")).unwrap();
    std::os::unix::fs::symlink("../.git", p.join("src/up")).unwrap();
    let root = ProjectRoot::open(p).unwrap();
    let ctx = Ctx {
        root: &root,
        program: "git",
    };
    let refused: &[(&[&str], &str)] = &[
        (
            &[
                "--work-tree=.git",
                "checkout",
                "HEAD",
                "--",
                "hooks/pre-commit",
            ],
            "--work-tree=.git",
        ),
        (&["--work-tree", ".git", "checkout", "."], "--work-tree"),
        (&["--work-tree=dist", "checkout", "."], "--work-tree=dist"),
        (
            &["--work-tree=sub/.git", "checkout", "."],
            "--work-tree=sub/.git",
        ),
        (
            &["log", "-1", "--format=%B", "--output=.git/config"],
            "--output=.git/config",
        ),
        (&["log", "--output=CHANGELOG.md"], "--output=CHANGELOG.md"),
        (&["log", "--outp=dist/config"], "--outp=dist/config"),
        (&["diff", "--output", "dist/hooks/pre-commit"], "--output"),
        (&["format-patch", "-o", ".git/hooks", "HEAD~1"], "-o"),
        (
            &["format-patch", "--output-directory=dist"],
            "--output-directory=dist",
        ),
        (&["-C", ".git", "--work-tree=.", "checkout", "."], "-C"),
        (
            &["-C", "src", "log", "--output=up/config"],
            "--output=up/config",
        ),
        (
            &["bundle", "create", ".git/commondir", "HEAD"],
            ".git/commondir",
        ),
        (&["worktree", "add", "dist/x"], "dist/x"),
        (
            &["mv", "a.txt", ".git/hooks/pre-commit"],
            ".git/hooks/pre-commit",
        ),
        (&["-C", "src", "mv", "a.txt", "up/hooks/x"], "up/hooks/x"),
    ];
    for (list, arg) in refused {
        let a = args(list);
        let err = GitArgs::parse(&a).check(&ctx).unwrap_err();
        assert_eq!(err.details["argument"], *arg, "{list:?}: {err:?}");
        assert!(err.message.contains("git's own folder"), "{err:?}");
    }
    let allowed: &[&[&str]] = &[
        &["--work-tree=.", "status"],
        &["--git-dir=.git", "log"],
        &["log", "--output=history.txt"],
        &["-C", "src", "log", "--output=history.txt"],
        &["format-patch", "-o", "patches", "HEAD~1"],
        &["bundle", "create", "repo.bundle", "HEAD"],
        &["checkout", "main", "--", "src"],
        &["log", "--", ".git"],
    ];
    for list in allowed {
        let a = args(list);
        let checked = GitArgs::parse(&a).check(&ctx);
        assert!(checked.is_ok(), "{list:?}: {checked:?}");
    }
}

/// A repository moved by a `.git` file (`gitdir: gd`) is git's own folder
/// too, wherever it lies in the project.
#[test]
fn a_moved_git_dir_is_no_write_target_either() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    std::fs::create_dir_all(p.join("gd/hooks")).unwrap();
    std::fs::write(p.join(".git"), "gitdir: gd\n").unwrap();
    let root = ProjectRoot::open(p).unwrap();
    let ctx = Ctx {
        root: &root,
        program: "git",
    };
    let a = args(&["log", "--output=gd/config"]);
    let err = GitArgs::parse(&a).check(&ctx).unwrap_err();
    assert_eq!(err.details["argument"], "--output=gd/config", "{err:?}");
}

/// What a call must write in git's own folder beyond ordinary work, by
/// subcommand, verb and option (abbreviations and clusters as read).
#[test]
fn calls_that_write_git_s_config_are_known() {
    let beyond = |list: &[&str]| {
        let a = args(list);
        GitArgs::parse(&a).writes_beyond().map(|w| w.names.to_vec())
    };
    let config = Some(vec!["config"]);
    assert_eq!(
        beyond(&["remote", "add", "o", "https://example.com/r"]),
        config
    );
    assert_eq!(beyond(&["remote", "-v", "set-url", "o", "x"]), config);
    assert_eq!(beyond(&["remote", "-v"]), None);
    assert_eq!(beyond(&["remote", "show", "o"]), None);
    assert_eq!(
        beyond(&["submodule", "add", "https://example.com/s", "s"]),
        Some(vec!["config", "modules"])
    );
    assert_eq!(beyond(&["submodule", "status"]), None);
    assert_eq!(beyond(&["branch", "-u", "origin/main"]), config);
    assert_eq!(beyond(&["branch", "--set-upstream-to=origin/main"]), config);
    assert_eq!(beyond(&["branch", "-m", "old", "new"]), config);
    assert_eq!(beyond(&["branch", "topic"]), None);
    assert_eq!(beyond(&["push", "-u", "origin", "main"]), config);
    assert_eq!(beyond(&["push", "origin", "main"]), None);
    assert_eq!(beyond(&["checkout", "-t", "origin/x"]), config);
    assert_eq!(beyond(&["switch", "--track", "origin/x"]), config);
    assert_eq!(beyond(&["commit", "-m", "x"]), None);
}
