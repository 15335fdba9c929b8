//! The one run pipeline. Every run goes through it — `run`, `exec`, each cell of `compare`,
//! rank 0 of `run --mpi`: what a name is ([`resolve`]: an I/O workload, a database workload or
//! a recipe), what that work refuses where it would run ([`Work::refuse`], the database
//! server's own settings check included), what the machine must allow there
//! ([`Work::check_place`]: the stacks' tools, sizes and room, or the target), what a dry run
//! prints ([`Work::dry_run`]), the run itself ([`Work::execute`]) and the report ([`report`]).
//! The commands only turn their flags into a [`Source`], settings and a [`Place`].

mod check;
mod execute;
mod request;
mod resolve;

pub use check::{Place, Ready};
#[cfg(feature = "mpi")]
pub use execute::starts_cold;
pub use execute::{report, RunFlags};
pub use request::Request;
pub use resolve::{load_workload, parse_sets, resolve, work_of, Source};

use bakeoff_core::dbplan::DbPlan;
use bakeoff_core::ramp::RampSpec;
use bakeoff_core::recipe::RecipePlan;
use bakeoff_core::steady::expected_warmup as warmup;
use bakeoff_core::Plan;
use std::time::Duration;

/// What one run runs: a name resolved and planned with its settings.
pub enum Work {
    /// An I/O or file workload (slob, oltp, a workload file ...).
    Io(Plan),
    /// A load ramp of an I/O or file workload.
    Ramp(Plan, RampSpec),
    /// A real database (tpcc, pgbench, sysbench, tpch).
    Db(Box<DbPlan>),
    /// A recipe: phases of commands or actions.
    Recipe(Box<RecipePlan>),
}

impl Work {
    /// Bytes the data takes on the stack (a recipe's commands write what they write: 0).
    pub fn dataset_bytes(&self) -> u64 {
        match self {
            Work::Io(p) | Work::Ramp(p, _) => p.dataset_bytes(),
            Work::Db(p) => p.dataset_bytes(),
            Work::Recipe(_) => 0,
        }
    }

    /// Warm-up plus measured time (a recipe's phases take what they take: not known); an
    /// automatic warm-up as a steady run takes it.
    pub fn timed(&self) -> Duration {
        match self {
            Work::Io(p) => warmup(p.ramp_time, p.ramp_auto) + p.runtime,
            // The longest it can take: every point, each after the workload's warm-up.
            Work::Ramp(p, r) => {
                r.longest() + warmup(p.ramp_time, p.ramp_auto) * (r.max_points + r.bisect)
            }
            Work::Db(p) => warmup(p.ramp_time, p.ramp_auto) + p.runtime,
            Work::Recipe(_) => Duration::ZERO,
        }
    }

    /// Seconds a run takes besides its timed part: building, laying out or loading, tearing
    /// down (a database's load is the larger part of its run).
    pub fn overhead_secs(&self) -> f64 {
        match self {
            Work::Io(_) | Work::Ramp(..) | Work::Recipe(_) => 8.0,
            Work::Db(p) => 15.0 + p.dataset_bytes() as f64 / (4 << 20) as f64,
        }
    }
}
