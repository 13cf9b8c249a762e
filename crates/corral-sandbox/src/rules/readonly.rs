//! The read-only table's judgements: invocations that only look, so the
//! approval policy lets them run without asking in `ask` and `auto_edit`
//! modes. Decided from the argv alone, never by the model. Which judgement
//! a program gets is its row of [`super::programs::PROGRAMS`]; anything
//! not on the table is not read-only. The argument rules still apply when
//! the call runs. git's part comes from its one reading ([`super::git`]).

use super::find::is_find_action;
use super::gnu::option_or_abbreviation;
use super::{leads_outside, names_secret, CommandLine};
use corral_fs::ProjectRoot;

/// What an argument may name: itself, the value of `--name=value`, and the
/// value attached to a short option (`-S.npmrc`, `-f/etc/x`).
fn values(arg: &str) -> impl Iterator<Item = &str> {
    let long_value = arg
        .strip_prefix("--")
        .and_then(|rest| rest.split_once('='))
        .map(|(_, value)| value);
    let short_value = (arg.starts_with('-') && !arg.starts_with("--"))
        .then(|| arg.get(2..))
        .flatten()
        .filter(|v| !v.is_empty());
    let plain = (!arg.starts_with('-')).then_some(arg);
    plain.into_iter().chain(long_value).chain(short_value)
}

/// Whether a `grep` argument asks it to search folders recursively (which
/// would read secret-like files the call does not name), also abbreviated
/// (`--recur`, `--dir=recurse`).
fn grep_recursive(arg: &str) -> bool {
    let short_cluster = arg.starts_with('-') && !arg.starts_with("--");
    (short_cluster && (arg.contains('r') || arg.contains('R') || arg.contains('d')))
        || ["--recursive", "--dereference-recursive", "--directories"]
            .iter()
            .any(|name| option_or_abbreviation(arg, name))
}

/// The first argument that names a secret-like file, by its name or where
/// it leads (`.env`, `HEAD:.env`, `--file=id_rsa`, `notes.txt -> .env`).
/// Reading a secret asks in every mode, also through a command.
pub(crate) fn named_secret(root: &ProjectRoot, line: &CommandLine<'_>) -> Option<String> {
    if let Some(git) = &line.git {
        return git.named_secret(root);
    }
    line.args()
        .iter()
        .find(|arg| {
            arg.split([':', '='])
                .chain(values(arg))
                .any(|part| names_secret(root, part))
        })
        .cloned()
}

/// Whether an `ls` argument follows symlinks (`-L`, `--dereference`),
/// which lists what a link inside leads to outside.
fn follows_links(arg: &str, long: &[&str]) -> bool {
    let short_cluster = arg.starts_with('-') && !arg.starts_with("--");
    (short_cluster && arg.contains('L'))
        || long.iter().any(|name| option_or_abbreviation(arg, name))
}

/// Files of the project that choose which program a toolchain command
/// really runs: rustup obeys `rust-toolchain.toml` (a `path` toolchain is
/// a folder of the project), yarn obeys `yarnPath`, corepack obeys
/// `packageManager`. Their `--version` is then project code.
pub(super) const TOOLCHAIN_FILES: &[(&str, &[&str])] = &[
    ("cargo", &["rust-toolchain", "rust-toolchain.toml"]),
    ("yarn", &[".yarnrc.yml", ".yarnrc", "package.json"]),
    ("pnpm", &["package.json"]),
];

/// The project file that chooses the program behind `program`, if any
/// (`package.json` only when it names a `packageManager`).
pub(crate) fn toolchain_override(root: &ProjectRoot, program: &str) -> Option<&'static str> {
    let files = TOOLCHAIN_FILES.iter().find(|(p, _)| *p == program)?.1;
    let chooses = |file: &&str| match *file {
        "package.json" => root
            .dir()
            .read_to_string(file)
            .is_ok_and(|text| text.contains("packageManager")),
        _ => root.dir().symlink_metadata(file).is_ok(),
    };
    files.iter().copied().find(chooses)
}

/// `ls` only looks unless it follows symlinks out.
pub(super) fn ls_looks(_root: &ProjectRoot, line: &CommandLine<'_>) -> bool {
    !line
        .args()
        .iter()
        .any(|a| follows_links(a, &["--dereference"]))
}

/// `grep` only looks unless it recurses (reading secret-like files the
/// call does not name) or a path it is given leads outside.
pub(super) fn grep_looks(root: &ProjectRoot, line: &CommandLine<'_>) -> bool {
    !line
        .args()
        .iter()
        .any(|a| grep_recursive(a) || values(a).any(|v| leads_outside(root, v)))
}

/// `find` only looks unless it acts (`-delete`, `-exec`, ...) or follows
/// symlinks.
pub(super) fn find_looks(_root: &ProjectRoot, line: &CommandLine<'_>) -> bool {
    !line
        .args()
        .iter()
        .any(|a| is_find_action(a) || matches!(a.as_str(), "-L" | "-H" | "-follow"))
}

#[cfg(test)]
mod tests {
    use crate::rules::{is_read_only, CommandLine};
    use crate::ExecShellInput;
    use corral_fs::ProjectRoot;

    #[test]
    fn read_only_table() {
        let dir = tempfile::tempdir().unwrap();
        let root = ProjectRoot::open(dir.path()).unwrap();
        // (program, args, read-only)
        let rows: &[(&str, &[&str], bool)] = &[
            ("ls", &["-la"], true),
            ("grep", &["-n", "fn main", "src/main.rs"], true),
            // Recursive grep would read `.env` and keys without naming them.
            ("grep", &["-rn", "fn main", "src"], false),
            ("grep", &["-nR", "x", "."], false),
            ("grep", &["--recursive", "x"], false),
            ("grep", &["--directories=recurse", "x", "."], false),
            (
                "git",
                &["diff", "--no-index", "/dev/null", "/etc/passwd"],
                false,
            ),
            ("git", &["blame", "--contents", "/etc/passwd", "x"], false),
            ("git", &["show", "--textconv", "HEAD:x"], false),
            ("git", &["grep", "-iO", "x"], false),
            ("git", &["grep", "--open=vim", "x"], false),
            ("git", &["log", "--grep=fix"], true),
            // abbreviated, and paths outside the repository
            ("git", &["blame", "--cont", "/etc/hostname", "x"], false),
            ("git", &["diff", "/etc/hostname", "x.txt"], false),
            ("git", &["diff", "../other/x", "x.txt"], false),
            ("git", &["diff", "main..dev"], true),
            ("git", &["grep", "--untracked", "-e", "="], false),
            ("git", &["grep", "--no-exclude-standard", "x"], false),
            ("git", &["status", "--untracked-files=all"], true),
            ("grep", &["--recur", "-H", "x", "."], false),
            ("grep", &["--dir=recurse", "x", "."], false),
            ("grep", &["--direc", "recurse", "x", "."], false),
            ("grep", &["--dereference-r", "x", "."], false),
            ("find", &[".", "-name", "*.rs"], true),
            ("find", &[".", "-delete"], false),
            ("find", &[".", "-exec", "rm", "{}", ";"], false),
            ("git", &["status"], true),
            ("git", &["--no-pager", "log", "-5"], true),
            ("git", &["diff", "--stat"], true),
            ("git", &["diff", "--output=x.patch"], false),
            ("git", &["diff", "--ext-diff"], false),
            ("git", &["grep", "-Ovim", "x"], false),
            ("git", &["show", "HEAD"], true),
            ("git", &["rev-parse", "HEAD"], true),
            ("git", &["branch"], true),
            ("git", &["branch", "-a", "-v"], true),
            ("git", &["branch", "new-feature"], false),
            ("git", &["branch", "-D", "main"], false),
            ("git", &["tag"], true),
            ("git", &["tag", "v1"], false),
            ("git", &["remote", "-v"], true),
            ("git", &["remote", "add", "x", "y"], false),
            ("git", &["stash", "list"], true),
            ("git", &["stash"], false),
            ("git", &["config", "--get", "user.name"], true),
            ("git", &["config", "user.name", "x"], false),
            // The legacy set form with a value that looks like a read word.
            ("git", &["config", "core.hooksPath", "get"], false),
            ("git", &["config", "core.hooksPath", "list"], false),
            ("git", &["config", "--global", "--get", "user.name"], false),
            ("git", &["config", "--get", "user.name"], true),
            ("git", &["config", "--list", "--show-origin"], false),
            ("git", &["blame", "-S.npmrc", "a.txt"], true),
            ("git", &["blame", "-S../outside/x", "a.txt"], false),
            (
                "git",
                &["blame", "--ignore-revs-file=/tmp/x", "a.txt"],
                false,
            ),
            ("git", &["log", "-Sneedle"], true),
            ("git", &["log", "--show-signature", "-1"], false),
            ("git", &["log", "--format=%G?"], false),
            ("ls", &["-laL", "."], false),
            ("ls", &["--dereference", "out"], false),
            ("find", &["-L", ".", "-name", "*.txt"], false),
            ("find", &[".", "-follow"], false),
            ("grep", &["-f/etc/x", "y", "a.txt"], false),
            ("git", &["config", "get", "user.name"], true),
            ("git", &["config", "--list"], false),
            ("git", &["config", "--file", "x", "--get", "a.b"], false),
            ("git", &["--version"], true),
            ("git", &["-C", "sub", "status"], false),
            ("git", &["commit", "-m", "x"], false),
            ("git", &["add", "."], false),
            ("git", &["checkout", "."], false),
            ("git", &[], false),
            ("cargo", &["--version"], true),
            ("cargo", &["build"], false),
            ("npm", &["test"], false),
            ("node", &["-e", "1"], false),
            ("rm", &["x"], false),
            ("touch", &["x"], false),
            ("mkdir", &["x"], false),
            ("bash", &["-c", "ls"], false),
        ];
        for (program, args, want) in rows {
            let input = ExecShellInput {
                command: program.to_string(),
                args: args.iter().map(|s| s.to_string()).collect(),
                timeout_secs: None,
                background: false,
            };
            assert_eq!(
                is_read_only(&root, &CommandLine::read(&input)),
                *want,
                "{program} {args:?}"
            );
        }
    }
}
