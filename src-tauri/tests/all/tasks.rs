//! A project's tasks through the window's commands: a task's loop names it
//! in the table's commands, which then run in its session, rooted at its
//! worktree; a task cannot reach the project's folder or another task's
//! worktree, by a file tool or by a command; its conversations are its
//! own; and tasks are reviewed, merged (a conflict settled by choosing a
//! side) and discarded.

use crate::window::{app_on, tool_args};
use corral_testkit::task_image::{running, TaskImage};
use corral_testkit::Project;
use serde_json::{json, Value};

/// `call_tool`'s arguments in the task `task`.
fn in_task(task: &str, name: &str, flat: Value) -> Value {
    let mut args = tool_args(name, flat);
    args["task"] = json!(task);
    args
}

#[test]
fn a_task_works_in_its_worktree_and_reaches_nothing_else() {
    let app = app_on(Project::new().file("a.txt", "one\n").git());
    app.open_in_full_auto();
    let one = app.invoke("task_new", json!({"name": "One"})).unwrap();
    let two = app.invoke("task_new", json!({"name": "two"})).unwrap();
    assert_eq!(
        (one["name"].as_str(), one["branch"].as_str()),
        (Some("one"), Some("corral/one"))
    );
    let (one_dir, two_dir) = (
        std::path::PathBuf::from(one["path"].as_str().unwrap()),
        std::path::PathBuf::from(two["path"].as_str().unwrap()),
    );
    assert!(
        !one_dir.starts_with(&app.project),
        "a worktree inside the project"
    );

    // A file tool writes in the task's worktree only.
    app.invoke(
        "call_tool",
        in_task(
            "one",
            "write_file",
            json!({"path": "b.txt", "content": "from one\n"}),
        ),
    )
    .unwrap();
    assert_eq!(
        std::fs::read_to_string(one_dir.join("b.txt")).unwrap(),
        "from one\n"
    );
    assert!(!app.project.join("b.txt").exists());
    assert!(!two_dir.join("b.txt").exists());
    for outside in [app.project.join("c.txt"), two_dir.join("c.txt")] {
        let e = app
            .invoke(
                "call_tool",
                in_task(
                    "one",
                    "write_file",
                    json!({"path": outside, "content": "x"}),
                ),
            )
            .unwrap_err();
        assert_eq!(e["code"], "path_outside_root", "{e}");
        assert!(!outside.exists());
    }

    // A command runs in the worktree, and the fence holds it there: code
    // that writes the project's folder or the other task's fails.
    let listed = app
        .invoke(
            "call_tool",
            in_task("one", "exec_shell", json!({"command": "ls"})),
        )
        .unwrap();
    assert!(
        listed["stdout"].as_str().unwrap().contains("b.txt"),
        "{listed}"
    );
    if corral_testkit::fenced(&["/usr/bin/node"]) {
        let write = |target: &std::path::Path| {
            let code = format!(
                "require('fs').writeFileSync({:?}, 'x')",
                target.display().to_string()
            );
            app.invoke(
                "call_tool",
                in_task(
                    "one",
                    "exec_shell",
                    json!({"command": "node", "args": ["-e", code]}),
                ),
            )
        };
        // It runs: a write in its own worktree lands.
        write(&one_dir.join("inside.txt")).unwrap();
        assert!(one_dir.join("inside.txt").exists());
        for target in [app.project.join("escape.txt"), two_dir.join("escape.txt")] {
            let _ = write(&target);
            assert!(
                !target.exists(),
                "a task's command wrote {}",
                target.display()
            );
        }
    }

    // Its conversations are its own: the project's list does not hold them.
    let appended = app
        .invoke(
            "append_entry",
            json!({"task": "one", "entry": {"kind": "user", "id": "u1", "text": "in the task"}}),
        )
        .unwrap();
    let listed = app.invoke("list_conversations", json!({})).unwrap();
    assert_eq!(
        listed,
        json!([]),
        "the task's conversation is in the project's list"
    );
    let tasks = app.invoke("task_list", json!({})).unwrap();
    assert!(tasks["at_once"].as_u64().unwrap() >= 1);
    let first = &tasks["tasks"][0];
    assert_eq!(first["name"], "one");
    assert_eq!(first["conversation"], appended["conversation"]);
    assert!(first["size"]["files"].as_u64().unwrap() >= 1, "{first}");

    // A name that is no task is not found, and nothing runs.
    let e = app
        .invoke(
            "call_tool",
            in_task("nope", "write_file", json!({"path": "x", "content": "x"})),
        )
        .unwrap_err();
    assert_eq!(e["code"], "not_found", "{e}");
}

#[test]
fn tasks_are_reviewed_merged_with_a_side_chosen_and_discarded() {
    let app = app_on(Project::new().file("a.txt", "one\n").git());
    app.open_in_full_auto();
    for (name, text) in [("first", "first's line\n"), ("second", "second's line\n")] {
        app.invoke("task_new", json!({"name": name})).unwrap();
        app.invoke(
            "call_tool",
            in_task(
                name,
                "write_file",
                json!({"path": "a.txt", "content": text}),
            ),
        )
        .unwrap();
    }
    let diff = app.invoke("task_diff", json!({"task": "first"})).unwrap();
    assert_eq!(diff["files"][0]["path"], "a.txt");
    assert_eq!(diff["files"][0]["before"], "one\n");
    assert_eq!(diff["files"][0]["after"], "first's line\n");

    app.invoke("task_merge", json!({"task": "first"})).unwrap();
    let e = app
        .invoke("task_merge", json!({"task": "second"}))
        .unwrap_err();
    assert_eq!(e["details"]["files"], json!(["a.txt"]), "{e}");
    assert_eq!(app.kit.read("a.txt").as_deref(), Some("first's line\n"));
    app.invoke("task_merge", json!({"task": "second", "prefer": "task"}))
        .unwrap();
    assert_eq!(app.kit.read("a.txt").as_deref(), Some("second's line\n"));

    // Merged, both are done: their worktrees and branches went.
    let left = app.invoke("task_list", json!({})).unwrap();
    assert_eq!(left["tasks"], json!([]), "{left}");

    // A third, with a change not merged, goes only with force.
    app.invoke("task_new", json!({"name": "third"})).unwrap();
    app.invoke(
        "call_tool",
        in_task(
            "third",
            "write_file",
            json!({"path": "c.txt", "content": "c"}),
        ),
    )
    .unwrap();
    let kept = app
        .invoke("task_discard", json!({"task": "third", "force": false}))
        .unwrap_err();
    assert_eq!(kept["code"], "invalid_input", "{kept}");
    app.invoke("task_discard", json!({"task": "third", "force": true}))
        .unwrap();
    let left = app.invoke("task_list", json!({})).unwrap();
    assert_eq!(left["tasks"], json!([]), "{left}");
    // Its session is gone with it: a call in it is not found.
    let e = app
        .invoke(
            "call_tool",
            in_task("third", "read_file", json!({"path": "c.txt"})),
        )
        .unwrap_err();
    assert_eq!(e["code"], "not_found", "{e}");
}

/// A task whose place is a container: its session is serve's in a
/// container of Settings' engine and image, the worktree its only
/// writable mount; the list says where it runs; stopped, its container
/// ends and the next call starts a new one; after the app starts again it
/// goes on in a new container; discarded, its container ends.
#[test]
fn a_task_runs_in_a_container_of_the_settings_engine() {
    let exe = std::env::current_exe().unwrap();
    let cli = exe.parent().unwrap().parent().unwrap().join("corral-cli");
    let image = TaskImage::build(&cli, "app-test");
    let app = app_on(Project::new().file("a.txt", "one\n").git());
    app.open();
    // No container set: refused, nothing made.
    let e = app
        .invoke("task_new", json!({"name": "boxed", "place": "container"}))
        .unwrap_err();
    assert!(
        e["message"].as_str().unwrap().contains("no container"),
        "{e}"
    );
    assert_eq!(
        app.invoke("task_list", json!({})).unwrap()["tasks"],
        json!([])
    );
    app.invoke(
        "save_settings",
        json!({"settings": {"provider": "anthropic", "base_url": "", "model": "m",
        "max_tokens": 100, "mode": "full_auto", "task_container": {
            "engine": "podman", "image": image.0, "memory_mib": 1024,
            "options": ["--ulimit=nofile=20000:20000", "--ulimit=nproc=4096:4096"]}}}),
    )
    .unwrap();
    let made = app
        .invoke("task_new", json!({"name": "boxed", "place": "container"}))
        .unwrap();
    let place = std::path::PathBuf::from(made["path"].as_str().unwrap());
    let listed = app.invoke("task_list", json!({})).unwrap();
    let shown = listed["tasks"][0]["place"].as_str().unwrap().to_string();
    assert!(shown.starts_with("podman corral-boxed-"), "{listed}");
    assert_eq!(running("corral-boxed-").len(), 1);

    app.invoke(
        "call_tool",
        in_task(
            "boxed",
            "write_file",
            json!({"path": "b.txt", "content": "boxed\n"}),
        ),
    )
    .unwrap();
    assert_eq!(
        std::fs::read_to_string(place.join("b.txt")).unwrap(),
        "boxed\n"
    );
    assert!(!app.project.join("b.txt").exists());
    // A command runs inside the container, in the worktree.
    let listed = app
        .invoke(
            "call_tool",
            in_task("boxed", "exec_shell", json!({"command": "ls"})),
        )
        .unwrap();
    assert!(
        listed["stdout"].as_str().unwrap().contains("b.txt"),
        "{listed}"
    );
    assert_eq!(listed["sandbox"], "landlock", "{listed}");

    // The repository's folder is there for git, but nothing that runs
    // later can be planted in it: its config and hooks are read-only in
    // the container, whatever runs there; a commit's parts are writable.
    let git = app.project.join(".git").display().to_string();
    let inside = |script: &str| {
        std::process::Command::new("podman")
            .args(["exec", &shown["podman ".len()..], "sh", "-c", script])
            .status()
            .unwrap()
            .success()
    };
    assert!(!inside(&format!(
        "echo '[core] fsmonitor = evil' >> {git}/config"
    )));
    assert!(!inside(&format!("touch {git}/hooks/pre-commit")));
    assert!(inside(&format!(
        "touch {git}/objects/probe && rm {git}/objects/probe"
    )));
    assert!(!std::fs::read_to_string(app.project.join(".git/config"))
        .unwrap()
        .contains("evil"));
    assert!(!app.project.join(".git/hooks/pre-commit").exists());

    // Stop kills the container; the task goes on in a new one, on the
    // same worktree, with what it wrote.
    app.invoke("task_stop", json!({"task": "boxed"})).unwrap();
    corral_testkit::wait_until(20, "the stopped task's container to end", || {
        running("corral-boxed-").is_empty()
    });
    let read = app
        .invoke(
            "call_tool",
            in_task("boxed", "read_file", json!({"path": "b.txt"})),
        )
        .unwrap();
    assert!(
        read["content"].as_str().unwrap().contains("boxed"),
        "{read}"
    );
    assert_eq!(running("corral-boxed-").len(), 1);

    // The app closes and starts again: the task goes on in a container,
    // a new one, not here.
    let app = app.restart();
    corral_testkit::wait_until(20, "the closed app's container to end", || {
        running("corral-boxed-").is_empty()
    });
    app.open();
    // Until a new container runs for it, the task runs nowhere: never
    // here instead.
    let e = app
        .invoke(
            "call_tool",
            in_task("boxed", "exec_shell", json!({"command": "ls"})),
        )
        .unwrap_err();
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .contains("runs in a container"),
        "{e}"
    );
    let listed = app.invoke("task_list", json!({})).unwrap();
    let again = listed["tasks"][0]["place"]
        .as_str()
        .unwrap_or("")
        .to_string();
    assert!(
        again.starts_with("podman corral-boxed-") && again != shown,
        "{listed}"
    );
    let read = app
        .invoke(
            "call_tool",
            in_task("boxed", "exec_shell", json!({"command": "ls"})),
        )
        .unwrap();
    assert_eq!(
        read["sandbox"], "landlock",
        "ran here, not in a container: {read}"
    );

    app.invoke("task_discard", json!({"task": "boxed", "force": true}))
        .unwrap();
    corral_testkit::wait_until(20, "the task's container to end", || {
        running("corral-boxed-").is_empty()
    });
    assert!(!place.exists());
}

/// A task in Kubernetes that cannot start (here, a kubeconfig context
/// that is not there, or no kubectl at all) fails at `task_new` with
/// kubectl's words and a hint, and leaves no task and nothing in any
/// cluster behind.
#[test]
fn a_task_in_kubernetes_that_cannot_start_leaves_nothing() {
    let app = app_on(Project::new().file("a.txt", "one\n").git());
    app.open();
    let settings = |kube: Value| {
        json!({"settings": {"provider": "anthropic", "base_url": "", "model": "m",
        "max_tokens": 100, "mode": "full_auto", "task_container": {
            "engine": "kubernetes", "image": "registry.invalid/corral-task:1",
            "options": [], "kube": kube}}})
    };
    // No namespace: refused before anything is made.
    app.invoke("save_settings", settings(json!({"namespace": ""})))
        .unwrap();
    let e = app
        .invoke("task_new", json!({"name": "podded", "place": "container"}))
        .unwrap_err();
    assert_eq!(e["code"], "invalid_input", "{e}");
    assert!(e["message"].as_str().unwrap().contains("namespace"), "{e}");
    assert_eq!(
        app.invoke("task_list", json!({})).unwrap()["tasks"],
        json!([])
    );
    app.invoke(
        "save_settings",
        settings(json!({"namespace": "agents", "context": "corral-test-no-such-context"})),
    )
    .unwrap();
    let e = app
        .invoke("task_new", json!({"name": "podded", "place": "container"}))
        .unwrap_err();
    assert_eq!(e["code"], "io", "{e}");
    assert!(e.to_string().contains("kubectl"), "{e}");
    assert!(!e["hint"].as_str().unwrap_or("").is_empty(), "{e}");
    assert_eq!(
        app.invoke("task_list", json!({})).unwrap()["tasks"],
        json!([])
    );
}
