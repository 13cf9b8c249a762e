//! Option tables of the file utilities: `ls rm mv cp mkdir touch grep`
//! (GNU option syntax, read by [`super::gnu`]; `find` is in
//! [`super::find`]). Every option each accepts is listed; anything else
//! is refused. Every path operand and path option stays inside the root;
//! `rm` and `mv` never touch the root itself; `.git/` is never a target.

use super::gnu::{self, opt, Kind, Opt, Parsed};
use super::Ctx;
use corral_fs::RelPath;
use corral_fs::Result;
use Kind::{Denied, Flag, Optional as Opt_, Path, Value};

const HELP: [Opt; 2] = [opt("help", None, Flag), opt("version", None, Flag)];

const LS: &[Opt] = &[
    opt("all", Some('a'), Flag),
    opt("almost-all", Some('A'), Flag),
    opt("author", None, Flag),
    opt("escape", Some('b'), Flag),
    opt("block-size", None, Value),
    opt("ignore-backups", Some('B'), Flag),
    opt("", Some('c'), Flag),
    opt("", Some('C'), Flag),
    opt("color", None, Opt_),
    opt("directory", Some('d'), Flag),
    opt("dired", Some('D'), Flag),
    opt("", Some('f'), Flag),
    opt("classify", Some('F'), Opt_),
    opt("file-type", None, Flag),
    opt("format", None, Value),
    opt("full-time", None, Flag),
    opt("", Some('g'), Flag),
    opt("group-directories-first", None, Flag),
    opt("no-group", Some('G'), Flag),
    opt("human-readable", Some('h'), Flag),
    opt("si", None, Flag),
    opt("dereference-command-line", Some('H'), Flag),
    opt("dereference-command-line-symlink-to-dir", None, Flag),
    opt("hide", None, Value),
    opt("hyperlink", None, Opt_),
    opt("indicator-style", None, Value),
    opt("inode", Some('i'), Flag),
    opt("ignore", Some('I'), Value),
    opt("kibibytes", Some('k'), Flag),
    opt("", Some('l'), Flag),
    opt("dereference", Some('L'), Flag),
    opt("", Some('m'), Flag),
    opt("numeric-uid-gid", Some('n'), Flag),
    opt("literal", Some('N'), Flag),
    opt("", Some('o'), Flag),
    opt("", Some('p'), Flag),
    opt("hide-control-chars", Some('q'), Flag),
    opt("show-control-chars", None, Flag),
    opt("quote-name", Some('Q'), Flag),
    opt("quoting-style", None, Value),
    opt("reverse", Some('r'), Flag),
    opt("recursive", Some('R'), Flag),
    opt("size", Some('s'), Flag),
    opt("", Some('S'), Flag),
    opt("sort", None, Value),
    opt("time", None, Value),
    opt("time-style", None, Value),
    opt("", Some('t'), Flag),
    opt("tabsize", Some('T'), Value),
    opt("", Some('u'), Flag),
    opt("", Some('U'), Flag),
    opt("", Some('v'), Flag),
    opt("width", Some('w'), Value),
    opt("", Some('x'), Flag),
    opt("", Some('X'), Flag),
    opt("context", Some('Z'), Flag),
    opt("zero", None, Flag),
    opt("", Some('1'), Flag),
    HELP[0],
    HELP[1],
];

const RM: &[Opt] = &[
    opt("force", Some('f'), Flag),
    opt("", Some('i'), Flag),
    opt("", Some('I'), Flag),
    opt("interactive", None, Opt_),
    opt("one-file-system", None, Flag),
    opt("no-preserve-root", None, Denied("rm never removes `/`")),
    opt("preserve-root", None, Opt_),
    opt("recursive", Some('r'), Flag),
    opt("", Some('R'), Flag),
    opt("dir", Some('d'), Flag),
    opt("verbose", Some('v'), Flag),
    HELP[0],
    HELP[1],
];

const MKDIR: &[Opt] = &[
    opt("mode", Some('m'), Value),
    opt("parents", Some('p'), Flag),
    opt("verbose", Some('v'), Flag),
    opt("", Some('Z'), Flag),
    opt("context", None, Opt_),
    HELP[0],
    HELP[1],
];

const TOUCH: &[Opt] = &[
    opt("", Some('a'), Flag),
    opt("no-create", Some('c'), Flag),
    opt("date", Some('d'), Value),
    opt("", Some('f'), Flag),
    opt("no-dereference", Some('h'), Flag),
    opt("", Some('m'), Flag),
    opt("reference", Some('r'), Path),
    opt("", Some('t'), Value),
    opt("time", None, Value),
    HELP[0],
    HELP[1],
];

const MV: &[Opt] = &[
    opt("backup", None, Opt_),
    opt("", Some('b'), Flag),
    opt("force", Some('f'), Flag),
    opt("interactive", Some('i'), Flag),
    opt("no-clobber", Some('n'), Flag),
    opt("strip-trailing-slashes", None, Flag),
    opt("suffix", Some('S'), Value),
    opt("target-directory", Some('t'), Path),
    opt("no-target-directory", Some('T'), Flag),
    opt("update", None, Opt_),
    opt("", Some('u'), Flag),
    opt("verbose", Some('v'), Flag),
    opt("context", Some('Z'), Flag),
    opt("exchange", None, Flag),
    opt("no-copy", None, Flag),
    opt("debug", None, Flag),
    HELP[0],
    HELP[1],
];

const CP: &[Opt] = &[
    opt("archive", Some('a'), Flag),
    opt("attributes-only", None, Flag),
    opt("backup", None, Opt_),
    opt("", Some('b'), Flag),
    opt("copy-contents", None, Flag),
    opt("", Some('d'), Flag),
    opt("debug", None, Flag),
    opt("force", Some('f'), Flag),
    opt("interactive", Some('i'), Flag),
    opt("", Some('H'), Flag),
    opt("link", Some('l'), Flag),
    opt("dereference", Some('L'), Flag),
    opt("no-clobber", Some('n'), Flag),
    opt("no-dereference", Some('P'), Flag),
    opt("", Some('p'), Flag),
    opt("preserve", None, Opt_),
    opt("no-preserve", None, Value),
    opt("parents", None, Flag),
    opt("recursive", Some('R'), Flag),
    opt("", Some('r'), Flag),
    opt("reflink", None, Opt_),
    opt("remove-destination", None, Flag),
    opt("sparse", None, Value),
    opt("strip-trailing-slashes", None, Flag),
    opt("symbolic-link", Some('s'), Flag),
    opt("suffix", Some('S'), Value),
    opt("target-directory", Some('t'), Path),
    opt("no-target-directory", Some('T'), Flag),
    opt("update", None, Opt_),
    opt("", Some('u'), Flag),
    opt("verbose", Some('v'), Flag),
    opt("keep-directory-symlink", None, Flag),
    opt("one-file-system", Some('x'), Flag),
    opt("", Some('Z'), Flag),
    opt("context", None, Opt_),
    HELP[0],
    HELP[1],
];

const GREP: &[Opt] = &[
    opt("extended-regexp", Some('E'), Flag),
    opt("fixed-strings", Some('F'), Flag),
    opt("basic-regexp", Some('G'), Flag),
    opt("perl-regexp", Some('P'), Flag),
    opt("regexp", Some('e'), Value),
    opt("file", Some('f'), Path),
    opt("ignore-case", Some('i'), Flag),
    opt("", Some('y'), Flag),
    opt("no-ignore-case", None, Flag),
    opt("word-regexp", Some('w'), Flag),
    opt("line-regexp", Some('x'), Flag),
    opt("null-data", Some('z'), Flag),
    opt("no-messages", Some('s'), Flag),
    opt("invert-match", Some('v'), Flag),
    opt("version", Some('V'), Flag),
    opt("help", None, Flag),
    opt("max-count", Some('m'), Value),
    opt("byte-offset", Some('b'), Flag),
    opt("line-number", Some('n'), Flag),
    opt("line-buffered", None, Flag),
    opt("with-filename", Some('H'), Flag),
    opt("no-filename", Some('h'), Flag),
    opt("label", None, Value),
    opt("only-matching", Some('o'), Flag),
    opt("quiet", Some('q'), Flag),
    opt("silent", None, Flag),
    opt("binary-files", None, Value),
    opt("text", Some('a'), Flag),
    opt("", Some('I'), Flag),
    opt("directories", Some('d'), Value),
    opt("devices", Some('D'), Value),
    opt("recursive", Some('r'), Flag),
    opt("dereference-recursive", Some('R'), Flag),
    opt("include", None, Value),
    opt("exclude", None, Value),
    opt("exclude-from", None, Path),
    opt("exclude-dir", None, Value),
    opt("files-without-match", Some('L'), Flag),
    opt("files-with-matches", Some('l'), Flag),
    opt("count", Some('c'), Flag),
    opt("initial-tab", Some('T'), Flag),
    opt("null", Some('Z'), Flag),
    opt("before-context", Some('B'), Value),
    opt("after-context", Some('A'), Value),
    opt("context", Some('C'), Value),
    opt("color", None, Opt_),
    opt("colour", None, Opt_),
    opt("binary", Some('U'), Flag),
    opt("group-separator", None, Value),
    opt("no-group-separator", None, Flag),
];

/// `ls rm mv cp mkdir touch grep`.
pub(super) fn check(ctx: &Ctx<'_>, args: &[String]) -> Result<()> {
    let table = match ctx.program {
        "ls" => LS,
        "rm" => RM,
        "mv" => MV,
        "cp" => CP,
        "mkdir" => MKDIR,
        "touch" => TOUCH,
        _ => GREP,
    };
    let parsed = gnu::parse(ctx, table, ctx.program == "grep", args)?;
    gnu::check_path_options(ctx, &parsed)?;
    let has_pattern_option = parsed.iter().any(
        |p| matches!(p, Parsed::Opt { opt, .. } if opt.long == "regexp" || opt.long == "file"),
    );
    let mut operands: Vec<&str> = parsed
        .iter()
        .filter_map(|p| match p {
            Parsed::Operand(o) => Some(*o),
            Parsed::Opt { .. } => None,
        })
        .collect();
    if ctx.program == "grep" && !has_pattern_option && !operands.is_empty() {
        operands.remove(0);
    }
    let mut rels = Vec::with_capacity(operands.len());
    for operand in &operands {
        rels.push((*operand, ctx.path(operand, operand)?));
    }
    let target_option = parsed.iter().find_map(|p| match p {
        Parsed::Opt { opt, value, .. } if opt.long == "target-directory" => *value,
        _ => None,
    });
    // The paths the program changes: never the root (rm, mv), never `.git/`.
    let targets: Vec<_> = match ctx.program {
        "rm" | "mv" | "mkdir" | "touch" => rels.clone(),
        "cp" if target_option.is_none() => rels.last().cloned().into_iter().collect(),
        _ => Vec::new(),
    };
    for (arg, rel) in &targets {
        if matches!(ctx.program, "rm" | "mv") && ctx.is_root(rel) {
            return Err(ctx.deny(arg, "it is the project folder itself"));
        }
        if ctx.is_git_internal(rel, arg) {
            return Err(ctx.deny(arg, "`.git/` is changed only by git"));
        }
    }
    if let Some(target) = target_option {
        if ctx.is_git_internal(&ctx.path(target, target)?, target) {
            return Err(ctx.deny(target, "`.git/` is changed only by git"));
        }
    }
    if matches!(ctx.program, "cp" | "mv") {
        check_links(ctx, &parsed, &rels, target_option)?;
    }
    Ok(())
}

/// A path operand as given, and normalized.
type Operand<'a> = (&'a str, RelPath);

/// `cp` and `mv` write through what a destination already is: a file with
/// more than one name (`cp -l .git/config notes.txt` made one) changes
/// every other name too, `.git/config` included. And `cp -l`/`cp -s`
/// never link to what lies in `.git/`. (The sandbox also mounts `.git/`
/// read-only for every program but git; this is the clear early refusal.)
fn check_links(
    ctx: &Ctx<'_>,
    parsed: &[Parsed<'_>],
    rels: &[Operand<'_>],
    target_option: Option<&str>,
) -> Result<()> {
    let links = parsed.iter().any(|p| {
        matches!(p, Parsed::Opt { opt, .. } if opt.long == "link" || opt.long == "symbolic-link")
    });
    let (sources, dest): (&[Operand<'_>], Option<Operand<'_>>) = match target_option {
        Some(t) => (rels, Some((t, ctx.path(t, t)?))),
        None => match rels.split_last() {
            Some((last, rest)) => (rest, Some(last.clone())),
            None => (rels, None),
        },
    };
    if links {
        if let Some((arg, _)) = sources
            .iter()
            .find(|(arg, rel)| ctx.is_git_internal(rel, arg))
        {
            return Err(ctx.deny(arg, "a link to `.git/` would let other programs change it"));
        }
    }
    let Some((dest_arg, dest)) = dest else {
        return Ok(());
    };
    let mut written = vec![dest.clone()];
    if ctx.root.dir().is_dir(dest.as_path()) {
        written.extend(
            sources
                .iter()
                .filter_map(|(_, src)| src.file_name().map(|name| dest.join(name))),
        );
    }
    // `mv` renames its sources: a source with other names keeps them.
    for rel in written {
        if has_other_names(ctx, &rel) {
            return Err(ctx.deny(
                dest_arg,
                "it is a hard link: writing it would change the file's other names too",
            ));
        }
    }
    Ok(())
}

/// Whether `rel` is a regular file with more than one hard link.
fn has_other_names(ctx: &Ctx<'_>, rel: &RelPath) -> bool {
    use cap_std::fs::MetadataExt;
    ctx.root
        .dir()
        .symlink_metadata(rel.as_path())
        .is_ok_and(|m| m.is_file() && m.nlink() > 1)
}
