//! Conversation history: every project's conversations in one SQLite
//! database (`history.db` in the app's data folder, WAL mode).
//!
//! A conversation is a row of `conversations`; what it says is a list of
//! entries in `messages`, appended one at a time as each message completes
//! (never a whole-conversation rewrite). An entry carries the provider
//! message (if any) and the window's items that came with it, as JSON the
//! window wrote; the window folds them back on open. Search is FTS5 over
//! the entries' text, tool names and tool inputs (paths, commands).
//!
//! One writer: the app holds an exclusive lock on `history.lock` while the
//! database is open, so a second instance on the same data folder gets a
//! clear, retryable error instead of a second writer; SQLite's own
//! `busy_timeout` covers anyone else reading it.
//!
//! A database that cannot be read (corrupt, not SQLite) or was written by a
//! newer schema is moved aside as `history.corrupt-SECS.db` /
//! `history.newer-SECS.db` (with its `-wal`), never overwritten; the app
//! starts a new one and says so once (`take_notice`).

pub mod markdown;

use corral_llm::{Block, Message, Role};
use corral_protocol::{Error, ErrorCode};
use rusqlite::{params, Connection, OptionalExtension, Transaction};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::Value;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

/// The schema this build writes. A database whose `user_version` is above
/// it came from a newer Corral.
pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

/// One migration per schema version, applied in order in a transaction
/// each; `user_version` records how many have run.
type Migration = fn(&Transaction<'_>) -> rusqlite::Result<()>;
const MIGRATIONS: &[Migration] = &[migrate_v1_tables, migrate_v2_search, migrate_v3_target];

/// How long a statement waits for another connection's lock.
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);
/// Deleted conversations can be restored for this long (the window's undo).
const UNDO_MS: i64 = 60_000;
/// Longest title and first line kept.
const TITLE_CHARS: usize = 80;
const FIRST_LINE_CHARS: usize = 200;
/// Tool input strings longer than this are cut before indexing.
const INDEXED_INPUT_CHARS: usize = 2_000;

/// A conversation as listed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
pub struct ConversationSummary {
    pub id: String,
    pub project: String,
    /// The first line of the first user message, until renamed.
    pub title: String,
    /// The first line of the first user message.
    pub first_line: String,
    #[ts(type = "number")]
    pub created_ms: i64,
    /// When the last entry was appended.
    #[ts(type = "number")]
    pub updated_ms: i64,
    /// The model of the last assistant message.
    pub model: String,
    #[ts(type = "number")]
    pub input_tokens: i64,
    #[ts(type = "number")]
    pub output_tokens: i64,
    /// How many entries it has.
    #[ts(type = "number")]
    pub entries: i64,
    /// Where it was forked from, if it was.
    #[ts(optional)]
    pub forked_from: Option<ForkPoint>,
    /// The server and model chosen for it in the model switcher (an
    /// `LlmTarget`); absent: the settings' model.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional, type = "LlmTarget")]
    pub target: Option<Value>,
}

/// A conversation and the entry before which a fork was cut.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
pub struct ForkPoint {
    pub conversation: String,
    #[ts(type = "number")]
    pub before_seq: i64,
}

/// One stored entry: the provider message it adds (none for a notice) and
/// the window's items, as the window wrote them.
#[derive(Debug, Serialize, ts_rs::TS)]
pub struct StoredEntry {
    #[ts(type = "number")]
    pub seq: i64,
    #[ts(type = "Message | null")]
    pub message: Option<Box<RawValue>>,
    #[ts(type = "unknown[]")]
    pub items: Box<RawValue>,
    /// The `tool_use_id`s of tool results left out of `message` (their
    /// `content` is `""`) by a brief open; absent when it is whole.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub elided: Option<Vec<String>>,
}

/// A conversation opened: its summary and every entry, oldest first.
#[derive(Debug, Serialize, ts_rs::TS)]
pub struct ConversationData {
    pub summary: ConversationSummary,
    pub entries: Vec<StoredEntry>,
}

/// Which entries of a conversation an open returns, and how.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Part {
    /// Tool results longer than this many bytes are left out (see `elided`).
    pub elide_over: Option<usize>,
    /// Only entries before this one.
    pub before_seq: Option<i64>,
    /// Only the newest this many (of those before `before_seq`).
    pub last: Option<usize>,
}

/// What the window appends.
#[derive(Debug, Clone, Default, Deserialize, ts_rs::TS)]
pub struct NewEntry {
    #[serde(default)]
    #[ts(optional)]
    pub message: Option<Message>,
    #[serde(default)]
    #[ts(type = "unknown[]")]
    pub items: Vec<Value>,
    /// Tokens this entry cost (added to the conversation's totals).
    #[serde(default)]
    #[ts(optional)]
    pub usage: Option<TokenUsage>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
pub struct TokenUsage {
    #[ts(type = "number")]
    pub input_tokens: i64,
    #[ts(type = "number")]
    pub output_tokens: i64,
}

/// Where an append went: the conversation (new if none was given) and the
/// entry's sequence number.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
pub struct Appended {
    pub conversation: String,
    #[ts(type = "number")]
    pub seq: i64,
}

/// A search result: the conversation, the entry and the matching text,
/// each match between U+0002 and U+0003 (plain text, no markup).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
pub struct SearchHit {
    pub conversation: String,
    pub title: String,
    #[ts(type = "number")]
    pub seq: i64,
    pub snippet: String,
    #[ts(type = "number")]
    pub updated_ms: i64,
}

/// The open database and the lock that makes this process its one writer.
struct Db {
    conn: Connection,
    _lock: File,
}

/// The history of every project, opened on first use.
pub struct History {
    dir: PathBuf,
    db: Mutex<Option<Db>>,
    notice: Mutex<Option<String>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

pub(crate) fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

fn db_error(e: &rusqlite::Error) -> Error {
    Error::new(
        ErrorCode::Io,
        format!("the conversation history could not be read or written: {e}"),
    )
}

fn not_found(id: &str) -> Error {
    Error::new(
        ErrorCode::NotFound,
        format!("there is no conversation `{id}` in this project"),
    )
    .hint("List the project's conversations again; it may have been deleted.")
}

/// Whether SQLite says the file is not a usable database.
fn is_damage(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(rusqlite::ErrorCode::DatabaseCorrupt | rusqlite::ErrorCode::NotADatabase)
    )
}

/// Why a database file was not used.
enum OpenFailure {
    Damaged(String),
    Newer(i64),
    Other(Error),
}

impl From<rusqlite::Error> for OpenFailure {
    fn from(e: rusqlite::Error) -> Self {
        if is_damage(&e) {
            OpenFailure::Damaged(e.to_string())
        } else {
            OpenFailure::Other(db_error(&e))
        }
    }
}

impl History {
    /// The history kept in `dir` (the app's data folder); nothing is opened yet.
    pub fn new(dir: &Path) -> History {
        History {
            dir: dir.to_path_buf(),
            db: Mutex::new(None),
            notice: Mutex::new(None),
        }
    }

    pub fn path(&self) -> PathBuf {
        self.dir.join("history.db")
    }

    /// What happened to a database that could not be used, once.
    pub fn take_notice(&self) -> Option<String> {
        lock(&self.notice).take()
    }

    /// Runs `f` on the open database, opening it first if need be.
    fn with_db<T>(&self, f: impl FnOnce(&mut Connection) -> Result<T, Error>) -> Result<T, Error> {
        let mut guard = lock(&self.db);
        if guard.is_none() {
            *guard = Some(self.open_db()?);
        }
        match guard.as_mut() {
            Some(db) => f(&mut db.conn),
            None => Err(Error::new(
                ErrorCode::Io,
                "the conversation history is not open",
            )),
        }
    }

    /// Takes the writer's lock, opens the database, moves an unusable one
    /// aside, migrates, and purges conversations whose undo time is over.
    fn open_db(&self) -> Result<Db, Error> {
        let shown = self.dir.display().to_string();
        std::fs::create_dir_all(&self.dir).map_err(|e| Error::from_io(&e, &shown))?;
        let lock_path = self.dir.join("history.lock");
        let lock_file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(|e| Error::from_io(&e, &lock_path.display().to_string()))?;
        // flock: held while this process has the database open, released
        // by the kernel when the process ends, however it ends.
        match rustix::fs::flock(
            &lock_file,
            rustix::fs::FlockOperation::NonBlockingLockExclusive,
        ) {
            Ok(()) => {}
            Err(e) if e == rustix::io::Errno::WOULDBLOCK => {
                return Err(Error::new(
                    ErrorCode::Io,
                    format!("another Corral window is using the conversation history in `{shown}`"),
                )
                .hint("Close the other Corral, then try again; conversations are kept by one app at a time.")
                .retryable(true)
                .detail("reason", "locked")
                .detail("path", shown));
            }
            Err(e) => {
                return Err(Error::from_io(
                    &std::io::Error::from(e),
                    &lock_path.display().to_string(),
                ))
            }
        }
        let path = self.path();
        let conn = match open_and_migrate(&path) {
            Ok(conn) => conn,
            Err(OpenFailure::Other(e)) => return Err(e),
            Err(failure) => {
                let (kind, why) = match failure {
                    OpenFailure::Newer(v) => (
                        "newer",
                        format!("it was written by a newer Corral (schema {v}, this one knows {SCHEMA_VERSION})"),
                    ),
                    OpenFailure::Damaged(why) => ("corrupt", format!("it is damaged ({why})")),
                    OpenFailure::Other(_) => ("corrupt", String::new()),
                };
                let aside = move_aside(&path, kind)?;
                *lock(&self.notice) = Some(format!(
                    "The conversation history could not be used: {why}. It was moved to `{}` and a new one started.",
                    aside.display()
                ));
                open_and_migrate(&path).map_err(|f| match f {
                    OpenFailure::Other(e) => e,
                    OpenFailure::Damaged(why) => Error::new(
                        ErrorCode::Io,
                        format!("a new conversation history could not be made: {why}"),
                    ),
                    OpenFailure::Newer(_) => Error::new(
                        ErrorCode::Io,
                        "a new conversation history could not be made",
                    ),
                })?
            }
        };
        conn.execute("DELETE FROM conversations WHERE deleted_ms IS NOT NULL", [])
            .map_err(|e| db_error(&e))?;
        Ok(Db {
            conn,
            _lock: lock_file,
        })
    }

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
                None => create(&tx, project, now, None)?,
            };
            let seq: i64 = tx
                .query_row(
                    "SELECT COALESCE(MAX(seq) + 1, 0) FROM messages WHERE conversation = ?1",
                    [&id],
                    |r| r.get(0),
                )
                .map_err(|e| db_error(&e))?;
            tx.execute(
                "INSERT INTO messages (conversation, seq, role, message, items, created_ms) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                params![id, seq, role, message, items, now],
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
                   model = COALESCE(?5, model) WHERE id = ?1",
                params![id, now, usage.input_tokens, usage.output_tokens, model],
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

    /// Full-text search over the project's conversations: message text,
    /// tool names and tool inputs. Every word must match (the last one as a
    /// prefix); best matches first.
    pub fn search(
        &self,
        project: &str,
        query: &str,
        limit: usize,
    ) -> Result<Vec<SearchHit>, Error> {
        let Some(expr) = fts_query(query) else {
            return Ok(Vec::new());
        };
        let limit = i64::try_from(limit.clamp(1, 500)).unwrap_or(50);
        self.with_db(|conn| {
            let mut stmt = conn
                .prepare_cached(
                    "SELECT c.id, c.title, m.seq, \
                       snippet(message_text, 0, char(2), char(3), '…', 16), c.updated_ms \
                     FROM message_text JOIN messages m ON m.id = message_text.rowid \
                     JOIN conversations c ON c.id = m.conversation \
                     WHERE message_text MATCH ?1 AND c.project = ?2 AND c.deleted_ms IS NULL \
                     ORDER BY rank LIMIT ?3",
                )
                .map_err(|e| db_error(&e))?;
            let rows = stmt
                .query_map(params![expr, project, limit], |row| {
                    Ok(SearchHit {
                        conversation: row.get(0)?,
                        title: row.get(1)?,
                        seq: row.get(2)?,
                        snippet: row.get(3)?,
                        updated_ms: row.get(4)?,
                    })
                })
                .map_err(|e| db_error(&e))?;
            rows.collect::<Result<Vec<_>, _>>()
                .map_err(|e| db_error(&e))
        })
    }

    /// The conversation as Markdown: each message under its role, tool calls
    /// with their input and their results, readable.
    pub fn markdown(&self, project: &str, id: &str) -> Result<String, Error> {
        let data = self.open(project, id)?;
        let mut messages = Vec::new();
        for entry in &data.entries {
            if let Some(raw) = &entry.message {
                let message: Message = serde_json::from_str(raw.get()).map_err(|e| {
                    Error::new(
                        ErrorCode::Io,
                        format!("a stored message cannot be read: {e}"),
                    )
                })?;
                messages.push(message);
            }
        }
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

    /// Imports a conversation saved as JSON by an earlier Corral (`file`,
    /// the project's old `conversations/NAME-HASH.json`) once: the file is
    /// left in place and its name remembered. A file that cannot be read
    /// back is moved aside as before. Returns the new conversation's id.
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

    /// Runs `PRAGMA integrity_check`; `ok` when the database is sound.
    pub fn integrity_check(&self) -> Result<String, Error> {
        self.with_db(|conn| {
            conn.query_row("PRAGMA integrity_check", [], |r| r.get(0))
                .map_err(|e| db_error(&e))
        })
    }

    /// Closes the database and releases the writer's lock.
    pub fn close(&self) {
        *lock(&self.db) = None;
    }
}

const SUMMARY_SELECT: &str =
    "SELECT c.id, c.project, c.title, c.first_line, c.created_ms, c.updated_ms, \
     c.model, c.input_tokens, c.output_tokens, \
     (SELECT COUNT(*) FROM messages m WHERE m.conversation = c.id), \
     c.forked_from, c.forked_before, c.target FROM conversations c";

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

fn create(
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

/// A stored message read only as far as eliding needs: its blocks as raw JSON.
#[derive(Deserialize)]
struct MessageBlocks<'a> {
    #[serde(borrow)]
    content: Vec<&'a RawValue>,
}

/// What says whether a block is a tool result, and which one.
#[derive(Deserialize)]
struct BlockHead<'a> {
    #[serde(rename = "type", borrow)]
    kind: std::borrow::Cow<'a, str>,
    #[serde(default, borrow)]
    tool_use_id: Option<std::borrow::Cow<'a, str>>,
    #[serde(default, borrow)]
    content: Option<&'a RawValue>,
}

/// The message with each tool result over `limit` bytes emptied, and their ids.
///
/// The stored text is spliced, not parsed into a `Message` and written
/// again: a long result is only scanned (never unescaped or copied), and
/// everything else stays byte for byte as stored.
fn elide(text: String, limit: usize) -> Result<(Option<String>, Option<Vec<String>>), Error> {
    let Ok(message) = serde_json::from_str::<MessageBlocks>(&text) else {
        return Ok((Some(text), None));
    };
    let base = text.as_ptr() as usize;
    // Byte ranges of `text` to replace with `""`, in order.
    let mut cuts: Vec<(usize, usize)> = Vec::new();
    let mut elided = Vec::new();
    for block in &message.content {
        if block.get().len() <= limit {
            continue; // its result, if any, is shorter still
        }
        let Ok(head) = serde_json::from_str::<BlockHead>(block.get()) else {
            continue;
        };
        let (Some(id), Some(content)) = (head.tool_use_id, head.content) else {
            continue;
        };
        if head.kind != "tool_result" || !longer_than(content.get(), limit) {
            continue;
        }
        let start = content.get().as_ptr() as usize - base;
        cuts.push((start, start + content.get().len()));
        elided.push(id.into_owned());
    }
    if elided.is_empty() {
        return Ok((Some(text), None));
    }
    let mut out = String::with_capacity(
        text.len() - cuts.iter().map(|(a, b)| b - a).sum::<usize>() + 2 * cuts.len(),
    );
    let mut at = 0;
    for (start, end) in cuts {
        out.push_str(&text[at..start]);
        out.push_str("\"\"");
        at = end;
    }
    out.push_str(&text[at..]);
    Ok((Some(out), Some(elided)))
}

/// Whether a JSON string (`raw`, quotes and escapes included) holds more
/// than `limit` bytes once read. An escape stands for at least one byte in
/// at most six, so only a string within that band is read to tell.
fn longer_than(raw: &str, limit: usize) -> bool {
    let inner = raw.len().saturating_sub(2);
    if inner <= limit {
        return false;
    }
    if inner > limit.saturating_mul(6) {
        return true;
    }
    serde_json::from_str::<std::borrow::Cow<str>>(raw).is_ok_and(|text| text.len() > limit)
}

fn raw(text: String) -> Result<Box<RawValue>, Error> {
    RawValue::from_string(text)
        .map_err(|e| Error::new(ErrorCode::Io, format!("a stored entry cannot be read: {e}")))
}

fn role_name(role: Role) -> &'static str {
    match role {
        Role::User => "user",
        Role::Assistant => "assistant",
    }
}

/// Cuts to at most `max` characters.
fn cut(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", text[..at].trim_end()),
        None => text.to_string(),
    }
}

/// The first non-empty line of the message's text blocks.
fn first_text_line(message: &Message) -> Option<String> {
    message.content.iter().find_map(|block| match block {
        Block::Text { text } => text
            .lines()
            .map(str::trim)
            .find(|l| !l.is_empty())
            .map(str::to_string),
        _ => None,
    })
}

/// What search finds a message by: its text, the names of the tools it
/// calls and the strings of their input (paths, commands, patterns).
/// Tool results are not indexed.
pub(crate) fn search_text(message: &Message) -> String {
    let mut out = String::new();
    for block in &message.content {
        match block {
            Block::Text { text } => push_line(&mut out, text),
            Block::ToolUse { name, input, .. } => {
                push_line(&mut out, name);
                for value in input.values() {
                    push_strings(&mut out, value);
                }
            }
            Block::ToolResult { .. } | Block::Image { .. } => {}
        }
    }
    out
}

fn push_line(out: &mut String, text: &str) {
    if text.trim().is_empty() {
        return;
    }
    if !out.is_empty() {
        out.push('\n');
    }
    out.push_str(text);
}

fn push_strings(out: &mut String, value: &Value) {
    match value {
        Value::String(s) => push_line(out, &cut(s, INDEXED_INPUT_CHARS)),
        Value::Array(values) => values.iter().for_each(|v| push_strings(out, v)),
        Value::Object(map) => map.values().for_each(|v| push_strings(out, v)),
        _ => {}
    }
}

/// The user's words as an FTS5 query: each a quoted phrase (so no word is
/// read as an operator), all required, the last also as a prefix.
fn fts_query(query: &str) -> Option<String> {
    let words: Vec<String> = query
        .split_whitespace()
        .map(|w| w.replace('"', ""))
        .filter(|w| !w.is_empty())
        .collect();
    let (last, rest) = words.split_last()?;
    let mut parts: Vec<String> = rest.iter().map(|w| format!("\"{w}\"")).collect();
    parts.push(format!("\"{last}\"*"));
    Some(parts.join(" "))
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

/// Opens the database file and brings its schema up to date, or says why
/// it cannot be used.
fn open_and_migrate(path: &Path) -> Result<Connection, OpenFailure> {
    let mut conn = Connection::open(path)?;
    conn.busy_timeout(BUSY_TIMEOUT)?;
    // WAL: a reader never blocks the writer; a commit is one append to the
    // log, which survives the process being killed at any moment.
    let mode: String = conn.query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))?;
    if !mode.eq_ignore_ascii_case("wal") {
        return Err(OpenFailure::Other(Error::new(
            ErrorCode::Io,
            format!(
                "the conversation history could not use a write-ahead log (journal mode {mode})"
            ),
        )));
    }
    conn.pragma_update(None, "synchronous", "FULL")?;
    conn.pragma_update(None, "foreign_keys", "ON")?;
    let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    if version > SCHEMA_VERSION {
        return Err(OpenFailure::Newer(version));
    }
    let check: String = conn.query_row("PRAGMA quick_check(1)", [], |r| r.get(0))?;
    if check != "ok" {
        return Err(OpenFailure::Damaged(check));
    }
    migrate(&mut conn, SCHEMA_VERSION)?;
    Ok(conn)
}

/// Applies the migrations after the database's version up to `target`.
pub(crate) fn migrate(conn: &mut Connection, target: i64) -> rusqlite::Result<()> {
    let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    for (at, step) in (1_i64..).zip(MIGRATIONS) {
        if at <= version || at > target {
            continue;
        }
        let tx = conn.transaction()?;
        step(&tx)?;
        tx.pragma_update(None, "user_version", at)?;
        tx.commit()?;
    }
    Ok(())
}

fn migrate_v1_tables(tx: &Transaction<'_>) -> rusqlite::Result<()> {
    tx.execute_batch(
        "CREATE TABLE conversations (
           id TEXT PRIMARY KEY,
           project TEXT NOT NULL,
           title TEXT NOT NULL DEFAULT '',
           first_line TEXT NOT NULL DEFAULT '',
           created_ms INTEGER NOT NULL,
           updated_ms INTEGER NOT NULL,
           model TEXT NOT NULL DEFAULT '',
           input_tokens INTEGER NOT NULL DEFAULT 0,
           output_tokens INTEGER NOT NULL DEFAULT 0,
           forked_from TEXT,
           forked_before INTEGER,
           deleted_ms INTEGER
         );
         CREATE INDEX conversations_by_project ON conversations (project, updated_ms);
         CREATE TABLE messages (
           id INTEGER PRIMARY KEY,
           conversation TEXT NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
           seq INTEGER NOT NULL,
           role TEXT,
           message TEXT,
           items TEXT NOT NULL,
           created_ms INTEGER NOT NULL,
           UNIQUE (conversation, seq)
         );
         CREATE TABLE imported (
           file TEXT PRIMARY KEY,
           conversation TEXT,
           imported_ms INTEGER NOT NULL
         );",
    )
}

/// Full-text search over the messages, filled from those already stored;
/// a message's index row goes with it when its conversation is deleted.
fn migrate_v2_search(tx: &Transaction<'_>) -> rusqlite::Result<()> {
    tx.execute_batch(
        "CREATE VIRTUAL TABLE message_text USING fts5 (body, tokenize = 'unicode61 remove_diacritics 2');
         CREATE TRIGGER messages_text_delete AFTER DELETE ON messages BEGIN
           DELETE FROM message_text WHERE rowid = old.id;
         END;",
    )?;
    let mut stmt = tx.prepare("SELECT id, message FROM messages WHERE message IS NOT NULL")?;
    let rows = stmt.query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?)))?;
    let mut insert = tx.prepare("INSERT INTO message_text (rowid, body) VALUES (?1, ?2)")?;
    for row in rows {
        let (id, message) = row?;
        if let Ok(message) = serde_json::from_str::<Message>(&message) {
            let text = search_text(&message);
            if !text.is_empty() {
                insert.execute(params![id, text])?;
            }
        }
    }
    Ok(())
}

/// The model chosen for a conversation in the model switcher, as JSON
/// (NULL: the settings' model).
fn migrate_v3_target(tx: &Transaction<'_>) -> rusqlite::Result<()> {
    tx.execute_batch("ALTER TABLE conversations ADD COLUMN target TEXT;")
}

/// Moves the database and its log aside as `history.KIND-SECS.db`; returns
/// the new path.
fn move_aside(path: &Path, kind: &str) -> Result<PathBuf, Error> {
    let secs = now_ms() / 1000;
    let mut aside = path.with_file_name(format!("history.{kind}-{secs}.db"));
    let mut n = 1;
    while aside.exists() {
        aside = path.with_file_name(format!("history.{kind}-{secs}-{n}.db"));
        n += 1;
    }
    std::fs::rename(path, &aside).map_err(|e| Error::from_io(&e, &path.display().to_string()))?;
    for suffix in ["-wal", "-shm"] {
        let from = PathBuf::from(format!("{}{suffix}", path.display()));
        if from.exists() {
            let to = PathBuf::from(format!("{}{suffix}", aside.display()));
            std::fs::rename(&from, &to)
                .map_err(|e| Error::from_io(&e, &from.display().to_string()))?;
        }
    }
    Ok(aside)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn user_version(path: &Path) -> i64 {
        Connection::open(path)
            .unwrap()
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .unwrap()
    }

    #[test]
    fn a_new_database_gets_every_migration() {
        let dir = tempfile::tempdir().unwrap();
        let history = History::new(dir.path());
        assert!(history.list("/p").unwrap().is_empty());
        history.close();
        assert_eq!(user_version(&history.path()), SCHEMA_VERSION);
        assert_eq!(SCHEMA_VERSION, 3);
    }

    #[test]
    fn a_version_1_database_is_migrated_and_its_messages_become_searchable() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("history.db");
        {
            let mut conn = Connection::open(&path).unwrap();
            migrate(&mut conn, 1).unwrap();
            conn.execute(
                "INSERT INTO conversations (id, project, title, first_line, created_ms, updated_ms) \
                 VALUES ('c1', '/p', 'Old one', 'Old one', 1, 1)",
                [],
            )
            .unwrap();
            let message = serde_json::to_string(&Message::user("the quokka question")).unwrap();
            conn.execute(
                "INSERT INTO messages (conversation, seq, role, message, items, created_ms) \
                 VALUES ('c1', 0, 'user', ?1, '[]', 1)",
                [message],
            )
            .unwrap();
        }
        assert_eq!(user_version(&path), 1);
        let history = History::new(dir.path());
        let hits = history.search("/p", "quokka", 10).unwrap();
        assert_eq!(hits.len(), 1);
        assert_eq!(
            (hits[0].conversation.as_str(), hits[0].title.as_str()),
            ("c1", "Old one")
        );
        assert_eq!(history.list("/p").unwrap()[0].entries, 1);
        history.close();
        assert_eq!(user_version(&path), SCHEMA_VERSION);
        assert!(history.take_notice().is_none());
    }

    #[test]
    fn a_failed_migration_leaves_the_version_and_data_as_they_were() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("history.db");
        let mut conn = Connection::open(&path).unwrap();
        migrate(&mut conn, 1).unwrap();
        // A table in the way of migration 2 makes it fail.
        conn.execute_batch("CREATE TABLE message_text (x);")
            .unwrap();
        assert!(migrate(&mut conn, SCHEMA_VERSION).is_err());
        let version: i64 = conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .unwrap();
        assert_eq!(version, 1);
        let triggers: i64 = conn
            .query_row(
                "SELECT COUNT(*) FROM sqlite_master WHERE type = 'trigger'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(triggers, 0);
    }

    #[test]
    fn queries_are_quoted_words_the_last_a_prefix() {
        assert_eq!(fts_query("  "), None);
        assert_eq!(fts_query("foo"), Some("\"foo\"*".into()));
        assert_eq!(fts_query("a \"b\" c*"), Some("\"a\" \"b\" \"c*\"*".into()));
    }

    #[test]
    fn titles_are_cut_by_characters() {
        assert_eq!(cut("héllo wörld", 5), "héllo…");
        assert_eq!(cut("short", 80), "short");
    }
}
