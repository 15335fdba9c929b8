//! Fixed ramp run records for the snapshot tests of the ramp exporters and comparison.

use crate::comparison::CellRuns;
use bakeoff_core::ramp::{Phase, RampPoint, RampRecord, RampSpec, Stop};
use bakeoff_core::record::{CpuSplit, CpuStats, RunRecord};

/// What a stack costs per operation in a fixture ramp.
#[derive(Clone, Copy)]
pub struct Cost {
    /// Work CPU µs per operation.
    pub cpu_us: f64,
    /// Device bytes read per operation.
    pub read_bytes: f64,
    /// Device bytes written per operation.
    pub write_bytes: f64,
    /// Page cache, bytes.
    pub cache: u64,
}

/// A 30 s point at `rate` with p99 `p99_ms`, costing `cost` per operation.
fn point(index: u32, phase: Phase, rate: f64, p99_ms: f64, cost: Cost) -> RampPoint {
    let secs = 30.0;
    let achieved = rate.min(3000.0) * 0.999;
    let ops = (achieved * secs) as u64;
    let work_us = cost.cpu_us * ops as f64;
    let all_us = 2.0 * secs * 1e6;
    let p99 = (p99_ms * 1e6) as u64;
    let over = p99_ms > 5.0;
    RampPoint {
        index,
        phase,
        offered_ops_s: rate,
        achieved_ops_s: achieved,
        ops,
        measured_ns: (secs * 1e9) as u64,
        lat_mean_ns: Some(p99 as f64 / 4.0),
        lat_p50_ns: Some(p99 / 5),
        lat_p99_ns: Some(p99),
        lat_p999_ns: Some(p99 * 2),
        lat_max_ns: Some(p99 * 5),
        service_p50_ns: Some(150_000),
        limit_stat_ns: Some(p99 as f64),
        over_limit: over,
        saturated: achieved < 0.95 * rate,
        cpu: Some(CpuStats {
            cpus: 2,
            busy_pct: 100.0 * work_us / all_us,
            user_pct: 30.0 * work_us / all_us,
            system_pct: 70.0 * work_us / all_us,
            iowait_pct: 5.0,
            irq_pct: 0.0,
            softirq_pct: 0.0,
            steal_pct: 0.0,
            busy_us: work_us,
            split: Some(CpuSplit {
                tool_us: work_us * 0.6,
                kernel_us: work_us * 0.4,
                ..CpuSplit::default()
            }),
        }),
        cpu_us_per_op: Some(cost.cpu_us),
        device_read_bytes: Some((cost.read_bytes * ops as f64) as u64),
        device_write_bytes: Some((cost.write_bytes * ops as f64) as u64),
        device_read_mb_s: Some(cost.read_bytes * achieved / 1e6),
        device_write_mb_s: Some(cost.write_bytes * achieved / 1e6),
        device_util_pct: Some((rate / 30.0).min(100.0)),
        page_cache_bytes: Some(cost.cache),
        dirty_max_bytes: Some(4 << 20),
        arc_bytes: None,
        dataset_bytes: 1 << 30,
        kinds: Vec::new(),
    }
}

/// The ramp spec every fixture uses.
pub fn spec() -> RampSpec {
    RampSpec::parse("start=1000,step=x1.5,until=p99>5ms,point=30s,bisect=2").unwrap()
}

/// A ramp record: climbs 1000, 1500, 2250, 3375 (over the limit), then bisects 2812.5 (good)
/// and 3093.75 (over): headline 2812.5 offered. `slow` scales the latencies.
pub fn ramp(cost: Cost, slow: f64) -> RampRecord {
    let steps = [
        (Phase::Climb, 1000.0, 0.8),
        (Phase::Climb, 1500.0, 1.1),
        (Phase::Climb, 2250.0, 2.0),
        (Phase::Climb, 3375.0, 9.0),
        (Phase::Bisect, 2812.5, 4.0),
        (Phase::Bisect, 3093.75, 6.0),
    ];
    let steps: Vec<_> = steps
        .iter()
        .map(|&(ph, r, p99)| (ph, r, p99 * slow))
        .collect();
    ramp_of(cost, &steps)
}

/// A ramp through `steps` (phase, offered rate, p99 ms), stopped at the limit.
pub fn ramp_of(cost: Cost, steps: &[(Phase, f64, f64)]) -> RampRecord {
    let points = (steps.iter().zip(1..))
        .map(|(&(phase, rate, p99), i)| point(i, phase, rate, p99, cost))
        .collect();
    RampRecord::finish(&spec(), points, Stop::Limit)
}

/// The exporters' fixture run record with a ramp on it.
pub fn record(cost: Cost, slow: f64) -> RunRecord {
    let mut r = crate::fixture::record();
    r.ramp = Some(ramp(cost, slow));
    r
}

/// An 8 KiB random-read stack: one device read per operation.
pub const DIRECT: Cost = Cost {
    cpu_us: 40.0,
    read_bytes: 8192.0,
    write_bytes: 0.0,
    cache: 200 << 20,
};

/// A copy-on-write stack with a large record: 8x the device reads and 3x the CPU per
/// operation, and a ramp that crosses the limit at 2,250 ops/s (its bracket ends at 1,875).
pub const COW: Cost = Cost {
    cpu_us: 120.0,
    read_bytes: 65536.0,
    write_bytes: 4096.0,
    cache: 900 << 20,
};

pub fn cow_ramp() -> bakeoff_core::ramp::RampRecord {
    ramp_of(
        COW,
        &[
            (Phase::Climb, 1000.0, 1.0),
            (Phase::Climb, 1500.0, 2.5),
            (Phase::Climb, 2250.0, 12.0),
            (Phase::Bisect, 1875.0, 4.5),
            (Phase::Bisect, 2062.5, 7.0),
        ],
    )
}

/// Three repetitions of a ramp, the achieved rates 1 % apart.
pub fn runs(ramp: &bakeoff_core::ramp::RampRecord) -> Vec<RunRecord> {
    [1.0, 0.99, 1.01]
        .iter()
        .map(|&k| {
            let mut r = crate::fixture::record();
            let mut ramp = ramp.clone();
            ramp.points.iter_mut().for_each(|p| p.achieved_ops_s *= k);
            if let Some(h) = ramp.headline.as_mut() {
                h.achieved_ops_s *= k;
            }
            r.ramp = Some(ramp);
            r
        })
        .collect()
}

/// Two stacks, ext4 the baseline, three repetitions each.
pub fn cells() -> Vec<CellRuns> {
    vec![
        CellRuns {
            label: "ext4 / randread".into(),
            stack: "ext4".into(),
            runs: runs(&ramp(DIRECT, 1.0)),
            baseline: Some(0),
        },
        CellRuns {
            label: "zfs / randread".into(),
            stack: "zfs".into(),
            runs: runs(&cow_ramp()),
            baseline: Some(0),
        },
    ]
}
