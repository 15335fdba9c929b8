//! What the server itself counted, for the run record: WAL written (`pg_stat_wal`), buffer hits
//! and reads and transactions of the benchmark database (`pg_stat_database`), checkpoints
//! (`pg_stat_bgwriter`), and the database's size on disk. A snapshot before and after a run;
//! their difference is the run's.
//!
//! PostgreSQL 15 keeps statistics in shared memory; a backend publishes its own at most once a
//! second while busy and at exit. A snapshot taken after the workload's connections closed is
//! therefore complete; one taken while they run may miss their last second.

use super::client::PgConn;
use crate::backend::{Conn, DbError, Value};
use bakeoff_core::dbrecord::DbCounters;
use serde::{Deserialize, Serialize};

/// Counters of one server and one of its databases at one instant (or, from
/// [`PgStats::since`], over a run).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PgStats {
    /// WAL bytes generated.
    pub wal_bytes: u64,
    /// WAL records generated.
    pub wal_records: u64,
    /// Full-page images written to the WAL (first change of a page after a checkpoint).
    pub wal_fpi: u64,
    /// Buffer reads served from shared buffers.
    pub blks_hit: u64,
    /// Buffer reads that went to the kernel (its page cache or the device).
    pub blks_read: u64,
    /// Transactions committed.
    pub xact_commit: u64,
    /// Transactions rolled back.
    pub xact_rollback: u64,
    /// Checkpoints started by `checkpoint_timeout`.
    pub checkpoints_timed: u64,
    /// Checkpoints requested (WAL reached `max_wal_size`, or a `CHECKPOINT`).
    pub checkpoints_req: u64,
    /// Buffers written by checkpoints.
    pub buffers_checkpoint: u64,
    /// The database's size on disk (`pg_database_size`); in a difference, the later size.
    pub db_size_bytes: u64,
    /// Times the WAL was synced to disk (`pg_stat_wal.wal_sync`): with group commit, fewer
    /// than the transactions where a sync is slow.
    pub wal_syncs: u64,
}

const SNAPSHOT: &str = "\
SELECT w.wal_bytes::bigint, w.wal_records, w.wal_fpi, \
       d.blks_hit, d.blks_read, d.xact_commit, d.xact_rollback, \
       b.checkpoints_timed, b.checkpoints_req, b.buffers_checkpoint, \
       pg_database_size(d.datid), w.wal_sync \
FROM pg_stat_wal w, pg_stat_bgwriter b, pg_stat_database d \
WHERE d.datname = $1";

impl PgStats {
    /// The counters now, for database `dbname`, read over `conn`.
    pub fn read(conn: &mut PgConn, dbname: &str) -> Result<PgStats, DbError> {
        // A snapshot cached earlier in this session would repeat old numbers.
        conn.batch("SELECT pg_stat_clear_snapshot()")?;
        let rows = conn.query(SNAPSHOT, &[Value::from(dbname)])?;
        let row = rows
            .first()
            .ok_or_else(|| DbError::other(format!("no database {dbname} in pg_stat_database")))?;
        let n = |i: usize| -> Result<u64, DbError> {
            match row.get(i) {
                Some(Value::Int(v)) => Ok((*v).max(0) as u64),
                other => Err(DbError::other(format!(
                    "PostgreSQL statistics: column {i} is {other:?}, not an integer, in: {SNAPSHOT}"
                ))),
            }
        };
        Ok(PgStats {
            wal_bytes: n(0)?,
            wal_records: n(1)?,
            wal_fpi: n(2)?,
            blks_hit: n(3)?,
            blks_read: n(4)?,
            xact_commit: n(5)?,
            xact_rollback: n(6)?,
            checkpoints_timed: n(7)?,
            checkpoints_req: n(8)?,
            buffers_checkpoint: n(9)?,
            db_size_bytes: n(10)?,
            wal_syncs: n(11)?,
        })
    }

    /// What happened between `earlier` and this snapshot (the size is this one's).
    pub fn since(&self, earlier: &PgStats) -> PgStats {
        let d = |now: u64, then: u64| now.saturating_sub(then);
        PgStats {
            wal_bytes: d(self.wal_bytes, earlier.wal_bytes),
            wal_records: d(self.wal_records, earlier.wal_records),
            wal_fpi: d(self.wal_fpi, earlier.wal_fpi),
            blks_hit: d(self.blks_hit, earlier.blks_hit),
            blks_read: d(self.blks_read, earlier.blks_read),
            xact_commit: d(self.xact_commit, earlier.xact_commit),
            xact_rollback: d(self.xact_rollback, earlier.xact_rollback),
            checkpoints_timed: d(self.checkpoints_timed, earlier.checkpoints_timed),
            checkpoints_req: d(self.checkpoints_req, earlier.checkpoints_req),
            buffers_checkpoint: d(self.buffers_checkpoint, earlier.buffers_checkpoint),
            db_size_bytes: self.db_size_bytes,
            wal_syncs: d(self.wal_syncs, earlier.wal_syncs),
        }
    }

    /// A run's difference as the run record's database counters.
    pub fn counters(&self) -> DbCounters {
        DbCounters {
            cache_hits: Some(self.blks_hit),
            cache_misses: Some(self.blks_read),
            wal_bytes: Some(self.wal_bytes),
            wal_fpi: Some(self.wal_fpi),
            checkpoints: Some(self.checkpoints_timed + self.checkpoints_req),
            checkpoint_buffers: Some(self.buffers_checkpoint),
            commits: Some(self.xact_commit),
            rollbacks: Some(self.xact_rollback),
            engine_cpu_us: None,
            wal_syncs: Some(self.wal_syncs),
            innodb: None,
        }
    }

    /// Share of buffer reads served from shared buffers, if there were any.
    pub fn hit_ratio(&self) -> Option<f64> {
        let total = self.blks_hit + self.blks_read;
        (total > 0).then(|| self.blks_hit as f64 / total as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_difference_subtracts_counters_and_keeps_the_later_size() {
        let before = PgStats {
            wal_bytes: 1000,
            xact_commit: 10,
            blks_hit: 90,
            blks_read: 10,
            db_size_bytes: 8 << 20,
            wal_syncs: 7,
            ..PgStats::default()
        };
        let after = PgStats {
            wal_bytes: 5000,
            xact_commit: 110,
            blks_hit: 390,
            blks_read: 10,
            checkpoints_req: 1,
            db_size_bytes: 9 << 20,
            wal_syncs: 67,
            ..PgStats::default()
        };
        let run = after.since(&before);
        assert_eq!(run.wal_bytes, 4000);
        assert_eq!(run.xact_commit, 100);
        assert_eq!(run.checkpoints_req, 1);
        assert_eq!(run.db_size_bytes, 9 << 20);
        assert_eq!(run.hit_ratio(), Some(1.0));
        let counters = run.counters();
        assert_eq!(counters.wal_bytes, Some(4000));
        assert_eq!(counters.wal_syncs, Some(60));
        assert_eq!(
            (counters.cache_hits, counters.cache_misses),
            (Some(300), Some(0))
        );
        assert_eq!(
            (counters.checkpoints, counters.commits),
            (Some(1), Some(100))
        );
        assert_eq!(PgStats::default().hit_ratio(), None);
        // A statistics reset between snapshots gives zeros, not wrapped numbers.
        assert_eq!(before.since(&after).wal_bytes, 0);
    }
}
