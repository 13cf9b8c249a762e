//! Opening a long conversation: briefly (long tool results left out and
//! named) and in parts (the newest entries first, the rest before them).

use crate::common::{begun, results, tool_call, user, P};
use corral_history::Part;
use corral_llm::{Block, Message};
use serde_json::json;

#[test]
fn a_brief_open_leaves_big_tool_results_out_and_says_which() {
    let (_dir, history, c) = begun("run it");
    history
        .append(
            P,
            Some(&c),
            &tool_call("t1", "exec_shell", json!({"command": "ls"})),
            "m",
        )
        .unwrap();
    let big = "x".repeat(10_000);
    let both = results(vec![
        Block::ToolResult {
            tool_use_id: "t1".into(),
            content: big.clone(),
            is_error: false,
        },
        Block::ToolResult {
            tool_use_id: "t2".into(),
            content: "small".into(),
            is_error: false,
        },
    ]);
    history.append(P, Some(&c), &both, "m").unwrap();

    let brief = history.open_brief(P, &c, Some(4096)).unwrap();
    assert!(brief.entries[..2].iter().all(|e| e.elided.is_none()));
    assert_eq!(brief.entries[2].elided, Some(vec!["t1".to_string()]));
    let message: Message =
        serde_json::from_str(brief.entries[2].message.as_ref().unwrap().get()).unwrap();
    assert_eq!(
        message.content,
        vec![
            Block::ToolResult {
                tool_use_id: "t1".into(),
                content: String::new(),
                is_error: false
            },
            Block::ToolResult {
                tool_use_id: "t2".into(),
                content: "small".into(),
                is_error: false
            },
        ]
    );
    // The whole conversation is still there.
    let whole = history.open(P, &c).unwrap();
    assert!(whole.entries[2].elided.is_none());
    assert!(whole.entries[2]
        .message
        .as_ref()
        .unwrap()
        .get()
        .contains(&big));
    let json = serde_json::to_string(&whole).unwrap();
    assert!(!json.contains("elided"), "absent when whole");
}

#[test]
fn a_brief_open_measures_results_as_read_not_as_stored() {
    let (_dir, history, c) = begun("run it");
    // Stored escaped ("\n" takes two bytes), read shorter.
    let result = |id: &str, content: String| {
        results(vec![
            Block::text("before"),
            Block::ToolResult {
                tool_use_id: id.into(),
                content,
                is_error: true,
            },
            Block::text("after \"quoted\""),
        ])
    };
    let under = "\n".repeat(4000); // 8,000 bytes stored, 4,000 read
    let over = "é\n\"".repeat(1100); // 4,400 bytes read, more stored
    history
        .append(P, Some(&c), &result("u", under), "m")
        .unwrap();
    history
        .append(P, Some(&c), &result("o", over), "m")
        .unwrap();
    let brief = history.open_brief(P, &c, Some(4096)).unwrap();
    assert!(brief.entries[1].elided.is_none());
    assert_eq!(brief.entries[2].elided, Some(vec!["o".to_string()]));
    let message: Message =
        serde_json::from_str(brief.entries[2].message.as_ref().unwrap().get()).unwrap();
    assert_eq!(
        message.content,
        vec![
            Block::text("before"),
            Block::ToolResult {
                tool_use_id: "o".into(),
                content: String::new(),
                is_error: true
            },
            Block::text("after \"quoted\""),
        ]
    );
}

#[test]
fn an_open_in_parts_gives_the_newest_entries_first_and_the_rest_before_them() {
    let (_dir, history, c) = begun("m0");
    for n in 1..10 {
        history
            .append(P, Some(&c), &user(&format!("m{n}")), "m")
            .unwrap();
    }
    let seqs = |part: Part| -> Vec<i64> {
        let data = history.open_part(P, &c, part).unwrap();
        assert_eq!(
            data.summary.entries, 10,
            "the count of all, whatever the part"
        );
        data.entries.iter().map(|e| e.seq).collect()
    };
    let whole = seqs(Part::default());
    assert_eq!(whole.len(), 10);
    // The newest three, oldest first.
    let tail = seqs(Part {
        last: Some(3),
        ..Part::default()
    });
    assert_eq!(tail, whole[7..].to_vec());
    // The four before the first of them, then what is left.
    let before = seqs(Part {
        before_seq: Some(tail[0]),
        last: Some(4),
        ..Part::default()
    });
    assert_eq!(before, whole[3..7].to_vec());
    let rest = seqs(Part {
        before_seq: Some(before[0]),
        ..Part::default()
    });
    assert_eq!(rest, whole[..3].to_vec());
    // Nothing before the first; a tail longer than the whole is the whole.
    assert!(seqs(Part {
        before_seq: Some(whole[0]),
        ..Part::default()
    })
    .is_empty());
    assert_eq!(
        seqs(Part {
            last: Some(1000),
            ..Part::default()
        }),
        whole
    );
    assert!(seqs(Part {
        last: Some(0),
        ..Part::default()
    })
    .is_empty());
    // The entries are those of the whole, in its order.
    let data = history
        .open_part(
            P,
            &c,
            Part {
                last: Some(2),
                ..Part::default()
            },
        )
        .unwrap();
    let text = |e: &corral_history::StoredEntry| -> String {
        let message: Message = serde_json::from_str(e.message.as_ref().unwrap().get()).unwrap();
        match &message.content[0] {
            Block::Text { text } => text.clone(),
            other => panic!("not text: {other:?}"),
        }
    };
    assert_eq!(
        data.entries.iter().map(text).collect::<Vec<_>>(),
        ["m8", "m9"]
    );
}

#[test]
fn an_open_in_parts_leaves_out_long_results_and_stays_in_its_project() {
    let (_dir, history, c) = begun("run it");
    let big = "x".repeat(10_000);
    let result = results(vec![Block::ToolResult {
        tool_use_id: "t1".into(),
        content: big.clone(),
        is_error: false,
    }]);
    history.append(P, Some(&c), &result, "m").unwrap();
    let part = Part {
        elide_over: Some(4096),
        last: Some(1),
        ..Part::default()
    };
    let data = history.open_part(P, &c, part).unwrap();
    assert_eq!(data.entries.len(), 1);
    assert_eq!(data.entries[0].elided, Some(vec!["t1".to_string()]));
    assert!(!data.entries[0]
        .message
        .as_ref()
        .unwrap()
        .get()
        .contains(&big));
    assert!(history.open_part("/q/other", &c, part).is_err());
    assert!(history.open_part(P, "no-such-id", part).is_err());
}
