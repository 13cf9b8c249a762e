//! The verdicts drawn from git's one reading: the argument rules, the
//! read-only table and the secret-like files a call names.

use super::super::gnu::{option_or_abbreviation, Kind};
use super::super::{leads_outside, names_secret, Ctx};
use super::tables::{
    BRANCH_LISTS, COMMANDS, DENIED_ANYWHERE, INTO_GIT_DIR, LEAVES_READ_ONLY, PLAIN_GLOBALS, READS,
    WRITES_TO,
};
use super::{GitArgs, Item, What};
use crate::gitdir::Repository;

/// What a git call must write in git's own folder beyond ordinary work
/// ([`GitArgs::writes_beyond`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GitWrites {
    /// The names at the top of the common dir made writable for it.
    pub names: &'static [&'static str],
    /// Why, for the question the user answers.
    pub why: &'static str,
}
use corral_fs::{ProjectRoot, Result};
use Kind::{Denied, Path};

impl GitArgs<'_> {
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
        // Where git stands after each `-C`: a path value is judged from
        // there, as git reads it (`-C .git --work-tree=.` is `.git`).
        let mut cwd = std::path::PathBuf::new();
        for item in &self.global {
            let Some(o) = item.opt() else { continue };
            match o.rows.first().map(|row| row.kind) {
                Some(Denied(why)) => return Err(ctx.deny(item.arg, why)),
                Some(Path) => {
                    if let Some(value) = o.value {
                        let path = cwd.join(value);
                        let path = path.to_string_lossy();
                        ctx.path(value, &path)?;
                        let moves = o.name == "C";
                        if (moves || o.is(WRITES_TO)) && in_git_dir(ctx.root, &path) {
                            return Err(ctx.deny(item.arg, INTO_GIT_DIR));
                        }
                        if moves {
                            cwd = cwd.join(value);
                        }
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
                    let path = cwd.join(value);
                    let path = path.to_string_lossy();
                    ctx.path(value, &path)?;
                    if o.is(WRITES_TO) && in_git_dir(ctx.root, &path) {
                        return Err(ctx.deny(item.arg, INTO_GIT_DIR));
                    }
                }
            }
        }
        // A writing subcommand's words are where it writes too (`bundle
        // create FILE`, `worktree add PATH`, `mv SRC DST`): none leads into
        // a git dir.
        if !READS.contains(&sub) {
            for item in self.items.iter().filter(|i| i.opt().is_none()) {
                if in_git_dir(ctx.root, &cwd.join(item.arg).to_string_lossy()) {
                    return Err(ctx.deny(item.arg, INTO_GIT_DIR));
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

    /// What the call must write in git's own folder beyond ordinary work
    /// (`namespace::GIT_WRITES`), and why: `config` for a remote, an
    /// upstream, a branch renamed; `config` and `modules/` for a
    /// submodule. `None` for ordinary work. Such a call asks in every mode,
    /// naming why, and runs with exactly those names writable.
    pub fn writes_beyond(&self) -> Option<GitWrites> {
        let sub = self.sub?;
        let verb = self.items.iter().find(|i| i.opt().is_none()).map(|i| i.arg);
        let has = |names: &[&str]| {
            self.items
                .iter()
                .filter_map(Item::opt)
                .any(|o| names.contains(&o.name))
        };
        const CONFIG: &[&str] = &["config"];
        const SUBMODULE: &[&str] = &["config", "modules"];
        let (names, why) = match sub {
            "remote"
                if verb.is_some_and(|v| {
                    ["add", "rename", "remove", "rm", "set-url", "set-branches"].contains(&v)
                }) =>
            {
                (CONFIG, "it changes a remote in the repository's config")
            }
            "submodule"
                if verb.is_some_and(|v| {
                    [
                        "add",
                        "init",
                        "update",
                        "sync",
                        "deinit",
                        "set-branch",
                        "set-url",
                        "absorbgitdirs",
                    ]
                    .contains(&v)
                }) =>
            {
                (
                    SUBMODULE,
                    "it records a submodule in the repository's config and makes its repository in modules/",
                )
            }
            "branch"
                if has(&[
                    "u",
                    "set-upstream-to",
                    "unset-upstream",
                    "t",
                    "track",
                    "m",
                    "M",
                    "move",
                    "c",
                    "C",
                    "copy",
                    "edit-description",
                ]) =>
            {
                (CONFIG, "it records a branch's upstream or name in the repository's config")
            }
            "push" if has(&["u", "set-upstream"]) => {
                (CONFIG, "it records the branch's upstream in the repository's config")
            }
            "checkout" | "switch" if has(&["t", "track"]) => {
                (CONFIG, "it records the new branch's upstream in the repository's config")
            }
            _ => return None,
        };
        Some(GitWrites { names, why })
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
            // A key that holds a credential by its nature (an auth header,
            // a credential helper's settings, an `insteadOf` URL) asks.
            "config" => {
                self.config_reads()
                    && has(&["--get", "--get-all", "get"])
                    && !has(&["--global", "--system", "-l", "--list", "list"])
                    && !self
                        .items
                        .iter()
                        .any(|item| item.opt().is_none() && names_credential_key(item.arg))
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

/// Whether `path` (inside the root) lands in a git dir, where the kernel
/// will resolve it: a `.git` folder at any depth, named so or reached
/// through a link (`dist -> .git`, `CHANGELOG.md -> .git/config`), or
/// the project's repository where a `.git` file leads.
fn in_git_dir(root: &ProjectRoot, path: &str) -> bool {
    let Ok(located) = root.locate(path) else {
        return false;
    };
    let real = located.real_path();
    if located.lexical.is_git_internal() || real.as_ref().is_some_and(|r| r.is_git_internal()) {
        return true;
    }
    let Some(repository) = Repository::of(root.path()) else {
        return false;
    };
    let real = root.path().join(real.unwrap_or(located.lexical).as_path());
    repository
        .folders()
        .iter()
        .any(|folder| real.starts_with(folder))
}

/// Whether a config key holds a credential by its nature: `http.*` (an
/// `extraHeader` carries an `Authorization:` value), `credential.*`,
/// `url.*` (an `insteadOf` URL may carry a token), or a name that says so.
fn names_credential_key(key: &str) -> bool {
    let key = key.to_ascii_lowercase();
    ["http.", "credential.", "url."]
        .iter()
        .any(|section| key.starts_with(section))
        || ["extraheader", "token", "password", "secret", "auth"]
            .iter()
            .any(|word| key.contains(word))
}
