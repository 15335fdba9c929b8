//! One measured run on a freshly built stack, torn down on every path: shared by `run --stack`,
//! `demo` and `compare`.

use super::measure::{measure_with_devices, Known};
use crate::cli::StackOpts;
use crate::exit::{stack_failure, Failure};
use bakeoff_core::record::{RunRecord, RunStatus};
use bakeoff_core::Plan;
use bakeoff_engine::Target;
use std::sync::atomic::AtomicBool;

/// How to run on a stack.
pub struct StackRun<'a> {
    /// The spec (command-line form or a TOML file).
    pub spec: &'a str,
    /// Stack options.
    pub opts: &'a StackOpts,
    /// Skip the cache rule.
    pub warm: bool,
    /// Memory cgroup limit.
    pub mem_limit: Option<u64>,
    /// No progress output.
    pub quiet: bool,
}

/// Builds the stack, checks it holds the dataset, runs `plan` cold (unless warm), records how the
/// stack was built, and tears it down.
pub fn run_on_stack(
    run: &StackRun,
    plan: &Plan,
    interrupt: &AtomicBool,
) -> Result<RunRecord, Failure> {
    let mut stack = super::stack::build(run.spec, run.opts, None)?;
    let needed = plan.dataset_bytes();
    let available = stack.capacity().map_err(stack_failure)?;
    if needed > available {
        let spec = stack.info.spec.clone();
        return Err(stack_failure(bakeoff_stack::StackError::TooSmall {
            stack: spec,
            available,
            needed,
        }));
    }
    if let Some(bytes) = run.mem_limit {
        stack.limit_memory(bytes).map_err(stack_failure)?;
    }
    let target = if stack.is_device {
        Target::Device(stack.target.clone())
    } else {
        Target::Directory(stack.target.clone())
    };
    let known = Known {
        devices: Some(stack.devices.clone()),
        daemons: stack.daemons().iter().map(|d| d.pid() as u32).collect(),
    };
    let measured = {
        let mut prepare = || stack.prepare_run(run.warm).map_err(stack_failure);
        measure_with_devices(plan, &target, interrupt, run.quiet, &mut prepare, known)
    };
    // A stack that broke (a dead ZFS daemon) explains the error it caused.
    let mut record = measured.map_err(|mut f| {
        if let Some(reason) = stack.failure_cause() {
            f.error = f.error.context(reason);
        }
        f
    })?;
    record.stack = Some(stack.info.clone());
    if record.status != RunStatus::Failed {
        // Figures that need the stack's read-back (its redundancy) are computed now.
        record.summary = bakeoff_core::record::Summary::compute(&record);
    }
    record.cold = Some(!run.warm);
    if let Some(reason) = stack.failure_cause() {
        let error = record.error.take().unwrap_or_default();
        record.error = Some(format!("{error} ({reason})").trim_start().to_string());
        record.status = RunStatus::Failed;
        record.roles.clear();
        record.summary = Default::default();
    }
    record.findings = bakeoff_core::findings::run_findings(&record);
    stack.destroy().map_err(stack_failure)?;
    Ok(record)
}
