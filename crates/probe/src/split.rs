//! Pure math: who used the window's busy CPU, from two process tables and two `/proc/stat`
//! readings (see [`bakeoff_core::record::CpuSplit`]).

use crate::attribution::{traced_run_us, Owner, RunDevices};
use crate::delta::counter_delta;
use crate::kwork::KernelWindow;
use crate::parse::{CpuTimes, ProcStat};
use bakeoff_core::record::CpuSplit;
use std::collections::{HashMap, HashSet};

/// What the split needs to know besides the process tables.
pub struct SplitInputs<'a> {
    /// `/proc/stat` at the start and end of the window.
    pub machine: (&'a CpuTimes, &'a CpuTimes),
    /// Clock ticks per second.
    pub ticks_per_sec: f64,
    /// bakeoff's own pid.
    pub me: u32,
    /// bakeoff's own CPU over the window from `getrusage` (µs precision, better than ticks).
    pub my_us: Option<f64>,
    /// The stack's daemons: their CPU and their descendants' counts as `daemons`.
    pub daemons: &'a [u32],
    /// The run's devices, which its kernel threads name ([`RunDevices::of`]).
    pub devices: &'a RunDevices,
    /// The traced kernel work of the window ([`crate::kwork`]), where the tracer ran: then
    /// pooled workers and interrupts count by whom their work was for, not by thread name.
    pub kernel_work: Option<&'a KernelWindow>,
    /// The run's loop devices' share of their backing disks' bytes in the window (0 to 1):
    /// its part of the traced work for a disk it shares.
    pub backing_share: f64,
}

/// Kernel threads that do I/O work: workqueue workers, loop, journal, file-system and ZFS
/// threads, soft interrupts, reclaim. Housekeeping threads (rcu, migration, kdamond,
/// kcompactd, watchdogs) are not the run's: their CPU falls to `other`.
const IO_KERNEL_THREADS: &[&str] = &[
    "kworker",
    "loop",
    "jbd2",
    "xfs",
    "btrfs",
    "z_",
    "txg_",
    "spl_",
    "zvol",
    "dp_",
    "ksoftirqd",
    "kswapd",
    "kblockd",
    "irq/",
    "scsi_",
    "nvme",
    "dio/",
    "ext4",
];

/// True for a kernel thread whose CPU counts as the run's (see [`IO_KERNEL_THREADS`]).
fn does_io(p: &ProcStat) -> bool {
    p.kernel_thread && IO_KERNEL_THREADS.iter().any(|n| p.comm.starts_with(n))
}

/// Ticks each process used between the tables; a pid whose start time changed is a new process.
fn used(start: &[ProcStat], end: &[ProcStat]) -> HashMap<u32, u64> {
    let before: HashMap<u32, &ProcStat> = start.iter().map(|p| (p.pid, p)).collect();
    end.iter()
        .map(|p| {
            let base = before
                .get(&p.pid)
                .filter(|b| b.starttime == p.starttime)
                .map_or(0, |b| b.ticks());
            (p.pid, p.ticks().saturating_sub(base))
        })
        .collect()
}

/// `roots` and every process descending from them in `table`.
fn family(table: &[ProcStat], roots: &[u32]) -> HashSet<u32> {
    let mut members: HashSet<u32> = roots.iter().copied().collect();
    loop {
        let before = members.len();
        for p in table {
            if members.contains(&p.ppid) {
                members.insert(p.pid);
            }
        }
        if members.len() == before {
            return members;
        }
    }
}

/// Ticks of a family's processes that ended during the window (a server's connections after
/// the clients hung up, a client program that exited): gone from `/proc` by the end, their
/// time is in their parents' `cutime`/`cstime` once waited for. That growth, less what the
/// ended processes had used before the window began.
fn ended_in_window(
    start: &[ProcStat],
    end: &[ProcStat],
    members: &HashSet<u32>,
    members_at_start: &HashSet<u32>,
) -> f64 {
    let before: HashMap<u32, &ProcStat> = start.iter().map(|p| (p.pid, p)).collect();
    let reaped: u64 = end
        .iter()
        .filter(|p| members.contains(&p.pid))
        .map(|p| {
            let base = before
                .get(&p.pid)
                .filter(|b| b.starttime == p.starttime)
                .map_or(0, |b| b.children_ticks());
            p.children_ticks().saturating_sub(base)
        })
        .sum();
    let alive: HashSet<(u32, u64)> = end.iter().map(|p| (p.pid, p.starttime)).collect();
    let used_before: u64 = start
        .iter()
        .filter(|p| members_at_start.contains(&p.pid) && !alive.contains(&(p.pid, p.starttime)))
        .map(ProcStat::ticks)
        .sum();
    reaped.saturating_sub(used_before) as f64
}

/// User and system CPU, in µs, of `roots` and their descendants between the two process
/// tables (a database server over a phase): the processes alive at the end, plus those that
/// ended inside it through their parents' waited-for children's time.
pub fn family_cpu_us(
    start: &[ProcStat],
    end: &[ProcStat],
    roots: &[u32],
    ticks_per_sec: f64,
) -> (f64, f64) {
    let members = family(end, roots);
    let members_at_start = family(start, roots);
    let before: HashMap<u32, &ProcStat> = start.iter().map(|p| (p.pid, p)).collect();
    let alive: HashSet<(u32, u64)> = end.iter().map(|p| (p.pid, p.starttime)).collect();
    let part = |own: fn(&ProcStat) -> u64, reaped: fn(&ProcStat) -> u64| -> f64 {
        let grown: u64 = (end.iter().filter(|p| members.contains(&p.pid)))
            .map(|p| {
                let base = before.get(&p.pid).filter(|b| b.starttime == p.starttime);
                let since = |f: fn(&ProcStat) -> u64| f(p).saturating_sub(base.map_or(0, |b| f(b)));
                since(own) + since(reaped)
            })
            .sum();
        let used_before: u64 = (start.iter())
            .filter(|p| members_at_start.contains(&p.pid) && !alive.contains(&(p.pid, p.starttime)))
            .map(own)
            .sum();
        let ticks = grown.saturating_sub(used_before) as f64;
        if ticks_per_sec > 0.0 {
            ticks / ticks_per_sec * 1e6
        } else {
            0.0
        }
    };
    (
        part(|p| p.utime, |p| p.cutime),
        part(|p| p.stime, |p| p.cstime),
    )
}

/// Sums the window's CPU, in µs, of the threads a predicate picks.
type ThreadUs<'a> = dyn Fn(&dyn Fn(&ProcStat) -> bool) -> f64 + 'a;

/// The kernel's work for the run, in µs (see [`cpu_split`]); `thread_us` sums the window's CPU
/// of the threads a predicate picks, `interrupts_us` is the machine's interrupt time.
fn kernel_for_run(
    inputs: &SplitInputs,
    thread_us: &ThreadUs,
    interrupts_us: f64,
    run_family: &HashSet<u32>,
) -> f64 {
    let owned = |p: &ProcStat, owner| does_io(p) && inputs.devices.owner(&p.comm) == owner;
    let run_or_shared = |p: &ProcStat| owned(p, Owner::Run) || owned(p, Owner::Shared);
    match inputs.kernel_work {
        Some(window) => {
            // Dedicated threads by their names; pooled workers' and interrupts' work by whom
            // the tracer saw it was for (their /proc time would count it twice).
            let pooled =
                |p: &ProcStat| p.comm.starts_with("kworker") || p.comm.starts_with("ksoftirqd");
            let run_process = |tgid: u32| run_family.contains(&tgid);
            thread_us(&|p| !pooled(p) && run_or_shared(p))
                + traced_run_us(window, inputs.devices, &run_process, inputs.backing_share)
        }
        None => thread_us(&run_or_shared) + interrupts_us,
    }
}

/// Splits the window's busy CPU: bakeoff and its descendants, the daemons and theirs, the
/// kernel's work for the run, steal, and the rest. A process of bakeoff's or a daemon's that
/// ended inside the window counts through its parent's waited-for children's time; one that
/// no member waited for falls to `other`.
///
/// The kernel's work for the run: every I/O kernel thread that names one of the run's devices
/// ([`RunDevices`]), plus the shared kernel time — I/O kernel threads that name no device (or a
/// shared one) and hard and soft interrupt time. Threads naming other devices are `other`.
/// Shared time is not divided by the run's share of process CPU: a CPU-bound neighbour (no
/// I/O) then halved a run's kernel time per operation (34.5 µs alone, 17.2 µs beside `yes` on
/// one of two CPUs), which is the error `cpu_us_per_op` exists to avoid.
pub fn cpu_split(start: &[ProcStat], end: &[ProcStat], inputs: &SplitInputs) -> CpuSplit {
    let (a, b) = inputs.machine;
    let d = |f: fn(&CpuTimes) -> u64| counter_delta(f(a), f(b)) as f64;
    let busy = d(|c| c.user) + d(|c| c.nice) + d(|c| c.system) + d(|c| c.irq);
    let busy = busy + d(|c| c.softirq) + d(|c| c.steal);
    let total = busy + d(|c| c.idle) + d(|c| c.iowait);
    let us = |ticks: f64| {
        if inputs.ticks_per_sec > 0.0 {
            ticks / inputs.ticks_per_sec * 1e6
        } else {
            0.0
        }
    };
    let used = used(start, end);
    let tool = family(end, &[inputs.me]);
    let daemons: HashSet<u32> = family(end, inputs.daemons)
        .difference(&tool)
        .copied()
        .collect();
    let sum = |pred: &dyn Fn(&ProcStat) -> bool| {
        let ticks: u64 = end.iter().filter(|p| pred(p)).map(|p| used[&p.pid]).sum();
        us(ticks as f64)
    };
    let tool_start = family(start, &[inputs.me]);
    let daemons_start: HashSet<u32> = family(start, inputs.daemons)
        .difference(&tool_start)
        .copied()
        .collect();
    let children_us = sum(&|p| tool.contains(&p.pid) && p.pid != inputs.me);
    let my_us = inputs.my_us.unwrap_or_else(|| sum(&|p| p.pid == inputs.me));
    let tool_us = my_us + children_us + us(ended_in_window(start, end, &tool, &tool_start));
    let daemons_us = sum(&|p| daemons.contains(&p.pid))
        + us(ended_in_window(start, end, &daemons, &daemons_start));
    let run_family: HashSet<u32> = (tool.iter().chain(&daemons).copied())
        .chain(tool_start.iter().chain(&daemons_start).copied())
        .collect();
    let interrupts_us = us(d(|c| c.irq) + d(|c| c.softirq));
    let kernel_us = kernel_for_run(inputs, &sum, interrupts_us, &run_family);
    let steal_us = us(d(|c| c.steal));
    let other_us = (us(busy) - tool_us - daemons_us - kernel_us - steal_us).max(0.0);
    let pct = |x: f64| {
        if total > 0.0 {
            100.0 * x / us(total)
        } else {
            0.0
        }
    };
    CpuSplit {
        tool_us,
        daemons_us,
        kernel_us,
        other_us,
        steal_us,
        tool_pct: pct(tool_us),
        daemons_pct: pct(daemons_us),
        kernel_pct: pct(kernel_us),
        other_pct: pct(other_us),
        kernel_traced: inputs.kernel_work.is_some(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(pid: u32, ppid: u32, kthread: bool, ticks: u64) -> ProcStat {
        let comm = match pid {
            3 => "jbd2/loop7-8".to_string(),
            4 => "rcu_preempt".to_string(),
            _ => format!("p{pid}"),
        };
        ProcStat {
            pid,
            comm,
            ppid,
            kernel_thread: kthread,
            utime: ticks,
            stime: 0,
            cutime: 0,
            cstime: 0,
            starttime: 1,
        }
    }

    #[test]
    fn a_servers_cpu_counts_its_family_and_the_connections_that_ended() {
        // Server 10 with a checkpointer 11 throughout, a backend 12 that ended inside the
        // phase (its 30 ticks before it and 20 after reaped into 10's cutime), a backend 13
        // that started inside it; 20 is not the server's.
        let proc = |pid, ppid, user, sys, cutime| ProcStat {
            stime: sys,
            cutime,
            ..p(pid, ppid, false, user)
        };
        let start = [
            proc(10, 1, 100, 50, 0),
            proc(11, 10, 10, 5, 0),
            proc(12, 10, 30, 0, 0),
            proc(20, 1, 500, 0, 0),
        ];
        let end = [
            proc(10, 1, 110, 52, 50),
            proc(11, 10, 14, 6, 0),
            proc(13, 10, 7, 3, 0),
            proc(20, 1, 900, 0, 0),
        ];
        let (user, sys) = family_cpu_us(&start, &end, &[10], 100.0);
        // user: 10 + 4 + 7 + (50 reaped - 30 used before) = 41 ticks; sys: 2 + 1 + 3.
        assert_eq!((user, sys), (410_000.0, 60_000.0));
    }

    fn times(user: u64, system: u64, idle: u64, softirq: u64, steal: u64) -> CpuTimes {
        CpuTimes {
            user,
            system,
            idle,
            softirq,
            steal,
            cpus: 2,
            ..CpuTimes::default()
        }
    }

    #[test]
    fn splits_tool_daemons_kernel_other_and_steal() {
        // bakeoff 100 (child 101), a daemon 200 (child 201), a journal thread 3, a stranger 300.
        let start = [
            p(100, 1, false, 0),
            p(101, 100, false, 0),
            p(200, 1, false, 0),
            p(201, 200, false, 0),
            p(3, 2, true, 0),
            p(4, 2, true, 0),
            p(300, 1, false, 0),
        ];
        let end = [
            p(100, 1, false, 30),
            p(101, 100, false, 10),
            p(200, 1, false, 20),
            p(201, 200, false, 5),
            p(3, 2, true, 15),
            p(4, 2, true, 2), // rcu_preempt: housekeeping, not the run's
            p(300, 1, false, 10),
            p(400, 100, false, 4), // a client started in the window
        ];
        // 100 busy ticks: 95 process ticks + 5 softirq + ... with 3 stolen; 100 idle.
        let a = times(0, 0, 0, 0, 0);
        let b = times(70, 22, 100, 5, 3);
        let inputs = SplitInputs {
            machine: (&a, &b),
            ticks_per_sec: 100.0,
            me: 100,
            my_us: None,
            daemons: &[200],
            devices: &loop7(),
            kernel_work: None,
            backing_share: 0.0,
        };
        let s = cpu_split(&start, &end, &inputs);
        assert_eq!(s.tool_us, 440_000.0, "30 + 10 + 4 ticks");
        assert_eq!(s.daemons_us, 250_000.0);
        // loop7's journal thread is the run's, and so are the 5 ticks of softirq (shared).
        let kernel = 150_000.0 + 50_000.0;
        assert!((s.kernel_us - kernel).abs() < 1e-6, "{}", s.kernel_us);
        assert_eq!(s.steal_us, 30_000.0);
        // Busy 100 ticks = 1 s: other is the rest.
        let other = 1e6 - 440_000.0 - 250_000.0 - kernel - 30_000.0;
        assert!((s.other_us - other).abs() < 1e-6, "{}", s.other_us);
        assert!((s.tool_pct - 22.0).abs() < 1e-9, "{}", s.tool_pct);
        // Another device's kworker is not the run's.
        let elsewhere = RunDevices::from_parts(&["loop8", "7:8"], &[]);
        let s = cpu_split(
            &start,
            &end,
            &SplitInputs {
                devices: &elsewhere,
                ..inputs
            },
        );
        assert!(
            (s.kernel_us - 50_000.0).abs() < 1e-6,
            "the shared softirq only: {}",
            s.kernel_us
        );
    }

    #[test]
    fn traced_kernel_work_replaces_pooled_workers_and_interrupts() {
        use crate::kwork::{KernelTime, Label};
        let named = |pid, comm: &str, ticks| ProcStat {
            comm: comm.into(),
            ..p(pid, 2, true, ticks)
        };
        let start = [
            p(100, 1, false, 0),
            named(3, "jbd2/loop7-8", 0),
            named(5, "kworker/u8:1-loop7", 0),
            named(6, "ksoftirqd/0", 0),
        ];
        let end = [
            p(100, 1, false, 30),
            named(3, "jbd2/loop7-8", 10),
            named(5, "kworker/u8:1-loop7", 40),
            named(6, "ksoftirqd/0", 20),
        ];
        let a = times(0, 0, 0, 0, 0);
        let b = times(30, 70, 100, 10, 0);
        // The tracer saw 120 ms of loop7's work for the run and 300 ms for a stranger's dd.
        let t = |what, origin, ns| KernelTime { what, origin, ns };
        let window = KernelWindow {
            times: vec![
                t(
                    Label::Workqueue("loop7".into()),
                    Label::Unknown,
                    120_000_000,
                ),
                t(
                    Label::Workqueue("loop1".into()),
                    Label::Unknown,
                    300_000_000,
                ),
            ],
            lost: 0,
        };
        let inputs = SplitInputs {
            machine: (&a, &b),
            ticks_per_sec: 100.0,
            me: 100,
            my_us: None,
            daemons: &[],
            devices: &loop7(),
            kernel_work: Some(&window),
            backing_share: 0.0,
        };
        let s = cpu_split(&start, &end, &inputs);
        // The journal thread by name (10 ticks) and the traced 120 ms; not the kworker's 40
        // ticks, ksoftirqd's 20 or the soft interrupts' 10 ticks, which the tracer accounts.
        assert!((s.kernel_us - 220_000.0).abs() < 1e-6, "{}", s.kernel_us);
        assert!(s.kernel_traced);
        assert!(
            (s.other_us - (1.1e6 - 300_000.0 - 220_000.0)).abs() < 1e-6,
            "{s:?}"
        );
    }

    fn loop7() -> RunDevices {
        RunDevices::from_parts(&["loop7", "7:7"], &["vda", "254:0"])
    }

    #[test]
    fn shared_kernel_time_is_the_runs_whatever_a_cpu_bound_stranger_uses() {
        // bakeoff 100 uses 20 ticks, a stranger 300 60 (no I/O), a generic kworker 5 20; 20
        // ticks of softirq. The shared kernel time (40 ticks) is the run's, not a quarter of
        // it by the stranger's CPU.
        let start = [p(100, 1, false, 0), p(300, 1, false, 0), p(5, 2, true, 0)];
        let mut worker = p(5, 2, true, 20);
        worker.comm = "kworker/u8:0-events_unbound".into();
        let end = [p(100, 1, false, 20), p(300, 1, false, 60), worker];
        let a = times(0, 0, 0, 0, 0);
        let b = times(100, 0, 80, 20, 0);
        let inputs = SplitInputs {
            machine: (&a, &b),
            ticks_per_sec: 100.0,
            me: 100,
            my_us: None,
            daemons: &[],
            devices: &loop7(),
            kernel_work: None,
            backing_share: 0.0,
        };
        let s = cpu_split(&start, &end, &inputs);
        assert_eq!(s.tool_us, 200_000.0);
        assert!(
            (s.kernel_us - 400_000.0).abs() < 1e-6,
            "20 + 20 ticks: {}",
            s.kernel_us
        );
        assert!((s.other_us - 600_000.0).abs() < 1e-6, "{}", s.other_us);
    }

    #[test]
    fn processes_that_ended_in_the_window_count_through_their_parents_children_time() {
        // A server 200 whose connection 201 used 5 ticks before the window and 25 in it, then
        // ended and was waited for: 30 ticks land in 200's cutime/cstime.
        let mut server_end = p(200, 1, false, 10);
        (server_end.cutime, server_end.cstime) = (20, 10);
        let start = [
            p(100, 1, false, 0),
            p(200, 1, false, 0),
            p(201, 200, false, 5),
        ];
        let end = [p(100, 1, false, 0), server_end];
        let a = times(0, 0, 0, 0, 0);
        let b = times(40, 0, 60, 0, 0);
        let inputs = SplitInputs {
            machine: (&a, &b),
            ticks_per_sec: 100.0,
            me: 100,
            my_us: None,
            daemons: &[200],
            devices: &loop7(),
            kernel_work: None,
            backing_share: 0.0,
        };
        let s = cpu_split(&start, &end, &inputs);
        assert_eq!(
            s.daemons_us, 350_000.0,
            "10 of its own + 25 of the ended connection"
        );
        assert_eq!(s.other_us, 50_000.0);
    }

    #[test]
    fn a_reused_pid_counts_from_zero_and_rusage_wins_for_self() {
        let mut old = p(300, 1, false, 50);
        old.starttime = 1;
        let mut new = p(300, 100, false, 7);
        new.starttime = 9;
        let a = times(0, 0, 0, 0, 0);
        let b = times(10, 0, 10, 0, 0);
        let inputs = SplitInputs {
            machine: (&a, &b),
            ticks_per_sec: 100.0,
            me: 100,
            my_us: Some(12_345.0),
            daemons: &[],
            devices: &loop7(),
            kernel_work: None,
            backing_share: 0.0,
        };
        let s = cpu_split(
            &[old, p(100, 1, false, 0)],
            &[new, p(100, 1, false, 1)],
            &inputs,
        );
        assert_eq!(s.tool_us, 12_345.0 + 70_000.0);
        assert_eq!(s.other_us, 100_000.0 - s.tool_us);
    }
}
