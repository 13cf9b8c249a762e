//! A task's session in a pod of the user's Kubernetes cluster, made and
//! reached with the user's own `kubectl` and kubeconfig: the window's task
//! in Kubernetes and `corral-cli exec --kube` both run it. The manifests
//! and the commands are [`crate::kube`]'s (its module docs and
//! docs/scale.md are the design); this runs them in order:
//!
//! 1. here: the task's branch `corral/<slug>` and its commit (the base),
//!    the user's git identity, the branch as a bundle;
//! 2. `kubectl create` of the NetworkPolicy and the Job or Sandbox; the
//!    pod's name once it is made; the init container `receive` running;
//!    the bundle through `kubectl attach` to it; `serve` running;
//! 3. the session: `kubectl attach -i` to `serve` ([`corral_remote::Pod`]),
//!    its start line first, then serve's protocol as over ssh;
//! 4. every minute while the task works, and at the end while serve still
//!    runs, the branch back: committed in the pod, bundled out by
//!    `kubectl exec` (the commits since the last time), pulled into the
//!    worktree here (a fast-forward), so a pod or a connection lost
//!    costs at most the last minute's work;
//! 5. `kubectl delete` of what was made.
//!
//! Every program goes through one seam, [`Runner`]: [`Programs`] runs
//! them; the unit tests' fake records them. A step that fails is a
//! standardized error with a hint, and what was made in the cluster is
//! deleted (not when `create` found the names taken: those objects are
//! someone else's).

use crate::kube::{self, Kind, TaskSpec};
use corral_remote::{Pod, Remote};
use corral_tools::policy::Mode;
use corral_tools::{Error, ErrorCode};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

/// What a program is given on stdin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Input {
    Nothing,
    Bytes(Vec<u8>),
    /// A file here (a bundle), read as it goes.
    File(PathBuf),
}

/// How a program ended.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Ran {
    /// Its exit code; `None`: killed by a signal.
    pub code: Option<i32>,
    /// Its stdout, unless it went to a file.
    pub stdout: String,
    pub stderr: String,
}

impl Ran {
    fn ok(&self) -> bool {
        self.code == Some(0)
    }
}

/// The one seam between exec and the programs a task in Kubernetes runs
/// (`kubectl`, `git`). Shared with the thread that brings the branch
/// back while the loop runs.
pub trait Runner: Sync {
    /// Runs `argv` to its end with `input` on stdin, its stdout into the
    /// file `to` when given; an error only when it could not be run.
    fn run(&self, argv: &[String], input: Input, to: Option<&Path>) -> Result<Ran, Error>;
    /// Waits before asking the cluster again.
    fn pause(&self);
}

/// The real programs, on the `PATH`.
pub struct Programs;

impl Runner for Programs {
    // The files are the bundles in exec's own temporary folder, never
    // the project's.
    #[allow(clippy::disallowed_methods)]
    fn run(&self, argv: &[String], input: Input, to: Option<&Path>) -> Result<Ran, Error> {
        let Some((program, args)) = argv.split_first() else {
            return Err(Error::invalid_input("no command to run"));
        };
        let mut command = Command::new(program);
        command.args(args).stderr(Stdio::piped());
        let file = |path: &Path, made: std::io::Result<std::fs::File>| {
            made.map_err(|e| {
                Error::new(
                    ErrorCode::Io,
                    format!("could not open {}: {e}", path.display()),
                )
            })
        };
        let mut bytes = None;
        match input {
            Input::Nothing => {
                command.stdin(Stdio::null());
            }
            Input::Bytes(given) => {
                command.stdin(Stdio::piped());
                bytes = Some(given);
            }
            Input::File(path) => {
                command.stdin(file(&path, std::fs::File::open(&path))?);
            }
        }
        match to {
            Some(path) => command.stdout(file(path, std::fs::File::create(path))?),
            None => command.stdout(Stdio::piped()),
        };
        let mut child = command.spawn().map_err(|e| {
            Error::new(ErrorCode::Io, format!("could not run {program}: {e}")).hint(format!(
                "Install {program} (kubectl for a task in Kubernetes) on the PATH."
            ))
        })?;
        if let (Some(bytes), Some(mut stdin)) = (bytes, child.stdin.take()) {
            // A failed write shows as the program's own failure.
            let _ = stdin.write_all(&bytes);
        }
        let output = child
            .wait_with_output()
            .map_err(|e| Error::new(ErrorCode::Io, format!("could not wait for {program}: {e}")))?;
        Ok(Ran {
            code: output.status.code(),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        })
    }

    fn pause(&self) {
        // The cluster says nothing when a pod moves on unless asked (a
        // watch is a stream, which this seam does not carry).
        std::thread::sleep(Duration::from_secs(1));
    }
}

/// How many times the cluster is asked for the pod, and for each of its
/// containers to run, a [`Runner::pause`] apart: 5 minutes with real
/// pauses (an image pulled for the first time).
const TRIES: u32 = 300;

/// How often the branch is brought back while the loop runs.
pub const BRING_BACK_EVERY: Duration = Duration::from_secs(60);

/// A Sandbox is removed by its controller this long after it was made,
/// should exec never delete it (killed, the machine off).
const SANDBOX_HOURS: i64 = 24;

/// The CPU and memory of `--engine-option=--cpus=N` and
/// `--engine-option=--memory=SIZE` (the engine's words, `b`, `k`, `m`,
/// `g` read as Kubernetes' `Ki`, `Mi`, `Gi`); any other word is refused,
/// as it means nothing to a pod.
pub fn limits(options: &[String]) -> Result<(Option<String>, Option<String>), Error> {
    let mut cpu = None;
    let mut memory = None;
    for word in options {
        if let Some(n) = word.strip_prefix("--cpus=") {
            cpu = Some(n.to_string());
        } else if let Some(size) = word.strip_prefix("--memory=") {
            let (number, unit) = size.split_at(size.trim_end_matches(char::is_alphabetic).len());
            let unit = match unit.to_ascii_lowercase().as_str() {
                "" | "b" => "",
                "k" | "kb" => "Ki",
                "m" | "mb" => "Mi",
                "g" | "gb" => "Gi",
                _ => {
                    return Err(Error::invalid_input(format!(
                        "`{word}` is not a size Corral reads (a number and b, k, m or g)"
                    ))
                    .hint("Write the memory as --engine-option=--memory=4g."))
                }
            };
            memory = Some(format!("{number}{unit}"));
        } else {
            return Err(Error::invalid_input(format!(
                "`{word}` means nothing to a pod: with --kube, --engine-option takes only --cpus=N and --memory=SIZE"
            ))
            .hint("Leave it out; the pod's other fences are Corral's own (docs/scale.md)."));
        }
    }
    Ok((cpu, memory))
}

/// The spec of the window's task `task` (its worktree made already, on
/// the branch `corral/<task>`), as Settings place it: the image, the
/// namespace and context, the CPUs and memory (else the spec's defaults).
pub fn spec_for(
    task: &str,
    chosen: &corral_config::TaskContainer,
    kube: &corral_config::KubeSetting,
    mode: Mode,
) -> TaskSpec {
    let mut spec = TaskSpec::new(task, chosen.image.trim(), kube.namespace.trim());
    spec.slug = task.to_string();
    spec.branch = format!("corral/{task}");
    spec.bundle = format!("corral-{task}.bundle");
    spec.mode = mode;
    spec.context = kube
        .context
        .as_deref()
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .map(str::to_string);
    if let Some(cpus) = chosen.cpus {
        spec.cpu = cpus.to_string();
    }
    if let Some(mib) = chosen.memory_mib {
        spec.memory = format!("{mib}Mi");
    }
    spec
}

/// One task's objects in the cluster, from their making to their
/// deletion.
pub struct KubeTask<'r> {
    runner: &'r dyn Runner,
    pub spec: TaskSpec,
    pub kind: Kind,
    /// The project here, which holds the branch.
    project: PathBuf,
    /// The task's worktree here, the branch checked out.
    worktree: PathBuf,
    /// Where the bundles are kept while they travel.
    scratch: PathBuf,
    /// The branch's commit when it was sent.
    base: String,
    /// The branch's commit here as last brought back (the base at first).
    brought: Mutex<String>,
    /// The commits made in the pod are the user's.
    identity: (String, String),
    /// `create` was run and did not find the names taken: `delete` is
    /// owed.
    made: AtomicBool,
    tries: u32,
    /// The scratch folder, removed with the task.
    kept: Option<tempfile::TempDir>,
}

impl<'r> KubeTask<'r> {
    pub fn new(
        runner: &'r dyn Runner,
        spec: TaskSpec,
        kind: Kind,
        project: &Path,
        worktree: &Path,
        scratch: &Path,
    ) -> KubeTask<'r> {
        KubeTask {
            runner,
            spec,
            kind,
            project: project.to_path_buf(),
            worktree: worktree.to_path_buf(),
            scratch: scratch.to_path_buf(),
            base: String::new(),
            brought: Mutex::new(String::new()),
            identity: (String::new(), String::new()),
            made: AtomicBool::new(false),
            tries: TRIES,
            kept: None,
        }
    }

    /// A task whose bundles travel through a temporary folder of its own,
    /// removed with it.
    pub fn in_scratch(
        runner: &'r dyn Runner,
        spec: TaskSpec,
        kind: Kind,
        project: &Path,
        worktree: &Path,
    ) -> Result<KubeTask<'r>, Error> {
        let scratch = tempfile::tempdir().map_err(|e| {
            Error::new(
                ErrorCode::Io,
                format!("could not make a scratch folder: {e}"),
            )
        })?;
        let task = KubeTask::new(runner, spec, kind, project, worktree, scratch.path());
        Ok(task.keeping(scratch))
    }

    /// The task, holding `scratch` (its folder) until it is dropped.
    pub fn keeping(mut self, scratch: tempfile::TempDir) -> KubeTask<'r> {
        self.kept = Some(scratch);
        self
    }

    /// The task's worktree here.
    pub fn worktree_path(&self) -> &Path {
        &self.worktree
    }

    /// Makes the task's objects, sends its branch into the pod and waits
    /// for serve to run: the pod's name. `now`: seconds since the epoch,
    /// for a Sandbox's `shutdownTime`. On an error, what was made in the
    /// cluster is deleted.
    pub fn start(&mut self, now: i64) -> Result<String, Error> {
        self.spec.check()?;
        match self.start_steps(now) {
            Ok(pod) => Ok(pod),
            Err(error) => Err(self.cleaned_up(error)),
        }
    }

    fn start_steps(&mut self, now: i64) -> Result<String, Error> {
        let project = self.project.display().to_string();
        let git_here = |args: &[&str]| {
            let mut words = vec!["git".to_string(), "-C".into(), project.clone()];
            words.extend(args.iter().map(ToString::to_string));
            words
        };
        let head = git_here(&["rev-parse", "--verify", &self.spec.branch]);
        let ran = self.step(&head, Input::Nothing, None, "find the task's branch here")?;
        self.base = ran.stdout.trim().to_string();
        *self
            .brought
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner) = self.base.clone();
        let name = self.run(&git_here(&["config", "user.name"]), Input::Nothing, None)?;
        let email = self.run(&git_here(&["config", "user.email"]), Input::Nothing, None)?;
        self.identity = match (name.ok(), email.ok()) {
            (true, true) => (
                name.stdout.trim().to_string(),
                email.stdout.trim().to_string(),
            ),
            _ => ("Corral".into(), "corral@localhost".into()),
        };
        let bundle = self.scratch.join(&self.spec.bundle);
        self.step(
            &kube::bundle_here(&self.project, &self.spec),
            Input::Nothing,
            Some(&bundle),
            "bundle the task's branch",
        )?;
        let object = match self.kind {
            Kind::Job => kube::job(&self.spec)?,
            Kind::Sandbox => {
                let until = jiff::Timestamp::from_second(now + SANDBOX_HOURS * 3600)
                    .map_err(|e| Error::new(ErrorCode::Io, format!("no time to end at: {e}")))?;
                kube::sandbox(&self.spec, Some(&until.to_string()))?
            }
        };
        let list = kube::list(vec![kube::network_policy(&self.spec)?, object]);
        let create = kube::create(&self.spec);
        let ran = self.run(&create, Input::Bytes(list.to_string().into_bytes()), None)?;
        // Objects of these names already there are another task's: never
        // deleted here. Anything else may have made some of the list.
        let made = !ran.stderr.contains("AlreadyExists");
        self.made.store(made, Ordering::SeqCst);
        if !ran.ok() {
            let taken = !made;
            let error = step_error(&create, &ran, "make the task's objects");
            return Err(if taken {
                error.hint(format!(
                    "A task named {} is in namespace {} already (another machine's, or one not deleted): name the task otherwise, or delete it with kubectl.",
                    self.spec.object_name(),
                    self.spec.namespace
                ))
            } else {
                error
            });
        }
        let pod = self.wait(
            &kube::find_pod(&self.spec),
            "the task's pod to be made",
            |said| Ok((!said.is_empty()).then(|| said.to_string())),
        )?;
        self.wait(
            &kube::receive_started(&self.spec, &pod),
            "the pod's init container to start",
            |said| Ok((!said.is_empty()).then_some(())),
        )?;
        self.step(
            &kube::send_bundle(&self.spec, &pod),
            Input::File(bundle),
            None,
            "send the branch into the pod",
        )?;
        let logs = format!(
            "kubectl --namespace {} logs {pod} --container {}",
            self.spec.namespace,
            kube::RECEIVE
        );
        self.wait(
            &kube::serve_started(&self.spec, &pod),
            "serve to start in the pod",
            |said| {
                let (phase, started) = said.split_once(' ').unwrap_or((said, ""));
                if matches!(phase, "Failed" | "Succeeded") {
                    return Err(Error::new(
                        ErrorCode::Io,
                        format!("the task's pod {pod} ended ({phase}) before serve started"),
                    )
                    .hint(format!("See why with `{logs}`."))
                    .detail("phase", phase));
                }
                Ok((!started.is_empty()).then_some(()))
            },
        )?;
        Ok(pod)
    }

    /// The session's remote: serve in the pod, through `kubectl attach`.
    pub fn remote(&self, pod: &str) -> Remote {
        Remote {
            destination: String::new(),
            port: None,
            path: kube::WORK.to_string(),
            config: None,
            connect_timeout: corral_remote::CONNECT_TIMEOUT,
            container: None,
            pod: Some(Pod {
                attach: kube::attach(&self.spec, pod),
                start_line: kube::START_LINE.to_string(),
                name: format!("kube:{}/{pod}", self.spec.namespace),
            }),
        }
    }

    /// The branch's commit here as last brought back.
    fn brought(&self) -> String {
        self.brought
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Whether the branch here has moved since it was sent: some work
    /// came back, now or before.
    pub fn came_back(&self) -> bool {
        self.brought() != self.base
    }

    /// Brings the branch back from `pod` into the worktree here, while
    /// serve still runs: the commits since the last time (or since it was
    /// sent); whether new ones came.
    pub fn bring_back(&self, pod: &str) -> Result<bool, Error> {
        let identity = (self.identity.0.as_str(), self.identity.1.as_str());
        let since = self.brought();
        let back = kube::results(&self.spec, pod, &since, identity);
        self.step(
            &back.stage,
            Input::Nothing,
            None,
            "stage the task's work in the pod",
        )?;
        let staged = self.run(&back.staged, Input::Nothing, None)?;
        match staged.code {
            Some(0) => {}
            Some(1) => {
                self.step(
                    &back.commit,
                    Input::Nothing,
                    None,
                    "commit the task's work in the pod",
                )?;
            }
            _ => {
                return Err(step_error(
                    &back.staged,
                    &staged,
                    "see what the task changed in the pod",
                ))
            }
        }
        let head = self.step(
            &back.head,
            Input::Nothing,
            None,
            "read the task's branch in the pod",
        )?;
        let head = head.stdout.trim();
        if head == since {
            return Ok(false);
        }
        let file = self
            .scratch
            .join(format!("{}-back.bundle", self.spec.object_name()));
        self.step(
            &back.bundle,
            Input::Nothing,
            Some(&file),
            "bundle the task's branch in the pod",
        )?;
        self.step(
            &kube::pull_here(&self.worktree, &self.spec, &file),
            Input::Nothing,
            None,
            "bring the task's branch into its worktree here",
        )?;
        *self.brought.lock().unwrap_or_else(PoisonError::into_inner) = head.to_string();
        Ok(true)
    }

    /// Brings the branch back every `every`, and `settle` after a
    /// [`Wake::Changed`] once no other came meanwhile, until
    /// [`Wake::Stop`] (or the senders are gone); a failed time is told to
    /// `failed` and the next one tried (the pod may be slow, the
    /// connection back).
    pub fn bring_back_until(
        &self,
        pod: &str,
        every: Duration,
        settle: Duration,
        wake: &Receiver<Wake>,
        failed: impl Fn(&Error),
    ) {
        loop {
            match wake.recv_timeout(every) {
                Ok(Wake::Stop) | Err(RecvTimeoutError::Disconnected) => return,
                Ok(Wake::Changed) => loop {
                    match wake.recv_timeout(settle) {
                        Ok(Wake::Changed) => {}
                        Err(RecvTimeoutError::Timeout) => break,
                        Ok(Wake::Stop) | Err(RecvTimeoutError::Disconnected) => return,
                    }
                },
                Err(RecvTimeoutError::Timeout) => {}
            }
            if let Err(error) = self.bring_back(pod) {
                failed(&error);
            }
        }
    }

    /// Deletes what was made in the cluster, if anything.
    pub fn delete(&self) -> Result<(), Error> {
        // Tried once: a deletion that failed is the user's to finish.
        if !self.made.swap(false, Ordering::SeqCst) {
            return Ok(());
        }
        let delete = kube::delete(&self.spec, self.kind);
        self.step(&delete, Input::Nothing, None, "delete the task's objects")
            .map_err(|e| {
                let line = delete.join(" ");
                e.hint(format!("Delete them yourself: `{line}`."))
            })?;
        Ok(())
    }

    /// `error`, after what was made was deleted (a failed deletion said
    /// in its details).
    pub fn cleaned_up(&self, error: Error) -> Error {
        match self.delete() {
            Ok(()) => error,
            Err(left) => error.detail("not_deleted", left.message),
        }
    }

    fn run(&self, argv: &[String], input: Input, to: Option<&Path>) -> Result<Ran, Error> {
        self.runner.run(argv, input, to)
    }

    /// `argv` run; its failure an error saying what it was for.
    fn step(
        &self,
        argv: &[String],
        input: Input,
        to: Option<&Path>,
        doing: &str,
    ) -> Result<Ran, Error> {
        let ran = self.run(argv, input, to)?;
        if ran.ok() {
            Ok(ran)
        } else {
            Err(step_error(argv, &ran, doing))
        }
    }

    /// Runs `argv` until `seen` reads its output as done (or as an
    /// error), a pause between tries, at most [`TRIES`] times.
    fn wait<T>(
        &self,
        argv: &[String],
        what: &str,
        seen: impl Fn(&str) -> Result<Option<T>, Error>,
    ) -> Result<T, Error> {
        for tried in 0..self.tries {
            if tried > 0 {
                self.runner.pause();
            }
            let ran = self.step(argv, Input::Nothing, None, &format!("wait for {what}"))?;
            if let Some(done) = seen(ran.stdout.trim())? {
                return Ok(done);
            }
        }
        Err(Error::new(
            ErrorCode::Io,
            format!("waited for {what} and it did not happen"),
        )
        .hint(format!(
            "See what holds it with `kubectl --namespace {} describe pod --selector {}={}` (an image not pulled, a quota, no node free).",
            self.spec.namespace,
            kube::TASK_LABEL,
            self.spec.slug
        ))
        .detail("tries", self.tries)
        .retryable(true))
    }
}

/// What wakes the thread that brings a task's branch back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wake {
    /// A call ran that may have changed the worktree: the branch comes
    /// back once the calls settle.
    Changed,
    /// The task ends: the thread returns.
    Stop,
}

/// How long after the last [`Wake::Changed`] the branch comes back: a
/// turn's calls in a row bring it back once.
pub const SETTLE: Duration = Duration::from_secs(3);

/// A task whose pod runs serve, its branch brought back by a thread of
/// its own every [`BRING_BACK_EVERY`] and [`SETTLE`] after the calls that
/// may change it, until [`Running::end`]: the window's task in Kubernetes.
pub struct Running {
    task: std::sync::Arc<KubeTask<'static>>,
    pod: String,
    wake: std::sync::mpsc::Sender<Wake>,
    bringing: Option<std::thread::JoinHandle<()>>,
}

impl Running {
    /// `task` started in `pod`: its branch brought back every `every`, a
    /// failed time said on stderr and the next one tried.
    pub fn new(task: KubeTask<'static>, pod: String, every: Duration, settle: Duration) -> Running {
        let task = std::sync::Arc::new(task);
        let (wake, woken) = std::sync::mpsc::channel::<Wake>();
        let (held, at) = (task.clone(), pod.clone());
        let bringing = std::thread::spawn(move || {
            held.bring_back_until(&at, every, settle, &woken, |error| {
                eprintln!(
                    "corral: could not bring task {}'s branch back this time: {}",
                    held.spec.slug, error.message
                );
            });
        });
        Running {
            task,
            pod,
            wake,
            bringing: Some(bringing),
        }
    }

    /// What tells its thread a call ran that may have changed the
    /// worktree ([`Wake::Changed`]); held past the task's end, it wakes
    /// nothing.
    pub fn waker(&self) -> std::sync::mpsc::Sender<Wake> {
        self.wake.clone()
    }

    /// The session's remote: serve in the pod.
    pub fn remote(&self) -> Remote {
        self.task.remote(&self.pod)
    }

    /// Brings the branch back now (a review or a merge needs it whole).
    pub fn bring_back(&self) -> Result<bool, Error> {
        self.task.bring_back(&self.pod)
    }

    /// Ends it, `session` (the attach to serve) still held: the thread
    /// stopped, the branch brought back while serve runs, then `session`
    /// dropped (serve ends, and the pod) and the objects deleted. What
    /// failed is said in the error; all of it is tried.
    pub fn end<S>(mut self, session: S) -> Result<(), Error> {
        self.stop_bringing();
        let back = self.task.bring_back(&self.pod);
        drop(session);
        let deleted = self.task.delete();
        back.map(drop).and(deleted)
    }
}

impl Running {
    fn stop_bringing(&mut self) {
        if let Some(bringing) = self.bringing.take() {
            let _ = self.wake.send(Wake::Stop);
            let _ = bringing.join();
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.stop_bringing();
    }
}

impl Drop for KubeTask<'_> {
    /// What was made is deleted however exec ends (an error before the
    /// loop ran, say), when it was not yet.
    fn drop(&mut self) {
        if let Err(error) = self.delete() {
            eprintln!("corral: {} {}", error.message, error.hint);
        }
    }
}

/// A step that failed: what it was for, the command and its last words.
fn step_error(argv: &[String], ran: &Ran, doing: &str) -> Error {
    let said = ran
        .stderr
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim()
        .to_string();
    let program = argv.first().map_or("", String::as_str);
    let hint = match program {
        "kubectl" => "Check that kubectl reaches the cluster with this context and namespace, and that your role there may do this (docs/scale.md lists the verbs).",
        _ => "Check the project's repository here (git's own words are in the details).",
    };
    Error::new(ErrorCode::Io, format!("could not {doing}: {said}"))
        .hint(hint)
        .detail("command", argv.join(" "))
        .detail("exit_code", ran.code.map_or(-1, i64::from))
        .detail("said", said)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    /// Records every program, what went on its stdin and where its stdout
    /// went; answers each by the first of `answers` whose words its argv
    /// holds (each a part of one word, in a row): the first of that
    /// answer's list, taken while more follow. Else success, no output.
    struct Recording {
        ran: Mutex<Vec<Call>>,
        answers: Vec<(Vec<&'static str>, Mutex<Vec<Ran>>)>,
    }

    type Answers = Vec<(Vec<&'static str>, Vec<Ran>)>;
    /// A program run: its words, its stdin, where its stdout went.
    type Call = (Vec<String>, Input, Option<PathBuf>);

    impl Recording {
        fn new(answers: Answers) -> Recording {
            Recording {
                ran: Mutex::default(),
                answers: answers
                    .into_iter()
                    .map(|(words, rans)| (words, Mutex::new(rans)))
                    .collect(),
            }
        }

        /// How many times the work in the pod was staged: how many times
        /// the branch was brought back (or tried).
        fn stages(&self) -> usize {
            let all = "--all".to_string();
            self.argvs().iter().filter(|a| a.contains(&all)).count()
        }

        /// Waits (at most 30 s) until the branch was brought back `times`.
        fn wait_for_stages(&self, times: usize) {
            let deadline = std::time::Instant::now() + Duration::from_secs(30);
            while self.stages() < times && std::time::Instant::now() < deadline {
                std::thread::yield_now();
            }
            assert!(
                self.stages() >= times,
                "brought back {} times",
                self.stages()
            );
        }

        fn argvs(&self) -> Vec<Vec<String>> {
            self.ran
                .lock()
                .unwrap()
                .iter()
                .map(|(a, _, _)| a.clone())
                .collect()
        }
    }

    impl Runner for Recording {
        fn run(&self, argv: &[String], input: Input, to: Option<&Path>) -> Result<Ran, Error> {
            self.ran
                .lock()
                .unwrap()
                .push((argv.to_vec(), input, to.map(Path::to_path_buf)));
            let holds = |words: &[&str]| {
                argv.windows(words.len())
                    .any(|w| w.iter().zip(words).all(|(a, b)| a.contains(b)))
            };
            let Some((_, rans)) = self.answers.iter().find(|(words, _)| holds(words)) else {
                return Ok(said(0, ""));
            };
            let mut rans = rans.lock().unwrap();
            Ok(if rans.len() > 1 {
                rans.remove(0)
            } else {
                rans[0].clone()
            })
        }

        fn pause(&self) {}
    }

    fn said(code: i32, stdout: &str) -> Ran {
        Ran {
            code: Some(code),
            stdout: stdout.into(),
            stderr: String::new(),
        }
    }

    fn failing(stderr: &str) -> Ran {
        Ran {
            code: Some(1),
            stdout: String::new(),
            stderr: stderr.into(),
        }
    }

    const BASE: &str = "1111111111111111111111111111111111111111";
    const POD: &str = "corral-fix-the-typo-x2k9p";
    const SERVE: &str = "containerStatuses[?(@.name==\"serve\")]";

    /// A cluster where everything goes well: the pod is there on the
    /// second ask, serve runs on the second, and the task changed files.
    fn fine() -> Answers {
        vec![
            (vec!["/p", "rev-parse"], vec![said(0, &format!("{BASE}\n"))]),
            (vec!["config", "user.name"], vec![said(0, "Ann\n")]),
            (
                vec!["config", "user.email"],
                vec![said(0, "ann@example.com\n")],
            ),
            (vec!["get", "pods"], vec![said(0, ""), said(0, POD)]),
            (
                vec!["initContainerStatuses"],
                vec![said(0, "2030-01-01T00:00:00Z")],
            ),
            (
                vec![SERVE],
                vec![said(0, "Pending "), said(0, "Running 2030-01-01T00:00:01Z")],
            ),
            (vec!["diff", "--cached", "--quiet"], vec![said(1, "")]),
            (
                vec!["safe.directory=/work", "rev-parse"],
                vec![said(0, "2222\n")],
            ),
        ]
    }

    /// `fine()` with `words` answered first by `ran`.
    fn but(words: Vec<&'static str>, ran: Ran) -> Recording {
        let mut answers = fine();
        answers.insert(0, (words, vec![ran]));
        Recording::new(answers)
    }

    fn spec() -> TaskSpec {
        let mut spec = TaskSpec::new("Fix the typo", "registry.example/corral-task:1", "agents");
        spec.context = Some("work".into());
        spec
    }

    const WORKTREE: &str = "/data/worktrees/p/fix-the-typo";

    fn task(runner: &dyn Runner, kind: Kind) -> KubeTask<'_> {
        KubeTask::new(
            runner,
            spec(),
            kind,
            Path::new("/p"),
            Path::new(WORKTREE),
            Path::new("/scratch"),
        )
    }

    fn words(w: &[&str]) -> Vec<String> {
        w.iter().map(ToString::to_string).collect()
    }

    /// The whole run of a task in a Job: each command, in order, with
    /// what goes on its stdin, the manifests being kube.rs's own.
    #[test]
    fn a_task_runs_these_commands_in_this_order() {
        let runner = Recording::new(fine());
        let mut task = task(&runner, Kind::Job);
        let pod = task.start(1_900_000_000).unwrap();
        assert_eq!(pod, POD);
        let remote = task.remote(&pod);
        assert_eq!(remote.display(), format!("kube:agents/{POD}"));
        let attach = remote.pod.clone().unwrap();
        assert_eq!(attach.attach, kube::attach(&spec(), POD));
        assert_eq!(attach.start_line, kube::START_LINE);
        assert_eq!(remote.path, kube::WORK);
        assert!(task.bring_back(&pod).unwrap());
        task.delete().unwrap();
        // Deleted once only.
        task.delete().unwrap();

        let spec = spec();
        let bundle = PathBuf::from("/scratch/corral-fix-the-typo.bundle");
        let back_file = PathBuf::from("/scratch/corral-fix-the-typo-back.bundle");
        let back = kube::results(&spec, POD, BASE, ("Ann", "ann@example.com"));
        let want: Vec<Vec<String>> = vec![
            words(&[
                "git",
                "-C",
                "/p",
                "rev-parse",
                "--verify",
                "corral/fix-the-typo",
            ]),
            words(&["git", "-C", "/p", "config", "user.name"]),
            words(&["git", "-C", "/p", "config", "user.email"]),
            kube::bundle_here(Path::new("/p"), &spec),
            kube::create(&spec),
            kube::find_pod(&spec),
            kube::find_pod(&spec),
            kube::receive_started(&spec, POD),
            kube::send_bundle(&spec, POD),
            kube::serve_started(&spec, POD),
            kube::serve_started(&spec, POD),
            back.stage.clone(),
            back.staged.clone(),
            back.commit.clone(),
            back.head.clone(),
            back.bundle.clone(),
            kube::pull_here(Path::new(WORKTREE), &spec, &back_file),
            kube::delete(&spec, Kind::Job),
        ];
        assert_eq!(runner.argvs(), want);
        let ran = runner.ran.lock().unwrap();
        // The branch's bundle goes to a file, then from it into the pod;
        // the one back to a file, then pulled.
        assert_eq!(ran[3].2.as_deref(), Some(bundle.as_path()));
        assert_eq!(ran[8].1, Input::File(bundle));
        assert_eq!(ran[15].2.as_deref(), Some(back_file.as_path()));
        // create reads the List of kube.rs's NetworkPolicy and Job.
        let Input::Bytes(list) = &ran[4].1 else {
            panic!("create's stdin: {:?}", ran[4].1);
        };
        let list: Value = serde_json::from_slice(list).unwrap();
        assert_eq!(
            list,
            kube::list(vec![
                kube::network_policy(&spec).unwrap(),
                kube::job(&spec).unwrap()
            ])
        );
        for (i, (_, input, to)) in ran.iter().enumerate() {
            if i != 4 && i != 8 {
                assert_eq!(*input, Input::Nothing, "{i}");
            }
            if i != 3 && i != 15 {
                assert_eq!(*to, None, "{i}");
            }
        }
        // The commit in the pod is the user's.
        assert!(back
            .commit
            .contains(&"user.email=ann@example.com".to_string()));
    }

    /// Brought back again and again while the loop runs: each time only
    /// the commits since the last time, nothing when the pod's branch has
    /// not moved, and the branch here counted as back once any came.
    #[test]
    fn each_bring_back_brings_the_commits_since_the_last() {
        let mut answers = fine();
        answers[7].1 = vec![said(0, "2222\n"), said(0, "2222\n"), said(0, "3333\n")];
        let runner = Recording::new(answers);
        let mut task = task(&runner, Kind::Job);
        let pod = task.start(1_900_000_000).unwrap();
        assert!(!task.came_back());
        assert!(task.bring_back(&pod).unwrap());
        assert!(task.came_back());
        assert!(!task.bring_back(&pod).unwrap());
        assert!(task.bring_back(&pod).unwrap());
        let identity = ("Ann", "ann@example.com");
        let bundles: Vec<Vec<String>> = runner
            .argvs()
            .into_iter()
            .filter(|a| a[0] == "kubectl" && a.contains(&"bundle".to_string()))
            .collect();
        assert_eq!(
            bundles,
            vec![
                kube::results(&spec(), POD, BASE, identity).bundle,
                kube::results(&spec(), POD, "2222", identity).bundle,
            ]
        );
        let pulls = runner
            .argvs()
            .iter()
            .filter(|a| a.contains(&"pull".to_string()))
            .count();
        assert_eq!(pulls, 2);
    }

    /// While the loop runs the branch comes back time after time; a time
    /// that fails is told and the next one tried; the stop ends it.
    #[test]
    fn the_branch_comes_back_until_stopped_and_a_failure_is_told() {
        let mut answers = fine();
        answers.insert(
            0,
            (
                vec!["add", "--all"],
                vec![failing("error: the pod is gone\n"), said(0, "")],
            ),
        );
        let runner = Recording::new(answers);
        let mut task = task(&runner, Kind::Job);
        let pod = task.start(1_900_000_000).unwrap();
        let failures = Mutex::new(Vec::new());
        std::thread::scope(|scope| {
            let (stop, stopped) = std::sync::mpsc::channel::<Wake>();
            let (task, pod, failures) = (&task, &pod, &failures);
            let bringing = scope.spawn(move || {
                let every = Duration::from_millis(1);
                task.bring_back_until(pod, every, every, &stopped, |e| {
                    failures.lock().unwrap().push(e.message.clone());
                });
            });
            runner.wait_for_stages(3);
            drop(stop);
            bringing.join().unwrap();
        });
        let failures = failures.into_inner().unwrap();
        assert_eq!(failures.len(), 1, "{failures:?}");
        assert!(
            failures[0].contains("stage the task's work"),
            "{}",
            failures[0]
        );
        assert!(task.came_back());
    }

    /// The window's task: brought back on its own thread while it runs;
    /// ended, it is brought back once more while the session is held,
    /// then the session is let go, then the objects are deleted.
    #[test]
    fn a_running_task_ends_brought_back_then_let_go_then_deleted() {
        let runner: &'static Recording = Box::leak(Box::new(Recording::new(fine())));
        let mut task = task(runner, Kind::Job);
        let pod = task.start(1_900_000_000).unwrap();
        let running = Running::new(task, pod, Duration::from_millis(1), Duration::ZERO);
        assert_eq!(running.remote().display(), format!("kube:agents/{POD}"));
        runner.wait_for_stages(2);
        /// Marks in the runner's record when it is let go.
        struct Session(&'static Recording);
        impl Drop for Session {
            fn drop(&mut self) {
                let mark = (vec!["session let go".to_string()], Input::Nothing, None);
                self.0.ran.lock().unwrap().push(mark);
            }
        }
        let before = runner.argvs().len();
        running.end(Session(runner)).unwrap();
        let after: Vec<String> = runner.argvs()[before..]
            .iter()
            .map(|a| a.join(" "))
            .collect();
        let at = |what: &str| after.iter().position(|a| a.contains(what));
        let (staged, let_go, deleted) = (at("--all"), at("session let go"), at("delete"));
        assert!(
            staged.is_some() && let_go.is_some() && deleted.is_some(),
            "{after:#?}"
        );
        assert!(staged < let_go && let_go < deleted, "{after:#?}");
        // Deleted once: the task's own drop owes nothing more.
        assert_eq!(
            runner
                .argvs()
                .iter()
                .filter(|a| a.contains(&"delete".to_string()))
                .count(),
            1
        );
    }

    /// A call that may have changed the worktree brings the branch back
    /// once the calls settle, long before the minute is up; nothing
    /// brings it back before.
    #[test]
    fn a_change_brings_the_branch_back_once_the_calls_settle() {
        let runner: &'static Recording = Box::leak(Box::new(Recording::new(fine())));
        let mut task = task(runner, Kind::Job);
        let pod = task.start(1_900_000_000).unwrap();
        let hour = Duration::from_secs(3600);
        let running = Running::new(task, pod, hour, Duration::from_millis(50));
        let stages = || runner.stages();
        assert_eq!(stages(), 0);
        let waker = running.waker();
        for _ in 0..3 {
            waker.send(Wake::Changed).unwrap();
        }
        runner.wait_for_stages(1);
        assert_eq!(stages(), 1, "three changes in a row, one time back");
        running.end(()).unwrap();
        // A waker held past the end wakes nothing.
        assert!(waker.send(Wake::Changed).is_err());
    }

    /// Settings' task in Kubernetes: the task's branch, the namespace and
    /// context, the limits as Kubernetes quantities; a spec the cluster
    /// would take.
    #[test]
    fn settings_place_the_window_s_task_in_the_cluster() {
        let chosen: corral_config::TaskContainer = serde_json::from_value(serde_json::json!({
            "engine": "kubernetes", "image": " registry.example/corral-task:1 ",
            "cpus": 3, "memory_mib": 1536, "options": [],
            "kube": {"namespace": "agents", "context": " ", "kind": "job"}
        }))
        .unwrap();
        let kube = chosen.in_cluster().unwrap().unwrap();
        let spec = spec_for("fix-the-typo-2", &chosen, kube, Mode::AutoEdit);
        spec.check().unwrap();
        assert_eq!(spec.branch, "corral/fix-the-typo-2");
        assert_eq!(spec.slug, "fix-the-typo-2");
        assert_eq!(spec.image, "registry.example/corral-task:1");
        assert_eq!((spec.cpu.as_str(), spec.memory.as_str()), ("3", "1536Mi"));
        assert_eq!(spec.context, None);
        assert_eq!(spec.mode, Mode::AutoEdit);
        let job = kube::job(&spec).unwrap();
        let limits = &job["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"];
        assert_eq!(limits["cpu"], "3");
        assert_eq!(limits["memory"], "1536Mi");
    }

    /// A Sandbox ends a day after it was made, should exec never delete
    /// it; nothing to commit and no new commit: nothing comes back. A
    /// user with no git identity: the commits would be Corral's.
    #[test]
    fn a_sandbox_ends_in_a_day_and_no_work_brings_nothing_back() {
        let mut answers = fine();
        answers[2].1 = vec![failing("")];
        answers[6].1 = vec![said(0, "")];
        answers[7].1 = vec![said(0, &format!("{BASE}\n"))];
        let runner = Recording::new(answers);
        let mut task = task(&runner, Kind::Sandbox);
        let pod = task.start(0).unwrap();
        assert_eq!(
            task.identity,
            ("Corral".to_string(), "corral@localhost".to_string())
        );
        assert!(!task.bring_back(&pod).unwrap());
        task.delete().unwrap();
        let argvs = runner.argvs();
        let ran = runner.ran.lock().unwrap();
        let Input::Bytes(list) = &ran[4].1 else {
            panic!("create's stdin");
        };
        let list: Value = serde_json::from_slice(list).unwrap();
        let sandbox = kube::sandbox(&spec(), Some("1970-01-02T00:00:00Z")).unwrap();
        assert_eq!(list["items"][1], sandbox);
        // No commit, no bundle back, no pull.
        assert!(!argvs.iter().any(|a| a.contains(&"commit".to_string())));
        assert!(!argvs.iter().any(|a| a.contains(&"pull".to_string())));
        assert_eq!(argvs.last().unwrap(), &kube::delete(&spec(), Kind::Sandbox));
    }

    /// Each step of the start failing: a standardized error with a hint,
    /// and what was made in the cluster deleted (nothing before create).
    #[test]
    fn each_failing_step_is_an_error_with_a_hint_and_is_cleaned_up() {
        let delete = kube::delete(&spec(), Kind::Job);
        let unreachable = || failing("error: the server is unreachable\n");
        let cases: [(&str, Recording, bool); 8] = [
            ("branch", but(vec!["/p", "rev-parse"], unreachable()), false),
            (
                "bundle",
                but(vec!["bundle", "create"], unreachable()),
                false,
            ),
            (
                "create",
                but(vec!["create", "--filename"], unreachable()),
                true,
            ),
            ("pod", but(vec!["get", "pods"], unreachable()), true),
            (
                "receive",
                but(vec!["initContainerStatuses"], unreachable()),
                true,
            ),
            (
                "send",
                but(vec!["--container", "receive"], unreachable()),
                true,
            ),
            ("serve", but(vec![SERVE], unreachable()), true),
            ("ended", but(vec![SERVE], said(0, "Failed ")), true),
        ];
        for (step, runner, deleted) in cases {
            let mut task = task(&runner, Kind::Job);
            let error = task.start(0).expect_err(step);
            assert!(!error.hint.is_empty(), "{step}: {error:?}");
            assert_eq!(error.code, ErrorCode::Io, "{step}");
            let argvs = runner.argvs();
            assert_eq!(argvs.last() == Some(&delete), deleted, "{step}: {argvs:?}");
            let deletes = argvs.iter().filter(|a| **a == delete).count();
            assert_eq!(deletes, usize::from(deleted), "{step}");
            if step != "ended" {
                assert!(
                    error.message.contains("the server is unreachable"),
                    "{step}: {error:?}"
                );
            }
        }
    }

    /// A name taken in the namespace is another task's: refused, and not
    /// deleted.
    #[test]
    fn a_taken_name_is_refused_and_left_alone() {
        let runner = but(
            vec!["create", "--filename"],
            failing("Error from server (AlreadyExists): jobs.batch \"corral-fix-the-typo\" already exists"),
        );
        let mut task = task(&runner, Kind::Job);
        let error = task.start(0).unwrap_err();
        assert!(error.hint.contains("already"), "{error:?}");
        assert!(!runner
            .argvs()
            .iter()
            .any(|a| a.contains(&"delete".to_string())));
    }

    /// A task dropped before it was deleted (exec ended early) deletes
    /// what it made, once.
    #[test]
    fn a_task_dropped_deletes_what_it_made() {
        let runner = Recording::new(fine());
        let mut task = task(&runner, Kind::Job);
        task.start(0).unwrap();
        drop(task);
        let argvs = runner.argvs();
        assert_eq!(argvs.last().unwrap(), &kube::delete(&spec(), Kind::Job));
        let deletes = argvs.iter().filter(|a| a.contains(&"delete".to_string()));
        assert_eq!(deletes.count(), 1);
    }

    /// A pod that never comes is asked for a bounded number of times.
    #[test]
    fn a_pod_that_never_comes_is_given_up_on_and_cleaned_up() {
        let runner = but(vec!["get", "pods"], said(0, ""));
        let mut task = task(&runner, Kind::Job);
        task.tries = 3;
        let error = task.start(0).unwrap_err();
        assert_eq!(error.details["tries"], 3);
        assert!(!error.hint.is_empty());
        let argvs = runner.argvs();
        let asked = argvs.iter().filter(|a| a.contains(&"pods".to_string()));
        assert_eq!(asked.count(), 3);
        assert_eq!(argvs.last().unwrap(), &kube::delete(&spec(), Kind::Job));
    }

    /// Bringing back fails at each step: an error with a hint naming the
    /// command; a failed delete names the command to run.
    #[test]
    fn each_failing_step_of_bringing_back_is_an_error_with_a_hint() {
        for words in [
            vec!["add", "--all"],
            vec!["diff", "--cached"],
            vec!["commit", "--quiet"],
            vec!["safe.directory=/work", "rev-parse"],
            vec!["bundle", "create", "-", "corral/fix-the-typo", "^1111"],
            vec!["pull", "--quiet"],
        ] {
            // diff's 1 says something is staged: its failure is git's 128.
            let mut ran = failing("error: container not found");
            ran.code = Some(128);
            let runner = but(words.clone(), ran);
            let mut task = task(&runner, Kind::Job);
            task.base = BASE.into();
            *task.brought.get_mut().unwrap() = BASE.into();
            let error = task.bring_back(POD).expect_err(words[0]);
            assert!(!error.hint.is_empty());
            let command = error.details["command"].as_str().unwrap();
            assert!(command.contains(words[0]), "{command}");
        }
        let runner = Recording::new(vec![(vec!["delete"], vec![failing("error: forbidden")])]);
        let task = task(&runner, Kind::Job);
        task.made.store(true, Ordering::SeqCst);
        let error = task.delete().unwrap_err();
        assert!(
            error.hint.contains(
                "kubectl --context work --namespace agents delete job/corral-fix-the-typo"
            ),
            "{error:?}"
        );
    }

    #[test]
    fn the_engine_s_cpus_and_memory_are_the_pod_s() {
        assert_eq!(
            limits(&words(&["--cpus=1.5", "--memory=512m"])).unwrap(),
            (Some("1.5".into()), Some("512Mi".into()))
        );
        assert_eq!(
            limits(&words(&["--memory=4g"])).unwrap().1.as_deref(),
            Some("4Gi")
        );
        assert_eq!(limits(&[]).unwrap(), (None, None));
        for bad in ["--ulimit=nofile=1:1", "--memory=4x", "--privileged"] {
            let error = limits(&words(&[bad])).unwrap_err();
            assert_eq!(error.code, ErrorCode::InvalidInput, "{bad}");
        }
    }
}
