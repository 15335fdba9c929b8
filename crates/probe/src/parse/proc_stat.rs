//! `/proc/stat`: CPU time since boot.

use super::number;
use crate::error::ProbeError;

const FILE: &str = "/proc/stat";

/// Aggregate CPU time since boot from the `cpu` line of `/proc/stat`, in clock ticks
/// (see [`crate::ticks_per_second`]). Fields older kernels lack are 0.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CpuTimes {
    /// Time in user mode (includes guest time).
    pub user: u64,
    /// Time in user mode at low priority (includes guest_nice time).
    pub nice: u64,
    /// Time in kernel mode.
    pub system: u64,
    /// Idle time.
    pub idle: u64,
    /// Idle with I/O outstanding (since Linux 2.5.41).
    pub iowait: u64,
    /// Servicing hard interrupts (since 2.6.0).
    pub irq: u64,
    /// Servicing soft interrupts (since 2.6.0).
    pub softirq: u64,
    /// Stolen by the hypervisor (since 2.6.11).
    pub steal: u64,
    /// Number of `cpuN` lines, i.e. online CPUs.
    pub cpus: u32,
}

/// Parses `/proc/stat`: the aggregate `cpu` line and the count of `cpuN` lines.
///
/// Fails when there is no aggregate line, it has fewer than four counters, or a counter is not a
/// number.
pub fn parse_proc_stat(text: &str) -> Result<CpuTimes, ProbeError> {
    let mut aggregate = None;
    let mut cpus = 0u32;
    for line in text.lines() {
        let mut tokens = line.split_ascii_whitespace();
        let Some(label) = tokens.next() else {
            continue;
        };
        if label == "cpu" {
            aggregate = Some(tokens);
        } else if label
            .strip_prefix("cpu")
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        {
            cpus = cpus.saturating_add(1);
        }
    }
    let tokens = aggregate.ok_or_else(|| ProbeError::parse(FILE, "no aggregate \"cpu\" line"))?;
    const NAMES: [&str; 8] = [
        "user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal",
    ];
    let mut values = [0u64; 8];
    let mut seen = 0;
    for (slot, (name, token)) in values.iter_mut().zip(NAMES.iter().zip(tokens)) {
        *slot = number(FILE, name, token)?;
        seen += 1;
    }
    if seen < 4 {
        return Err(ProbeError::parse(
            FILE,
            format!("the \"cpu\" line has {seen} counters, expected at least 4"),
        ));
    }
    let [user, nice, system, idle, iowait, irq, softirq, steal] = values;
    Ok(CpuTimes {
        user,
        nice,
        system,
        idle,
        iowait,
        irq,
        softirq,
        steal,
        cpus,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_captured_fixture() {
        let text = include_str!("../../tests/fixtures/proc/6.18.44/stat");
        let t = parse_proc_stat(text).unwrap();
        assert_eq!(
            t,
            CpuTimes {
                user: 6532,
                nice: 0,
                system: 1502,
                idle: 49879,
                iowait: 509,
                irq: 0,
                softirq: 33,
                steal: 2,
                cpus: 2,
            }
        );
    }

    #[test]
    fn old_kernel_with_four_counters() {
        let t = parse_proc_stat("cpu 1 2 3 4\ncpu0 1 2 3 4\n").unwrap();
        assert_eq!((t.user, t.idle, t.iowait, t.steal, t.cpus), (1, 4, 0, 0, 1));
    }

    #[test]
    fn rejects_garbage() {
        assert!(parse_proc_stat("").is_err());
        assert!(parse_proc_stat("cpu 1 2 3").is_err());
        assert!(parse_proc_stat("cpu 1 2 x 4").is_err());
        assert!(
            parse_proc_stat("cpu0 1 2 3 4").is_err(),
            "no aggregate line"
        );
        assert!(parse_proc_stat("cpu -1 2 3 4").is_err());
    }

    #[test]
    fn cpu_count_ignores_lookalikes() {
        let t = parse_proc_stat("cpu 1 2 3 4\ncpu0 1\ncpux 1\ncpu1 1\n").unwrap();
        assert_eq!(t.cpus, 2);
    }
}
