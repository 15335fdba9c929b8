//! A run of phases (`bakeoff exec`, `bakeoff run RECIPE`, a recipe cell of `compare`): the
//! stack built, made cold, the phases run in order inside one measured [`Window`] (so the run
//! has the whole-machine CPU split, device and memory figures of every run), each phase
//! accounted at its edges; after the last, whatever the commands left running is killed and the
//! stack's space and compression are read back; then the stack is torn down.

mod action;
mod instance;
mod output;
pub mod phase;

use super::measure::Window;
use super::on_stack::{known_of, target_of, StackRun};
use crate::exit::{failure, stack_failure, Code, Failure};
use bakeoff_core::phaserecord::PhaseRecord;
use bakeoff_core::plan::{EngineKind, Plan};
use bakeoff_core::recipe::{PhaseWork, RecipePlan};
use bakeoff_core::record::{RunRecord, RunStatus, Summary};
use bakeoff_core::units::format_secs;
use bakeoff_engine::{RunError, RunOutput, Target, Tick, TickKind, Totals};
use bakeoff_probe::Probe;
use bakeoff_stack::Stack;
pub use output::CommandOutput;
pub use phase::Context;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Checks what can be checked before anything is built: every action's arguments.
pub fn check(plan: &RecipePlan) -> Result<(), Failure> {
    for p in &plan.phases {
        if let PhaseWork::Action { name, with } = &p.work {
            action::check(name, with)
                .map_err(|m| failure(Code::Usage, format!("phase {}: {m}", p.name)))?;
        }
    }
    Ok(())
}

/// Whether the run failed because a command failed (exited non-zero, was killed or outlived
/// its timeout) rather than bakeoff or the stack: [`crate::exit::Code::CommandFailed`].
pub fn command_failed(record: &RunRecord) -> bool {
    let failed = |i: &bakeoff_core::phaserecord::InstanceRecord| i.exit_code != Some(0);
    record.status == RunStatus::Failed
        && (record.phases.iter())
            .any(|p| p.status == RunStatus::Failed && p.instances.iter().any(failed))
}

/// The plan as the run record shows it: the recipe's name and parameters (a run of phases has
/// no filesets or roles).
pub fn record_plan(plan: &RecipePlan) -> Plan {
    Plan {
        workload: plan.recipe.clone(),
        engine: EngineKind::Null,
        runtime: Duration::ZERO,
        ramp_time: Duration::ZERO,
        ramp_auto: None,
        stop: None,
        seed: 0,
        repetition: 1,
        compress_pct: 0,
        filesets: Vec::new(),
        roles: Vec::new(),
        settings: plan.params.clone(),
        clients: 0,
        replay: None,
        verify: None,
        journal: Default::default(),
    }
}

impl<'a> Context<'a> {
    /// The context of a run of phases on `stack` mounted at `mount`: `params` exported to
    /// commands, the stack's devices and daemons (for the accounting), Ctrl-C; its clock
    /// starts now.
    pub fn new(
        stack: &'a mut Stack,
        mount: std::path::PathBuf,
        params: &'a std::collections::BTreeMap<String, String>,
        (devices, daemons): (Vec<bakeoff_probe::DeviceInfo>, Vec<u32>),
        interrupt: &'a AtomicBool,
    ) -> Context<'a> {
        Context {
            stack,
            mount,
            params,
            probe: Probe::new(devices).with_kernel_work(),
            daemons,
            server: None,
            interrupt,
            origin: Instant::now(),
            next_tick: Duration::from_secs(1),
            groups: Vec::new(),
            output: CommandOutput::default(),
        }
    }
}

/// Builds the stack `run` names, runs the phases of `plan` on it (their commands writing to
/// `output`) and tears it down.
pub fn run_recipe(
    run: &StackRun,
    plan: &RecipePlan,
    output: &CommandOutput,
    interrupt: &AtomicBool,
) -> Result<RunRecord, Failure> {
    let mut stack = super::stack::build(run.spec, run.opts, None, 0, run.quiet)?;
    let outcome = run_on(&mut stack, run, plan, output, interrupt);
    if interrupt.load(Ordering::Relaxed) {
        // Whoever pressed Ctrl-C waits for the teardown (seconds for a ZFS pool): say so.
        stack.announce_teardown(true);
    }
    let torn = stack.destroy().map_err(stack_failure);
    let record = outcome?;
    torn?;
    Ok(record)
}

fn run_on(
    stack: &mut Stack,
    run: &StackRun,
    plan: &RecipePlan,
    output: &CommandOutput,
    interrupt: &AtomicBool,
) -> Result<RunRecord, Failure> {
    let Target::Directory(mount) = target_of(stack) else {
        return Err(failure(
            Code::Usage,
            "commands need a file system to run in: a raw stack holds no files",
        ));
    };
    if let Some(bytes) = run.mem_limit {
        stack.limit_memory(bytes).map_err(stack_failure)?;
    }
    stack.prepare_run(run.warm).map_err(stack_failure)?;
    let known = known_of(stack, None);
    let devices = known.devices.unwrap_or_default();
    let record_plan = record_plan(plan);
    let window = Window {
        plan: &record_plan,
        path: &mount,
        devices: devices.clone(),
        daemons: known.daemons.clone(),
        // Status lines only: on a terminal a bar would overwrite the commands' own output.
        quiet: run.quiet || std::io::IsTerminal::is_terminal(&std::io::stderr()),
    };
    let mut ctx = Context::new(
        stack,
        mount.clone(),
        &plan.params,
        (devices, known.daemons),
        interrupt,
    );
    ctx.output = output.clone();
    let mut phases = Vec::new();
    let names: Vec<(String, String)> = (plan.phases.iter())
        .map(|p| (p.name.clone(), p.work.describe()))
        .collect();
    let measured = window.run(&mut |on_tick| {
        ctx.origin = Instant::now();
        let mut one = |ctx: &mut Context, i: usize, on_tick: &mut dyn FnMut(&Tick)| {
            phase::run(ctx, i, &plan.phases[i], on_tick)
        };
        Ok(run_phases(
            &mut ctx,
            &names,
            &mut phases,
            on_tick,
            run.quiet,
            &mut one,
        ))
    });
    // Whatever the commands left running (a daemon) goes before the space is read.
    for group in ctx.groups.drain(..) {
        if let Err(e) = group.remove() {
            eprintln!("bakeoff: warning: {e}");
        }
    }
    let mut record = measured?;
    finish_record(&mut record, phases, ctx.stack, run.warm);
    Ok(record)
}

/// Completes the record of a run of phases: its phases, the stack's space and compression
/// read back now, how the stack was built, its summary and findings.
pub fn finish_record(
    record: &mut RunRecord,
    phases: Vec<PhaseRecord>,
    stack: &mut Stack,
    warm: bool,
) {
    record.phases = phases;
    record.space = stack.space().unwrap_or_else(|e| {
        eprintln!("bakeoff: warning: the space used on the stack was not read back: {e}");
        None
    });
    record.stack = Some(stack.info.clone());
    record.cold = Some(!warm);
    if record.status != RunStatus::Failed {
        record.summary = Summary::compute(record);
    }
    record.findings = bakeoff_core::findings::run_findings(record);
    // Phases are not a steady state: whether their throughput settled says nothing.
    record
        .findings
        .retain(|f| !["too_short", "not_steady"].contains(&f.id.as_str()));
}

/// Runs phase `i` of a run on the context, ticking the sampler.
pub type RunOne<'r> = dyn FnMut(&mut Context, usize, &mut dyn FnMut(&Tick)) -> PhaseRecord + 'r;

/// The window's body: the phases `names` (name and what it runs) in order, each by
/// `run_one`, until one fails or Ctrl-C; the window starts at `ctx.origin`.
pub fn run_phases(
    ctx: &mut Context,
    names: &[(String, String)],
    phases: &mut Vec<PhaseRecord>,
    on_tick: &mut dyn FnMut(&Tick),
    quiet: bool,
    run_one: &mut RunOne,
) -> RunOutput {
    let tick = |kind, origin: Instant| Tick {
        elapsed: origin.elapsed(),
        kind,
        totals: Totals::default(),
        latency: Default::default(),
    };
    on_tick(&tick(TickKind::Start, ctx.origin));
    on_tick(&tick(TickKind::MeasureStart, ctx.origin));
    let mut error = None;
    for (i, (name, what)) in names.iter().enumerate() {
        if ctx.interrupt.load(Ordering::Relaxed) {
            break;
        }
        if !quiet {
            eprintln!("bakeoff: phase {name} ({}/{}): {what}", i + 1, names.len());
        }
        let record = run_one(ctx, i, on_tick);
        if !quiet {
            eprintln!("bakeoff: phase {name}: {}", progress_line(&record));
        }
        let status = record.status;
        if let (RunStatus::Failed, Some(message)) = (status, &record.error) {
            error = Some(RunError::Phase {
                phase: record.name.clone(),
                message: message.clone(),
            });
        }
        phases.push(record);
        if status != RunStatus::Completed {
            break;
        }
    }
    on_tick(&tick(TickKind::End, ctx.origin));
    RunOutput {
        roles: Vec::new(),
        ops: Vec::new(),
        measured: ctx.origin.elapsed(),
        interrupted: ctx.interrupt.load(Ordering::Relaxed),
        error,
        counts: Vec::new(),
        clients: Vec::new(),
        steady: None,
        replay: None,
        verify: None,
    }
}

/// `142 s real, 120 s user, 20.3 s sys` and the bytes written, or how it failed.
pub fn progress_line(p: &PhaseRecord) -> String {
    let cpu = match (p.user_s, p.sys_s) {
        (Some(u), Some(s)) => format!(", {} user, {} sys", format_secs(u), format_secs(s)),
        _ => String::new(),
    };
    let wrote = p.device_write_bytes.map_or(String::new(), |b| {
        format!(", {} written", bakeoff_core::units::format_bytes(b))
    });
    let status = match p.status {
        RunStatus::Completed => String::new(),
        RunStatus::Interrupted => " (interrupted)".into(),
        RunStatus::Failed => " (FAILED)".into(),
    };
    format!("{} real{cpu}{wrote}{status}", format_secs(p.real_s))
}
