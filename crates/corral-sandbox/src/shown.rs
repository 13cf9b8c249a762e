//! A fenced run shown a few places more than its profile shows, named by
//! the caller: a user's own hook (`corral-hooks`) gets its scripts in
//! `~/.claude/hooks/` and its log files, and nothing else of the home.
//! Kept apart from the profiles' views (`namespace`, `view`): only
//! [`run_fenced_showing`] adds them, and only to the one run it starts.

use super::{process, FencedRun, ServerParts, ShellRun};
use corral_fs::{Error, ErrorCode, ProjectRoot, Result};
use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

/// One place shown to a run beyond its profile's view.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Shown {
    /// A folder or file at its own path, read-only (left out if it is
    /// gone by the time the run starts).
    ReadOnly(PathBuf),
    /// A file at its own path, writable (left out if it is gone).
    WritableFile(PathBuf),
    /// The folder `from`, writable, shown at `at` (a folder the caller
    /// made for the run, standing for one it must not see whole). Under
    /// Landlock alone it is not shown: writes to `at` are refused.
    Folder { from: PathBuf, at: PathBuf },
}

/// [`super::run_fenced`] with `shown` added to the view, in order (a
/// [`Shown::Folder`] first, then what is shown inside it). Under bwrap
/// each is a mount made before the view is made read-only; under
/// Landlock alone (which reads everywhere) a [`Shown::WritableFile`] is
/// a write rule of its own and the rest is not needed or not possible.
///
/// Errors: as [`super::run_fenced`]; `io` when the Landlock rules cannot
/// be added (the run does not start unfenced).
pub fn run_fenced_showing(
    root: &ProjectRoot,
    program: &str,
    args: &[String],
    vars: &[(String, String)],
    stdin: Vec<u8>,
    timeout: Duration,
    shown: &[Shown],
) -> Result<FencedRun> {
    let (mut parts, mut fence) = ServerParts::prepare(
        root,
        program,
        args,
        vars,
        super::profile::Profile::Build,
        true,
    )?;
    show(&mut fence, shown)?;
    let held = parts.held.take();
    let spec = process::Spec {
        held,
        stdin: Some(stdin),
        ..parts.spec(fence, args, root.path(), timeout)
    };
    let outcome = process::run(spec, &ShellRun::default())?;
    Ok(FencedRun {
        exit_code: outcome.exit_code,
        timed_out: outcome.timed_out,
        stdout: outcome.stdout.text,
        stderr: outcome.stderr.text,
    })
}

/// Adds `shown` to the fence.
fn show(fence: &mut process::Fence, shown: &[Shown]) -> Result<()> {
    match fence {
        process::Fence::Namespaces { args, .. } => {
            let at = remount_position(args);
            args.splice(at..at, bwrap_args(shown));
            Ok(())
        }
        process::Fence::Landlock { prepared, .. } => landlock_rules(prepared, shown),
    }
}

/// Where the view is made read-only (`--remount-ro /`): the mounts go
/// just before, while the sandbox's root can still take their mount
/// points. Before the closing `--` if it is not there.
fn remount_position(args: &[OsString]) -> usize {
    args.windows(2)
        .position(|pair| pair[0] == "--remount-ro" && pair[1] == "/")
        .unwrap_or(args.len().saturating_sub(1))
}

fn bwrap_args(shown: &[Shown]) -> Vec<OsString> {
    let mut args: Vec<OsString> = Vec::new();
    for place in shown {
        let (flag, from, at) = match place {
            Shown::ReadOnly(path) => ("--ro-bind-try", path, path),
            Shown::WritableFile(path) => ("--bind-try", path, path),
            Shown::Folder { from, at } => ("--bind", from, at),
        };
        args.extend([flag.into(), from.into(), at.into()]);
    }
    args
}

#[cfg(target_os = "linux")]
fn landlock_rules(prepared: &mut super::sandbox::Prepared, shown: &[Shown]) -> Result<()> {
    use super::sandbox::Prepared;
    use landlock::{AccessFs, PathBeneath, PathFd, RulesetCreatedAttr, ABI};
    let files: Vec<&PathBuf> = shown
        .iter()
        .filter_map(|place| match place {
            Shown::WritableFile(path) => Some(path),
            _ => None,
        })
        .collect();
    if files.is_empty() {
        return Ok(());
    }
    let taken = std::mem::replace(prepared, Prepared::Unavailable(String::new()));
    let Prepared::Ruleset(mut ruleset) = taken else {
        // No Landlock here: nothing is fenced, nothing to add.
        *prepared = taken;
        return Ok(());
    };
    let file_write = AccessFs::from_write(ABI::V3) & AccessFs::from_file(ABI::V3);
    for path in files {
        let Ok(fd) = PathFd::new(path) else {
            continue;
        };
        ruleset = ruleset
            .add_rule(PathBeneath::new(fd, file_write))
            .map_err(|e| {
                Error::new(
                    ErrorCode::Io,
                    format!(
                        "could not add {} to the Landlock ruleset: {e}",
                        path.display()
                    ),
                )
            })?;
    }
    *prepared = Prepared::Ruleset(ruleset);
    Ok(())
}

#[cfg(not(target_os = "linux"))]
fn landlock_rules(_prepared: &mut super::sandbox::Prepared, _shown: &[Shown]) -> Result<()> {
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_places_are_mounted_before_the_view_is_made_read_only() {
        let mut args: Vec<OsString> = [
            "--tmpfs",
            "/h",
            "--remount-ro",
            "/",
            "--remount-ro",
            "/h",
            "--",
        ]
        .iter()
        .map(OsString::from)
        .collect();
        let shown = [
            Shown::Folder {
                from: "/tmp/s".into(),
                at: "/h/.claude".into(),
            },
            Shown::ReadOnly("/h/.claude/hooks".into()),
            Shown::WritableFile("/h/.claude/a.log".into()),
        ];
        let at = remount_position(&args);
        args.splice(at..at, bwrap_args(&shown));
        let args: Vec<&str> = args.iter().filter_map(|a| a.to_str()).collect();
        assert_eq!(
            args,
            [
                "--tmpfs",
                "/h",
                "--bind",
                "/tmp/s",
                "/h/.claude",
                "--ro-bind-try",
                "/h/.claude/hooks",
                "/h/.claude/hooks",
                "--bind-try",
                "/h/.claude/a.log",
                "/h/.claude/a.log",
                "--remount-ro",
                "/",
                "--remount-ro",
                "/h",
                "--"
            ]
        );
    }
}
