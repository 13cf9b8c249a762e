//! What the history's suites share: the project they store under, the
//! entries a window appends, and a history begun in a temp folder.

use corral_history::{History, NewEntry, TokenUsage};
use corral_llm::{Block, Message, Role};
use serde_json::{json, Value};

pub const P: &str = "/p/app";

pub fn user(text: &str) -> NewEntry {
    NewEntry {
        message: Some(Message::user(text)),
        items: vec![json!({"kind": "user", "id": format!("u-{text}"), "text": text})],
        usage: None,
    }
}

pub fn assistant(text: &str) -> NewEntry {
    NewEntry {
        message: Some(Message::assistant(text)),
        items: vec![
            json!({"kind": "assistant", "id": format!("a-{text}"), "text": text, "streaming": false}),
        ],
        usage: Some(TokenUsage {
            input_tokens: 100,
            output_tokens: 10,
            ..TokenUsage::default()
        }),
    }
}

pub fn tool_call(id: &str, name: &str, input: Value) -> NewEntry {
    NewEntry {
        message: Some(Message {
            role: Role::Assistant,
            content: vec![Block::ToolUse {
                id: id.into(),
                name: name.into(),
                input: input.as_object().unwrap().clone(),
            }],
        }),
        items: vec![],
        usage: None,
    }
}

/// A history in a new temp folder (kept while the folder lives) holding
/// one conversation begun by the user's `first` message, and its id.
pub fn begun(first: &str) -> (tempfile::TempDir, History, String) {
    let dir = tempfile::tempdir().unwrap();
    let history = History::new(dir.path());
    let id = history
        .append(P, None, &user(first), "m")
        .unwrap()
        .conversation;
    (dir, history, id)
}

/// The user's entry carrying tool results (and any other blocks).
pub fn results(content: Vec<Block>) -> NewEntry {
    NewEntry {
        message: Some(Message {
            role: Role::User,
            content,
        }),
        ..NewEntry::default()
    }
}

pub fn texts(history: &History, id: &str) -> Vec<String> {
    history
        .open(P, id)
        .unwrap()
        .entries
        .iter()
        .filter_map(|e| e.message.as_ref())
        .map(|m| {
            let m: Message = serde_json::from_str(m.get()).unwrap();
            match &m.content[0] {
                Block::Text { text } => text.clone(),
                Block::ToolUse { name, .. } => format!("<{name}>"),
                Block::ToolResult { content, .. } => content.clone(),
                Block::Image { media_type, .. } => format!("<{media_type}>"),
            }
        })
        .collect()
}
