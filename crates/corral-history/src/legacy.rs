//! Conversations saved as JSON files by earlier versions, imported once.

use crate::conversations::{create, FIRST_LINE_CHARS, TITLE_CHARS};
use crate::db::{db_error, now_ms};
use crate::text::{cut, first_text_line, role_name, search_text};
use crate::History;
use corral_llm::{Message, Role};
use corral_protocol::Error;
use rusqlite::{params, OptionalExtension};
use serde_json::Value;
use std::path::Path;

impl History {
    /// Imports a conversation saved as JSON by an earlier Corral (`file`,
    /// the project's old `conversations/NAME-HASH.json`) once: the file is
    /// left in place and its name remembered. A file that cannot be read
    /// back is moved aside as before. Returns the new conversation's id.
    // An earlier Corral's conversation file in the app's data folder, never
    // a project's.
    #[allow(clippy::disallowed_methods)]
    pub fn import_legacy(&self, project: &str, file: &Path) -> Result<Option<String>, Error> {
        let Some(name) = file.file_name().map(|n| n.to_string_lossy().into_owned()) else {
            return Ok(None);
        };
        self.with_db(|conn| {
            let done: bool = conn
                .query_row("SELECT 1 FROM imported WHERE file = ?1", [&name], |_| Ok(()))
                .optional()
                .map_err(|e| db_error(&e))?
                .is_some();
            if done {
                return Ok(None);
            }
            let Ok(bytes) = std::fs::read(file) else {
                return Ok(None);
            };
            let Ok(value) = serde_json::from_slice::<Value>(&bytes) else {
                let secs = now_ms() / 1000;
                let _ = std::fs::rename(file, file.with_extension(format!("corrupt-{secs}.json")));
                return Ok(None);
            };
            let modified = std::fs::metadata(file)
                .and_then(|m| m.modified())
                .ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .and_then(|d| i64::try_from(d.as_millis()).ok())
                .unwrap_or_else(now_ms);
            let entries = legacy_entries(&value);
            let tx = conn.transaction().map_err(|e| db_error(&e))?;
            let id = if entries.is_empty() {
                None
            } else {
                let id = create(&tx, project, modified, None)?;
                for (seq, (message, items)) in (0_i64..).zip(&entries) {
                    let parsed: Option<Message> =
                        message.as_ref().and_then(|m| serde_json::from_value(m.clone()).ok());
                    let role = parsed.as_ref().map(|m| role_name(m.role));
                    let text = parsed.as_ref().map(search_text).unwrap_or_default();
                    let message = parsed
                        .as_ref()
                        .and_then(|m| serde_json::to_string(m).ok());
                    let items = serde_json::to_string(items).unwrap_or_else(|_| "[]".into());
                    tx.execute(
                        "INSERT INTO messages (conversation, seq, role, message, items, created_ms) \
                         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                        params![id, seq, role, message, items, modified],
                    )
                    .map_err(|e| db_error(&e))?;
                    if !text.is_empty() {
                        tx.execute(
                            "INSERT INTO message_text (rowid, body) VALUES (?1, ?2)",
                            params![tx.last_insert_rowid(), text],
                        )
                        .map_err(|e| db_error(&e))?;
                    }
                    if let Some(line) = parsed
                        .as_ref()
                        .filter(|m| m.role == Role::User)
                        .and_then(first_text_line)
                    {
                        tx.execute(
                            "UPDATE conversations SET first_line = ?2, title = ?3 WHERE id = ?1 AND first_line = ''",
                            params![id, cut(&line, FIRST_LINE_CHARS), cut(&line, TITLE_CHARS)],
                        )
                        .map_err(|e| db_error(&e))?;
                    }
                }
                Some(id)
            };
            tx.execute(
                "INSERT INTO imported (file, conversation, imported_ms) VALUES (?1, ?2, ?3)",
                params![name, id, now_ms()],
            )
            .map_err(|e| db_error(&e))?;
            tx.commit().map_err(|e| db_error(&e))?;
            Ok(id)
        })
    }
}

/// An old saved conversation (`{version: 1, messages, items}`) as entries:
/// one per message, each of the window's items with the user message it
/// followed (so a fork before a user message keeps what came before it).
fn legacy_entries(value: &Value) -> Vec<(Option<Value>, Vec<Value>)> {
    let messages = value
        .get("messages")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let items = value
        .get("items")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let mut entries: Vec<(Option<Value>, Vec<Value>)> = messages
        .into_iter()
        .map(|m| (Some(m), Vec::new()))
        .collect();
    let user_text = |m: &Option<Value>| {
        m.as_ref().is_some_and(|m| {
            m.get("role").and_then(Value::as_str) == Some("user")
                && m.get("content").and_then(Value::as_array).is_some_and(|c| {
                    c.iter()
                        .any(|b| b.get("type").and_then(Value::as_str) == Some("text"))
                })
        })
    };
    let mut target = 0;
    let mut next_user = 0;
    for item in items {
        if item.get("kind").and_then(Value::as_str) == Some("user") {
            if let Some(at) = (next_user..entries.len()).find(|&i| user_text(&entries[i].0)) {
                target = at;
                next_user = at + 1;
            }
        }
        match entries.get_mut(target) {
            Some(entry) => entry.1.push(item),
            None => entries.push((None, vec![item])),
        }
    }
    entries
}
