//! Per-program argument rules, and the read-only table.
//!
//! Which programs are built in, with which rules and which read-only
//! judgement, is one table ([`programs::PROGRAMS`]). Each program has a
//! table of its options: the file utilities ([`coreutils`]) list every
//! option they accept, with its kind (flag, value, path, denied); an option
//! not in the table is refused. git ([`git`]) and the package tools
//! ([`toolchain`]) and the project runners ([`runner`]: python3, pytest,
//! uv, make, go) run project code by design (`npm run`, `cargo build`,
//! `node`, `make test`), so their option sets are open, but the options that point
//! outside the root, reconfigure the program or run other programs are
//! refused. git's arguments are read once, and that one reading gives its
//! argument rules, its read-only verdict and the secrets it names.
//!
//! Path arguments must stay inside the root twice over: lexically
//! ([`ProjectRoot::resolve`]) and, for the longest existing prefix, the way
//! the kernel resolves them ([`ProjectRoot::locate`]: symlinks first, then
//! `..`), so `link/x` with `link -> /etc` and `up/../x` with `up -> .` are
//! caught.

mod coreutils;
mod find;
mod git;
mod gnu;
mod node;
mod programs;
mod readonly;
mod runner;
mod toolchain;

pub use git::GitWrites;
pub(crate) use programs::{builtin, is_read_only};
pub use programs::{Program, ReadOnly, PROGRAMS};
pub(crate) use readonly::{named_secret, toolchain_override};

use super::ExecShellInput;
use corral_fs::secret::is_secret_like;
use corral_fs::{Error, ErrorCode, Result};
use corral_fs::{ProjectRoot, RelPath};

/// A call's program and arguments, read once: git's arguments are parsed
/// here ([`git::GitArgs`]) and that one reading gives the argument rules
/// ([`check`]), the read-only verdict ([`is_read_only`]), the secrets the
/// call names ([`named_secret`]) and whether it fetches
/// ([`super::network`]). Read it once per call and pass it down.
pub struct CommandLine<'a> {
    input: &'a ExecShellInput,
    git: Option<git::GitArgs<'a>>,
}

impl<'a> CommandLine<'a> {
    /// Reads the call's arguments (for git, parses them).
    pub fn read(input: &'a ExecShellInput) -> CommandLine<'a> {
        let git = (input.command == "git").then(|| git::GitArgs::parse(&input.args));
        CommandLine { input, git }
    }

    /// The call as given.
    pub fn input(&self) -> &'a ExecShellInput {
        self.input
    }

    /// The program's name.
    pub fn program(&self) -> &'a str {
        &self.input.command
    }

    /// The arguments after the program.
    pub fn args(&self) -> &'a [String] {
        &self.input.args
    }

    /// What a git call must write in git's own folder beyond ordinary
    /// work (its `config`, a submodule's `modules/`), and why; `None` for
    /// every other call.
    pub fn git_writes_beyond(&self) -> Option<GitWrites> {
        self.git.as_ref().and_then(|git| git.writes_beyond())
    }

    /// git's subcommand as git reads it, past the options before it
    /// (`fetch` in `git -C a -C b fetch`); `None` for any other program
    /// and for git without one.
    pub fn git_subcommand(&self) -> Option<&'a str> {
        self.git.as_ref().and_then(|git| git.sub)
    }
}

/// Checks the call's arguments against the rules of its program (already
/// on the allowlist): its row of [`PROGRAMS`].
pub(crate) fn check(root: &ProjectRoot, line: &CommandLine<'_>) -> Result<()> {
    let program = line.program();
    let ctx = Ctx { root, program };
    match builtin(program) {
        Some(builtin) => (builtin.rules)(&ctx, line),
        None => Err(Error::new(
            ErrorCode::CommandNotAllowed,
            format!("`{program}` has no argument rules"),
        )
        .detail("command", program)),
    }
}

/// What every rule needs: the root and the program's name for messages.
pub(super) struct Ctx<'a> {
    pub root: &'a ProjectRoot,
    pub program: &'a str,
}

impl Ctx<'_> {
    /// `argument_not_allowed` naming the argument.
    pub fn deny(&self, arg: &str, why: &str) -> Error {
        Error::new(
            ErrorCode::ArgumentNotAllowed,
            format!(
                "`{}`: the argument `{arg}` is not allowed: {why}",
                self.program
            ),
        )
        .detail("command", self.program)
        .detail("argument", arg)
        .detail("reason", why)
    }

    /// Checks that `path` (given in the argument `arg`) stays inside the
    /// root, lexically and through symlinks. Returns its normalized form.
    pub fn path(&self, arg: &str, path: &str) -> Result<RelPath> {
        let located = self
            .root
            .locate(path)
            .map_err(|_| self.deny(arg, "the path is outside the project folder"))?;
        if located.leads_outside() {
            return Err(self.deny(
                arg,
                "the path leads outside the project folder through a symlink",
            ));
        }
        // Loops and the like: the program reports them itself.
        Ok(located.lexical)
    }

    /// Whether the program, resolving `path` itself, lands in `.git/`
    /// (named so, or through a symlink).
    pub fn is_git_internal(&self, rel: &RelPath, path: &str) -> bool {
        rel.is_git_internal()
            || self
                .root
                .locate(path)
                .is_ok_and(|l| l.real.is_ok_and(|real| real.is_git_internal()))
    }

    /// Whether `rel` is the root itself, or a symlink to it.
    pub fn is_root(&self, rel: &RelPath) -> bool {
        rel.is_root() || self.root.canonical(rel).is_ok_and(|real| real.is_root())
    }
}

/// Whether `value` names a file path rather than a module or package name.
pub(super) fn looks_like_path(value: &str) -> bool {
    value.starts_with('/')
        || value.starts_with("./")
        || value.starts_with("../")
        || value.starts_with("file:")
        || value == "."
        || value == ".."
        || value.starts_with('~')
}

/// Whether an argument, taken as a path, leads outside the project: as
/// written (absolute, `~`, climbing with `..`; revisions like `main..dev`
/// are fine) or where the kernel will resolve it (`notes.txt -> /etc/x`:
/// `git blame -S notes.txt` prints that file as "bad graft data").
pub(super) fn leads_outside(root: &ProjectRoot, arg: &str) -> bool {
    arg.starts_with('/')
        || arg.starts_with('~')
        || arg.split('/').any(|part| part == "..")
        || match root.locate(arg) {
            Ok(located) => located.leads_outside(),
            Err(e) => e.code == ErrorCode::PathOutsideRoot,
        }
}

/// Whether `part` (an argument or a piece of one) names a secret-like
/// file: by its text, normalized (`a/.env/.` is `.env`), where the
/// program given it lands (`notes.txt -> .env`), or by the file itself
/// (`notes.txt` a hard link to `.env`).
pub(super) fn names_secret(root: &ProjectRoot, part: &str) -> bool {
    !part.is_empty()
        && (is_secret_like(part)
            || root.locate(part).is_ok_and(|located| {
                is_secret_like(&located.lexical.display())
                    || located.real_path().is_some_and(|real| {
                        is_secret_like(&real.display())
                            || crate::secret_links::secret_name_of(root, &real.display()).is_some()
                    })
            }))
}
