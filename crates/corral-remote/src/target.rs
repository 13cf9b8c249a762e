//! A remote folder's name, read strictly: what reaches `ssh` is a
//! destination it cannot take for an option, and an absolute path.

use corral_protocol::{Error, ErrorCode};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// A folder on another machine, reached over ssh.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Remote {
    /// `host` or `user@host`, as ssh takes it (a config alias is a host).
    pub destination: String,
    /// The port, when the name gives one (else ssh's config or 22).
    pub port: Option<u16>,
    /// The folder on the remote machine, absolute.
    pub path: String,
    /// The ssh config file to use instead of the user's (`ssh -F`); `None`:
    /// [`crate::CONFIG_VAR`]'s when set, else the user's.
    pub config: Option<PathBuf>,
    /// How long ssh may take to connect and shake hands (`ConnectTimeout`);
    /// a session waits for serve's first line twice as long.
    pub connect_timeout: Duration,
    /// serve runs in a container there (a task's place): `path` is the
    /// folder inside it. With an empty `destination`, on this machine.
    pub container: Option<Container>,
    /// serve runs in a pod of the user's Kubernetes cluster (a task's
    /// place), reached through the user's own `kubectl`: `path` is the
    /// folder inside it, `destination` is empty.
    pub pod: Option<Pod>,
}

/// A pod whose container runs serve, its words fixed by the pod's spec
/// (`corral_host::kube`), waiting for a first line before it starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pod {
    /// `kubectl … attach POD --container serve --stdin --quiet`
    /// (`corral_host::kube::attach`): its stdin and stdout are serve's.
    pub attach: Vec<String>,
    /// The line written first on serve's stdin, before the protocol:
    /// serve starts on it (`corral_host::kube::START_LINE`).
    pub start_line: String,
    /// How it is named back: `kube:NAMESPACE/POD`.
    pub name: String,
}

/// A container a task's serve runs in, made by an engine the user already
/// runs (Podman or Docker), on this machine or on the ssh host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Container {
    /// The engine's program: `podman` or `docker`.
    pub engine: String,
    /// The image: Corral's (`scripts/image.sh`) or one built on it.
    pub image: String,
    /// The task's worktree, on the machine the engine runs on: the
    /// container's only writable mount, at [`Container::WORK`].
    pub worktree: String,
    /// The container's name, so it can be stopped and killed by it.
    pub name: String,
    /// The engine's own words before the image (limits, runtime...).
    pub options: Vec<String>,
}

impl Container {
    /// Where the worktree is inside the container.
    pub const WORK: &'static str = "/work";

    /// The engine's words that run `words` in a new container: removed when
    /// it ends, stdin open, no network of its own, its root read-only but
    /// for the worktree and a temporary `/tmp`. Podman replaces one of the
    /// same name still being removed (a container killed just before, its
    /// task going on in a new one).
    pub fn run_words(&self, words: &[&str]) -> Vec<String> {
        let mut run: Vec<String> = [
            self.engine.as_str(),
            "run",
            "--rm",
            "-i",
            "--name",
            &self.name,
            "--network",
            "none",
            "--read-only",
            "--tmpfs",
            "/tmp",
            "--tmpfs",
            "/root",
            "-e",
            "HOME=/root",
            "-v",
        ]
        .iter()
        .map(ToString::to_string)
        .collect();
        run.push(format!("{}:{}", self.worktree, Container::WORK));
        if Path::new(&self.engine)
            .file_name()
            .is_some_and(|n| n == "podman")
        {
            run.push("--replace".into());
        }
        run.extend(self.options.iter().cloned());
        // `--`: nothing after the image is the engine's.
        run.push(self.image.clone());
        run.extend(words.iter().map(ToString::to_string));
        run
    }

    /// The engine's mounts of the repository's folder `git` (the common
    /// git dir at its own path) for the task whose worktree's admin folder
    /// is `git/worktrees/<admin>`: the folder read-only, and writable only
    /// what a commit on the task's branch writes (objects, refs, logs, the
    /// worktree's own folder), as the sandbox holds git's folder here.
    /// Its config and hooks stay read-only: nothing written in the
    /// container runs in the user's git later.
    pub fn git_mounts(git: &str, admin: &str) -> Vec<String> {
        let mut words = vec!["-v".to_string(), format!("{git}:{git}:ro")];
        for part in ["objects", "refs", "logs"] {
            words.push("-v".into());
            words.push(format!("{git}/{part}:{git}/{part}"));
        }
        words.push("-v".into());
        words.push(format!("{git}/worktrees/{admin}:{git}/worktrees/{admin}"));
        words
    }

    /// The engine's words that kill the container at once (Stop, a crash
    /// test): what runs in it ends with it.
    pub fn kill_words(&self) -> Vec<String> {
        vec![self.engine.clone(), "kill".into(), self.name.clone()]
    }
}

/// [`Remote::connect_timeout`] unless the caller sets another.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(15);

impl Remote {
    /// Reads `ssh://[user@]host[:port]/abs/path` or `[user@]host:/abs/path`.
    /// `None`: a local path. A name that is remote but malformed (no
    /// absolute path, a host ssh would read as an option) is an error.
    pub fn parse(name: &str) -> Option<Result<Remote, Error>> {
        if let Some(rest) = name.strip_prefix("ssh://") {
            return Some(url(rest, name));
        }
        // scp's form: a host before the first `:`, no `/` before it, and an
        // absolute path after it. `./a:b` and `/a:b` stay local.
        let (host, path) = name.split_once(':')?;
        if host.is_empty() || host.contains('/') || !path.starts_with('/') {
            return None;
        }
        Some(checked(host, None, path, name))
    }

    /// `ssh` to this machine, with the options every call shares: no
    /// terminal, never a password prompt (Corral has no place to type it:
    /// keys and the agent only), the config of [`Remote::config`] or
    /// [`crate::CONFIG_VAR`] when set. Add the remote command with [`Remote::command`].
    pub fn ssh(&self) -> Command {
        let mut ssh = Command::new("ssh");
        ssh.args(["-T", "-o", "BatchMode=yes"]);
        // A host that never answers fails within the limit, not the
        // system's TCP timeout; a link that dies is noticed within 30 s (three
        // keepalives unanswered), and what waited on it fails.
        ssh.arg("-o")
            .arg(format!(
                "ConnectTimeout={}",
                self.connect_timeout.as_secs().max(1)
            ))
            .args([
                "-o",
                "ServerAliveInterval=10",
                "-o",
                "ServerAliveCountMax=3",
            ]);
        let config = self
            .config
            .clone()
            .or_else(|| std::env::var_os(crate::CONFIG_VAR).map(PathBuf::from));
        if let Some(config) = config {
            ssh.arg("-F").arg(config);
        }
        if let Some(port) = self.port {
            ssh.args(["-p", &port.to_string()]);
        }
        if let Some(dir) = control_dir() {
            // One connection per remote, kept a minute after its last use
            // (OpenSSH's multiplexing): a call after the first skips the
            // handshake. `%C` is a hash of the host, port and user.
            ssh.args(["-o", "ControlMaster=auto", "-o", "ControlPersist=60"])
                .arg("-o")
                .arg(format!("ControlPath={}/%C", dir.display()));
        }
        ssh
    }

    /// `ssh` running `words` on this machine, each word quoted for the
    /// remote shell (ssh joins them with spaces for it). For a container,
    /// the engine runs them in a new one: here, or through ssh there.
    ///
    /// For a pod, `kubectl attach` to serve's container: the pod's spec
    /// holds serve's words, so `words` are not used (nothing else is run
    /// in a pod through this).
    pub fn command<S: AsRef<str>>(&self, words: &[S]) -> Result<Command, Error> {
        if let Some(pod) = &self.pod {
            let Some((program, args)) = pod.attach.split_first() else {
                return Err(Error::invalid_input("no command to attach to the pod"));
            };
            let mut attach = Command::new(program);
            attach.args(args);
            return Ok(attach);
        }
        let words: Vec<&str> = words.iter().map(AsRef::as_ref).collect();
        let words: Vec<String> = match &self.container {
            Some(container) => container.run_words(&words),
            None => words.iter().map(ToString::to_string).collect(),
        };
        self.here_or_there(&words)
    }

    /// Kills the container serve runs in (the engine's `kill`, here or
    /// through ssh), if it runs in one: what ran there ends with it, the
    /// worktree keeps what was written, and the next call starts a new
    /// one on it. A container already gone is no error.
    pub fn stop_container(&self) -> Result<(), Error> {
        let Some(container) = &self.container else {
            return Ok(());
        };
        let out = self
            .here_or_there(&container.kill_words())?
            .stdin(std::process::Stdio::null())
            .output()
            .map_err(|e| {
                Error::new(
                    ErrorCode::Io,
                    format!("could not run {}: {e}", container.engine),
                )
            })?;
        let said = String::from_utf8_lossy(&out.stderr);
        if out.status.success()
            || said.contains("no such container")
            || said.contains("No such container")
        {
            return Ok(());
        }
        Err(Error::new(
            ErrorCode::Io,
            format!(
                "{} could not stop {}: {}",
                container.engine,
                container.name,
                said.trim()
            ),
        ))
    }

    /// `words` run here (an empty destination) or through ssh there.
    fn here_or_there(&self, words: &[String]) -> Result<Command, Error> {
        if self.destination.is_empty() {
            let Some((program, args)) = words.split_first() else {
                return Err(Error::invalid_input("no command to run"));
            };
            let mut here = Command::new(program);
            here.args(args);
            return Ok(here);
        }
        let line = shlex::try_join(words.iter().map(String::as_str)).map_err(|e| {
            Error::invalid_input(format!(
                "a word of the remote command cannot be quoted: {e}"
            ))
        })?;
        let mut ssh = self.ssh();
        // `--`: nothing after it is an option of ssh's.
        ssh.arg("--").arg(&self.destination).arg(line);
        Ok(ssh)
    }

    /// How the folder is named back to the user.
    pub fn display(&self) -> String {
        if let Some(pod) = &self.pod {
            return pod.name.clone();
        }
        if let Some(container) = &self.container {
            return match self.destination.as_str() {
                "" => format!("{}:{}", container.engine, container.name),
                host => format!("ssh://{host} {}:{}", container.engine, container.name),
            };
        }
        match self.port {
            Some(port) => format!("ssh://{}:{port}{}", self.destination, self.path),
            None => format!("ssh://{}{}", self.destination, self.path),
        }
    }
}

/// The folder of ssh's shared connections: the user's own, `0700`, in
/// `$XDG_RUNTIME_DIR` (else the temporary folder). `None` when it cannot
/// be made so (then each call connects anew): a socket in a folder another
/// user can write could be theirs.
fn control_dir() -> Option<PathBuf> {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
    let uid = rustix::process::getuid().as_raw();
    let base = std::env::var_os("XDG_RUNTIME_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(std::env::temp_dir);
    let dir = base.join(format!("corral-ssh-{uid}"));
    let _ = std::fs::DirBuilder::new().mode(0o700).create(&dir);
    let meta = std::fs::symlink_metadata(&dir).ok()?;
    let own = meta.is_dir() && meta.uid() == uid && meta.permissions().mode() & 0o077 == 0;
    own.then_some(dir)
}

fn url(rest: &str, name: &str) -> Result<Remote, Error> {
    let Some(slash) = rest.find('/') else {
        return Err(bad(name, "it names no folder"));
    };
    let (authority, path) = rest.split_at(slash);
    let (userhost, port) = match authority.rsplit_once(':') {
        // `[::1]:22` and `host:22`; a bare IPv6 address needs its brackets.
        Some((left, port))
            if !left.ends_with(':') && (!left.contains(':') || left.ends_with(']')) =>
        {
            let port = port
                .parse::<u16>()
                .ok()
                .filter(|p| *p > 0)
                .ok_or_else(|| bad(name, "its port is not a number from 1 to 65535"))?;
            (left, Some(port))
        }
        _ => (authority, None),
    };
    checked(userhost, port, path, name)
}

/// A destination ssh cannot read as an option or a second word, and a
/// plain absolute path.
fn checked(userhost: &str, port: Option<u16>, path: &str, name: &str) -> Result<Remote, Error> {
    let host = userhost.rsplit_once('@').map_or(userhost, |(_, host)| host);
    let host = host.trim_start_matches('[').trim_end_matches(']');
    if host.is_empty() {
        return Err(bad(name, "it names no host"));
    }
    let allowed = |c: char| c.is_ascii_alphanumeric() || "._-@:[]%".contains(c);
    if userhost.starts_with('-') || host.starts_with('-') || !userhost.chars().all(allowed) {
        return Err(bad(
            name,
            "its host is not a host name, an address or an ssh alias",
        ));
    }
    if !path.starts_with('/') || path.split('/').any(|part| part == "..") {
        return Err(bad(
            name,
            "its folder must be an absolute path without `..`",
        ));
    }
    if path.chars().any(char::is_control) {
        return Err(bad(name, "its folder holds a control character"));
    }
    Ok(Remote {
        destination: userhost.to_string(),
        port,
        path: path.to_string(),
        config: None,
        connect_timeout: CONNECT_TIMEOUT,
        container: None,
        pod: None,
    })
}

fn bad(name: &str, why: &str) -> Error {
    Error::new(
        ErrorCode::InvalidInput,
        format!("`{name}` is not a remote folder Corral can open: {why}"),
    )
    .hint("Name it as ssh://[user@]host[:port]/absolute/path, or [user@]host:/absolute/path.")
    .detail("root", name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    /// A container's serve runs through its engine: here directly, on an
    /// ssh host through ssh, the worktree its only writable mount.
    #[test]
    fn a_container_runs_through_its_engine_here_or_over_ssh() {
        let container = Container {
            engine: "podman".into(),
            image: "corral-task:1".into(),
            worktree: "/data/worktrees/app/fix".into(),
            name: "corral-fix-1".into(),
            options: vec!["--memory=2g".into()],
        };
        let mut remote = Remote {
            destination: String::new(),
            port: None,
            path: Container::WORK.into(),
            config: None,
            connect_timeout: CONNECT_TIMEOUT,
            container: Some(container.clone()),
            pod: None,
        };
        let here = remote.command(&["corral-cli", "serve"]).unwrap();
        assert_eq!(here.get_program(), "podman");
        let args: Vec<String> = here
            .get_args()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        let image_at = args.iter().position(|a| a == "corral-task:1").unwrap();
        assert_eq!(args[image_at + 1..], ["corral-cli", "serve"]);
        assert!(args
            .windows(2)
            .any(|w| w == ["-v", "/data/worktrees/app/fix:/work"]));
        assert!(args.windows(2).any(|w| w == ["--network", "none"]));
        assert!(args.contains(&"--read-only".to_string()));
        assert_eq!(args[image_at - 1], "--memory=2g");
        assert_eq!(remote.display(), "podman:corral-fix-1");

        remote.destination = "build-box".into();
        let there = remote.command(&["corral-cli", "serve"]).unwrap();
        assert_eq!(there.get_program(), "ssh");
        let line = there
            .get_args()
            .last()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        assert!(line.starts_with("podman run --rm -i"), "{line}");
        assert!(line.ends_with("corral-task:1 corral-cli serve"), "{line}");
        assert_eq!(container.kill_words(), ["podman", "kill", "corral-fix-1"]);
        // The repository's folder: read-only but for a commit's parts.
        let mounts = Container::git_mounts("/p/.git", "fix");
        let pairs: Vec<&str> = mounts
            .iter()
            .skip(1)
            .step_by(2)
            .map(String::as_str)
            .collect();
        assert_eq!(
            pairs,
            [
                "/p/.git:/p/.git:ro",
                "/p/.git/objects:/p/.git/objects",
                "/p/.git/refs:/p/.git/refs",
                "/p/.git/logs:/p/.git/logs",
                "/p/.git/worktrees/fix:/p/.git/worktrees/fix",
            ]
        );
    }

    /// A pod's serve is `kubectl attach`, whatever the words: the pod's
    /// spec holds serve's.
    #[test]
    fn a_pod_is_attached_to_with_kubectl() {
        let pod = Pod {
            attach: [
                "kubectl",
                "--namespace",
                "agents",
                "attach",
                "corral-fix-x2k",
            ]
            .map(String::from)
            .to_vec(),
            start_line: "go".into(),
            name: "kube:agents/corral-fix-x2k".into(),
        };
        let remote = Remote {
            pod: Some(pod),
            ..remote("", None, "/work")
        };
        let attach = remote.command(&["sh", "-c", "x", "serve"]).unwrap();
        assert_eq!(attach.get_program(), "kubectl");
        let args: Vec<String> = attach
            .get_args()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        assert_eq!(args, ["--namespace", "agents", "attach", "corral-fix-x2k"]);
        assert_eq!(remote.display(), "kube:agents/corral-fix-x2k");
    }

    fn remote(destination: &str, port: Option<u16>, path: &str) -> Remote {
        Remote {
            destination: destination.into(),
            port,
            path: path.into(),
            config: None,
            connect_timeout: CONNECT_TIMEOUT,
            container: None,
            pod: None,
        }
    }

    #[test]
    fn reads_both_forms() {
        let cases = [
            (
                "ssh://dev@box:2222/srv/app",
                remote("dev@box", Some(2222), "/srv/app"),
            ),
            ("ssh://box/srv/app", remote("box", None, "/srv/app")),
            (
                "ssh://dev@[::1]:22/home/dev/p",
                remote("dev@[::1]", Some(22), "/home/dev/p"),
            ),
            (
                "ssh://[fe80::1%eth0]/p",
                remote("[fe80::1%eth0]", None, "/p"),
            ),
            ("dev@box:/srv/app", remote("dev@box", None, "/srv/app")),
            ("my-alias:/srv/app", remote("my-alias", None, "/srv/app")),
        ];
        for (name, want) in cases {
            assert_eq!(
                Remote::parse(name).map(Result::ok),
                Some(Some(want)),
                "{name}"
            );
        }
    }

    #[test]
    fn a_local_path_is_not_remote() {
        for name in ["/srv/app", "./a:b", "src/a:/b", "a:relative", ".", "C"] {
            assert_eq!(Remote::parse(name), None, "{name}");
        }
    }

    #[test]
    fn a_host_ssh_would_read_as_an_option_is_refused() {
        for name in [
            "ssh://-oProxyCommand=touch$IFS/tmp/x/p",
            "-oProxyCommand=sh:/p",
            "ssh://dev@-oProxyCommand=x/p",
            "ssh://box;rm/p",
            "ssh://box host/p",
            "ssh://box/../etc",
            "ssh://box",
            "ssh://box:0/p",
            "ssh://box:99999/p",
            "ssh://:22/p",
            "ssh://box/p\n--x",
        ] {
            let refused = Remote::parse(name).map(|r| r.map_err(|e| e.code));
            assert_eq!(refused, Some(Err(ErrorCode::InvalidInput)), "{name}");
        }
    }

    #[test]
    fn the_remote_command_is_one_quoted_line_after_the_destination() {
        let r = remote("dev@box", Some(2222), "/srv/app");
        let ssh = r.command(&[
            "corral-cli",
            "call",
            "--root",
            "/srv/my app",
            "read_file",
            "{\"path\": \"a b\"}",
        ]);
        let args: Vec<String> = ssh
            .map(|c| {
                c.get_args()
                    .map(|a| a.to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        let n = args.len();
        assert_eq!(
            &args[n - 3..],
            [
                "--",
                "dev@box",
                "corral-cli call --root '/srv/my app' read_file '{\"path\": \"a b\"}'"
            ]
        );
        assert!(args.windows(2).any(|w| w == ["-p", "2222"]));
        assert!(args.windows(2).any(|w| w == ["-o", "BatchMode=yes"]));
        assert!(args.windows(2).any(|w| w == ["-o", "ConnectTimeout=15"]));
    }
}
