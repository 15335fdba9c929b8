//! The machine in the moments before a run: busy CPU, the I/O on a set of devices, and the
//! process that used the most CPU, sampled while bakeoff waits (so all of it is other work).
//! The rule that judges it is `bakeoff_core::disturbance`.

use crate::delta::cpu_stats;
use crate::devices::DeviceInfo;
use crate::parse::ProcStat;
use crate::read::processes;
use crate::snapshot::Probe;
use crate::sys::ticks_per_second;
use bakeoff_core::disturbance::QuietSample;
use std::collections::HashMap;
use std::time::Duration;

/// Samples the machine for `length` (sleeping), watching `devices`.
pub fn sample_quiet(devices: &[DeviceInfo], length: Duration) -> QuietSample {
    let probe = Probe::new(devices.to_vec());
    let (start, procs0) = (probe.snapshot(), processes());
    std::thread::sleep(length);
    let (end, procs1) = (probe.snapshot(), processes());
    let secs = end.at.saturating_duration_since(start.at).as_secs_f64();
    let ticks = ticks_per_second();
    let cpu = (start.cpu.as_ref())
        .zip(end.cpu.as_ref())
        .map(|(a, b)| cpu_stats(a, b, ticks));
    let moved: u64 = (probe.device_stats(&start, &end).iter())
        .map(|d| d.read_bytes + d.write_bytes)
        .sum();
    let busy_ticks = cpu.as_ref().map_or(0.0, |c| c.busy_us / 1e6 * ticks);
    let busy_pct = cpu.as_ref().map_or(0.0, |c| c.busy_pct);
    // The busiest process's share of all CPU time: its share of the busy ticks, scaled by
    // the busy share of all.
    let busiest = busiest(&procs0, &procs1).and_then(|(p, t)| {
        let share = if busy_ticks > 0.0 {
            busy_pct * t as f64 / busy_ticks
        } else {
            0.0
        };
        (t > 0).then(|| format!("{} (pid {}) {share:.1}%", p.comm, p.pid))
    });
    QuietSample {
        secs,
        busy_pct,
        device_bytes_per_s: if secs > 0.0 { moved as f64 / secs } else { 0.0 },
        devices: devices.iter().map(|d| d.name.clone()).collect(),
        busiest,
    }
}

/// The process (not this one) whose user and system ticks grew most between the two readings,
/// with its ticks; kernel threads count (a kworker flushing another program's data is busy).
fn busiest(start: &[ProcStat], end: &[ProcStat]) -> Option<(ProcStat, u64)> {
    let me = std::process::id();
    let before: HashMap<(u32, u64), u64> = (start.iter())
        .map(|p| ((p.pid, p.starttime), p.utime + p.stime))
        .collect();
    (end.iter())
        .filter(|p| p.pid != me)
        .map(|p| {
            let was = before.get(&(p.pid, p.starttime)).copied().unwrap_or(0);
            (p, (p.utime + p.stime).saturating_sub(was))
        })
        .max_by_key(|(_, t)| *t)
        .map(|(p, t)| (p.clone(), t))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stat(pid: u32, comm: &str, ticks: u64) -> ProcStat {
        ProcStat {
            pid,
            comm: comm.into(),
            ppid: 1,
            kernel_thread: false,
            utime: ticks,
            stime: 0,
            cutime: 0,
            cstime: 0,
            starttime: 7,
        }
    }

    #[test]
    fn the_busiest_process_is_the_one_whose_ticks_grew_most() {
        let start = [stat(10, "a", 100), stat(11, "b", 5)];
        let end = [stat(10, "a", 101), stat(11, "b", 50), stat(12, "new", 20)];
        let (p, t) = busiest(&start, &end).unwrap();
        assert_eq!((p.comm.as_str(), t), ("b", 45));
    }

    #[test]
    fn a_sample_of_no_devices_reads_the_cpu() {
        let s = sample_quiet(&[], Duration::from_millis(50));
        assert!(s.secs >= 0.05);
        assert!((0.0..=100.0).contains(&s.busy_pct));
        assert_eq!(s.device_bytes_per_s, 0.0);
    }
}
