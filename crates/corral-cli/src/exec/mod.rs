//! `corral-cli exec`: the app's agent loop on one task, without the window.
//! The loop is the app's own TypeScript (ui/src/lib/agent), bundled with a
//! small entry (ui/src/exec) and run in the embedded JS engine
//! ([`engine`]); its IPC is served here ([`host`]) over the same session,
//! model bridge and history as the window's, and its events are printed
//! ([`render`]). docs/exec.md has the events and the exit codes.

pub(crate) mod engine;
pub(crate) mod host;
use corral_host::kube_task as kube;
mod render;

use crate::Kept;
use corral_history::{History, Part};
use corral_host::ServerArgs;
use corral_llm::Provider;
use corral_remote::{Remote, RemoteSession};
use corral_session::{Options, Session};
use corral_tools::policy::Mode;
use corral_tools::search::IndexConfig;
use corral_tools::shell::SavedRule;
use corral_tools::{Error, ErrorCode};
use host::{Asker, LoopHost, Model, Project, Terminal};
use render::Render;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

/// The task was done: its final message is printed.
pub const DONE: u8 = 0;
/// The run failed: the model or a service failed, or no final message came.
pub const FAILED: u8 = 1;
/// The arguments were wrong; nothing ran.
pub const USAGE: u8 = 2;
/// A call needed the user's approval and no one could give it (no terminal).
pub const STOPPED_AT_APPROVAL: u8 = 3;
/// The task was done, but the conversation could not all be stored in the
/// history (the final event says what was not, and why).
pub const NOT_STORED: u8 = 4;

/// The model flags of exec and acp: each overrides the app's settings.
#[derive(clap::Args)]
pub(crate) struct ModelArgs {
    /// The model (else `CORRAL_MODEL`, else the app's settings).
    #[arg(long)]
    model: Option<String>,
    /// The provider: anthropic, openai or ollama (else `CORRAL_PROVIDER`,
    /// else the app's settings).
    #[arg(long)]
    provider: Option<String>,
    /// The provider's base URL (else `CORRAL_BASE_URL`, else the app's
    /// settings). The key is `CORRAL_API_KEY` (sent only to a base URL given
    /// so, or to the provider's own API), else the one the app saved for
    /// this URL's origin.
    #[arg(long = "base-url", value_name = "URL")]
    base_url: Option<String>,
}

#[derive(clap::Args)]
#[command(group(clap::ArgGroup::new("place").args(["container", "toolchain", "kube"])))]
pub struct ExecArgs {
    /// The project folder every path is confined to; a remote one is
    /// `ssh://[user@]host[:port]/path` or `host:/path` (docs/remote.md).
    #[arg(long)]
    root: PathBuf,
    /// With a remote `--root`: copy this corral-cli there when that
    /// version is not there yet.
    #[arg(long)]
    install_remote: bool,
    /// Permission mode: read_only (the default: nothing is changed),
    /// ask, auto_edit, full_auto.
    #[arg(long, default_value = "read_only")]
    mode: String,
    #[command(flatten)]
    model: ModelArgs,
    /// Go on with this conversation of the project's history.
    #[arg(long, value_name = "ID", conflicts_with = "ephemeral")]
    resume: Option<String>,
    /// Keep the conversation out of the history the window shows.
    #[arg(long)]
    ephemeral: bool,
    /// Print every event as a line of JSON on stdout (docs/exec.md).
    #[arg(long)]
    json: bool,
    /// Run the task in a git worktree of the project of its own, on a new
    /// branch `corral/NAME` (NAME: the task's first words when not
    /// given), in the app's data folder; the project's folder is left as
    /// it is until you merge the branch.
    #[arg(long, value_name = "NAME", num_args = 0..=1, default_missing_value = "")]
    worktree: Option<String>,
    /// With --worktree: run the task's session (`corral-cli serve`) in a
    /// container made from IMAGE (`scripts/image.sh` makes Corral's), the
    /// worktree its only writable mount; the loop, the model and the
    /// history stay here.
    #[arg(long, value_name = "IMAGE", requires = "worktree")]
    container: Option<String>,
    /// With --worktree: run the task's session in a container of the
    /// project's toolchain, corral-cli added to it (built once by the
    /// engine, kept): `devcontainer` (the project's devcontainer.json:
    /// its image or its build), `image:NAME`, or `dockerfile:PATH` (a
    /// Dockerfile of the project). Building runs the project's Dockerfile.
    #[arg(long, value_name = "SPEC", requires = "worktree")]
    toolchain: Option<String>,
    /// With --worktree: run the task's session in a pod of your
    /// Kubernetes cluster, in NAMESPACE, made and reached with your own
    /// kubectl and kubeconfig (docs/scale.md): the branch goes in as a
    /// git bundle and comes back into the worktree here when the task
    /// ends; then the pod is deleted. The loop, the model and the history
    /// stay here.
    #[arg(
        long,
        value_name = "NAMESPACE",
        requires_all = ["worktree", "kube_image"]
    )]
    kube: Option<String>,
    /// With --kube: the image, in a registry the cluster pulls from
    /// (Corral's, from scripts/image.sh, or one built on it).
    #[arg(long, value_name = "IMAGE", requires = "kube")]
    kube_image: Option<String>,
    /// With --kube: the kubeconfig's context (else its current one).
    #[arg(long, value_name = "CONTEXT", requires = "kube")]
    kube_context: Option<String>,
    /// With --kube: what the pod is made from: `job` (a batch/v1 Job) or
    /// `sandbox` (an agent-sandbox Sandbox, its controller installed).
    #[arg(long, value_name = "KIND", default_value = "job", value_parser = ["job", "sandbox"])]
    kube_kind: String,
    /// The container engine's program: podman or docker.
    #[arg(
        long,
        value_name = "PROGRAM",
        default_value = "podman",
        requires = "place"
    )]
    engine: String,
    /// A word for the engine's `run` before the image (repeatable):
    /// limits, a runtime, ulimits (`--engine-option=--memory=4g`). With
    /// --kube, only `--cpus=N` and `--memory=SIZE`: the pod's CPU and
    /// memory.
    #[arg(
        long,
        value_name = "WORD",
        allow_hyphen_values = true,
        requires = "place"
    )]
    engine_option: Vec<String>,
    /// Run the project's hooks (its `.claude/settings.json` and
    /// `.claude/settings.local.json`) even though the user did not trust
    /// them in the window; the user's own `~/.claude/settings.json` hooks
    /// run either way.
    #[arg(long)]
    trust_project_hooks: bool,
    #[command(flatten)]
    kept: Kept,
    /// What to do.
    task: String,
}

/// The task's name: `--worktree NAME`, else its first five words.
fn task_name(args: &ExecArgs) -> String {
    match args.worktree.as_deref() {
        Some(name) if !name.is_empty() => name.to_string(),
        _ => args
            .task
            .split_whitespace()
            .take(5)
            .collect::<Vec<_>>()
            .join(" "),
    }
}

/// The container a task's session runs in: the worktree mounted at
/// [`corral_remote::Container::WORK`] and, so git works in it, the
/// repository's own folder at its own path (the sandbox's rules for
/// git's folder hold inside as they do here).
fn container_of(
    args: &ExecArgs,
    image: &str,
    made: &corral_host::worktree::Worktree,
    git: Option<&Path>,
) -> Result<corral_remote::Container, Failure> {
    let slug = made.branch.trim_start_matches("corral/");
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let mut options = args.engine_option.clone();
    if let Some(git) = git {
        // git names a worktree's folder after the worktree's own.
        let admin = made
            .path
            .file_name()
            .map_or_else(|| slug.to_string(), |n| n.to_string_lossy().into_owned());
        options.extend(corral_remote::Container::git_mounts(
            &git.display().to_string(),
            &admin,
        ));
    }
    Ok(corral_remote::Container {
        engine: args.engine.clone(),
        image: image.to_string(),
        worktree: made.path.display().to_string(),
        name: format!("corral-{slug}-{stamp:08x}"),
        options,
    })
}

/// A task in Kubernetes (`--kube`): its worktree made here, its objects
/// in the cluster, its branch sent in, serve running; the pod's name. On
/// an error, what was made (the worktree, the objects) is removed.
fn kube_task(
    args: &ExecArgs,
    mode: Mode,
    name: &str,
    data: &Path,
) -> Result<(kube::KubeTask<'static>, String), Failure> {
    let (cpu, memory) = kube::limits(&args.engine_option).map_err(usage)?;
    let namespace = args.kube.clone().unwrap_or_default();
    let image = args.kube_image.clone().unwrap_or_default();
    let mut spec = corral_host::kube::TaskSpec::new(name, &image, &namespace);
    spec.mode = mode;
    spec.context = args.kube_context.clone();
    spec.cpu = cpu.unwrap_or(spec.cpu);
    spec.memory = memory.unwrap_or(spec.memory);
    // Checked before a worktree is made for it.
    spec.check().map_err(usage)?;
    let kind = match args.kube_kind.as_str() {
        "sandbox" => corral_host::kube::Kind::Sandbox,
        _ => corral_host::kube::Kind::Job,
    };
    let made = corral_host::worktree::make(&args.root, data, name).map_err(usage)?;
    // The worktree's slug (a number added when the name was taken).
    let slug = made.branch.trim_start_matches("corral/").to_string();
    spec.bundle = format!("corral-{slug}.bundle");
    spec.branch = made.branch.clone();
    spec.slug = slug.clone();
    let discard = |error: Error| {
        let _ = corral_host::worktree::discard(&args.root, &slug, true);
        failed(error)
    };
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    let mut task = kube::KubeTask::in_scratch(&kube::Programs, spec, kind, &args.root, &made.path)
        .map_err(discard)?;
    let pod = task.start(now).map_err(discard)?;
    Ok((task, pod))
}

/// Runs the task; the exit code says how it ended.
pub fn exec(args: ExecArgs) -> ExitCode {
    let render = Render::new(args.json);
    let code = match run(args, render) {
        Ok(code) => code,
        Err((code, error)) => {
            render.event(&json!({ "type": "error", "error": error.to_json() }));
            code
        }
    };
    ExitCode::from(code)
}

type Failure = (u8, Error);

fn usage(error: Error) -> Failure {
    (USAGE, error)
}

fn failed(error: Error) -> Failure {
    (FAILED, error)
}

fn run(args: ExecArgs, render: Render) -> Result<u8, Failure> {
    let mode: Mode = args.mode.parse().map_err(usage)?;
    let remote = args
        .root
        .to_str()
        .and_then(Remote::parse)
        .transpose()
        .map_err(usage)?;
    if remote.is_some() && args.worktree.is_some() && args.container.is_none() {
        return Err(usage(
            Error::invalid_input(
                "a remote project's task runs in its folder: --worktree is for a folder here",
            )
            .hint("Leave out --worktree, or run corral-cli exec on that machine."),
        ));
    }
    if remote.is_none() && !args.root.is_dir() {
        return Err(usage(
            Error::invalid_input(format!("`{}` is not a folder", args.root.display()))
                .hint("Pass the project's folder with --root."),
        ));
    }
    let store = corral_config::Store::for_user().ok_or_else(|| {
        usage(Error::invalid_input(
            "there is no home folder for the app's settings ($HOME)",
        ))
    })?;
    let model = model(store.clone(), &args.model).map_err(usage)?;
    let runtime = runtime().map_err(failed)?;
    let name = task_name(&args);
    // The project's toolchain, corral-cli added: an image built here.
    let image =
        match (&args.toolchain, &remote) {
            (Some(_), Some(_)) => return Err(usage(
                Error::invalid_input(
                    "--toolchain builds the image on this machine, not on an ssh host",
                )
                .hint(
                    "Build it there (scripts/image.sh, or FROM it) and name it with --container.",
                ),
            )),
            (Some(spec), None) => {
                let toolchain =
                    corral_remote::toolchain::Toolchain::named(&args.root, spec).map_err(usage)?;
                let cli = std::env::current_exe().map_err(|e| {
                    failed(Error::new(
                        ErrorCode::Io,
                        format!("could not find this corral-cli: {e}"),
                    ))
                })?;
                let options = corral_config::build_options(&args.engine_option);
                let built =
                    corral_remote::toolchain::task_image(&args.engine, &toolchain, &cli, &options)
                        .map_err(failed)?;
                eprintln!("corral: the task's image is {built}");
                Some(built)
            }
            (None, _) => args.container.clone(),
        };
    // A task in Kubernetes: its worktree made here, its session in a pod.
    let mut in_kube = None;
    if args.kube.is_some() {
        if remote.is_some() {
            return Err(usage(
                Error::invalid_input("--kube runs a task of a project here, not of an ssh host's")
                    .hint("Run corral-cli exec --kube on the machine that holds the project."),
            ));
        }
        let (task, pod) = kube_task(&args, mode, &name, store.data_dir())?;
        let remote = task.remote(&pod);
        eprintln!(
            "corral: working in pod {pod} of namespace {} on branch {}; it comes back into {}",
            task.spec.namespace,
            task.spec.branch,
            task.worktree_path().display()
        );
        in_kube = Some((task, pod, remote));
    }
    // A task in a container: its worktree made here, its session there.
    let (remote, key) = match (&image, remote) {
        _ if in_kube.is_some() => (
            in_kube.as_ref().map(|(_, _, remote)| remote.clone()),
            Some(args.root.clone()),
        ),
        // On an ssh host: the worktree made there by serve, the container
        // run there by its engine.
        (Some(image), Some(there)) => {
            let copy = args
                .install_remote
                .then(std::env::current_exe)
                .transpose()
                .map_err(|e| {
                    failed(Error::new(
                        ErrorCode::Io,
                        format!("could not find this corral-cli: {e}"),
                    ))
                })?;
            let serve = vec!["--mode".to_string(), args.mode.clone()];
            let session = RemoteSession::open(there.clone(), serve, copy).map_err(failed)?;
            let made = runtime
                .block_on(session.invoke("task_new", json!({ "name": name }), None))
                .map_err(usage)?;
            drop(session);
            let made: corral_host::tasks::TaskInfo = serde_json::from_value(made).map_err(|e| {
                failed(Error::new(
                    ErrorCode::Io,
                    format!("serve's task does not fit: {e}"),
                ))
            })?;
            let worktree = corral_host::worktree::Worktree {
                path: made.path,
                branch: made.branch,
            };
            let git = Path::new(&there.path).join(".git");
            let container = container_of(&args, image, &worktree, Some(&git))?;
            eprintln!(
                "corral: working in {} on {} on branch {} in container {}",
                worktree.path.display(),
                there.destination,
                worktree.branch,
                container.name
            );
            let key = PathBuf::from(there.display());
            let remote = Remote {
                path: corral_remote::Container::WORK.to_string(),
                container: Some(container),
                ..there
            };
            (Some(remote), Some(key))
        }
        (Some(image), None) => {
            let made =
                corral_host::worktree::make(&args.root, store.data_dir(), &name).map_err(usage)?;
            let git = args.root.join(".git");
            let container =
                container_of(&args, image, &made, git.is_dir().then_some(git.as_path()))?;
            eprintln!(
                "corral: working in {} on branch {} in container {}",
                made.path.display(),
                made.branch,
                container.name
            );
            let remote = Remote {
                destination: String::new(),
                port: None,
                path: corral_remote::Container::WORK.to_string(),
                config: None,
                connect_timeout: corral_remote::CONNECT_TIMEOUT,
                container: Some(container),
                pod: None,
            };
            // Judged with the project's rules and trust, as a task here.
            (Some(remote), Some(args.root.clone()))
        }
        (None, remote) => (remote, None),
    };
    let project = match remote {
        // The session is the remote's, in the mode and with the flags
        // given here; the model, its keys and the history stay here.
        Some(remote) => {
            let mut serve = vec!["--mode".to_string(), args.mode.clone()];
            serve.extend(args.kept.forwarded());
            let copy = match args.install_remote {
                true => Some(std::env::current_exe().map_err(|e| {
                    failed(Error::new(
                        ErrorCode::Io,
                        format!("could not find this corral-cli: {e}"),
                    ))
                })?),
                false => None,
            };
            // The programs, rules and hooks' trust the user gave this
            // remote folder (by its ssh:// name) here: the only settings
            // its session there has.
            let key = key.unwrap_or_else(|| PathBuf::from(remote.display()));
            let (programs, rules) = store.shell_grants(&key);
            let settings = json!({
                "programs": programs,
                "rules": rules,
                "trusted_hooks": store.trusted_hooks(&key),
                "trust_project_hooks": args.trust_project_hooks,
            });
            let session = RemoteSession::open(remote, serve, copy);
            let session = match (session, &mut in_kube) {
                (Ok(session), _) => session,
                (Err(error), Some((task, _, _))) => {
                    let error = task.cleaned_up(error);
                    // Nothing ran: the worktree made for it goes too.
                    let _ = corral_host::worktree::discard(&args.root, &task.spec.slug, true);
                    return Err(failed(error));
                }
                (Err(error), None) => return Err(failed(error)),
            };
            runtime
                .block_on(session.invoke_kept("use_settings", settings))
                .map_err(failed)?;
            let status = runtime.block_on(session.invoke("hook_status", json!({}), None));
            skipped_hooks(status.ok().as_ref(), args.trust_project_hooks, render);
            // The user's MCP servers run there, beside the project, with
            // their variables; their tools are among the first specs.
            let servers: Vec<ServerArgs> = user_mcp_servers(&store)
                .into_iter()
                .map(|(config, vars)| ServerArgs { config, vars })
                .collect();
            if !servers.is_empty() {
                let args = json!({ "servers": servers });
                runtime
                    .block_on(session.invoke_kept("use_mcp_servers", args))
                    .map_err(failed)?;
            }
            Project::Remote(Box::new(session))
        }
        None => {
            let settings = Arc::new(CliSettings {
                mode,
                store: store.clone(),
                trust_project_hooks: args.trust_project_hooks,
            });
            let options = Options {
                mcp_servers: user_mcp_servers(&store),
                ..args.kept.options(Default::default(), IndexConfig::new)
            };
            // A task of its own: its worktree is the project it sees.
            let root = match &args.worktree {
                Some(_) => {
                    let made = corral_host::worktree::make(&args.root, store.data_dir(), &name)
                        .map_err(usage)?;
                    eprintln!(
                        "corral: working in {} on branch {}",
                        made.path.display(),
                        made.branch
                    );
                    made.path
                }
                None => args.root.clone(),
            };
            // A task's session is judged with the project's rules and trust.
            let settings: Arc<dyn corral_session::Settings> = if root == args.root {
                settings
            } else {
                Arc::new(corral_host::tasks::TaskSettings {
                    inner: settings,
                    project: args.root.clone(),
                })
            };
            let session = Arc::new(Session::open(&root, settings, options).map_err(failed)?);
            let status = serde_json::to_value(session.hook_status()).ok();
            skipped_hooks(status.as_ref(), args.trust_project_hooks, render);
            // The user's MCP servers, as the window starts them: their tools are
            // among the specs of the first request.
            runtime.block_on(session.start_servers());
            Project::local(session)
        }
    };
    // --ephemeral: a history of its own, gone with the run.
    let scratch = if args.ephemeral {
        Some(tempfile::tempdir().map_err(|e| {
            failed(Error::new(
                ErrorCode::Io,
                format!("could not make a scratch folder: {e}"),
            ))
        })?)
    } else {
        None
    };
    let history = Arc::new(History::new(
        scratch.as_ref().map_or(store.data_dir(), |dir| dir.path()),
    ));
    let name = project.name();
    if let Some(id) = &args.resume {
        let part = Part {
            last: Some(1),
            ..Part::default()
        };
        history.open_part(&name, id, part).map_err(failed)?;
    }
    let request = json!({
        "root": name,
        "task": args.task,
        "resume": args.resume,
        "ephemeral": args.ephemeral,
    });
    let front = Terminal {
        asker: Asker::for_stdin(),
        render,
        root: name.clone(),
    };
    let host = Arc::new(LoopHost::new(project, history, Arc::new(model), front));
    let run_loop = || {
        runtime.block_on(engine::run(
            host.clone(),
            engine::SCRIPT,
            "corralExec",
            request,
        ))
    };
    // A task in Kubernetes: its branch brought back every minute while the
    // loop runs, so a pod or a connection lost costs at most that.
    let outcome = match &in_kube {
        Some((task, pod, _)) => std::thread::scope(|scope| {
            let (stop, stopped) = std::sync::mpsc::channel::<kube::Wake>();
            scope.spawn(move || {
                let (every, settle) = (kube::BRING_BACK_EVERY, kube::SETTLE);
                task.bring_back_until(pod, every, settle, &stopped, |error| {
                    eprintln!(
                        "corral: could not bring the task's branch back this time: {}",
                        error.message
                    );
                });
            });
            let outcome = run_loop();
            drop(stop);
            outcome
        }),
        None => run_loop(),
    };
    // A task in Kubernetes: its branch back while serve still runs, then
    // serve let go (it ends, and the pod with it) and the objects deleted.
    if let Some((task, pod, _)) = in_kube {
        let back = task.bring_back(&pod);
        drop(host);
        let deleted = task.delete();
        match back {
            Ok(_) if task.came_back() => eprintln!(
                "corral: the task's branch {} is back here",
                task.spec.branch
            ),
            Ok(_) => eprintln!("corral: the task changed nothing in its pod"),
            Err(error) => return Err(failed(error)),
        }
        deleted.map_err(failed)?;
    }
    match outcome.map_err(failed)?.as_str() {
        "done" => Ok(DONE),
        "approval" => Ok(STOPPED_AT_APPROVAL),
        "not_stored" => Ok(NOT_STORED),
        _ => Ok(FAILED),
    }
}

/// Tells the user, once, that the project's hooks will not run: their
/// settings files are not trusted as they are now (`status` is
/// `hook_status`'s answer) and `--trust-project-hooks` was not given.
fn skipped_hooks(status: Option<&Value>, trusted: bool, render: Render) {
    let files: Vec<&str> = status
        .and_then(|s| s.get("untrusted"))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|u| u.get("file").and_then(Value::as_str))
        .collect();
    if trusted || files.is_empty() {
        return;
    }
    let (names, are) = match files.as_slice() {
        [one] => (format!("`{one}`"), "is"),
        _ => (
            files
                .iter()
                .map(|f| format!("`{f}`"))
                .collect::<Vec<_>>()
                .join(" and "),
            "are",
        ),
    };
    let text = format!(
        "The project's hooks were skipped: {names} {are} not trusted as {} now. Trust them in the window, or pass --trust-project-hooks to run them.",
        if files.len() == 1 { "it is" } else { "they are" }
    );
    render.event(&json!({ "type": "notice", "text": text }));
}

/// The model the flags and environment chose over the app's settings.
pub(crate) fn model(store: corral_config::Store, args: &ModelArgs) -> Result<Model, Error> {
    let env = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
    let provider = args.provider.clone().or_else(|| env("CORRAL_PROVIDER"));
    let base_url = args.base_url.clone().or_else(|| env("CORRAL_BASE_URL"));
    let model = args.model.clone().or_else(|| env("CORRAL_MODEL"));
    let key = env("CORRAL_API_KEY");
    if provider.is_none() && base_url.is_none() && model.is_none() && key.is_none() {
        return Ok(Model { store, fixed: None });
    }
    let mut settings = store.settings();
    if let Some(provider) = provider {
        settings.provider = parse_provider(&provider)?;
        // Another provider's URL would be the wrong server.
        settings.base_url = String::new();
    }
    let url_given = base_url.is_some();
    if let Some(base_url) = base_url {
        settings.base_url = base_url;
    }
    if let Some(model) = model {
        settings.model = model;
    }
    let mut fixed = store.provider_config_of(settings, None);
    // CORRAL_API_KEY goes only where the same caller pointed it (a base URL
    // of the flags or environment), or to the provider's own API: never to
    // a server only the settings name.
    if let Some(key) = key {
        if url_given || fixed.provider.is_own_api(&fixed.base_url) {
            fixed.api_key = Some(key);
        }
    }
    Ok(Model {
        store,
        fixed: Some(fixed),
    })
}

fn parse_provider(name: &str) -> Result<Provider, Error> {
    serde_json::from_value(Value::String(name.to_string())).map_err(|_| {
        Error::invalid_input(format!("`{name}` is not a provider"))
            .hint("Use anthropic, openai or ollama.")
            .detail("provider", name)
    })
}

/// The MCP servers the user added in the app, each with its variables' values.
pub(crate) fn user_mcp_servers(
    store: &corral_config::Store,
) -> Vec<(corral_session::mcp::McpServerConfig, Vec<(String, String)>)> {
    store
        .mcp_servers()
        .into_iter()
        .map(|server| {
            let vars = store.mcp_vars(&server);
            (server, vars)
        })
        .collect()
}

/// The mode of the flag; the programs and rules the user saved in the app,
/// and the hooks' trust the user gave in the app (or the flag's).
pub(crate) struct CliSettings {
    pub mode: Mode,
    pub store: corral_config::Store,
    /// `--trust-project-hooks`: the project's hooks run as they are.
    pub trust_project_hooks: bool,
}

impl corral_session::Settings for CliSettings {
    fn mode(&self) -> Mode {
        self.mode
    }
    fn shell_grants(&self, root: &Path) -> (Vec<String>, Vec<SavedRule>) {
        self.store.shell_grants(root)
    }
    fn save_rule(&self, root: &Path, rule: SavedRule) -> Result<(), Error> {
        self.store.add_rule(root, rule)
    }
    fn home(&self) -> Option<PathBuf> {
        corral_config::shell::user_home()
    }
    fn hooks_trusted(&self, root: &Path, file: &str, text: &str) -> bool {
        self.trust_project_hooks || self.store.hooks_trusted(root, file, text)
    }
}

pub(crate) fn runtime() -> Result<tokio::runtime::Runtime, Error> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::new(ErrorCode::Io, format!("could not start a runtime: {e}")))
}
