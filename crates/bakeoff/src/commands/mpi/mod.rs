//! `run --mpi`: every rank of an MPI job is one client on a shared directory; rank 0 validates
//! the plan, paces the points and writes the one record (docs/mpi.md). Built only with the
//! cargo feature `mpi`; without it `--mpi` says how to get it.

#[cfg(feature = "mpi")]
mod merge;
#[cfg(feature = "mpi")]
mod rank;
#[cfg(feature = "mpi")]
mod setup;
#[cfg(feature = "mpi")]
mod wire;

use crate::cli::RunArgs;
use crate::exit::{failure, Code, Failure};
use bakeoff_core::dbplan::is_db_workload;

/// Runs this process as one rank of the MPI job `mpirun` or `srun` started.
pub fn run(args: &RunArgs) -> Result<Code, Failure> {
    usage(args)?;
    #[cfg(feature = "mpi")]
    {
        rank::run(args)
    }
    #[cfg(not(feature = "mpi"))]
    {
        Err(failure(
            Code::Usage,
            "--mpi: this bakeoff was built without MPI; install OpenMPI and libclang \
             (Debian: apt-get install openmpi-bin libopenmpi-dev libclang-dev clang) and build \
             with `cargo build --release --features mpi` (docs/mpi.md)",
        ))
    }
}

/// What `--mpi` does not combine with, refused before MPI starts.
fn usage(args: &RunArgs) -> Result<(), Failure> {
    let refuse = |why: &str| Err(failure(Code::Usage, format!("--mpi: {why}")));
    if args.stack.is_some() {
        return refuse(
            "every rank runs on a shared directory that is already mounted on its host; \
             bakeoff does not build a stack per host: give --target DIR instead of --stack",
        );
    }
    if args.run_opts.mem_limit.is_some() || !args.run_opts.stack.devices.is_empty() {
        return refuse(
            "--mem-limit and --device apply to runs on a stack, which --mpi does not build",
        );
    }
    if args.target.is_none() {
        return refuse("give --target DIR, a directory every rank's host has mounted");
    }
    if args.recipe.is_some() || args.workload.as_deref().is_some_and(is_db_workload) {
        return refuse("ranks run I/O and file workloads; recipes and databases run on one host");
    }
    if args.run_opts.dry_run {
        return refuse("check the plan with `bakeoff run ... --dry-run` without --mpi on one host");
    }
    Ok(())
}
