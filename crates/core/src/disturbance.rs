//! Runs disturbed by other work: the rule that says a run's figures are not a result because
//! other processes, the hypervisor or foreign I/O competed with it (docs/verdicts.md, "Runs
//! disturbed by other work").
//!
//! Two measures, both already taken or cheap: the run's own CPU split (other processes' and the
//! hypervisor's share of all CPU time over the measured window), and a short sample taken just
//! before the run, while bakeoff itself is idle, of the machine's busy CPU and of the I/O on the
//! devices the run will use or sits on (the images' disk, a `--device`, a `dir=` stack's disk):
//! any I/O there then is another process's. The rule is a pure function of the record and that
//! sample.

use crate::record::RunRecord;
use serde::{Deserialize, Serialize};

/// Default limit on other processes' plus the hypervisor's share of all CPU time over a run's
/// window, %: the same line as the `cpu_contention` finding.
pub const DEFAULT_LIMIT_PCT: f64 = crate::findings::CPU_CONTENTION_PCT;

/// Foreign I/O on the run's devices before it starts above this many bytes per second
/// disturbs it: 1 MB/s (a journal commit or a log line is far below it; a copy, a build or
/// another benchmark far above).
pub const FOREIGN_IO_BYTES_PER_S: f64 = 1e6;

/// How many times a disturbed run is run again before the last attempt is kept, marked.
pub const DEFAULT_MAX_REDO: u32 = 2;

/// The machine in the moments before a run, while bakeoff waits: everything busy then is
/// other work.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct QuietSample {
    /// Length of the sample, seconds.
    pub secs: f64,
    /// Busy share of all CPU time (including steal), %.
    pub busy_pct: f64,
    /// Bytes read and written per second on `devices`.
    pub device_bytes_per_s: f64,
    /// Kernel names of the devices sampled.
    pub devices: Vec<String>,
    /// The process that used the most CPU in the sample, with its share of all CPU time
    /// ("yes (pid 4711) 49.8%"), when one used any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub busiest: Option<String>,
}

/// Why a run is not a result, and the figures that said so.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Disturbance {
    /// Each reason in words, naming the figure and the limit.
    pub reasons: Vec<String>,
    /// Other processes' share of all CPU time over the window, %, where it was split.
    pub other_cpu_pct: Option<f64>,
    /// The hypervisor's share, %.
    pub steal_pct: Option<f64>,
    /// The limit applied to their sum, %.
    pub limit_pct: f64,
    /// The sample before the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub before: Option<QuietSample>,
}

impl Disturbance {
    /// The reasons as one clause: "other processes used 34.1% of all CPU time (limit 10%)".
    pub fn reason(&self) -> String {
        self.reasons.join("; ")
    }
}

/// Whether `record` was disturbed, by the rule with `limit_pct` (0 or less: never).
///
/// Disturbed when other processes' and the hypervisor's share of all CPU time over the window
/// is above the limit, or when `before` saw more than [`FOREIGN_IO_BYTES_PER_S`] on the run's
/// devices. A record without a CPU split (a window too short to measure) is judged on the
/// sample alone.
pub fn judge(
    record: &RunRecord,
    before: Option<&QuietSample>,
    limit_pct: f64,
) -> Option<Disturbance> {
    if limit_pct <= 0.0 || limit_pct.is_nan() {
        return None;
    }
    let cpu = record.cpu.as_ref();
    let other = cpu.and_then(|c| c.split.as_ref()).map(|s| s.other_pct);
    let steal = cpu.map(|c| c.steal_pct);
    let mut reasons = Vec::new();
    let taken = other.unwrap_or(0.0) + steal.unwrap_or(0.0);
    if taken > limit_pct {
        reasons.push(format!(
            "other processes used {:.1}% and the hypervisor stole {:.1}% of all CPU time \
             during the run (limit {limit_pct}%)",
            other.unwrap_or(0.0),
            steal.unwrap_or(0.0)
        ));
    }
    if let Some(b) = before.filter(|b| b.device_bytes_per_s > FOREIGN_IO_BYTES_PER_S) {
        reasons.push(format!(
            "other processes moved {:.1} MB/s on {} just before the run (limit {:.0} MB/s)",
            b.device_bytes_per_s / 1e6,
            b.devices.join(", "),
            FOREIGN_IO_BYTES_PER_S / 1e6
        ));
    }
    (!reasons.is_empty()).then(|| Disturbance {
        reasons,
        other_cpu_pct: other,
        steal_pct: steal,
        limit_pct,
        before: before.cloned(),
    })
}

/// Whether the machine is quiet enough to start a run, by `sample` (for `--quiet-wait`): its
/// busy CPU at most `limit_pct` and no foreign I/O above [`FOREIGN_IO_BYTES_PER_S`].
pub fn quiet(sample: &QuietSample, limit_pct: f64) -> bool {
    sample.busy_pct <= limit_pct && sample.device_bytes_per_s <= FOREIGN_IO_BYTES_PER_S
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{CpuSplit, CpuStats};

    fn record(other: Option<f64>, steal: f64) -> RunRecord {
        let mut r = crate::record::fixture::minimal();
        r.cpu = Some(CpuStats {
            cpus: 2,
            busy_pct: 50.0,
            user_pct: 40.0,
            system_pct: 10.0,
            iowait_pct: 0.0,
            irq_pct: 0.0,
            softirq_pct: 0.0,
            steal_pct: steal,
            busy_us: 1e6,
            split: other.map(|o| CpuSplit {
                other_pct: o,
                ..CpuSplit::default()
            }),
        });
        r
    }

    fn sample(bytes_per_s: f64) -> QuietSample {
        QuietSample {
            secs: 1.0,
            busy_pct: 1.0,
            device_bytes_per_s: bytes_per_s,
            devices: vec!["vda".into()],
            busiest: None,
        }
    }

    #[test]
    fn other_cpu_and_steal_over_the_limit_disturb_a_run() {
        assert!(judge(&record(Some(4.0), 0.0), None, 10.0).is_none());
        let d = judge(&record(Some(8.0), 3.0), None, 10.0).expect("11% > 10%");
        assert_eq!(d.other_cpu_pct, Some(8.0));
        assert_eq!(d.steal_pct, Some(3.0));
        assert!(d.reason().contains("8.0%"), "{}", d.reason());
        assert!(d.reason().contains("limit 10%"), "{}", d.reason());
        assert!(
            judge(&record(Some(10.0), 0.0), None, 10.0).is_none(),
            "at the limit"
        );
    }

    #[test]
    fn foreign_io_before_the_run_disturbs_it() {
        let quiet_cpu = record(Some(1.0), 0.0);
        assert!(judge(&quiet_cpu, Some(&sample(0.5e6)), 10.0).is_none());
        let d = judge(&quiet_cpu, Some(&sample(5e6)), 10.0).expect("5 MB/s");
        assert!(d.reason().contains("5.0 MB/s on vda"), "{}", d.reason());
        assert_eq!(d.before, Some(sample(5e6)));
    }

    #[test]
    fn a_limit_of_zero_turns_the_rule_off_and_a_record_without_a_split_is_judged_on_steal() {
        assert!(judge(&record(Some(90.0), 0.0), Some(&sample(1e9)), 0.0).is_none());
        assert!(judge(&record(None, 0.0), None, 10.0).is_none());
        assert!(judge(&record(None, 20.0), None, 10.0).is_some());
        let mut no_cpu = record(None, 0.0);
        no_cpu.cpu = None;
        assert!(judge(&no_cpu, None, 10.0).is_none());
        assert!(judge(&no_cpu, Some(&sample(2e6)), 10.0).is_some());
    }

    #[test]
    fn the_machine_is_quiet_when_its_cpu_and_the_devices_are() {
        let mut s = sample(0.0);
        assert!(quiet(&s, 10.0));
        s.busy_pct = 12.0;
        assert!(!quiet(&s, 10.0));
        assert!(!quiet(&sample(2e6), 10.0));
    }

    #[test]
    fn a_disturbance_round_trips_through_json() {
        let d = judge(&record(Some(30.0), 0.0), Some(&sample(2e6)), 10.0).unwrap();
        let text = serde_json::to_string(&d).unwrap();
        assert_eq!(serde_json::from_str::<Disturbance>(&text).unwrap(), d);
    }
}
