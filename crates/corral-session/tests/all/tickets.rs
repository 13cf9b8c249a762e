//! One call, checked once and run by its ticket: the input is parsed once
//! however many steps the call goes through; a ticket runs once, with the
//! answer given for it (one refused before anything ran waits for another
//! answer); it is judged again where its paths lead when it runs; the
//! session keeps a bounded number of them, and drops those of a
//! conversation that ended.

use corral_session::approvals::{Answer, Scope};
use corral_session::grants::Grant;
use corral_session::tickets::KEPT;
use corral_session::{Call, Consent, Fixed, Options, RunContext, Session, Settings};
use corral_tools::policy::{Decision, Mode};
use corral_tools::shell::SavedRule;
use corral_tools::tools::count_lines::parses_of;
use corral_tools::{Error, ErrorCode};
use serde_json::{json, Value};
use std::path::Path;
use std::sync::{Arc, Mutex};

fn session(mode: Mode) -> (tempfile::TempDir, Session) {
    let dir = tempfile::tempdir().unwrap();
    let settings = Arc::new(Fixed {
        mode,
        ..Fixed::default()
    });
    let session = Session::open(dir.path(), settings, Options::default()).unwrap();
    (dir, session)
}

async fn run(session: &Session, ticket: &str, consent: Consent) -> Result<Value, Error> {
    session.run(ticket, consent, RunContext::default()).await
}

#[tokio::test(flavor = "multi_thread")]
async fn an_approved_call_parses_its_input_once() {
    let (dir, session) = session(Mode::Ask);
    std::fs::create_dir(dir.path().join("once")).unwrap();
    std::fs::write(dir.path().join("once/.env"), "A=1\nB=2\n").unwrap();
    let path = "once/.env";
    // Reading a secret-like file asks in every mode.
    let ticket = session
        .check(Call::new("count_lines", json!({"path": path})))
        .unwrap();
    assert!(
        matches!(ticket.check.check.decision, Decision::Ask { .. }),
        "{ticket:?}"
    );
    assert!(ticket.check.one_at_a_time);
    let out = run(&session, &ticket.ticket, Consent::Answer(Answer::once()))
        .await
        .unwrap();
    assert_eq!(out["lines"], 2);
    assert_eq!(
        parses_of(path),
        1,
        "checked, approved, judged again and run"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_ticket_runs_once_and_only_with_its_answer() {
    let (dir, session) = session(Mode::Ask);
    std::fs::write(dir.path().join(".env"), "A=1\n").unwrap();
    let read = Call::new("count_lines", json!({"path": ".env"}));
    let ticket = session.check(read.clone()).unwrap();
    let err = run(&session, &ticket.ticket, Consent::None)
        .await
        .unwrap_err();
    assert_eq!(err.code, ErrorCode::ApprovalRequired, "{err:?}");
    // Refused before anything ran: the ticket waits for an answer.
    let out = run(&session, &ticket.ticket, Consent::Answer(Answer::once()))
        .await
        .unwrap();
    assert_eq!(out["lines"], 1);
    // Run: used, whatever comes next.
    let again = run(&session, &ticket.ticket, Consent::Answer(Answer::once()))
        .await
        .unwrap_err();
    assert_eq!(again.code, ErrorCode::InvalidInput, "{again:?}");
    assert_eq!(again.details["ticket"], ticket.ticket.as_str());
    let forged = run(&session, "forged", Consent::Answer(Answer::once())).await;
    assert_eq!(forged.unwrap_err().code, ErrorCode::InvalidInput);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_run_that_started_uses_its_ticket_even_when_it_fails() {
    let (dir, session) = session(Mode::FullAuto);
    std::fs::write(dir.path().join("a.txt"), "one\n").unwrap();
    let edit = Call::new(
        "edit_file",
        json!({"path": "a.txt", "old_string": "two", "new_string": "three"}),
    );
    let ticket = session.check(edit).unwrap();
    let err = run(&session, &ticket.ticket, Consent::None)
        .await
        .unwrap_err();
    assert_ne!(err.code, ErrorCode::InvalidInput, "{err:?}");
    let again = run(&session, &ticket.ticket, Consent::None)
        .await
        .unwrap_err();
    assert_eq!(again.details["ticket"], ticket.ticket.as_str(), "{again:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_tickets_of_an_ended_conversation_go() {
    let (dir, session) = session(Mode::Ask);
    std::fs::write(dir.path().join(".env"), "A=1\n").unwrap();
    let read = || Call::new("count_lines", json!({"path": ".env"}));
    let ended = session.check(read().in_conversation("c1")).unwrap();
    let other = session.check(read().in_conversation("c2")).unwrap();
    assert_eq!(
        session.ticket_conversation(&ended.ticket).as_deref(),
        Some("c1")
    );
    session.end_conversation("c1");
    assert_eq!(session.ticket_conversation(&ended.ticket), None);
    let err = run(&session, &ended.ticket, Consent::Answer(Answer::once()))
        .await
        .unwrap_err();
    assert_eq!(err.details["ticket"], ended.ticket.as_str(), "{err:?}");
    run(&session, &other.ticket, Consent::Answer(Answer::once()))
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_ticket_is_judged_again_where_its_path_leads_when_it_runs() {
    let (dir, session) = session(Mode::AutoEdit);
    std::fs::write(dir.path().join(".env"), "KEY=1\n").unwrap();
    let write = Call::new("write_file", json!({"path": "notes.txt", "content": "x\n"}));
    let ticket = session.check(write).unwrap();
    assert_eq!(ticket.check.check.decision, Decision::Allow);
    // Between the check and the run, notes.txt becomes a link to .env.
    std::os::unix::fs::symlink(".env", dir.path().join("notes.txt")).unwrap();
    let err = run(&session, &ticket.ticket, Consent::None)
        .await
        .unwrap_err();
    assert_eq!(err.code, ErrorCode::ApprovalRequired, "{err:?}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join(".env")).unwrap(),
        "KEY=1\n"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_conversation_answer_holds_its_grant_for_the_tickets_conversation() {
    let (dir, session) = session(Mode::Ask);
    let write = |path: &str| json!({"path": path, "content": "x\n"});
    let first = session
        .check(Call::new("write_file", write("src/a.txt")).in_conversation("c1"))
        .unwrap();
    assert!(matches!(first.check.check.decision, Decision::Ask { .. }));
    let folder = Grant::Folder {
        tool: "write_file".into(),
        folder: "src".into(),
    };
    run(
        &session,
        &first.ticket,
        Consent::Answer(Answer::conversation(folder)),
    )
    .await
    .unwrap();
    assert!(dir.path().join("src/a.txt").exists());
    assert_eq!(session.grants("c1").len(), 1);

    // The next write there runs unasked, naming the grant; elsewhere, or
    // in another conversation, it asks.
    let next = session
        .check(Call::new("write_file", write("src/b.txt")).in_conversation("c1"))
        .unwrap();
    assert_eq!(next.check.check.decision, Decision::Allow);
    assert_eq!(next.check.grant, session.grants("c1").first().cloned());
    run(&session, &next.ticket, Consent::None).await.unwrap();
    for (path, conversation) in [("b.txt", "c1"), ("src/c.txt", "c2")] {
        let other = session
            .check(Call::new("write_file", write(path)).in_conversation(conversation))
            .unwrap();
        assert!(
            matches!(other.check.check.decision, Decision::Ask { .. }),
            "{path} in {conversation}"
        );
    }

    // A call checked outside a conversation cannot hold a grant.
    let lone = session
        .check(Call::new("write_file", write("src/d.txt")))
        .unwrap();
    let file = Grant::Path {
        tool: "write_file".into(),
        path: "src/d.txt".into(),
    };
    let err = run(
        &session,
        &lone.ticket,
        Consent::Answer(Answer::conversation(file)),
    )
    .await
    .unwrap_err();
    assert_eq!(err.code, ErrorCode::InvalidInput, "{err:?}");
    assert!(!dir.path().join("src/d.txt").exists());
}

/// Settings that keep the rules saved.
#[derive(Default)]
struct Saving(Mutex<Vec<SavedRule>>);

impl Settings for Saving {
    fn mode(&self) -> Mode {
        Mode::Ask
    }
    fn shell_grants(&self, _root: &Path) -> (Vec<String>, Vec<SavedRule>) {
        (Vec::new(), self.0.lock().unwrap().clone())
    }
    fn save_rule(&self, _root: &Path, rule: SavedRule) -> Result<(), Error> {
        self.0.lock().unwrap().push(rule);
        Ok(())
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn always_saves_the_rule_the_ticket_proposes_and_nothing_else() {
    let dir = tempfile::tempdir().unwrap();
    let settings = Arc::new(Saving::default());
    let session = Session::open(dir.path(), settings.clone(), Options::default()).unwrap();
    let touch = |file: &str| Call::new("exec_shell", json!({"command": "touch", "args": [file]}));
    let ticket = session.check(touch("a.txt")).unwrap();
    assert_eq!(ticket.proposed_rule.as_deref(), Some("touch"));
    let always = |rule: &str| Answer {
        scope: Scope::Always,
        rule: Some(rule.to_string()),
        ..Answer::once()
    };
    // Another rule than the one shown is refused, and the call does not run.
    let err = run(
        &session,
        &ticket.ticket,
        Consent::Answer(always("touch a.txt")),
    )
    .await
    .unwrap_err();
    assert_eq!(err.code, ErrorCode::InvalidInput, "{err:?}");
    assert!(settings.0.lock().unwrap().is_empty());
    assert!(!dir.path().join("a.txt").exists());

    // The ticket waits for a fitting answer.
    run(&session, &ticket.ticket, Consent::Answer(always("touch")))
        .await
        .unwrap();
    assert_eq!(settings.0.lock().unwrap().len(), 1);
    let later = session.check(touch("b.txt")).unwrap();
    assert_eq!(later.check.check.decision, Decision::Allow);
    assert_eq!(later.check.check.rule.as_deref(), Some("touch"));

    // Only a command proposes a rule.
    let write = session
        .check(Call::new(
            "write_file",
            json!({"path": "w.txt", "content": ""}),
        ))
        .unwrap();
    assert_eq!(write.proposed_rule, None);
    let err = run(&session, &write.ticket, Consent::Answer(always("touch")))
        .await
        .unwrap_err();
    assert_eq!(err.code, ErrorCode::InvalidInput);
}

#[test]
fn the_session_keeps_the_newest_tickets() {
    let (_dir, session) = session(Mode::Ask);
    let read = Call::new("list_directory", json!({"path": "."}));
    let first = session.check(read.clone()).unwrap();
    let mut last = first.clone();
    for _ in 0..KEPT {
        last = session.check(read.clone()).unwrap();
    }
    let rt = tokio::runtime::Runtime::new().unwrap();
    let err = rt
        .block_on(run(&session, &first.ticket, Consent::None))
        .unwrap_err();
    assert_eq!(err.code, ErrorCode::InvalidInput);
    rt.block_on(run(&session, &last.ticket, Consent::None))
        .unwrap();
}

#[test]
fn an_input_that_does_not_parse_gets_no_ticket() {
    let (_dir, session) = session(Mode::Ask);
    let err = session
        .check(Call::new("count_lines", json!({"path": 3})))
        .unwrap_err();
    assert_eq!(err.code, ErrorCode::InvalidInput);
    let err = session
        .check(Call::new("no_such_tool", json!({})))
        .unwrap_err();
    assert_eq!(err.code, ErrorCode::InvalidInput);
}

#[test]
fn a_ticket_says_where_each_path_leads_as_the_tool_resolves_it() {
    let (dir, session) = session(Mode::Ask);
    std::fs::create_dir(dir.path().join("src")).unwrap();
    let root = session.root().path().display().to_string();
    let leads = |path: &str| {
        let ticket = session
            .check(Call::new("read_file", json!({ "path": path })))
            .map_err(|e| e.code);
        ticket.map(|t| serde_json::to_value(&t.paths).unwrap())
    };
    for (typed, inside) in [
        ("src/a.rs", "src/a.rs"),
        ("./src/../b.txt", "b.txt"),
        ("src\\x\\..\\a.rs", "src/a.rs"),
        ("src//./a.rs", "src/a.rs"),
        (&format!("{root}/src/a.rs"), "src/a.rs"),
        (&root, "."),
    ] {
        assert_eq!(
            leads(typed),
            Ok(json!([{"typed": typed, "inside": inside}])),
            "{typed}"
        );
    }
    // A path that leads outside gets no ticket: the tool's refusal is the answer.
    assert_eq!(leads("../x").unwrap_err(), ErrorCode::PathOutsideRoot);
    // A command names no path of a file tool's.
    let ticket = session
        .check(Call::new("exec_shell", json!({"command": "ls"})))
        .unwrap();
    let sent = serde_json::to_value(&ticket).unwrap();
    assert!(sent.get("paths").is_none(), "{sent}");
}

/// An edit whose text is not in the file (or is there twice), or of a
/// file that is not there, fails when it is checked, with its own error:
/// the user is never asked to approve a call that could only fail. One
/// that applies still asks.
#[tokio::test(flavor = "multi_thread")]
async fn an_edit_that_cannot_apply_fails_at_check_without_asking() {
    let (dir, session) = session(Mode::Ask);
    std::fs::write(dir.path().join("a.txt"), "one\ntwo\ntwo\n").unwrap();
    for (input, code) in [
        (
            json!({"path": "a.txt", "old_string": "three", "new_string": "3"}),
            ErrorCode::NoMatch,
        ),
        (
            json!({"path": "a.txt", "old_string": "two", "new_string": "2"}),
            ErrorCode::AmbiguousMatch,
        ),
        (
            json!({"path": "b.txt", "old_string": "one", "new_string": "1"}),
            ErrorCode::NotFound,
        ),
    ] {
        let e = session
            .check(Call::new("edit_file", input.clone()))
            .unwrap_err();
        assert_eq!(e.code, code, "{input}: {}", e.message);
    }
    let ticket = session
        .check(Call::new(
            "edit_file",
            json!({"path": "a.txt", "old_string": "one", "new_string": "1"}),
        ))
        .unwrap();
    assert!(
        matches!(ticket.check.check.decision, Decision::Ask { .. }),
        "{ticket:?}"
    );
    assert!(ticket.check.check.preview.is_some());
}
