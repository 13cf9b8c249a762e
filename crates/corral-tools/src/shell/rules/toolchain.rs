//! Rules of the toolchains: `git` and `cargo npm yarn pnpm bun` (`node` is in [`super::node`]).
//!
//! These run project code by design (hooks are neutralized, but `npm run`,
//! `cargo build` and `node` execute what the project says), so their option
//! sets stay open. What is refused: options that reconfigure the program to
//! run something else (`git -c`, `--upload-pack`, `--exec`...), options that
//! point it at a folder outside the root (`-C`, `--git-dir`, `--prefix`,
//! `--manifest-path`...), and global installs.

use super::Ctx;
use crate::error::Result;

/// git subcommands that may run; an alias (which may be `!shell`) or any
/// other command is refused.
pub(super) const GIT_COMMANDS: &[&str] = &[
    "add",
    "am",
    "apply",
    "archive",
    "bisect",
    "blame",
    "branch",
    "bundle",
    "cat-file",
    "check-ignore",
    "checkout",
    "cherry",
    "cherry-pick",
    "clean",
    "clone",
    "commit",
    "config",
    "count-objects",
    "describe",
    "diff",
    "diff-files",
    "diff-index",
    "diff-tree",
    "fetch",
    "for-each-ref",
    "format-patch",
    "fsck",
    "gc",
    "grep",
    "help",
    "init",
    "log",
    "ls-files",
    "ls-remote",
    "ls-tree",
    "merge",
    "merge-base",
    "mv",
    "notes",
    "pull",
    "push",
    "range-diff",
    "rebase",
    "reflog",
    "remote",
    "reset",
    "restore",
    "rev-list",
    "rev-parse",
    "revert",
    "rm",
    "shortlog",
    "show",
    "show-ref",
    "sparse-checkout",
    "stash",
    "status",
    "submodule",
    "switch",
    "symbolic-ref",
    "tag",
    "var",
    "version",
    "whatchanged",
    "worktree",
];

/// git options before the subcommand that take no value.
const GIT_GLOBAL_FLAGS: &[&str] = &[
    "--no-pager",
    "-P",
    "-p",
    "--paginate",
    "--no-replace-objects",
    "--literal-pathspecs",
    "--glob-pathspecs",
    "--noglob-pathspecs",
    "--icase-pathspecs",
    "--no-optional-locks",
    "--bare",
    "--version",
    "-v",
    "--help",
    "-h",
    "--no-advice",
    "--no-lazy-fetch",
];

/// git options before the subcommand whose value is a path.
const GIT_GLOBAL_PATHS: &[&str] = &["-C", "--git-dir", "--work-tree"];

/// Options refused in any position, as `--name` or `--name=value`.
const GIT_DENIED_ANYWHERE: &[(&str, &str)] = &[
    ("--upload-pack", "it names a program for git to run"),
    ("--receive-pack", "it names a program for git to run"),
    ("--exec", "it names a program for git to run"),
    (
        "--config-env",
        "git configuration comes from the project, not the call",
    ),
    ("--exec-path", "it changes where git finds its programs"),
];

/// Subcommand options that are paths.
const GIT_SUB_PATHS: &[&str] = &[
    "--separate-git-dir",
    "--template",
    "--git-dir",
    "--work-tree",
    "--file",
];

/// `git [global options] <subcommand> [args]`.
pub(super) fn check_git(ctx: &Ctx<'_>, args: &[String]) -> Result<()> {
    for arg in args {
        for (name, why) in GIT_DENIED_ANYWHERE {
            if option_or_abbreviation(arg, name) {
                return Err(ctx.deny(arg, why));
            }
        }
    }
    let mut i = 0;
    let sub = loop {
        let Some(arg) = args.get(i) else {
            return Ok(());
        };
        i += 1;
        if !arg.starts_with('-') {
            break arg.as_str();
        }
        if GIT_GLOBAL_FLAGS.contains(&arg.as_str()) {
            continue;
        }
        if arg == "-c" || arg.starts_with("-c") {
            return Err(ctx.deny(
                arg,
                "git configuration comes from the project, not the call",
            ));
        }
        if let Some(value) = value_of(arg, args.get(i), GIT_GLOBAL_PATHS, &mut i) {
            let Some(value) = value else {
                return Ok(());
            };
            ctx.path(value, value)?;
            continue;
        }
        if option_is(arg, "--namespace") {
            if !arg.contains('=') {
                i += 1;
            }
            continue;
        }
        return Err(ctx.deny(
            arg,
            "not a git option this tool allows before the subcommand",
        ));
    };
    if !GIT_COMMANDS.contains(&sub) {
        return Err(ctx.deny(
            sub,
            "not a git subcommand this tool runs (aliases are not run either)",
        ));
    }
    let rest = &args[i..];
    let mut j = 0;
    while let Some(arg) = rest.get(j) {
        j += 1;
        if arg == "--" {
            break;
        }
        if let Some(value) = value_of(arg, rest.get(j), GIT_SUB_PATHS, &mut j) {
            if let Some(value) = value {
                ctx.path(value, value)?;
            }
            continue;
        }
        // `git config -f FILE` is `--file FILE` (elsewhere `-f` is --force).
        if sub == "config" && arg.starts_with("-f") && !arg.starts_with("--") {
            let value = match &arg[2..] {
                "" => {
                    j += 1;
                    rest.get(j - 1).map(String::as_str)
                }
                attached => Some(attached),
            };
            if let Some(value) = value {
                ctx.path(value, value)?;
            }
            continue;
        }
        check_git_sub_arg(ctx, sub, arg)?;
    }
    match sub {
        "config" if !git_config_reads(rest) => Err(ctx.deny(
            "config",
            "git config may only read here (--get, --get-all, --get-regexp, --list, get, list)",
        )),
        "bisect" if rest.first().is_some_and(|a| a == "run") => {
            Err(ctx.deny("run", "git bisect run runs another program"))
        }
        "submodule" if rest.iter().any(|a| a == "foreach") => {
            Err(ctx.deny("foreach", "git submodule foreach runs a shell command"))
        }
        _ => Ok(()),
    }
}

fn check_git_sub_arg(ctx: &Ctx<'_>, sub: &str, arg: &str) -> Result<()> {
    // Short options may come clustered (`-qu cmd`); a value-taking one ends
    // the cluster (`-bdev` is `-b dev`).
    let short = |denied: char, with_value: &str| short_cluster(arg, with_value).contains(&denied);
    match sub {
        // `-u` is upload-pack here (in `git add` it means --update).
        "clone" | "ls-remote" if short('u', CLONE_SHORT_VALUES) => {
            Err(ctx.deny(arg, "it names a program for git to run (upload-pack)"))
        }
        "clone" if short('c', CLONE_SHORT_VALUES) || option_or_abbreviation(arg, "--config") => {
            Err(ctx.deny(
                arg,
                "git configuration comes from the project, not the call",
            ))
        }
        "rebase" if short('x', REBASE_SHORT_VALUES) => {
            Err(ctx.deny(arg, "git rebase --exec runs a shell command"))
        }
        "grep"
            if short('O', GREP_SHORT_VALUES)
                || option_or_abbreviation(arg, "--open-files-in-pager") =>
        {
            Err(ctx.deny(arg, "it runs a pager program"))
        }
        _ => Ok(()),
    }
}

/// Short options that take a value, per subcommand (the value may follow
/// in the same argument).
const CLONE_SHORT_VALUES: &str = "bcjou";
const REBASE_SHORT_VALUES: &str = "sxXS";
const GREP_SHORT_VALUES: &str = "ABCefmO";

/// The option letters of a short-option argument (`-qu` → `q`, `u`), up to
/// and including the first that takes a value. Empty for anything else.
fn short_cluster(arg: &str, with_value: &str) -> Vec<char> {
    let Some(letters) = arg.strip_prefix('-').filter(|r| !r.starts_with('-')) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for c in letters.chars() {
        out.push(c);
        if with_value.contains(c) {
            break;
        }
    }
    out
}

/// The read forms of `git config`: scope and format flags, then a read
/// action (`--get`, `--list`, `get`, `list`...) and what it reads. The
/// action must come first: `git config core.hooksPath get` is the legacy
/// way to *set* `core.hooksPath` to `get`.
pub(super) fn git_config_reads(rest: &[String]) -> bool {
    const READS: &[&str] = &[
        "--get",
        "--get-all",
        "--get-regexp",
        "--get-urlmatch",
        "--get-color",
        "--get-colorbool",
        "-l",
        "--list",
        "get",
        "list",
    ];
    const FLAGS: &[&str] = &[
        "--global",
        "--system",
        "--local",
        "--worktree",
        "--show-origin",
        "--show-scope",
        "-z",
        "--null",
        "--name-only",
        "--includes",
        "--no-includes",
        "--bool",
        "--int",
        "--bool-or-int",
        "--path",
        "--expiry-date",
    ];
    let mut args = rest.iter().map(String::as_str);
    while let Some(arg) = args.next() {
        // Which file to read (its path is checked by the rules).
        if matches!(arg, "-f" | "--file" | "--blob") {
            args.next();
            continue;
        }
        if arg.starts_with("--file=")
            || arg.starts_with("--blob=")
            || arg.starts_with("-f") && !arg.starts_with("--")
        {
            continue;
        }
        if READS.contains(&arg) {
            // What follows is names, patterns and format flags; a second
            // action (`--unset`, `--add`...) would make git refuse anyway.
            return true;
        }
        if !(FLAGS.contains(&arg) || arg.starts_with("--type=")) {
            return false;
        }
    }
    false
}

/// Whether `arg` is the long option `name`, bare or with `=value`.
fn option_is(arg: &str, name: &str) -> bool {
    arg == name || arg.strip_prefix(name).is_some_and(|r| r.starts_with('='))
}

/// Whether `arg` is the long option `name` or an abbreviation of it
/// (`--upload-pa=x`): git accepts any unique prefix. The child also runs
/// with `GIT_TEST_DISALLOW_ABBREVIATED_OPTIONS=1`, so the commands that
/// parse options the usual way refuse abbreviations themselves (`blame`
/// does not).
pub(super) fn option_or_abbreviation(arg: &str, name: &str) -> bool {
    let given = arg.split_once('=').map_or(arg, |(n, _)| n);
    given.len() > 3 && given.starts_with("--") && name.starts_with(given)
}

/// If `arg` is one of `names` (`--x value`, `--x=value`; `-C value`),
/// returns its value (`None` inside when the value is missing) and moves
/// `i` past a separate value.
fn value_of<'a>(
    arg: &'a str,
    next: Option<&'a String>,
    names: &[&str],
    i: &mut usize,
) -> Option<Option<&'a str>> {
    for name in names {
        if arg == *name {
            *i += 1;
            return Some(next.map(String::as_str));
        }
        if let Some(v) = arg.strip_prefix(name).and_then(|r| r.strip_prefix('=')) {
            return Some(Some(v));
        }
    }
    None
}

/// Per tool: options whose value is a path, and options refused.
fn package_tool_rules(program: &str) -> (&'static [&'static str], &'static [&'static str]) {
    match program {
        "cargo" => (
            &[
                "--manifest-path",
                "--target-dir",
                "--artifact-dir",
                "--out-dir",
                "--lockfile-path",
                "--root",
                "--path",
                "-C",
            ],
            &[],
        ),
        "npm" => (
            &[
                "--prefix",
                "-C",
                "--cache",
                "--userconfig",
                "--globalconfig",
            ],
            &["-g", "--global", "--location=global"],
        ),
        "yarn" => (
            &[
                "--cwd",
                "--cache-folder",
                "--modules-folder",
                "--global-folder",
                "--link-folder",
            ],
            &["global"],
        ),
        "pnpm" => (
            &[
                "-C",
                "--dir",
                "--store-dir",
                "--virtual-store-dir",
                "--modules-dir",
                "--global-dir",
            ],
            &["-g", "--global"],
        ),
        _ => (&["--cwd", "--cache-dir"], &["-g", "--global"]),
    }
}

/// `cargo npm yarn pnpm bun`: path options inside the root, no global
/// installs. Arguments after `--` belong to the program being run.
pub(super) fn check_package_tool(ctx: &Ctx<'_>, args: &[String]) -> Result<()> {
    let (paths, denied) = package_tool_rules(ctx.program);
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        i += 1;
        if arg == "--" {
            break;
        }
        if denied.contains(&arg.as_str())
            || (arg == "--location" && args.get(i).is_some_and(|v| v == "global"))
        {
            return Err(ctx.deny(arg, "global installs change the machine, not the project"));
        }
        if ctx.program == "cargo" && option_is(arg, "--config") {
            let value = match arg.split_once('=') {
                Some((_, v)) => Some(v),
                None => {
                    i += 1;
                    args.get(i - 1).map(String::as_str)
                }
            };
            // `--config KEY=VALUE` is inline; anything else is a file.
            if let Some(file) = value.filter(|v| !v.contains('=')) {
                ctx.path(file, file)?;
            }
            continue;
        }
        if let Some(Some(value)) = value_of(arg, args.get(i), paths, &mut i) {
            ctx.path(value, value)?;
        }
    }
    Ok(())
}
