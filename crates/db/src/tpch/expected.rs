//! The answers a run's are checked against, made before the run: TPC-H's reference at SF 1,
//! else the 22 answers SQLite gives on a copy of the same generated data, loaded and queried
//! by the same phases as the run's database ([`Tpch`]).

use super::answers::Answers;
use super::queries::QUERIES;
use super::{Phase, Tpch, TpchError, TpchPlan};
use crate::sqlite::{JournalMode, Sqlite, SqliteOptions, Synchronous};
use std::path::Path;
use std::sync::atomic::AtomicBool;

/// The expected answers for a run at `sf`: TPC-H's at SF 1, else computed by SQLite in
/// `scratch` (a directory outside the run's stack; the caller removes it).
pub fn for_run(sf: f64, load_threads: u32, scratch: &Path) -> Result<Answers, TpchError> {
    if sf == 1.0 {
        Ok(Answers::reference_sf1())
    } else {
        computed_by_sqlite(TpchPlan { sf, load_threads }, scratch)
    }
}

/// The 22 answers SQLite gives on the data generated for `plan`, loaded into a database file
/// in `dir` without durability (`journal_mode=off`, `synchronous=off`: it is thrown away).
pub fn computed_by_sqlite(plan: TpchPlan, dir: &Path) -> Result<Answers, TpchError> {
    let options = SqliteOptions {
        journal_mode: Some(JournalMode::Off),
        synchronous: Some(Synchronous::Off),
        ..SqliteOptions::default()
    };
    let path = dir.join("tpch-answers.db");
    let db = Sqlite::open(&path, options).map_err(|source| TpchError::Database {
        what: format!("opening {} for the reference answers", path.display()),
        source,
    })?;
    let tpch = Tpch::new(&db, plan)?;
    let never = AtomicBool::new(false);
    for phase in [Phase::Schema, Phase::Load, Phase::Indexes, Phase::Analyze] {
        tpch.run(phase, &never)?;
    }
    let mut answers = Vec::with_capacity(usize::from(QUERIES));
    for n in 1..=QUERIES {
        answers.push(tpch.run_query(n)?.answer);
    }
    Ok(Answers::from_sqlite(&answers))
}
