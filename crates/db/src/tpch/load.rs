//! The load: every table's parts (the biggest first, so the loaders finish together) shared
//! out among `load_threads` connections, each part generated and streamed into
//! `Conn::bulk_load` (COPY FROM STDIN for PostgreSQL, batched inserts for SQLite) as it is
//! made; then each table's rows counted and checked against the scale factor.

use super::rows::{expected_rows, parts, rows};
use super::schema::Table;
use super::{database_error, Phase, PhaseReport, Step, TpchError, TpchPlan};
use crate::backend::{Conn, Database};
use crate::parallel::for_each_job;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::Instant;

/// One part of one table.
#[derive(Clone, Copy, Debug)]
struct Job {
    table: Table,
    part: i32,
    parts: i32,
    /// Rows it makes, about (for the order).
    size: i64,
}

/// When a part was loaded, and how many rows went in.
struct Done {
    table: Table,
    rows: u64,
    start: Instant,
    end: Instant,
}

fn jobs(sf: f64) -> Vec<Job> {
    let mut jobs: Vec<Job> = Table::ALL
        .into_iter()
        .flat_map(|table| {
            let parts = parts(table, sf);
            let size = expected_rows(table, sf) / i64::from(parts);
            (1..=parts).map(move |part| Job {
                table,
                part,
                parts,
                size,
            })
        })
        .collect();
    jobs.sort_by_key(|j| std::cmp::Reverse(j.size));
    jobs
}

/// Loads the data for `plan` into tables [`super::schema::create_tables`] made (empty), then
/// checks the row counts. Ends with [`TpchError::Interrupted`] once `stop` is raised (the
/// loaders notice within a row).
pub(super) fn load(
    db: &dyn Database,
    plan: &TpchPlan,
    stop: &AtomicBool,
) -> Result<PhaseReport, TpchError> {
    plan.validate()?;
    let start = Instant::now();
    let done: Mutex<Vec<Done>> = Mutex::default();
    let load_part = |conn: &mut Box<dyn Conn>, job: &Job| -> Result<(), TpchError> {
        let table = job.table;
        let began = Instant::now();
        let mut generated =
            rows(table, plan.sf, job.part, job.parts).take_while(|_| !stop.load(Ordering::Relaxed));
        let loaded = conn
            .bulk_load(table.name(), &table.columns(), &mut generated)
            .map_err(database_error(format!(
                "loading part {} of {} of {}",
                job.part,
                job.parts,
                table.name()
            )))?;
        let end = Instant::now();
        let mut done = done.lock().unwrap_or_else(|p| p.into_inner());
        done.push(Done {
            table,
            rows: loaded,
            start: began,
            end,
        });
        Ok(())
    };
    let connect = || db.connect().map_err(database_error("connecting to load"));
    for_each_job(
        &jobs(plan.sf),
        plan.load_threads as usize,
        stop,
        connect,
        load_part,
    )?;
    if stop.load(Ordering::Relaxed) {
        return Err(TpchError::Interrupted {
            phase: Phase::Load.name(),
        });
    }
    let mut conn = connect()?;
    check_row_counts(conn.as_mut(), plan.sf)?;
    let done = done.into_inner().unwrap_or_else(|p| p.into_inner());
    let steps: Vec<Step> = Table::ALL.iter().map(|&t| table_step(t, &done)).collect();
    Ok(PhaseReport {
        phase: Phase::Load,
        elapsed: start.elapsed(),
        rows: steps.iter().map(|s| s.rows).sum(),
        steps,
    })
}

/// A table's rows and the span from its first part's start to its last part's end.
fn table_step(table: Table, done: &[Done]) -> Step {
    let parts: Vec<&Done> = done.iter().filter(|d| d.table == table).collect();
    let first = parts.iter().map(|d| d.start).min();
    let last = parts.iter().map(|d| d.end).max();
    Step {
        name: table.name().to_string(),
        rows: parts.iter().map(|d| d.rows).sum(),
        elapsed: match (first, last) {
            (Some(first), Some(last)) => last - first,
            _ => Default::default(),
        },
    }
}

/// Counts every table's rows and checks them against what the generator makes at `sf`
/// ([`expected_rows`]); a table that differs is an error naming it.
pub fn check_row_counts(conn: &mut dyn Conn, sf: f64) -> Result<BTreeMap<Table, i64>, TpchError> {
    let mut found = BTreeMap::new();
    for table in Table::ALL {
        let sql = format!("SELECT count(*) FROM {}", table.name());
        let rows = conn.query(&sql, &[]).map_err(database_error(format!(
            "counting the rows of {}",
            table.name()
        )))?;
        let n = rows
            .first()
            .and_then(|r| r.first())
            .and_then(|v| v.int())
            .unwrap_or(0);
        let expected = expected_rows(table, sf);
        if n != expected {
            return Err(TpchError::RowCount {
                table: table.name(),
                expected,
                found: n,
                sf,
            });
        }
        found.insert(table, n);
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jobs_cover_every_part_of_every_table_biggest_first() {
        let jobs = jobs(1.0);
        assert_eq!(jobs.len(), 30 + 8 + 4 + 1 + 1 + 1 + 1 + 1);
        assert!(jobs[..30].iter().all(|j| j.table == Table::LineItem));
        assert!(jobs.windows(2).all(|w| w[0].size >= w[1].size));
        for table in Table::ALL {
            let mine: Vec<i32> = jobs
                .iter()
                .filter(|j| j.table == table)
                .map(|j| j.part)
                .collect();
            let n = mine.len() as i32;
            let mut sorted = mine.clone();
            sorted.sort();
            assert_eq!(sorted, (1..=n).collect::<Vec<_>>(), "{table:?}");
        }
    }
}
