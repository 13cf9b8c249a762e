//! `find [-H|-L|-P] [-D opts] [-Olevel] [starting points] [expression]`:
//! starting points and file-valued tests stay inside the root; only tests,
//! options, operators and printing actions are allowed (no `-exec`,
//! `-execdir`, `-ok`, `-okdir`, `-delete`, `-fprint*`, `-fls`,
//! `-files0-from`); an unknown word is refused.

use super::Ctx;
use corral_fs::Result;

/// What a `find` expression word is.
#[derive(Clone, Copy)]
enum Primary {
    /// Takes `n` plain values.
    Plain(usize),
    /// Takes one path value.
    Path,
    Denied(&'static str),
}

const FIND_DENIED_ACTION: &str = "find may only list and print; it may not run, delete or write";

/// `find`'s expression words (tests, options, actions, operators).
const FIND: &[(&str, Primary)] = &[
    ("(", Primary::Plain(0)),
    (")", Primary::Plain(0)),
    ("!", Primary::Plain(0)),
    (",", Primary::Plain(0)),
    ("-not", Primary::Plain(0)),
    ("-a", Primary::Plain(0)),
    ("-and", Primary::Plain(0)),
    ("-o", Primary::Plain(0)),
    ("-or", Primary::Plain(0)),
    ("-print", Primary::Plain(0)),
    ("-print0", Primary::Plain(0)),
    ("-printf", Primary::Plain(1)),
    ("-ls", Primary::Plain(0)),
    ("-prune", Primary::Plain(0)),
    ("-quit", Primary::Plain(0)),
    ("-true", Primary::Plain(0)),
    ("-false", Primary::Plain(0)),
    ("-empty", Primary::Plain(0)),
    ("-executable", Primary::Plain(0)),
    ("-readable", Primary::Plain(0)),
    ("-writable", Primary::Plain(0)),
    ("-nouser", Primary::Plain(0)),
    ("-nogroup", Primary::Plain(0)),
    ("-depth", Primary::Plain(0)),
    ("-d", Primary::Plain(0)),
    ("-mount", Primary::Plain(0)),
    ("-xdev", Primary::Plain(0)),
    ("-noleaf", Primary::Plain(0)),
    ("-ignore_readdir_race", Primary::Plain(0)),
    ("-noignore_readdir_race", Primary::Plain(0)),
    ("-daystart", Primary::Plain(0)),
    ("-follow", Primary::Plain(0)),
    ("-warn", Primary::Plain(0)),
    ("-nowarn", Primary::Plain(0)),
    ("-help", Primary::Plain(0)),
    ("--help", Primary::Plain(0)),
    ("-version", Primary::Plain(0)),
    ("--version", Primary::Plain(0)),
    ("-name", Primary::Plain(1)),
    ("-iname", Primary::Plain(1)),
    ("-path", Primary::Plain(1)),
    ("-ipath", Primary::Plain(1)),
    ("-wholename", Primary::Plain(1)),
    ("-iwholename", Primary::Plain(1)),
    ("-regex", Primary::Plain(1)),
    ("-iregex", Primary::Plain(1)),
    ("-regextype", Primary::Plain(1)),
    ("-type", Primary::Plain(1)),
    ("-xtype", Primary::Plain(1)),
    ("-size", Primary::Plain(1)),
    ("-mtime", Primary::Plain(1)),
    ("-mmin", Primary::Plain(1)),
    ("-atime", Primary::Plain(1)),
    ("-amin", Primary::Plain(1)),
    ("-ctime", Primary::Plain(1)),
    ("-cmin", Primary::Plain(1)),
    ("-used", Primary::Plain(1)),
    ("-perm", Primary::Plain(1)),
    ("-user", Primary::Plain(1)),
    ("-group", Primary::Plain(1)),
    ("-uid", Primary::Plain(1)),
    ("-gid", Primary::Plain(1)),
    ("-links", Primary::Plain(1)),
    ("-inum", Primary::Plain(1)),
    ("-lname", Primary::Plain(1)),
    ("-ilname", Primary::Plain(1)),
    ("-maxdepth", Primary::Plain(1)),
    ("-mindepth", Primary::Plain(1)),
    ("-fstype", Primary::Plain(1)),
    ("-context", Primary::Plain(1)),
    ("-newer", Primary::Path),
    ("-anewer", Primary::Path),
    ("-cnewer", Primary::Path),
    ("-samefile", Primary::Path),
    ("-exec", Primary::Denied(FIND_DENIED_ACTION)),
    ("-execdir", Primary::Denied(FIND_DENIED_ACTION)),
    ("-ok", Primary::Denied(FIND_DENIED_ACTION)),
    ("-okdir", Primary::Denied(FIND_DENIED_ACTION)),
    ("-delete", Primary::Denied(FIND_DENIED_ACTION)),
    ("-fprint", Primary::Denied(FIND_DENIED_ACTION)),
    ("-fprint0", Primary::Denied(FIND_DENIED_ACTION)),
    ("-fprintf", Primary::Denied(FIND_DENIED_ACTION)),
    ("-fls", Primary::Denied(FIND_DENIED_ACTION)),
    (
        "-files0-from",
        Primary::Denied("starting points come from the arguments only"),
    ),
];

/// Whether a `find` word is an action that runs, deletes or writes.
pub(super) fn is_find_action(word: &str) -> bool {
    FIND.iter()
        .any(|(name, kind)| *name == word && matches!(kind, Primary::Denied(_)))
}

fn find_primary(word: &str) -> Option<Primary> {
    if let Some((_, kind)) = FIND.iter().find(|(name, _)| *name == word) {
        return Some(*kind);
    }
    // -newerXY: X, Y in a B c m t; Y = t takes a date, not a file.
    let rest = word.strip_prefix("-newer")?;
    let mut chars = rest.chars();
    match (chars.next(), chars.next(), chars.next()) {
        (Some(x), Some(y), None) if "aBcm".contains(x) && "aBcmt".contains(y) => {
            Some(if y == 't' {
                Primary::Plain(1)
            } else {
                Primary::Path
            })
        }
        _ => None,
    }
}

/// `find [-H|-L|-P] [-D opts] [-Olevel] [starting points] [expression]`.
pub(super) fn check_find(ctx: &Ctx<'_>, args: &[String]) -> Result<()> {
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        match arg.as_str() {
            "-H" | "-L" | "-P" => i += 1,
            "-D" => i += 2,
            a if a.starts_with("-O") && a[2..].chars().all(|c| c.is_ascii_digit()) => i += 1,
            _ => break,
        }
    }
    while let Some(arg) = args.get(i) {
        if arg.starts_with('-') || matches!(arg.as_str(), "(" | ")" | "!" | ",") {
            break;
        }
        ctx.path(arg, arg)?;
        i += 1;
    }
    while let Some(arg) = args.get(i) {
        i += 1;
        match find_primary(arg) {
            Some(Primary::Plain(n)) => i += n,
            Some(Primary::Path) => {
                if let Some(path) = args.get(i) {
                    ctx.path(path, path)?;
                }
                i += 1;
            }
            Some(Primary::Denied(why)) => return Err(ctx.deny(arg, why)),
            None => {
                return Err(ctx.deny(
                    arg,
                    "not a find test or option this tool allows (starting points go first)",
                ))
            }
        }
    }
    Ok(())
}
