//! SQLite's options as a plan carries them, typed (`sqlite.journal_mode=wal`, checked once, in
//! [`super::plan_db`]): each one a PRAGMA the db crate applies on every connection and reads
//! back.

use super::{Db, SQLITE_KEYS};
use crate::settings::SettingError;
use crate::values::Lookup;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// `PRAGMA journal_mode`: how SQLite makes a transaction atomic.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum JournalMode {
    /// A rollback journal, deleted at commit (SQLite's default).
    Delete,
    /// A rollback journal, truncated to zero at commit.
    Truncate,
    /// A rollback journal whose header is zeroed at commit.
    Persist,
    /// The rollback journal in memory.
    Memory,
    /// A write-ahead log: readers do not block the writer.
    Wal,
    /// No journal: a crash mid-transaction corrupts the database.
    Off,
}

impl JournalMode {
    /// Every mode, as SQLite names them.
    pub const ALL: [JournalMode; 6] = [
        JournalMode::Delete,
        JournalMode::Truncate,
        JournalMode::Persist,
        JournalMode::Memory,
        JournalMode::Wal,
        JournalMode::Off,
    ];

    /// The name SQLite uses (and reports back).
    pub fn name(self) -> &'static str {
        match self {
            JournalMode::Delete => "delete",
            JournalMode::Truncate => "truncate",
            JournalMode::Persist => "persist",
            JournalMode::Memory => "memory",
            JournalMode::Wal => "wal",
            JournalMode::Off => "off",
        }
    }
}

/// `PRAGMA synchronous`: when SQLite waits for the device.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Synchronous {
    /// Never syncs.
    Off,
    /// Syncs at critical moments (in WAL mode: at checkpoints, not at every commit).
    Normal,
    /// Syncs at every commit.
    Full,
    /// As `full`, and syncs the directory after unlinking a rollback journal.
    Extra,
}

impl Synchronous {
    /// Every level, in SQLite's numeric order (0..=3).
    pub const ALL: [Synchronous; 4] = [
        Synchronous::Off,
        Synchronous::Normal,
        Synchronous::Full,
        Synchronous::Extra,
    ];

    /// The name SQLite accepts.
    pub fn name(self) -> &'static str {
        match self {
            Synchronous::Off => "off",
            Synchronous::Normal => "normal",
            Synchronous::Full => "full",
            Synchronous::Extra => "extra",
        }
    }

    /// The level from the number `PRAGMA synchronous` reports.
    pub fn from_level(level: i64) -> Option<Synchronous> {
        usize::try_from(level)
            .ok()
            .and_then(|i| Synchronous::ALL.get(i).copied())
    }
}

fn parse_named<T: Copy>(all: &[T], name: fn(T) -> &'static str, s: &str) -> Option<T> {
    all.iter()
        .copied()
        .find(|v| name(*v).eq_ignore_ascii_case(s.trim()))
}

fn names<T: Copy>(all: &[T], name: fn(T) -> &'static str) -> String {
    all.iter().map(|v| name(*v)).collect::<Vec<_>>().join("|")
}

impl FromStr for JournalMode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        parse_named(&JournalMode::ALL, JournalMode::name, s)
            .ok_or_else(|| format!("expected {}", names(&JournalMode::ALL, JournalMode::name)))
    }
}

impl FromStr for Synchronous {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        parse_named(&Synchronous::ALL, Synchronous::name, s)
            .ok_or_else(|| format!("expected {}", names(&Synchronous::ALL, Synchronous::name)))
    }
}

impl fmt::Display for JournalMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl fmt::Display for Synchronous {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The options applied to every connection; `None` leaves SQLite's default (still read back).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SqliteOptions {
    /// `PRAGMA journal_mode`.
    pub journal_mode: Option<JournalMode>,
    /// `PRAGMA synchronous`.
    pub synchronous: Option<Synchronous>,
    /// `PRAGMA page_size` in bytes: a power of two from 512 to 65536, effective only when the
    /// database file is created.
    pub page_size: Option<u32>,
    /// `PRAGMA cache_size`: pages if positive, KiB if negative (as SQLite means it).
    pub cache_size: Option<i64>,
    /// How long a connection waits for a lock before the statement fails as busy.
    pub busy_timeout_ms: u32,
}

impl Default for SqliteOptions {
    fn default() -> Self {
        SqliteOptions {
            journal_mode: None,
            synchronous: None,
            page_size: None,
            cache_size: None,
            busy_timeout_ms: 5000,
        }
    }
}

/// The SQLite options in force, checked once here; SQLite's defaults unless `db=sqlite`, which
/// is the only database that takes them.
pub(super) fn from_settings(look: &Lookup, db: Db) -> Result<SqliteOptions, SettingError> {
    let mut out = SqliteOptions::default();
    for k in SQLITE_KEYS {
        let v = look.get(k.key, k.default);
        if db != Db::Sqlite {
            if !v.is_default() {
                return Err(v.invalid("sqlite.* options apply to db=sqlite"));
            }
            continue;
        }
        match k.key.trim_start_matches("sqlite.") {
            "journal_mode" => {
                let names = JournalMode::ALL.map(JournalMode::name);
                out.journal_mode = v.choice(&names)?.parse().ok();
            }
            "synchronous" => {
                let names = Synchronous::ALL.map(Synchronous::name);
                out.synchronous = v.choice(&names)?.parse().ok();
            }
            "page_size" => {
                let n = v.size(512, 65536)?;
                if !n.is_power_of_two() {
                    return Err(v.invalid("a power of two from 512 to 65536"));
                }
                out.page_size = Some(n as u32);
            }
            _ => {
                let pages = (v.text.trim().parse::<i64>())
                    .map_err(|_| v.invalid("a whole number: pages, or negative KiB"))?;
                out.cache_size = Some(pages);
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_either_case_and_refuse_with_what_is_allowed() {
        assert_eq!("WAL".parse(), Ok(JournalMode::Wal));
        assert_eq!("normal".parse(), Ok(Synchronous::Normal));
        let e = "fast".parse::<JournalMode>().unwrap_err();
        assert!(e.contains("delete|truncate|persist|memory|wal|off"), "{e}");
        assert_eq!(Synchronous::from_level(3), Some(Synchronous::Extra));
        assert_eq!(Synchronous::from_level(4), None);
        assert_eq!(SqliteOptions::default().busy_timeout_ms, 5000);
    }
}
