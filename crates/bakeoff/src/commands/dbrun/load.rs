//! The load before the measured run: TPC-C's population or `pgbench -i`, timed and measured
//! (device bytes of the data and log stacks, the database's size afterwards).

use super::setup_failure;
use crate::exit::{failure, Code, Failure};
use bakeoff_core::dbplan::{DbPlan, DbWork};
use bakeoff_core::dbrecord::LoadPhase;
use bakeoff_db::managed::ManagedDb;
use bakeoff_db::mariadb::MyServer;
use bakeoff_db::pgbench::Pgbench;
use bakeoff_db::postgres::PgServer;
use bakeoff_db::sysbench::{RunOptions as SysbenchOptions, Sysbench};
use bakeoff_db::tpcc::{self, TpccError, TpccPlan};
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
            journal: false,
        }),
        _ => None,
    }
}

/// Loads the data and says what it took (and, unless `quiet`, that it starts).
pub fn phase(
    plan: &DbPlan,
    opened: &dyn ManagedDb,
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
    let log_from = opened.log_len();
    let server_said = |f: Failure| with_server_log(f, opened, log_from);
    let rows: BTreeMap<String, u64> = match &plan.work {
        DbWork::Tpcc { .. } => {
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
        DbWork::Pgbench { scale, .. } => {
            let server = driven::<PgServer>(opened, "pgbench", "PostgreSQL")?;
            let init = Pgbench::for_server(server).init_until(*scale, interrupt);
            let init = init.map_err(|e| server_said(setup_failure(e.into())))?;
            if init.is_none() {
                return Err(interrupted());
            }
            pgbench_rows(*scale)
        }
        DbWork::Sysbench {
            tables, table_size, ..
        } => {
            let server = driven::<MyServer>(opened, "sysbench", "MariaDB")?;
            let opts = SysbenchOptions::from_plan(&plan.work, plan.runtime).expect("sysbench");
            let prepared = Sysbench::for_server(server).prepare_until(&opts, interrupt);
            let prepared = prepared.map_err(|e| server_said(setup_failure(e.into())))?;
            if prepared.is_none() {
                return Err(interrupted());
            }
            (1..=*tables)
                .map(|t| (format!("sbtest{t}"), *table_size))
                .collect()
        }
        DbWork::Tpch { .. } => return Err(failure(Code::Usage, "TPC-H loads in its own phase")),
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

/// The server of a workload that drives one database only.
pub fn driven<'a, T: 'static>(
    opened: &'a dyn ManagedDb,
    workload: &str,
    database: &str,
) -> Result<&'a T, Failure> {
    opened
        .as_any()
        .downcast_ref::<T>()
        .ok_or_else(|| failure(Code::Usage, format!("{workload} drives {database} only")))
}

/// `f` with what the server's log says went wrong since it was `since` bytes long (a client
/// of a crashed server knows only "error communicating with the server").
fn with_server_log(f: Failure, opened: &dyn ManagedDb, since: u64) -> Failure {
    match opened.log_cause(since) {
        Some(cause) => failure(f.code, format!("{}; {cause}", f.error)),
        None => f,
    }
}

/// The end of the load: what it wrote is on the devices before they are read, so its device
/// bytes are the whole load's. The database settles (a server's checkpoint; SQLite's WAL
/// checkpointed into its file), then `syncfs` of the stack's file system for what the page
/// cache still holds.
fn settle(opened: &dyn ManagedDb, data: &Path) -> Result<(), Failure> {
    opened.settle().map_err(setup_failure)?;
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

/// The database's size on disk now.
pub fn size_on_disk(opened: &dyn ManagedDb) -> Result<Option<u64>, Failure> {
    Ok(opened.size_on_disk())
}

fn describe(plan: &DbPlan) -> String {
    match plan.work {
        DbWork::Tpcc { warehouses, .. } => format!("TPC-C, {warehouses} warehouse(s)"),
        DbWork::Pgbench { scale, .. } => format!("pgbench, scale {scale}"),
        DbWork::Tpch { sf, .. } => format!("TPC-H, scale factor {sf}"),
        DbWork::Sysbench {
            tables, table_size, ..
        } => format!("sysbench, {tables} table(s) of {table_size} rows"),
    }
}
