//! SQLite, embedded: a [`Database`] over one file whose options are PRAGMAs applied on every
//! connection and read back, with the page-cache counters of all its connections.

mod conn;
pub mod managed;
mod status;

pub use bakeoff_core::dbplan::sqlite::{JournalMode, SqliteOptions, Synchronous};
pub use status::CacheCounters;

use crate::backend::{Conn, Database, Db, DbError};
use conn::SqliteConn;
use rusqlite::Connection;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Prepared statements a connection keeps (TPC-C uses about 40).
const STATEMENT_CACHE: usize = 128;

/// Page-cache counters summed over a database's connections.
#[derive(Default)]
pub(crate) struct CacheTotals {
    hits: AtomicU64,
    misses: AtomicU64,
    writes: AtomicU64,
    /// CPU ns the connections' threads spent inside SQLite's calls.
    cpu_ns: AtomicU64,
}

impl CacheTotals {
    fn add(&self, d: &CacheCounters) {
        self.hits.fetch_add(d.hits, Ordering::Relaxed);
        self.misses.fetch_add(d.misses, Ordering::Relaxed);
        self.writes.fetch_add(d.writes, Ordering::Relaxed);
    }

    /// Runs `call` (a call into SQLite) and adds the CPU time this thread spent in it.
    pub(crate) fn timed<T>(&self, call: impl FnOnce() -> T) -> T {
        let start = thread_cpu_ns();
        let out = call();
        let spent = thread_cpu_ns().saturating_sub(start);
        self.cpu_ns.fetch_add(spent, Ordering::Relaxed);
        out
    }

    fn get(&self) -> CacheCounters {
        CacheCounters {
            hits: self.hits.load(Ordering::Relaxed),
            misses: self.misses.load(Ordering::Relaxed),
            writes: self.writes.load(Ordering::Relaxed),
            cpu_ns: self.cpu_ns.load(Ordering::Relaxed),
        }
    }
}

/// This thread's CPU time (user and system), ns; 0 if the clock cannot be read.
fn thread_cpu_ns() -> u64 {
    use nix::time::{clock_gettime, ClockId};
    clock_gettime(ClockId::CLOCK_THREAD_CPUTIME_ID).map_or(0, |t| {
        (t.tv_sec() as u64).saturating_mul(1_000_000_000) + t.tv_nsec() as u64
    })
}

/// A SQLite database file and the options every connection to it runs with.
pub struct Sqlite {
    path: PathBuf,
    options: SqliteOptions,
    settings: BTreeMap<String, String>,
    totals: Arc<CacheTotals>,
}

impl Sqlite {
    /// Opens (creating if needed) the database at `path`: one connection applies `options`
    /// and reads every setting back, so a setting SQLite did not take is an error here.
    pub fn open(path: &Path, options: SqliteOptions) -> Result<Sqlite, DbError> {
        let conn = open_connection(path, &options)?;
        let settings = read_settings(&conn, path)?;
        Ok(Sqlite {
            path: path.to_path_buf(),
            options,
            settings,
            totals: Arc::default(),
        })
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The options it was opened with.
    pub fn options(&self) -> &SqliteOptions {
        &self.options
    }

    /// The settings in force, as read back from SQLite: `journal_mode`, `synchronous`,
    /// `page_size`, `cache_size`, `busy_timeout` (ms), and `version`.
    pub fn settings(&self) -> BTreeMap<String, String> {
        self.settings.clone()
    }

    /// The version of the SQLite library bakeoff embeds.
    pub fn version() -> &'static str {
        rusqlite::version()
    }

    /// Page-cache hits, misses and writes of every connection so far (up to each open
    /// connection's last commit or rollback); take it at both ends of a window and subtract.
    pub fn cache_counters(&self) -> CacheCounters {
        self.totals.get()
    }
}

impl Database for Sqlite {
    fn kind(&self) -> Db {
        Db::Sqlite
    }

    fn connect(&self) -> Result<Box<dyn Conn>, DbError> {
        let conn = open_connection(&self.path, &self.options)?;
        let path = self.path.display().to_string();
        Ok(Box::new(SqliteConn::new(conn, path, self.totals.clone())))
    }
}

fn failed(path: &Path, what: &str, e: rusqlite::Error) -> DbError {
    DbError::other(format!("SQLite database {}: {what}: {e}", path.display()))
}

/// Opens a connection with `options` applied and checked.
fn open_connection(path: &Path, options: &SqliteOptions) -> Result<Connection, DbError> {
    let conn = Connection::open(path).map_err(|e| {
        failed(
            path,
            "cannot open it (does its directory exist and is it writable?)",
            e,
        )
    })?;
    conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
    conn.busy_timeout(Duration::from_millis(options.busy_timeout_ms.into()))
        .map_err(|e| failed(path, "setting busy_timeout", e))?;
    // page_size first: it only takes effect before the first table makes the file.
    if let Some(size) = options.page_size {
        apply(&conn, path, "page_size", &size.to_string(), |got| {
            format!(
                "{got} (page_size takes effect only when the database is created: remove {} \
                 or leave page_size unset)",
                path.display()
            )
        })?;
    }
    if let Some(mode) = options.journal_mode {
        apply(&conn, path, "journal_mode", mode.name(), |got| {
            format!("{got} (SQLite refused the mode for this file)")
        })?;
    }
    if let Some(sync) = options.synchronous {
        apply(
            &conn,
            path,
            "synchronous",
            &(sync as i64).to_string(),
            |g| g,
        )?;
    }
    if let Some(pages) = options.cache_size {
        apply(&conn, path, "cache_size", &pages.to_string(), |g| g)?;
    }
    Ok(conn)
}

/// Sets `PRAGMA name = value` and reads it back; `explain` words what came back instead.
fn apply(
    conn: &Connection,
    path: &Path,
    name: &str,
    value: &str,
    explain: impl FnOnce(String) -> String,
) -> Result<(), DbError> {
    conn.execute_batch(&format!("PRAGMA {name} = {value}"))
        .map_err(|e| failed(path, &format!("setting {name} = {value}"), e))?;
    let got = pragma(conn, path, name)?;
    if got.eq_ignore_ascii_case(value) {
        Ok(())
    } else {
        Err(DbError::other(format!(
            "SQLite database {}: {name} = {value} did not take effect: it is {}",
            path.display(),
            explain(got)
        )))
    }
}

/// The value `PRAGMA name` reports, as text.
fn pragma(conn: &Connection, path: &Path, name: &str) -> Result<String, DbError> {
    conn.query_row(&format!("PRAGMA {name}"), [], |row| {
        row.get_ref(0).map(|v| match v {
            rusqlite::types::ValueRef::Integer(i) => i.to_string(),
            other => String::from_utf8_lossy(other.as_bytes().unwrap_or_default()).into(),
        })
    })
    .map_err(|e| failed(path, &format!("reading {name}"), e))
}

/// Every setting bakeoff applies, as SQLite reports it.
fn read_settings(conn: &Connection, path: &Path) -> Result<BTreeMap<String, String>, DbError> {
    let mut settings = BTreeMap::new();
    for name in [
        "journal_mode",
        "synchronous",
        "page_size",
        "cache_size",
        "busy_timeout",
    ] {
        let mut value = pragma(conn, path, name)?;
        if name == "synchronous" {
            if let Some(level) = value.parse().ok().and_then(Synchronous::from_level) {
                value = level.name().to_string();
            }
        }
        settings.insert(name.to_string(), value);
    }
    settings.insert("version".into(), Sqlite::version().into());
    Ok(settings)
}
