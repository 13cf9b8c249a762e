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

mod tables;
#[cfg(test)]
mod tests;
mod verdicts;

pub use verdicts::GitWrites;

use super::gnu::{Kind, Opt};
use tables::{table, ANY, GLOBAL};
use Kind::{Denied, Flag, Optional, Path, Value};

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
