//! The schema, one migration per version.

use crate::text::search_text;
use corral_llm::Message;
use rusqlite::{params, Connection, Transaction};

/// The schema this build writes. A database whose `user_version` is above
/// it came from a newer Corral.
pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

/// One migration per schema version, applied in order in a transaction
/// each; `user_version` records how many have run.
type Migration = fn(&Transaction<'_>) -> rusqlite::Result<()>;
const MIGRATIONS: &[Migration] = &[
    migrate_v1_tables,
    migrate_v2_search,
    migrate_v3_target,
    migrate_v4_usage,
];

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

/// What each entry's requests used and cost (for the days' totals), and
/// the conversation's cache tokens and cost. A conversation from before
/// keeps its totals, with no known cost: they go on its last entry, one
/// unpriced, so the days add up to the conversations.
fn migrate_v4_usage(tx: &Transaction<'_>) -> rusqlite::Result<()> {
    tx.execute_batch(
        "ALTER TABLE conversations ADD COLUMN cache_read_tokens INTEGER NOT NULL DEFAULT 0;
         ALTER TABLE conversations ADD COLUMN cache_write_tokens INTEGER NOT NULL DEFAULT 0;
         ALTER TABLE conversations ADD COLUMN cost_usd REAL NOT NULL DEFAULT 0;
         ALTER TABLE conversations ADD COLUMN unpriced INTEGER NOT NULL DEFAULT 0;
         ALTER TABLE messages ADD COLUMN input_tokens INTEGER NOT NULL DEFAULT 0;
         ALTER TABLE messages ADD COLUMN output_tokens INTEGER NOT NULL DEFAULT 0;
         ALTER TABLE messages ADD COLUMN cache_read_tokens INTEGER NOT NULL DEFAULT 0;
         ALTER TABLE messages ADD COLUMN cache_write_tokens INTEGER NOT NULL DEFAULT 0;
         ALTER TABLE messages ADD COLUMN cost_usd REAL NOT NULL DEFAULT 0;
         ALTER TABLE messages ADD COLUMN unpriced INTEGER NOT NULL DEFAULT 0;
         UPDATE conversations SET unpriced = 1 WHERE input_tokens > 0 OR output_tokens > 0;
         UPDATE messages SET input_tokens = c.input_tokens, output_tokens = c.output_tokens, unpriced = 1
           FROM conversations c
           WHERE c.id = messages.conversation AND c.unpriced = 1
             AND messages.seq = (SELECT MAX(seq) FROM messages m WHERE m.conversation = c.id);
         CREATE INDEX messages_by_time ON messages (created_ms) WHERE input_tokens > 0 OR output_tokens > 0 OR unpriced > 0;",
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::History;
    use std::path::Path;

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
        assert_eq!(SCHEMA_VERSION, 4);
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
    fn a_version_3_history_keeps_its_totals_with_their_cost_unknown() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("history.db");
        {
            let mut conn = Connection::open(&path).unwrap();
            migrate(&mut conn, 3).unwrap();
            conn.execute_batch(
                "INSERT INTO conversations (id, project, title, created_ms, updated_ms, input_tokens, output_tokens) \
                   VALUES ('old', '/p', 'Old', 1, 1, 1200, 80), ('empty', '/p', 'Empty', 1, 1, 0, 0);
                 INSERT INTO messages (conversation, seq, role, message, items, created_ms) VALUES
                   ('old', 0, 'user', NULL, '[]', 1740787200000),
                   ('old', 1, 'assistant', NULL, '[]', 1740873600000),
                   ('empty', 0, 'user', NULL, '[]', 1740873600000);",
            )
            .unwrap();
        }
        let history = History::new(dir.path());
        let listed = history.list("/p").unwrap();
        let old = listed.iter().find(|c| c.id == "old").unwrap();
        assert_eq!(
            (
                old.input_tokens,
                old.output_tokens,
                old.cost_usd,
                old.unpriced
            ),
            (1200, 80, 0.0, 1)
        );
        let empty = listed.iter().find(|c| c.id == "empty").unwrap();
        assert_eq!((empty.input_tokens, empty.unpriced), (0, 0));
        // The totals are on the old conversation's last entry's day.
        let days = history.usage_by_day(0, 10).unwrap();
        assert_eq!(days.len(), 1);
        assert_eq!(
            (
                days[0].day.as_str(),
                days[0].usage.input_tokens,
                days[0].usage.output_tokens,
                days[0].usage.unpriced
            ),
            ("2025-03-02", 1200, 80, 1)
        );
        // New requests add to them, priced.
        let entry = crate::NewEntry {
            message: Some(Message::assistant("more")),
            items: vec![],
            usage: Some(crate::TokenUsage {
                input_tokens: 10,
                output_tokens: 1,
                cost_usd: 0.25,
                ..crate::TokenUsage::default()
            }),
        };
        history.append("/p", Some("old"), &entry, "m").unwrap();
        let old = history
            .list("/p")
            .unwrap()
            .into_iter()
            .find(|c| c.id == "old")
            .unwrap();
        assert_eq!(
            (old.input_tokens, old.cost_usd, old.unpriced),
            (1210, 0.25, 1)
        );
        history.close();
        assert_eq!(user_version(&path), SCHEMA_VERSION);
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
}
