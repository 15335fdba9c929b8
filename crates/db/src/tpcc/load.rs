//! Loading the population: the schema, ITEM once and each warehouse's rows on up to
//! `load_threads` connections at a time (each through `Conn::bulk_load`), then the keys,
//! indexes, the transactions' functions (with `procedures`) and statistics, then the row
//! counts checked against the specification.

use super::populate::Population;
use super::procedures;
use super::schema::{self, KeysAt, Table};
use super::{TpccError, TpccPlan};
use crate::backend::{Conn, Database};
use crate::dialect::dialect;
use crate::parallel::for_each_job;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// How a load went.
#[derive(Clone, Debug)]
pub struct LoadReport {
    /// Dropping and creating the tables.
    pub schema: Duration,
    /// Generating and loading the rows.
    pub data: Duration,
    /// Primary keys (if made after the load), secondary indexes, the transactions' functions
    /// (with `procedures`), and `ANALYZE`.
    pub indexes: Duration,
    /// The whole load, row-count check included.
    pub total: Duration,
    /// Rows per table, as counted after the load.
    pub rows: BTreeMap<Table, i64>,
}

/// One loader's piece of work.
#[derive(Clone, Copy, Debug)]
enum Job {
    Items,
    Warehouse(i64),
}

fn database_error(what: impl Into<String>) -> impl FnOnce(crate::DbError) -> TpccError {
    let what = what.into();
    move |source| TpccError::Database { what, source }
}

/// Loads a fresh population for `plan` (dropping any earlier TPC-C tables) and checks it;
/// the primary keys are made when [`KeysAt::default_for`] the database says.
pub fn load(db: &dyn Database, plan: &TpccPlan) -> Result<LoadReport, TpccError> {
    load_with_keys(
        db,
        plan,
        KeysAt::default_for(db.kind()),
        &AtomicBool::new(false),
    )
}

/// [`load`], ending early with [`TpccError::Interrupted`] once `stop` is raised (the loaders
/// notice within a row).
pub fn load_until(
    db: &dyn Database,
    plan: &TpccPlan,
    stop: &AtomicBool,
) -> Result<LoadReport, TpccError> {
    load_with_keys(db, plan, KeysAt::default_for(db.kind()), stop)
}

/// [`load_until`], with the primary keys made at `keys`.
pub fn load_with_keys(
    db: &dyn Database,
    plan: &TpccPlan,
    keys: KeysAt,
    stop: &AtomicBool,
) -> Result<LoadReport, TpccError> {
    plan.validate_for(db.kind())?;
    let start = Instant::now();
    let mut conn = db.connect().map_err(database_error("connecting to load"))?;
    let ddl = schema::drop_tables() + &schema::create_tables(db.kind(), keys);
    conn.batch(&ddl)
        .map_err(database_error("creating the tables"))?;
    let schema_done = Instant::now();

    let now_us = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_micros() as i64);
    let population = Population::new(plan.seed, now_us);
    load_rows(db, &population, plan, stop)?;
    if stop.load(Ordering::Relaxed) {
        return Err(TpccError::Interrupted);
    }
    let data_done = Instant::now();

    let after = schema::create_keys(db.kind(), keys) + schema::create_indexes();
    conn.batch(&after)
        .map_err(database_error("creating keys and indexes"))?;
    if let Some(definitions) = procedures::create_functions(db.kind()).filter(|_| plan.procedures) {
        conn.batch(definitions)
            .map_err(database_error("creating the transactions' functions"))?;
    }
    let tables: Vec<&str> = Table::ALL.iter().map(|t| t.name()).collect();
    conn.batch(&dialect(db.kind()).analyze(&tables))
        .map_err(database_error("gathering statistics"))?;
    let indexes_done = Instant::now();
    let rows = check_row_counts(conn.as_mut(), i64::from(plan.warehouses))?;
    Ok(LoadReport {
        schema: schema_done - start,
        data: data_done - schema_done,
        indexes: indexes_done - data_done,
        total: start.elapsed(),
        rows,
    })
}

/// Runs the jobs (ITEM first, then each warehouse) on up to `load_threads` threads, each
/// with its own connection.
fn load_rows(
    db: &dyn Database,
    population: &Population,
    plan: &TpccPlan,
    stop: &AtomicBool,
) -> Result<(), TpccError> {
    let jobs: Vec<Job> = std::iter::once(Job::Items)
        .chain((1..=i64::from(plan.warehouses)).map(Job::Warehouse))
        .collect();
    for_each_job(
        &jobs,
        plan.load_threads as usize,
        stop,
        || db.connect().map_err(database_error("connecting to load")),
        |conn, job| load_job(conn.as_mut(), population, *job, stop),
    )
}

/// Loads one job's tables.
fn load_job(
    conn: &mut dyn Conn,
    population: &Population,
    job: Job,
    stop: &AtomicBool,
) -> Result<(), TpccError> {
    let (tables, w_id): (&[Table], i64) = match job {
        Job::Items => (&[Table::Item], 0),
        Job::Warehouse(w) => (&Table::ALL[1..], w),
    };
    for &table in tables {
        let mut rows = population
            .rows(table, w_id)
            .take_while(|_| !stop.load(Ordering::Relaxed));
        conn.bulk_load(table.name(), &table.columns(), &mut rows)
            .map_err(database_error(format!(
                "loading {} of warehouse {w_id}",
                table.name()
            )))?;
    }
    Ok(())
}

fn count(conn: &mut dyn Conn, sql: &str, what: &str) -> Result<i64, TpccError> {
    let rows = conn
        .query(sql, &[])
        .map_err(database_error(format!("counting {what}")))?;
    Ok(rows
        .first()
        .and_then(|r| r.first())
        .and_then(|v| v.int())
        .unwrap_or(0))
}

/// Counts every table's rows and checks them against the specification for `warehouses`
/// warehouses (ORDER-LINE: one row per line its orders announce, 5 to 15 per order).
pub fn check_row_counts(
    conn: &mut dyn Conn,
    warehouses: i64,
) -> Result<BTreeMap<Table, i64>, TpccError> {
    let mut found = BTreeMap::new();
    for table in Table::ALL {
        let sql = format!("SELECT count(*) FROM {}", table.name());
        let n = count(conn, &sql, table.name())?;
        let expected = match Population::expected_rows(table, warehouses) {
            Some(e) if e != n => Some(e.to_string()),
            Some(_) => None,
            None => {
                let sum = dialect(conn.kind()).int_cast("coalesce(sum(o_ol_cnt), 0)");
                let sql = format!("SELECT {sum} FROM orders");
                let lines = count(conn, &sql, "order lines announced")?;
                let orders = found.get(&Table::Orders).copied().unwrap_or(0);
                let range = 5 * orders..=15 * orders;
                (n != lines || !range.contains(&n))
                    .then(|| format!("{lines} (the orders' line counts, within {range:?})"))
            }
        };
        if let Some(expected) = expected {
            return Err(TpccError::RowCount {
                table: table.name(),
                expected,
                found: n,
                warehouses,
            });
        }
        found.insert(table, n);
    }
    Ok(found)
}
