//! A task's place in Kubernetes: the manifests one task is run with, and
//! the `kubectl` and `git` commands that move its work in and out. Pure
//! functions: nothing here reaches a cluster (docs/scale.md says what was
//! checked offline and what was not).
//!
//! A task runs as a pod the user's cluster makes, either from a batch/v1
//! [`job`] or from a kubernetes-sigs/agent-sandbox `Sandbox` ([`sandbox`],
//! `agents.x-k8s.io/v1beta1`, the version its CRD stores; `v1alpha1` is
//! still served but deprecated). Both carry the same pod ([`pod_spec`]):
//!
//! - **The worktree goes in as a git bundle, through the stdin of an init
//!   container.** The client makes `git bundle create - corral/<slug>`
//!   here ([`bundle_here`]) and pipes it into `kubectl attach -i` of the
//!   init container `receive` ([`send_bundle`]), which writes it to
//!   scratch, clones it into `/work` on the task's branch and ends; then
//!   the main container starts. Not a Secret or ConfigMap: those hold
//!   1 MiB at most (most repositories' history is more), and the code
//!   would sit in the cluster's store readable by whoever may read
//!   secrets there. Not `kubectl cp`: it needs `tar` and a running
//!   container to copy into, and a container waiting for a file is a
//!   polling loop. Attach is what the session uses anyway, so one
//!   mechanism moves both the bundle and the conversation, for any size.
//! - **The main container runs `corral-cli serve --root /work --mode
//!   MODE`** with stdin open once (`stdin`, `stdinOnce`): the window
//!   speaks serve's protocol (docs/remote.md) through `kubectl attach -i`
//!   ([`attach`]), as it does through ssh. Attach gets only the output
//!   written after it connects, so serve is started by the client's first
//!   line, [`START_LINE`] (a `read` in `sh` before `exec`): its `ready`
//!   line is never missed.
//! - **Fences**: the worktree is an emptyDir at `/work`, its only writable
//!   mount but for scratch (`/tmp`, the `HOME` serve keeps its index and
//!   checkpoints in, as the Podman container's tmpfs); the root file
//!   system is read-only, the user is not root (uid 1000), no privilege
//!   escalation, every capability dropped, the runtime's seccomp profile,
//!   no service account token, no service links; the spec's CPU and
//!   memory are both request and limit. These meet the "restricted" Pod
//!   Security Standard. The network is fenced by a [`network_policy`]
//!   that admits nothing in or out (where the cluster's network plugin
//!   enforces policies); attach and exec go through the kubelet, not the
//!   pod's network.
//! - **One run**: `restartPolicy: Never`, a Job's `backoffLimit: 0` and
//!   `ttlSecondsAfterFinished`; a Sandbox's `shutdownPolicy: Delete` with
//!   the caller's `shutdownTime`.
//! - **Results come back as the branch**, fetched while serve still runs
//!   (once the window lets go of its stdin, serve ends and the pod is
//!   done: exec is refused then). [`results`] stages and commits what the
//!   worktree holds there, bundles the branch's new commits to stdout
//!   through `kubectl exec`, and [`fetch_here`] fetches the file into the
//!   project's branch of the same name.
//!
//! Object names are `corral-<slug>`; labels name the task (`corral.dev/task:
//! <slug>`) and Corral's; the branch `corral/<slug>` and the task's own
//! name are annotations, because a label's value cannot hold a `/`.

use corral_tools::policy::Mode;
use corral_tools::Error;
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;
use std::path::Path;

/// Where the worktree is inside the pod.
pub const WORK: &str = "/work";
/// The pod's scratch: `HOME` (serve's index and checkpoints) and the
/// bundle while it is received.
pub const SCRATCH: &str = "/tmp";
/// The init container that receives the bundle.
pub const RECEIVE: &str = "receive";
/// The container serve runs in.
pub const SERVE: &str = "serve";
/// The client's first line on serve's stdin, which starts serve.
pub const START_LINE: &str = "go";
/// The agent-sandbox API version the [`sandbox`] is written in.
pub const SANDBOX_API_VERSION: &str = "agents.x-k8s.io/v1beta1";
/// The label naming the task (its slug).
pub const TASK_LABEL: &str = "corral.dev/task";
/// The annotation naming the task's branch.
pub const BRANCH_ANNOTATION: &str = "corral.dev/branch";
/// The annotation holding the task's name as the user wrote it.
pub const NAME_ANNOTATION: &str = "corral.dev/task-name";
/// The user id the containers run as.
pub const USER_ID: i64 = 1000;
/// How much scratch the pod has.
const SCRATCH_SIZE: &str = "1Gi";

/// What one task in Kubernetes is made from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskSpec {
    /// The task's name, as the user wrote it (an annotation only).
    pub name: String,
    /// Its slug ([`crate::worktree::slug`]): the objects' names and the
    /// task's label.
    pub slug: String,
    /// Its branch, `corral/<slug>`.
    pub branch: String,
    /// The image: Corral's (`scripts/image.sh`) or one built on it, in a
    /// registry the cluster pulls from.
    pub image: String,
    /// The bundle's file name, here and in the pod's scratch.
    pub bundle: String,
    /// The mode serve judges calls in.
    pub mode: Mode,
    /// CPU, request and limit (a Kubernetes quantity: `2`, `500m`).
    pub cpu: String,
    /// Memory, request and limit (`4Gi`).
    pub memory: String,
    /// The most the worktree's emptyDir may hold (`8Gi`).
    pub work_size: String,
    /// The namespace the task's objects are made in.
    pub namespace: String,
    /// The kubeconfig's context; its current one when `None`.
    pub context: Option<String>,
    /// The user's own labels, added to Corral's.
    pub labels: BTreeMap<String, String>,
    /// How long a finished Job is kept (`ttlSecondsAfterFinished`).
    pub keep_seconds: u32,
}

impl TaskSpec {
    /// A task named `name` on `image` in `namespace`, with the defaults:
    /// mode ask, 2 CPUs, 4 GiB of memory, an 8 GiB worktree, kept 10
    /// minutes after it ends.
    pub fn new(name: &str, image: &str, namespace: &str) -> TaskSpec {
        let slug = crate::worktree::slug(name);
        TaskSpec {
            name: name.to_string(),
            branch: format!("corral/{slug}"),
            bundle: format!("corral-{slug}.bundle"),
            slug,
            image: image.to_string(),
            mode: Mode::Ask,
            cpu: "2".into(),
            memory: "4Gi".into(),
            work_size: "8Gi".into(),
            namespace: namespace.to_string(),
            context: None,
            labels: BTreeMap::new(),
            keep_seconds: 600,
        }
    }

    /// The name of the task's objects: `corral-<slug>`.
    pub fn object_name(&self) -> String {
        format!("corral-{}", self.slug)
    }

    /// What the API server would refuse, or a field would carry into a
    /// command wrongly, said before anything is sent. The published
    /// schemas check types and fields; these are the values' syntax.
    pub fn check(&self) -> Result<(), Error> {
        if self.slug.is_empty() || crate::worktree::slug(&self.slug) != self.slug {
            return Err(bad("slug", &self.slug, "is not a task's slug"));
        }
        if self.branch != format!("corral/{}", self.slug) {
            return Err(bad("branch", &self.branch, "is not corral/<slug>"));
        }
        if !dns_label(&self.namespace) {
            return Err(bad("namespace", &self.namespace, "is not a DNS label"));
        }
        if self.image.is_empty()
            || self.image.starts_with('-')
            || self
                .image
                .chars()
                .any(|c| c.is_whitespace() || c.is_control())
        {
            return Err(bad("image", &self.image, "is not an image's name"));
        }
        let file_char = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-');
        if self.bundle.is_empty()
            || self.bundle.len() > 100
            || self.bundle.starts_with(['.', '-'])
            || !self.bundle.chars().all(file_char)
        {
            return Err(bad("bundle", &self.bundle, "is not a plain file name"));
        }
        for (field, value) in [
            ("cpu", &self.cpu),
            ("memory", &self.memory),
            ("work_size", &self.work_size),
        ] {
            if !quantity(value) {
                return Err(bad(
                    field,
                    value,
                    "is not a Kubernetes quantity (2, 500m, 4Gi)",
                ));
            }
        }
        if let Some(context) = &self.context {
            if context.is_empty() || context.starts_with('-') {
                return Err(bad("context", context, "is not a context's name"));
            }
        }
        for (key, value) in &self.labels {
            if !label_key(key) {
                return Err(bad("labels", key, "is not a label's key"));
            }
            if !label_value(value) {
                return Err(bad("labels", value, "is not a label's value"));
            }
            if key == TASK_LABEL || key.starts_with("app.kubernetes.io/") {
                return Err(bad("labels", key, "is one of Corral's own labels"));
            }
        }
        Ok(())
    }

    fn labels(&self) -> Value {
        let mut labels = Map::new();
        for (key, value) in &self.labels {
            labels.insert(key.clone(), Value::String(value.clone()));
        }
        labels.insert("app.kubernetes.io/name".into(), json!("corral"));
        labels.insert("app.kubernetes.io/component".into(), json!("task"));
        labels.insert(TASK_LABEL.into(), json!(self.slug));
        Value::Object(labels)
    }

    fn annotations(&self) -> Value {
        json!({ BRANCH_ANNOTATION: self.branch, NAME_ANNOTATION: self.name })
    }

    fn metadata(&self) -> Value {
        json!({
            "name": self.object_name(),
            "namespace": self.namespace,
            "labels": self.labels(),
            "annotations": self.annotations(),
        })
    }
}

fn bad(field: &str, value: &str, why: &str) -> Error {
    Error::invalid_input(format!("the task's {field} `{value}` {why}"))
        .hint("Fix the task's Kubernetes settings.")
        .detail("field", field)
        .detail("value", value)
}

fn dns_label(s: &str) -> bool {
    (1..=63).contains(&s.len())
        && s.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && !s.starts_with('-')
        && !s.ends_with('-')
}

/// A label's name or value part: alphanumerics at both ends, `-_.` inside.
fn label_word(s: &str) -> bool {
    let inner = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.');
    s.len() <= 63
        && s.chars().all(inner)
        && s.starts_with(|c: char| c.is_ascii_alphanumeric())
        && s.ends_with(|c: char| c.is_ascii_alphanumeric())
}

fn label_key(key: &str) -> bool {
    match key.split_once('/') {
        Some((prefix, name)) => {
            prefix.len() <= 253 && prefix.split('.').all(dns_label) && label_word(name)
        }
        None => label_word(key),
    }
}

fn label_value(value: &str) -> bool {
    value.is_empty() || label_word(value)
}

/// A plain quantity: a positive decimal and one of Kubernetes' suffixes.
fn quantity(s: &str) -> bool {
    let digits_end = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let (number, suffix) = s.split_at(digits_end);
    let number_ok = !number.is_empty()
        && number.matches('.').count() <= 1
        && !number.starts_with('.')
        && !number.ends_with('.');
    let suffixes = [
        "", "m", "k", "M", "G", "T", "P", "E", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei",
    ];
    number_ok && suffixes.contains(&suffix)
}

fn mode_word(mode: Mode) -> &'static str {
    match mode {
        Mode::ReadOnly => "read_only",
        Mode::Ask => "ask",
        Mode::AutoEdit => "auto_edit",
        Mode::FullAuto => "full_auto",
    }
}

/// What every container of the task is fenced with.
fn container_security() -> Value {
    json!({
        "allowPrivilegeEscalation": false,
        "readOnlyRootFilesystem": true,
        "runAsNonRoot": true,
        "capabilities": { "drop": ["ALL"] },
    })
}

fn resources(spec: &TaskSpec) -> Value {
    let both = json!({ "cpu": spec.cpu, "memory": spec.memory });
    json!({ "requests": both, "limits": both })
}

/// The init container's script: `$1` the bundle's path, `$2` the branch.
/// `/work`, the emptyDir, is root's (the kubelet makes it so), which git
/// calls dubious for uid 1000: the global config in `HOME` (scratch, which
/// serve's container shares) says it is safe. The clone's remote (the
/// bundle, removed) is dropped with it.
const RECEIVE_SCRIPT: &str = "git config --global --add safe.directory /work && cat > \"$1\" && git -c core.hooksPath=/dev/null clone --quiet --branch \"$2\" -- \"$1\" /work && rm -f -- \"$1\" && git -C /work remote remove origin";

/// The main container's script: the client's first line, then serve.
const SERVE_SCRIPT: &str = "read -r _ && exec \"$@\"";

/// The task's pod: the init container that receives the bundle and the
/// one serve runs in (the module's docs say why each field is there).
pub fn pod_spec(spec: &TaskSpec) -> Result<Value, Error> {
    spec.check()?;
    let mounts = json!([
        { "name": "work", "mountPath": WORK },
        { "name": "scratch", "mountPath": SCRATCH },
    ]);
    let bundle_path = format!("{SCRATCH}/{}", spec.bundle);
    Ok(json!({
        "restartPolicy": "Never",
        "automountServiceAccountToken": false,
        "enableServiceLinks": false,
        "securityContext": {
            "runAsNonRoot": true,
            "runAsUser": USER_ID,
            "runAsGroup": USER_ID,
            "seccompProfile": { "type": "RuntimeDefault" },
        },
        "initContainers": [{
            "name": RECEIVE,
            "image": spec.image,
            "imagePullPolicy": "IfNotPresent",
            "command": ["sh", "-c", RECEIVE_SCRIPT, RECEIVE, bundle_path, spec.branch],
            "env": [{ "name": "HOME", "value": SCRATCH }],
            "stdin": true,
            "stdinOnce": true,
            "securityContext": container_security(),
            "resources": resources(spec),
            "volumeMounts": mounts,
        }],
        "containers": [{
            "name": SERVE,
            "image": spec.image,
            "imagePullPolicy": "IfNotPresent",
            "command": [
                "sh", "-c", SERVE_SCRIPT, SERVE,
                "corral-cli", "serve", "--root", WORK, "--mode", mode_word(spec.mode),
            ],
            "workingDir": WORK,
            "env": [{ "name": "HOME", "value": SCRATCH }],
            "stdin": true,
            "stdinOnce": true,
            "securityContext": container_security(),
            "resources": resources(spec),
            "volumeMounts": mounts,
        }],
        "volumes": [
            { "name": "work", "emptyDir": { "sizeLimit": spec.work_size } },
            { "name": "scratch", "emptyDir": { "sizeLimit": SCRATCH_SIZE } },
        ],
    }))
}

/// The task as a batch/v1 Job: one pod, never retried, removed
/// `keep_seconds` after it ends.
pub fn job(spec: &TaskSpec) -> Result<Value, Error> {
    let pod = pod_spec(spec)?;
    Ok(json!({
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": spec.metadata(),
        "spec": {
            "backoffLimit": 0,
            "ttlSecondsAfterFinished": spec.keep_seconds,
            "template": {
                "metadata": { "labels": spec.labels(), "annotations": spec.annotations() },
                "spec": pod,
            },
        },
    }))
}

/// The task as an agent-sandbox `Sandbox`: the same pod, no Service, the
/// Sandbox deleted when it expires at `shutdown_time` (RFC 3339, the
/// caller's clock; it never expires without one).
pub fn sandbox(spec: &TaskSpec, shutdown_time: Option<&str>) -> Result<Value, Error> {
    let pod = pod_spec(spec)?;
    let mut body = json!({
        "podTemplate": {
            "metadata": { "labels": spec.labels(), "annotations": spec.annotations() },
            "spec": pod,
        },
        "service": false,
        "shutdownPolicy": "Delete",
    });
    if let (Some(time), Some(body)) = (shutdown_time, body.as_object_mut()) {
        body.insert("shutdownTime".into(), json!(time));
    }
    Ok(json!({
        "apiVersion": SANDBOX_API_VERSION,
        "kind": "Sandbox",
        "metadata": spec.metadata(),
        "spec": body,
    }))
}

/// A NetworkPolicy that admits nothing to or from the task's pod.
pub fn network_policy(spec: &TaskSpec) -> Result<Value, Error> {
    spec.check()?;
    Ok(json!({
        "apiVersion": "networking.k8s.io/v1",
        "kind": "NetworkPolicy",
        "metadata": spec.metadata(),
        "spec": {
            "podSelector": { "matchLabels": { TASK_LABEL: spec.slug } },
            "policyTypes": ["Ingress", "Egress"],
        },
    }))
}

/// The objects of one task as one `v1` List, for [`create`]'s stdin.
pub fn list(items: Vec<Value>) -> Value {
    json!({ "apiVersion": "v1", "kind": "List", "items": items })
}

/// `kubectl` with the task's context and namespace.
fn kubectl(spec: &TaskSpec) -> Vec<String> {
    let mut words = vec!["kubectl".to_string()];
    if let Some(context) = &spec.context {
        words.extend(["--context".to_string(), context.clone()]);
    }
    words.extend(["--namespace".to_string(), spec.namespace.clone()]);
    words
}

fn with(mut words: Vec<String>, more: &[&str]) -> Vec<String> {
    words.extend(more.iter().map(ToString::to_string));
    words
}

/// Makes the objects read from stdin ([`list`]): `create`, not `apply`,
/// so a task of the same name already there is an error, not replaced.
pub fn create(spec: &TaskSpec) -> Vec<String> {
    with(kubectl(spec), &["create", "--filename", "-"])
}

/// Prints the name of the task's pod (empty until it is made).
pub fn find_pod(spec: &TaskSpec) -> Vec<String> {
    let selector = format!("{TASK_LABEL}={}", spec.slug);
    with(
        kubectl(spec),
        &[
            "get",
            "pods",
            "--selector",
            &selector,
            "--output",
            "jsonpath={.items[0].metadata.name}",
        ],
    )
}

/// Prints when the init container started (empty until it runs): the
/// bundle is sent once this prints a time.
pub fn receive_started(spec: &TaskSpec, pod: &str) -> Vec<String> {
    let path = format!(
        "jsonpath={{.status.initContainerStatuses[?(@.name==\"{RECEIVE}\")].state.running.startedAt}}"
    );
    with(kubectl(spec), &["get", "pod", pod, "--output", &path])
}

/// Prints the pod's phase, a space, and when `serve` started (nothing
/// after the space until it runs): the session attaches once this prints
/// a time; a phase of `Failed` or `Succeeded` means it never will.
pub fn serve_started(spec: &TaskSpec, pod: &str) -> Vec<String> {
    let path = format!(
        "jsonpath={{.status.phase}} {{.status.containerStatuses[?(@.name==\"{SERVE}\")].state.running.startedAt}}"
    );
    with(kubectl(spec), &["get", "pod", pod, "--output", &path])
}

/// Writes the bundle of the task's branch to stdout, here.
pub fn bundle_here(project: &Path, spec: &TaskSpec) -> Vec<String> {
    vec![
        "git".into(),
        "-C".into(),
        project.display().to_string(),
        "bundle".into(),
        "create".into(),
        "-".into(),
        spec.branch.clone(),
    ]
}

/// Sends [`bundle_here`]'s output (piped to its stdin) to the init
/// container, whose stdin closes when it ends.
pub fn send_bundle(spec: &TaskSpec, pod: &str) -> Vec<String> {
    with(
        kubectl(spec),
        &["attach", pod, "--container", RECEIVE, "--stdin", "--quiet"],
    )
}

/// The window's session with serve: its stdin and stdout, one JSON object
/// a line after the client's [`START_LINE`].
pub fn attach(spec: &TaskSpec, pod: &str) -> Vec<String> {
    with(
        kubectl(spec),
        &["attach", pod, "--container", SERVE, "--stdin", "--quiet"],
    )
}

/// `kubectl exec` of `git -C /work` in serve's container, with nothing of
/// the repository's that runs by itself.
fn git_there(spec: &TaskSpec, pod: &str, args: &[&str]) -> Vec<String> {
    let mut words = with(kubectl(spec), &["exec", pod, "--container", SERVE, "--"]);
    words.extend(
        [
            "git",
            "-C",
            WORK,
            "-c",
            "core.hooksPath=/dev/null",
            "-c",
            "core.fsmonitor=false",
            "-c",
            "safe.directory=/work",
        ]
        .iter()
        .map(ToString::to_string),
    );
    words.extend(args.iter().map(ToString::to_string));
    words
}

/// The commands that bring a task's work back, run in this order while
/// serve still runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Results {
    /// Stages everything the worktree holds.
    pub stage: Vec<String>,
    /// Exits 1 when something is staged: then `commit` runs.
    pub staged: Vec<String>,
    /// Commits it on the branch, as `identity`.
    pub commit: Vec<String>,
    /// Prints the branch's commit: when it is still `base`, nothing
    /// comes back and `bundle` is not run (git refuses an empty bundle).
    pub head: Vec<String>,
    /// Writes the branch's commits since `base` to stdout, which the
    /// client keeps in a file here for [`fetch_here`].
    pub bundle: Vec<String>,
}

/// [`Results`] for the task's `pod`, which started from commit `base`,
/// committing as `identity` (name, email): the user's, or Corral's.
pub fn results(spec: &TaskSpec, pod: &str, base: &str, identity: (&str, &str)) -> Results {
    let message = format!("{}: the task's changes", spec.branch);
    let name = format!("user.name={}", identity.0);
    let email = format!("user.email={}", identity.1);
    let since = format!("^{base}");
    Results {
        stage: git_there(spec, pod, &["add", "--all"]),
        staged: git_there(spec, pod, &["diff", "--cached", "--quiet"]),
        commit: git_there(
            spec,
            pod,
            &[
                "-c",
                &name,
                "-c",
                &email,
                "commit",
                "--quiet",
                "--no-verify",
                "-m",
                &message,
            ],
        ),
        head: git_there(spec, pod, &["rev-parse", "--verify", &spec.branch]),
        bundle: git_there(spec, pod, &["bundle", "create", "-", &spec.branch, &since]),
    }
}

/// Fetches the branch from the bundle file `bundle` into the project's
/// branch of the same name, here: a fast-forward only (a branch moved
/// here meanwhile is refused, not overwritten).
pub fn fetch_here(project: &Path, spec: &TaskSpec, bundle: &Path) -> Vec<String> {
    vec![
        "git".into(),
        "-C".into(),
        project.display().to_string(),
        "-c".into(),
        "core.hooksPath=/dev/null".into(),
        "fetch".into(),
        "--quiet".into(),
        bundle.display().to_string(),
        format!("{0}:{0}", spec.branch),
    ]
}

/// Brings the task's branch from the bundle file `bundle` into the task's
/// worktree here, `worktree`, which has the branch checked out (so
/// [`fetch_here`]'s refspec would be refused there): fetched and
/// fast-forwarded, its files with it; a worktree whose branch moved
/// meanwhile is refused, not merged.
pub fn pull_here(worktree: &Path, spec: &TaskSpec, bundle: &Path) -> Vec<String> {
    vec![
        "git".into(),
        "-C".into(),
        worktree.display().to_string(),
        "-c".into(),
        "core.hooksPath=/dev/null".into(),
        "-c".into(),
        "core.fsmonitor=false".into(),
        "pull".into(),
        "--quiet".into(),
        "--no-rebase".into(),
        "--ff-only".into(),
        bundle.display().to_string(),
        spec.branch.clone(),
    ]
}

/// Which object the task was made as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Job,
    Sandbox,
}

impl From<corral_config::KubeKind> for Kind {
    /// What Settings chose.
    fn from(kind: corral_config::KubeKind) -> Kind {
        match kind {
            corral_config::KubeKind::Job => Kind::Job,
            corral_config::KubeKind::Sandbox => Kind::Sandbox,
        }
    }
}

/// Removes the task's objects (the Job's or Sandbox's pod with them).
pub fn delete(spec: &TaskSpec, kind: Kind) -> Vec<String> {
    let name = spec.object_name();
    let object = match kind {
        Kind::Job => format!("job/{name}"),
        Kind::Sandbox => format!("sandbox.agents.x-k8s.io/{name}"),
    };
    let policy = format!("networkpolicy/{name}");
    with(
        kubectl(spec),
        &[
            "delete",
            &object,
            &policy,
            "--ignore-not-found",
            "--wait=false",
        ],
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> TaskSpec {
        TaskSpec::new("Fix the typo", "registry.example/corral-task:1", "agents")
    }

    #[test]
    fn a_spec_is_named_after_its_slug() {
        let spec = spec();
        assert_eq!(spec.slug, "fix-the-typo");
        assert_eq!(spec.branch, "corral/fix-the-typo");
        assert_eq!(spec.object_name(), "corral-fix-the-typo");
        assert!(spec.check().is_ok());
    }

    #[test]
    fn values_the_server_would_refuse_are_refused_here() {
        type Change = fn(&mut TaskSpec);
        let cases: [(&str, Change); 8] = [
            ("namespace", |s| s.namespace = "Agents".into()),
            ("memory", |s| s.memory = "4 GB".into()),
            ("cpu", |s| s.cpu = ".5".into()),
            ("bundle", |s| s.bundle = "../x.bundle".into()),
            ("branch", |s| s.branch = "main".into()),
            ("image", |s| s.image = "--privileged".into()),
            ("labels", |s| {
                s.labels.insert("team".into(), "a/b".into());
            }),
            ("labels", |s| {
                s.labels.insert(TASK_LABEL.into(), "other".into());
            }),
        ];
        for (field, change) in cases {
            let mut spec = spec();
            change(&mut spec);
            let error = spec.check().expect_err(field);
            assert_eq!(error.details["field"], field, "{error:?}");
            assert!(job(&spec).is_err());
        }
        let mut fine = spec();
        fine.cpu = "500m".into();
        fine.memory = "1.5Gi".into();
        fine.labels
            .insert("example.com/team".into(), "tools".into());
        assert!(fine.check().is_ok());
    }

    #[test]
    fn the_pod_is_fenced_and_serve_waits_for_the_first_line() {
        let mut spec = spec();
        spec.mode = Mode::AutoEdit;
        let pod = pod_spec(&spec).unwrap();
        assert_eq!(pod["automountServiceAccountToken"], false);
        assert_eq!(pod["restartPolicy"], "Never");
        let serve = &pod["containers"][0];
        assert_eq!(serve["stdin"], true);
        assert_eq!(serve["stdinOnce"], true);
        assert_eq!(serve["securityContext"]["readOnlyRootFilesystem"], true);
        assert_eq!(serve["resources"]["limits"]["memory"], "4Gi");
        let command: Vec<&str> = serve["command"]
            .as_array()
            .unwrap()
            .iter()
            .map(|w| w.as_str().unwrap())
            .collect();
        assert_eq!(
            command[4..],
            [
                "corral-cli",
                "serve",
                "--root",
                "/work",
                "--mode",
                "auto_edit"
            ]
        );
        let receive = &pod["initContainers"][0];
        assert_eq!(receive["command"][4], "/tmp/corral-fix-the-typo.bundle");
        assert_eq!(receive["command"][5], "corral/fix-the-typo");
    }

    #[test]
    fn the_job_runs_once_and_the_sandbox_expires() {
        let spec = spec();
        let job = job(&spec).unwrap();
        assert_eq!(job["spec"]["backoffLimit"], 0);
        assert_eq!(job["spec"]["ttlSecondsAfterFinished"], 600);
        assert_eq!(job["metadata"]["labels"][TASK_LABEL], "fix-the-typo");
        assert_eq!(
            job["metadata"]["annotations"][BRANCH_ANNOTATION],
            "corral/fix-the-typo"
        );
        let sandbox = sandbox(&spec, Some("2030-01-01T00:00:00Z")).unwrap();
        assert_eq!(sandbox["apiVersion"], SANDBOX_API_VERSION);
        assert_eq!(sandbox["spec"]["shutdownTime"], "2030-01-01T00:00:00Z");
        assert_eq!(
            sandbox["spec"]["podTemplate"]["spec"],
            pod_spec(&spec).unwrap()
        );
        assert!(super::sandbox(&spec, None).unwrap()["spec"]
            .get("shutdownTime")
            .is_none());
    }

    #[test]
    fn the_commands_name_the_context_namespace_pod_and_branch() {
        let mut spec = spec();
        spec.context = Some("work".into());
        assert_eq!(
            attach(&spec, "corral-fix-the-typo-x2k"),
            [
                "kubectl",
                "--context",
                "work",
                "--namespace",
                "agents",
                "attach",
                "corral-fix-the-typo-x2k",
                "--container",
                "serve",
                "--stdin",
                "--quiet"
            ]
        );
        let back = results(&spec, "p", "abc123", ("Ann", "ann@example.com"));
        assert_eq!(
            back.bundle[back.bundle.len() - 5..],
            ["bundle", "create", "-", "corral/fix-the-typo", "^abc123"]
        );
        assert!(back
            .commit
            .contains(&"user.email=ann@example.com".to_string()));
        assert_eq!(
            fetch_here(Path::new("/p"), &spec, Path::new("/t/b.bundle"))[7..],
            ["/t/b.bundle", "corral/fix-the-typo:corral/fix-the-typo"]
        );
        assert_eq!(
            bundle_here(Path::new("/p"), &spec),
            [
                "git",
                "-C",
                "/p",
                "bundle",
                "create",
                "-",
                "corral/fix-the-typo"
            ]
        );
        assert_eq!(
            serve_started(&spec, "p")[7..],
            [
                "p",
                "--output",
                "jsonpath={.status.phase} {.status.containerStatuses[?(@.name==\"serve\")].state.running.startedAt}"
            ]
        );
        assert_eq!(
            pull_here(Path::new("/w"), &spec, Path::new("/t/b.bundle"))[7..],
            [
                "pull",
                "--quiet",
                "--no-rebase",
                "--ff-only",
                "/t/b.bundle",
                "corral/fix-the-typo"
            ]
        );
        assert!(delete(&spec, Kind::Sandbox)
            .contains(&"sandbox.agents.x-k8s.io/corral-fix-the-typo".to_string()));
    }
}
