//! The project's custom commands through `corral-cli exec`: the task
//! `/name args` is sent to the model as the command file's text with the
//! arguments put in, as in the window (the same loop runs in both).

use crate::common::{Home, Scripted};
use serde_json::json;

#[test]
fn a_projects_slash_command_is_sent_with_its_arguments_put_in() {
    let server = Scripted::start(json!([{ "text": "Fixed." }]));
    let home = Home::new(&server.base_url());
    let commands = home.project().join(".claude/commands/tracker");
    std::fs::create_dir_all(&commands).unwrap();
    std::fs::write(
        commands.join("fix-bug.md"),
        "---\ndescription: Fix a bug from the tracker\n---\nFix bug #$1 (priority $2) with a test.\n",
    )
    .unwrap();
    let run = home.exec(&["/tracker:fix-bug 123 high"]);
    let requests = server.finish();
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stdout, "Fixed.\n");
    let sent = requests[0]["messages"].to_string();
    assert!(
        sent.contains("Fix bug #123 (priority high) with a test."),
        "{sent}"
    );
    assert!(!sent.contains("/tracker:fix-bug"), "{sent}");
}

#[test]
fn a_built_in_of_the_window_is_refused_by_exec_with_why_and_never_sent() {
    let server = Scripted::start(json!([]));
    let home = Home::new(&server.base_url());
    let run = home.exec(&["/new"]);
    let requests = server.finish();
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("`/new` is one of Corral's own commands and does not run here"),
        "{}",
        run.stderr
    );
    assert!(requests.is_empty(), "{requests:?}");
}
