//! `call --root ssh://…`: the same call, made by the remote's corral-cli
//! over the user's ssh (and `checkpoint … --root ssh://…`, the same
//! command run where the checkpoints are). Every flag goes with it (the paths of `--store`,
//! `--index`, `--writable` and `--blocked` are the remote's); its JSON and
//! exit code come back as they are. A connection lost during the call is a
//! standardized error here, and the remote ends what it was running: its
//! stdin (held open by this side, never written) closes with the
//! connection, and `--stop-on-eof` makes that a cancel.

use corral_remote::Remote;
use corral_tools::{Error, ErrorCode};
use std::io::{IsTerminal, Write};
use std::process::{ExitCode, Output};

/// The flag the remote side is given: a closed stdin cancels the call.
pub const STOP_ON_EOF: &str = "--stop-on-eof";

/// Runs this process's `call` on `remote`; `input` is the call's input when
/// given as an argument (else it is read from stdin here and passed on).
pub fn call(remote: &Remote, input: Option<&str>, install: bool) -> Result<ExitCode, Error> {
    let mut words = forwarded(std::env::args().skip(1).collect(), &remote.path);
    let text = match input {
        // It goes on stdin, not as a word: one ssh argument holds ~128 KiB.
        Some(text) => {
            if let Some(at) = words.iter().rposition(|w| w == text) {
                words.remove(at);
            }
            text.to_string()
        }
        None => crate::read_stdin()?,
    };
    // One line: the remote reads its input as stdin's first line, then
    // watches the rest of it for the end of the connection.
    let line = crate::parse_input(&text)?.to_string();
    // With the input from stdin, there is no terminal to ask on.
    there(remote, &words, Some(&line), install, input.is_some())
}

/// Runs this process's `checkpoint` command on `remote`, where the
/// project's checkpoints are: its JSON and exit code come back as they are.
pub fn checkpoint(remote: &Remote) -> Result<ExitCode, Error> {
    let words = forwarded(std::env::args().skip(1).collect(), &remote.path);
    there(remote, &words, None, false, true).map_err(|e| match e.code {
        // `checkpoint` has no --install-remote of its own.
        ErrorCode::ApprovalRequired => e.hint(
            "Answer yes on a terminal, or copy it once with `corral-cli call --install-remote`.",
        ),
        _ => e,
    })
}

/// Runs the remote's corral-cli with `words` (and `line` as its stdin's
/// first line), copying it there first when it is missing and the user
/// agreed (`install`, or a yes on the terminal when `may_ask`).
fn there(
    remote: &Remote,
    words: &[String],
    line: Option<&str>,
    install: bool,
    may_ask: bool,
) -> Result<ExitCode, Error> {
    let mut output = run(remote, words, line)?;
    if output.status.code() == Some(corral_remote::MISSING) {
        let missing = corral_remote::missing(remote, &output.stdout)?;
        let agreed = install || (may_ask && ask(remote, &missing.folder));
        let binary = std::env::current_exe().map_err(|e| {
            Error::new(
                ErrorCode::Io,
                format!("could not find this corral-cli: {e}"),
            )
        })?;
        corral_remote::install(remote, &binary, &missing, agreed)?;
        output = run(remote, words, line)?;
    }
    match output.status.code() {
        Some(code) if code != corral_remote::SSH_FAILED && code != corral_remote::MISSING => {
            let _ = std::io::stdout().write_all(&output.stdout);
            let _ = std::io::stderr().write_all(&output.stderr);
            Ok(ExitCode::from(u8::try_from(code).unwrap_or(1)))
        }
        // 255, or ssh killed: the connection, not the call.
        _ => Err(corral_remote::failed(remote, &output)),
    }
}

/// Runs the remote's corral-cli with `words` in one connection, to its
/// end, `line` written first on its stdin.
fn run(remote: &Remote, words: &[String], line: Option<&str>) -> Result<Output, Error> {
    let mut child = corral_remote::spawn_cli(remote, words)?;
    // Held open until ssh ends (`wait_with_output` would close it first):
    // the remote cancels the call when it closes. Written from a thread
    // of its own: a remote that never reads it (not installed there) must
    // not hold this one up.
    let stdin = child.stdin.take();
    let line = line.map(|l| format!("{l}\n"));
    let writer = std::thread::spawn(move || {
        let mut stdin = stdin;
        if let (Some(stdin), Some(line)) = (stdin.as_mut(), line) {
            let _ = stdin
                .write_all(line.as_bytes())
                .and_then(|()| stdin.flush());
        }
        stdin
    });
    let output = child
        .wait_with_output()
        .map_err(|e| Error::new(ErrorCode::Io, format!("could not wait for ssh: {e}")));
    drop(writer.join());
    output
}

/// This process's arguments for the remote: `--root` its folder there,
/// `--install-remote` dropped, `--stop-on-eof` added.
fn forwarded(args: Vec<String>, path: &str) -> Vec<String> {
    let mut out = Vec::with_capacity(args.len() + 1);
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        if arg == "--root" {
            args.next();
            out.extend(["--root".to_string(), path.to_string()]);
        } else if arg.starts_with("--root=") {
            out.push(format!("--root={path}"));
        } else if arg != "--install-remote" {
            out.push(arg);
        }
        if out.len() == 1 && out[0] == "call" {
            out.push(STOP_ON_EOF.to_string());
        }
    }
    out
}

/// Asks on the terminal whether to copy corral-cli to the remote.
fn ask(remote: &Remote, folder: &str) -> bool {
    if !std::io::stdin().is_terminal() {
        return false;
    }
    eprint!(
        "corral-cli {} is not on {}. Copy it to {folder} there? [y/N] ",
        corral_remote::VERSION,
        remote.destination
    );
    let mut line = String::new();
    std::io::stdin().read_line(&mut line).is_ok() && line.trim().eq_ignore_ascii_case("y")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_remote_gets_its_folder_and_a_stop_on_eof() {
        let args = [
            "call",
            "--root",
            "ssh://box/srv/app",
            "--install-remote",
            "--mode",
            "read_only",
            "read_file",
            "{}",
        ];
        let out = forwarded(args.iter().map(|a| a.to_string()).collect(), "/srv/app");
        assert_eq!(
            out,
            [
                "call",
                STOP_ON_EOF,
                "--root",
                "/srv/app",
                "--mode",
                "read_only",
                "read_file",
                "{}"
            ]
        );
        let eq = forwarded(
            vec!["call".into(), "--root=box:/p".into(), "glob".into()],
            "/p",
        );
        assert_eq!(eq, ["call", STOP_ON_EOF, "--root=/p", "glob"]);
    }
}
