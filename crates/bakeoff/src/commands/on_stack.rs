//! One measured run on a freshly built stack, torn down on every path: shared by `run --stack`,
//! `demo` and `compare`.

use super::dbrun::crash::{block_checker, serve_images, CrashRun};
use super::measure::{measure_with_devices, Known};
use crate::cli::StackOpts;
use crate::exit::{stack_failure, Failure};
use bakeoff_core::ramp::RampSpec;
use bakeoff_core::record::{RunRecord, RunStatus};
use bakeoff_core::verify::journal::JournalSink;
use bakeoff_core::Plan;
use bakeoff_engine::placement::log_filesets;
use bakeoff_engine::{Placement, Target};
use bakeoff_probe::{ROLE_LOG, ROLE_STACK};
use bakeoff_stack::{Stack, StackSpec};
use std::path::Path;
use std::sync::atomic::AtomicBool;

/// How to run on a stack.
pub struct StackRun<'a> {
    /// The data stack's spec.
    pub spec: &'a StackSpec,
    /// A second stack for the log (redo, WAL), if any.
    pub log_spec: Option<&'a StackSpec>,
    /// Stack options.
    pub opts: &'a StackOpts,
    /// Skip the cache rule.
    pub warm: bool,
    /// Memory cgroup limit.
    pub mem_limit: Option<u64>,
    /// No progress output.
    pub quiet: bool,
    /// `run --capture FILE` of a database: trace its file-system calls into FILE.
    pub capture: Option<&'a Path>,
    /// `run --crash-states N`: record the window's writes, check N crash states (a TPC-C
    /// run's acknowledged commits, a verified I/O run's synced blocks).
    pub crash_states: Option<u32>,
}

/// Builds the stack (and the log stack), checks they hold the dataset, runs `plan` cold
/// (unless warm), records how the stacks were built, and tears them down.
pub fn run_on_stack(
    run: &StackRun,
    plan: &Plan,
    interrupt: &AtomicBool,
) -> Result<RunRecord, Failure> {
    run_on_stack_ramped(run, plan, None, interrupt)
}

/// [`run_on_stack`], with the measured window a load ramp's points if `ramp` is given.
pub fn run_on_stack_ramped(
    run: &StackRun,
    plan: &Plan,
    ramp: Option<&RampSpec>,
    interrupt: &AtomicBool,
) -> Result<RunRecord, Failure> {
    let (stack, log_stack, crash) = build_stacks(run, plan)?;
    // Dropped in reverse: on an early return the stacks go before the write log under them.
    let mut crash = crash;
    let mut log_stack = log_stack;
    let mut stack = stack;
    let journalled;
    let plan = match crash {
        Some(_) => {
            // The states are judged against the run's journal of writes and syncs.
            journalled = Plan {
                journal: JournalSink::on(),
                ..plan.clone()
            };
            &journalled
        }
        None => plan,
    };
    if let Some(bytes) = run.mem_limit {
        stack.limit_memory(bytes).map_err(stack_failure)?;
    }
    let placement = Placement {
        data: target_of(&stack),
        log: log_stack.as_ref().map(target_of),
    };
    let known = known_of(&stack, log_stack.as_ref());
    let measured = {
        let mut prepare = || {
            if let Some(l) = log_stack.as_mut() {
                l.prepare_run(run.warm).map_err(stack_failure)?;
            }
            stack.prepare_run(run.warm).map_err(stack_failure)?;
            match crash.as_ref() {
                // The states start from the laid-out files, synced.
                Some(c) => c.checkpoint(&[&stack]).map_err(stack_failure),
                None => Ok(()),
            }
        };
        measure_with_devices(
            plan,
            ramp,
            &placement,
            interrupt,
            run.quiet,
            &mut prepare,
            known,
        )
    };
    if interrupt.load(std::sync::atomic::Ordering::Relaxed) {
        // Whoever pressed Ctrl-C waits for the teardown (seconds for a ZFS pool): say so.
        stack.announce_teardown(true);
        log_stack.iter_mut().for_each(|l| l.announce_teardown(true));
    }
    let broken =
        || (stack.failure_cause()).or_else(|| log_stack.as_ref().and_then(|l| l.failure_cause()));
    // A stack that broke (a dead ZFS daemon) explains the error it caused.
    let mut record = measured.map_err(|mut f| {
        if let Some(reason) = broken() {
            f.error = f.error.context(reason);
        }
        f
    })?;
    record.stack = Some(stack.info.clone());
    record.log_stack = log_stack.as_ref().map(|l| l.info.clone());
    record.cold = Some(!run.warm);
    complete(&mut record, broken());
    let origin = stack.target.clone();
    if let Some(c) = crash.as_mut() {
        // The file system's writeback is in the states' window; the teardown is not.
        stack.write_back().map_err(stack_failure)?;
        c.end_window();
    }
    if let Some(l) = log_stack {
        l.destroy().map_err(stack_failure)?;
    }
    stack.destroy().map_err(stack_failure)?;
    if let Some(c) = crash.filter(|_| record.status == RunStatus::Completed) {
        let journal = plan.journal.take().unwrap_or_default();
        let checker = block_checker(journal, run.spec, &origin, &c);
        record.durability = Some(c.finish(&checker, interrupt)?);
        record.findings = bakeoff_core::findings::run_findings(&record);
    }
    Ok(record)
}

/// The stacks of a run, and the write log under the data stack's images (`--crash-states`).
type Built = (Stack, Option<Stack>, Option<CrashRun>);

/// Builds the stack (and the log stack, which holds the log filesets) and checks that they
/// hold `plan`'s dataset.
fn build_stacks(run: &StackRun, plan: &Plan) -> Result<Built, Failure> {
    let logs = log_filesets(plan);
    let log_bytes: u64 = logs.iter().map(|&i| fileset_bytes(plan, i)).sum();
    let data_bytes = match run.log_spec {
        Some(_) => plan.dataset_bytes() - log_bytes,
        None => plan.dataset_bytes(),
    };
    let mut options = super::stack::options(run.spec, run.opts, None, data_bytes)?;
    let states = (run.crash_states, run.quiet);
    let crash = serve_images(run.spec, &mut options, None, plan.seed, states)?;
    let stack = super::stack::build_from(run.spec, options, run.quiet)?;
    let log_stack = match run.log_spec {
        Some(spec) => {
            // The user's --device disks are the data stack's; the log stack is built on loops.
            let s = super::stack::build(spec, &loop_only(run.opts), None, log_bytes, run.quiet)?;
            check_room(&s, log_bytes)?;
            check_room(&stack, plan.dataset_bytes() - log_bytes)?;
            Some(s)
        }
        None => {
            check_room(&stack, plan.dataset_bytes())?;
            None
        }
    };
    Ok((stack, log_stack, crash))
}

/// Completes a record that knows its stacks: the figures that need the stacks' read-back, or,
/// if a stack `broke` (a dead ZFS daemon), a failed record that says why; then its findings.
fn complete(record: &mut RunRecord, broke: Option<String>) {
    if record.status != RunStatus::Failed {
        // Figures that need the stack's read-back (its redundancy) are computed now.
        record.summary = bakeoff_core::record::Summary::compute(record);
    }
    if let Some(reason) = broke {
        let error = record.error.take().unwrap_or_default();
        record.error = Some(format!("{error} ({reason})").trim_start().to_string());
        record.status = RunStatus::Failed;
        record.roles.clear();
        record.summary = Default::default();
    }
    record.findings = bakeoff_core::findings::run_findings(record);
}

/// The stack options without the user's devices (a log stack is built on loop devices).
pub fn loop_only(opts: &StackOpts) -> StackOpts {
    StackOpts {
        devices: Vec::new(),
        destroy_data_on: Vec::new(),
        ..opts.clone()
    }
}

/// The devices and daemons of a stack and its log stack (the log stack's devices in the
/// `log` role, a disk both sit on sampled once).
pub fn known_of(stack: &Stack, log_stack: Option<&Stack>) -> Known {
    let mut devices = stack.devices.clone();
    let mut daemons: Vec<u32> = stack.daemons().iter().map(|d| d.pid() as u32).collect();
    if let Some(l) = log_stack {
        for mut d in l.devices.iter().cloned() {
            if d.role == ROLE_STACK {
                d.role = ROLE_LOG.to_string();
            }
            if !devices.iter().any(|x| x.name == d.name) {
                devices.push(d);
            }
        }
        // A zfs-fuse both stacks share is one daemon.
        for pid in l.daemons().iter().map(|d| d.pid() as u32) {
            if !daemons.contains(&pid) {
                daemons.push(pid);
            }
        }
    }
    Known {
        devices: Some(devices),
        daemons,
    }
}

/// Where the workload runs on `stack`.
pub fn target_of(stack: &Stack) -> Target {
    if stack.is_device {
        Target::Device(stack.target.clone())
    } else {
        Target::Directory(stack.target.clone())
    }
}

/// Bytes of fileset `i`.
fn fileset_bytes(plan: &Plan, i: usize) -> u64 {
    let f = &plan.filesets[i];
    f.file_size.saturating_mul(u64::from(f.nrfiles))
}

/// Refuses a stack that cannot hold `needed` bytes, before any data is written.
fn check_room(stack: &Stack, needed: u64) -> Result<(), Failure> {
    let available = stack.capacity().map_err(stack_failure)?;
    if needed > available {
        return Err(stack_failure(bakeoff_stack::StackError::TooSmall {
            stack: stack.info.spec.clone(),
            available,
            needed,
        }));
    }
    Ok(())
}
