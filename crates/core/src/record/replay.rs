//! `run --replay FILE`: what the replay counted beside the run's operations.

use serde::{Deserialize, Serialize};

/// What a replay did besides the operations it timed (docs/replay.md).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReplayRecord {
    /// Calls in the trace: a replay that ran to its end made all of them.
    pub trace_calls: u64,
    /// Calls replayed (every kind, timed or not).
    pub calls: u64,
    /// Cross-thread edges in the program (a call that must wait for another thread's).
    pub edges: u64,
    /// Calls that had to wait for another thread's call.
    pub dependency_waits: u64,
    /// Time spent in those waits.
    pub wait_ns: u64,
    /// Calls done but not timed as a kind (lseek, fadvise).
    pub untimed: u64,
    /// Asynchronous calls (AIO, io_uring) replayed: reads, writes and flushes through their
    /// thread's helpers, overlapping as captured; any other kind in order, synchronously.
    pub async_calls: u64,
    /// Fallocate calls the stack does not support (zfs-fuse) that the replay made as a
    /// database then does: by writing the part of the range past the file's end.
    #[serde(default)]
    pub allocate_emulated: u64,
    /// Regular files whose size at the end of a whole replay (every call made, `window=all`)
    /// was compared with their size when the capture ended; 0 when not compared.
    #[serde(default)]
    pub end_sizes_checked: u64,
    /// Of those, the files whose size differs from the captured one.
    #[serde(default)]
    pub end_sizes_differ: u64,
    /// With `syncs=merge`: syncs not made, because another thread's sync, begun after every
    /// write to the file done before, had made them durable (group commit).
    #[serde(default)]
    pub syncs_merged: u64,
    /// Opens the capture saw fail because the file was absent (a probe: PostgreSQL asks
    /// whether a relation's fork exists) that found the file in the replay: a removal the
    /// capture did not see, or a creation the program could not order before them. Such an
    /// open made no handle and changes nothing, so the replay goes on; it is counted here.
    #[serde(default)]
    pub probes_found: u64,
}
