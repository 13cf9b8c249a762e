//! The remote's `corral-cli`, the same version as this one: found where
//! Corral puts it (`$XDG_CACHE_HOME/corral/bin/corral-cli-VERSION`, else
//! under `~/.cache`) or on the remote's `PATH`; else copied there over the
//! same ssh, once the user agreed. A binary of another version is never
//! used: the two sides speak one version of the tools.

use crate::{Remote, SSH_FAILED};
use corral_protocol::{Error, ErrorCode};
use std::io::Write;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};

/// This side's version; the remote's `corral-cli --version` must say it.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// What is missing on the remote, for the question put to the user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Install {
    /// The folder the binary would go into, on the remote.
    pub folder: String,
    /// The remote's machine (`uname -m`).
    pub machine: String,
}

/// `ssh` running the remote's `corral-cli` of this version with `args`, in
/// one connection: a script finds the binary (where Corral puts it, then
/// the remote's `PATH`) and runs it in its place. When there is none, it
/// prints what is missing and exits with [`MISSING`]: read it with
/// [`missing`], copy the binary with [`install`], and run again.
pub fn cli_command<S: AsRef<str>>(remote: &Remote, args: &[S]) -> Result<Command, Error> {
    let find = r#"ver=$1; shift; dir="${XDG_CACHE_HOME:-$HOME/.cache}/corral/bin"
for c in "$dir/corral-cli-$ver" "$(command -v corral-cli 2>/dev/null)"; do
  if [ -n "$c" ] && [ -x "$c" ] && [ "$("$c" --version 2>/dev/null)" = "corral-cli $ver" ]; then exec "$c" "$@"; fi
done
echo "corral-cli-missing $dir $(uname -m)"; exit 97"#;
    let mut words = vec!["sh", "-c", find, "corral", VERSION];
    words.extend(args.iter().map(AsRef::as_ref));
    remote.command(&words)
}

/// [`cli_command`] started, its stdin, stdout and stderr piped to this
/// side.
pub fn spawn_cli<S: AsRef<str>>(remote: &Remote, args: &[S]) -> Result<Child, Error> {
    cli_command(remote, args)?
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| {
            Error::new(ErrorCode::Io, format!("could not run ssh: {e}"))
                .hint("Install OpenSSH's client (`ssh`).")
        })
}

/// The exit code of [`cli_command`] when the remote has no `corral-cli` of
/// this version.
pub const MISSING: i32 = 97;

/// What is missing on the remote, from the output of a [`cli_command`]
/// that exited with [`MISSING`]; an error when it says something else.
pub fn missing(remote: &Remote, stdout: &[u8]) -> Result<Install, Error> {
    let said = String::from_utf8_lossy(stdout);
    let line = said.lines().last().unwrap_or_default();
    let mut words = line
        .strip_prefix("corral-cli-missing ")
        .unwrap_or_default()
        .rsplitn(2, ' ');
    let (machine, folder) = (
        words.next().unwrap_or_default(),
        words.next().unwrap_or_default(),
    );
    if folder.is_empty() {
        return Err(Error::new(
            ErrorCode::Io,
            format!(
                "{} did not say whether corral-cli is there: {line:?}",
                remote.destination
            ),
        ));
    }
    Ok(Install {
        folder: folder.to_string(),
        machine: machine.to_string(),
    })
}

/// Copies `binary` to the remote, where [`cli_command`] finds it, when the
/// user agreed (`agreed`) and the remote is the machine it was built for.
// Reads the running corral-cli's own binary, never a project's file.
#[allow(clippy::disallowed_methods)]
pub fn install(
    remote: &Remote,
    binary: &Path,
    missing: &Install,
    agreed: bool,
) -> Result<(), Error> {
    let Install { folder, machine } = missing;
    if machine != std::env::consts::ARCH {
        return Err(Error::new(
            ErrorCode::InvalidInput,
            format!(
                "{} is a {machine} machine, and this corral-cli is built for {}",
                remote.destination,
                std::env::consts::ARCH
            ),
        )
        .hint(format!(
            "Install corral-cli {VERSION} for {machine} on it, on its PATH."
        ))
        .detail("machine", machine.as_str()));
    }
    if !agreed {
        return Err(Error::new(
            ErrorCode::ApprovalRequired,
            format!(
                "corral-cli {VERSION} is not on {}: it would be copied to {folder}",
                remote.destination
            ),
        )
        .hint("Pass --install-remote to copy it there (or answer yes on a terminal).")
        .detail("folder", folder.as_str()));
    }
    let bytes = std::fs::read(binary).map_err(|e| {
        Error::new(
            ErrorCode::Io,
            format!("could not read {}: {e}", binary.display()),
        )
    })?;
    // Written beside, then moved into place: a cut copy is never run.
    let put = r#"set -e; mkdir -p "$1"; t="$1/.corral-cli-$2.$$"; cat > "$t"; chmod 755 "$t"; mv -f "$t" "$1/corral-cli-$2"; "$1/corral-cli-$2" --version"#;
    let said = run(
        remote.command(&["sh", "-c", put, "corral", folder, VERSION])?,
        Some(&bytes),
        remote,
    )?;
    if said.trim() != format!("corral-cli {VERSION}") {
        return Err(Error::new(
            ErrorCode::Io,
            format!(
                "the corral-cli copied to {} does not run there: {said:?}",
                remote.destination
            ),
        ));
    }
    Ok(())
}

/// Runs one ssh command to its end, `input` on its stdin; its stdout.
fn run(mut ssh: Command, input: Option<&[u8]>, remote: &Remote) -> Result<String, Error> {
    ssh.stdin(if input.is_some() {
        Stdio::piped()
    } else {
        Stdio::null()
    })
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    let mut child = ssh.spawn().map_err(|e| {
        Error::new(ErrorCode::Io, format!("could not run ssh: {e}"))
            .hint("Install OpenSSH's client (`ssh`).")
    })?;
    if let (Some(bytes), Some(mut stdin)) = (input, child.stdin.take()) {
        // A failed write shows as ssh's own failure below.
        let _ = stdin.write_all(bytes);
    }
    let output = child
        .wait_with_output()
        .map_err(|e| Error::new(ErrorCode::Io, format!("could not wait for ssh: {e}")))?;
    if !output.status.success() {
        return Err(failed(remote, &output));
    }
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}

/// ssh's failure, told by its last line on stderr: the connection (255,
/// or ssh killed), or the remote command's.
pub fn failed(remote: &Remote, output: &Output) -> Error {
    let said = String::from_utf8_lossy(&output.stderr);
    let last = said
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("ssh ended")
        .trim();
    if remote.pod.is_some() || matches!(output.status.code(), Some(SSH_FAILED) | None) {
        connection_error(remote, last)
    } else {
        Error::new(
            ErrorCode::Io,
            format!("a command on {} failed: {last}", remote.destination),
        )
    }
}

/// The connection to `remote` could not be made, or was lost.
pub fn connection_error(remote: &Remote, said: &str) -> Error {
    if remote.pod.is_some() {
        // A pod's serve ends when its stdin closes: no new one follows.
        return Error::new(
            ErrorCode::Io,
            format!("the connection to {} failed or was lost: {said}", remote.display()),
        )
        .hint("kubectl's words say why. The task's pod ends with its session: what it held since the branch was last brought back is lost; start the task again.")
        .detail("kubectl", said);
    }
    if remote.destination.is_empty() {
        // A container here: no ssh to check.
        return Error::new(
            ErrorCode::Io,
            format!("the connection to {} failed or was lost: {said}", remote.display()),
        )
        .hint("The task's container ended or could not start: see the engine's own words above; the next call starts a new one.")
        .detail("engine", said)
        .retryable(true);
    }
    Error::new(
        ErrorCode::Io,
        format!("the connection to {} failed or was lost: {said}", remote.destination),
    )
    .hint(format!(
        "Check that `ssh {}` logs in without a password prompt (its host key in known_hosts, a key or the agent).",
        remote.destination
    ))
    .detail("ssh", said)
    .retryable(true)
}
