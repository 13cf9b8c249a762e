//! Tasks in containers, with a real engine (Podman, as `scripts/setup.sh
//! --test` installs it): `corral-cli exec --worktree NAME --container IMAGE`
//! makes the task's worktree here and runs its session (`corral-cli serve`)
//! in a container made from Corral's image (`scripts/image.sh`, this
//! build's corral-cli), the worktree its only writable mount; the loop and
//! the model stay here. Two tasks run at once, each against a scripted
//! model of its own; one container is killed in the middle of a command.

use crate::common::{Home, Scripted};
use crate::ssh::Sshd;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

#[path = "../../../corral-testkit/src/task_image.rs"]
mod kit;
use kit::{running as containers, TaskImage};

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["-c", "user.name=t", "-c", "user.email=t@t"])
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(90);
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The text of every tool result a request carried.
fn results(request: &Value) -> String {
    request["messages"]
        .as_array()
        .map(|messages| {
            messages
                .iter()
                .filter(|m| m["role"] == "tool")
                .map(|m| m["content"].to_string())
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn two_tasks_run_in_containers_and_a_killed_one_keeps_its_branch() {
    let image = TaskImage::build(Path::new(env!("CARGO_BIN_EXE_corral-cli")), "test");
    let one = Scripted::start(json!([
        { "tools": [{ "name": "write_file", "input": { "path": "one.txt", "content": "from one\n" } }] },
        { "tools": [{ "name": "exec_shell", "input": { "command": "ls" } }] },
        { "text": "One done." },
    ]));
    let makefile = "all:\n\techo started > started.txt\n\tsleep 120\n";
    let two = Scripted::start(json!([
        { "tools": [
            { "name": "write_file", "input": { "path": "two.txt", "content": "from two\n" } },
            { "name": "write_file", "input": { "path": "Makefile", "content": makefile } },
        ] },
        { "tools": [{ "name": "exec_shell", "input": { "command": "make" } }] },
        { "text": "Two stopped." },
    ]));
    let home = Home::new(&one.base_url());
    let project = home.project();
    std::fs::write(project.join(".gitignore"), "").unwrap();
    git(&project, &["init", "--quiet"]);
    git(&project, &["add", "."]);
    git(&project, &["commit", "--quiet", "-m", "first"]);
    let worktrees = home.dir.path().join("data/dev.corral.desktop/worktrees");
    let task = |url: String, name: &'static str| {
        let image = image.0.clone();
        let home = &home;
        move || {
            // Two processes cannot both write the one history: the
            // conversations are left out of it.
            home.exec(&[
                "--ephemeral",
                "--mode",
                "full_auto",
                "--base-url",
                &url,
                "--worktree",
                name,
                "--container",
                &image,
                // Under this machine's hard limits (its engine would
                // otherwise ask for more and fail to start the container).
                "--engine-option=--ulimit=nofile=20000:20000",
                "--engine-option=--ulimit=nproc=4096:4096",
                &format!("Task {name}: write your file and run your command."),
            ])
        }
    };
    let (ran_one, ran_two) = std::thread::scope(|scope| {
        let ran_one = scope.spawn(task(one.base_url(), "one"));
        let ran_two = scope.spawn(task(two.base_url(), "two"));
        // Two's command has started in its container: kill the container.
        let started = || find(&worktrees, "two", "started.txt");
        wait_for("task two's command to start", || {
            if ran_two.is_finished() {
                return true;
            }
            started().is_some()
        });
        if ran_two.is_finished() {
            let two = ran_two.join().unwrap();
            panic!(
                "task two ended before its command started: {}\n{}",
                two.stdout, two.stderr
            );
        }
        let named = containers("corral-two-");
        assert_eq!(named.len(), 1, "{named:?}");
        let killed = Command::new("podman")
            .args(["kill", &named[0]])
            .output()
            .unwrap();
        assert!(killed.status.success());
        (ran_one.join().unwrap(), ran_two.join().unwrap())
    });
    assert_eq!(ran_one.code, 0, "{}", ran_one.stderr);
    assert!(ran_one.stdout.contains("One done."), "{}", ran_one.stdout);
    assert!(
        ran_one.stderr.contains("in container corral-one-"),
        "{}",
        ran_one.stderr
    );
    // The killed command's result says the connection was lost.
    let asked = two.finish();
    let last = results(asked.last().unwrap());
    assert!(last.contains("interrupted"), "{last}");
    assert!(
        ran_two.stdout.contains("Two stopped."),
        "{}",
        ran_two.stdout
    );
    let asked = one.finish();
    assert!(results(&asked[2]).contains("one.txt"), "ls ran elsewhere");

    // Both come back as branches: what each wrote is in its worktree, the
    // killed one's up to its last step, and the project is as it was.
    let one_dir = find(&worktrees, "one", "one.txt").unwrap();
    let two_dir = find(&worktrees, "two", "two.txt").unwrap();
    assert!(two_dir.join("started.txt").exists());
    assert!(!project.join("one.txt").exists() && !project.join("two.txt").exists());
    let cli = |args: &[&str]| {
        let out = crate::common::corral_cli()
            .env("XDG_DATA_HOME", home.dir.path().join("data"))
            .args(["task"])
            .args(args)
            .arg("--root")
            .arg(&project)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "task {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    cli(&["merge", "one"]);
    cli(&["merge", "two"]);
    assert_eq!(
        std::fs::read_to_string(project.join("one.txt")).unwrap(),
        "from one\n"
    );
    assert_eq!(
        std::fs::read_to_string(project.join("two.txt")).unwrap(),
        "from two\n"
    );
    assert!(!one_dir.exists() && !two_dir.exists());
    assert!(containers("corral-one-").is_empty() && containers("corral-two-").is_empty());
}

/// The same through ssh: the project is on an ssh host (the test's sshd
/// on 127.0.0.1) whose Podman runs the containers. serve there makes each
/// worktree in the remote's data folder; the containers there hold the
/// tasks' sessions; the loop and the models stay here. Two tasks at once,
/// one container killed in the middle of a command, both merged back.
#[test]
fn two_tasks_run_in_containers_on_an_ssh_host_and_a_killed_one_keeps_its_branch() {
    let image = TaskImage::build(Path::new(env!("CARGO_BIN_EXE_corral-cli")), "test");
    let sshd = Sshd::start();
    let near = Scripted::start(json!([
        { "tools": [{ "name": "write_file", "input": { "path": "near.txt", "content": "from near\n" } }] },
        { "tools": [{ "name": "exec_shell", "input": { "command": "ls" } }] },
        { "text": "Near done." },
    ]));
    let makefile = "all:\n\techo started > started.txt\n\tsleep 120\n";
    let far = Scripted::start(json!([
        { "tools": [
            { "name": "write_file", "input": { "path": "far.txt", "content": "from far\n" } },
            { "name": "write_file", "input": { "path": "Makefile", "content": makefile } },
        ] },
        { "tools": [{ "name": "exec_shell", "input": { "command": "make" } }] },
        { "text": "Far stopped." },
    ]));
    let home = Home::new(&near.base_url());
    let there = tempfile::tempdir().unwrap();
    std::fs::write(there.path().join("a.txt"), "one\n").unwrap();
    git(there.path(), &["init", "--quiet"]);
    git(there.path(), &["add", "."]);
    git(there.path(), &["commit", "--quiet", "-m", "first"]);
    let root = format!("ssh://corral-test{}", there.path().display());
    let cli = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_corral-cli"))
            .env("HOME", home.dir.path())
            .env("XDG_CONFIG_HOME", home.dir.path().join("config"))
            .env("XDG_DATA_HOME", home.dir.path().join("data"))
            .env("CORRAL_NO_KEYCHAIN", "1")
            .env(corral_remote::CONFIG_VAR, sshd.path("ssh_config"))
            .args(args)
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap()
    };
    // corral-cli is copied there once, before the two tasks start.
    let first = cli(&[
        "call",
        "--root",
        &root,
        "--install-remote",
        "read_file",
        r#"{"path":"a.txt"}"#,
    ]);
    assert!(
        first.status.success(),
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );
    let task = |url: String, name: &'static str| {
        let image = image.0.clone();
        let (root, cli) = (&root, &cli);
        move || {
            cli(&[
                "exec",
                "--root",
                root,
                "--mode",
                "full_auto",
                "--ephemeral",
                "--no-lsp",
                "--base-url",
                &url,
                "--worktree",
                name,
                "--container",
                &image,
                "--engine-option=--ulimit=nofile=20000:20000",
                "--engine-option=--ulimit=nproc=4096:4096",
                &format!("Task {name}: write your file and run your command."),
            ])
        }
    };
    let worktrees = sshd.path("remote-data/dev.corral.desktop/worktrees");
    let (ran_near, ran_far) = std::thread::scope(|scope| {
        let ran_near = scope.spawn(task(near.base_url(), "near"));
        let ran_far = scope.spawn(task(far.base_url(), "far"));
        wait_for("task far's command to start", || {
            ran_far.is_finished() || find(&worktrees, "far", "started.txt").is_some()
        });
        assert!(
            !ran_far.is_finished(),
            "task far ended before its command started"
        );
        let named = containers("corral-far-");
        assert_eq!(named.len(), 1, "{named:?}");
        let killed = Command::new("podman")
            .args(["kill", &named[0]])
            .output()
            .unwrap();
        assert!(killed.status.success());
        (ran_near.join().unwrap(), ran_far.join().unwrap())
    });
    let said = |out: &std::process::Output| {
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    };
    assert!(ran_near.status.success(), "{}", said(&ran_near));
    assert!(
        said(&ran_near).contains("on corral-test on branch corral/near in container"),
        "{}",
        said(&ran_near)
    );
    assert!(
        results(&near.finish()[2]).contains("near.txt"),
        "ls ran elsewhere"
    );
    let asked = far.finish();
    assert!(
        results(asked.last().unwrap()).contains("interrupted"),
        "{}",
        said(&ran_far)
    );

    // Both come back as branches there, the killed one up to its last step.
    let near_dir = find(&worktrees, "near", "near.txt").expect("near's worktree there");
    let far_dir = find(&worktrees, "far", "far.txt").expect("far's worktree there");
    assert!(far_dir.join("started.txt").exists());
    assert!(!there.path().join("near.txt").exists() && !there.path().join("far.txt").exists());
    for name in ["near", "far"] {
        let merged = crate::common::corral_cli()
            .args(["task", "merge", name, "--root"])
            .arg(there.path())
            .output()
            .unwrap();
        assert!(
            merged.status.success(),
            "{}",
            String::from_utf8_lossy(&merged.stderr)
        );
    }
    assert_eq!(
        std::fs::read_to_string(there.path().join("near.txt")).unwrap(),
        "from near\n"
    );
    assert_eq!(
        std::fs::read_to_string(there.path().join("far.txt")).unwrap(),
        "from far\n"
    );
    assert!(!near_dir.exists() && !far_dir.exists());
    assert!(containers("corral-near-").is_empty() && containers("corral-far-").is_empty());
}

/// The worktree of task `name` under `worktrees`, once it holds `file`.
fn find(worktrees: &Path, name: &str, file: &str) -> Option<PathBuf> {
    let projects = std::fs::read_dir(worktrees).ok()?;
    projects
        .filter_map(Result::ok)
        .map(|p| p.path().join(name))
        .find(|dir| dir.join(file).exists())
}

/// The project's own toolchain: its devcontainer builds an image (here
/// FROM Corral's, with a file of the toolchain's own), exec adds this
/// corral-cli to it, and the task's command runs there and sees the
/// toolchain. A second task reuses the image without building the layer
/// again.
#[test]
fn a_task_runs_in_the_project_s_devcontainer_toolchain() {
    let image = TaskImage::build(Path::new(env!("CARGO_BIN_EXE_corral-cli")), "toolchain");
    let llm = Scripted::start(json!([
        { "tools": [{ "name": "exec_shell", "input": { "command": "make", "args": ["check"] } }] },
        { "text": "Checked." },
        { "tools": [{ "name": "exec_shell", "input": { "command": "make", "args": ["check"] } }] },
        { "text": "Checked again." },
    ]));
    let home = Home::new(&llm.base_url());
    let project = home.project();
    std::fs::create_dir_all(project.join(".devcontainer")).unwrap();
    std::fs::write(
        project.join(".devcontainer/devcontainer.json"),
        "// the team's toolchain\n{ \"build\": { \"dockerfile\": \"Dockerfile\" }, }\n",
    )
    .unwrap();
    std::fs::write(
        project.join(".devcontainer/Dockerfile"),
        format!(
            "FROM {}\nRUN echo from-the-toolchain > /etc/toolchain-marker\n",
            image.0
        ),
    )
    .unwrap();
    std::fs::write(
        project.join("Makefile"),
        "check:\n\tcat /etc/toolchain-marker\n",
    )
    .unwrap();
    git(&project, &["init", "--quiet"]);
    git(&project, &["add", "."]);
    git(&project, &["commit", "--quiet", "-m", "first"]);
    let run = |name: &str| {
        home.exec(&[
            "--ephemeral",
            "--mode",
            "full_auto",
            "--worktree",
            name,
            "--toolchain",
            "devcontainer",
            "--engine-option=--ulimit=nofile=20000:20000",
            "--engine-option=--ulimit=nproc=4096:4096",
            "Check the toolchain.",
        ])
    };
    let first = run("first");
    assert_eq!(first.code, 0, "{}", first.stderr);
    let built = first
        .stderr
        .lines()
        .find_map(|l| l.strip_prefix("corral: the task's image is "))
        .unwrap_or_else(|| panic!("no image named: {}", first.stderr))
        .to_string();
    let second = run("second");
    assert_eq!(second.code, 0, "{}", second.stderr);
    assert!(
        second
            .stderr
            .contains(&format!("the task's image is {built}")),
        "{}",
        second.stderr
    );
    let asked = llm.finish();
    for request in [&asked[1], &asked[3]] {
        assert!(
            results(request).contains("from-the-toolchain"),
            "{}",
            results(request)
        );
    }
    assert!(containers("corral-first-").is_empty() && containers("corral-second-").is_empty());
}
