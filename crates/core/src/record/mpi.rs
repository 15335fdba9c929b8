//! The `mpi` section of a run record (`run --mpi`): which ranks ran on which hosts, each host's
//! CPU, device and memory accounting (sampled by one rank per host), and their sums. The
//! counts of every rank are in the record's `clients` (one per rank); see `docs/mpi.md`.

use super::machine::{CpuSplit, CpuStats, DeviceStats, MemoryStats};
use serde::{Deserialize, Serialize};

/// How an MPI run was spread and what each host's machine did.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct MpiRecord {
    /// Ranks in the job (`mpirun -np`).
    pub ranks: u32,
    /// Every host, in order of its lowest rank.
    pub hosts: Vec<MpiHost>,
    /// The hosts' figures summed.
    pub totals: HostTotals,
}

/// One host of an MPI run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct MpiHost {
    /// Its name as MPI reports it (`MPI_Get_processor_name`).
    pub name: String,
    /// The ranks that ran on it.
    pub ranks: Vec<u32>,
    /// The rank that sampled its CPU, devices and memory (its lowest).
    pub sampled_by_rank: u32,
    /// Whole-host CPU over that rank's window; every bakeoff rank on the host counts as tool.
    pub cpu: Option<CpuStats>,
    /// Devices under the target as this host sees them (none for a network file system).
    pub devices: Vec<DeviceStats>,
    /// Memory of this host.
    pub memory: Option<MemoryStats>,
    /// The kernel it ran (`/proc/sys/kernel/random/boot_id`, one per boot of a kernel); `None`
    /// where it could not be read.
    #[serde(default)]
    pub boot_id: Option<String>,
    /// The first host (in this list) that ran the same kernel, when this one is not it:
    /// containers or network namespaces of one machine. Its CPU, memory, page cache and devices
    /// are then that machine's, already counted under that host, so the totals skip it.
    #[serde(default)]
    pub same_kernel_as: Option<String>,
}

impl MpiHost {
    /// Whether its machine figures are its own, not a host's counted before it.
    pub fn own_kernel(&self) -> bool {
        self.same_kernel_as.is_none()
    }
}

/// Marks each host of `hosts` (in order) whose `boot_id` an earlier host had with that host's
/// name; a host without a boot id is its own machine.
pub fn mark_shared_kernels(hosts: &mut [MpiHost]) {
    for i in 0..hosts.len() {
        let Some(id) = hosts[i].boot_id.clone() else {
            continue;
        };
        let first = hosts[..i]
            .iter()
            .find(|h| h.own_kernel() && h.boot_id.as_deref() == Some(&id));
        hosts[i].same_kernel_as = first.map(|h| h.name.clone());
    }
}

/// Figures of every host added up, each kernel once: a host that ran the same kernel as an
/// earlier one (`same_kernel_as`) is that machine again and is not added twice.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct HostTotals {
    /// The distinct kernels (machines) under the hosts: fewer than the hosts when some share one.
    #[serde(default)]
    pub kernels: u32,
    /// Online CPUs of all hosts.
    pub cpus: u32,
    /// Busy CPU time of all hosts, µs; `None` if a host has no CPU figures.
    pub cpu_busy_us: Option<f64>,
    /// Device reads of all hosts.
    pub device_read_ops: u64,
    /// Bytes read from devices.
    pub device_read_bytes: u64,
    /// Device writes of all hosts.
    pub device_write_ops: u64,
    /// Bytes written to devices.
    pub device_write_bytes: u64,
    /// Memory of all hosts; `None` if a host has no memory figures.
    pub memory_total_bytes: Option<u64>,
}

impl HostTotals {
    /// The sums over `hosts`, each kernel once.
    pub fn of(hosts: &[MpiHost]) -> HostTotals {
        let hosts: Vec<&MpiHost> = hosts.iter().filter(|h| h.own_kernel()).collect();
        let devices = || hosts.iter().flat_map(|h| &h.devices);
        HostTotals {
            kernels: hosts.len() as u32,
            cpus: hosts
                .iter()
                .filter_map(|h| h.cpu.as_ref())
                .map(|c| c.cpus)
                .sum(),
            cpu_busy_us: hosts
                .iter()
                .map(|h| h.cpu.as_ref().map(|c| c.busy_us))
                .sum(),
            device_read_ops: devices().map(|d| d.read_ops).sum(),
            device_read_bytes: devices().map(|d| d.read_bytes).sum(),
            device_write_ops: devices().map(|d| d.write_ops).sum(),
            device_write_bytes: devices().map(|d| d.write_bytes).sum(),
            memory_total_bytes: (hosts.iter())
                .map(|h| h.memory.as_ref().map(|m| m.total_bytes))
                .sum(),
        }
    }
}

/// Moves `ranks_us` of CPU (the other bakeoff ranks on a host, which its sampling rank's
/// process table counts as other processes) from `other` to `tool` in `cpu`'s split.
pub fn credit_ranks(cpu: &mut CpuStats, ranks_us: f64) {
    let Some(split) = cpu.split.as_mut() else {
        return;
    };
    let moved = ranks_us.min(split.other_us).max(0.0);
    split.tool_us += moved;
    split.other_us -= moved;
    let all_us = all_cpu_us(cpu.busy_us, cpu.busy_pct);
    if all_us > 0.0 {
        split.tool_pct = 100.0 * split.tool_us / all_us;
        split.other_pct = 100.0 * split.other_us / all_us;
    }
}

/// All CPU time (busy and idle) of a window whose busy time is `busy_us`, `busy_pct` of it.
fn all_cpu_us(busy_us: f64, busy_pct: f64) -> f64 {
    if busy_pct > 0.0 {
        busy_us * 100.0 / busy_pct
    } else {
        0.0
    }
}

/// The CPU of several hosts as one machine of all their CPUs: times added, shares weighted by
/// each host's CPU time. `None` if any host has no figures.
pub fn combine_cpu(hosts: &[Option<&CpuStats>]) -> Option<CpuStats> {
    let hosts: Vec<&CpuStats> = hosts.iter().copied().collect::<Option<_>>()?;
    let first = *hosts.first()?;
    if hosts.len() == 1 {
        return Some(first.clone());
    }
    let all: Vec<f64> = (hosts.iter())
        .map(|c| all_cpu_us(c.busy_us, c.busy_pct))
        .collect();
    let all_sum: f64 = all.iter().sum();
    let share = |pct: &dyn Fn(&CpuStats) -> f64| {
        let us: f64 = hosts.iter().zip(&all).map(|(c, a)| pct(c) * a).sum();
        if all_sum > 0.0 {
            us / all_sum
        } else {
            0.0
        }
    };
    let splits: Option<Vec<&CpuSplit>> = hosts.iter().map(|c| c.split.as_ref()).collect();
    let split = splits.map(|s| {
        let sum = |f: fn(&CpuSplit) -> f64| s.iter().map(|x| f(x)).sum::<f64>();
        let pct = |us: f64| {
            if all_sum > 0.0 {
                100.0 * us / all_sum
            } else {
                0.0
            }
        };
        let (tool, daemons) = (sum(|x| x.tool_us), sum(|x| x.daemons_us));
        let (kernel, other) = (sum(|x| x.kernel_us), sum(|x| x.other_us));
        CpuSplit {
            tool_us: tool,
            daemons_us: daemons,
            kernel_us: kernel,
            other_us: other,
            steal_us: sum(|x| x.steal_us),
            tool_pct: pct(tool),
            daemons_pct: pct(daemons),
            kernel_pct: pct(kernel),
            other_pct: pct(other),
            kernel_traced: s.iter().all(|x| x.kernel_traced),
        }
    });
    Some(CpuStats {
        cpus: hosts.iter().map(|c| c.cpus).sum(),
        busy_pct: share(&|c| c.busy_pct),
        user_pct: share(&|c| c.user_pct),
        system_pct: share(&|c| c.system_pct),
        iowait_pct: share(&|c| c.iowait_pct),
        irq_pct: share(&|c| c.irq_pct),
        softirq_pct: share(&|c| c.softirq_pct),
        steal_pct: share(&|c| c.steal_pct),
        busy_us: hosts.iter().map(|c| c.busy_us).sum(),
        split,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cpu(cpus: u32, busy_pct: f64, busy_us: f64, other_us: f64) -> CpuStats {
        CpuStats {
            cpus,
            busy_pct,
            user_pct: busy_pct / 2.0,
            system_pct: busy_pct / 2.0,
            iowait_pct: 0.0,
            irq_pct: 0.0,
            softirq_pct: 0.0,
            steal_pct: 0.0,
            busy_us,
            split: Some(CpuSplit {
                tool_us: busy_us - other_us,
                other_us,
                ..CpuSplit::default()
            }),
        }
    }

    #[test]
    fn two_hosts_combine_as_one_machine_of_all_their_cpus() {
        // 2 CPUs 50% busy over 1 s, and 6 CPUs 10% busy over 1 s.
        let a = cpu(2, 50.0, 1_000_000.0, 0.0);
        let b = cpu(6, 10.0, 600_000.0, 0.0);
        let c = combine_cpu(&[Some(&a), Some(&b)]).unwrap();
        assert_eq!(c.cpus, 8);
        assert_eq!(c.busy_us, 1_600_000.0);
        assert!((c.busy_pct - 20.0).abs() < 1e-9, "{}", c.busy_pct);
        assert!((c.split.unwrap().tool_pct - 20.0).abs() < 1e-9);
        assert_eq!(combine_cpu(&[Some(&a), None]), None);
    }

    #[test]
    fn other_ranks_cpu_moves_from_other_to_tool() {
        let mut c = cpu(2, 50.0, 1_000_000.0, 400_000.0);
        credit_ranks(&mut c, 300_000.0);
        let s = c.split.unwrap();
        assert_eq!((s.tool_us, s.other_us), (900_000.0, 100_000.0));
        assert!((s.tool_pct - 45.0).abs() < 1e-9);
        let mut d = cpu(2, 50.0, 1_000_000.0, 100.0);
        credit_ranks(&mut d, 5_000.0);
        assert_eq!(d.split.unwrap().other_us, 0.0, "never below zero");
    }

    #[test]
    fn totals_add_every_host() {
        let host = |cpus, mem| MpiHost {
            cpu: Some(cpu(cpus, 10.0, 100.0, 0.0)),
            memory: mem,
            ..MpiHost::default()
        };
        let m = MemoryStats {
            total_bytes: 8,
            cached_start_bytes: 0,
            cached_end_bytes: 0,
            dirty_max_bytes: 0,
            dirty_start_bytes: None,
            dirty_end_bytes: None,
            writeback_max_bytes: 0,
            available_min_bytes: 0,
            arc_size_bytes: None,
            arc_hits: None,
            arc_misses: None,
            page_cache_added_pages: None,
            page_cache_unavailable: None,
        };
        let t = HostTotals::of(&[host(2, Some(m.clone())), host(4, Some(m.clone()))]);
        assert_eq!((t.kernels, t.cpus, t.cpu_busy_us), (2, 6, Some(200.0)));
        assert_eq!(t.memory_total_bytes, Some(16));
        assert_eq!(HostTotals::of(&[host(2, None)]).memory_total_bytes, None);
        // Three hosts on two kernels: the third is the first's machine again.
        let named = |name: &str, boot: Option<&str>| MpiHost {
            name: name.into(),
            boot_id: boot.map(String::from),
            ..host(2, Some(m.clone()))
        };
        let mut hosts = [
            named("a", Some("k1")),
            named("b", Some("k2")),
            named("c", Some("k1")),
            named("d", None),
        ];
        mark_shared_kernels(&mut hosts);
        let marks: Vec<Option<&str>> = hosts.iter().map(|h| h.same_kernel_as.as_deref()).collect();
        assert_eq!(marks, [None, None, Some("a"), None]);
        let t = HostTotals::of(&hosts);
        assert_eq!((t.kernels, t.cpus, t.memory_total_bytes), (3, 6, Some(24)));
    }
}
