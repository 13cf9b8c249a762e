//! `node [options] [script | -e code] [args]`: the script, module options
//! written as paths and file options stay inside the root; no debugger
//! port. Other options are open (node runs project code by design).

use super::{looks_like_path, Ctx};
use corral_fs::Result;

/// node options that take a separate value.
const NODE_VALUE_OPTIONS: &[&str] = &[
    "-r",
    "--require",
    "--import",
    "--loader",
    "--experimental-loader",
    "-e",
    "--eval",
    "-p",
    "--print",
    "-C",
    "--conditions",
    "--input-type",
    "--env-file",
    "--env-file-if-exists",
    "--title",
    "--redirect-warnings",
    "--diagnostic-dir",
    "--report-dir",
    "--report-directory",
    "--cpu-prof-dir",
    "--heap-prof-dir",
    "--cpu-prof-name",
    "--heap-prof-name",
    "--test-reporter",
    "--test-reporter-destination",
    "--test-name-pattern",
    "--test-skip-pattern",
    "--watch-path",
];

/// node options whose value is a file (modules only when written as paths).
const NODE_PATH_OPTIONS: &[&str] = &[
    "-r",
    "--require",
    "--import",
    "--loader",
    "--experimental-loader",
    "--env-file",
    "--env-file-if-exists",
    "--redirect-warnings",
    "--diagnostic-dir",
    "--report-dir",
    "--report-directory",
    "--cpu-prof-dir",
    "--heap-prof-dir",
    "--test-reporter-destination",
    "--watch-path",
];

/// `node [options] [script | -e code] [args]`: module and file options and
/// the script stay inside the root; no debugger port.
pub(super) fn check_node(ctx: &Ctx<'_>, args: &[String]) -> Result<()> {
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        i += 1;
        if arg == "--" {
            if let Some(script) = args.get(i) {
                ctx.path(script, script)?;
            }
            return Ok(());
        }
        if arg == "-" {
            return Ok(());
        }
        if !arg.starts_with('-') {
            ctx.path(arg, arg)?;
            return Ok(());
        }
        let name = arg.split_once('=').map_or(arg.as_str(), |(n, _)| n);
        if name.starts_with("--inspect") || name.starts_with("--debug") {
            return Err(ctx.deny(arg, "a debugger port lets any local process run code"));
        }
        let value = match arg.split_once('=') {
            Some((_, v)) if name.starts_with("--") => Some(v),
            _ if NODE_VALUE_OPTIONS.contains(&name) => {
                i += 1;
                args.get(i - 1).map(String::as_str)
            }
            _ => None,
        };
        if NODE_PATH_OPTIONS.contains(&name) {
            // A module option names a package (`ts-node/register`) or a file.
            let module = matches!(
                name,
                "-r" | "--require" | "--import" | "--loader" | "--experimental-loader"
            );
            if let Some(v) = value.filter(|v| !module || looks_like_path(v)) {
                let path = v
                    .strip_prefix("file://")
                    .or_else(|| v.strip_prefix("file:"))
                    .unwrap_or(v);
                ctx.path(v, path)?;
            }
        }
        if matches!(name, "-e" | "--eval" | "-p" | "--print") {
            return Ok(());
        }
    }
    Ok(())
}
