//! One rank's life: meet the others, take rank 0's plan, check the target, lay out its own
//! copy, then measure each point rank 0 asks for, starting together and handing its exact
//! counts to rank 0; rank 0 adds them into the one record. Its directory is removed on every
//! path but a completed run that keeps its data for the next one (as `run --target` keeps it).

use super::merge::{merge, RankReport};
use super::setup::{agree, own_directory, rank_dir, remove_marker, validate, Go, Setup};
use super::wire::Wire;
use crate::cli::RunArgs;
use crate::commands::measure::{interrupt_flag, prepare, status_code, Known, Prepared};
use crate::commands::pipeline::starts_cold;
use crate::exit::{bad_value, failure, stack_failure, Code, Failure};
use bakeoff_core::ramp::{paced_plan, RampSpec};
use bakeoff_core::record::RunRecord;
use bakeoff_core::units::parse_duration;
use bakeoff_core::Plan;
use bakeoff_engine::{Placement, Target};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

/// What rank 0 tells every rank to do next.
#[derive(Serialize, Deserialize)]
enum Command {
    /// Measure one window of this plan (every rank makes its seed its own).
    Measure(Box<Plan>),
    /// The run is over: exit with this status, saying this error.
    Finish { status: u8, error: Option<String> },
}

/// Runs this process as one rank; MPI is finalised only when every rank reached the end.
pub fn run(args: &RunArgs) -> Result<Code, Failure> {
    let timeout = parse_duration(&args.mpi_timeout)
        .map_err(|m| bad_value("--mpi-timeout", &args.mpi_timeout, &m))?;
    let interrupt = interrupt_flag()?;
    let threading = mpi::Threading::Funneled;
    let (universe, _) = mpi::initialize_with_threading(threading).ok_or_else(|| {
        failure(
            Code::Environment,
            "--mpi: MPI could not be started in this process",
        )
    })?;
    let mut wire = Wire::new(universe.world(), timeout, &interrupt);
    let mut leftovers = Leftovers::default();
    let result = session(args, &mut wire, &interrupt, &mut leftovers);
    let ended = Instant::now();
    if let Err(f) = &result {
        // Said before the cleanup: mpirun kills what is left of the job a second after its
        // SIGTERM.
        say(&format!("{:#}", f.error));
    }
    drop(leftovers);
    let code = result.as_ref().map_or_else(|f| f.code, |c| *c);
    if code != Code::Ok {
        // The first rank to exit with an error makes mpirun kill the rest at once: each waits
        // a moment, so that every rank has said why it stops.
        let until = match (interrupt.load(Ordering::Relaxed), STOPPED.get()) {
            (true, Some(signalled)) => *signalled + LINGER,
            _ => ended + LINGER_AFTER_ERROR,
        };
        std::thread::sleep(until.saturating_duration_since(Instant::now()));
    }
    match result {
        Ok(code) => {
            drop(universe);
            Ok(code)
        }
        Err(f) => {
            // Some rank may be gone: MPI_Finalize would wait for it forever.
            std::mem::forget(universe);
            Ok(f.code)
        }
    }
}

/// Prints `bakeoff: error: MESSAGE` in one write, so that ranks' lines do not interleave.
fn say(message: &str) {
    use std::io::Write;
    let line = format!("bakeoff: error: {message}\n");
    let _ = std::io::stderr().write_all(line.as_bytes());
}

/// The directories to remove when a rank ends: every rank's, by every rank (one that died
/// cannot remove its own, and mpirun kills the rest of the job once the first rank exits).
#[derive(Default)]
struct Leftovers {
    dirs: Vec<PathBuf>,
    keep: bool,
}

impl Drop for Leftovers {
    fn drop(&mut self) {
        if !self.keep {
            remove_all(&self.dirs);
        }
    }
}

fn remove_all(dirs: &[PathBuf]) {
    // One remover at a time in this process (the stop watcher and the normal end), so neither
    // takes the other's half-done removal for done and exits under it.
    static REMOVING: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _turn = REMOVING.lock().unwrap_or_else(|e| e.into_inner());
    for dir in dirs {
        // Another rank may be removing the same tree: passes until it is gone.
        for _ in 0..5 {
            let _ = std::fs::remove_dir_all(dir);
            if !dir.exists() {
                break;
            }
        }
    }
}

/// How long after a stop signal a rank exits: mpirun's SIGKILL follows its SIGTERM after a
/// second (`odls_base_sigkill_timeout`).
const LINGER: Duration = Duration::from_millis(700);

/// How long a rank that learned of a failure waits before it exits (see [`LINGER`]).
const LINGER_AFTER_ERROR: Duration = Duration::from_millis(300);

/// When this rank saw its stop signal.
static STOPPED: OnceLock<Instant> = OnceLock::new();

/// How long after a stop signal the directories go even if the rank is still winding down:
/// mpirun sends SIGKILL a second after its SIGTERM (`odls_base_sigkill_timeout`).
const REMOVE_AFTER_STOP: Duration = Duration::from_millis(400);

/// Removes `dirs` soon after a stop signal, whatever the rank is doing by then.
fn remove_on_stop(dirs: Vec<PathBuf>, interrupt: Arc<AtomicBool>) {
    std::thread::spawn(move || {
        while !interrupt.load(Ordering::Relaxed) {
            std::thread::sleep(Duration::from_millis(20));
        }
        STOPPED.get_or_init(Instant::now);
        std::thread::sleep(REMOVE_AFTER_STOP);
        remove_all(&dirs);
    });
}

fn session(
    args: &RunArgs,
    wire: &mut Wire,
    interrupt: &Arc<AtomicBool>,
    leftovers: &mut Leftovers,
) -> Result<Code, Failure> {
    wire.meet()?;
    let target = args.target.clone().unwrap_or_default();
    let mut kept = None;
    let setup = (wire.rank == 0).then(|| match validate(args, wire.size) {
        Ok(v) => {
            kept = Some((v.ramp, v.exports));
            Setup::Go(Box::new(v.go))
        }
        Err(f) => Setup::Refused {
            status: f.code as u8,
            error: format!("{:#}", f.error),
        },
    });
    let go = match wire.broadcast(setup.as_ref(), "the setup", Duration::ZERO)? {
        Setup::Go(go) => *go,
        Setup::Refused { status, error } if wire.rank == 0 => {
            let message = format!("{}: {error}", wire.name(0));
            return Err(failure(Code::from_status(status), message));
        }
        Setup::Refused { status, error } => {
            let message = format!("{}: rank 0 refused the run: {error}", wire.name(wire.rank));
            return Err(failure(Code::from_status(status), message));
        }
    };
    let own = own_directory(wire, &target, &go);
    let mine = own.as_ref().map(|_| ()).map_err(Clone::clone);
    // Only in a target this rank verified as the shared one: a rank given another directory
    // must not remove `rank-N` directories that are not the run's.
    let dirs: Vec<PathBuf> = match &own {
        Ok(_) => (0..wire.size).map(|r| rank_dir(&target, r)).collect(),
        Err(_) => Vec::new(),
    };
    remove_on_stop(dirs.clone(), interrupt.clone());
    leftovers.dirs = dirs;
    let agreed = agree(wire, mine, "the target check", Duration::ZERO);
    if wire.rank == 0 {
        remove_marker(&target, &go);
    }
    agreed?;
    let own = own.map_err(|e| failure(Code::Environment, e))?;
    let placement = Placement::single(Target::Directory(own));
    let quiet = args.quiet || wire.rank != 0;
    let (mut prepared, cold) = lay_out(wire, &go, &placement, interrupt, quiet)?;
    let code = match kept {
        Some((ramp, exports)) => {
            let run = lead(
                wire,
                &target,
                &go,
                ramp.as_ref(),
                &mut prepared,
                interrupt,
                quiet,
            )
            .map(|mut record| {
                record.cold = Some(cold);
                record.findings = bakeoff_core::findings::run_findings(&record);
                record
            });
            end_lead(wire, run, exports)?
        }
        None => follow(wire, &go, &mut prepared, interrupt)?,
    };
    leftovers.keep = code == Code::Ok && !go.remove_data;
    Ok(code)
}

/// Rank 0 after the run: tells every rank how it ended (also when it failed here, so that
/// the ranks still there end now and say why), then prints and writes the record.
fn end_lead(
    wire: &Wire,
    run: Result<RunRecord, Failure>,
    exports: Vec<crate::commands::exports::Export>,
) -> Result<Code, Failure> {
    let finish = match &run {
        Ok(record) => Command::Finish {
            status: status_code(record) as u8,
            error: record.error.clone(),
        },
        Err(f) => Command::Finish {
            status: f.code as u8,
            error: Some(format!("{:#}", f.error)),
        },
    };
    let told = wire.broadcast(Some(&finish), "the end", Duration::ZERO);
    let record = run?;
    told?;
    crate::commands::pipeline::report(exports, &record)?;
    Ok(status_code(&record))
}

/// Lays out this rank's copy, then, once every rank has, applies the cache rule once per host;
/// also whether the run starts cold.
fn lay_out<'p>(
    wire: &Wire,
    go: &Go,
    placement: &'p Placement,
    interrupt: &AtomicBool,
    quiet: bool,
) -> Result<(Prepared<'p>, bool), Failure> {
    let plan = go.plan.client_plan(wire.rank as u32);
    let prepared = prepare(
        &plan,
        placement,
        interrupt,
        quiet,
        &mut || Ok(()),
        Known::default(),
    );
    let mine = prepared
        .as_ref()
        .map(|_| ())
        .map_err(|f| format!("{:#}", f.error));
    agree(wire, mine, "the layout", layout_time(&plan))?;
    let prepared = prepared?;
    let cold = starts_cold(go.warm, placement.data.directory(), wire.rank == 0);
    let first_on_host = wire.hosts.iter().position(|h| *h == wire.hosts[wire.rank]);
    let dropped = if cold && first_on_host == Some(wire.rank) {
        bakeoff_stack::stack::drop_caches()
            .map_err(stack_failure)
            .map_err(|f| format!("{:#}", f.error))
    } else {
        Ok(())
    };
    agree(wire, dropped, "dropping caches", Duration::ZERO)?;
    Ok((prepared, cold))
}

/// How long a rank may take to lay out `plan`: at 20 MB/s, a slow shared file system.
fn layout_time(plan: &Plan) -> Duration {
    Duration::from_secs(plan.dataset_bytes() / 20_000_000)
}

/// Rank 0: one window, or the ramp's points, each measured on every rank; the one record.
fn lead(
    wire: &Wire,
    target: &std::path::Path,
    go: &Go,
    ramp: Option<&RampSpec>,
    prepared: &mut Prepared,
    interrupt: &AtomicBool,
    quiet: bool,
) -> Result<RunRecord, Failure> {
    let mut everywhere = |plan: &Plan| {
        let command = Command::Measure(Box::new(plan.clone()));
        wire.broadcast(Some(&command), "the next point", Duration::ZERO)?;
        let (record, reports) = measure_point(wire, plan, prepared, interrupt, quiet)?;
        Ok(merge(wire, record?, reports.unwrap_or_default()))
    };
    let mut record = match ramp {
        None => everywhere(&go.plan)?,
        Some(spec) => {
            // The point's offered rate is shared by the ranks.
            let share = |rate: f64| paced_plan(&go.plan, rate / wire.size as f64, spec);
            crate::commands::measure::ramp::ramp_points(spec, interrupt, quiet, &mut |rate| {
                everywhere(&share(rate))
            })?
        }
    };
    // The record describes the shared directory; each rank's own is in `clients`.
    record.target = bakeoff_probe::target_info(target);
    Ok(record)
}

/// Every rank but 0: measures what rank 0 asks until it says the run is over.
fn follow(
    wire: &Wire,
    go: &Go,
    prepared: &mut Prepared,
    interrupt: &AtomicBool,
) -> Result<Code, Failure> {
    // Rank 0 may still be laying out a point's larger dataset, or waiting (for as long as
    // this rank would) for a slower rank's report: this rank waits longer, so that rank 0,
    // which knows who is missing, is the one that says it.
    let mut between = wire.after_gather(layout_time(&go.plan));
    loop {
        match wire.broadcast::<Command>(None, "the next point", between)? {
            Command::Measure(plan) => {
                // Its own failure went to rank 0 in its report; the end says it to all.
                let (_own, _) = measure_point(wire, &plan, prepared, interrupt, true)?;
                let fixed = plan.with_fixed_ramp();
                between = wire.after_gather(layout_time(&plan) + fixed.ramp_time + plan.runtime);
            }
            Command::Finish { status, error } => {
                if let Some(e) = error {
                    say(&format!("{}: the run failed: {e}", wire.name(wire.rank)));
                }
                return Ok(Code::from_status(status));
            }
        }
    }
}

/// This rank's window (or why it could not run) and, on rank 0, every rank's report.
type Point = (Result<RunRecord, Failure>, Option<Vec<RankReport>>);

/// One window on this rank, started with every other: its record, and on rank 0 every rank's
/// report. A rank whose window failed reports the failure rather than leaving; only a failed
/// exchange is an error here.
fn measure_point(
    wire: &Wire,
    plan: &Plan,
    prepared: &mut Prepared,
    interrupt: &AtomicBool,
    quiet: bool,
) -> Result<Point, Failure> {
    // Ranks open their windows together, at a time fixed at the start: a fixed warm-up.
    let plan = plan.with_fixed_ramp().client_plan(wire.rank as u32);
    let fitted = prepared.fit(&plan, interrupt, quiet);
    wire.barrier("the start of a point", layout_time(&plan))?;
    let measured = fitted.and_then(|()| prepared.measure_counted(&plan, interrupt, quiet));
    let first_on_host = wire.hosts.iter().position(|h| *h == wire.hosts[wire.rank]);
    let report = match &measured {
        Ok((record, counts)) => RankReport::of(record, counts, first_on_host == Some(wire.rank)),
        Err(f) => RankReport::failed(f),
    };
    let window = plan.ramp_time + plan.runtime;
    let reports = wire.gather(&report, "the end of a point", window)?;
    Ok((measured.map(|(record, _)| record), reports))
}
