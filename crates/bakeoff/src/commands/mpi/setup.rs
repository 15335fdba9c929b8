//! Before any rank writes data: rank 0 checks the command line as `run` does and tells every
//! rank the plan; each rank checks that its `--target` is the same directory as rank 0's (a
//! marker with a random name rank 0 wrote there, and the same file system type) and makes its
//! own `rank-N/` inside it.

use super::wire::Wire;
use crate::cli::RunArgs;
use crate::commands::pipeline::{work_of, Work};
use crate::exit::{failure, Code, Failure};
use bakeoff_core::ramp::RampSpec;
use bakeoff_core::Plan;
use bakeoff_engine::Target;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// What rank 0 tells every rank before the run.
#[derive(Serialize, Deserialize)]
pub enum Setup {
    /// Run this (boxed: the plan is large beside a refusal).
    Go(Box<Go>),
    /// Rank 0 refused the run: exit with this status.
    Refused {
        /// Exit status.
        status: u8,
        /// Why.
        error: String,
    },
}

/// The validated run every rank does.
#[derive(Serialize, Deserialize)]
pub struct Go {
    /// The plan of one rank (its seed is made its own by each rank).
    pub plan: Plan,
    /// The marker's file name under the target, which is also its content.
    pub marker: String,
    /// The target's file system type (`statfs`'s `f_type`) on rank 0.
    pub fs_type: u64,
    /// Its name, for messages.
    pub fs_name: String,
    /// Skip the cache rule.
    pub warm: bool,
    /// Remove the ranks' data after a run that completed.
    pub remove_data: bool,
}

/// What rank 0 learned from the command line: the setup every rank gets, and what only rank 0
/// keeps (the ramp it paces, the exports it writes).
pub struct Validated {
    /// The setup to broadcast.
    pub go: Go,
    /// `--ramp`.
    pub ramp: Option<RampSpec>,
    /// The output files.
    pub exports: Vec<crate::commands::exports::Export>,
}

/// Rank 0's checks: the workload and its settings, the ramp, the outputs, and room in the
/// target for every rank's copy; then the marker is written.
pub fn validate(args: &RunArgs, ranks: usize) -> Result<Validated, Failure> {
    let (plan, ramp) = match work_of(args)? {
        Work::Io(plan) => (plan, None),
        Work::Ramp(plan, ramp) => (plan, Some(ramp)),
        _ => unreachable!("--mpi refuses databases and recipes before MPI starts"),
    };
    if plan.clients > 0 {
        return Err(failure(
            Code::Usage,
            "--mpi: every rank is one client; drop clients=N and start more ranks (mpirun -np N)",
        ));
    }
    if let Some(algorithm) = plan.verify {
        return Err(failure(
            Code::Usage,
            format!(
                "--mpi: verify={} keeps its table of the writes to each block in one process, \
                 and the ranks' records are added up without it: run verify without --mpi",
                algorithm.name()
            ),
        ));
    }
    let exports = crate::commands::exports::open(&args.export.requested)?;
    let dir = args.target.clone().unwrap_or_default();
    let dir = directory(&dir)?;
    let needed = plan.dataset_bytes().saturating_mul(ranks as u64);
    crate::commands::preflight::room_in_directory(&dir, needed)?;
    let (fs_type, fs_name) = file_system(&dir)?;
    let marker = write_marker(&dir)?;
    let go = Go {
        plan,
        marker,
        fs_type,
        fs_name,
        warm: args.run_opts.warm,
        remove_data: args.remove_data,
    };
    Ok(Validated { go, ramp, exports })
}

/// `path` checked as a writable directory (a shared target is never a device).
fn directory(path: &Path) -> Result<PathBuf, Failure> {
    match crate::target_check::check(path)? {
        (Target::Directory(dir), _) => Ok(dir),
        (Target::Device(dev), _) => Err(failure(
            Code::Usage,
            format!(
                "--mpi: {} is a device; the ranks share a mounted directory",
                dev.display()
            ),
        )),
    }
}

fn file_system(dir: &Path) -> Result<(u64, String), Failure> {
    let st = rustix::fs::statfs(dir).map_err(|e| {
        let message = format!("reading the file system of {}: {e}", dir.display());
        failure(Code::Environment, message)
    })?;
    let name = bakeoff_probe::target_info(dir).filesystem;
    Ok((st.f_type as u64, name.unwrap_or_else(|| "unknown".into())))
}

/// Writes a file with a random name under `dir` whose content is its name.
fn write_marker(dir: &Path) -> Result<String, Failure> {
    let fail = |e: std::io::Error| {
        let message = format!("writing a marker file in {}: {e}", dir.display());
        failure(Code::Environment, message)
    };
    let file = tempfile::Builder::new()
        .prefix(".bakeoff-mpi-")
        .tempfile_in(dir)
        .map_err(fail)?;
    let name = (file.path().file_name())
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    std::fs::write(file.path(), &name).map_err(fail)?;
    file.keep().map_err(|e| fail(e.error))?;
    Ok(name)
}

/// Removes rank 0's marker.
pub fn remove_marker(dir: &Path, go: &Go) {
    let _ = std::fs::remove_file(dir.join(&go.marker));
}

/// This rank's check of its `--target` against rank 0's, and its own directory made in it.
pub fn own_directory(wire: &Wire, target: &Path, go: &Go) -> Result<PathBuf, String> {
    let dir = directory(target).map_err(|f| format!("{:#}", f.error))?;
    let marker = dir.join(&go.marker);
    let seen = std::fs::read_to_string(&marker).map_err(|e| {
        format!(
            "{} is not the directory rank 0 sees: its marker {} cannot be read ({e}); \
             give every rank the same shared --target",
            dir.display(),
            marker.display()
        )
    })?;
    if seen != go.marker {
        return Err(format!(
            "{} holds a different marker than rank 0 wrote: not the same directory",
            marker.display()
        ));
    }
    let (fs_type, fs_name) = file_system(&dir).map_err(|f| format!("{:#}", f.error))?;
    if fs_type != go.fs_type {
        return Err(format!(
            "{} is on {fs_name} here, on {} for rank 0: every rank must see the same file system",
            dir.display(),
            go.fs_name
        ));
    }
    let own = rank_dir(&dir, wire.rank);
    std::fs::create_dir_all(&own).map_err(|e| format!("creating {}: {e}", own.display()))?;
    Ok(own)
}

/// Rank `rank`'s directory under the target.
pub fn rank_dir(dir: &Path, rank: usize) -> PathBuf {
    dir.join(format!("rank-{rank}"))
}

/// Every rank's result of a step, agreed: rank 0 gathers them and tells every rank the
/// failures, so all ranks go on or all stop, each naming every rank that failed.
pub fn agree(
    wire: &Wire,
    mine: Result<(), String>,
    step: &str,
    planned: std::time::Duration,
) -> Result<(), Failure> {
    let all = wire.gather(&mine.err(), step, planned)?;
    let failures: Option<Vec<String>> = all.map(|all| {
        (all.into_iter().enumerate())
            .filter_map(|(r, e)| e.map(|e| format!("{}: {e}", wire.name(r))))
            .collect()
    });
    let failures = wire.broadcast(failures.as_ref(), step, wire.after_gather(planned))?;
    if failures.is_empty() {
        return Ok(());
    }
    Err(failure(
        Code::Environment,
        format!(
            "{}: the run stopped at {step}: {}",
            wire.name(wire.rank),
            failures.join("; ")
        ),
    ))
}
