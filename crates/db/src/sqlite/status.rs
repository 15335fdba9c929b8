//! SQLite's page-cache counters of one connection (`sqlite3_db_status`), which rusqlite does
//! not wrap: the only `unsafe` of the SQLite backend.

use libsqlite3_sys as ffi;
use rusqlite::Connection;

/// Page-cache counters: pages found in a connection's cache, read from the file, and written.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct CacheCounters {
    /// Pages found in the page cache (`SQLITE_DBSTATUS_CACHE_HIT`).
    pub hits: u64,
    /// Pages read from the database file (`SQLITE_DBSTATUS_CACHE_MISS`).
    pub misses: u64,
    /// Pages written to the database file (`SQLITE_DBSTATUS_CACHE_WRITE`).
    pub writes: u64,
    /// CPU ns the connections' threads spent inside SQLite's calls (their own CPU clocks):
    /// the embedded database's work, apart from the client's around it.
    #[serde(default)]
    pub cpu_ns: u64,
}

impl CacheCounters {
    /// What happened since `earlier` (a snapshot taken at the start of the window).
    pub fn since(&self, earlier: &CacheCounters) -> CacheCounters {
        CacheCounters {
            hits: self.hits.saturating_sub(earlier.hits),
            misses: self.misses.saturating_sub(earlier.misses),
            writes: self.writes.saturating_sub(earlier.writes),
            cpu_ns: self.cpu_ns.saturating_sub(earlier.cpu_ns),
        }
    }
}

/// SQLite reports each counter masked to 31 bits: it wraps at this value.
const WRAP: u64 = 1 << 31;

/// The counters of `conn` since it was opened, each modulo 2^31 (see [`advance`]).
pub(crate) fn raw_cache_counters(conn: &Connection) -> CacheCounters {
    // SAFETY: the handle is valid for as long as `conn` lives, which outlives this call; it is
    // only passed to sqlite3_db_status below, never closed or kept.
    let db = unsafe { conn.handle() };
    let read = |op: i32| {
        let (mut current, mut highwater) = (0, 0);
        // SAFETY: `db` is an open connection (above) that this thread has exclusive use of
        // (`&Connection` is not shared across threads: `Connection` is not `Sync`); the two
        // out-pointers are valid local integers; reset flag 0 leaves the counter untouched.
        let rc = unsafe { ffi::sqlite3_db_status(db, op, &mut current, &mut highwater, 0) };
        if rc == ffi::SQLITE_OK {
            u64::try_from(current).unwrap_or(0)
        } else {
            0
        }
    };
    CacheCounters {
        hits: read(ffi::SQLITE_DBSTATUS_CACHE_HIT),
        misses: read(ffi::SQLITE_DBSTATUS_CACHE_MISS),
        writes: read(ffi::SQLITE_DBSTATUS_CACHE_WRITE),
        cpu_ns: 0,
    }
}

/// What `conn` counted since `last` (its previous raw reading, updated to `now`), across a
/// wrap of the 31-bit counters; readings must be closer than 2^31 pages apart.
pub(crate) fn advance(last: &mut CacheCounters, now: CacheCounters) -> CacheCounters {
    let delta = |now: u64, last: u64| (now + WRAP - last) % WRAP;
    let d = CacheCounters {
        hits: delta(now.hits, last.hits),
        misses: delta(now.misses, last.misses),
        writes: delta(now.writes, last.writes),
        cpu_ns: 0,
    };
    *last = now;
    d
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wrapped_counter_still_advances() {
        let mut last = CacheCounters {
            hits: WRAP - 10,
            misses: 5,
            writes: 0,
            cpu_ns: 0,
        };
        let now = CacheCounters {
            hits: 20,
            misses: 7,
            writes: 3,
            cpu_ns: 0,
        };
        let d = advance(&mut last, now);
        assert_eq!((d.hits, d.misses, d.writes), (30, 2, 3));
        assert_eq!(last, now);
    }
}
