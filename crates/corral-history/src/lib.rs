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
//! starts a new one and says so once (`take_notice`); a conversation asked
//! for afterwards and not found names the file (`moved_aside`), and
//! `recover` reads what can still be read out of it (`check_file`,
//! `History::restore_from`).
//!
//! The crate by domain: `db` opens the database (the writer's lock, moving
//! an unusable one aside), `migrations` brings its schema up to date,
//! `conversations` appends, opens, forks and deletes, `search` finds
//! entries by their words, `usage` sums the tokens and cost by day, `legacy` imports the JSON files of earlier
//! versions, `text` holds what is read out of a message (titles, search
//! text, eliding long results) and `markdown` exports one.

mod conversations;
mod db;
mod legacy;
pub mod markdown;
mod migrations;
mod recover;
mod search;
mod text;
mod usage;

pub use migrations::SCHEMA_VERSION;
pub use recover::{check_file, Readable, Restored};

use corral_llm::Message;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::Value;
use std::path::PathBuf;
use std::sync::Mutex;

/// A conversation as listed.
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
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
    /// Of `input_tokens`, those read from the provider's prompt cache.
    #[ts(type = "number")]
    pub cache_read_tokens: i64,
    /// Of `input_tokens`, those written to the provider's prompt cache.
    #[ts(type = "number")]
    pub cache_write_tokens: i64,
    /// What its requests of known price cost, in US dollars.
    pub cost_usd: f64,
    /// How many of its requests (or stored entries) had no known price:
    /// above 0, `cost_usd` is only part of the cost.
    #[ts(type = "number")]
    pub unpriced: i64,
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

/// The tokens of one or more model requests, and what they cost.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, ts_rs::TS)]
pub struct TokenUsage {
    /// Prompt tokens, cached ones included.
    #[ts(type = "number")]
    pub input_tokens: i64,
    #[ts(type = "number")]
    pub output_tokens: i64,
    /// Of `input_tokens`, those read from the provider's prompt cache.
    #[serde(default)]
    #[ts(type = "number")]
    pub cache_read_tokens: i64,
    /// Of `input_tokens`, those written to the provider's prompt cache.
    #[serde(default)]
    #[ts(type = "number")]
    pub cache_write_tokens: i64,
    /// What the requests of known price cost, in US dollars.
    #[serde(default)]
    pub cost_usd: f64,
    /// How many requests had no known price.
    #[serde(default)]
    #[ts(type = "number")]
    pub unpriced: i64,
}

/// The tokens and cost of one day's model requests, every project's
/// conversations together.
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
pub struct DayUsage {
    /// The day, `YYYY-MM-DD`, in the time zone of the offset asked with.
    pub day: String,
    #[serde(flatten)]
    pub usage: TokenUsage,
    /// How many conversations made requests that day.
    #[ts(type = "number")]
    pub conversations: i64,
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

/// A history database that could not be used and was moved aside (a new
/// one was started in its place).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MovedAside {
    /// `damaged` (not SQLite, damaged pages) or `newer` (a newer schema).
    pub kind: String,
    /// Why, as SQLite or the version said it.
    pub why: String,
    /// Where it is now.
    pub path: PathBuf,
}

impl MovedAside {
    /// What happened, as the user is told: what it was, where it went.
    pub fn said(&self) -> String {
        let what = match self.kind.as_str() {
            "newer" => "is from a newer Corral",
            _ => "was damaged",
        };
        format!(
            "the conversation history {what} ({}) and was moved to `{}`; a new one was started",
            self.why,
            self.path.display()
        )
    }
}

/// The history of every project, opened on first use.
pub struct History {
    dir: PathBuf,
    db: Mutex<Option<db::Db>>,
    notice: Mutex<Option<String>>,
    /// The database this process moved aside, kept to explain a
    /// conversation that is no longer there.
    aside: Mutex<Option<MovedAside>>,
}
