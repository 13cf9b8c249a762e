//! The database file: the writer's lock, opening and migrating it, and
//! moving aside one that cannot be used.

use crate::migrations::{migrate, SCHEMA_VERSION};
use crate::{History, MovedAside};
use corral_protocol::{Error, ErrorCode};
use rusqlite::Connection;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

/// How long a statement waits for another connection's lock.
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// The open database and the lock that makes this process its one writer.
pub(crate) struct Db {
    conn: Connection,
    _lock: File,
}

pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

pub(crate) fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

pub(crate) fn db_error(e: &rusqlite::Error) -> Error {
    Error::new(
        ErrorCode::Io,
        format!("the conversation history could not be read or written: {e}"),
    )
}

/// An error about one of the history's own files (its folder, its lock,
/// the database moved aside): Corral's, never a project's, so it carries
/// no tool's hint.
pub(crate) fn own_file_error(e: &std::io::Error, what: &str, path: &Path) -> Error {
    let why = match e.kind() {
        std::io::ErrorKind::IsADirectory => "it is a folder".to_string(),
        std::io::ErrorKind::NotADirectory => "a parent of it is not a folder".to_string(),
        std::io::ErrorKind::StorageFull => "the disk is full".to_string(),
        _ => e.to_string(),
    };
    Error::new(
        ErrorCode::Io,
        format!(
            "the conversation history's {what} `{}` could not be used: {why}",
            path.display()
        ),
    )
    .hint("It is Corral's own file in its data folder: move away what is in its place (Corral makes it again), then try again.")
    .detail("path", path.display().to_string())
    .detail("reason", "own_file")
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
            aside: Mutex::new(None),
        }
    }

    /// The database this process found unusable and moved aside, if it did.
    pub fn moved_aside(&self) -> Option<MovedAside> {
        lock(&self.aside).clone()
    }

    /// The databases moved aside in this history's folder (by this or an
    /// earlier run), oldest first.
    // The history's own folder in the app's data folder, never a project's.
    #[allow(clippy::disallowed_methods)]
    pub fn moved_aside_files(&self) -> Vec<PathBuf> {
        let mut files: Vec<PathBuf> = std::fs::read_dir(&self.dir)
            .into_iter()
            .flatten()
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| {
                let name = p.file_name().map(|n| n.to_string_lossy().into_owned());
                name.is_some_and(|n| {
                    (n.starts_with("history.corrupt-") || n.starts_with("history.newer-"))
                        && n.ends_with(".db")
                })
            })
            .collect();
        files.sort_by_key(|p| std::fs::metadata(p).and_then(|m| m.modified()).ok());
        files
    }

    /// A conversation not found, explained when the history it may have
    /// been in was moved aside.
    fn explain_missing(&self, error: Error) -> Error {
        if error.code != ErrorCode::NotFound || !error.details.contains_key("conversation") {
            return error;
        }
        if let Some(aside) = self.moved_aside() {
            let path = aside.path.display().to_string();
            return Error::new(
                ErrorCode::NotFound,
                format!("{}: {}", error.message, aside.said()),
            )
            .hint(format!(
                "`corral-cli history check {path}` lists what can still be read from it; `corral-cli history restore {path}` copies that into the new history."
            ))
            .detail("reason", "moved_aside")
            .detail("moved_to", path)
            .detail("conversation", error.details.get("conversation").cloned().unwrap_or_default());
        }
        match self.moved_aside_files().last() {
            Some(path) => {
                let path = path.display().to_string();
                let hint = format!(
                    "{} A history that could not be used was moved to `{path}`: `corral-cli history check {path}` lists what it still holds.",
                    error.hint
                );
                error.hint(hint).detail("moved_to", path)
            }
            None => error,
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
    pub(crate) fn with_db<T>(
        &self,
        f: impl FnOnce(&mut Connection) -> Result<T, Error>,
    ) -> Result<T, Error> {
        let mut guard = lock(&self.db);
        if guard.is_none() {
            *guard = Some(self.open_db()?);
        }
        let result = match guard.as_mut() {
            Some(db) => f(&mut db.conn),
            None => Err(Error::new(
                ErrorCode::Io,
                "the conversation history is not open",
            )),
        };
        drop(guard);
        result.map_err(|e| self.explain_missing(e))
    }

    /// Takes the writer's lock, opens the database, moves an unusable one
    /// aside, migrates, and purges conversations whose undo time is over.
    // The history's own folder in the app's data folder, never a project's.
    #[allow(clippy::disallowed_methods)]
    fn open_db(&self) -> Result<Db, Error> {
        let shown = self.dir.display().to_string();
        std::fs::create_dir_all(&self.dir).map_err(|e| own_file_error(&e, "folder", &self.dir))?;
        let lock_path = self.dir.join("history.lock");
        let lock_file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(|e| own_file_error(&e, "lock", &lock_path))?;
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
            Err(e) => return Err(own_file_error(&std::io::Error::from(e), "lock", &lock_path)),
        }
        let path = self.path();
        let conn = match open_and_migrate(&path) {
            Ok(conn) => conn,
            Err(OpenFailure::Other(e)) => return Err(e),
            Err(failure) => {
                let (kind, why) = match failure {
                    OpenFailure::Newer(v) => (
                        "newer",
                        format!("schema {v}, this one knows {SCHEMA_VERSION}"),
                    ),
                    OpenFailure::Damaged(why) => ("corrupt", why),
                    OpenFailure::Other(_) => ("corrupt", String::new()),
                };
                let aside = move_aside(&path, kind)?;
                let moved = MovedAside {
                    kind: if kind == "newer" { "newer" } else { "damaged" }.to_string(),
                    why,
                    path: aside,
                };
                let said = moved.said();
                *lock(&self.notice) = Some(format!("{}{}.", said[..1].to_uppercase(), &said[1..]));
                *lock(&self.aside) = Some(moved);
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

/// Moves the database and its log aside as `history.KIND-SECS.db`; returns
/// the new path.
// The history database in the app's data folder, never a project's.
#[allow(clippy::disallowed_methods)]
fn move_aside(path: &Path, kind: &str) -> Result<PathBuf, Error> {
    let secs = now_ms() / 1000;
    let mut aside = path.with_file_name(format!("history.{kind}-{secs}.db"));
    let mut n = 1;
    while aside.exists() {
        aside = path.with_file_name(format!("history.{kind}-{secs}-{n}.db"));
        n += 1;
    }
    std::fs::rename(path, &aside).map_err(|e| own_file_error(&e, "database", path))?;
    for suffix in ["-wal", "-shm"] {
        let from = PathBuf::from(format!("{}{suffix}", path.display()));
        if from.exists() {
            let to = PathBuf::from(format!("{}{suffix}", aside.display()));
            std::fs::rename(&from, &to).map_err(|e| own_file_error(&e, "log", &from))?;
        }
    }
    Ok(aside)
}
