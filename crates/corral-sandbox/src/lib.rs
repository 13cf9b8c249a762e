//! Corral's sandbox: `exec_shell` runs one allowlisted program, an argv, no
//! shell, cwd = the project root, fenced by the kernel.
//!
//! A call is checked first (the allowlist, the argument rules), then run
//! in the profile the caller chose (read-only, build, network), inside
//! bubblewrap's namespaces where they can be made (Landlock where they
//! cannot), with a view of the machine built from an allowlist, a socket
//! filter, limits, and an egress proxy as the only way out. The same fence
//! holds the servers the app starts ([`server_command`],
//! [`language_server_command`]). The tool layer (`corral-tools`) wraps it
//! as a tool; this crate knows nothing of tools or policy.
//!
//! ```
//! use corral_sandbox::{check, ExecShellInput};
//! use corral_fs::ProjectRoot;
//!
//! let dir = tempfile::tempdir()?;
//! let root = ProjectRoot::open(dir.path())?;
//! let call = |command: &str, args: &[&str]| ExecShellInput {
//!     command: command.into(),
//!     args: args.iter().map(|a| a.to_string()).collect(),
//!     timeout_secs: None,
//!     background: false,
//! };
//! // Not on the allowlist, or an argument leading outside: refused before
//! // anything runs.
//! assert_eq!(check(&root, &call("curl", &["example.com"])).unwrap_err().code.as_str(), "command_not_allowed");
//! assert_eq!(check(&root, &call("rm", &["-rf", "/"])).unwrap_err().code.as_str(), "argument_not_allowed");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! The steps, each in its own file:
//! - `allowlist`: the program must be on the list (or one the user added:
//!   [`ShellRun::extra_programs`]) and resolve to an executable outside the
//!   project (a project-local `node_modules/.bin/git` never shadows the
//!   real one);
//! - `rules`: per-program argument rules, table-driven (paths stay inside
//!   the root, `rm` never removes the root, no `find -exec`, no `git -c`...),
//!   and the read-only table the approval policy uses;
//! - `env`: the child's environment, built from nothing, and its TMPDIR;
//! - `profile`: which fence a call gets (read-only, build, network), chosen
//!   from the call and the caller's grants, never by the model;
//! - `namespace`: the fence itself, bubblewrap's mount, network and PID
//!   namespaces: `/` read-only, no home, the project writable or not,
//!   secrets masked, no network unless granted;
//! - `sandbox`: Landlock, the fallback where namespaces cannot be made;
//! - `saved`: the user's saved rules (program + argv prefix) that let a
//!   command run without asking;
//! - `network`: which calls fetch from the network, and the failures that
//!   show the sandbox refused a connection;
//! - `proxy`: the egress proxy, a command's only way out when it has the
//!   network: allowed domains only, never a local or private address;
//! - `ports` and `forward`: the ports a background command listens on,
//!   and their forwards to the host when it has a network namespace of
//!   its own;
//! - `process`: spawn in its own process group, stream and cap the output,
//!   time out and cancel by killing the whole group;
//! - `launch`: bwrap started without forking the caller, its child put in
//!   the command's cgroups and rlimits before the program runs.
//!
//! A timeout is a result (`timed_out: true` with the partial output). A
//! cancel is the `cancelled` error whose details carry the partial
//! `stdout`/`stderr`: the user stopped the call, so the agent should not
//! read it as a finished command.

mod ahead;
mod allowlist;
pub mod background;
mod caches;
mod capture;
mod credentials;
mod env;
mod forward;
mod gitconfig;
mod gitdir;
mod holds;
mod home;
mod hooks;
mod launch;
mod limits;
mod namespace;
mod network;
mod ports;
mod prepared;
mod probed;
mod process;
mod profile;
mod proxy;
mod rules;
mod sandbox;
mod saved;
mod seccomp;
pub mod secret_links;
mod shown;
mod stamp;
mod view;
mod walks;

use corral_fs::ProjectRoot;
use corral_fs::{Error, ErrorCode, Result};
use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

pub use allowlist::{is_valid_program_name, ALLOWED_PROGRAMS};
pub use caches::limit_bytes as caches_limit_bytes;
pub use capture::{HEAD_BYTES, TAIL_BYTES};
pub use home::home as home_dir;
pub use launch::inherit_nothing_from_the_launcher;
pub use limits::{budget, Limit, Limits};
pub use namespace::available as namespaces_available;
pub use network::wants_network;
pub use profile::{is_read_only, Profile};
pub use proxy::{
    connect as connect_out, is_valid_pattern as is_valid_domain_pattern, DomainAsk, Egress,
    Refused, DEFAULT_DOMAINS,
};
pub use rules::{CommandLine, GitWrites, Program, ReadOnly, PROGRAMS};
pub use saved::{rule_covering, SavedRule};
pub use shown::{run_fenced_showing, Shown};

/// The folders the sandbox finds programs in: cargo's `bin`, then the
/// system's.
pub fn program_folders() -> Vec<std::path::PathBuf> {
    env::search_path()
}

/// Time limit when `timeout_secs` is not given.
pub const DEFAULT_TIMEOUT_SECS: u64 = 30;
/// Largest accepted `timeout_secs`.
pub const MAX_TIMEOUT_SECS: u64 = 600;

/// Input of `exec_shell`.
#[derive(Debug, Clone, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExecShellInput {
    /// The program, by name (not a path): one of those the description names.
    pub command: String,
    /// Arguments, one per element; no shell syntax is interpreted.
    #[serde(default)]
    pub args: Vec<String>,
    /// Time limit in seconds (default 30, max 600).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 600))]
    pub timeout_secs: Option<u64>,
    /// Start it and return its run_id at once (a server, a watcher, a long
    /// build); read its output with command_output, stop it with
    /// stop_command. Its time limit is then 600 s unless given.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub background: bool,
}

/// Result of `exec_shell`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema, ts_rs::TS)]
#[ts(rename = "ShellOutput")]
pub struct ExecShellOutput {
    /// The program as given.
    pub command: String,
    /// The arguments as given.
    pub args: Vec<String>,
    /// Standard output (lossy UTF-8; head and tail kept past the cap).
    pub stdout: String,
    /// Standard error (lossy UTF-8; head and tail kept past the cap).
    pub stderr: String,
    /// The exit code; `None` when the program was killed by a signal
    /// (including the timeout).
    pub exit_code: Option<i32>,
    /// Whether the time limit killed the process group.
    pub timed_out: bool,
    /// Wall time from spawn to the end of output.
    #[ts(type = "number")]
    pub duration_ms: u64,
    /// Bytes of stdout dropped from the middle.
    #[ts(type = "number")]
    pub stdout_truncated_bytes: u64,
    /// Bytes of stderr dropped from the middle.
    #[ts(type = "number")]
    pub stderr_truncated_bytes: u64,
    /// The profile the command ran in.
    pub profile: Profile,
    /// What fenced it in.
    pub sandbox: Sandbox,
    /// Whether any sandbox was applied (`sandbox` is not `none`).
    pub sandboxed: bool,
    /// What could not be applied, and why (absent when the whole profile
    /// was enforced).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub sandbox_note: Option<String>,
    /// The command failed and its output shows the sandbox refused a
    /// connection or a name lookup (it ran without the network), or the
    /// egress proxy refused a domain or an address: what happened and how
    /// to allow it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub network_refused: Option<String>,
    /// A limit the command hit (processes, memory, file size); the note
    /// says which and how much.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub limit_hit: Option<Limit>,
}

/// What fenced a command in.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema, ts_rs::TS,
)]
#[serde(rename_all = "snake_case")]
pub enum Sandbox {
    /// bubblewrap's namespaces: the whole profile.
    Namespaces,
    /// Landlock only: writes confined, but reads, metadata outside the
    /// project and the network are not.
    Landlock,
    /// Nothing.
    None,
}

/// Which stream a chunk of output came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum Stream {
    Stdout,
    Stderr,
}

/// A cancel switch shared between the caller and a running command.
#[derive(Debug, Clone, Default)]
pub struct CancelToken(Arc<AtomicBool>);

impl CancelToken {
    /// Asks the command to stop (its whole process group is killed).
    pub fn cancel(&self) {
        self.0.store(true, Ordering::SeqCst);
    }
    /// Whether cancel was asked.
    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }
}

/// Receives output chunks as they arrive. Called from the reader threads,
/// never after `exec_shell` has returned.
pub type OutputSink = Arc<dyn Fn(Stream, &[u8]) + Send + Sync>;

/// How a shell call is run: cancel switch, an optional live-output sink,
/// whether the user granted this call the network, and the user's own
/// programs and saved rules (all from the caller, never from the project).
#[derive(Clone, Default)]
pub struct ShellRun {
    pub cancel: CancelToken,
    pub on_output: Option<OutputSink>,
    /// Run in the network profile (a grant of the user's, never the model's).
    pub network: bool,
    /// Where a command with the network may go through the egress proxy.
    pub egress: Egress,
    /// Programs the user added beyond the built-in allowlist: no argument
    /// rules of their own (the sandbox is their fence), never read-only.
    pub extra_programs: Vec<String>,
    /// Saved rules: a call of one of these argv prefixes runs without
    /// asking, unless it names a secret-like file or a path outside, or
    /// needs the network ([`rule_covering`]).
    pub rules: Vec<SavedRule>,
    /// Where `background: true` commands run (the app's open project);
    /// `None`: such a call is refused.
    pub background: Option<Arc<background::Background>>,
    /// Called with the pid of the process started (bwrap's, or the
    /// program's under Landlock), right after it starts.
    pub on_spawn: Option<Arc<dyn Fn(u32) + Send + Sync>>,
    /// What the command may use (processes, memory, file size, open
    /// files); the defaults unless the caller says otherwise.
    pub limits: Limits,
}

/// The first argument that names a secret-like file, by name or through a
/// symlink (`.env`, `HEAD:.env`, `notes.txt -> .env`); such a command asks
/// in every mode, as `read_file` of that file does.
pub fn named_secret(root: &ProjectRoot, input: &ExecShellInput) -> Option<String> {
    rules::named_secret(root, &CommandLine::read(input))
}

/// What the approval policy needs to know of one call, from one reading of
/// its arguments (git's are parsed once for all of it).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Assessment<'r> {
    /// It only looks, and may run in the read-only profile
    /// ([`is_read_only`]).
    pub read_only: bool,
    /// An argument naming a secret-like file ([`named_secret`]).
    pub named_secret: Option<String>,
    /// It fetches from the network by its nature ([`wants_network`]).
    pub network: bool,
    /// The caller's saved rule that lets it run unasked ([`rule_covering`]).
    pub rule: Option<&'r SavedRule>,
    /// git must write more of its own folder than ordinary work does (its
    /// `config`): the call asks in every mode, for this reason.
    pub git_writes: Option<GitWrites>,
}

/// Reads the call once and judges it: with `precheck`, the checks
/// [`check_with`] makes refuse it first; then the facts the policy decides
/// by ([`Assessment`]).
pub fn assess<'r>(
    root: &ProjectRoot,
    input: &ExecShellInput,
    run: &'r ShellRun,
    precheck: bool,
) -> Result<Assessment<'r>> {
    let line = CommandLine::read(input);
    if precheck {
        check_line(root, &line, run)?;
    }
    Ok(Assessment {
        read_only: profile::read_only(root, &line),
        named_secret: rules::named_secret(root, &line),
        network: network::wants_network(&line),
        rule: rule_covering(root, &line, &run.rules),
        git_writes: line.git_writes_beyond(),
    })
}

/// Checks a call against the allowlist and the argument rules without
/// running it (the same checks [`exec_shell`] makes first). Lets a caller
/// refuse a call before asking the user to approve it.
pub fn check(root: &ProjectRoot, input: &ExecShellInput) -> Result<()> {
    check_with(root, input, &ShellRun::default())
}

/// [`check`] with the caller's added programs ([`ShellRun::extra_programs`]).
pub fn check_with(root: &ProjectRoot, input: &ExecShellInput, run: &ShellRun) -> Result<()> {
    check_line(root, &CommandLine::read(input), run)
}

/// [`check_with`] of a call already read.
fn check_line(root: &ProjectRoot, line: &CommandLine<'_>, run: &ShellRun) -> Result<()> {
    let input = line.input();
    timeout_of(input.timeout_secs)?;
    check_nul(&input.args)?;
    // The rules judge the arguments whether or not the program is installed.
    allowlist::ensure_allowed(&input.command, &run.extra_programs)?;
    check_arguments(root, line)?;
    allowlist::resolve(root, &input.command, &run.extra_programs).map(|_| ())
}

/// The argument rules of a built-in program; a program the user added has
/// none (the build profile's mounts are its fence).
fn check_arguments(root: &ProjectRoot, line: &CommandLine<'_>) -> Result<()> {
    if allowlist::is_builtin(line.program()) {
        rules::check(root, line)
    } else {
        Ok(())
    }
}

fn check_nul(args: &[String]) -> Result<()> {
    match args.iter().find(|a| a.contains('\0')) {
        Some(bad) => Err(Error::invalid_input("an argument contains a NUL byte")
            .detail("argument", bad.replace('\0', "\\0"))),
        None => Ok(()),
    }
}

/// Runs one allowlisted program in the project root.
///
/// Errors: `invalid_input` (timeout out of range, NUL in an argument),
/// `command_not_allowed`, `argument_not_allowed`, `not_found` (allowed but
/// not installed), `cancelled` (with the partial output in `details`), `io`.
pub fn exec_shell(
    root: &ProjectRoot,
    input: &ExecShellInput,
    run: &ShellRun,
) -> Result<ExecShellOutput> {
    exec(root, input, run, false)
}

/// [`exec_shell`]; a `background` command (`background::Background`) may
/// run for hours: it holds every absent auto-run name of the root for its
/// whole run, and what it makes of one below the root is removed as soon
/// as it is seen, not only after it.
fn exec(
    root: &ProjectRoot,
    input: &ExecShellInput,
    run: &ShellRun,
    background: bool,
) -> Result<ExecShellOutput> {
    let timeout = timeout_of(input.timeout_secs)?;
    check_nul(&input.args)?;
    let program = allowlist::resolve(root, &input.command, &run.extra_programs)?;
    let line = CommandLine::read(input);
    check_arguments(root, &line)?;
    let profile = profile::choose(root, &line, run.network);
    let places = ahead::take(&run.limits)?;
    let (tmp, tmpdir, cgroups) = (&places.tmp, &places.tmpdir, &places.cgroups);
    let mut vars = env::build(&input.command, tmpdir, root.path());
    let place = Place {
        tmpdir,
        tmp,
        cwd: root.path(),
        executable: &program,
        egress: &run.egress,
        tmp_bytes: run.limits.tmp_bytes,
    };
    let held = profile.writes_project().then(|| {
        let paths = namespace::held_paths(root.path(), &input.command, background);
        holds::Held::take_paths(root.path(), paths)
    });
    // The auto-run names as the fence found them (the namespaces, a
    // profile that writes the project).
    let (fence, mut notes, mut auto_run) = fence(root, input, profile, &place, background)?;
    if fence.has_proxy() {
        vars.extend(proxy::env_vars());
    }
    let project = root.path();
    let mut watch = auto_run
        .as_mut()
        .filter(|_| background)
        .map(|before| move || before.look(project));
    let spec = process::Spec {
        program: &program,
        fence,
        name: &input.command,
        args: &input.args,
        cwd: root.path(),
        env: &vars,
        timeout,
        limits: run.limits,
        cgroups,
        held,
        stdin: None,
        look: watch.as_mut().map(|look| look as &mut dyn FnMut()),
    };
    let outcome = process::run(spec, run);
    ahead::put_away(places);
    if let Some(before) = auto_run {
        notes.extend(before.finish(root.path()));
    }
    if profile.writes_project() && view::needs_toolchains(&input.command, &program) {
        if let Some(dir) = caches::dir() {
            caches::measure(&dir);
        }
    }
    let outcome = outcome?;
    notes.extend(outcome.sandbox_note);
    let mut limits_hit = outcome.limits_hit;
    let refused_size = outcome.exit_code != Some(0)
        && (limits::file_too_large(&outcome.stderr.text)
            || limits::file_too_large(&outcome.stdout.text));
    if refused_size && !limits_hit.contains(&Limit::FileSize) {
        limits_hit.push(Limit::FileSize);
    }
    let caches_full = notes.iter().any(|n| n.starts_with(CACHES_FULL));
    let out_of_space = outcome.exit_code != Some(0)
        && (limits::out_of_space(&outcome.stderr.text)
            || limits::out_of_space(&outcome.stdout.text)
            || caches_full);
    if out_of_space && !limits_hit.contains(&Limit::Disk) {
        limits_hit.push(Limit::Disk);
    }
    notes.extend(limits_hit.iter().map(|l| l.describe(&run.limits)));
    let limit_hit = limits_hit.first().copied();
    let sandbox_note = (!notes.is_empty()).then(|| notes.join("; "));
    let network_refused = if !outcome.proxy_refused.is_empty() {
        Some(network::proxy_refusal(input, &outcome.proxy_refused))
    } else {
        (!profile.has_network() && outcome.exit_code != Some(0))
            .then(|| network::refusal(input, &outcome.stdout.text, &outcome.stderr.text))
            .flatten()
    };
    if outcome.cancelled {
        let stopped = Error::new(
            ErrorCode::Cancelled,
            format!("`{}` was stopped by the user", input.command),
        )
        .detail("command", input.command.as_str())
        .detail("args", input.args.clone())
        .detail("stdout", outcome.stdout.text)
        .detail("stderr", outcome.stderr.text)
        .detail("duration_ms", outcome.duration_ms);
        // What was removed after it (a file another program runs by
        // itself) is said even of a stopped run.
        return Err(match sandbox_note {
            Some(note) => stopped.detail("sandbox_note", note),
            None => stopped,
        });
    }
    // git prints remote URLs and config values: a token in either never
    // reaches the model.
    let (stdout, stderr) = if input.command == "git" {
        let mask = |text: String| match credentials::mask(&text) {
            std::borrow::Cow::Borrowed(_) => text,
            std::borrow::Cow::Owned(masked) => masked,
        };
        (mask(outcome.stdout.text), mask(outcome.stderr.text))
    } else {
        (outcome.stdout.text, outcome.stderr.text)
    };
    Ok(ExecShellOutput {
        command: input.command.clone(),
        args: input.args.clone(),
        stdout,
        stderr,
        exit_code: outcome.exit_code,
        timed_out: outcome.timed_out,
        duration_ms: outcome.duration_ms,
        stdout_truncated_bytes: outcome.stdout.dropped,
        stderr_truncated_bytes: outcome.stderr.dropped,
        profile,
        sandbox: outcome.sandbox,
        sandboxed: outcome.sandbox != Sandbox::None,
        sandbox_note,
        network_refused,
        limit_hit,
    })
}

/// A program that serves over its stdin and stdout (an MCP server the
/// user configured), fenced like a command in the build profile: the
/// project writable, `/` read-only, no home, its own `/tmp`, the network
/// only when `network` (through the egress proxy, to the default
/// allowlist's domains). Its environment is built from nothing, as a
/// command's, plus `vars`. It starts in its private folder, unless
/// `in_project`: then in the project, whose files could choose what a
/// launcher runs (`npx` prefers the project's `node_modules`, `python -m`
/// its folder). Its package caches are private too (npm, uv), so nothing
/// a command left in the user's caches runs in it, and Python and uv are
/// told to ignore the working folder's modules and configuration.
pub struct ServerCommand {
    /// stdin, stdout and stderr piped, a process group of its own. Spawn
    /// it from a thread that lives as long as the server should (the
    /// server gets SIGKILL when that thread ends) and kill its process
    /// group to stop it.
    pub command: std::process::Command,
    /// Keep it while the server runs.
    pub folder: ServerFolder,
}

/// A server's private folder (its TMPDIR), removed when dropped, its
/// egress proxy, stopped when dropped, and its count in the holds of the
/// agent's configuration (`holds`), counted out when dropped.
pub struct ServerFolder(
    #[allow(dead_code)] env::TempDir,
    #[allow(dead_code)] hooks::Status,
    #[allow(dead_code)] Option<proxy::Proxy>,
    #[allow(dead_code)] limits::Cgroups,
    #[allow(dead_code)] Option<holds::Held>,
);

/// The fenced command for a server program (see [`ServerCommand`]).
///
/// Errors: `command_not_allowed` (a path that is not an executable outside
/// the project), `not_found`, `invalid_input` (a NUL byte), `io`.
pub fn server_command(
    root: &ProjectRoot,
    program: &str,
    args: &[String],
    vars: &[(String, String)],
    network: bool,
    in_project: bool,
) -> Result<ServerCommand> {
    let profile = if network {
        Profile::Network
    } else {
        Profile::Build
    };
    fenced_server(root, program, args, vars, profile, in_project)
}

/// The fenced command for a language server: as [`server_command`], but
/// in the read-only profile (the project read-only, secret-like files
/// masked, no network). Its caches are its private folder's, gone with it.
///
/// Errors: as [`server_command`].
pub fn language_server_command(
    root: &ProjectRoot,
    program: &std::path::Path,
    args: &[String],
) -> Result<ServerCommand> {
    let program = program.to_string_lossy();
    fenced_server(root, &program, args, &[], Profile::ReadOnly, false)
}

fn fenced_server(
    root: &ProjectRoot,
    program: &str,
    args: &[String],
    vars: &[(String, String)],
    profile: Profile,
    in_project: bool,
) -> Result<ServerCommand> {
    let (parts, fence) = ServerParts::prepare(root, program, args, vars, profile, in_project)?;
    let cwd = parts.cwd.as_deref().unwrap_or(root.path());
    // A server's count in the holds is kept in its folder until it stops.
    let (command, status, proxy) =
        process::server_command(parts.spec(fence, args, cwd, Duration::MAX))?;
    Ok(ServerCommand {
        command,
        folder: ServerFolder(parts.tmp, status, proxy, parts.cgroups, parts.held),
    })
}

/// How a program fenced as a server ran once to its end ([`run_fenced`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FencedRun {
    /// `None` when a signal ended it (or its time was up).
    pub exit_code: Option<i32>,
    pub timed_out: bool,
    /// Lossy UTF-8; past 64 KiB only the first and last 64 KiB are kept.
    pub stdout: String,
    pub stderr: String,
}

/// Runs `program` once, fenced as [`server_command`] fences a server
/// without the network (the build profile, started in the project), with
/// `stdin` on its standard input, to its end or `timeout`, after which its
/// whole process group is killed (a hook's run). Started as a command is,
/// without forking this process (the fork of a process holding hundreds
/// of MiB costs tens of milliseconds).
///
/// Errors: as [`server_command`].
pub fn run_fenced(
    root: &ProjectRoot,
    program: &str,
    args: &[String],
    vars: &[(String, String)],
    stdin: Vec<u8>,
    timeout: Duration,
) -> Result<FencedRun> {
    let (mut parts, fence) = ServerParts::prepare(root, program, args, vars, Profile::Build, true)?;
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

/// A server's program, environment, private folder, cgroups and count in
/// the holds, before it starts (its fence comes beside them).
struct ServerParts {
    path: std::path::PathBuf,
    name: String,
    env: Vec<(std::ffi::OsString, std::ffi::OsString)>,
    tmp: env::TempDir,
    /// Where it starts: `None` for the project.
    cwd: Option<std::path::PathBuf>,
    cgroups: limits::Cgroups,
    held: Option<holds::Held>,
}

impl ServerParts {
    fn prepare(
        root: &ProjectRoot,
        program: &str,
        args: &[String],
        vars: &[(String, String)],
        profile: Profile,
        in_project: bool,
    ) -> Result<(ServerParts, process::Fence)> {
        check_nul(args)?;
        let path = allowlist::resolve_server(root, program)?;
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| program.to_string());
        let tmp = env::TempDir::create()?;
        let tmpdir = tmp.subdir("tmp")?;
        let mut env = env::build(&name, &tmpdir, root.path());
        let private = |sub: &str| tmpdir.join(sub).into_os_string();
        env.extend([
            ("PYTHONSAFEPATH".into(), "1".into()),
            ("UV_NO_CONFIG".into(), "1".into()),
            ("npm_config_cache".into(), private("npm-cache")),
            ("UV_CACHE_DIR".into(), private("uv-cache")),
        ]);
        if !profile.writes_project() {
            // Corral's shared caches are not writable here: its own are.
            env.retain(|(k, _)| k.as_os_str() != "XDG_CACHE_HOME");
            env.push(("XDG_CACHE_HOME".into(), private("cache")));
        }
        for (key, value) in vars {
            env.retain(|(k, _)| k.as_os_str() != key.as_str());
            env.push((key.into(), value.into()));
        }
        let input = ExecShellInput {
            command: name.clone(),
            args: args.to_vec(),
            timeout_secs: None,
            background: false,
        };
        let cwd = if in_project { root.path() } else { &tmpdir };
        let egress = Egress::default();
        let place = Place {
            tmpdir: &tmpdir,
            tmp: &tmp,
            cwd,
            executable: &path,
            egress: &egress,
            tmp_bytes: Limits::default().tmp_bytes,
        };
        let held = profile.writes_project().then(|| {
            let paths = namespace::held_paths(root.path(), &name, false);
            holds::Held::take_paths(root.path(), paths)
        });
        let (fence, _notes, _auto_run) = fence(root, &input, profile, &place, false)?;
        if fence.has_proxy() {
            env.extend(proxy::env_vars());
        }
        let parts = ServerParts {
            path,
            name,
            env,
            cwd: (!in_project).then_some(tmpdir),
            tmp,
            cgroups: limits::Cgroups::make(&Limits::default()),
            held,
        };
        Ok((parts, fence))
    }

    /// What to run, under `fence`, from `cwd`, with the default limits;
    /// no count in the holds, stdin from `/dev/null`.
    fn spec<'a>(
        &'a self,
        fence: process::Fence,
        args: &'a [String],
        cwd: &'a std::path::Path,
        timeout: Duration,
    ) -> process::Spec<'a> {
        process::Spec {
            program: &self.path,
            fence,
            name: &self.name,
            args,
            cwd,
            env: &self.env,
            timeout,
            limits: Limits::default(),
            cgroups: &self.cgroups,
            held: None,
            stdin: None,
            look: None,
        }
    }
}

/// Where one run happens: its private folders, where it starts, what runs.
struct Place<'a> {
    tmpdir: &'a std::path::Path,
    tmp: &'a env::TempDir,
    cwd: &'a std::path::Path,
    executable: &'a std::path::Path,
    /// Where the egress proxy lets a command with the network go.
    egress: &'a Egress,
    /// What its TMPDIR and `/tmp` may hold each.
    tmp_bytes: u64,
}

/// How the note begins when Corral's caches are over their limit.
const CACHES_FULL: &str = "Corral's caches are over their limit";

/// The fence for one run: bwrap's namespaces where they can be made, else
/// Landlock. Notes say what of the profile could not be applied. In the
/// namespaces, a profile that writes the project: the auto-run names the
/// fence holds, to find what the command makes of them.
fn fence(
    root: &ProjectRoot,
    input: &ExecShellInput,
    profile: Profile,
    place: &Place<'_>,
    background: bool,
) -> Result<(
    process::Fence,
    Vec<String>,
    Option<namespace::AutoRunBefore>,
)> {
    let Place {
        tmpdir, tmp, cwd, ..
    } = *place;
    let caches = caches::dir();
    let uses_caches =
        profile.writes_project() && view::needs_toolchains(&input.command, place.executable);
    if let Some(dir) = caches.as_deref().filter(|_| uses_caches) {
        caches::prepare(dir, &input.command);
    }
    let caches_full = uses_caches && caches.is_some() && caches::over_limit();
    let mut notes = Vec::new();
    if caches_full {
        notes.push(format!(
            "{CACHES_FULL}: {} MiB (`CORRAL_CACHE_LIMIT_MIB`); they are read-only to this command until cleared",
            caches::limit_bytes() >> 20
        ));
    }
    match namespace::bwrap() {
        Ok(bwrap) => {
            let prepared = prepared::view();
            let mask_dir = match &prepared {
                Some(view) => view.masks.clone(),
                None => tmp.path().join("mask"),
            };
            // The read-only profile masks secrets with them; an approved
            // git holds its absent configuration names with them, a
            // background command the absent auto-run names of the root.
            let masks = !profile.writes_project() || input.command == "git" || background;
            if prepared.is_none() && masks {
                namespace::create_masks(&mask_dir)
                    .map_err(|e| Error::from_io(&e, &mask_dir.display().to_string()))?;
            }
            let git_writes = CommandLine::read(input).git_writes_beyond();
            let layout = namespace::Layout {
                root,
                profile,
                program: &input.command,
                git_writes: git_writes.map_or(&[][..], |w| w.names),
                tmp_bytes: place.tmp_bytes,
                executable: place.executable,
                tmpdir,
                mask_dir: &mask_dir,
                etc: prepared.as_ref().map(|view| view.etc.as_path()),
                cwd,
                caches: caches.as_deref(),
                caches_full,
                background,
            };
            let namespace::Built {
                mut args,
                mut files,
                notes: more,
                auto_run,
            } = namespace::argv(&layout);
            notes.extend(more);
            let egress = profile.has_network().then(|| place.egress.clone());
            let seccomp = seccomp::filter_file().map_err(|e| {
                Error::new(
                    ErrorCode::Io,
                    format!("could not prepare the sandbox's socket filter: {e}"),
                )
            })?;
            // Before the closing `--`: bwrap reads the filter from this fd,
            // which the child keeps open across `exec` (process.rs).
            let end = args.len().saturating_sub(1);
            let fd = std::os::fd::AsRawFd::as_raw_fd(&seccomp).to_string();
            args.splice(end..end, ["--seccomp".into(), fd.into()]);
            files.push(seccomp);
            Ok((
                process::Fence::Namespaces {
                    bwrap,
                    args,
                    files,
                    egress,
                },
                notes,
                auto_run,
            ))
        }
        Err(why) => {
            let prepared = sandbox::prepare(root, tmpdir, profile);
            let why = format!(
                "no namespaces ({why}): reads, metadata outside the project and the network were not fenced"
            );
            Ok((process::Fence::Landlock { prepared, why }, Vec::new(), None))
        }
    }
}

fn timeout_of(secs: Option<u64>) -> Result<Duration> {
    match secs.unwrap_or(DEFAULT_TIMEOUT_SECS) {
        s @ 1..=MAX_TIMEOUT_SECS => Ok(Duration::from_secs(s)),
        s => Err(Error::invalid_input(format!(
            "timeout_secs is {s}; it must be between 1 and {MAX_TIMEOUT_SECS}"
        ))
        .hint(format!(
            "Leave timeout_secs out for the default of {DEFAULT_TIMEOUT_SECS} s, or give 1 to {MAX_TIMEOUT_SECS}."
        ))
        .detail("timeout_secs", s)),
    }
}
