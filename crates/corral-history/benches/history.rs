//! The conversation history: appending one entry to a long conversation and
//! opening it (read and serialized for the window, as `open_conversation`
//! answers). The conversation: 5,000 entries, 20 MB of tool output.
//! Run: cargo bench -p corral-history --bench history
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods)]

use corral_history::{History, NewEntry};
use corral_llm::{Block, Message, Role};
use criterion::{criterion_group, criterion_main, Criterion};
use serde_json::json;

const P: &str = "/p/app";
const ENTRIES: usize = 5_000;
/// One entry in ten is a tool result of 40 KB: 500 × 40 KB = 20 MB.
const OUTPUT_BYTES: usize = 40_000;

fn output(i: usize) -> String {
    let line = format!("{i:06} test result line: ok, nothing to see here, moving on\n");
    line.repeat(OUTPUT_BYTES / line.len() + 1)[..OUTPUT_BYTES].to_string()
}

/// The entry the window would append at position `i`: user text, assistant
/// text or tool calls, and now and then a tool result of 40 KB.
fn entry(i: usize) -> NewEntry {
    let id = format!("call_{i}");
    let (message, item) = match i % 10 {
        9 => (
            Message {
                role: Role::User,
                content: vec![Block::ToolResult {
                    tool_use_id: id.clone(),
                    content: json!({"command": "cargo", "args": ["test"], "stdout": output(i), "stderr": "", "exit_code": 0}).to_string(),
                    is_error: false,
                }],
            },
            json!({"kind": "tool", "id": format!("card{i}"), "callId": id, "name": "exec_shell", "input": {"command": "cargo"}, "status": "done", "resultInMessage": true}),
        ),
        8 => (
            Message {
                role: Role::Assistant,
                content: vec![Block::ToolUse {
                    id: format!("call_{}", i + 1),
                    name: "exec_shell".into(),
                    input: json!({"command": "cargo", "args": ["test"]}).as_object().unwrap().clone(),
                }],
            },
            json!({"kind": "tool", "id": format!("card{}", i + 1), "callId": format!("call_{}", i + 1), "name": "exec_shell", "status": "queued"}),
        ),
        n if n % 2 == 0 => (
            Message::user(format!("Please look at module {i} and tell me what it does; then fix the failing test in it.")),
            json!({"kind": "user", "id": format!("u{i}"), "text": "…"}),
        ),
        _ => (
            Message::assistant(format!("Module {i} parses the configuration. The test failed because the fixture was stale; I updated it. ").repeat(4)),
            json!({"kind": "assistant", "id": format!("a{i}"), "text": "…", "streaming": false}),
        ),
    };
    NewEntry {
        message: Some(message),
        items: vec![item],
        usage: None,
    }
}

fn bench(c: &mut Criterion) {
    // On the disk the build uses (not a tmpfs), so fsync costs what it costs.
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let history = History::new(dir.path());
    let conversation = history
        .append(P, None, &entry(0), "m")
        .unwrap()
        .conversation;
    for i in 1..ENTRIES {
        history
            .append(P, Some(&conversation), &entry(i), "m")
            .unwrap();
    }
    let size = std::fs::metadata(history.path()).unwrap().len()
        + std::fs::metadata(format!("{}-wal", history.path().display())).map_or(0, |m| m.len());
    eprintln!("history.db (with its log): {:.1} MB", size as f64 / 1e6);

    let mut group = c.benchmark_group("history");
    group.sample_size(30);
    group.bench_function("open 5,000 entries / 20 MB and serialize", |b| {
        b.iter(|| {
            let data = history.open(P, &conversation).unwrap();
            serde_json::to_vec(&data).unwrap().len()
        })
    });
    group.bench_function(
        "open brief (results over 4 KiB left out) and serialize",
        |b| {
            b.iter(|| {
                let data = history.open_brief(P, &conversation, Some(4096)).unwrap();
                serde_json::to_vec(&data).unwrap().len()
            })
        },
    );
    group.bench_function("list the project's conversations", |b| {
        b.iter(|| history.list(P).unwrap().len())
    });
    group.bench_function("search one word", |b| {
        b.iter(|| history.search(P, "fixture", 50).unwrap().len())
    });
    group.sample_size(100);
    let user = NewEntry {
        message: Some(Message::user("One more question about the parser.")),
        items: vec![
            json!({"kind": "user", "id": "x", "text": "One more question about the parser."}),
        ],
        usage: None,
    };
    // Each append is a commit with its fsync: the conversation grows by one entry per iteration.
    group.bench_function("append a user message (fsync)", |b| {
        b.iter(|| history.append(P, Some(&conversation), &user, "m").unwrap())
    });
    let result = entry(9);
    group.bench_function("append a 40 KB tool result (fsync)", |b| {
        b.iter(|| {
            history
                .append(P, Some(&conversation), &result, "m")
                .unwrap()
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
