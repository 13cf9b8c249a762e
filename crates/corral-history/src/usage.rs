//! What the model requests used and cost, day by day: every project's
//! conversations together, from the usage stored with each entry.

use crate::db::db_error;
use crate::{DayUsage, History, TokenUsage};
use corral_protocol::Error;
use rusqlite::params;

impl History {
    /// The newest `days` days that had model requests, newest first, each
    /// with its tokens, cost and how many conversations made them. A day
    /// runs midnight to midnight at `utc_offset_minutes` east of UTC (the
    /// window's time zone as it is now). Every project's conversations
    /// count; a deleted one's requests leave the totals with it.
    pub fn usage_by_day(
        &self,
        utc_offset_minutes: i64,
        days: usize,
    ) -> Result<Vec<DayUsage>, Error> {
        let days = i64::try_from(days).unwrap_or(i64::MAX);
        self.with_db(|conn| {
            let mut stmt = conn
                .prepare_cached(
                    "SELECT date((m.created_ms + ?1 * 60000) / 1000, 'unixepoch') AS day, \
                       SUM(m.input_tokens), SUM(m.output_tokens), SUM(m.cache_read_tokens), \
                       SUM(m.cache_write_tokens), SUM(m.cost_usd), SUM(m.unpriced), \
                       COUNT(DISTINCT m.conversation) \
                     FROM messages m JOIN conversations c ON c.id = m.conversation \
                     WHERE c.deleted_ms IS NULL \
                       AND (m.input_tokens > 0 OR m.output_tokens > 0 OR m.unpriced > 0) \
                     GROUP BY day ORDER BY day DESC LIMIT ?2",
                )
                .map_err(|e| db_error(&e))?;
            let rows = stmt
                .query_map(params![utc_offset_minutes, days], |row| {
                    Ok(DayUsage {
                        day: row.get(0)?,
                        usage: TokenUsage {
                            input_tokens: row.get(1)?,
                            output_tokens: row.get(2)?,
                            cache_read_tokens: row.get(3)?,
                            cache_write_tokens: row.get(4)?,
                            cost_usd: row.get(5)?,
                            unpriced: row.get(6)?,
                        },
                        conversations: row.get(7)?,
                    })
                })
                .map_err(|e| db_error(&e))?;
            rows.collect::<Result<Vec<_>, _>>()
                .map_err(|e| db_error(&e))
        })
    }
}
