//! bakeoff's engine: the per-I/O hot path. Engines (`psync`, `io_uring`, `null`), the dataset
//! layout, worker threads running a role's steps, rate pacing, the couplings between roles
//! (semaphores, group commit, dirty-block queue), and the per-thread counters and latency
//! histograms a run is measured with; file operations on directory trees; client processes;
//! the replay of a captured trace; data verification (`verify=`).

pub mod buffers;
pub mod clients;
pub mod clock;
pub mod coupling;
pub mod engines;
pub mod fdtable;
pub mod harness;
pub mod histogram;
pub mod interval;
pub mod kinds;
pub mod layout;
pub mod placement;
pub mod replay;
pub mod results;
pub mod run;
pub mod shared;
pub mod stats;
pub mod verify;
pub mod warmup;
pub mod worker;

pub use interval::{KindLatency, TickLatency};
pub use layout::{lay_out, Dataset, LayoutError, Target};
pub use placement::{lay_out_placed, Placement};
pub use run::{execute_gated, RunOutput, Tick, TickKind};
pub use shared::RunError;
pub use stats::Totals;
pub use worker::hog;

use bakeoff_core::plan::Plan;
use std::sync::atomic::AtomicBool;

/// Runs `plan` on `dataset`. `interrupt` is polled every 10 ms; `on_tick` is called at the start,
/// at the start of the measured window, every second and at the end. With `clients=N` the
/// roles run in N client processes (see [`clients`]), each on its copy of the dataset; a
/// plan with a replay replays its trace (see [`replay`]).
pub fn execute(
    plan: &Plan,
    dataset: &Dataset,
    interrupt: &AtomicBool,
    on_tick: &mut dyn FnMut(&Tick),
) -> Result<RunOutput, RunError> {
    if plan.replay.is_some() {
        return replay::run(plan, dataset, interrupt, on_tick);
    }
    if plan.clients > 0 {
        return clients::run_clients(plan, dataset, interrupt, on_tick);
    }
    let mut open = || Ok(());
    execute_gated(plan, dataset, interrupt, on_tick, &mut open)
}
