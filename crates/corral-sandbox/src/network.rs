//! The network on request. Commands run without the network unless the
//! user grants it for the call; the calls that fetch from the network by
//! their nature (installs, fetches, pushes) say so before anyone is asked,
//! and a command that failed because the sandbox refused a connection or a
//! name lookup says so in its result.

use super::rules::CommandLine;
use super::ExecShellInput;

/// The subcommands that fetch from (or send to) the network, per program.
const FETCHES: &[(&str, &[&str])] = &[
    ("npm", &["ci", "install", "i", "add", "update", "publish"]),
    ("yarn", &["install", "add", "upgrade", "up", "dlx"]),
    ("pnpm", &["install", "i", "add", "update", "up", "dlx"]),
    ("bun", &["install", "i", "add", "update", "x"]),
    ("cargo", &["fetch", "add", "update", "publish", "search"]),
    ("pip", &["install", "download"]),
    ("pip3", &["install", "download"]),
    ("uv", &["install", "sync", "add", "lock", "pip"]),
    ("go", &["mod", "get"]),
    (
        "git",
        &["fetch", "pull", "clone", "push", "ls-remote", "submodule"],
    ),
];

/// Whether the call fetches from the network by its nature (`npm ci`,
/// `cargo fetch`, `pip install`, `git pull`...): it then asks, naming the
/// network profile, and runs with the network once the user approves it.
/// The subcommand is the first word that is not an option; git's is the
/// one its parser reads ([`CommandLine::git_subcommand`]: past `-C dir`,
/// `-c x=y`, `--git-dir=.git`); `yarn` alone installs.
pub fn wants_network(line: &CommandLine<'_>) -> bool {
    let program = line.program();
    let args = line.args();
    let Some((_, subcommands)) = FETCHES.iter().find(|(p, _)| *p == program) else {
        return false;
    };
    if program == "git" {
        return line
            .git_subcommand()
            .is_some_and(|sub| subcommands.contains(&sub));
    }
    let first = args.iter().find(|a| !a.starts_with('-'));
    if program == "yarn" && first.is_none() {
        return true;
    }
    first.is_some_and(|word| match word.as_str() {
        // `go mod tidy` and `go mod download` fetch; `go mod edit` does not.
        "mod" => args.iter().any(|a| a == "download" || a == "tidy"),
        // `uv pip install`, not `uv pip list`.
        "pip" if program == "uv" => args.iter().any(|a| a == "install" || a == "sync"),
        word => subcommands.contains(&word),
    })
}

/// What programs print when a connection or a name lookup was refused.
const REFUSALS: &[&str] = &[
    "ENETUNREACH",
    "EAI_AGAIN",
    "ENOTFOUND",
    "ECONNREFUSED",
    // Loopback exists in the sandbox's own network namespace, with nothing
    // listening on it.
    "Connection refused",
    "Network is unreachable",
    "Could not resolve host",
    "Temporary failure in name resolution",
    "Name or service not known",
    "nodename nor servname",
    "failed to lookup address",
    "dns error",
    "getaddrinfo",
    "Failed to establish a new connection",
    "network unreachable",
    "No address associated with hostname",
];

/// When a command that ran without the network failed and its output
/// shows a refused connection or name lookup: what happened and how to
/// allow it.
pub(super) fn refusal(input: &ExecShellInput, stdout: &str, stderr: &str) -> Option<String> {
    let seen = REFUSALS
        .iter()
        .find(|needle| stderr.contains(*needle) || stdout.contains(*needle))?;
    Some(format!(
        "`{}` ran without the network (the sandbox has none unless granted) and failed reaching it \
         ({seen}). If it needs the network, ask the user to approve the call with the network \
         (corral-cli: --network); it then runs in the network profile.",
        input.command
    ))
}

/// When the egress proxy refused some of a command's connections: what
/// was refused and how to allow it.
pub(super) fn proxy_refusal(input: &ExecShellInput, refused: &[String]) -> String {
    format!(
        "`{}` ran with the network through Corral's proxy, which refused: {}. \
         Only the registries on the allowlist and the domains the user allowed are reached, \
         never a local or private address. If it needs another domain, ask the user to allow it \
         (`corral-cli call` or `corral-cli mcp`: --allow-domain NAME).",
        input.command,
        refused.join("; ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wants(program: &str, args: &[&str]) -> bool {
        let input = ExecShellInput {
            command: program.to_string(),
            args: args.iter().map(|a| a.to_string()).collect(),
            timeout_secs: None,
            background: false,
        };
        wants_network(&CommandLine::read(&input))
    }

    #[test]
    fn installs_and_fetches_want_the_network() {
        assert!(wants("npm", &["ci"]));
        assert!(wants("npm", &["install", "--save-dev", "x"]));
        assert!(wants("cargo", &["fetch"]));
        assert!(wants("cargo", &["add", "serde"]));
        assert!(wants("pip", &["install", "-r", "requirements.txt"]));
        assert!(wants("uv", &["sync"]));
        assert!(wants("uv", &["pip", "install", "x"]));
        assert!(wants("go", &["mod", "download"]));
        assert!(wants("git", &["fetch", "origin"]));
        assert!(wants("git", &["-C", "sub", "pull"]));
        // git's subcommand as git reads it, past any options before it.
        assert!(wants("git", &["-C", "sub", "fetch"]));
        assert!(wants("git", &["-C", "a", "-C", "b", "fetch"]));
        assert!(wants("git", &["-c", "x=y", "pull"]));
        assert!(wants("git", &["--git-dir=.git", "fetch"]));
        assert!(wants(
            "git",
            &["--git-dir", ".git", "--work-tree", ".", "push"]
        ));
        assert!(wants("git", &["--no-pager", "ls-remote"]));
        assert!(!wants("git", &["-C", "fetch", "status"]));
        assert!(!wants("git", &["help", "fetch"]));
        assert!(!wants("git", &[]));
        assert!(wants("git", &["clone", "https://example.invalid/x"]));
        assert!(wants("yarn", &[]));
        assert!(!wants("npm", &["test"]));
        assert!(!wants("npm", &["run", "install"]));
        assert!(!wants("cargo", &["build"]));
        assert!(!wants("git", &["status"]));
        assert!(!wants("git", &["log", "a", "fetch"]));
        assert!(!wants("go", &["mod", "edit"]));
        assert!(!wants("uv", &["pip", "list"]));
        assert!(!wants("ls", &["install"]));
    }

    #[test]
    fn refusals_are_recognised_in_either_stream() {
        let call = ExecShellInput {
            command: "npm".into(),
            args: vec!["ci".into()],
            timeout_secs: None,
            background: false,
        };
        let said = refusal(&call, "", "npm ERR! code EAI_AGAIN\n").unwrap();
        assert!(
            said.contains("EAI_AGAIN") && said.contains("network"),
            "{said}"
        );
        assert!(refusal(&call, "curl: (6) Could not resolve host: x", "").is_some());
        assert!(refusal(&call, "", "error: test failed").is_none());
    }
}
