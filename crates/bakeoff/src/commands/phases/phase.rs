//! One phase: its instances started `stagger` apart (or its action run), watched for their
//! exit, a timeout and Ctrl-C; probe snapshots at its edges give its device bytes, flushes and
//! whole-machine CPU with who used it.

use super::action;
use super::instance::{Launch, Running};
use super::output::{sinks, CommandOutput};
use bakeoff_core::phaserecord::{CpuSource, InstanceRecord, PhaseRecord};
use bakeoff_core::recipe::{PhaseDef, PhaseWork};
use bakeoff_core::record::{CpuStats, RunStatus};
use bakeoff_engine::{Tick, TickKind, Totals};
use bakeoff_probe::{
    backing_share, cpu_split, cpu_stats, family_cpu_us, processes, rusage_children, rusage_self,
    ticks_per_second, Probe, ProcStat, RunDevices, Snapshot, SplitInputs,
};
use bakeoff_stack::command_group::CommandGroup;
use bakeoff_stack::Stack;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// What every phase of a run shares.
pub struct Context<'a> {
    /// The stack (actions use it; command cgroups are recorded in its ledger).
    pub stack: &'a mut Stack,
    /// Its mount.
    pub mount: PathBuf,
    /// The recipe's parameters, exported to every command.
    pub params: &'a BTreeMap<String, String>,
    /// The stack's devices.
    pub probe: Probe,
    /// The stack's daemons, for the CPU split.
    pub daemons: Vec<u32>,
    /// The database server whose processes' CPU a database phase counts with bakeoff's
    /// (`CpuSource::BakeoffAndServer`): the postmaster, not the stack's own daemons.
    pub server: Option<u32>,
    /// Ctrl-C.
    pub interrupt: &'a AtomicBool,
    /// When the first phase started.
    pub origin: Instant,
    /// The next per-second tick for the sampler.
    pub next_tick: Duration,
    /// Cgroups of ended instances, holding whatever they left running until the run ends.
    pub groups: Vec<CommandGroup>,
    /// Where the commands' standard output and error go.
    pub output: CommandOutput,
}

impl Context<'_> {
    /// A tick for the sampler every second of the run.
    pub fn tick(&mut self, on_tick: &mut dyn FnMut(&Tick)) {
        let elapsed = self.origin.elapsed();
        if elapsed >= self.next_tick {
            on_tick(&Tick {
                elapsed,
                kind: TickKind::Second,
                totals: Totals::default(),
                latency: Default::default(),
            });
            self.next_tick += Duration::from_secs(1);
        }
    }
}

/// Counters at a phase's edge.
struct Edge {
    snapshot: Snapshot,
    processes: Vec<ProcStat>,
    own: (u64, u64, u64),
    children: (u64, u64, u64),
}

impl Edge {
    fn now(probe: &Probe) -> Edge {
        Edge {
            snapshot: probe.edge_snapshot(),
            processes: processes(),
            own: rusage_self(),
            children: rusage_children(),
        }
    }
}

/// How the work of a phase went.
pub struct Outcome {
    /// Completed, failed or interrupted.
    pub status: RunStatus,
    /// Why it failed.
    pub error: Option<String>,
    /// The command's instances (none for work inside bakeoff).
    pub instances: Vec<InstanceRecord>,
    /// How the instances' CPU is measured.
    pub cpu_source: CpuSource,
}

impl Outcome {
    /// The outcome of work done inside bakeoff (an action, a database phase).
    pub fn inside(done: Result<(), String>, cpu_source: CpuSource) -> Outcome {
        Outcome {
            status: match &done {
                Ok(()) => RunStatus::Completed,
                Err(_) => RunStatus::Failed,
            },
            error: done.err(),
            instances: Vec::new(),
            cpu_source,
        }
    }
}

/// Runs phase `index` of the recipe and says what it took.
pub fn run(
    ctx: &mut Context,
    index: usize,
    def: &PhaseDef,
    on_tick: &mut dyn FnMut(&Tick),
) -> PhaseRecord {
    let is_action = matches!(def.work, PhaseWork::Action { .. });
    let command = def.work.describe();
    measured(ctx, &def.name, command, is_action, |ctx| match &def.work {
        PhaseWork::Shell(text) => {
            let argv = ["/bin/sh".to_string(), "-c".into(), text.clone()];
            commands(ctx, index, def, &argv, on_tick)
        }
        PhaseWork::Argv(argv) => commands(ctx, index, def, argv, on_tick),
        PhaseWork::Action { name, with } => {
            Outcome::inside(action::run(name, with, ctx.stack), CpuSource::Bakeoff)
        }
    })
}

/// Runs `work` as the phase `name` (running `command`), accounted at its edges: its real
/// time, CPU, device bytes and flushes, and the whole machine's CPU with who used it. Work
/// inside bakeoff (`inside`: an action, a database phase) has no exit code.
pub fn measured(
    ctx: &mut Context,
    name: &str,
    command: String,
    inside: bool,
    work: impl FnOnce(&mut Context) -> Outcome,
) -> PhaseRecord {
    let start = Edge::now(&ctx.probe);
    let started = Instant::now();
    let outcome = work(ctx);
    let real_s = started.elapsed().as_secs_f64();
    let end = Edge::now(&ctx.probe);
    let bakeoff_us = |i: usize| {
        let field = |t: (u64, u64, u64)| if i == 0 { t.0 } else { t.1 };
        delta(field(start.own), field(end.own)) + delta(field(start.children), field(end.children))
    };
    let (user_us, sys_us) = match outcome.cpu_source {
        CpuSource::Bakeoff => (bakeoff_us(0), bakeoff_us(1)),
        CpuSource::BakeoffAndServer => {
            let (user, sys) = family_cpu_us(
                &start.processes,
                &end.processes,
                ctx.server.as_slice(),
                ticks_per_second(),
            );
            (bakeoff_us(0) + user as u64, bakeoff_us(1) + sys as u64)
        }
        _ => {
            let sum = |f: fn(&InstanceRecord) -> Option<f64>| -> Option<f64> {
                outcome.instances.iter().map(f).sum()
            };
            let us = |s: Option<f64>| s.map_or(0, |s| (s * 1e6) as u64);
            (us(sum(|i| i.user_s)), us(sum(|i| i.sys_s)))
        }
    };
    let measured =
        outcome.instances.is_empty() || outcome.instances.iter().all(|i| i.user_s.is_some());
    let devices = ctx.probe.device_stats(&start.snapshot, &end.snapshot);
    let stack_devices: Vec<_> = devices.iter().filter(|d| d.role == "stack").collect();
    let sum = |f: fn(&bakeoff_core::record::DeviceStats) -> Option<u64>| -> Option<u64> {
        (!stack_devices.is_empty())
            .then(|| stack_devices.iter().map(|d| f(d)).sum::<Option<u64>>())
            .flatten()
    };
    let failed = outcome.instances.iter().find(|i| i.exit_code != Some(0));
    let exit_code = match (inside, failed) {
        (true, _) => None,
        (_, Some(i)) => i.exit_code,
        (_, None) => Some(0),
    };
    PhaseRecord {
        name: name.to_string(),
        command,
        status: outcome.status,
        error: outcome.error,
        exit_code,
        start_offset_s: started.saturating_duration_since(ctx.origin).as_secs_f64(),
        real_s,
        user_s: measured.then(|| user_us as f64 / 1e6),
        sys_s: measured.then(|| sys_us as f64 / 1e6),
        cpu_source: outcome.cpu_source,
        instances: outcome.instances,
        device_read_bytes: sum(|d| Some(d.read_bytes)),
        device_write_bytes: sum(|d| Some(d.write_bytes)),
        device_flushes: sum(|d| d.flush_ops),
        cpu: phase_cpu(
            &start,
            &end,
            &ctx.daemons,
            &RunDevices::of(&ctx.probe.devices),
            backing_share(&devices),
        ),
        rows: None,
        steps: Vec::new(),
    }
}

fn delta(a: u64, b: u64) -> u64 {
    b.saturating_sub(a)
}

/// Whole-machine CPU over the phase, split by who used it: the commands bakeoff waited for
/// count as its own (through its children's time), as the split counts every run's.
fn phase_cpu(
    start: &Edge,
    end: &Edge,
    daemons: &[u32],
    devices: &RunDevices,
    backing_share: f64,
) -> Option<CpuStats> {
    let (a, b) = (start.snapshot.cpu.as_ref()?, end.snapshot.cpu.as_ref()?);
    let ticks_per_sec = ticks_per_second();
    let mut cpu = cpu_stats(a, b, ticks_per_sec);
    let own_us = (delta(start.own.0, end.own.0) + delta(start.own.1, end.own.1)) as f64;
    let kernel_work = end.snapshot.kernel_work_since(&start.snapshot);
    let inputs = SplitInputs {
        machine: (a, b),
        ticks_per_sec,
        me: std::process::id(),
        my_us: Some(own_us),
        daemons,
        devices,
        kernel_work: kernel_work.as_ref(),
        backing_share,
    };
    cpu.split =
        (!end.processes.is_empty()).then(|| cpu_split(&start.processes, &end.processes, &inputs));
    Some(cpu)
}

/// The phase's command, `parallel` instances started `stagger` apart, until every one has
/// ended; the first failure (or the timeout, or Ctrl-C) kills the others.
fn commands(
    ctx: &mut Context,
    index: usize,
    def: &PhaseDef,
    argv: &[String],
    on_tick: &mut dyn FnMut(&Tick),
) -> Outcome {
    let started = Instant::now();
    let (mut running, mut ended): (Vec<Running>, Vec<InstanceRecord>) = (Vec::new(), Vec::new());
    let (mut next, mut error, mut interrupted, mut killed) = (1u32, None, false, false);
    let mut cpu_source = CpuSource::Cgroup;
    loop {
        let stopping = error.is_some() || interrupted;
        while next <= def.parallel && !stopping && started.elapsed() >= def.stagger * (next - 1) {
            match launch(ctx, index, def, next, argv) {
                Ok(r) => {
                    cpu_source = r.cpu_source();
                    running.push(r);
                }
                Err(e) => error = Some(e),
            }
            next += 1;
        }
        // Instances killed for a reason already known (Ctrl-C, a timeout, another's failure)
        // are not failures of their own.
        reap(
            ctx,
            def,
            &mut running,
            &mut ended,
            (!killed).then_some(&mut error),
        );
        if running.is_empty() && (next > def.parallel || error.is_some() || interrupted) {
            break;
        }
        if ctx.interrupt.load(Ordering::Relaxed) {
            interrupted = true;
        }
        if let Some(limit) = def.timeout.filter(|t| started.elapsed() > *t) {
            error.get_or_insert_with(|| format!("timed out after {}", humantime(limit)));
        }
        if (error.is_some() || interrupted) && !killed {
            running.iter_mut().for_each(Running::kill);
            killed = true;
        }
        ctx.tick(on_tick);
        std::thread::sleep(Duration::from_millis(20));
    }
    ended.sort_by_key(|i| i.index);
    let status = match (&error, interrupted) {
        (Some(_), _) => RunStatus::Failed,
        (None, true) => RunStatus::Interrupted,
        (None, false) => RunStatus::Completed,
    };
    Outcome {
        status,
        error,
        instances: ended,
        cpu_source,
    }
}

/// Reaps the instances that have ended; the first that failed sets `error`.
fn reap(
    ctx: &mut Context,
    def: &PhaseDef,
    running: &mut Vec<Running>,
    ended: &mut Vec<InstanceRecord>,
    mut error: Option<&mut Option<String>>,
) {
    let mut i = 0;
    while i < running.len() {
        match running[i].try_end() {
            Ok(None) => i += 1,
            Ok(Some(end)) => {
                ctx.groups.extend(end.group);
                let r = end.record;
                if let Some(e) = error
                    .as_mut()
                    .filter(|e| e.is_none() && r.exit_code != Some(0))
                {
                    **e = Some(failure_text(&r, def.parallel));
                }
                ended.push(r);
                running.remove(i);
            }
            Err(e) => {
                // Not reapable: killed and given up on, rather than waited for forever.
                let what = format!("waiting for instance {}: {e}", running[i].index());
                if let Some(e) = error.as_mut() {
                    e.get_or_insert(what);
                }
                running.remove(i).kill();
            }
        }
    }
}

/// Makes instance `k`'s directory and cgroup and starts it.
fn launch(
    ctx: &mut Context,
    index: usize,
    def: &PhaseDef,
    k: u32,
    argv: &[String],
) -> Result<Running, String> {
    let dir = instance_dir(&ctx.mount, def, k);
    std::fs::create_dir_all(&dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    let group = ctx
        .stack
        .command_group(&format!("p{}-{k}", index + 1))
        .map_err(|e| e.to_string())?;
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut env: Vec<(String, String)> = ctx.params.clone().into_iter().collect();
    env.extend(def.env.iter().cloned());
    env.extend([
        ("BAKEOFF_CPUS".into(), cpus.to_string()),
        ("BAKEOFF_MOUNT".into(), ctx.mount.display().to_string()),
        ("BAKEOFF_PHASE".into(), def.name.clone()),
        ("BAKEOFF_INSTANCE".into(), k.to_string()),
        ("BAKEOFF_INSTANCES".into(), def.parallel.to_string()),
    ]);
    let launch = Launch {
        index: k,
        argv: argv.to_vec(),
        dir: dir.clone(),
        env,
        group,
        sinks: sinks(&ctx.output, index, &def.name, k, def.parallel),
    };
    launch
        .start(ctx.origin)
        .map_err(|e| format!("starting `{}` in {}: {e}", argv[0], dir.display()))
}

/// Where instance `k` runs: `cwd` under the mount, and `inst-K` below it when there are several.
fn instance_dir(mount: &Path, def: &PhaseDef, k: u32) -> PathBuf {
    let base = match &def.cwd {
        Some(cwd) => mount.join(cwd),
        None => mount.to_path_buf(),
    };
    match def.parallel {
        1 => base,
        _ => base.join(format!("inst-{k}")),
    }
}

/// Why an instance failed, with the last lines of its standard error.
fn failure_text(r: &InstanceRecord, parallel: u32) -> String {
    let how = match (r.exit_code, r.signal) {
        (Some(code), _) => format!("exited with status {code}"),
        (None, Some(sig)) => format!("was killed by signal {sig}"),
        (None, None) => "ended without a status".into(),
    };
    let which = match parallel {
        1 => format!("the command {how} (in {})", r.dir),
        _ => format!("instance {} {how} (in {})", r.index, r.dir),
    };
    match r.stderr_tail.is_empty() {
        true => format!("{which}; it wrote nothing to standard error"),
        false => format!(
            "{which}; its standard error ended with:\n    {}",
            r.stderr_tail.join("\n    ")
        ),
    }
}

/// `90s` → `1m30s`, for messages.
fn humantime(d: Duration) -> String {
    let s = d.as_secs_f64();
    match s {
        s if s < 60.0 => {
            format!("{s:.3}")
                .trim_end_matches('0')
                .trim_end_matches('.')
                .to_string()
                + "s"
        }
        s => format!("{}m{}s", (s / 60.0).floor(), (s % 60.0).round()),
    }
}
