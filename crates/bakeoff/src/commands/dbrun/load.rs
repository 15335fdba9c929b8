//! The load before the measured run: TPC-C's population or `pgbench -i`, timed and measured
//! (device bytes of the data and log stacks, the database's size afterwards).

use super::{pg_failure, pg_stats, Opened};
use crate::exit::{failure, Code, Failure};
use bakeoff_core::dbplan::{DbPlan, DbWork};
use bakeoff_core::dbrecord::LoadPhase;
use bakeoff_db::pgbench::Pgbench;
use bakeoff_db::tpcc::{self, TpccError, TpccPlan};
use bakeoff_db::Database;
use bakeoff_probe::Probe;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

/// The TPC-C plan of a database plan.
pub fn tpcc_plan(plan: &DbPlan) -> Option<TpccPlan> {
    match plan.work {
        DbWork::Tpcc {
            warehouses,
            terminals,
            rate_tps,
            load_threads,
            procedures,
        } => Some(TpccPlan {
            warehouses,
            terminals,
            runtime: plan.runtime,
            ramp: plan.ramp_time,
            rate_tps,
            seed: plan.seed,
            load_threads,
            procedures,
        }),
        DbWork::Pgbench { .. } | DbWork::Tpch { .. } => None,
    }
}

/// Loads the data and says what it took (and, unless `quiet`, that it starts).
pub fn phase(
    plan: &DbPlan,
    opened: &Opened,
    data: &Path,
    probe: &Probe,
    interrupt: &AtomicBool,
    quiet: bool,
) -> Result<LoadPhase, Failure> {
    let interrupted = || failure(Code::Interrupted, "interrupted during the load");
    if !quiet {
        eprintln!("bakeoff: loading {}", describe(plan));
    }
    let before = probe.snapshot();
    let start = Instant::now();
    let log_from = match opened {
        Opened::Postgres(server) => server.log_len(),
        Opened::Sqlite(_) => 0,
    };
    let server_said = |f: Failure| with_server_log(f, opened, log_from);
    let rows: BTreeMap<String, u64> = match (&plan.work, opened) {
        (DbWork::Tpcc { .. }, _) => {
            let tp = tpcc_plan(plan).expect("a TPC-C plan");
            let report = match tpcc::load_until(opened.database().as_ref(), &tp, interrupt) {
                Err(TpccError::Interrupted) => return Err(interrupted()),
                other => other
                    .map_err(|e| server_said(failure(Code::Io, format!("loading TPC-C: {e}"))))?,
            };
            report
                .rows
                .iter()
                .map(|(t, n)| (t.name().to_string(), (*n).max(0) as u64))
                .collect()
        }
        (DbWork::Pgbench { scale, .. }, Opened::Postgres(server)) => {
            let init = Pgbench::for_server(server).init_until(*scale, interrupt);
            if init.map_err(|e| server_said(pg_failure(e)))?.is_none() {
                return Err(interrupted());
            }
            pgbench_rows(*scale)
        }
        (DbWork::Pgbench { .. }, Opened::Sqlite(_)) => {
            return Err(failure(Code::Usage, "pgbench drives PostgreSQL only"))
        }
        (DbWork::Tpch { .. }, _) => {
            return Err(failure(Code::Usage, "TPC-H loads in its own phase"))
        }
    };
    settle(opened, data)?;
    let seconds = start.elapsed().as_secs_f64();
    let after = probe.snapshot();
    let devices = probe.device_stats(&before, &after);
    let sum = |role: &str, f: fn(&bakeoff_core::record::DeviceStats) -> u64| {
        let mut of = devices.iter().filter(|d| d.role == role).peekable();
        of.peek()?;
        Some(of.map(f).sum::<u64>())
    };
    let total: u64 = rows.values().sum();
    Ok(LoadPhase {
        seconds,
        rows_per_s: if seconds > 0.0 {
            total as f64 / seconds
        } else {
            0.0
        },
        rows,
        device_read_bytes: sum("stack", |d| d.read_bytes),
        device_write_bytes: sum("stack", |d| d.write_bytes),
        log_device_write_bytes: sum("log", |d| d.write_bytes),
        size_bytes: size_on_disk(opened)?,
    })
}

/// `f` with what the PostgreSQL server's log says went wrong since it was `since` bytes long
/// (a client of a crashed server knows only "error communicating with the server").
fn with_server_log(f: Failure, opened: &Opened, since: u64) -> Failure {
    let Opened::Postgres(server) = opened else {
        return f;
    };
    match server.log_cause(since) {
        Some(cause) => failure(f.code, format!("{}; {cause}", f.error)),
        None => f,
    }
}

/// The end of the load: what it wrote is on the devices before they are read, so its device
/// bytes are the whole load's. PostgreSQL: a `CHECKPOINT` (the dirty buffers written and the
/// files synced); SQLite: its WAL checkpointed into the database file (`wal_checkpoint
/// (TRUNCATE)`; nothing in the other journal modes); then `syncfs` of the stack's file system
/// for what the page cache still holds.
fn settle(opened: &Opened, data: &Path) -> Result<(), Failure> {
    match opened {
        Opened::Postgres(server) => server.checkpoint().map_err(pg_failure)?,
        Opened::Sqlite(db) => {
            let fail = |e: bakeoff_db::DbError| {
                failure(
                    Code::Io,
                    format!("checkpointing SQLite's WAL after the load: {e}"),
                )
            };
            let mut conn = db.connect().map_err(fail)?;
            conn.query("PRAGMA wal_checkpoint(TRUNCATE)", &[])
                .map_err(fail)?;
        }
    }
    let dir = std::fs::File::open(data)
        .map_err(|e| failure(Code::Io, format!("opening {}: {e}", data.display())))?;
    rustix::fs::syncfs(&dir).map_err(|e| {
        failure(
            Code::Io,
            format!(
                "syncing the file system of {} after the load: {e}",
                data.display()
            ),
        )
    })
}

/// The rows `pgbench -i -s scale` creates (its documentation: 100,000 accounts, 10 tellers and
/// 1 branch per unit of scale; no history).
fn pgbench_rows(scale: u32) -> BTreeMap<String, u64> {
    let s = u64::from(scale);
    [
        ("pgbench_accounts", 100_000 * s),
        ("pgbench_tellers", 10 * s),
        ("pgbench_branches", s),
    ]
    .into_iter()
    .map(|(t, n)| (t.to_string(), n))
    .collect()
}

/// The database's size on disk now: PostgreSQL's `pg_database_size`, SQLite's files.
pub fn size_on_disk(opened: &Opened) -> Result<Option<u64>, Failure> {
    Ok(match opened {
        Opened::Postgres(_) => pg_stats(opened).map(|s| s.db_size_bytes),
        Opened::Sqlite(db) => {
            let files = ["", "-wal", "-journal"].map(|suffix| {
                let mut p = db.path().as_os_str().to_owned();
                p.push(suffix);
                std::fs::metadata(std::path::PathBuf::from(p)).map_or(0, |m| m.len())
            });
            Some(files.iter().sum())
        }
    })
}

fn describe(plan: &DbPlan) -> String {
    match plan.work {
        DbWork::Tpcc { warehouses, .. } => format!("TPC-C, {warehouses} warehouse(s)"),
        DbWork::Pgbench { scale, .. } => format!("pgbench, scale {scale}"),
        DbWork::Tpch { sf, .. } => format!("TPC-H, scale factor {sf}"),
    }
}
