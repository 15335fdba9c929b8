//! SQLite's options as bakeoff takes them (`journal_mode=wal,synchronous=normal`): each one a
//! PRAGMA applied on every connection and read back.

use std::fmt;
use std::str::FromStr;

/// `PRAGMA journal_mode`: how SQLite makes a transaction atomic.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
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
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
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

/// A SQLite option bakeoff could not take.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("SQLite option {key}={value}: {reason}")]
pub struct OptionError {
    /// The option's name.
    pub key: String,
    /// The value given.
    pub value: String,
    /// What is allowed instead.
    pub reason: String,
}

/// The options applied to every connection; `None` leaves SQLite's default (still read back).
#[derive(Clone, Debug, PartialEq, Eq)]
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

impl SqliteOptions {
    /// The option names [`SqliteOptions::set`] takes.
    pub const KEYS: [&'static str; 5] = [
        "journal_mode",
        "synchronous",
        "page_size",
        "cache_size",
        "busy_timeout",
    ];

    /// Sets one option from its text form (`journal_mode`, `wal`).
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), OptionError> {
        let fail = |reason: String| OptionError {
            key: key.to_string(),
            value: value.to_string(),
            reason,
        };
        let int = |what: &str| {
            value
                .trim()
                .parse::<i64>()
                .map_err(|_| fail(format!("expected {what}")))
        };
        match key {
            "journal_mode" => self.journal_mode = Some(value.parse().map_err(fail)?),
            "synchronous" => self.synchronous = Some(value.parse().map_err(fail)?),
            "page_size" => {
                let what = "a power of two from 512 to 65536 (bytes)";
                let size = int(what)?;
                if !(512..=65536).contains(&size) || size.count_ones() != 1 {
                    return Err(fail(format!("expected {what}")));
                }
                self.page_size = Some(size as u32);
            }
            "cache_size" => self.cache_size = Some(int("pages, or negative KiB")?),
            "busy_timeout" => {
                let what = "milliseconds from 0 to 2147483647";
                self.busy_timeout_ms = u32::try_from(int(what)?)
                    .ok()
                    .filter(|ms| i32::try_from(*ms).is_ok())
                    .ok_or_else(|| fail(format!("expected {what}")))?;
            }
            _ => {
                return Err(fail(format!(
                    "unknown option; SQLite takes {}",
                    SqliteOptions::KEYS.join(", ")
                )))
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_parse_and_refuse_with_what_is_allowed() {
        let mut o = SqliteOptions::default();
        assert_eq!(o.busy_timeout_ms, 5000);
        o.set("journal_mode", "WAL").unwrap();
        o.set("synchronous", "normal").unwrap();
        o.set("page_size", "8192").unwrap();
        o.set("cache_size", "-65536").unwrap();
        o.set("busy_timeout", "250").unwrap();
        assert_eq!(o.journal_mode, Some(JournalMode::Wal));
        assert_eq!(o.synchronous, Some(Synchronous::Normal));
        assert_eq!((o.page_size, o.cache_size), (Some(8192), Some(-65536)));
        assert_eq!(o.busy_timeout_ms, 250);
        let e = o.set("journal_mode", "fast").unwrap_err();
        assert!(
            e.to_string()
                .contains("delete|truncate|persist|memory|wal|off"),
            "{e}"
        );
        for bad in ["1000", "256", "131072", "x"] {
            let e = o.set("page_size", bad).unwrap_err();
            assert!(e.to_string().contains("power of two"), "{e}");
        }
        assert!(o.set("busy_timeout", "-1").is_err());
        let e = o.set("mmap_size", "1").unwrap_err();
        assert!(e.to_string().contains("journal_mode, synchronous"), "{e}");
        assert_eq!(Synchronous::from_level(3), Some(Synchronous::Extra));
        assert_eq!(Synchronous::from_level(4), None);
    }
}
