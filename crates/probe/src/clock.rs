//! The one clock every part of a run notes instants on when they must be compared across
//! threads and crates: the write log's records, a TPC-C client's acknowledged commits, a
//! verified run's journal, a capture's marks (eBPF's `bpf_ktime_get_ns` is the same clock).

/// `CLOCK_MONOTONIC` in nanoseconds.
pub fn monotonic_ns() -> u64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
    (t.tv_sec as u64) * 1_000_000_000 + t.tv_nsec as u64
}
