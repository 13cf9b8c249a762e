//! A history that went wrong on disk says what happened where it matters:
//! a conversation asked for after its database was moved aside names the
//! file it went to; what can still be read out of that file is listed and
//! copied back; one broken entry costs that entry, not its conversation;
//! an error about the history's own files carries no tool's hint.

use crate::common::{assistant, user, P};
use corral_history::{check_file, History, Part};
use corral_protocol::ErrorCode;
use serde_json::Value;
use std::path::Path;

/// A history in `dir` with a short conversation, then a long one; their ids.
fn two_conversations(dir: &Path) -> (String, String) {
    let history = History::new(dir);
    let short = history
        .append(P, None, &user("the short one"), "m")
        .unwrap()
        .conversation;
    history
        .append(P, Some(&short), &assistant("a short answer"), "m")
        .unwrap();
    let long = history
        .append(P, None, &user("the long one"), "m")
        .unwrap()
        .conversation;
    for i in 0..150 {
        let text = format!("reply {i} {}", "y".repeat(1500));
        history
            .append(P, Some(&long), &assistant(&text), "m")
            .unwrap();
    }
    history.close();
    // The log folded into the file, as after a clean quit.
    rusqlite::Connection::open(dir.join("history.db"))
        .unwrap()
        .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
        .unwrap();
    (short, long)
}

#[test]
fn a_conversation_of_a_history_truncated_to_half_names_where_it_went_and_comes_back() {
    let dir = tempfile::tempdir().unwrap();
    let (short, long) = two_conversations(dir.path());
    let db = dir.path().join("history.db");
    let bytes = std::fs::read(&db).unwrap();
    std::fs::write(&db, &bytes[..bytes.len() / 2]).unwrap();

    let history = History::new(dir.path());
    let err = history.open_part(P, &short, Part::default()).unwrap_err();
    let aside = history.moved_aside().expect("it was moved aside");
    assert_eq!(aside.kind, "damaged");
    assert_eq!(err.code, ErrorCode::NotFound);
    let shown = aside.path.display().to_string();
    assert!(
        err.message.contains("was damaged") && err.message.contains(&shown),
        "{}",
        err.message
    );
    assert!(
        err.message.contains("a new one was started"),
        "{}",
        err.message
    );
    assert_eq!(err.details["moved_to"], shown.as_str());
    assert!(
        err.hint.contains("corral-cli history restore"),
        "{}",
        err.hint
    );
    assert!(history.take_notice().unwrap().contains(&shown));

    // What can be read: the short conversation whole, the long one in part.
    let readable = check_file(&aside.path).unwrap();
    let of = |id: &str| {
        readable
            .iter()
            .find(|r| r.id == id)
            .unwrap_or_else(|| panic!("{readable:?}"))
            .clone()
    };
    assert_eq!(of(&short).entries, 2, "{readable:?}");
    assert_eq!(of(&short).project, P);
    let long_read = readable
        .iter()
        .find(|r| r.id == long)
        .map_or(0, |r| r.entries);
    assert!(long_read < 151, "{readable:?}");
    let before = std::fs::read(&aside.path).unwrap();

    let restored = history.restore_from(&aside.path).unwrap();
    assert_eq!(
        restored.iter().find(|r| r.id == short).unwrap().entries,
        2,
        "{restored:?}"
    );
    let back = history.open(P, &short).unwrap();
    let text = serde_json::to_string(&back).unwrap();
    assert!(text.contains("a short answer"), "{text}");
    assert_eq!(back.summary.title, "the short one");
    assert_eq!(
        std::fs::read(&aside.path).unwrap(),
        before,
        "the file moved aside is never changed"
    );
    // Restored twice: nothing is copied again.
    let again = history.restore_from(&aside.path).unwrap();
    assert!(again.iter().all(|r| r.entries == 0), "{again:?}");
    assert_eq!(history.open(P, &short).unwrap().entries.len(), 2);
    assert_eq!(history.integrity_check().unwrap(), "ok");
}

#[test]
fn a_history_from_a_newer_corral_says_so_and_is_restored_whole() {
    let dir = tempfile::tempdir().unwrap();
    let (short, long) = two_conversations(dir.path());
    rusqlite::Connection::open(dir.path().join("history.db"))
        .unwrap()
        .execute_batch("PRAGMA user_version = 99;")
        .unwrap();

    let history = History::new(dir.path());
    let err = history.summary(P, &long).unwrap_err();
    assert!(
        err.message.contains("is from a newer Corral") && err.message.contains("history.newer-"),
        "{}",
        err.message
    );
    let aside = history.moved_aside().unwrap();
    let readable = check_file(&aside.path).unwrap();
    assert_eq!(readable.len(), 2, "{readable:?}");
    assert!(readable.iter().all(|r| r.damaged == 0));
    let restored = history.restore_from(&aside.path).unwrap();
    assert_eq!(restored.iter().map(|r| r.entries).sum::<usize>(), 153);
    assert_eq!(history.open(P, &long).unwrap().entries.len(), 151);
    assert_eq!(history.open(P, &short).unwrap().entries.len(), 2);
}

#[test]
fn a_later_run_is_pointed_at_the_history_moved_aside() {
    let dir = tempfile::tempdir().unwrap();
    let (short, _) = two_conversations(dir.path());
    std::fs::write(dir.path().join("history.db"), b"not a database".repeat(100)).unwrap();
    {
        let first = History::new(dir.path());
        assert!(first.list(P).unwrap().is_empty());
        first.close();
    }
    // Another process: it did not move it, and still says where it went.
    let later = History::new(dir.path());
    let err = later.open_part(P, &short, Part::default()).unwrap_err();
    assert_eq!(err.code, ErrorCode::NotFound);
    assert!(err.hint.contains("history.corrupt-"), "{}", err.hint);
    assert!(
        err.hint.contains("corral-cli history check"),
        "{}",
        err.hint
    );
}

/// A conversation of four messages (two questions, two answers) whose
/// second is stored in the database as `stored`, the history closed.
fn with_second_message_stored_as(stored: &str) -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let history = History::new(dir.path());
    let id = history
        .append(P, None, &user("first question"), "m")
        .unwrap()
        .conversation;
    history
        .append(P, Some(&id), &assistant("first answer"), "m")
        .unwrap();
    history
        .append(P, Some(&id), &user("second question"), "m")
        .unwrap();
    history
        .append(P, Some(&id), &assistant("second answer"), "m")
        .unwrap();
    history.close();
    let conn = rusqlite::Connection::open(dir.path().join("history.db")).unwrap();
    let changed = conn
        .execute(
            "UPDATE messages SET message = ?2 WHERE conversation = ?1 AND seq = 1",
            [&id, stored],
        )
        .unwrap();
    assert_eq!(changed, 1);
    (dir, id)
}

#[test]
fn a_broken_entry_costs_that_entry_not_the_conversation() {
    // The JSON of one message broken, inside an intact page.
    let (dir, id) = with_second_message_stored_as(
        "{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"first ans",
    );
    let history = History::new(dir.path());
    let opened = history.open(P, &id).unwrap();
    assert_eq!(opened.entries.len(), 4);
    let broken = &opened.entries[1];
    assert!(broken.message.is_none());
    let items: Value = serde_json::from_str(broken.items.get()).unwrap();
    let notice = items
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["kind"] == "notice")
        .unwrap();
    assert!(
        notice["text"].as_str().unwrap().contains("damaged"),
        "{notice}"
    );
    assert!(
        notice["detail"].as_str().unwrap().contains("first ans"),
        "{notice}"
    );
    // What the window showed of it is kept; the rest of the conversation too.
    assert!(items.to_string().contains("a-first answer"), "{items}");
    let text = serde_json::to_string(&opened).unwrap();
    assert!(text.contains("second answer"), "{text}");
    // And a brief or partial open too.
    let brief = history
        .open_part(
            P,
            &id,
            Part {
                elide_over: Some(10),
                last: Some(3),
                ..Part::default()
            },
        )
        .unwrap();
    assert_eq!(brief.entries.len(), 3);
}

/// A stored message that is JSON but no message (a role Corral does not
/// know) costs that message in the Markdown export, said in its place,
/// not the export.
#[test]
fn an_unreadable_message_costs_that_message_in_the_export() {
    let (dir, id) = with_second_message_stored_as("{\"role\":\"robot\",\"content\":[]}");
    let history = History::new(dir.path());
    let md = history.markdown(P, &id).unwrap();
    assert!(md.contains("first question"), "{md}");
    assert!(md.contains("second question"), "{md}");
    assert!(!md.contains("first answer"), "{md}");
    assert!(
        md.contains("could not be read from the history: unknown variant"),
        "{md}"
    );
}

#[test]
fn a_history_lock_that_is_a_folder_is_said_as_corrals_own_file() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("history.lock")).unwrap();
    let history = History::new(dir.path());
    let err = history.list(P).unwrap_err();
    assert_eq!(err.code, ErrorCode::Io, "{err:?}");
    assert!(err.message.contains("history.lock"), "{}", err.message);
    assert!(err.message.contains("is a folder"), "{}", err.message);
    assert!(!err.hint.contains("list_directory"), "{}", err.hint);
    assert!(err.hint.contains("Corral's own file"), "{}", err.hint);
}
