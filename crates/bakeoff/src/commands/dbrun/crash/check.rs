//! What `--crash-states` needs, checked before anything is built: the work says what a crash
//! may not lose, the stacks are loop devices bakeoff brings back from images and checks, and
//! there is room for the log.

use crate::cli::StackOpts;
use crate::commands::pipeline::{Place, Work};
use crate::exit::{failure, Code, Failure};
use bakeoff_core::dbplan::DbWork;
use bakeoff_stack::StackSpec;
use std::path::Path;

/// What `--crash-states` needs, checked before anything is built (exit 2 otherwise, 3 when
/// the machine lacks /dev/fuse).
pub fn check(work: &Work, place: &Place, opts: &StackOpts, states: u32) -> Result<(), Failure> {
    let usage = |m: String| Err(failure(Code::Usage, format!("--crash-states: {m}")));
    if states == 0 {
        return usage("give at least 1 state".into());
    }
    check_work(work).or_else(usage)?;
    let (data, log) = match place {
        Place::Target(path) => {
            return usage(format!(
                "bakeoff records the writes under the loop devices of a stack it builds: give \
                 --stack ext4|xfs|btrfs instead of --target {}",
                path.display()
            ))
        }
        Place::Stacks { data, log } => (data, log.as_ref()),
    };
    check_stack(data, opts).or_else(usage)?;
    if let Some(log) = log {
        check_log_stack(work, log).or_else(usage)?;
    }
    check_room(work, opts)?;
    if !Path::new("/dev/fuse").exists() {
        return Err(failure(
            Code::Environment,
            "--crash-states: /dev/fuse is missing (modprobe fuse): the write log is a FUSE \
             file system under the stack's loop devices",
        ));
    }
    Ok(())
}

/// The work must say what a crash may not lose: a TPC-C run's acknowledged New-Orders, or a
/// verified I/O run's blocks acknowledged by a sync.
fn check_work(work: &Work) -> Result<(), String> {
    let plan = match work {
        Work::Db(plan) if matches!(plan.work, DbWork::Tpcc { .. }) => return Ok(()),
        Work::Io(plan) => plan,
        _ => {
            return Err(
                "checks TPC-C runs (`run tpcc`: their New-Order keys are the acknowledged \
                 commits looked for in each state) and I/O workloads with `verify=` (their \
                 blocks acknowledged by a sync)"
                    .into(),
            )
        }
    };
    if plan.verify.is_none() {
        return Err(format!(
            "an I/O workload's states are checked by reading its blocks back: add --set \
             verify=crc32c to {}",
            plan.workload
        ));
    }
    if plan.clients > 0 {
        return Err(
            "clients= runs its I/O in other processes, whose writes bakeoff does not \
                    journal: drop clients="
                .into(),
        );
    }
    if plan.filesets.iter().all(|f| f.verify.is_none()) {
        return Err(format!(
            "{} has no verified fileset (a log writer's redo is not written in blocks)",
            plan.workload
        ));
    }
    Ok(())
}

/// Write rate the room check assumes for the log: above what a loop device over the write log
/// carried here (28 MB/s of PostgreSQL TPC-C writes, 31 MB/s of SQLite's).
const LOG_BYTES_PER_SEC: u64 = 48 << 20;

/// Room under `--images` for the stack's data, the base copy of it and the log of the run's
/// writes (estimated at [`LOG_BYTES_PER_SEC`]), beside the stack's own check.
fn check_room(work: &Work, opts: &StackOpts) -> Result<(), Failure> {
    let data = work.dataset_bytes();
    let log = work.timed().as_secs().max(1) * LOG_BYTES_PER_SEC;
    let need = 3 * data + log;
    let (at, free) = crate::commands::preflight::free_bytes(&opts.images)?;
    if free >= need {
        return Ok(());
    }
    let mib = |b: u64| b >> 20;
    Err(failure(
        Code::Environment,
        format!(
            "--crash-states: {} has {} MiB free; the stack's data, the copy the states start \
             from and the log of the run's writes need about {} MiB ({} MiB of data, {} MiB of \
             log at {} MiB/s): free space there, give --images another directory, or a \
             shorter runtime",
            at.display(),
            mib(free),
            mib(need),
            mib(data),
            mib(log),
            mib(LOG_BYTES_PER_SEC)
        ),
    ))
}

/// A log stack's writes are recorded in the same log as the data stack's (one power cut hits
/// both); its state is brought back as the data stack's is, beside it.
fn check_log_stack(work: &Work, log: &StackSpec) -> Result<(), String> {
    if !matches!(work, Work::Db(_)) {
        return Err(format!(
            "an I/O workload's log stack is not recorded: drop --log-stack {}",
            log.text
        ));
    }
    checkable(log, &format!("--log-stack {}", log.text), "log stacks")
}

/// The data stack must be loop devices with a file system bakeoff can bring back from images
/// and check with its own tool.
fn check_stack(data: &StackSpec, opts: &StackOpts) -> Result<(), String> {
    checkable(data, &data.text, "stacks")?;
    if !opts.devices.is_empty() {
        return Err("the writes are recorded under loop devices: drop --device".into());
    }
    Ok(())
}

/// A stack (`named` so in an error, one of `these`) whose states bakeoff can bring back: a
/// type with a `crash_state`, its images whole (no `offset=`).
fn checkable(spec: &StackSpec, named: &str, these: &str) -> Result<(), String> {
    if spec.kind.driver().crash_state.is_none() {
        return Err(format!(
            "{named}: the states of ext4, xfs, btrfs and zfs {these} can be checked (a file \
             system bakeoff brings back from loop images and checks with its own tool)"
        ));
    }
    if spec.offset > 0 {
        return Err(format!("{named}: offset= is not supported"));
    }
    Ok(())
}
