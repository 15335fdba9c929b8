//! The phases a CLI or recipe runs one by one, each on a connection of its own and each
//! saying what it did.

use super::answers::{Answers, WrongAnswer};
use super::keys::{self, FOREIGN_KEYS};
use super::queries::{self, QueryReport, NAMES, QUERIES};
use super::schema::{self, Table};
use super::{database_error, load, Phase, PhaseReport, Step, TpchError, TpchPlan};
use crate::backend::{Conn, Database};
use crate::dialect::dialect;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

/// TPC-H on one database at one scale factor.
pub struct Tpch<'a> {
    db: &'a dyn Database,
    plan: TpchPlan,
    expected: Option<Answers>,
}

impl<'a> Tpch<'a> {
    /// TPC-H on `db` as `plan` says (checked here).
    pub fn new(db: &'a dyn Database, plan: TpchPlan) -> Result<Tpch<'a>, TpchError> {
        plan.validate()?;
        Ok(Tpch {
            db,
            plan,
            expected: None,
        })
    }

    /// The same, with `tpch.queries` checking every answer against `expected`
    /// ([`TpchError::WrongAnswers`] names the queries that differ).
    pub fn checking(self, expected: Answers) -> Tpch<'a> {
        Tpch {
            expected: Some(expected),
            ..self
        }
    }

    /// The plan.
    pub fn plan(&self) -> &TpchPlan {
        &self.plan
    }

    /// Runs `phase` ([`Phase::from_name`] finds it by its action name).
    pub fn run(&self, phase: Phase, stop: &AtomicBool) -> Result<PhaseReport, TpchError> {
        match phase {
            Phase::Schema => self.create_schema(),
            Phase::Load => self.load(stop),
            Phase::Indexes => self.create_indexes(),
            Phase::Keys => self.create_keys(),
            Phase::Analyze => self.analyze(),
            Phase::Queries => self.queries(stop),
        }
    }

    fn connect(&self, phase: Phase) -> Result<Box<dyn Conn>, TpchError> {
        (self.db.connect()).map_err(database_error(format!("connecting for {}", phase.name())))
    }

    /// `tpch.schema`: drops any TPC-H tables and creates the eight, without keys.
    pub fn create_schema(&self) -> Result<PhaseReport, TpchError> {
        let kind = self.db.kind();
        let ddl = schema::drop_tables(kind) + &schema::create_tables(kind);
        self.statements(Phase::Schema, vec![("tables".into(), ddl)])
    }

    /// `tpch.load`: generates the data at the plan's scale factor on `load_threads`
    /// connections, streaming it into the tables, then checks every table's rows
    /// ([`TpchError::RowCount`] names a table that differs).
    pub fn load(&self, stop: &AtomicBool) -> Result<PhaseReport, TpchError> {
        load::load(self.db, &self.plan, stop)
    }

    /// Counts every table's rows and checks them against the scale factor.
    pub fn check_row_counts(&self) -> Result<BTreeMap<Table, i64>, TpchError> {
        let mut conn = self.connect(Phase::Load)?;
        load::check_row_counts(conn.as_mut(), self.plan.sf)
    }

    /// `tpch.indexes`: the secondary indexes ([`keys::INDEXES`]), one step each.
    pub fn create_indexes(&self) -> Result<PhaseReport, TpchError> {
        let statements = keys::create_indexes()
            .into_iter()
            .map(|(name, sql)| (name.to_string(), sql))
            .collect();
        self.statements(Phase::Indexes, statements)
    }

    /// `tpch.keys`: every table's primary key, then the foreign keys of clause 1.4.2. In
    /// PostgreSQL each is a constraint the server validates; SQLite cannot add a constraint to
    /// a table it has, so a primary key is a unique index and each foreign key is validated
    /// by the query a database runs for it ([`keys::count_orphans`]): a row that refers to
    /// nothing is a [`TpchError::Orphans`].
    pub fn create_keys(&self) -> Result<PhaseReport, TpchError> {
        let kind = self.db.kind();
        let mut report = self.statements(Phase::Keys, keys::create_primary_keys(kind))?;
        let start = Instant::now() - report.elapsed;
        let mut conn = self.connect(Phase::Keys)?;
        for key in &FOREIGN_KEYS {
            let began = Instant::now();
            let what = || format!("adding foreign key {}", key.name);
            if dialect(kind).has_foreign_keys() {
                conn.batch(&keys::add_foreign_key(key))
                    .map_err(database_error(what()))?;
            } else {
                let rows =
                    (conn.query(&keys::count_orphans(key), &[])).map_err(database_error(what()))?;
                let orphans = rows.first().and_then(|r| r.first()).and_then(|v| v.int());
                if let Some(orphans @ 1..) = orphans {
                    return Err(TpchError::Orphans {
                        key: key.name,
                        table: key.table.name(),
                        references: key.references.name(),
                        orphans,
                    });
                }
            }
            report.steps.push(step(key.name, 0, began));
        }
        report.elapsed = start.elapsed();
        Ok(report)
    }

    /// `tpch.analyze`: the optimiser's statistics, table by table.
    pub fn analyze(&self) -> Result<PhaseReport, TpchError> {
        let statements = Table::ALL
            .iter()
            .map(|t| (t.name().to_string(), format!("ANALYZE {}", t.name())))
            .collect();
        self.statements(Phase::Analyze, statements)
    }

    /// Query `number` (1 to 22), timed, with its answer.
    pub fn run_query(&self, number: u8) -> Result<QueryReport, TpchError> {
        let mut conn = self.connect(Phase::Queries)?;
        self.query_on(conn.as_mut(), number)
    }

    fn query_on(&self, conn: &mut dyn Conn, number: u8) -> Result<QueryReport, TpchError> {
        let Some(sql) = queries::sql(number, self.db.kind(), self.plan.sf) else {
            return Err(TpchError::Plan(format!(
                "there is no query {number}: TPC-H's queries are 1 to {QUERIES}"
            )));
        };
        queries::run(conn, number, &sql).map_err(|source| TpchError::Query {
            number,
            name: NAMES[usize::from(number) - 1],
            source,
        })
    }

    /// `tpch.queries`: the 22 queries in order on one connection, each a step (`Q1` ...)
    /// with the rows it returned. `stop` is looked at before each query. With expected
    /// answers ([`Tpch::checking`]), all 22 run and any that differ fail the phase.
    pub fn queries(&self, stop: &AtomicBool) -> Result<PhaseReport, TpchError> {
        let start = Instant::now();
        let mut conn = self.connect(Phase::Queries)?;
        let mut steps = Vec::with_capacity(usize::from(QUERIES));
        let mut wrong = Vec::new();
        for number in 1..=QUERIES {
            if stop.load(Ordering::Relaxed) {
                return Err(TpchError::Interrupted {
                    phase: Phase::Queries.name(),
                });
            }
            let report = self.query_on(conn.as_mut(), number)?;
            let expected = self.expected.as_ref();
            if let Some(difference) = expected.and_then(|e| e.difference(&report)) {
                wrong.push(WrongAnswer { number, difference });
            }
            steps.push(Step {
                name: format!("Q{number}"),
                rows: report.rows,
                elapsed: report.elapsed,
            });
        }
        if let (Some(expected), false) = (&self.expected, wrong.is_empty()) {
            return Err(TpchError::WrongAnswers {
                against: expected.source(),
                wrong,
            });
        }
        Ok(PhaseReport {
            phase: Phase::Queries,
            elapsed: start.elapsed(),
            rows: steps.iter().map(|s| s.rows).sum(),
            steps,
        })
    }

    /// Runs each named statement as a step of `phase`.
    fn statements(
        &self,
        phase: Phase,
        statements: Vec<(String, String)>,
    ) -> Result<PhaseReport, TpchError> {
        let start = Instant::now();
        let mut conn = self.connect(phase)?;
        let mut steps = Vec::with_capacity(statements.len());
        for (name, sql) in statements {
            let began = Instant::now();
            conn.batch(&sql)
                .map_err(database_error(format!("{}: {name}", phase.name())))?;
            steps.push(step(&name, 0, began));
        }
        Ok(PhaseReport {
            phase,
            elapsed: start.elapsed(),
            rows: 0,
            steps,
        })
    }
}

fn step(name: &str, rows: u64, began: Instant) -> Step {
    Step {
        name: name.to_string(),
        rows,
        elapsed: began.elapsed(),
    }
}
