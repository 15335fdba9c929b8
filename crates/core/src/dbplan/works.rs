//! Each database workload's own keys read into its [`DbWork`]: TPC-C, pgbench, sysbench, TPC-H.

use super::server::user_val;
use super::{Db, DbWork, SYSBENCH_TESTS};
use crate::keys::RUN_KEYS;
use crate::settings::{SettingError, Settings};
use crate::values::Val;
use std::time::Duration;

pub(super) fn tpcc(g: &dyn Fn(&str) -> Val, db: Db) -> Result<DbWork, SettingError> {
    let rate = g("rate_tps");
    Ok(DbWork::Tpcc {
        warehouses: g("warehouses").int(1, 10_000)? as u32,
        terminals: g("terminals").int(1, 1_000)? as u32,
        rate_tps: optional(&rate)?,
        load_threads: g("load_threads").int(1, 256)? as u32,
        procedures: procedures(&g("procedures"), db)?,
    })
}

/// Stored procedures: PostgreSQL's by default; SQLite has none, so there only `false` (or
/// the default, which becomes `false`).
fn procedures(v: &Val, db: Db) -> Result<bool, SettingError> {
    let wanted = v.boolean()?;
    if db.has_procedures() {
        return Ok(wanted);
    }
    if wanted && !v.is_default() {
        let takers: Vec<&str> = (Db::ALL.iter())
            .filter(|d| d.has_procedures())
            .map(|d| d.name())
            .collect();
        return Err(v.invalid(format!(
            "{} has no stored procedures: procedures=true applies to db={}",
            db.name(),
            takers.join(" or db=")
        )));
    }
    Ok(false)
}

pub(super) fn pgbench(g: &dyn Fn(&str) -> Val) -> Result<DbWork, SettingError> {
    let (clients, jobs) = (g("clients"), g("jobs"));
    let (c, j) = (clients.int(1, 1_000)? as u32, jobs.int(1, 1_000)? as u32);
    if j > c || c % j != 0 {
        return Err(jobs.invalid(format!(
            "pgbench needs the clients ({c}) to be a multiple of the jobs ({j})"
        )));
    }
    let limit = g("latency_limit");
    let latency_limit = if limit.text.trim() == "0" {
        None
    } else {
        Some(limit.duration(Duration::from_micros(1), Duration::from_secs(3600))?)
    };
    let rate_tps = optional(&g("rate"))?;
    if latency_limit.is_some() && rate_tps.is_none() {
        return Err(
            limit.invalid("latency_limit applies with a rate (pgbench --latency-limit needs -R)")
        );
    }
    Ok(DbWork::Pgbench {
        scale: g("scale").int(1, 100_000)? as u32,
        clients: c,
        jobs: j,
        rate_tps,
        latency_limit,
    })
}

pub(super) fn sysbench(g: &dyn Fn(&str) -> Val) -> Result<DbWork, SettingError> {
    let test = g("test").choice(&SYSBENCH_TESTS)?.to_string();
    Ok(DbWork::Sysbench {
        test,
        tables: g("tables").int(1, 10_000)? as u32,
        table_size: g("table_size").int(1, 1_000_000_000)?,
        threads: g("threads").int(1, 1_000)? as u32,
        rate_tps: optional(&g("rate"))?,
    })
}

/// TPC-H runs its phases to their end: a time limit or warm-up has no meaning there.
pub(super) fn refuse_run_keys(user: &Settings) -> Result<(), SettingError> {
    for key in RUN_KEYS.iter().map(|k| k.key) {
        if user.get(key).is_some() {
            return Err(user_val(user, key).invalid(
                "tpch runs each phase to its end and the 22 queries once each: it takes no \
                 run keys (set sf for a bigger run)",
            ));
        }
    }
    Ok(())
}

pub(super) fn tpch(g: &dyn Fn(&str) -> Val) -> Result<DbWork, SettingError> {
    let sf = g("sf");
    let value: f64 = sf
        .text
        .trim()
        .parse()
        .ok()
        .filter(|v: &f64| (0.01..=100.0).contains(v))
        .ok_or_else(|| sf.invalid("a scale factor from 0.01 to 100 (1 is about 1 GB)"))?;
    Ok(DbWork::Tpch {
        sf: value,
        load_threads: g("load_threads").int(1, 64)? as u32,
    })
}

fn optional(rate: &Val) -> Result<Option<f64>, SettingError> {
    if rate.text.trim() == "0" {
        Ok(None)
    } else {
        rate.rate(1e9).map(Some)
    }
}
