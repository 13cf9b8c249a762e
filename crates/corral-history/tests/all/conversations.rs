//! The conversation history on real temp folders and real SQLite files:
//! append, list, open, search, fork, rename, the chosen model, delete and
//! undo, and the Markdown export.

use crate::common::{assistant, begun, results, texts, tool_call, user, P};
use corral_history::{History, NewEntry};
use corral_llm::{Block, Message, Role};
use serde_json::{json, Value};

/// A new conversation may take the id its host chose (an ACP session's);
/// an id already taken is never joined: the next new one gets its own.
#[test]
fn a_new_conversation_takes_a_chosen_id_once() {
    let dir = tempfile::tempdir().unwrap();
    let history = History::new(dir.path());
    let made = history
        .append_new_as(P, None, Some("session-1"), &user("Hello"), "m")
        .unwrap();
    assert_eq!(made.conversation, "session-1");
    let again = history
        .append_new_as(
            P,
            Some("session-1"),
            Some("session-1"),
            &assistant("Hi."),
            "m",
        )
        .unwrap();
    assert_eq!((again.conversation.as_str(), again.seq), ("session-1", 1));
    let other = history
        .append_new_as("/q/other", None, Some("session-1"), &user("x"), "m")
        .unwrap();
    assert_ne!(other.conversation, "session-1");
    assert_eq!(texts(&history, "session-1"), vec!["Hello", "Hi."]);
}

#[test]
fn appends_lists_newest_first_and_opens_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let history = History::new(dir.path());
    let first = history
        .append(P, None, &user("Fix the build\nplease"), "m")
        .unwrap();
    assert_eq!(first.seq, 0);
    let c1 = first.conversation;
    assert_eq!(
        history
            .append(P, Some(&c1), &assistant("Done."), "model-a")
            .unwrap()
            .seq,
        1
    );
    std::thread::sleep(std::time::Duration::from_millis(5));
    let c2 = history
        .append(P, None, &user("Second one"), "m")
        .unwrap()
        .conversation;
    // Another project's conversations are not listed.
    history
        .append("/q/other", None, &user("elsewhere"), "m")
        .unwrap();

    let list = history.list(P).unwrap();
    assert_eq!(
        list.iter().map(|c| c.id.as_str()).collect::<Vec<_>>(),
        vec![c2.as_str(), c1.as_str()]
    );
    let one = &list[1];
    assert_eq!(one.title, "Fix the build");
    assert_eq!(one.first_line, "Fix the build");
    assert_eq!(one.model, "model-a");
    assert_eq!(
        (one.input_tokens, one.output_tokens, one.entries),
        (100, 10, 2)
    );

    assert_eq!(texts(&history, &c1), vec!["Fix the build\nplease", "Done."]);
    let opened = history.open(P, &c1).unwrap();
    let items: Value = serde_json::from_str(opened.entries[0].items.get()).unwrap();
    assert_eq!(items[0]["id"], "u-Fix the build\nplease");

    // Appending to another project's conversation, or one that does not exist, fails.
    let err = history
        .append("/q/other", Some(&c1), &user("x"), "m")
        .unwrap_err();
    assert_eq!(err.code, corral_protocol::ErrorCode::NotFound);
    assert!(history.open("/q/other", &c1).is_err());
    assert_eq!(history.integrity_check().unwrap(), "ok");
}

#[test]
fn rename_keeps_the_order_and_the_first_line() {
    let (_dir, history, c) = begun("Long question here");
    let renamed = history.rename(P, &c, "  Short name \n").unwrap();
    assert_eq!(renamed.title, "Short name");
    assert_eq!(renamed.first_line, "Long question here");
    // A later user message does not take the title back.
    history.append(P, Some(&c), &user("more"), "m").unwrap();
    assert_eq!(history.list(P).unwrap()[0].title, "Short name");
}

#[test]
fn search_finds_words_and_tool_paths_with_a_snippet() {
    let (_dir, history, old) = begun("Why is the zeppelin test flaky?");
    history
        .append(
            P,
            Some(&old),
            &tool_call("t1", "read_file", json!({"path": "tests/airship_spec.rs"})),
            "m",
        )
        .unwrap();
    let new = history
        .append(P, None, &user("Rename the config loader"), "m")
        .unwrap()
        .conversation;
    history
        .append("/q/other", None, &user("zeppelin elsewhere"), "m")
        .unwrap();

    let hits = history.search(P, "zeppelin", 50).unwrap();
    assert_eq!(hits.len(), 1, "{hits:?}");
    assert_eq!(hits[0].conversation, old);
    assert_eq!(hits[0].seq, 0);
    assert!(
        hits[0].snippet.contains("\u{2}zeppelin\u{3}"),
        "{:?}",
        hits[0].snippet
    );

    // Tool inputs are searchable; the last word is a prefix.
    let hits = history.search(P, "airship_sp", 50).unwrap();
    assert_eq!(
        hits.iter()
            .map(|h| (h.conversation.as_str(), h.seq))
            .collect::<Vec<_>>(),
        vec![(old.as_str(), 1)]
    );
    assert_eq!(history.search(P, "read_file", 50).unwrap().len(), 1);
    // Every word must match.
    assert!(history.search(P, "zeppelin loader", 50).unwrap().is_empty());
    assert_eq!(
        history.search(P, "config LOADER", 50).unwrap()[0].conversation,
        new
    );
    // Nothing the user types is an FTS5 operator or a syntax error.
    for query in [
        "\"",
        "zeppelin OR",
        "NEAR(",
        "-flaky",
        "a*b",
        "col:val",
        "(",
        "''",
    ] {
        history.search(P, query, 50).unwrap();
    }
    assert!(history.search(P, "   ", 50).unwrap().is_empty());
}

#[test]
fn fork_copies_the_entries_before_the_point_and_leaves_the_original() {
    let (_dir, history, c) = begun("First question");
    history
        .append(P, Some(&c), &assistant("First answer"), "model-a")
        .unwrap();
    history
        .append(P, Some(&c), &user("Second question"), "m")
        .unwrap();
    history
        .append(P, Some(&c), &assistant("Second answer"), "model-a")
        .unwrap();

    let fork = history.fork(P, &c, 2).unwrap();
    assert_ne!(fork.id, c);
    assert_eq!(fork.title, "First question (fork)");
    assert_eq!(fork.first_line, "First question");
    assert_eq!(
        fork.forked_from
            .as_ref()
            .map(|f| (f.conversation.as_str(), f.before_seq)),
        Some((c.as_str(), 2))
    );
    assert_eq!(
        texts(&history, &fork.id),
        vec!["First question", "First answer"]
    );
    // The fork goes on by itself; the original is unchanged.
    history
        .append(P, Some(&fork.id), &user("Another way"), "m")
        .unwrap();
    assert_eq!(
        texts(&history, &fork.id),
        vec!["First question", "First answer", "Another way"]
    );
    assert_eq!(
        texts(&history, &c),
        vec![
            "First question",
            "First answer",
            "Second question",
            "Second answer"
        ]
    );
    // The fork's copied messages are searchable in it too.
    let hits = history.search(P, "First answer", 50).unwrap();
    let mut found: Vec<&str> = hits.iter().map(|h| h.conversation.as_str()).collect();
    found.sort_unstable();
    let mut both = vec![c.as_str(), fork.id.as_str()];
    both.sort_unstable();
    assert_eq!(found, both);

    // A fork before the first message is empty and takes its title from its own first message.
    let empty = history.fork(P, &c, 0).unwrap();
    assert_eq!((empty.title.as_str(), empty.entries), ("", 0));
    history
        .append(P, Some(&empty.id), &user("Edited first question"), "m")
        .unwrap();
    assert_eq!(
        history.summary(P, &empty.id).unwrap().title,
        "Edited first question"
    );
    assert!(history.fork("/q/other", &c, 1).is_err());
}

#[test]
fn an_image_is_stored_with_its_message_and_opened_again_whole() {
    let dir = tempfile::tempdir().unwrap();
    let history = History::new(dir.path());
    let png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";
    let message = Message {
        role: Role::User,
        content: vec![
            Block::text("What is this?"),
            Block::Image {
                media_type: "image/png".into(),
                data: png.into(),
            },
        ],
    };
    let entry = NewEntry {
        message: Some(message.clone()),
        items: vec![
            json!({"kind": "user", "id": "u1", "text": "What is this?", "images": [{"media_type": "image/png", "data": png}]}),
        ],
        usage: None,
    };
    let c = history.append(P, None, &entry, "m").unwrap().conversation;
    history.close();

    let history = History::new(dir.path());
    let opened = history.open(P, &c).unwrap();
    let stored: Message =
        serde_json::from_str(opened.entries[0].message.as_ref().unwrap().get()).unwrap();
    assert_eq!(stored, message);
    let items: Value = serde_json::from_str(opened.entries[0].items.get()).unwrap();
    assert_eq!(items[0]["images"][0]["data"], json!(png));
    assert!(history
        .markdown(P, &c)
        .unwrap()
        .contains("*(an image: image/png, about 1 KiB)*"));
}

#[test]
fn the_chosen_model_is_kept_across_a_restart_and_a_fork_inherits_it() {
    let (dir, history, c) = begun("Which model?");
    assert_eq!(history.summary(P, &c).unwrap().target, None);
    let target =
        json!({"provider": "openai", "base_url": "http://127.0.0.1:8080/v1", "model": "qwen"});
    assert_eq!(
        history.set_target(P, &c, Some(&target)).unwrap().target,
        Some(target.clone())
    );
    history.close();

    let history = History::new(dir.path());
    assert_eq!(history.list(P).unwrap()[0].target, Some(target.clone()));
    assert_eq!(
        history.open(P, &c).unwrap().summary.target,
        Some(target.clone())
    );
    let fork = history.fork(P, &c, 1).unwrap();
    assert_eq!(fork.target, Some(target.clone()));

    // Back to the settings' model; the fork keeps its own choice.
    assert_eq!(history.set_target(P, &c, None).unwrap().target, None);
    assert_eq!(history.summary(P, &fork.id).unwrap().target, Some(target));
    // Another project's conversation, or one that does not exist, is not found.
    assert!(history.set_target("/q/other", &c, None).is_err());
    assert!(history.set_target(P, "nope", None).is_err());
}

#[test]
fn delete_hides_until_restored_and_is_final_after_a_restart() {
    let (dir, history, keep) = begun("keep me");
    let gone = history
        .append(P, None, &user("delete me marmalade"), "m")
        .unwrap()
        .conversation;

    history.delete(P, &gone).unwrap();
    assert_eq!(
        history
            .list(P)
            .unwrap()
            .iter()
            .map(|c| c.id.clone())
            .collect::<Vec<_>>(),
        vec![keep.clone()]
    );
    assert!(history.search(P, "marmalade", 50).unwrap().is_empty());
    assert!(history.open(P, &gone).is_err());
    assert!(history.append(P, Some(&gone), &user("x"), "m").is_err());

    // Undo.
    assert_eq!(history.restore(P, &gone).unwrap().id, gone);
    assert_eq!(history.search(P, "marmalade", 50).unwrap().len(), 1);

    history.delete(P, &gone).unwrap();
    history.close();
    let history = History::new(dir.path());
    assert!(history.restore(P, &gone).is_err());
    assert_eq!(history.list(P).unwrap().len(), 1);
    // Its messages and their search rows went with it.
    assert!(history.search(P, "marmalade", 50).unwrap().is_empty());
    assert_eq!(history.integrity_check().unwrap(), "ok");
}

#[test]
fn markdown_export_has_every_message() {
    let (_dir, history, c) = begun("Show me main");
    history
        .append(
            P,
            Some(&c),
            &tool_call("t1", "read_file", json!({"path": "src/main.rs"})),
            "m",
        )
        .unwrap();
    history
        .append(
            P,
            Some(&c),
            &results(vec![Block::ToolResult {
                tool_use_id: "t1".into(),
                content: json!({"path": "src/main.rs", "content": "fn main() {}\n"}).to_string(),
                is_error: false,
            }]),
            "m",
        )
        .unwrap();
    history
        .append(P, Some(&c), &assistant("That is all of it."), "m")
        .unwrap();
    let md = history.markdown(P, &c).unwrap();
    let order = [
        "# Show me main",
        "## User",
        "Show me main",
        "**Tool call:** `read_file`",
        "**Result of** `read_file`",
        "fn main() {}",
        "## Assistant",
        "That is all of it.",
    ];
    let mut at = 0;
    for part in order {
        let found = md[at..]
            .find(part)
            .unwrap_or_else(|| panic!("`{part}` missing after byte {at}:\n{md}"));
        at += found + part.len();
    }
}
