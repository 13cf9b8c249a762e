//! Reading what can still be read out of a history moved aside (damaged,
//! or from a newer Corral), and copying it into the history in use.
//!
//! The file moved aside is never changed: it is copied (with its log) into
//! a scratch folder beside it and read there, row by row, each row that
//! cannot be read counted and skipped, a table whose pages are gone read
//! up to where they go.

use crate::db::{db_error, now_ms, own_file_error};
use crate::{History, NewEntry};
use corral_llm::Message;
use corral_protocol::{Error, ErrorCode};
use rusqlite::{Connection, OpenFlags};
use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A conversation found in a history moved aside, and how much of it can
/// be read.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Readable {
    pub id: String,
    /// Its project; empty when its row could not be read.
    pub project: String,
    pub title: String,
    /// The entries that can be read whole.
    pub entries: usize,
    /// The entries found that cannot be read (their text broken).
    pub damaged: usize,
}

/// What a restore did with one conversation.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Restored {
    pub id: String,
    pub project: String,
    pub title: String,
    /// The entries copied into the history.
    pub entries: usize,
    /// Why it was not copied, when it was not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skipped: Option<String>,
}

struct Found {
    readable: Readable,
    model: String,
    entries: Vec<NewEntry>,
}

/// The conversations that can be read out of the history file `path` (one
/// moved aside), oldest first as stored.
pub fn check_file(path: &Path) -> Result<Vec<Readable>, Error> {
    Ok(read(path)?.into_iter().map(|f| f.readable).collect())
}

impl History {
    /// Copies what can be read out of the history file `path` (one moved
    /// aside) into this history, each conversation under its own id (so
    /// `--resume ID` finds it again); one whose id is here already, or
    /// whose project could not be read, is left out and said so. The
    /// tokens and cost it had are not copied.
    pub fn restore_from(&self, path: &Path) -> Result<Vec<Restored>, Error> {
        if path == self.path() {
            return Err(Error::invalid_input(
                "that is the history in use; restore reads a history moved aside",
            )
            .hint("Name a file `history.corrupt-…db` or `history.newer-…db` of the data folder."));
        }
        let mut done = Vec::new();
        for found in read(path)? {
            let Readable {
                id, project, title, ..
            } = found.readable;
            let skipped = if project.is_empty() {
                Some("its project could not be read".to_string())
            } else if found.entries.is_empty() {
                Some("none of its entries could be read".to_string())
            } else if self.project_of(&id)?.is_some() {
                Some("a conversation with its id is in the history already".to_string())
            } else {
                None
            };
            let mut copied = 0;
            if skipped.is_none() {
                let mut into: Option<String> = None;
                for entry in &found.entries {
                    let appended = self.append_new_as(
                        &project,
                        into.as_deref(),
                        Some(&id),
                        entry,
                        &found.model,
                    )?;
                    into = Some(appended.conversation);
                    copied += 1;
                }
                if let (Some(into), false) = (&into, title.is_empty()) {
                    self.rename(&project, into, &title)?;
                }
            }
            done.push(Restored {
                id,
                project,
                title,
                entries: copied,
                skipped,
            });
        }
        Ok(done)
    }
}

/// Reads the file in a copy of it: every conversation row and message row
/// that can be read.
// The history's own files in the app's data folder, never a project's.
#[allow(clippy::disallowed_methods)]
fn read(path: &Path) -> Result<Vec<Found>, Error> {
    if !path.is_file() {
        return Err(Error::new(
            ErrorCode::NotFound,
            format!("there is no history file `{}`", path.display()),
        )
        .hint("Name a file `history.corrupt-…db` or `history.newer-…db` of the data folder; `corral-cli history check` lists them.")
        .detail("path", path.display().to_string()));
    }
    let parent = path.parent().unwrap_or(Path::new("."));
    let scratch = parent.join(format!(
        "history.reading-{}-{}",
        std::process::id(),
        now_ms()
    ));
    std::fs::create_dir_all(&scratch)
        .map_err(|e| own_file_error(&e, "scratch folder", &scratch))?;
    let result = (|| {
        let copy = scratch.join("history.db");
        std::fs::copy(path, &copy).map_err(|e| own_file_error(&e, "copy", &copy))?;
        let wal = PathBuf::from(format!("{}-wal", path.display()));
        if wal.is_file() {
            let to = scratch.join("history.db-wal");
            std::fs::copy(&wal, &to).map_err(|e| own_file_error(&e, "copy", &to))?;
        }
        let conn = Connection::open_with_flags(&copy, OpenFlags::SQLITE_OPEN_READ_WRITE)
            .map_err(|e| db_error(&e))?;
        Ok(read_conn(&conn))
    })();
    let _ = std::fs::remove_dir_all(&scratch);
    result
}

fn read_conn(conn: &Connection) -> Vec<Found> {
    // A file cut short says it holds more pages than it has: SQLite reads
    // it only so (this is a copy, never written).
    let _ = conn.pragma_update(None, "writable_schema", "ON");
    let mut found: BTreeMap<String, Found> = BTreeMap::new();
    let mut order: Vec<String> = Vec::new();
    let mut add = |found: &mut BTreeMap<String, Found>, id: &str| {
        if !found.contains_key(id) {
            order.push(id.to_string());
            found.insert(
                id.to_string(),
                Found {
                    readable: Readable {
                        id: id.to_string(),
                        project: String::new(),
                        title: String::new(),
                        entries: 0,
                        damaged: 0,
                    },
                    model: String::new(),
                    entries: Vec::new(),
                },
            );
        }
    };
    each_row(
        conn,
        "id, project, title, model, deleted_ms",
        "conversations",
        |row| {
            let id: String = row.get(1)?;
            let deleted: Option<i64> = row.get(5).ok().flatten();
            if deleted.is_some() {
                return Ok(());
            }
            add(&mut found, &id);
            if let Some(f) = found.get_mut(&id) {
                f.readable.project = row.get(2)?;
                f.readable.title = row.get(3)?;
                f.model = row.get(4)?;
            }
            Ok(())
        },
    );
    let mut entries: BTreeMap<String, Vec<(i64, NewEntry)>> = BTreeMap::new();
    each_row(
        conn,
        "conversation, seq, message, items",
        "messages",
        |row| {
            let id: String = row.get(1)?;
            add(&mut found, &id);
            let seq: i64 = row.get(2)?;
            let message: Option<String> = row.get(3).ok().flatten();
            let items: Option<String> = row.get(4).ok();
            match entry_of(message.as_deref(), items.as_deref()) {
                Some(entry) => entries.entry(id).or_default().push((seq, entry)),
                None => {
                    if let Some(f) = found.get_mut(&id) {
                        f.readable.damaged += 1;
                    }
                }
            }
            Ok(())
        },
    );
    for (id, mut list) in entries {
        list.sort_by_key(|(seq, _)| *seq);
        if let Some(f) = found.get_mut(&id) {
            f.readable.entries = list.len();
            f.entries = list.into_iter().map(|(_, entry)| entry).collect();
        }
    }
    // A conversation deleted (or whose row is gone) with no entry read is
    // nothing to list.
    order
        .into_iter()
        .filter_map(|id| found.remove(&id))
        .filter(|f| !f.readable.project.is_empty() || f.readable.entries + f.readable.damaged > 0)
        .collect()
}

/// An entry as it can be appended again; `None` when its text is broken.
fn entry_of(message: Option<&str>, items: Option<&str>) -> Option<NewEntry> {
    let items: Vec<Value> = serde_json::from_str(items?).ok()?;
    let message = match message {
        Some(text) => Some(serde_json::from_str::<Message>(text).ok()?),
        None => None,
    };
    Some(NewEntry {
        message,
        items,
        usage: None,
    })
}

/// Runs `each` on every row of `table` (the rowid, then `columns`) that
/// can be read, in the table's own order and never by an index (one may
/// be damaged when the table is not). A row `each` cannot read is
/// skipped; where a page cannot be read, the scan goes on past it: from
/// rowids further and further on, until one can be read again.
fn each_row(
    conn: &Connection,
    columns: &str,
    table: &str,
    mut each: impl FnMut(&rusqlite::Row<'_>) -> rusqlite::Result<()>,
) {
    let sql =
        format!("SELECT rowid, {columns} FROM {table} NOT INDEXED WHERE rowid > ?1 ORDER BY rowid");
    let Ok(mut stmt) = conn.prepare(&sql) else {
        return;
    };
    // The last rowid read, and how far past it the next try starts.
    let mut last: i64 = 0;
    let mut step: i64 = 0;
    while step <= MAX_SKIP {
        let Ok(mut rows) = stmt.query([last.saturating_add(step)]) else {
            return;
        };
        let mut read_any = false;
        loop {
            match rows.next() {
                Ok(Some(row)) => {
                    read_any = true;
                    if let Ok(rowid) = row.get::<_, i64>(0) {
                        last = rowid;
                    }
                    let _ = each(row);
                }
                Ok(None) => return,
                Err(_) => break,
            }
        }
        step = match (read_any, step) {
            (true, _) => 0,
            (false, 0) => 1,
            (false, n) => n * 2,
        };
    }
}

/// How far past the last row read a damaged table is still looked into.
const MAX_SKIP: i64 = 1 << 24;
