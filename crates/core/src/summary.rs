//! Headline figures of a run, flat, for tables and comparisons: [`Summary::compute`], a pure
//! function of the run record (which keeps the [`Summary`]). `None` where a figure does not
//! apply (no writes, no devices), never 0.

use crate::op::{OpClass, OpKind};
use crate::record::{DeviceStats, OpStats, RunRecord};

pub use crate::record::Summary;

mod txn;

pub(crate) fn ratio(num: f64, den: f64) -> Option<f64> {
    (den > 0.0).then(|| num / den)
}

/// Operations and bytes of the kinds `pred` selects.
pub(crate) fn total(ops: &[OpStats], pred: impl Fn(OpKind) -> bool) -> (u64, u64) {
    ops.iter()
        .filter(|o| pred(o.kind))
        .fold((0, 0), |(n, b), o| (n + o.ops, b + o.bytes))
}

/// Percentile `p` of kind `kind` in µs, from the merged per-kind latencies.
pub(crate) fn percentile_us(ops: &[OpStats], kind: OpKind, p: f64) -> Option<f64> {
    ops.iter()
        .filter(|o| o.kind == kind && o.ops > 0)
        .find_map(|o| o.lat.as_ref()?.at(p))
        .map(|ns| ns as f64 / 1e3)
}

/// Bytes per page of the page cache (4 KiB on x86-64 and on most arm64 kernels).
const PAGE_BYTES: u64 = 4096;

/// `1 - added / spanned` for the window's `r_ops` reads of `r_bytes` (bakeoff's reads are
/// aligned to their size, so each spans `max(1, size / page)` pages). Direct reads look
/// nothing up, so with any direct role there is no ratio.
fn page_cache_hit_pct(record: &RunRecord, r_ops: u64, r_bytes: u64) -> Option<f64> {
    let added = record.memory.as_ref()?.page_cache_added_pages?;
    if record.plan.roles.iter().any(|r| r.direct) {
        return None;
    }
    let spanned = r_ops.max(r_bytes.div_ceil(PAGE_BYTES));
    ratio(added as f64, spanned as f64).map(|a| (100.0 * (1.0 - a)).clamp(0.0, 100.0))
}

impl Summary {
    /// The headline figures of `record`: from its merged per-kind results (`ops`), CPU,
    /// stack devices and memory, over its measured window.
    pub fn compute(record: &RunRecord) -> Summary {
        let secs = record.measured_ns as f64 / 1e9;
        let ops = &record.ops;
        let (r_ops, r_bytes) = total(ops, |k| k == OpKind::Read);
        // Transactions are not I/O: per-operation device and CPU figures count I/O only.
        let (w_ops, w_bytes) = total(ops, |k| matches!(k, OpKind::Write | OpKind::LogWrite));
        let (commits, _) = total(ops, |k| k == OpKind::Commit);
        let (file_ops, _) = total(ops, |k| k.class() == OpClass::File);
        let (every_op, _) = total(ops, |_| true);
        let per_sec = |n: u64| (n > 0 && secs > 0.0).then(|| n as f64 / secs);
        let cpu = record.cpu.as_ref();
        let split = cpu.and_then(|c| c.split.as_ref());
        let write_p99 = percentile_us(ops, OpKind::Write, 99.0)
            .or_else(|| percentile_us(ops, OpKind::LogWrite, 99.0));
        let arc = record.memory.as_ref().and_then(|m| {
            let (h, m) = (m.arc_hits?, m.arc_misses?);
            ratio(100.0 * h as f64, (h + m) as f64)
        });
        let mut s = Summary {
            read_iops: per_sec(r_ops),
            write_iops: per_sec(w_ops),
            read_mb_s: (r_ops > 0).then(|| per_sec(r_bytes).unwrap_or(0.0) / 1e6),
            write_mb_s: (w_ops > 0).then(|| per_sec(w_bytes).unwrap_or(0.0) / 1e6),
            commits_per_s: per_sec(commits),
            read_lat_p50_us: percentile_us(ops, OpKind::Read, 50.0),
            read_lat_p99_us: percentile_us(ops, OpKind::Read, 99.0),
            write_lat_p99_us: write_p99,
            commit_lat_p50_us: percentile_us(ops, OpKind::Commit, 50.0),
            commit_lat_p99_us: percentile_us(ops, OpKind::Commit, 99.0),
            cpu_busy_pct: cpu.map(|c| c.busy_pct),
            cpu_us_per_op: split
                .and_then(|x| ratio(x.work_us(), (r_ops + w_ops + file_ops) as f64)),
            file_ops_per_s: (file_ops > 0).then(|| per_sec(every_op)).flatten(),
            cpu_other_pct: split.map(|x| x.other_pct),
            cpu_steal_pct: cpu.map(|c| c.steal_pct),
            arc_hit_pct: arc,
            page_cache_hit_pct: page_cache_hit_pct(record, r_ops, r_bytes),
            replay_s: record.replay.is_some().then_some(secs),
            ..Summary::default()
        };
        let log = record.devices.iter().filter(|d| d.role == "log");
        let (log_ops, log_bytes) = log.fold((0u64, 0u64), |(n, b), d| {
            (n + d.write_ops, b + d.write_bytes)
        });
        let has_log_stack = record.devices.iter().any(|d| d.role == "log");
        // With the log on its own stack, the data devices answer for the data writes only.
        let data_writes = if has_log_stack {
            total(ops, |k| k == OpKind::Write)
        } else {
            (w_ops, w_bytes)
        };
        if has_log_stack {
            let (_, app_log) = total(ops, |k| k == OpKind::LogWrite);
            s.log_write_amplification = ratio(log_bytes as f64, app_log as f64);
            s.log_device_write_iops = ratio(log_ops as f64, secs);
            s.log_device_write_mb_s = ratio(log_bytes as f64 / 1e6, secs);
        }
        s.add_devices(&record.devices, (r_ops, r_bytes), data_writes, secs);
        s.add_peaks(record);
        s.add_transactions(record, secs);
        s.redundancy = record.stack.as_ref().and_then(|st| st.redundancy);
        s.write_amplification_per_copy = s
            .write_amplification
            .zip(s.redundancy)
            .and_then(|(w, r)| (r > 0.0).then(|| w / r));
        s.add_durability(record);
        s
    }

    /// The risk figures of a run with crash states.
    fn add_durability(&mut self, record: &RunRecord) {
        let Some(d) = record.durability.as_ref().filter(|d| d.states_checked > 0) else {
            return;
        };
        let share = |n: u64| 100.0 * n as f64 / d.states_checked as f64;
        self.crash_states = Some(d.states_checked as f64);
        self.crash_lost_pct = Some(share(d.states_losing_commits()));
        self.crash_damaged_pct = Some(share(d.states_damaged()));
        self.crash_worst_loss = Some(d.worst_loss as f64);
    }

    /// The stack-device figures: per second, per application operation and byte.
    fn add_devices(
        &mut self,
        devices: &[DeviceStats],
        (r_ops, r_bytes): (u64, u64),
        (w_ops, w_bytes): (u64, u64),
        secs: f64,
    ) {
        let stack: Vec<&DeviceStats> = devices.iter().filter(|d| d.role == "stack").collect();
        if stack.is_empty() {
            return;
        }
        let dev = |f: &dyn Fn(&DeviceStats) -> u64| stack.iter().map(|d| f(d)).sum::<u64>() as f64;
        let (dr_ops, dr_bytes) = (dev(&|d| d.read_ops), dev(&|d| d.read_bytes));
        let (dw_ops, dw_bytes) = (dev(&|d| d.write_ops), dev(&|d| d.write_bytes));
        let (r_ops, r_bytes, w_ops, w_bytes) =
            (r_ops as f64, r_bytes as f64, w_ops as f64, w_bytes as f64);
        self.device_read_iops = ratio(dr_ops, secs);
        self.device_write_iops = ratio(dw_ops, secs);
        self.device_read_mb_s = ratio(dr_bytes / 1e6, secs);
        self.device_write_mb_s = ratio(dw_bytes / 1e6, secs);
        self.device_read_bytes_per_op = ratio(dr_bytes, r_ops);
        self.device_write_bytes_per_op = ratio(dw_bytes, w_ops);
        self.read_amplification = ratio(dr_bytes, r_bytes);
        self.write_amplification = ratio(dw_bytes, w_bytes);
        self.avg_device_read_size_bytes = ratio(dr_bytes, dr_ops);
        self.avg_device_write_size_bytes = ratio(dw_bytes, dw_ops);
        self.reads_not_from_device_pct =
            ratio(dr_bytes, r_bytes).map(|a| (100.0 * (1.0 - a)).clamp(0.0, 100.0));
        self.device_reads_per_op = ratio(dr_ops, r_ops);
        self.device_writes_per_op = ratio(dw_ops, w_ops);
    }

    /// Fills the figures `self` lacks (null) from `fresh`, a summary computed again from the
    /// same record: records written by an earlier version gain the figures added since,
    /// while every figure they carry stays as written.
    pub fn fill_missing(&mut self, fresh: &Summary) {
        let (Ok(serde_json::Value::Object(mut mine)), Ok(serde_json::Value::Object(theirs))) =
            (serde_json::to_value(&*self), serde_json::to_value(fresh))
        else {
            return;
        };
        for (key, value) in theirs {
            let slot = mine.entry(key).or_insert(serde_json::Value::Null);
            if slot.is_null() {
                *slot = value;
            }
        }
        if let Ok(merged) = serde_json::from_value(serde_json::Value::Object(mine)) {
            *self = merged;
        }
    }

    /// The busiest second of the window on the stack's devices (seed 004 reports device
    /// MB/s "at peak"): the highest of the measured one-second samples.
    fn add_peaks(&mut self, record: &RunRecord) {
        let peak = |f: fn(&crate::record::Sample) -> Option<f64>| {
            let measured = record.samples.iter().filter(|x| x.measured);
            measured.filter_map(f).reduce(f64::max)
        };
        self.device_read_mb_s_peak = peak(|x| x.device_read_mb_s);
        self.device_write_mb_s_peak = peak(|x| x.device_write_mb_s);
    }
}

#[cfg(test)]
mod tests;
