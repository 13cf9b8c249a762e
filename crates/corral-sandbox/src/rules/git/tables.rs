//! git's option tables and subcommand lists, in the vocabulary of
//! [`super::super::gnu`]: what the one reading knows and what the verdicts
//! allow.

use super::super::gnu::{opt, Kind, Opt};
use Kind::{Denied, Flag, Optional, Path, Value};

const CONFIG_FROM_CALL: &str = "git configuration comes from the project, not the call";
const RUNS_PROGRAM: &str = "it names a program for git to run";
const MOVES_REPOSITORY: &str =
    "it moves or templates the repository, whose config would then be an ordinary file of the project";

/// Subcommands that may run; an alias (which may be `!shell`) or any other
/// command is refused.
pub(super) const COMMANDS: &[&str] = &[
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

/// Refused wherever they stand (before or after the subcommand, as a
/// value, after `--`) and however abbreviated: matched on every argument
/// as written, whatever the reading makes of it.
pub(super) const DENIED_ANYWHERE: &[(&str, &str)] = &[
    ("--upload-pack", RUNS_PROGRAM),
    ("--receive-pack", RUNS_PROGRAM),
    ("--exec", RUNS_PROGRAM),
    ("--config-env", CONFIG_FROM_CALL),
    ("--exec-path", "it changes where git finds its programs"),
];

/// Before the subcommand: every option the rules allow, and the ones they
/// name to refuse.
pub(super) const GLOBAL: &[Opt] = &[
    opt("no-pager", Some('P'), Flag),
    opt("paginate", Some('p'), Flag),
    opt("no-replace-objects", None, Flag),
    opt("literal-pathspecs", None, Flag),
    opt("glob-pathspecs", None, Flag),
    opt("noglob-pathspecs", None, Flag),
    opt("icase-pathspecs", None, Flag),
    opt("no-optional-locks", None, Flag),
    opt("bare", None, Flag),
    opt("version", Some('v'), Flag),
    opt("help", Some('h'), Flag),
    opt("no-advice", None, Flag),
    opt("no-lazy-fetch", None, Flag),
    opt("", Some('C'), Path),
    opt("git-dir", None, Path),
    opt("work-tree", None, Path),
    opt("namespace", None, Value),
    opt("", Some('c'), Denied(CONFIG_FROM_CALL)),
    opt("config-env", None, Denied(CONFIG_FROM_CALL)),
    opt(
        "exec-path",
        None,
        Denied("it changes where git finds its programs"),
    ),
];

/// After any subcommand: the long options the verdicts need to know.
pub(super) const ANY: &[Opt] = &[
    // A repository outside `.git/` (`--separate-git-dir`) or made from a
    // template folder (which may plant `commondir` or `config`).
    opt("separate-git-dir", None, Denied(MOVES_REPOSITORY)),
    opt("template", None, Denied(MOVES_REPOSITORY)),
    // Paths, kept inside the root by the rules.
    opt("git-dir", None, Path),
    opt("work-tree", None, Path),
    opt("file", None, Path),
    // Where git writes: kept inside the root and out of git's own folder
    // ([`WRITES_TO`]); off the read-only table ([`LEAVES_READ_ONLY`]).
    opt("output", None, Path),
    opt("output-directory", None, Path),
    // Off the read-only table ([`LEAVES_READ_ONLY`]).
    opt("ext-diff", None, Flag),
    opt("textconv", None, Flag),
    opt("no-index", None, Flag),
    opt("contents", None, Value),
    opt("open-files-in-pager", Some('O'), Optional),
    opt("untracked", None, Flag),
    opt("no-exclude-standard", None, Flag),
    opt("blob", None, Value),
    opt("show-signature", None, Flag),
    // Their value is read for `%G` (a signature check runs gpg).
    opt("format", None, Optional),
    opt("pretty", None, Optional),
];

/// The options of one subcommand whose letters mean something of their
/// own there; they come before [`ANY`] (`-f` is `--file` only in `config`,
/// `-c` is `--config` only in `clone`).
pub(super) fn table(sub: &str) -> &'static [Opt] {
    match sub {
        "clone" => CLONE,
        "ls-remote" => LS_REMOTE,
        "rebase" => REBASE,
        "grep" => GREP,
        "config" => CONFIG,
        "blame" => BLAME,
        "format-patch" => FORMAT_PATCH,
        _ => &[],
    }
}

const UPLOAD_PACK: Kind = Denied("it names a program for git to run (upload-pack)");

const CLONE: &[Opt] = &[
    opt("upload-pack", Some('u'), UPLOAD_PACK),
    opt("config", Some('c'), Denied(CONFIG_FROM_CALL)),
    opt("branch", Some('b'), Value),
    opt("origin", Some('o'), Value),
    opt("jobs", Some('j'), Value),
];

const LS_REMOTE: &[Opt] = &[
    opt("upload-pack", Some('u'), UPLOAD_PACK),
    opt("server-option", Some('o'), Value),
];

const REBASE: &[Opt] = &[
    opt(
        "exec",
        Some('x'),
        Denied("git rebase --exec runs a shell command"),
    ),
    opt("strategy", Some('s'), Value),
    opt("strategy-option", Some('X'), Value),
    opt("gpg-sign", Some('S'), Optional),
];

const GREP: &[Opt] = &[
    opt(
        "open-files-in-pager",
        Some('O'),
        Denied("it runs a pager program"),
    ),
    opt("after-context", Some('A'), Value),
    opt("before-context", Some('B'), Value),
    opt("context", Some('C'), Value),
    opt("", Some('e'), Value),
    opt("", Some('f'), Value),
    opt("max-count", Some('m'), Value),
];

const CONFIG: &[Opt] = &[opt("file", Some('f'), Path)];

/// `-o <dir>`: where the patches are written.
const FORMAT_PATCH: &[Opt] = &[opt("output-directory", Some('o'), Path)];

/// The options whose value is where git writes, before the subcommand or
/// after it: a file (`--output`, `git log --output=x`), a folder it fills
/// (`format-patch -o`) or checks files out into (`--work-tree`). None may
/// lead into a git dir, where the user's own git would later read what
/// was written as its config or run it as a hook.
pub(super) const WRITES_TO: &[&str] = &["work-tree", "output", "output-directory"];

pub(super) const INTO_GIT_DIR: &str =
    "it leads into git's own folder, whose config and hooks the user's git reads and runs later";

/// `-S <file>`: revisions to skip, read from a file.
const BLAME: &[Opt] = &[
    opt("", Some('S'), Value),
    opt("ignore-revs-file", None, Value),
    opt("", Some('L'), Value),
];

/// Options that make an otherwise reading subcommand write, run something
/// or read outside the repository: a diff written to a file, an external
/// diff or textconv program, a pager, files compared or blamed from
/// anywhere, a signature check (gpg).
pub(super) const LEAVES_READ_ONLY: &[&str] = &[
    "output",
    "output-directory",
    "ext-diff",
    "textconv",
    "no-index",
    "contents",
    "open-files-in-pager",
    "untracked",
    "no-exclude-standard",
    "file",
    "blob",
    "show-signature",
];

/// Subcommands that only read, whatever their (allowed) arguments.
pub(super) const READS: &[&str] = &[
    "status",
    "diff",
    "log",
    "show",
    "rev-parse",
    "ls-files",
    "ls-tree",
    "blame",
    "shortlog",
    "describe",
    "rev-list",
    "cat-file",
    "show-ref",
    "merge-base",
    "count-objects",
    "grep",
    "version",
    "whatchanged",
    "check-ignore",
    "diff-files",
    "diff-index",
    "diff-tree",
];

/// `git branch` arguments that only list.
pub(super) const BRANCH_LISTS: &[&str] = &[
    "-a",
    "-r",
    "-v",
    "-vv",
    "--all",
    "--remotes",
    "--verbose",
    "--list",
    "-l",
    "--show-current",
    "--no-color",
    "--color",
    "--no-abbrev",
];

/// Options before the subcommand that change nothing a read-only call
/// could be judged by.
pub(super) const PLAIN_GLOBALS: &[&str] = &["no-pager", "no-optional-locks", "literal-pathspecs"];
