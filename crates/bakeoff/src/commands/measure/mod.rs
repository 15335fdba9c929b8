//! The shared core of `run` and `demo`: lay out, run with probes sampling, assemble the record.

pub mod ramp;

use crate::exit::{failure, Code, Failure};
use crate::progress::{bar, ByteLines, RunProgress};
use crate::sampler::{Measured, Sampler};
use bakeoff_core::plan::{FilesetPlan, Plan};
use bakeoff_core::ramp::RampSpec;
use bakeoff_core::record::{
    DatasetInfo, Environment, RunRecord, RunStatus, Summary, SCHEMA_VERSION,
};
use bakeoff_engine::{
    execute, lay_out_placed, Dataset, LayoutError, Placement, RunOutput, Target, Tick,
};
use bakeoff_probe::{environment, resolve_devices, target_info, Probe};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

/// The last stop signal received (0: none), so that the exit can name it.
static STOPPED_BY: std::sync::OnceLock<Arc<AtomicUsize>> = std::sync::OnceLock::new();

/// Ctrl-C and SIGTERM set this flag instead of killing the process, so runs stop cleanly. The
/// handlers are registered once per process: every caller (each stack `--wait` builds, each
/// cell of a long compare) gets the same flag rather than adding handlers.
pub fn interrupt_flag() -> Result<Arc<AtomicBool>, Failure> {
    static FLAG: std::sync::OnceLock<Result<Arc<AtomicBool>, String>> = std::sync::OnceLock::new();
    let registered = FLAG.get_or_init(|| {
        let flag = Arc::new(AtomicBool::new(false));
        let which = STOPPED_BY.get_or_init(|| Arc::new(AtomicUsize::new(0)));
        for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
            signal_hook::flag::register(sig, flag.clone())
                .and_then(|_| signal_hook::flag::register_usize(sig, which.clone(), sig as usize))
                .map_err(|e| format!("installing the signal handler: {e}"))?;
        }
        Ok(flag)
    });
    registered
        .clone()
        .map_err(|m| failure(Code::Environment, m))
}

/// The stop signal this process received (`SIGINT` for Ctrl-C, `SIGTERM`), if any: an
/// interrupted run's last line names it, so that a log says why the run stopped.
pub fn stopped_by() -> Option<&'static str> {
    let sig = STOPPED_BY.get()?.load(Ordering::Relaxed);
    match i32::try_from(sig).ok()? {
        signal_hook::consts::SIGINT => Some("SIGINT (Ctrl-C)"),
        signal_hook::consts::SIGTERM => Some("SIGTERM"),
        _ => None,
    }
}

fn layout_failure(e: LayoutError) -> Failure {
    let code = match e {
        LayoutError::Interrupted => Code::Interrupted,
        LayoutError::NoSpace { .. } | LayoutError::DeviceTooSmall { .. } => Code::Environment,
        LayoutError::NeedsDirectory { .. } | LayoutError::Unsupported(_) => Code::Usage,
        LayoutError::Io { .. } => Code::Io,
    };
    failure(code, e)
}

/// Lays out the dataset on `target`, calls `before_run` (cache rule: drop caches, re-import a
/// pool), runs `plan` (or the ramp of points of `plan`), and returns the run record.
pub fn measure(
    plan: &Plan,
    ramp: Option<&RampSpec>,
    target: &Target,
    interrupt: &AtomicBool,
    quiet: bool,
    before_run: &mut dyn FnMut() -> Result<(), Failure>,
) -> Result<RunRecord, Failure> {
    let placement = Placement::single(target.clone());
    let prepared = prepare(
        plan,
        &placement,
        interrupt,
        quiet,
        before_run,
        Known::default(),
    )?;
    prepared.measure_or_ramp(plan, ramp, interrupt, quiet)
}

/// What a stack knows about itself that the probes cannot find from the target.
#[derive(Default)]
pub struct Known {
    /// The devices to sample (a stack knows its members); `None`: resolved from the target.
    pub devices: Option<Vec<bakeoff_probe::DeviceInfo>>,
    /// The stack's daemons: their CPU is the stack's.
    pub daemons: Vec<u32>,
}

/// A dataset laid out and the cache rule applied: ready for one measured window, or several
/// (a ramp's points) back to back.
pub struct Prepared<'a> {
    dataset: Dataset,
    /// The filesets `dataset` holds.
    filesets: Vec<FilesetPlan>,
    placement: &'a Placement,
    path: &'a std::path::Path,
    devices: Vec<bakeoff_probe::DeviceInfo>,
    daemons: Vec<u32>,
}

/// [`measure`] with the filesets placed on their targets and what the stack knows.
pub fn measure_with_devices(
    plan: &Plan,
    ramp: Option<&RampSpec>,
    placement: &Placement,
    interrupt: &AtomicBool,
    quiet: bool,
    before_run: &mut dyn FnMut() -> Result<(), Failure>,
    known: Known,
) -> Result<RunRecord, Failure> {
    let prepared = prepare(plan, placement, interrupt, quiet, before_run, known)?;
    prepared.measure_or_ramp(plan, ramp, interrupt, quiet)
}

/// Lays out `plan`'s dataset on its targets and calls `before_run` (the cache rule).
pub fn prepare<'a>(
    plan: &Plan,
    placement: &'a Placement,
    interrupt: &AtomicBool,
    quiet: bool,
    before_run: &mut dyn FnMut() -> Result<(), Failure>,
    known: Known,
) -> Result<Prepared<'a>, Failure> {
    let Known { devices, daemons } = known;
    let path = placement.data.path();
    let devices = devices.unwrap_or_else(|| {
        resolve_devices(path).unwrap_or_else(|e| {
            eprintln!(
                "bakeoff: warning: no device figures for {}: {e}",
                path.display()
            );
            Vec::new()
        })
    });
    let dataset = lay_out(plan, placement, interrupt, quiet)?;
    before_run()?;
    Ok(Prepared {
        dataset,
        filesets: plan.filesets.clone(),
        placement,
        path,
        devices,
        daemons,
    })
}

/// Lays out (or reuses) `plan`'s filesets on their targets, with a progress bar.
fn lay_out(
    plan: &Plan,
    placement: &Placement,
    interrupt: &AtomicBool,
    quiet: bool,
) -> Result<Dataset, Failure> {
    let layout_bar = bar(
        plan.dataset_bytes(),
        "laying out {bytes}/{total_bytes} {wide_bar} {eta}",
        quiet,
    );
    let lines = ByteLines::new("laying out", plan.dataset_bytes(), quiet);
    let dataset = lay_out_placed(plan, placement, &|done, _| {
        if done > 0 {
            bakeoff_stack::faults::fault_point("layout");
        }
        layout_bar.set_position(done);
        lines.update(done);
        !interrupt.load(Ordering::Relaxed)
    })
    .map_err(layout_failure)?;
    layout_bar.finish_and_clear();
    Ok(dataset)
}

impl Prepared<'_> {
    /// Makes the laid-out dataset `plan`'s, if its filesets differ (a dataset sized by the
    /// offered load grows with a ramp's points); caches are left as they are.
    pub fn fit(&mut self, plan: &Plan, interrupt: &AtomicBool, quiet: bool) -> Result<(), Failure> {
        if plan.filesets != self.filesets {
            self.dataset = lay_out(plan, self.placement, interrupt, quiet)?;
            self.filesets = plan.filesets.clone();
        }
        Ok(())
    }

    /// One measured window of `plan` (whose filesets must be the laid-out ones).
    pub fn measure(
        &self,
        plan: &Plan,
        interrupt: &AtomicBool,
        quiet: bool,
    ) -> Result<RunRecord, Failure> {
        let record = self
            .window(plan, quiet)
            .run(&mut |on_tick| execute(plan, &self.dataset, interrupt, on_tick))?;
        Ok(self.with_dataset(record, plan))
    }

    /// [`Prepared::measure`], with the exact counts the record's figures summarise (what an
    /// MPI rank hands to rank 0 to add); a window that cannot start is a failed record here,
    /// which the rank reports like any other.
    #[cfg(feature = "mpi")]
    pub fn measure_counted(
        &self,
        plan: &Plan,
        interrupt: &AtomicBool,
        quiet: bool,
    ) -> Result<(RunRecord, Vec<bakeoff_engine::results::RoleCounts>), Failure> {
        let mut counts = Vec::new();
        let record = self.window(plan, quiet).run(&mut |on_tick| {
            let output = execute(plan, &self.dataset, interrupt, on_tick);
            let output = output.unwrap_or_else(|e| RunOutput {
                roles: Vec::new(),
                ops: Vec::new(),
                measured: std::time::Duration::ZERO,
                interrupted: false,
                error: Some(e),
                counts: Vec::new(),
                clients: Vec::new(),
                steady: None,
                replay: None,
                verify: None,
            });
            counts.clone_from(&output.counts);
            Ok(output)
        })?;
        Ok((self.with_dataset(record, plan), counts))
    }

    fn window<'w>(&'w self, plan: &'w Plan, quiet: bool) -> Window<'w> {
        Window {
            plan,
            path: self.path,
            devices: self.devices.clone(),
            daemons: self.daemons.clone(),
            quiet,
        }
    }

    fn with_dataset(&self, mut record: RunRecord, plan: &Plan) -> RunRecord {
        record.dataset = Some(DatasetInfo {
            planned_bytes: plan.dataset_bytes(),
            written_bytes: self.dataset.written_bytes,
            reused: self.dataset.reused,
            layout_ms: self.dataset.elapsed.as_millis() as u64,
        });
        record
    }

    fn measure_or_ramp(
        mut self,
        plan: &Plan,
        ramp: Option<&RampSpec>,
        interrupt: &AtomicBool,
        quiet: bool,
    ) -> Result<RunRecord, Failure> {
        match ramp {
            None => self.measure(plan, interrupt, quiet),
            Some(spec) => ramp::measure_ramp(spec, plan, &mut self, interrupt, quiet),
        }
    }
}

/// The measured run of any workload: what to describe and sample.
pub struct Window<'a> {
    /// The plan the record shows (a database run's has no filesets or roles).
    pub plan: &'a Plan,
    /// The target path the record describes.
    pub path: &'a std::path::Path,
    /// Devices to sample.
    pub devices: Vec<bakeoff_probe::DeviceInfo>,
    /// The stack's daemons (their CPU is the stack's).
    pub daemons: Vec<u32>,
    /// No progress output.
    pub quiet: bool,
}

/// What runs in the window: given the sampler's tick function, the harness's output.
pub type Body<'b> =
    dyn FnMut(&mut dyn FnMut(&Tick)) -> Result<RunOutput, bakeoff_engine::RunError> + 'b;

impl Window<'_> {
    /// Runs `body` with the probes sampling at its ticks, and assembles the run record.
    pub fn run(self, body: &mut Body) -> Result<RunRecord, Failure> {
        let plan = self.plan;
        let started_unix_s = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let warmup = bakeoff_core::steady::expected_warmup(plan.ramp_time, plan.ramp_auto);
        let planned = warmup + plan.runtime;
        let mut progress = RunProgress::new(&plan.workload, planned, self.quiet);
        let probe = (Probe::new(self.devices).with_page_cache(self.path)).with_kernel_work();
        let mut sampler = Sampler::new(probe, self.daemons);
        let output = body(&mut |tick| {
            sampler.on_tick(tick);
            let devices = match progress.line_due(tick) {
                true => sampler.devices_since_mark(),
                false => Vec::new(),
            };
            progress.on_tick(tick, sampler.last(), &devices);
        })
        .map_err(|e| failure(Code::Io, e))?;
        progress.finish();
        Ok(record(
            plan,
            self.path,
            output,
            sampler.finish(),
            started_unix_s,
        ))
    }
}

/// The run record of one measured window.
fn record(
    plan: &Plan,
    path: &std::path::Path,
    output: RunOutput,
    measured: Measured,
    started_unix_s: u64,
) -> RunRecord {
    let status = match (&output.error, output.interrupted) {
        (Some(_), _) => RunStatus::Failed,
        (None, true) => RunStatus::Interrupted,
        (None, false) => RunStatus::Completed,
    };
    // A failed run's figures are not results: keep the error, drop the numbers.
    let (roles, ops, clients) = if status == RunStatus::Failed {
        (Vec::new(), Vec::new(), Vec::new())
    } else {
        (output.roles, output.ops, output.clients)
    };
    let mut tool = measured.tool;
    if !clients.is_empty() {
        // The clients are bakeoff too: their window CPU, as each measured it, is the tool's.
        tool.user_us += clients.iter().map(|c| c.cpu_user_us).sum::<u64>();
        tool.system_us += clients.iter().map(|c| c.cpu_system_us).sum::<u64>();
        let busy = measured.cpu.as_ref().map_or(0.0, |c| c.busy_us);
        let used = (tool.user_us + tool.system_us) as f64;
        tool.share_of_busy_pct = (busy > 0.0).then(|| (100.0 * used / busy).min(100.0));
    }
    let mut record = RunRecord {
        schema_version: SCHEMA_VERSION,
        status,
        error: output.error.map(|e| e.to_string()),
        started_unix_s,
        measured_ns: output.measured.as_nanos() as u64,
        plan: plan.clone(),
        target: target_info(path),
        stack: None,
        log_stack: None,
        cold: None,
        environment: Environment {
            // The clock the engine times operations with, not the kernel's.
            timer_overhead_ns: bakeoff_engine::clock::read_cost_ns(),
            ..environment(
                env!("CARGO_PKG_VERSION"),
                Some(env!("BAKEOFF_GIT_HASH")).filter(|h| !h.is_empty()),
            )
        },
        summary: Summary::default(),
        roles,
        ops,
        cpu: measured.cpu,
        tool,
        devices: measured.devices,
        memory: measured.memory,
        samples: measured.samples,
        findings: Vec::new(),
        database: None,
        phases: Vec::new(),
        space: None,
        dataset: None,
        clients,
        ramp: None,
        mpi: None,
        capture: None,
        replay: output.replay,
        steady: output.steady,
        verify: output.verify,
        durability: None,
        disturbed: None,
        timing: None,
    };
    record.drop_short_window();
    if status != RunStatus::Failed {
        record.summary = Summary::compute(&record);
    }
    record
}

/// The exit code a record's status maps to.
pub fn status_code(record: &RunRecord) -> Code {
    match record.status {
        RunStatus::Completed => Code::Ok,
        RunStatus::Interrupted => Code::Interrupted,
        RunStatus::Failed => Code::Io,
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_interrupt_flag_is_registered_once_per_process() {
        let first = super::interrupt_flag().unwrap();
        let again = super::interrupt_flag().unwrap();
        assert!(std::sync::Arc::ptr_eq(&first, &again));
    }
}
