//! Pure parsers, one file per source file. They take the text already read and never touch the
//! system, so they are unit-tested on fixtures captured from real kernels
//! (`tests/fixtures/proc/<kernel>/`). None of them panics on any input.

mod arcstats;
mod block_stat;
mod cpuinfo;
mod meminfo;
mod mountinfo;
mod pid_stat;
mod proc_stat;
mod trace_stats;

pub use arcstats::{parse_arc_counters, parse_arc_size, ArcCounters};
pub use block_stat::{parse_block_stat, DiskCounters};
pub use cpuinfo::parse_cpu_model;
pub use meminfo::{parse_meminfo, MemInfo};
pub use mountinfo::{parse_mountinfo, MountEntry};
pub use pid_stat::{parse_pid_stat, ProcStat};
pub use proc_stat::{parse_proc_stat, CpuTimes};
pub use trace_stats::parse_trace_events_written;

use crate::error::ProbeError;

/// Parses one decimal counter, naming the file and field on failure.
fn number(file: &'static str, field: &str, token: &str) -> Result<u64, ProbeError> {
    token
        .parse()
        .map_err(|_| ProbeError::parse(file, format!("{field}: {token:?} is not a counter")))
}
