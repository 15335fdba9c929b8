//! Rank 0 adds every rank's window into the one record: counts and latency histograms added
//! exactly (as a `clients=N` run adds its clients'), each rank's counts and CPU in `clients`,
//! each host's CPU, devices and memory as its first rank sampled them, and their sums, each
//! machine (kernel) once when hosts share one.

use super::wire::Wire;
use crate::exit::Failure;
use bakeoff_core::mpi::{
    combine_cpu, credit_ranks, mark_shared_kernels, HostTotals, MpiHost, MpiRecord,
};
use bakeoff_core::record::{
    ClientResult, CpuStats, DeviceStats, MemoryStats, RunRecord, RunStatus, Summary, ToolUsage,
};
use bakeoff_engine::results::{add_copies, copy_ops, RoleCounts};
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// What a rank hands to rank 0 after a window.
#[derive(Serialize, Deserialize)]
pub struct RankReport {
    /// Its process id.
    pid: u32,
    /// Where its files are.
    dir: String,
    /// How its window ended.
    status: RunStatus,
    /// Why it failed.
    error: Option<String>,
    /// Its measured window.
    measured_ns: u64,
    /// Exactly what its roles recorded.
    counts: Vec<RoleCounts>,
    /// Its own CPU and memory.
    tool: ToolUsage,
    /// Its host's accounting, from the first rank on each host.
    host: Option<HostAccount>,
}

/// One host's machine over a window.
#[derive(Serialize, Deserialize)]
struct HostAccount {
    cpu: Option<CpuStats>,
    devices: Vec<DeviceStats>,
    memory: Option<MemoryStats>,
}

impl RankReport {
    /// The report of `record`, this rank's window; `samples_host` for the first rank on a host.
    pub fn of(record: &RunRecord, counts: &[RoleCounts], samples_host: bool) -> RankReport {
        RankReport {
            pid: std::process::id(),
            dir: record.target.path.clone(),
            status: record.status,
            error: record.error.clone(),
            measured_ns: record.measured_ns,
            counts: counts.to_vec(),
            tool: record.tool.clone(),
            host: samples_host.then(|| HostAccount {
                cpu: record.cpu.clone(),
                devices: record.devices.clone(),
                memory: record.memory.clone(),
            }),
        }
    }

    /// The report of a window that could not run.
    pub fn failed(f: &Failure) -> RankReport {
        RankReport {
            pid: std::process::id(),
            dir: String::new(),
            status: RunStatus::Failed,
            error: Some(format!("{:#}", f.error)),
            measured_ns: 0,
            counts: Vec::new(),
            tool: ToolUsage::default(),
            host: None,
        }
    }
}

/// Rank 0's `record` of the window with every rank's `reports` (in rank order) added in.
pub fn merge(wire: &Wire, mut record: RunRecord, reports: Vec<RankReport>) -> RunRecord {
    let ok: Vec<&RankReport> = (reports.iter())
        .filter(|r| r.status != RunStatus::Failed)
        .collect();
    let mean_ns = ok.iter().map(|r| r.measured_ns).sum::<u64>() / (ok.len().max(1) as u64);
    let each: Vec<&[RoleCounts]> = ok.iter().map(|r| r.counts.as_slice()).collect();
    let measured = Duration::from_nanos(mean_ns);
    let (roles, ops, _) = add_copies(&record.plan, reports.len() as u32, &each, measured);
    let hosts = hosts(wire, &reports);
    // Each machine once: hosts that share a kernel sampled the same CPUs, memory and devices.
    let machines: Vec<&MpiHost> = hosts.iter().filter(|h| h.own_kernel()).collect();
    record.cpu = combine_cpu(&machines.iter().map(|h| h.cpu.as_ref()).collect::<Vec<_>>());
    (record.devices, record.memory) = match (hosts.as_slice(), machines.as_slice()) {
        ([one], _) => (one.devices.clone(), one.memory.clone()),
        // Several hosts on one machine: its devices, named with the host that counted them.
        (_, [one]) => (host_devices(one), one.memory.clone()),
        // Several machines: each device named with its host; memory is per host only.
        _ => (
            machines.iter().flat_map(|h| host_devices(h)).collect(),
            None,
        ),
    };
    record.tool = tool_of(&reports, record.cpu.as_ref());
    record.clients = (reports.iter().enumerate())
        .map(|(rank, r)| rank_result(rank, r))
        .collect();
    (record.roles, record.ops, record.measured_ns) = (roles, ops, mean_ns);
    let failures: Vec<String> = (reports.iter().enumerate())
        .filter(|(_, r)| r.status == RunStatus::Failed)
        .map(|(rank, r)| format!("{}: {}", wire.name(rank), r.error.as_deref().unwrap_or("")))
        .collect();
    record.status = if !failures.is_empty() {
        record.error = Some(failures.join("; "));
        RunStatus::Failed
    } else if reports.iter().any(|r| r.status == RunStatus::Interrupted) {
        RunStatus::Interrupted
    } else {
        RunStatus::Completed
    };
    record.summary = Summary::default();
    if record.status == RunStatus::Failed {
        // A failed run's figures are not results.
        (record.roles, record.ops) = (Vec::new(), Vec::new());
    } else {
        record.summary = Summary::compute(&record);
    }
    let totals = HostTotals::of(&hosts);
    record.mpi = Some(MpiRecord {
        ranks: reports.len() as u32,
        hosts,
        totals,
    });
    record
}

/// Every host with its ranks, its kernel and the accounting its first rank sent, the CPU of
/// the other ranks on its machine counted as bakeoff's.
fn hosts(wire: &Wire, reports: &[RankReport]) -> Vec<MpiHost> {
    let mut hosts: Vec<MpiHost> = Vec::new();
    for (rank, name) in wire.hosts.iter().enumerate().take(reports.len()) {
        match hosts.iter_mut().find(|h| h.name == *name) {
            Some(h) => h.ranks.push(rank as u32),
            None => hosts.push(MpiHost {
                name: name.clone(),
                ranks: vec![rank as u32],
                sampled_by_rank: rank as u32,
                boot_id: wire.kernels[rank].clone(),
                ..MpiHost::default()
            }),
        }
    }
    mark_shared_kernels(&mut hosts);
    for host in &mut hosts {
        let Some(account) = reports[host.sampled_by_rank as usize].host.as_ref() else {
            continue;
        };
        host.cpu = account.cpu.clone();
        host.devices = account.devices.clone();
        host.memory = account.memory.clone();
        // The sampling rank's process table shows every process of its kernel: the ranks of
        // hosts that share it too.
        let same_machine = |r: usize| match &host.boot_id {
            Some(id) => wire.kernels[r].as_ref() == Some(id),
            None => wire.hosts[r] == host.name,
        };
        let others_us: u64 = (0..reports.len())
            .filter(|&r| r != host.sampled_by_rank as usize && same_machine(r))
            .map(|r| &reports[r].tool)
            .map(|t| t.user_us + t.system_us)
            .sum();
        if let Some(cpu) = host.cpu.as_mut() {
            credit_ranks(cpu, others_us as f64);
        }
    }
    hosts
}

fn host_devices(host: &MpiHost) -> Vec<DeviceStats> {
    let mut devices = host.devices.clone();
    for d in &mut devices {
        d.name = format!("{}:{}", host.name, d.name);
    }
    devices
}

/// Every rank's own CPU added (the peak memory is the largest rank's).
fn tool_of(reports: &[RankReport], cpu: Option<&CpuStats>) -> ToolUsage {
    let mut tool = ToolUsage::default();
    for r in reports {
        tool.user_us += r.tool.user_us;
        tool.system_us += r.tool.system_us;
        tool.max_rss_bytes = tool.max_rss_bytes.max(r.tool.max_rss_bytes);
    }
    let busy = cpu.map_or(0.0, |c| c.busy_us);
    let used = (tool.user_us + tool.system_us) as f64;
    tool.share_of_busy_pct = (busy > 0.0).then(|| (100.0 * used / busy).min(100.0));
    tool
}

fn rank_result(rank: usize, r: &RankReport) -> ClientResult {
    ClientResult {
        index: rank as u32,
        pid: r.pid,
        dir: r.dir.clone(),
        measured_ns: r.measured_ns,
        ops: copy_ops(&r.counts),
        cpu_user_us: r.tool.user_us,
        cpu_system_us: r.tool.system_us,
        max_rss_bytes: r.tool.max_rss_bytes,
    }
}
