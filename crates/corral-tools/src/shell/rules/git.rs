//! git's arguments, read once ([`GitArgs::parse`]): the options before the
//! subcommand, the subcommand, its options with their values, and its
//! words (revisions, pathspecs). Three verdicts come from that one reading:
//! the argument rules ([`GitArgs::check`]), the read-only table
//! ([`GitArgs::is_read_only`]) and the secret-like files the call names
//! ([`GitArgs::named_secret`]).
//!
//! The option tables use the vocabulary of [`super::gnu`], read as git
//! reads it:
//! - before the subcommand, options by their exact name (git takes no
//!   abbreviation or cluster there), `--name=value` or `--name value`; the
//!   table lists every one the rules allow, anything else is refused;
//! - after it, a long option may be any prefix of its name (`--upload-pa`:
//!   `git blame` accepts abbreviations whatever the environment says; the
//!   others refuse them under `GIT_TEST_DISALLOW_ABBREVIATED_OPTIONS`, but
//!   the rules do not count on it), short options cluster (`-qu`), a
//!   value-taking letter takes the rest of its cluster or the next argument
//!   (`-bdev`, `-b dev`), an optional value is only attached (`-S<keyid>`,
//!   `--gpg-sign=<keyid>`), and `--` ends the options.
//!
//! git has far more options than the tables list, so the reading never
//! lets a guess hide an argument: an option the tables do not know is kept
//! as written, its letters read as flags (`-qu` is still `-q -u`) but what
//! its value would be if it took one kept as its value (the paths it may
//! name are judged); and a value given in the next argument is read both
//! ways, as the option's value and as an argument of its own (`taken`), so
//! `-m --output=x` is judged as `--output` too.

use super::gnu::{opt, option_or_abbreviation, Kind, Opt};
use super::{leads_outside, names_secret, Ctx};
use crate::error::Result;
use crate::root::ProjectRoot;
use Kind::{Denied, Flag, Optional, Path, Value};

const CONFIG_FROM_CALL: &str = "git configuration comes from the project, not the call";
const RUNS_PROGRAM: &str = "it names a program for git to run";
const MOVES_REPOSITORY: &str =
    "it moves or templates the repository, whose config would then be an ordinary file of the project";

/// Subcommands that may run; an alias (which may be `!shell`) or any other
/// command is refused.
const COMMANDS: &[&str] = &[
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
const DENIED_ANYWHERE: &[(&str, &str)] = &[
    ("--upload-pack", RUNS_PROGRAM),
    ("--receive-pack", RUNS_PROGRAM),
    ("--exec", RUNS_PROGRAM),
    ("--config-env", CONFIG_FROM_CALL),
    ("--exec-path", "it changes where git finds its programs"),
];

/// Before the subcommand: every option the rules allow, and the ones they
/// name to refuse.
const GLOBAL: &[Opt] = &[
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
const ANY: &[Opt] = &[
    // A repository outside `.git/` (`--separate-git-dir`) or made from a
    // template folder (which may plant `commondir` or `config`).
    opt("separate-git-dir", None, Denied(MOVES_REPOSITORY)),
    opt("template", None, Denied(MOVES_REPOSITORY)),
    // Paths, kept inside the root by the rules.
    opt("git-dir", None, Path),
    opt("work-tree", None, Path),
    opt("file", None, Path),
    // Off the read-only table ([`LEAVES_READ_ONLY`]).
    opt("output", None, Value),
    opt("output-directory", None, Value),
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
fn table(sub: &str) -> &'static [Opt] {
    match sub {
        "clone" => CLONE,
        "ls-remote" => LS_REMOTE,
        "rebase" => REBASE,
        "grep" => GREP,
        "config" => CONFIG,
        "blame" => BLAME,
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
const LEAVES_READ_ONLY: &[&str] = &[
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
const READS: &[&str] = &[
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
const BRANCH_LISTS: &[&str] = &[
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
const PLAIN_GLOBALS: &[&str] = &["no-pager", "no-optional-locks", "literal-pathspecs"];

/// One option as read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct GitOpt<'a> {
    /// Its name as written: the long name without `--` and `=value`
    /// (abbreviated or not), or the letter.
    pub name: &'a str,
    /// The table rows it names: one, or every row an abbreviation is a
    /// prefix of; none for an option the tables do not list.
    pub rows: Vec<&'static Opt>,
    /// Its value: written with it (`--x=v`, the rest of a cluster `-xv`)
    /// or, for a listed option that takes one, the next argument. For an
    /// option the tables do not list, what its value would be if it took
    /// one.
    pub value: Option<&'a str>,
}

impl GitOpt<'_> {
    /// Whether it is (or abbreviates) one of the long options `names`.
    fn is(&self, names: &[&str]) -> bool {
        self.rows.iter().any(|row| names.contains(&row.long))
    }
}

/// What an argument (or one letter of a cluster) is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum What<'a> {
    /// An option; a cluster `-qu` gives one per letter.
    Opt(GitOpt<'a>),
    /// A word: a revision, a pathspec, a name, a subcommand's own verb.
    /// `pathspec`: it comes after `--`.
    Word { pathspec: bool },
}

/// One piece of the command line after the subcommand (or an option
/// before it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Item<'a> {
    /// The argument it was read from, as written.
    pub arg: &'a str,
    /// The argument is also the value of the option before it.
    pub taken: bool,
    pub what: What<'a>,
}

impl<'a> Item<'a> {
    fn opt(&self) -> Option<&GitOpt<'a>> {
        match &self.what {
            What::Opt(o) => Some(o),
            What::Word { .. } => None,
        }
    }
}

/// git's command line, read once.
#[derive(Debug)]
pub(super) struct GitArgs<'a> {
    /// Every argument, as given.
    args: &'a [String],
    /// The options before the subcommand, in order (their values are never
    /// read again: git's reading there is exact, and the table complete).
    pub global: Vec<Item<'a>>,
    /// The subcommand: the first argument that is not an option.
    pub sub: Option<&'a str>,
    /// Everything after the subcommand, in order (`--` itself is not kept;
    /// the words after it are pathspecs).
    pub items: Vec<Item<'a>>,
}

impl<'a> GitArgs<'a> {
    /// Reads `args` (the arguments after `git`).
    pub fn parse(args: &'a [String]) -> GitArgs<'a> {
        let mut global = Vec::new();
        let mut i = 0;
        let sub = loop {
            let Some(arg) = args.get(i) else {
                break None;
            };
            i += 1;
            if !arg.starts_with('-') {
                break Some(arg.as_str());
            }
            let (name, row, mut value, takes_next) = read_global(arg);
            if takes_next {
                value = args.get(i).map(String::as_str);
                i += 1;
            }
            global.push(Item {
                arg,
                taken: false,
                what: What::Opt(GitOpt {
                    name,
                    rows: row.into_iter().collect(),
                    value,
                }),
            });
        };
        let table = sub.map_or(&[][..], table);
        let mut items = Vec::new();
        let mut taken = false;
        let mut pathspecs = false;
        for (at, arg) in args.iter().enumerate().skip(i) {
            let next = args.get(at + 1).map(String::as_str);
            let was_taken = std::mem::take(&mut taken);
            let word = |pathspec| Item {
                arg,
                taken: was_taken,
                what: What::Word { pathspec },
            };
            if pathspecs {
                items.push(word(true));
            } else if arg == "--" && !was_taken {
                pathspecs = true;
            } else if arg == "-" || !arg.starts_with('-') || arg == "--" {
                items.push(word(false));
            } else if let Some(body) = arg.strip_prefix("--") {
                let (name, inline) = match body.split_once('=') {
                    Some((n, v)) => (n, Some(v)),
                    None => (body, None),
                };
                let rows = find_long(table, name);
                taken = inline.is_none()
                    && matches!(rows.as_slice(), [row] if matches!(row.kind, Value | Path));
                let value = if taken { next } else { inline };
                items.push(Item {
                    arg,
                    taken: was_taken,
                    what: What::Opt(GitOpt { name, rows, value }),
                });
            } else {
                let cluster = &arg[1..];
                for (at, c) in cluster.char_indices() {
                    let name = &cluster[at..at + c.len_utf8()];
                    let rest = Some(&cluster[at + c.len_utf8()..]).filter(|r| !r.is_empty());
                    let row = find_short(table, c);
                    let (value, ends) = match row.map(|r| r.kind) {
                        Some(Value | Path) => {
                            taken = rest.is_none();
                            (rest.or(if taken { next } else { None }), true)
                        }
                        Some(Optional) => (rest, true),
                        Some(Flag) => (None, false),
                        // Refused anyway, or unknown: read as a flag, with
                        // what would be its value kept.
                        Some(Denied(_)) | None => (rest, false),
                    };
                    items.push(Item {
                        arg,
                        taken: was_taken,
                        what: What::Opt(GitOpt {
                            name,
                            rows: row.into_iter().collect(),
                            value,
                        }),
                    });
                    if ends {
                        break;
                    }
                }
            }
        }
        GitArgs {
            args,
            global,
            sub,
            items,
        }
    }

    /// The argument rules: no option that runs a program or takes its
    /// configuration from the call, paths inside the root, only the
    /// subcommands listed, and `git config` only to read.
    pub fn check(&self, ctx: &Ctx<'_>) -> Result<()> {
        for arg in self.args {
            if let Some((_, why)) = DENIED_ANYWHERE
                .iter()
                .find(|(name, _)| option_or_abbreviation(arg, name))
            {
                return Err(ctx.deny(arg, why));
            }
        }
        for item in &self.global {
            let Some(o) = item.opt() else { continue };
            match o.rows.first().map(|row| row.kind) {
                Some(Denied(why)) => return Err(ctx.deny(item.arg, why)),
                Some(Path) => {
                    if let Some(value) = o.value {
                        ctx.path(value, value)?;
                    }
                }
                Some(_) => {}
                None => {
                    return Err(ctx.deny(
                        item.arg,
                        "not a git option this tool allows before the subcommand",
                    ))
                }
            }
        }
        let Some(sub) = self.sub else {
            return Ok(());
        };
        if !COMMANDS.contains(&sub) {
            return Err(ctx.deny(
                sub,
                "not a git subcommand this tool runs (aliases are not run either)",
            ));
        }
        for item in &self.items {
            let Some(o) = item.opt() else { continue };
            let denied = o.rows.iter().find_map(|row| match row.kind {
                Denied(why) => Some(why),
                _ => None,
            });
            if let Some(why) = denied {
                return Err(ctx.deny(item.arg, why));
            }
            if o.rows.iter().any(|row| row.kind == Path) {
                if let Some(value) = o.value {
                    ctx.path(value, value)?;
                }
            }
        }
        let word = |item: &Item<'_>, w: &str| item.opt().is_none() && item.arg == w;
        match sub {
            "config" if !self.config_reads() => Err(ctx.deny(
                "config",
                "git config may only read here (--get, --get-all, --get-regexp, --list, get, list)",
            )),
            "bisect" if self.items.first().is_some_and(|i| word(i, "run")) => {
                Err(ctx.deny("run", "git bisect run runs another program"))
            }
            "submodule" if self.items.iter().any(|i| word(i, "foreach")) => {
                Err(ctx.deny("foreach", "git submodule foreach runs a shell command"))
            }
            _ => Ok(()),
        }
    }

    /// The read forms of `git config`: scope and format flags, then a read
    /// action (`--get`, `--list`, `get`, `list`...) and what it reads. The
    /// action must come first: `git config core.hooksPath get` is the
    /// legacy way to *set* `core.hooksPath` to `get`. Judged by the
    /// arguments as written; which file to read (`-f`, `--file`, `--blob`,
    /// with their values) is skipped, its path checked by the rules.
    fn config_reads(&self) -> bool {
        const ACTIONS: &[&str] = &[
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
        for item in self.items.iter().filter(|i| !i.taken) {
            if item.opt().is_some_and(|o| o.is(&["file", "blob"])) {
                continue;
            }
            if ACTIONS.contains(&item.arg) {
                // What follows is names, patterns and format flags; a
                // second action (`--unset`, `--add`...) would make git
                // refuse anyway.
                return true;
            }
            let flag = item.opt().is_some()
                && (FLAGS.contains(&item.arg) || item.arg.starts_with("--type="));
            if !flag {
                return false;
            }
        }
        false
    }

    /// Whether the call is on the read-only table: a reading subcommand
    /// (some only in their listing forms), after plain global flags only,
    /// with no option that writes, runs a program or reads outside, and no
    /// word or value that leads outside the project.
    pub fn is_read_only(&self, root: &ProjectRoot) -> bool {
        let named = |item: &Item<'_>, names: &[&str]| {
            item.opt().is_some_and(|o| o.value.is_none() && o.is(names))
        };
        // `-C`, `--git-dir` and the like are for the rules to judge, and
        // make the call ask.
        let plain = |item: &Item<'_>| named(item, PLAIN_GLOBALS);
        let Some(sub) = self.sub else {
            return match self.global.split_last() {
                Some((last, rest)) => named(last, &["version"]) && rest.iter().all(plain),
                None => false,
            };
        };
        if !self.global.iter().all(plain) {
            return false;
        }
        let only = |allowed: &[&str]| {
            self.items
                .iter()
                .all(|i| i.opt().is_some() && allowed.contains(&i.arg))
        };
        let has = |args: &[&str]| self.items.iter().any(|i| args.contains(&i.arg));
        let reads = match sub {
            s if READS.contains(&s) => true,
            "branch" => only(BRANCH_LISTS),
            "tag" => only(&["-l", "--list", "-n"]),
            "remote" => only(&["-v", "--verbose"]),
            "stash" | "worktree" => matches!(
                self.items.as_slice(),
                [Item {
                    arg: "list",
                    what: What::Word { pathspec: false },
                    ..
                }]
            ),
            // One named key of the repository's config; listings and other
            // scopes (`--global`: `~/.gitconfig`) read outside the project.
            "config" => {
                self.config_reads()
                    && has(&["--get", "--get-all", "get"])
                    && !has(&["--global", "--system", "-l", "--list", "list"])
            }
            _ => false,
        };
        reads && !self.items.iter().any(|item| leaves_read_only(root, item))
    }

    /// The first argument that names a secret-like file, by its name or
    /// where it leads (`HEAD:.env`, `--file=id_rsa`, `-S.npmrc`,
    /// `notes.txt -> .env`): a word, an option's value, or the argument
    /// itself split at `:` and `=`.
    pub fn named_secret(&self, root: &ProjectRoot) -> Option<String> {
        let secret = |text: &str| text.split([':', '=']).any(|part| names_secret(root, part));
        let sub = self.sub.map(|sub| Item {
            arg: sub,
            taken: false,
            what: What::Word { pathspec: false },
        });
        for item in self.global.iter().chain(sub.as_ref()).chain(&self.items) {
            if secret(item.arg) {
                return Some(item.arg.to_string());
            }
            if let Some(value) = item.opt().and_then(|o| o.value).filter(|v| secret(v)) {
                // Name what the model wrote: `-S.npmrc` whole, `-C .ssh` by
                // the value's own argument.
                let named = if item.arg.ends_with(value) {
                    item.arg
                } else {
                    value
                };
                return Some(named.to_string());
            }
        }
        None
    }
}

/// Whether one piece keeps a reading subcommand off the read-only table.
fn leaves_read_only(root: &ProjectRoot, item: &Item<'_>) -> bool {
    let Some(o) = item.opt() else {
        // `git diff a /etc/x` compares files outside the repository (no
        // `--no-index` needed); revisions (`main..dev`) are fine.
        return leads_outside(root, item.arg);
    };
    o.is(LEAVES_READ_ONLY)
        || (o.is(&["format", "pretty"]) && o.value.is_some_and(|v| v.contains("%G")))
        || o.value.is_some_and(|v| leads_outside(root, v))
}

/// An option before the subcommand: its name, its row (`None`: not one
/// the rules allow, or not in a form git takes), its attached value, and
/// whether its value is the next argument.
fn read_global(arg: &str) -> (&str, Option<&'static Opt>, Option<&str>, bool) {
    if let Some(body) = arg.strip_prefix("--") {
        let (name, inline) = match body.split_once('=') {
            Some((n, v)) => (n, Some(v)),
            None => (body, None),
        };
        let row = GLOBAL
            .iter()
            .find(|row| !name.is_empty() && row.long == name)
            .filter(|row| !(row.kind == Flag && inline.is_some()));
        let takes_next = inline.is_none() && row.is_some_and(takes_value);
        return (name, row, inline, takes_next);
    }
    let body = &arg[1..];
    let Some(c) = body.chars().next() else {
        return (body, None, None, false);
    };
    let name = &body[..c.len_utf8()];
    let rest = Some(&body[c.len_utf8()..]).filter(|r| !r.is_empty());
    let row = GLOBAL.iter().find(|row| row.short == Some(c));
    match (row, rest) {
        (Some(row), None) => (name, Some(row), None, takes_value(row)),
        // `-ccore.pager=x` is `-c core.pager=x`; anything else attached is
        // not a form git takes.
        (Some(row), Some(rest)) if matches!(row.kind, Denied(_)) => {
            (name, Some(row), Some(rest), false)
        }
        (_, rest) => (name, None, rest, false),
    }
}

/// Whether git takes the next argument as the value of the option before
/// the subcommand: a value or a path, and `-c` and `--config-env`, which
/// the rules refuse but whose value is still not the subcommand
/// (`git -c x=y pull` pulls).
fn takes_value(row: &Opt) -> bool {
    matches!(row.kind, Value | Path) || row.short == Some('c') || row.long == "config-env"
}

/// The rows a long option (as written, without `--`) names: its own, or
/// every one it is a prefix of. The subcommand's table comes first; a row
/// of [`ANY`] with the same name is the same option.
fn find_long(table: &'static [Opt], name: &str) -> Vec<&'static Opt> {
    if name.is_empty() {
        return Vec::new();
    }
    let shadowed = |row: &&Opt| !table.iter().any(|own| own.long == row.long);
    let rows = || {
        table
            .iter()
            .chain(ANY.iter().filter(shadowed))
            .filter(|row| !row.long.is_empty())
    };
    if let Some(exact) = rows().find(|row| row.long == name) {
        return vec![exact];
    }
    rows().filter(|row| row.long.starts_with(name)).collect()
}

/// The row of a letter: the subcommand's own, else [`ANY`]'s.
fn find_short(table: &'static [Opt], c: char) -> Option<&'static Opt> {
    table.iter().chain(ANY).find(|row| row.short == Some(c))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::disallowed_methods)]
    use super::*;

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
}
