//! A GNU `getopt_long` reader for the option tables of the file utilities.
//!
//! It reads arguments as the programs do: options may follow operands, `--`
//! ends the options, short flags cluster (`-rf`), a short option's value is
//! the rest of the cluster or the next argument, and a long option may be
//! any unambiguous prefix (`--fi=x` is `--file=x`), so a prefix cannot slip
//! a path option past the table.

use super::Ctx;
use corral_fs::Result;

/// What an option does with a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    /// No value.
    Flag,
    /// A value that is not a path.
    Value,
    /// A value that is a path, checked to stay inside the root.
    Path,
    /// A value only in the `--name=value` form.
    Optional,
    /// Refused, with the reason.
    Denied(&'static str),
}

/// One option: long name (may be empty), short letter (may be `None`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Opt {
    pub long: &'static str,
    pub short: Option<char>,
    pub kind: Kind,
}

/// Shorthand for table rows.
pub(super) const fn opt(long: &'static str, short: Option<char>, kind: Kind) -> Opt {
    Opt { long, short, kind }
}

/// One read argument.
#[derive(Debug, Clone, Copy)]
pub(super) enum Parsed<'a> {
    /// An operand (file, pattern...).
    Operand(&'a str),
    /// An option, with its value if it takes one. `arg` is the argument
    /// the option was written in, for messages.
    Opt {
        opt: &'static Opt,
        value: Option<&'a str>,
        arg: &'a str,
    },
}

/// Reads `args` with the table `opts`. Unknown and denied options are
/// `argument_not_allowed`. `digits`: `-5` is a flag (grep's context).
pub(super) fn parse<'a>(
    ctx: &Ctx<'_>,
    opts: &'static [Opt],
    digits: bool,
    args: &'a [String],
) -> Result<Vec<Parsed<'a>>> {
    let mut out = Vec::with_capacity(args.len());
    let mut i = 0;
    let mut only_operands = false;
    while i < args.len() {
        let arg = args[i].as_str();
        i += 1;
        if only_operands || arg == "-" || !arg.starts_with('-') {
            out.push(Parsed::Operand(arg));
            continue;
        }
        if arg == "--" {
            only_operands = true;
            continue;
        }
        if let Some(body) = arg.strip_prefix("--") {
            let (name, inline) = match body.split_once('=') {
                Some((n, v)) => (n, Some(v)),
                None => (body, None),
            };
            let opt = find_long(ctx, opts, name, arg)?;
            let value = match (opt.kind, inline) {
                (Kind::Denied(why), _) => return Err(ctx.deny(arg, why)),
                (Kind::Flag, Some(_)) => return Err(ctx.deny(arg, "this option takes no value")),
                (Kind::Flag, None) | (Kind::Optional, None) => None,
                (Kind::Optional, Some(v)) | (Kind::Value | Kind::Path, Some(v)) => Some(v),
                (Kind::Value | Kind::Path, None) => {
                    let v = args.get(i).map(String::as_str);
                    i += 1;
                    v
                }
            };
            out.push(Parsed::Opt { opt, value, arg });
            continue;
        }
        // A cluster of short options.
        let cluster = &arg[1..];
        for (at, c) in cluster.char_indices() {
            if digits && c.is_ascii_digit() {
                continue;
            }
            let Some(opt) = opts.iter().find(|o| o.short == Some(c)) else {
                return Err(ctx.deny(arg, &format!("`-{c}` is not an option this tool allows")));
            };
            match opt.kind {
                Kind::Denied(why) => return Err(ctx.deny(arg, why)),
                Kind::Flag | Kind::Optional => out.push(Parsed::Opt {
                    opt,
                    value: None,
                    arg,
                }),
                Kind::Value | Kind::Path => {
                    let rest = &cluster[at + c.len_utf8()..];
                    let value = if rest.is_empty() {
                        let v = args.get(i).map(String::as_str);
                        i += 1;
                        v
                    } else {
                        Some(rest)
                    };
                    out.push(Parsed::Opt { opt, value, arg });
                    break;
                }
            }
        }
    }
    Ok(out)
}

/// An exact long name, else the one option it is a prefix of.
fn find_long(ctx: &Ctx<'_>, opts: &'static [Opt], name: &str, arg: &str) -> Result<&'static Opt> {
    if name.is_empty() {
        return Err(ctx.deny(arg, "not an option this tool allows"));
    }
    if let Some(exact) = opts.iter().find(|o| o.long == name) {
        return Ok(exact);
    }
    let mut matches = opts
        .iter()
        .filter(|o| !o.long.is_empty() && o.long.starts_with(name));
    match (matches.next(), matches.next()) {
        (Some(one), None) => Ok(one),
        (Some(_), Some(_)) => Err(ctx.deny(arg, "the option is ambiguous; write it in full")),
        (None, _) => Err(ctx.deny(arg, "not an option this tool allows")),
    }
}

/// Whether `arg` is the long option `name` (`--name`) or an abbreviation
/// of it of at least two letters (`--upload-pa=x`), bare or with `=value`:
/// for the rules that match an argument against a few names without a
/// table of everything the program accepts.
pub(super) fn option_or_abbreviation(arg: &str, name: &str) -> bool {
    let given = arg.split_once('=').map_or(arg, |(n, _)| n);
    given.len() > 3 && given.starts_with("--") && name.starts_with(given)
}

/// Checks every path-valued option of a parse.
pub(super) fn check_path_options(ctx: &Ctx<'_>, parsed: &[Parsed<'_>]) -> Result<()> {
    for p in parsed {
        if let Parsed::Opt {
            opt: Opt {
                kind: Kind::Path, ..
            },
            value: Some(value),
            arg,
        } = p
        {
            // Name what the model wrote: `--file=/x` whole, `-f /x` by its path.
            let named = if arg.len() > value.len() && arg.ends_with(value) {
                arg
            } else {
                value
            };
            ctx.path(named, value)?;
        }
    }
    Ok(())
}
