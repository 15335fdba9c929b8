//! bakeoff's core: the data that flows between stages, with no system calls.
//!
//! * [`units`]: fio's unit grammar (`4k`, `1m`, `500us`, `30s`).
//! * [`settings`]: key = value settings as written (TOML files, `--set`), with where each came from.
//! * [`keys`]: every key a workload or study file accepts, documented once.
//! * [`workload`]: workload definitions (plain fio-like jobs and personalities) as data;
//!   [`job`] and [`personality`] read them, and one planner resolves both.
//! * [`plan`]: the validated, resolved plan a run executes; [`fileop`] its file operations and
//!   the directory trees they work on.
//! * [`study`]: stacks × workloads × sweeps × repetitions.
//! * [`recipe`]: phases run in order on a stack (commands or built-in actions).
//! * [`record`]: the run record written as JSON, every part of it a file of `record/` (the
//!   machine, the results, a database's, a recipe's phases, MPI hosts, the warm-up, findings,
//!   the flat summary); [`summary`] computes the summary, [`findings`] the findings and
//!   [`steady`] decides the warm-up.
//! * [`ramp`]: load ramps: the spec, the choice of each point, the points as recorded.
//! * [`trace`]: a captured trace of a database's file-system calls, as replayed.
//! * [`verify`]: the header and checksum of verified blocks (`verify=crc32c|sha256`).

mod doc;
pub mod fileop;
pub mod findings;
pub mod keys;
pub mod op;
pub mod personality;
pub mod plan;
mod planner;
pub mod ramp;
pub mod recipe;
pub mod record;
pub mod settings;
pub mod steady;
pub mod study;
pub mod summary;
pub mod trace;
pub mod units;
pub mod verdict;
pub mod verify;
pub mod workload;

pub mod catalog;
pub mod dbplan;
pub mod disturbance;
pub mod job;
mod values;

pub use plan::Plan;
// Parts of the record under the names the other crates know them by.
pub use record::database as dbrecord;
pub use record::mpi;
pub use record::phase as phaserecord;
