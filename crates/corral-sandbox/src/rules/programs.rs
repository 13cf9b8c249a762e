//! The built-in programs, in one table ([`PROGRAMS`]): each one's name,
//! its argument rules and when a call of it only looks. The allowlist
//! ([`crate::ALLOWED_PROGRAMS`]), the dispatch of the argument rules
//! ([`super::check`]), the read-only verdict ([`is_read_only`]) and the
//! programs `exec_shell`'s description names are made from it; the list
//! in `docs/security.md` is compared with it by a test.

use super::git::GitArgs;
use super::{coreutils, find, node, readonly, runner, toolchain, CommandLine, Ctx};
use corral_fs::{ProjectRoot, Result};

/// One built-in program: run by name, with argument rules of its own.
pub struct Program {
    /// The name it is called by (never a path).
    pub name: &'static str,
    /// When a call of it is on the read-only table.
    pub read_only: ReadOnly,
    /// Its argument rules: `argument_not_allowed` naming the argument.
    pub(crate) rules: fn(&Ctx<'_>, &CommandLine<'_>) -> Result<()>,
}

/// When a call of a built-in program only looks, so the policy may let it
/// run unasked (in the read-only profile).
#[derive(Debug, Clone, Copy)]
pub enum ReadOnly {
    /// Never: it runs project code or changes files.
    Never,
    /// With `--version` or `-V` as its only argument.
    VersionOnly,
    /// As its arguments say (a listing that follows no link, a search
    /// that does not recurse, a git subcommand that reads).
    Judged(fn(&ProjectRoot, &CommandLine<'_>) -> bool),
}

/// The built-in programs, in the order the model and the user are told
/// them: git, the package tools and node, the project runners, the file
/// utilities.
pub const PROGRAMS: &[Program] = &[
    program("git", git_rules, ReadOnly::Judged(git_reads)),
    program("cargo", package_tool, ReadOnly::VersionOnly),
    program("npm", package_tool, ReadOnly::VersionOnly),
    program("yarn", package_tool, ReadOnly::VersionOnly),
    program("pnpm", package_tool, ReadOnly::VersionOnly),
    program("node", node_rules, ReadOnly::VersionOnly),
    program("bun", package_tool, ReadOnly::VersionOnly),
    program("python3", project_runner, ReadOnly::Never),
    program("pytest", project_runner, ReadOnly::Never),
    program("uv", project_runner, ReadOnly::Never),
    program("make", project_runner, ReadOnly::Never),
    program("go", project_runner, ReadOnly::Never),
    program("ls", file_utility, ReadOnly::Judged(readonly::ls_looks)),
    program("find", find_rules, ReadOnly::Judged(readonly::find_looks)),
    program("grep", file_utility, ReadOnly::Judged(readonly::grep_looks)),
    program("mkdir", file_utility, ReadOnly::Never),
    program("rm", file_utility, ReadOnly::Never),
    program("mv", file_utility, ReadOnly::Never),
    program("cp", file_utility, ReadOnly::Never),
    program("touch", file_utility, ReadOnly::Never),
];

const fn program(
    name: &'static str,
    rules: fn(&Ctx<'_>, &CommandLine<'_>) -> Result<()>,
    read_only: ReadOnly,
) -> Program {
    Program {
        name,
        read_only,
        rules,
    }
}

/// The built-in program called `name`, if it is one.
pub(crate) fn builtin(name: &str) -> Option<&'static Program> {
    PROGRAMS.iter().find(|program| program.name == name)
}

/// Whether the call is on the read-only table: its program's
/// [`ReadOnly`]; a program that is not built in never is.
pub(crate) fn is_read_only(root: &ProjectRoot, line: &CommandLine<'_>) -> bool {
    let args = line.args();
    match builtin(line.program()).map(|program| program.read_only) {
        None | Some(ReadOnly::Never) => false,
        Some(ReadOnly::VersionOnly) => {
            args.len() == 1 && matches!(args[0].as_str(), "--version" | "-V")
        }
        Some(ReadOnly::Judged(judge)) => judge(root, line),
    }
}

/// git's arguments as the call read them once ([`CommandLine::read`]
/// parses them for `git`), or read now.
fn with_git<T>(line: &CommandLine<'_>, then: impl FnOnce(&GitArgs<'_>) -> T) -> T {
    match &line.git {
        Some(git) => then(git),
        None => then(&GitArgs::parse(line.args())),
    }
}

fn git_rules(ctx: &Ctx<'_>, line: &CommandLine<'_>) -> Result<()> {
    with_git(line, |git| git.check(ctx))
}

fn git_reads(root: &ProjectRoot, line: &CommandLine<'_>) -> bool {
    with_git(line, |git| git.is_read_only(root))
}

fn package_tool(ctx: &Ctx<'_>, line: &CommandLine<'_>) -> Result<()> {
    toolchain::check_package_tool(ctx, line.args())
}

fn node_rules(ctx: &Ctx<'_>, line: &CommandLine<'_>) -> Result<()> {
    node::check_node(ctx, line.args())
}

fn project_runner(ctx: &Ctx<'_>, line: &CommandLine<'_>) -> Result<()> {
    runner::check_runner(ctx, line.args())
}

fn file_utility(ctx: &Ctx<'_>, line: &CommandLine<'_>) -> Result<()> {
    coreutils::check(ctx, line.args())
}

fn find_rules(ctx: &Ctx<'_>, line: &CommandLine<'_>) -> Result<()> {
    find::check_find(ctx, line.args())
}

#[cfg(test)]
mod tests {
    use super::{builtin, PROGRAMS};
    use std::collections::BTreeSet;

    #[test]
    fn every_name_is_a_bare_program_name_once() {
        let mut seen = BTreeSet::new();
        for program in PROGRAMS {
            assert!(
                crate::is_valid_program_name(program.name),
                "{}",
                program.name
            );
            assert!(seen.insert(program.name), "{} twice", program.name);
            assert!(builtin(program.name).is_some_and(|p| p.name == program.name));
        }
        assert!(builtin("bash").is_none());
        assert!(builtin("").is_none());
    }

    #[test]
    fn the_project_files_that_choose_a_toolchain_name_built_in_programs() {
        for (program, _) in super::readonly::TOOLCHAIN_FILES {
            assert!(builtin(program).is_some(), "{program}");
        }
    }
}
