//! bakeoff's engine: the per-I/O hot path. Engines (`psync`, `io_uring`, `null`), the dataset
//! layout, worker threads running a role's steps, rate pacing, the couplings between roles
//! (semaphores, group commit, dirty-block queue), and the per-thread counters and latency
//! histograms a run is measured with; file operations on directory trees; client processes.

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
pub mod results;
pub mod run;
pub mod shared;
pub mod stats;
pub mod warmup;
pub mod worker;

pub use interval::{KindLatency, TickLatency};
pub use layout::{lay_out, Dataset, LayoutError, Target};
pub use placement::{lay_out_placed, Placement};
pub use run::{execute, execute_gated, RunOutput, Tick, TickKind};
pub use shared::RunError;
pub use stats::Totals;
pub use worker::hog;
