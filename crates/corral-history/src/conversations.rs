//! Conversations: appending an entry, opening one whole or in part,
//! renaming, choosing its model, forking, deleting and undoing that, and
//! exporting it as Markdown.

use crate::db::{db_error, now_ms};
use crate::text::{cut, elide, first_text_line, raw, role_name, search_text};
use crate::{
    markdown, Appended, ConversationData, ConversationSummary, ForkPoint, History, NewEntry, Part,
    StoredEntry,
};
use corral_llm::{Message, Role};
use corral_protocol::{Error, ErrorCode};
use rusqlite::{params, Connection, OptionalExtension};
use serde_json::Value;

/// Deleted conversations can be restored for this long (the window's undo).
const UNDO_MS: i64 = 60_000;
/// Longest title and first line kept.
pub(crate) const TITLE_CHARS: usize = 80;
pub(crate) const FIRST_LINE_CHARS: usize = 200;

fn not_found(id: &str) -> Error {
    Error::new(
        ErrorCode::NotFound,
        format!("there is no conversation `{id}` in this project"),
    )
    .hint("List the project's conversations again; it may have been deleted.")
    .detail("conversation", id)
}

impl History {
    /// The project's conversations, newest first.
    pub fn list(&self, project: &str) -> Result<Vec<ConversationSummary>, Error> {
        self.with_db(|conn| {
            let mut stmt = conn
                .prepare_cached(&format!(
                    "{SUMMARY_SELECT} WHERE c.project = ?1 AND c.deleted_ms IS NULL \
                     ORDER BY c.updated_ms DESC, c.rowid DESC"
                ))
                .map_err(|e| db_error(&e))?;
            let rows = stmt
                .query_map([project], summary_from_row)
                .map_err(|e| db_error(&e))?;
            rows.collect::<Result<Vec<_>, _>>()
                .map_err(|e| db_error(&e))
        })
    }

    /// Appends one entry to a conversation of the project, or to a new one
    /// when `conversation` is `None`. `model` is recorded with an assistant
    /// message. One transaction: the entry, its search text and the
    /// conversation's totals land together or not at all.
    pub fn append(
        &self,
        project: &str,
        conversation: Option<&str>,
        entry: &NewEntry,
        model: &str,
    ) -> Result<Appended, Error> {
        self.append_new_as(project, conversation, None, entry, model)
    }

    /// [`History::append`], a new conversation taking the id `new_id`
    /// when given and free (an ACP session's id, so the editor's id is the
    /// history's); one taken already (a second new conversation of that
    /// host) is never joined: the new one gets an id of its own.
    pub fn append_new_as(
        &self,
        project: &str,
        conversation: Option<&str>,
        new_id: Option<&str>,
        entry: &NewEntry,
        model: &str,
    ) -> Result<Appended, Error> {
        let message = entry
            .message
            .as_ref()
            .map(serde_json::to_string)
            .transpose()
            .map_err(|e| Error::invalid_input(format!("the message cannot be stored: {e}")))?;
        let items = serde_json::to_string(&entry.items)
            .map_err(|e| Error::invalid_input(format!("the items cannot be stored: {e}")))?;
        let role = entry.message.as_ref().map(|m| role_name(m.role));
        let text = entry.message.as_ref().map(search_text).unwrap_or_default();
        let user_line = entry
            .message
            .as_ref()
            .filter(|m| m.role == Role::User)
            .and_then(first_text_line);
        let usage = entry.usage.unwrap_or_default();
        if [
            usage.input_tokens,
            usage.output_tokens,
            usage.cache_read_tokens,
            usage.cache_write_tokens,
            usage.unpriced,
        ]
        .iter()
        .any(|&n| n < 0)
            || !usage.cost_usd.is_finite()
            || usage.cost_usd < 0.0
        {
            return Err(Error::invalid_input(
                "an entry's usage counts tokens and dollars, none of them negative",
            ));
        }
        let model = match entry.message.as_ref().map(|m| m.role) {
            Some(Role::Assistant) => Some(model),
            _ => None,
        };
        self.with_db(|conn| {
            let tx = conn.transaction().map_err(|e| db_error(&e))?;
            let now = now_ms();
            let id = match conversation {
                Some(id) => {
                    if !exists(&tx, project, id)? {
                        return Err(not_found(id));
                    }
                    id.to_string()
                }
                None => match new_id {
                    Some(id) if !taken(&tx, id)? => create_as(&tx, id, project, now)?,
                    _ => create(&tx, project, now, None)?,
                },
            };
            let seq: i64 = tx
                .query_row(
                    "SELECT COALESCE(MAX(seq) + 1, 0) FROM messages WHERE conversation = ?1",
                    [&id],
                    |r| r.get(0),
                )
                .map_err(|e| db_error(&e))?;
            tx.execute(
                "INSERT INTO messages (conversation, seq, role, message, items, created_ms, \
                   input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, cost_usd, unpriced) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
                params![
                    id,
                    seq,
                    role,
                    message,
                    items,
                    now,
                    usage.input_tokens,
                    usage.output_tokens,
                    usage.cache_read_tokens,
                    usage.cache_write_tokens,
                    usage.cost_usd,
                    usage.unpriced
                ],
            )
            .map_err(|e| db_error(&e))?;
            if !text.is_empty() {
                let rowid = tx.last_insert_rowid();
                tx.execute(
                    "INSERT INTO message_text (rowid, body) VALUES (?1, ?2)",
                    params![rowid, text],
                )
                .map_err(|e| db_error(&e))?;
            }
            tx.execute(
                "UPDATE conversations SET updated_ms = ?2, \
                   input_tokens = input_tokens + ?3, output_tokens = output_tokens + ?4, \
                   cache_read_tokens = cache_read_tokens + ?6, cache_write_tokens = cache_write_tokens + ?7, \
                   cost_usd = cost_usd + ?8, unpriced = unpriced + ?9, \
                   model = COALESCE(?5, model) WHERE id = ?1",
                params![
                    id,
                    now,
                    usage.input_tokens,
                    usage.output_tokens,
                    model,
                    usage.cache_read_tokens,
                    usage.cache_write_tokens,
                    usage.cost_usd,
                    usage.unpriced
                ],
            )
            .map_err(|e| db_error(&e))?;
            if let Some(line) = &user_line {
                tx.execute(
                    "UPDATE conversations SET first_line = ?2, title = CASE WHEN title = '' THEN ?3 ELSE title END \
                     WHERE id = ?1 AND first_line = ''",
                    params![id, cut(line, FIRST_LINE_CHARS), cut(line, TITLE_CHARS)],
                )
                .map_err(|e| db_error(&e))?;
            }
            tx.commit().map_err(|e| db_error(&e))?;
            Ok(Appended {
                conversation: id,
                seq,
            })
        })
    }

    /// A conversation of the project with every entry, oldest first.
    pub fn open(&self, project: &str, id: &str) -> Result<ConversationData, Error> {
        self.open_part(project, id, Part::default())
    }

    /// Like `open`, but each tool result longer than `elide_over` bytes is
    /// left out (its `content` emptied, its id in the entry's `elided`):
    /// what the window needs to show a long conversation at once, before it
    /// fetches the whole of it.
    pub fn open_brief(
        &self,
        project: &str,
        id: &str,
        elide_over: Option<usize>,
    ) -> Result<ConversationData, Error> {
        self.open_part(
            project,
            id,
            Part {
                elide_over,
                ..Part::default()
            },
        )
    }

    /// A conversation of the project with the entries `part` asks for,
    /// oldest first: the last screenful of a long one first, the rest
    /// after it (`summary.entries` says how many there are in all).
    pub fn open_part(
        &self,
        project: &str,
        id: &str,
        part: Part,
    ) -> Result<ConversationData, Error> {
        self.with_db(|conn| {
            let summary = summary(conn, project, id)?.ok_or_else(|| not_found(id))?;
            // The newest `last` before `before_seq`, read newest first and
            // turned around; SQLite's LIMIT -1 is no limit.
            let limit = part
                .last
                .map_or(-1, |last| i64::try_from(last).unwrap_or(i64::MAX));
            let mut stmt = conn
                .prepare_cached(
                    "SELECT seq, message, items FROM messages
                     WHERE conversation = ?1 AND seq < ?2 ORDER BY seq DESC LIMIT ?3",
                )
                .map_err(|e| db_error(&e))?;
            let rows = stmt
                .query_map(
                    params![id, part.before_seq.unwrap_or(i64::MAX), limit],
                    |row| {
                        Ok((
                            row.get::<_, i64>(0)?,
                            row.get::<_, Option<String>>(1)?,
                            row.get::<_, String>(2)?,
                        ))
                    },
                )
                .map_err(|e| db_error(&e))?;
            let mut entries = Vec::new();
            for row in rows {
                let (seq, message, items) = row.map_err(|e| db_error(&e))?;
                // A damaged entry costs itself, not the conversation: shown
                // as damaged, with what could be read of it.
                if let Some(damaged) = damaged_entry(id, seq, message.as_deref(), &items) {
                    entries.push(damaged);
                    continue;
                }
                let (message, elided) = match (message, part.elide_over) {
                    (Some(text), Some(limit)) if text.len() > limit => elide(text, limit)?,
                    (message, _) => (message, None),
                };
                entries.push(StoredEntry {
                    seq,
                    message: message.map(raw).transpose()?,
                    items: raw(items)?,
                    elided,
                });
            }
            entries.reverse();
            Ok(ConversationData { summary, entries })
        })
    }

    /// The summary of one conversation of the project.
    pub fn summary(&self, project: &str, id: &str) -> Result<ConversationSummary, Error> {
        self.with_db(|conn| summary(conn, project, id)?.ok_or_else(|| not_found(id)))
    }

    /// Keeps the model chosen for a conversation in the model switcher
    /// (`target`, an `LlmTarget` as JSON), or forgets it (`None`: the
    /// settings' model again). A fork inherits it.
    pub fn set_target(
        &self,
        project: &str,
        id: &str,
        target: Option<&Value>,
    ) -> Result<ConversationSummary, Error> {
        let target = target.map(Value::to_string);
        self.with_db(|conn| {
            let changed = conn
                .execute(
                    "UPDATE conversations SET target = ?3 WHERE id = ?2 AND project = ?1 AND deleted_ms IS NULL",
                    params![project, id, target],
                )
                .map_err(|e| db_error(&e))?;
            if changed == 0 {
                return Err(not_found(id));
            }
            summary(conn, project, id)?.ok_or_else(|| not_found(id))
        })
    }

    pub fn rename(
        &self,
        project: &str,
        id: &str,
        title: &str,
    ) -> Result<ConversationSummary, Error> {
        let title = cut(title.trim(), TITLE_CHARS);
        self.with_db(|conn| {
            let changed = conn
                .execute(
                    "UPDATE conversations SET title = ?3 WHERE id = ?2 AND project = ?1 AND deleted_ms IS NULL",
                    params![project, id, title],
                )
                .map_err(|e| db_error(&e))?;
            if changed == 0 {
                return Err(not_found(id));
            }
            summary(conn, project, id)?.ok_or_else(|| not_found(id))
        })
    }

    /// The project a conversation is kept under, if it is kept (an
    /// editor names a session by its id alone).
    pub fn project_of(&self, id: &str) -> Result<Option<String>, Error> {
        self.with_db(|conn| {
            use rusqlite::OptionalExtension as _;
            conn.query_row(
                "SELECT project FROM conversations WHERE id = ?1 AND deleted_ms IS NULL",
                [id],
                |r| r.get(0),
            )
            .optional()
            .map_err(|e| db_error(&e))
        })
    }

    /// Deletes a conversation, restorably for a minute (`restore`); it is
    /// gone for good at the next start, or at a later delete after that.
    pub fn delete(&self, project: &str, id: &str) -> Result<(), Error> {
        self.with_db(|conn| {
            let now = now_ms();
            let tx = conn.transaction().map_err(|e| db_error(&e))?;
            tx.execute(
                "DELETE FROM conversations WHERE deleted_ms IS NOT NULL AND deleted_ms < ?1",
                [now - UNDO_MS],
            )
            .map_err(|e| db_error(&e))?;
            let changed = tx
                .execute(
                    "UPDATE conversations SET deleted_ms = ?3 WHERE id = ?2 AND project = ?1 AND deleted_ms IS NULL",
                    params![project, id, now],
                )
                .map_err(|e| db_error(&e))?;
            if changed == 0 {
                return Err(not_found(id));
            }
            tx.commit().map_err(|e| db_error(&e))
        })
    }

    /// Undoes a delete.
    pub fn restore(&self, project: &str, id: &str) -> Result<ConversationSummary, Error> {
        self.with_db(|conn| {
            let changed = conn
                .execute(
                    "UPDATE conversations SET deleted_ms = NULL WHERE id = ?2 AND project = ?1 AND deleted_ms IS NOT NULL",
                    params![project, id],
                )
                .map_err(|e| db_error(&e))?;
            if changed == 0 {
                return Err(not_found(id));
            }
            summary(conn, project, id)?.ok_or_else(|| not_found(id))
        })
    }

    /// A new conversation holding the entries of `id` before `before_seq`
    /// (all of them when it is past the end); the original is unchanged.
    ///
    /// Files are not touched: the fork point (`forked_from`) is where
    /// restoring the project's files to that moment belongs, once
    /// checkpoints can do it.
    pub fn fork(
        &self,
        project: &str,
        id: &str,
        before_seq: i64,
    ) -> Result<ConversationSummary, Error> {
        self.with_db(|conn| {
            let tx = conn.transaction().map_err(|e| db_error(&e))?;
            let original = summary(&tx, project, id)?.ok_or_else(|| not_found(id))?;
            let now = now_ms();
            let new_id = create(&tx, project, now, Some((id, before_seq)))?;
            tx.execute(
                "INSERT INTO messages (conversation, seq, role, message, items, created_ms) \
                 SELECT ?2, seq, role, message, items, created_ms FROM messages \
                 WHERE conversation = ?1 AND seq < ?3 ORDER BY seq",
                params![id, new_id, before_seq],
            )
            .map_err(|e| db_error(&e))?;
            tx.execute(
                "INSERT INTO message_text (rowid, body) \
                 SELECT n.id, t.body FROM messages n \
                 JOIN messages o ON o.conversation = ?1 AND o.seq = n.seq \
                 JOIN message_text t ON t.rowid = o.id \
                 WHERE n.conversation = ?2",
                params![id, new_id],
            )
            .map_err(|e| db_error(&e))?;
            let first_line = first_user_line(&tx, &new_id)?;
            let title = match &first_line {
                Some(_) if !original.title.is_empty() => {
                    cut(&format!("{} (fork)", original.title), TITLE_CHARS)
                }
                Some(line) => cut(line, TITLE_CHARS),
                None => String::new(),
            };
            tx.execute(
                "UPDATE conversations SET title = ?2, first_line = ?3, model = ?4, \
                 target = (SELECT target FROM conversations WHERE id = ?5) WHERE id = ?1",
                params![
                    new_id,
                    title,
                    first_line
                        .map(|l| cut(&l, FIRST_LINE_CHARS))
                        .unwrap_or_default(),
                    original.model,
                    id
                ],
            )
            .map_err(|e| db_error(&e))?;
            let forked = summary(&tx, project, &new_id)?.ok_or_else(|| not_found(&new_id))?;
            tx.commit().map_err(|e| db_error(&e))?;
            Ok(forked)
        })
    }

    /// The conversation as Markdown: each message under its role, tool calls
    /// with their input and their results, readable.
    pub fn markdown(&self, project: &str, id: &str) -> Result<String, Error> {
        let data = self.open(project, id)?;
        // A message that cannot be read costs that message: the export says
        // so in its place and goes on.
        let messages: Vec<Result<Message, String>> = data
            .entries
            .iter()
            .filter_map(|entry| entry.message.as_ref())
            .map(|raw| serde_json::from_str::<Message>(raw.get()).map_err(|e| e.to_string()))
            .collect();
        let summary = &data.summary;
        let header = markdown::Header {
            title: &summary.title,
            project: &summary.project,
            model: &summary.model,
            input_tokens: summary.input_tokens,
            output_tokens: summary.output_tokens,
        };
        Ok(markdown::render(&header, &messages))
    }
}

const SUMMARY_SELECT: &str =
    "SELECT c.id, c.project, c.title, c.first_line, c.created_ms, c.updated_ms, \
     c.model, c.input_tokens, c.output_tokens, \
     (SELECT COUNT(*) FROM messages m WHERE m.conversation = c.id), \
     c.forked_from, c.forked_before, c.target, \
     c.cache_read_tokens, c.cache_write_tokens, c.cost_usd, c.unpriced FROM conversations c";

/// How much of a damaged entry's text is shown.
const DAMAGED_SHOWN_CHARS: usize = 2000;

/// When an entry's message or items cannot be read as stored (not JSON,
/// or not a message and a list of items), the entry as the window can
/// take it: what can be read of it kept, the rest left out, and a notice
/// saying so with the text that was there.
fn damaged_entry(
    conversation: &str,
    seq: i64,
    message: Option<&str>,
    items: &str,
) -> Option<StoredEntry> {
    let message_ok = message.is_none_or(|m| {
        serde_json::from_str::<Value>(m)
            .is_ok_and(|v| v.is_object() && v.get("role").is_some_and(Value::is_string))
    });
    let items_ok = serde_json::from_str::<Value>(items).is_ok_and(|v| v.is_array());
    if message_ok && items_ok {
        return None;
    }
    let mut kept: Vec<Value> = match serde_json::from_str::<Value>(items) {
        Ok(Value::Array(items)) => items,
        _ => Vec::new(),
    };
    let what = match (message_ok, items_ok) {
        (false, false) => "its message and what the window showed of it",
        (false, true) => "its message (what was sent to the model)",
        _ => "what the window showed of it",
    };
    let read = [
        message.filter(|_| !message_ok),
        (!items_ok).then_some(items),
    ]
    .into_iter()
    .flatten()
    .map(|text| cut(text, DAMAGED_SHOWN_CHARS))
    .collect::<Vec<_>>()
    .join("\n");
    kept.push(serde_json::json!({
        "kind": "notice",
        "id": format!("damaged-{conversation}-{seq}"),
        "text": format!("Entry {seq} of this conversation is damaged in the history: {what} could not be read and was left out."),
        "detail": format!("What could be read of it:\n{read}"),
    }));
    let message = match message_ok {
        true => message.map(|m| raw(m.to_string())).transpose().ok()?,
        false => None,
    };
    Some(StoredEntry {
        seq,
        message,
        items: raw(Value::Array(kept).to_string()).ok()?,
        elided: None,
    })
}

fn summary_from_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<ConversationSummary> {
    let forked_from: Option<String> = row.get(10)?;
    let before: Option<i64> = row.get(11)?;
    let target: Option<String> = row.get(12)?;
    Ok(ConversationSummary {
        id: row.get(0)?,
        project: row.get(1)?,
        title: row.get(2)?,
        first_line: row.get(3)?,
        created_ms: row.get(4)?,
        updated_ms: row.get(5)?,
        model: row.get(6)?,
        input_tokens: row.get(7)?,
        output_tokens: row.get(8)?,
        cache_read_tokens: row.get(13)?,
        cache_write_tokens: row.get(14)?,
        cost_usd: row.get(15)?,
        unpriced: row.get(16)?,
        entries: row.get(9)?,
        forked_from: forked_from.map(|conversation| ForkPoint {
            conversation,
            before_seq: before.unwrap_or(0),
        }),
        target: target.and_then(|t| serde_json::from_str(&t).ok()),
    })
}

fn summary(
    conn: &Connection,
    project: &str,
    id: &str,
) -> Result<Option<ConversationSummary>, Error> {
    conn.prepare_cached(&format!(
        "{SUMMARY_SELECT} WHERE c.id = ?1 AND c.project = ?2 AND c.deleted_ms IS NULL"
    ))
    .and_then(|mut stmt| {
        stmt.query_row(params![id, project], summary_from_row)
            .optional()
    })
    .map_err(|e| db_error(&e))
}

fn exists(conn: &Connection, project: &str, id: &str) -> Result<bool, Error> {
    conn.prepare_cached(
        "SELECT 1 FROM conversations WHERE id = ?1 AND project = ?2 AND deleted_ms IS NULL",
    )
    .and_then(|mut stmt| stmt.exists(params![id, project]))
    .map_err(|e| db_error(&e))
}

pub(crate) fn create(
    conn: &Connection,
    project: &str,
    now: i64,
    fork: Option<(&str, i64)>,
) -> Result<String, Error> {
    let id = uuid::Uuid::new_v4().to_string();
    conn.execute(
        "INSERT INTO conversations (id, project, created_ms, updated_ms, forked_from, forked_before) \
         VALUES (?1, ?2, ?3, ?3, ?4, ?5)",
        params![id, project, now, fork.map(|f| f.0), fork.map(|f| f.1)],
    )
    .map_err(|e| db_error(&e))?;
    Ok(id)
}

/// Whether a conversation (of any project, deleted or not) has the id `id`.
fn taken(conn: &Connection, id: &str) -> Result<bool, Error> {
    conn.prepare_cached("SELECT 1 FROM conversations WHERE id = ?1")
        .and_then(|mut stmt| stmt.exists([id]))
        .map_err(|e| db_error(&e))
}

/// A new conversation of `project` with the id `id` (free: [`taken`]).
fn create_as(conn: &Connection, id: &str, project: &str, now: i64) -> Result<String, Error> {
    conn.execute(
        "INSERT INTO conversations (id, project, created_ms, updated_ms) VALUES (?1, ?2, ?3, ?3)",
        params![id, project, now],
    )
    .map_err(|e| db_error(&e))?;
    Ok(id.to_string())
}

/// The first line of the conversation's first user message with text.
fn first_user_line(conn: &Connection, id: &str) -> Result<Option<String>, Error> {
    let mut stmt = conn
        .prepare_cached(
            "SELECT message FROM messages WHERE conversation = ?1 AND role = 'user' ORDER BY seq",
        )
        .map_err(|e| db_error(&e))?;
    let rows = stmt
        .query_map([id], |r| r.get::<_, String>(0))
        .map_err(|e| db_error(&e))?;
    for row in rows {
        let text = row.map_err(|e| db_error(&e))?;
        if let Some(line) = serde_json::from_str::<Message>(&text)
            .ok()
            .as_ref()
            .and_then(first_text_line)
        {
            return Ok(Some(line));
        }
    }
    Ok(None)
}
