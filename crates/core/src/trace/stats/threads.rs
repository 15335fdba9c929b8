//! Each thread's figures: op mix, sizes, sequential share, rates, syncs, asynchrony.

use super::done;
use crate::trace::classify::{continues, file_of, share};
use crate::trace::model::{OpCode, Record, Trace};
use serde::Serialize;
use std::collections::{BTreeMap, HashMap, HashSet};

/// One thread of the trace.
#[derive(Clone, Debug, Serialize)]
pub struct ThreadStats {
    /// Its id in the trace.
    pub id: u32,
    /// Its thread id when captured.
    pub tid: u32,
    /// Its process id.
    pub tgid: u32,
    /// Its name.
    pub comm: String,
    /// Its calls.
    pub records: u64,
    /// Its calls by op name.
    pub ops: BTreeMap<String, u64>,
    /// Its reads.
    pub reads: u64,
    /// Its writes.
    pub writes: u64,
    /// Bytes it read.
    pub bytes_read: u64,
    /// Bytes it wrote.
    pub bytes_written: u64,
    /// The most frequent size of its reads and writes.
    pub modal_size: Option<u64>,
    /// Median size of its reads and writes.
    pub p50_size: Option<u64>,
    /// 99th percentile of the same.
    pub p99_size: Option<u64>,
    /// Share of its reads and writes that continued its previous one of the same kind on the
    /// same file.
    pub seq_share: Option<f64>,
    /// Seconds in which it started a call.
    pub active_s: u64,
    /// Calls per active second.
    pub ops_per_active_s: f64,
    /// Reads and writes per second of the whole capture (what a fitted role offers).
    pub io_per_s: f64,
    /// fsync and fdatasync calls.
    pub syncs: u64,
    /// Syncs per write.
    pub syncs_per_write: Option<f64>,
    /// Share of its calls that were asynchronous.
    pub async_share: f64,
    /// Mean asynchronous I/Os in flight while it had any.
    pub mean_in_flight: Option<f64>,
    /// CPU time between its calls (0 when not recorded).
    pub cpu_ns: u64,
}

/// The nearest-rank percentile `p` (0..1) of sorted `v`.
pub(crate) fn percentile(v: &[u64], p: f64) -> Option<u64> {
    let rank = ((p * v.len() as f64).ceil() as usize).clamp(1, v.len().max(1));
    v.get(rank - 1).copied()
}

/// The most frequent value (the smaller on a tie).
pub(crate) fn mode(v: &[u64]) -> Option<u64> {
    let mut counts: HashMap<u64, u64> = HashMap::new();
    for x in v {
        *counts.entry(*x).or_default() += 1;
    }
    counts
        .into_iter()
        .max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(&a.0)))
        .map(|(x, _)| x)
}

/// The figures of every thread.
pub(super) fn of(trace: &Trace, duration_s: f64) -> Vec<ThreadStats> {
    (trace.threads.iter().zip(&trace.ops).enumerate())
        .map(|(id, (entry, ops))| {
            let mut s = one(trace, ops, duration_s);
            s.id = id as u32;
            s.tid = entry.tid;
            s.tgid = entry.tgid;
            s.comm = entry.comm.clone();
            s
        })
        .collect()
}

fn one(trace: &Trace, ops: &[Record], duration_s: f64) -> ThreadStats {
    let mut mix: BTreeMap<String, u64> = BTreeMap::new();
    let (mut reads, mut writes, mut bytes_read, mut bytes_written) = (0, 0, 0, 0);
    let (mut syncs, mut asyncs, mut cpu_ns, mut seq, mut pairs) = (0, 0, 0, 0, 0);
    let mut sizes = Vec::new();
    let mut seconds = HashSet::new();
    let mut prev: HashMap<(u32, bool), (u64, u64)> = HashMap::new();
    let (mut async_busy_ns, mut async_span) = (0u64, None::<(u64, u64)>);
    for r in ops {
        let Some(op) = r.op else { continue };
        *mix.entry(op.name().to_string()).or_default() += 1;
        seconds.insert(r.start_ns / 1_000_000_000);
        cpu_ns += r.cpu_ns;
        if r.is_async {
            asyncs += 1;
            async_busy_ns += r.dur_ns;
            let (a, b) = async_span.unwrap_or((r.start_ns, r.end_ns()));
            async_span = Some((a.min(r.start_ns), b.max(r.end_ns())));
        }
        match op {
            OpCode::Read | OpCode::Write => {
                let write = op == OpCode::Write;
                if write {
                    writes += 1;
                    bytes_written += done(r.result);
                } else {
                    reads += 1;
                    bytes_read += done(r.result);
                }
                sizes.push(r.len);
                if let Some(f) = file_of(trace, r) {
                    let end = (r.offset, r.offset.saturating_add(r.len));
                    if let Some(p) = prev.insert((f, write), end) {
                        pairs += 1;
                        seq += u64::from(continues(p, r.offset));
                    }
                }
            }
            OpCode::Fsync | OpCode::Fdatasync => syncs += 1,
            _ => {}
        }
    }
    sizes.sort_unstable();
    let records = mix.values().sum::<u64>();
    let active_s = seconds.len() as u64;
    ThreadStats {
        id: 0,
        tid: 0,
        tgid: 0,
        comm: String::new(),
        records,
        ops: mix,
        reads,
        writes,
        bytes_read,
        bytes_written,
        modal_size: mode(&sizes),
        p50_size: percentile(&sizes, 0.5),
        p99_size: percentile(&sizes, 0.99),
        seq_share: share(seq, pairs),
        active_s,
        ops_per_active_s: if active_s > 0 {
            records as f64 / active_s as f64
        } else {
            0.0
        },
        io_per_s: if duration_s > 0.0 {
            (reads + writes) as f64 / duration_s
        } else {
            0.0
        },
        syncs,
        syncs_per_write: share(syncs, writes),
        async_share: share(asyncs, records).unwrap_or(0.0),
        mean_in_flight: async_span
            .filter(|(a, b)| b > a)
            .map(|(a, b)| async_busy_ns as f64 / (b - a) as f64),
        cpu_ns,
    }
}
