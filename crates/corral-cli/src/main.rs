//! `corral-cli`: Corral's tools from a shell, through the same policy as the app.
//!
//! ```text
//! corral-cli tools
//! corral-cli mcp --root DIR [--mode MODE] [--network] [--allow-domain NAME]...
//!                [--writable PATH]... [--blocked PATH]... [--store DIR | --no-checkpoint] [--index DIR]
//!                [--no-lsp] [--lsp-path DIR]...
//! corral-cli call --root DIR [--mode MODE] [--approve] [--network]
//!                 [--allow-domain NAME]... [--allow-program NAME]... [--rule WORDS]...
//!                 [--writable PATH]... [--blocked PATH]... NAME [JSON]
//! ```
//!
//! corral-cli acp [--mode MODE] [--model M] [--provider P] [--base-url URL]   (docs/acp.md)
//!
//! corral-cli checkpoint list|diff ID|restore ID [--path P]|verify --root DIR [--store DIR]
//!
//! `call` prints the tool's result JSON and exits 0, or the standardized
//! error object and exits 1. The input JSON is the last argument, or stdin.
//! A call that can change the project is preceded by a checkpoint, as in
//! the app (`--store DIR`, default the user's data folder; `--no-checkpoint`).
//!
//! `call` and `mcp` are hosts of a project's session (corral-session), as
//! the app is: `call` checks the one call into a ticket and runs it, with
//! `--approve` as the user's answer to a call that asks.

mod acp;
mod checkpoints;
mod exec;
mod remote;
mod serve;

use clap::{Parser, Subcommand};
use corral_session::{Call, Consent, Fixed, RunContext, Session};
use corral_tools::policy::{Boundaries, Mode};
use corral_tools::search::IndexConfig;
use corral_tools::shell::SavedRule;
use corral_tools::{spec, Error, ErrorCode};
use serde_json::Value;
use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

#[derive(Parser)]
#[command(
    name = "corral-cli",
    version,
    about = "Corral's scoped tools from a shell"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// Where `call` and `mcp` keep checkpoints and the search index.
#[derive(clap::Args, Clone)]
struct Kept {
    /// The data folder that holds the checkpoints (default: the user's,
    /// shared with the app).
    #[arg(long, value_name = "DIR")]
    store: Option<PathBuf>,
    /// Take no checkpoint before a call that can change the project.
    #[arg(long)]
    no_checkpoint: bool,
    /// Keep `search_files`' trigram index in this folder (outside the
    /// project). `call` builds it on first use and checks each file's stat;
    /// `mcp` builds it in the background and keeps it live with a watch.
    #[arg(long, value_name = "DIR")]
    index: Option<PathBuf>,
    /// Start no language servers: writes and edits then come back without
    /// diagnostics, and `diagnostics` and `symbols` say there are none.
    #[arg(long)]
    no_lsp: bool,
    /// Look for language servers in this folder first (repeatable); then
    /// in cargo's and the system's program folders and `~/.local/bin`.
    #[arg(long, value_name = "DIR")]
    lsp_path: Vec<PathBuf>,
}

impl Kept {
    /// The data folder of the checkpoints: `--store`, else the user's;
    /// `None` with `--no-checkpoint`, or when there is none to be had.
    fn checkpoints(&self) -> Option<PathBuf> {
        if self.no_checkpoint {
            return None;
        }
        self.store
            .clone()
            .or_else(corral_tools::checkpoint::default_data_dir)
    }

    /// These flags as words, for a session on a remote (their folders
    /// are the remote's).
    fn forwarded(&self) -> Vec<String> {
        let mut words = Vec::new();
        let mut folder = |flag: &str, dir: &PathBuf| {
            words.extend([flag.to_string(), dir.display().to_string()]);
        };
        if let Some(store) = &self.store {
            folder("--store", store);
        }
        if let Some(index) = &self.index {
            folder("--index", index);
        }
        for dir in &self.lsp_path {
            folder("--lsp-path", dir);
        }
        if self.no_checkpoint {
            words.push("--no-checkpoint".into());
        }
        if self.no_lsp {
            words.push("--no-lsp".into());
        }
        words
    }

    /// A session's options from these flags and `boundaries`: the index
    /// in `--index` (`index` says how it is built), the language servers
    /// unless `--no-lsp`.
    fn options(
        self,
        boundaries: Boundaries,
        index: fn(PathBuf) -> IndexConfig,
    ) -> corral_session::Options {
        corral_session::Options {
            checkpoints: self.checkpoints(),
            boundaries,
            search_index: self.index.map(index),
            language_servers: !self.no_lsp,
            lsp_folders: self.lsp_path,
            ..corral_session::Options::default()
        }
    }
}

/// The boundaries of `--writable` and `--blocked`.
fn boundaries(writable: Vec<String>, blocked: Vec<String>) -> Boundaries {
    Boundaries {
        writable: (!writable.is_empty()).then_some(writable),
        blocked,
    }
}

#[derive(Subcommand)]
enum Command {
    /// Serve the tools over MCP on stdin/stdout, for other agents: the
    /// same confinement and policy as `call`. A call that would ask fails
    /// with `approval_required` (no one can answer), so pick the mode.
    Mcp {
        /// The project folder every path is confined to.
        #[arg(long)]
        root: PathBuf,
        /// Permission mode: read_only, ask, auto_edit, full_auto.
        #[arg(long, default_value = "ask")]
        mode: String,
        /// Give `exec_shell` calls the network.
        #[arg(long)]
        network: bool,
        /// A domain a command with the network may reach beyond the
        /// default allowlist of package registries (repeatable; `*.NAME`
        /// for every name below NAME). Others are asked of the client's
        /// user (MCP elicitation) when it can be asked, else refused.
        #[arg(long = "allow-domain", value_name = "NAME")]
        allow_domain: Vec<String>,
        /// Allow writes only beneath this path (repeatable).
        #[arg(long, value_name = "PATH")]
        writable: Vec<String>,
        /// A path no tool may touch (repeatable).
        #[arg(long, value_name = "PATH")]
        blocked: Vec<String>,
        #[command(flatten)]
        kept: Kept,
    },
    /// Print the JSON array of tool specs.
    Tools,
    /// Run one tool call and print its result or error as JSON.
    Call {
        /// The project folder every path is confined to.
        #[arg(long)]
        root: PathBuf,
        /// Permission mode: read_only, ask, auto_edit, full_auto.
        #[arg(long, default_value = "full_auto")]
        mode: String,
        /// Grant approval to a call that asks for it.
        #[arg(long)]
        approve: bool,
        /// Grant an `exec_shell` call the network (its sandbox's network
        /// profile); without it commands have no network at all.
        #[arg(long)]
        network: bool,
        /// A domain a command with the network may reach beyond the
        /// default allowlist of package registries (repeatable; `*.NAME`
        /// for every name below NAME). Others are refused.
        #[arg(long = "allow-domain", value_name = "NAME")]
        allow_domain: Vec<String>,
        /// A program `exec_shell` may run beyond the built-in ones
        /// (repeatable): no argument rules, the build profile is its fence.
        #[arg(long = "allow-program", value_name = "NAME")]
        allow_program: Vec<String>,
        /// A saved rule (repeatable): a command starting with these words
        /// (`"npm test"`) runs without asking, unless it names a secret-like
        /// file or a path outside, or needs the network.
        #[arg(long = "rule", value_name = "WORDS")]
        rule: Vec<String>,
        /// Allow writes only beneath this path (repeatable); commands that
        /// change things are then refused.
        #[arg(long, value_name = "PATH")]
        writable: Vec<String>,
        /// A path no tool may touch (repeatable); commands are then refused.
        #[arg(long, value_name = "PATH")]
        blocked: Vec<String>,
        #[command(flatten)]
        kept: Kept,
        /// With a remote `--root` (`ssh://[user@]host[:port]/path` or
        /// `host:/path`): copy this corral-cli there when that version is
        /// not there yet, without asking.
        #[arg(long)]
        install_remote: bool,
        /// Cancel the call when stdin closes (the remote side of a call
        /// over ssh: the connection was lost).
        #[arg(long, hide = true)]
        stop_on_eof: bool,
        /// The tool's name.
        name: String,
        /// The input JSON object (read from stdin when absent).
        input: Option<String>,
    },
    /// Run the agent on one task without the window: progress on stderr,
    /// the final message on stdout (`--json`: every event as JSON lines).
    /// Exit codes: 0 done, 1 failed, 2 bad usage, 3 stopped at an approval,
    /// 4 done but the conversation could not be stored in the history.
    Exec(exec::ExecArgs),
    /// Serve Corral as an Agent Client Protocol agent on stdin/stdout, for
    /// editors such as Zed (docs/acp.md). Each session's cwd is its project.
    Acp(acp::AcpArgs),
    /// Keep a project's session open for a client on stdin/stdout, one
    /// JSON object a line: the far side of a remote project over ssh
    /// (docs/remote.md).
    #[command(hide = true)]
    Serve(serve::ServeArgs),
    /// List, compare or restore the project's checkpoints.
    Checkpoint {
        #[command(subcommand)]
        action: checkpoints::Action,
    },
    /// The project's tasks (`exec --worktree`): list their worktrees,
    /// merge one into the project, or discard one.
    Task {
        #[command(subcommand)]
        action: TaskAction,
    },
    /// The conversation history's files moved aside (damaged, or from a
    /// newer Corral): what they still hold, and copying it back.
    History {
        #[command(subcommand)]
        action: HistoryAction,
    },
}

#[derive(Subcommand)]
enum HistoryAction {
    /// List the conversations a history moved aside still holds and how
    /// many entries of each can be read (every file moved aside in the
    /// app's data folder when FILE is not given).
    Check {
        /// A file `history.corrupt-…db` or `history.newer-…db`.
        file: Option<PathBuf>,
    },
    /// Copy what can be read out of a history moved aside into the
    /// history in use, each conversation under its own id (one already
    /// there is left as it is). The file is not changed.
    Restore {
        /// A file `history.corrupt-…db` or `history.newer-…db`.
        file: PathBuf,
    },
}

#[derive(Subcommand)]
enum TaskAction {
    /// Print each task's worktree, branch and whether it holds changes.
    List {
        #[arg(long)]
        root: PathBuf,
    },
    /// Commit what the task's worktree holds on its branch, then merge the
    /// branch into the project's current branch. A conflict merges nothing.
    Merge {
        #[arg(long)]
        root: PathBuf,
        /// The task's branch (`corral/NAME` or `NAME`).
        name: String,
        /// Whose lines win where the task and the project changed the
        /// same ones: `task` or `project` (without it, such a conflict
        /// merges nothing).
        #[arg(long, value_parser = ["task", "project"])]
        prefer: Option<String>,
        /// A file the task adds or changes that another program runs by
        /// itself (`.vscode/tasks.json`, `.envrc`, a git hook manager's
        /// folder…), named to land it: the merge is refused, listing them,
        /// until each is named. Repeatable.
        #[arg(long = "auto-run", value_name = "PATH")]
        auto_run: Vec<String>,
    },
    /// Remove the task's worktree and branch; one not merged or holding
    /// changes only with --force.
    Discard {
        #[arg(long)]
        root: PathBuf,
        name: String,
        #[arg(long)]
        force: bool,
    },
}

fn main() -> ExitCode {
    // What the launcher left open reaches nothing this process starts.
    corral_tools::shell::inherit_nothing_from_the_launcher();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if !e.use_stderr() => {
            // --help and --version are answers, not errors.
            let _ = e.print();
            return ExitCode::SUCCESS;
        }
        Err(e) if std::env::args().nth(1).as_deref() == Some("exec") => {
            // exec's scripts tell bad usage by its own exit code.
            let _ = e.print();
            return ExitCode::from(exec::USAGE);
        }
        Err(e) => {
            let message = e.render().to_string();
            let first = message
                .lines()
                .next()
                .unwrap_or("bad arguments")
                .trim_start_matches("error: ");
            return fail(
                &Error::invalid_input(first.to_string())
                    .hint("Run `corral-cli --help` for usage.")
                    .detail(
                        "usage",
                        "corral-cli call --root DIR [--mode MODE] [--approve] NAME [JSON]",
                    ),
            );
        }
    };
    if let Command::Mcp {
        root,
        mode,
        network,
        allow_domain,
        writable,
        blocked,
        kept,
    } = cli.command
    {
        let served = McpArgs {
            mode,
            network,
            allow_domain,
            writable,
            blocked,
            kept,
        };
        // stdout is the protocol's: a failure to start goes to stderr.
        return match mcp(root, served) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("{}", e.to_json());
                ExitCode::FAILURE
            }
        };
    }
    let command = match cli.command {
        Command::Exec(args) => return exec::exec(args),
        Command::Acp(args) => return acp::acp(args),
        Command::Serve(args) => return serve::serve(args),
        command => command,
    };
    if let Command::Call {
        root,
        input,
        install_remote,
        ..
    } = &command
    {
        if let Some(remote) = root.to_str().and_then(corral_remote::Remote::parse) {
            let called = remote.and_then(|r| remote::call(&r, input.as_deref(), *install_remote));
            return called.unwrap_or_else(|e| fail(&e));
        }
    }
    if let Command::Checkpoint { action } = &command {
        if let Some(remote) = action
            .root()
            .to_str()
            .and_then(corral_remote::Remote::parse)
        {
            return remote
                .and_then(|r| remote::checkpoint(&r))
                .unwrap_or_else(|e| fail(&e));
        }
    }
    match run(command) {
        Ok(value) => {
            print_json(&value);
            ExitCode::SUCCESS
        }
        Err(e) => fail(&e),
    }
}

/// `corral-cli history check|restore`, on the app's history.
fn history(action: HistoryAction) -> Result<Value, Error> {
    let store = corral_config::Store::for_user().ok_or_else(|| {
        Error::invalid_input("there is no home folder for the app's data ($HOME)")
    })?;
    let history = corral_history::History::new(store.data_dir());
    match action {
        HistoryAction::Check { file } => {
            let files = match file {
                Some(file) => vec![file],
                None => history.moved_aside_files(),
            };
            let mut checked = Vec::new();
            for file in files {
                let conversations = corral_history::check_file(&file)?;
                checked.push(serde_json::json!({ "file": file, "conversations": conversations }));
            }
            Ok(Value::Array(checked))
        }
        HistoryAction::Restore { file } => {
            let restored = history.restore_from(&file)?;
            Ok(serde_json::json!({ "file": file, "conversations": restored }))
        }
    }
}

fn run(command: Command) -> Result<Value, Error> {
    match command {
        Command::Mcp { .. } => Err(Error::invalid_input("`mcp` serves until its client leaves")),
        Command::Exec(_) => Err(Error::invalid_input("`exec` reports by its exit code")),
        Command::Acp(_) => Err(Error::invalid_input("`acp` serves until its editor leaves")),
        Command::Serve(_) => Err(Error::invalid_input(
            "`serve` serves until its client leaves",
        )),
        Command::Checkpoint { action } => checkpoints::run(action),
        Command::History { action } => history(action),
        Command::Task { action } => {
            use corral_host::worktree;
            let encode = |value: Result<Value, serde_json::Error>| {
                value.map_err(|e| Error::invalid_input(format!("could not encode the result: {e}")))
            };
            match action {
                TaskAction::List { root } => encode(serde_json::to_value(worktree::list(&root)?)),
                TaskAction::Merge {
                    root,
                    name,
                    prefer,
                    auto_run,
                } => {
                    let prefer = match prefer.as_deref() {
                        Some("task") => Some(worktree::Side::Task),
                        Some(_) => Some(worktree::Side::Project),
                        None => None,
                    };
                    encode(serde_json::to_value(worktree::merge(
                        &root, &name, prefer, &auto_run,
                    )?))
                }
                TaskAction::Discard { root, name, force } => encode(serde_json::to_value(
                    worktree::discard(&root, &name, force)?,
                )),
            }
        }
        Command::Tools => serde_json::to_value(spec::specs())
            .map_err(|e| Error::invalid_input(format!("could not encode the specs: {e}"))),
        Command::Call {
            root,
            mode,
            approve,
            network,
            allow_domain,
            allow_program,
            rule,
            writable,
            blocked,
            kept,
            name,
            input,
            install_remote: _,
            stop_on_eof,
        } => {
            let mode: Mode = mode.parse()?;
            let text = match input {
                Some(text) => text,
                // The remote side of a call over ssh: the input is stdin's
                // first line, the rest of stdin the line it watches.
                None if stop_on_eof => {
                    let mut text = String::new();
                    let read = std::io::stdin().read_line(&mut text).map_err(|e| {
                        Error::invalid_input(format!("could not read the input from stdin: {e}"))
                    })?;
                    if read == 0 {
                        return Err(Error::invalid_input(
                            "--stop-on-eof without an input argument reads it as stdin's first line, and stdin ended first",
                        ));
                    }
                    text
                }
                None => read_stdin()?,
            };
            let input = parse_input(&text)?;
            if !input.is_object() {
                return Err(Error::invalid_input("the input must be a JSON object"));
            }
            check_domains(&allow_domain)?;
            let settings = Arc::new(Fixed {
                mode,
                programs: allow_program,
                rules: rule.iter().filter_map(|r| SavedRule::parse(r)).collect(),
            });
            // No data folder for the checkpoints fails a call that needs
            // one, not a read.
            let no_store = !kept.no_checkpoint && kept.checkpoints().is_none();
            let options = corral_session::Options {
                network,
                allowed_domains: allow_domain,
                ..kept.options(boundaries(writable, blocked), IndexConfig::new)
            };
            let session = Session::open(&root, settings, options)?;
            let ticket = session.check(Call::new(name, input))?;
            if no_store && ticket.changes_project {
                return Err(Error::invalid_input(
                    "there is no data folder for the checkpoints (no $XDG_DATA_HOME or $HOME)",
                )
                .hint("Pass --store DIR, or --no-checkpoint."));
            }
            let consent = if approve {
                Consent::Granted { network: false }
            } else {
                Consent::None
            };
            let run = RunContext::default();
            if stop_on_eof {
                let cancel = run.shell.cancel.clone();
                std::thread::spawn(move || {
                    // Nothing is written to it: it ends when the line does.
                    let _ = std::io::copy(&mut std::io::stdin(), &mut std::io::sink());
                    cancel.cancel();
                });
            }
            let result = runtime()?.block_on(session.run(&ticket.ticket, consent, run));
            if let Some(store) = session.opened_checkpoint_store() {
                checkpoints::say_warnings(&store);
            }
            result
        }
    }
}

/// All of stdin, a call's input.
fn read_stdin() -> Result<String, Error> {
    let mut text = String::new();
    std::io::stdin()
        .read_to_string(&mut text)
        .map_err(|e| Error::invalid_input(format!("could not read the input from stdin: {e}")))?;
    Ok(text)
}

/// A call's input as JSON, or why it is not.
fn parse_input(text: &str) -> Result<Value, Error> {
    serde_json::from_str(text).map_err(|e| {
        Error::invalid_input(format!("the input is not valid JSON: {e}"))
            .hint("Pass one JSON object, e.g. '{\"path\": \"src/main.rs\"}'.")
    })
}

/// A runtime for one call: the session runs a tool on its blocking pool.
fn runtime() -> Result<tokio::runtime::Runtime, Error> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::new(ErrorCode::Io, format!("could not start a runtime: {e}")))
}

/// Every `--allow-domain` is a domain name, or `*.` and one.
fn check_domains(domains: &[String]) -> Result<(), Error> {
    match domains
        .iter()
        .find(|d| !corral_tools::shell::is_valid_domain_pattern(d))
    {
        Some(bad) => Err(Error::invalid_input(format!(
            "`{bad}` is not a domain --allow-domain accepts"
        ))
        .hint("Give a name such as `example.org`, or `*.example.org` for the names below it.")
        .detail("domain", bad.as_str())),
        None => Ok(()),
    }
}

/// How `mcp` serves: the flags after `--root`.
struct McpArgs {
    mode: String,
    network: bool,
    allow_domain: Vec<String>,
    writable: Vec<String>,
    blocked: Vec<String>,
    kept: Kept,
}

/// Serves the project's tools over MCP until the client goes away. The
/// index in `--index` is built in the background and kept live by a watch
/// (searches read each file until then).
fn mcp(root: PathBuf, args: McpArgs) -> Result<(), Error> {
    check_domains(&args.allow_domain)?;
    let settings = Arc::new(Fixed {
        mode: args.mode.parse()?,
        ..Fixed::default()
    });
    let options = corral_session::Options {
        network: args.network,
        allowed_domains: args.allow_domain,
        build_index: true,
        ..args.kept.options(
            boundaries(args.writable, args.blocked),
            IndexConfig::prebuilt,
        )
    };
    let session = Session::open(&root, settings, options)?;
    corral_mcp::run_stdio(corral_mcp::CorralServer::new(Arc::new(session)))
}

fn fail(error: &Error) -> ExitCode {
    print_json(&error.to_json());
    ExitCode::FAILURE
}

fn print_json(value: &Value) {
    let mut out = std::io::stdout().lock();
    let text = serde_json::to_string_pretty(value).unwrap_or_else(|_| value.to_string());
    let _ = writeln!(out, "{text}");
}
