//! How much room a database run needs on its stacks, for `--size auto` and for the room checks
//! made before anything is built (the dry run and the real run ask the same questions here):
//! the loaded data, the rows a run adds while it runs, and the WAL PostgreSQL keeps between
//! checkpoints (on the log stack when there is one).

use super::{Db, DbPlan, DbWork};

const MIB: u64 = 1 << 20;

/// PostgreSQL's default `max_wal_size`, 1 GB.
const DEFAULT_MAX_WAL_SIZE: u64 = 1 << 30;

/// bakeoff's `innodb_log_file_size` for MariaDB, 1 GiB (as PostgreSQL's `max_wal_size`).
const DEFAULT_REDO_LOG_SIZE: u64 = 1 << 30;

/// Room beside MariaDB's redo log: the file system's own share of a stack (a 1 GiB xfs holds
/// about 918 MiB) and the server's small files (`aria_log`, the pid file).
const REDO_MARGIN: u64 = 128 * MIB;

/// Room for WAL over `max_wal_size`: PostgreSQL calls it a soft limit, passed under heavy load
/// while a checkpoint is slow, and the segments it recycles are kept. A TPC-C run at 2,200
/// txn/s filled its log stack to 1,098 MiB (`df`: the WAL and the file system's own) under the
/// 1 GB default (docs/stacks.md, "Sizes and limits").
const WAL_OVERSHOOT: u64 = 2;

/// What a busy CPU can add to a database per second, a bound: TPC-C on 2 CPUs at 2,200 txn/s
/// grew its database 2.7 MiB/s (new orders, order lines and history rows, and the versions
/// updates leave before vacuum), 1.35 MiB/s per CPU; this is about three times that.
const GROWTH_PER_CPU_PER_S: u64 = 4 * MIB;

/// A bound on what one transaction adds, for an open-loop run at `rate=`: TPC-C added about
/// 1.2 KiB per transaction, pgbench less.
const GROWTH_PER_TXN: u64 = 4 << 10;

impl DbPlan {
    /// Bytes the data stack must hold: the loaded data, what the run adds, and the WAL when
    /// no log stack holds it. `cpus` bounds how many connections run at once.
    pub fn room_bytes(&self, log_stack: bool, cpus: u32) -> u64 {
        let wal = match log_stack {
            true => 0,
            false => self.wal_room_bytes(),
        };
        self.dataset_bytes()
            .saturating_add(self.growth_bytes(cpus))
            .saturating_add(wal)
    }

    /// Bytes of WAL the server may keep: twice `max_wal_size` (the user's `pg.max_wal_size`
    /// or PostgreSQL's default); MariaDB's redo log, `innodb_log_file_size` (made at its full
    /// size and written round, so it never overshoots) and a margin; SQLite's WAL is checkpointed into the
    /// database every 1,000 pages and counted in its growth.
    pub fn wal_room_bytes(&self) -> u64 {
        match self.db {
            Db::Postgres => self.max_wal_size().saturating_mul(WAL_OVERSHOOT),
            Db::Mariadb => self.innodb_log_file_size() + REDO_MARGIN,
            Db::Sqlite => 0,
        }
    }

    /// `innodb_log_file_size` in bytes: the user's (MariaDB's suffixes K, M, G, T; bytes
    /// without one), or bakeoff's default of 1 GiB (docs/mariadb.md) when absent or
    /// unreadable (the server's own check refuses a bad one).
    pub fn innodb_log_file_size(&self) -> u64 {
        (self.my.get("innodb_log_file_size"))
            .and_then(|v| mariadb_bytes(v))
            .unwrap_or(DEFAULT_REDO_LOG_SIZE)
    }

    /// `max_wal_size` in bytes: the user's (PostgreSQL's memory units, MB without one), or the
    /// default when absent or unreadable (the server's own check refuses a bad one).
    pub fn max_wal_size(&self) -> u64 {
        (self.pg.get("max_wal_size"))
            .and_then(|v| pg_bytes(v, MIB))
            .unwrap_or(DEFAULT_MAX_WAL_SIZE)
    }

    /// A bound on the bytes a run adds to the database between the load and the end: its
    /// warm-up (the cap of an automatic one) and window, at what the connections that can run
    /// at once (at most `cpus`) add per second, or at the `rate=` given. TPC-H adds nothing
    /// after its load.
    pub fn growth_bytes(&self, cpus: u32) -> u64 {
        let (connections, rate) = match self.work {
            DbWork::Tpcc {
                terminals,
                rate_tps,
                ..
            } => (terminals, rate_tps),
            DbWork::Pgbench {
                clients, rate_tps, ..
            } => (clients, rate_tps),
            DbWork::Sysbench {
                threads, rate_tps, ..
            } => (threads, rate_tps),
            DbWork::Tpch { .. } => return 0,
        };
        let ramp = self.ramp_auto.map_or(self.ramp_time, |a| a.max);
        let secs = (ramp + self.runtime).as_secs_f64().ceil() as u64;
        let busy = u64::from(connections.min(cpus.max(1)));
        let by_cpu = busy.saturating_mul(GROWTH_PER_CPU_PER_S);
        let per_s = match rate {
            Some(tps) => by_cpu.min((tps * GROWTH_PER_TXN as f64).ceil() as u64),
            None => by_cpu,
        };
        per_s.saturating_mul(secs)
    }
}

/// A MariaDB size in bytes: a number, optionally one of the suffixes K, M, G, T (either
/// case, powers of 1024); `None` when it is not one.
fn mariadb_bytes(text: &str) -> Option<u64> {
    let t = text.trim();
    let (digits, per) = match t.chars().last()?.to_ascii_uppercase() {
        'K' => (&t[..t.len() - 1], 1 << 10),
        'M' => (&t[..t.len() - 1], MIB),
        'G' => (&t[..t.len() - 1], 1 << 30),
        'T' => (&t[..t.len() - 1], 1 << 40),
        _ => (t, 1),
    };
    digits.parse::<u64>().ok()?.checked_mul(per)
}

/// A PostgreSQL memory setting in bytes: a number, optionally a unit (`B`, `kB`, `MB`, `GB`,
/// `TB`, after optional spaces), else `unit` bytes; `None` when it is not one.
fn pg_bytes(text: &str, unit: u64) -> Option<u64> {
    let t = text.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let n: u64 = t[..split].parse().ok()?;
    let per = match t[split..].trim() {
        "" => unit,
        "B" => 1,
        "kB" => 1 << 10,
        "MB" => MIB,
        "GB" => 1 << 30,
        "TB" => 1 << 40,
        _ => return None,
    };
    n.checked_mul(per)
}

#[cfg(test)]
mod tests {
    use super::{mariadb_bytes, pg_bytes};
    use crate::dbplan::plan_db;
    use crate::settings::Settings;

    fn plan(name: &str, sets: &str) -> crate::dbplan::DbPlan {
        plan_db(name, &Settings::parse_set(sets).unwrap()).unwrap()
    }

    #[test]
    fn postgres_memory_values_are_read_in_their_units() {
        assert_eq!(pg_bytes("1GB", 1 << 20), Some(1 << 30));
        assert_eq!(pg_bytes("2048", 1 << 20), Some(2 << 30));
        assert_eq!(pg_bytes(" 512 MB", 1 << 20), Some(512 << 20));
        assert_eq!(pg_bytes("64kB", 1 << 20), Some(64 << 10));
        assert_eq!(
            pg_bytes("1gb", 1 << 20),
            None,
            "PostgreSQL's units are case-sensitive"
        );
        assert_eq!(pg_bytes("lots", 1 << 20), None);
    }

    #[test]
    fn the_readme_tpcc_run_has_room_for_its_wal_and_its_growth() {
        // The README's line: 4 warehouses, 8 terminals, 60 s after an automatic warm-up
        // (capped at 120 s), on 2 CPUs.
        let p = plan("tpcc", "db=postgres,warehouses=4,terminals=8,runtime=60s");
        assert_eq!(p.wal_room_bytes(), 2 << 30, "twice the 1 GB default");
        assert_eq!(p.growth_bytes(2), 2 * (4 << 20) * 180);
        assert_eq!(p.room_bytes(true, 2), (520 << 20) + 2 * (4 << 20) * 180);
        assert_eq!(p.room_bytes(false, 2), p.room_bytes(true, 2) + (2 << 30));
    }

    #[test]
    fn the_users_max_wal_size_and_rate_bound_the_room() {
        let p = plan(
            "tpcc",
            "db=postgres,warehouses=1,terminals=4,runtime=10s,ramp_time=0,rate_tps=100,\
             pg.max_wal_size=256MB",
        );
        assert_eq!(p.wal_room_bytes(), 512 << 20);
        assert_eq!(
            p.growth_bytes(8),
            100 * (4 << 10) * 10,
            "the rate, not the CPUs"
        );
        let sqlite = plan(
            "tpcc",
            "db=sqlite,warehouses=1,terminals=1,runtime=5s,ramp_time=0",
        );
        assert_eq!(sqlite.wal_room_bytes(), 0);
        assert_eq!(
            sqlite.growth_bytes(2),
            (4 << 20) * 5,
            "one terminal, one CPU busy"
        );
    }

    #[test]
    fn mariadbs_redo_log_is_its_file_size_in_mariadbs_units() {
        assert_eq!(mariadb_bytes("512M"), Some(512 << 20));
        assert_eq!(mariadb_bytes("2g"), Some(2 << 30));
        assert_eq!(mariadb_bytes("1048576"), Some(1 << 20));
        assert_eq!(mariadb_bytes("1 GB"), None);
        let p = plan("sysbench", "tables=2,table_size=1000,threads=8,runtime=10s");
        assert_eq!(
            p.wal_room_bytes(),
            (1 << 30) + (128 << 20),
            "bakeoff's default and the margin, no overshoot"
        );
        assert_eq!(p.dataset_bytes(), 2 * 1000 * 250);
        assert_eq!(
            p.growth_bytes(2),
            2 * (4 << 20) * (120 + 10),
            "eight threads, two CPUs busy, over the warm-up's cap and the window"
        );
        let small = plan(
            "sysbench",
            "my.innodb-log-file-size=256M,rate=10,runtime=5s",
        );
        assert_eq!(small.wal_room_bytes(), (256 + 128) << 20);
        assert_eq!(small.growth_bytes(2), 10 * (4 << 10) * (120 + 5));
    }

    #[test]
    fn tpch_adds_nothing_after_its_load() {
        let p = plan("tpch", "db=postgres,sf=0.01");
        assert_eq!(p.growth_bytes(2), 0);
        assert_eq!(p.room_bytes(false, 2), p.dataset_bytes() + (2 << 30));
    }
}
