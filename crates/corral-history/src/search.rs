//! Finding entries by their words: FTS5 over each message's text, tool
//! names and tool inputs.

use crate::db::db_error;
use crate::{History, SearchHit};
use corral_protocol::Error;
use rusqlite::params;

impl History {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queries_are_quoted_words_the_last_a_prefix() {
        assert_eq!(fts_query("  "), None);
        assert_eq!(fts_query("foo"), Some("\"foo\"*".into()));
        assert_eq!(fts_query("a \"b\" c*"), Some("\"a\" \"b\" \"c*\"*".into()));
    }
}
