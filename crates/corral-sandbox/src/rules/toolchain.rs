//! Rules of the package tools: `cargo npm yarn pnpm bun` (`git` is in
//! [`super::git`], `node` in [`super::node`]).
//!
//! These run project code by design (`npm run`, `cargo build` execute what
//! the project says), so their option sets stay open. What is refused:
//! options that point them at a folder outside the root (`--prefix`,
//! `--manifest-path`, `-C`...), a configuration file from outside, and
//! global installs.

use super::Ctx;
use corral_fs::Result;

/// Whether `arg` is the long option `name`, bare or with `=value`.
fn option_is(arg: &str, name: &str) -> bool {
    arg == name || arg.strip_prefix(name).is_some_and(|r| r.starts_with('='))
}

/// If `arg` is one of `names` (`--x value`, `--x=value`; `-C value`),
/// returns its value (`None` inside when the value is missing) and moves
/// `i` past a separate value.
fn value_of<'a>(
    arg: &'a str,
    next: Option<&'a String>,
    names: &[&str],
    i: &mut usize,
) -> Option<Option<&'a str>> {
    for name in names {
        if arg == *name {
            *i += 1;
            return Some(next.map(String::as_str));
        }
        if let Some(v) = arg.strip_prefix(name).and_then(|r| r.strip_prefix('=')) {
            return Some(Some(v));
        }
    }
    None
}

/// Per tool: options whose value is a path, and options refused.
fn package_tool_rules(program: &str) -> (&'static [&'static str], &'static [&'static str]) {
    match program {
        "cargo" => (
            &[
                "--manifest-path",
                "--target-dir",
                "--artifact-dir",
                "--out-dir",
                "--lockfile-path",
                "--root",
                "--path",
                "-C",
            ],
            &[],
        ),
        "npm" => (
            &[
                "--prefix",
                "-C",
                "--cache",
                "--userconfig",
                "--globalconfig",
            ],
            &["-g", "--global", "--location=global"],
        ),
        "yarn" => (
            &[
                "--cwd",
                "--cache-folder",
                "--modules-folder",
                "--global-folder",
                "--link-folder",
            ],
            &["global"],
        ),
        "pnpm" => (
            &[
                "-C",
                "--dir",
                "--store-dir",
                "--virtual-store-dir",
                "--modules-dir",
                "--global-dir",
            ],
            &["-g", "--global"],
        ),
        _ => (&["--cwd", "--cache-dir"], &["-g", "--global"]),
    }
}

/// `cargo npm yarn pnpm bun`: path options inside the root, no global
/// installs. Arguments after `--` belong to the program being run.
pub(super) fn check_package_tool(ctx: &Ctx<'_>, args: &[String]) -> Result<()> {
    let (paths, denied) = package_tool_rules(ctx.program);
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        i += 1;
        if arg == "--" {
            break;
        }
        if denied.contains(&arg.as_str())
            || (arg == "--location" && args.get(i).is_some_and(|v| v == "global"))
        {
            return Err(ctx.deny(arg, "global installs change the machine, not the project"));
        }
        if ctx.program == "cargo" && option_is(arg, "--config") {
            let value = match arg.split_once('=') {
                Some((_, v)) => Some(v),
                None => {
                    i += 1;
                    args.get(i - 1).map(String::as_str)
                }
            };
            // `--config KEY=VALUE` is inline; anything else is a file.
            if let Some(file) = value.filter(|v| !v.contains('=')) {
                ctx.path(file, file)?;
            }
            continue;
        }
        if let Some(Some(value)) = value_of(arg, args.get(i), paths, &mut i) {
            ctx.path(value, value)?;
        }
    }
    Ok(())
}
