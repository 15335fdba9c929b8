//! What a run checks before it touches anything, once for every command: what the work refuses
//! where it would run (and the database server's or the recipe's own checks), then what the
//! machine must allow there (the stacks' tools, sizes and room, or the target). A dry run does
//! exactly this, so it says ok exactly when the real run would start.

use super::Work;
use crate::cli::StackOpts;
use crate::commands::on_stack::loop_only;
use crate::commands::{dbrun, phases, preflight};
use crate::exit::{failure, Code, Failure};
use bakeoff_core::Plan;
use bakeoff_engine::placement::log_filesets;
use bakeoff_engine::Target;
use bakeoff_stack::gate::Claim;
use bakeoff_stack::StackSpec;
use std::path::{Path, PathBuf};

/// Where a run runs, as the user named it, its stack specs parsed once.
// One per run: the size of a variant does not matter.
#[allow(clippy::large_enum_variant)]
pub enum Place {
    /// Stacks bakeoff builds: the data stack and, if any, the log stack.
    Stacks {
        /// The data stack.
        data: StackSpec,
        /// The log stack (redo, WAL).
        log: Option<StackSpec>,
    },
    /// `--target PATH`: a directory or device the user gave.
    Target(PathBuf),
}

impl Place {
    /// The place `--stack`, `--log-stack` and `--target` name.
    pub fn of(
        stack: Option<&str>,
        log: Option<&str>,
        target: Option<&Path>,
    ) -> Result<Self, Failure> {
        match (stack, target) {
            (Some(spec), _) => Ok(Place::Stacks {
                data: preflight::spec(spec)?,
                log: log.map(preflight::spec).transpose()?,
            }),
            (None, Some(path)) => Ok(Place::Target(path.to_path_buf())),
            (None, None) => Err(failure(Code::Usage, "give --target PATH or --stack SPEC")),
        }
    }

    /// It names a log stack.
    pub fn has_log(&self) -> bool {
        matches!(self, Place::Stacks { log: Some(_), .. })
    }
}

/// Where the run will run, checked: the stacks to build, or the target, held for the run.
#[allow(clippy::large_enum_variant)]
pub enum Ready {
    /// Stacks to build (a `--target DIR` of a database or recipe is the stack `dir=DIR`).
    Stacks {
        /// The data stack.
        data: StackSpec,
        /// The log stack.
        log: Option<StackSpec>,
    },
    /// A directory or device; a device's claim keeps it ours (nobody can mount it) until the
    /// run ends.
    Target(Target, Option<Claim>),
}

impl Work {
    /// What this work refuses at `place` with these flags, and its own checks before anything
    /// is built: a database server's settings against the server's own list (and its memory
    /// within `mem_limit`), a recipe's actions.
    pub fn check_work(
        &self,
        place: &Place,
        opts: &StackOpts,
        mem_limit: Option<u64>,
    ) -> Result<(), Failure> {
        let usage = |m: &str| Err(failure(Code::Usage, m.to_string()));
        match (self, place) {
            (Work::Io(_) | Work::Ramp(..), Place::Target(_)) => {
                if mem_limit.is_some() {
                    return usage("--mem-limit applies to runs on a stack: add --stack SPEC");
                }
                if !opts.devices.is_empty() || !opts.destroy_data_on.is_empty() {
                    return usage(
                        "--device and --destroy-data-on apply to runs on a stack: add --stack SPEC",
                    );
                }
                Ok(())
            }
            (Work::Io(p) | Work::Ramp(p, _), Place::Stacks { data, log }) => {
                preflight::file_system_for(p, data, log.is_some())?;
                check_balloon(p, mem_limit)?;
                if log.is_some() && log_filesets(p).is_empty() {
                    return usage(
                        "a log stack holds a database's WAL or a log writer's redo; this \
                         workload writes no log",
                    );
                }
                Ok(())
            }
            (Work::Db(p), _) => {
                dbrun::check_log_stack(p, place.has_log())?;
                if let Place::Stacks { data, .. } = place {
                    dbrun::check_stack(p, data)?;
                }
                dbrun::check_settings(p, mem_limit)
            }
            (Work::Recipe(p), _) => {
                if place.has_log() {
                    return usage(
                        "a recipe's commands choose their own paths on one stack: it takes no log stack",
                    );
                }
                if let Place::Stacks { data, .. } = place {
                    if !data.kind.holds_files() {
                        return usage(
                            "commands need a file system to run in: a raw stack holds no files",
                        );
                    }
                }
                phases::check(p)
            }
        }
    }

    /// Bytes the data stack `data` (and the log stack `log`) are checked and, `--size auto`,
    /// sized for, and the warnings a fixed size raises (a database's: it may hold less than
    /// the run needs).
    pub fn stack_bytes(
        &self,
        data: &StackSpec,
        log: Option<&StackSpec>,
        opts: &StackOpts,
    ) -> (u64, u64, Vec<String>) {
        match self {
            Work::Db(p) => {
                let (bytes, warnings) = dbrun::stack_bytes(p, data, log, opts);
                (bytes.data, bytes.log, warnings)
            }
            Work::Io(p) | Work::Ramp(p, _) if log.is_some() => {
                let logs = log_filesets(p);
                let log_bytes: u64 = (logs.iter())
                    .map(|&i| p.filesets[i].file_size * u64::from(p.filesets[i].nrfiles))
                    .sum();
                (p.dataset_bytes() - log_bytes, log_bytes, Vec::new())
            }
            _ => (self.dataset_bytes(), 0, Vec::new()),
        }
    }

    /// What the machine must allow for this work at `place`: the stacks built (their tools,
    /// root, sizes, room for the data) or the target (a directory with room, a device through
    /// the safety gate). A database's or recipe's `--target DIR` runs as the stack `dir=DIR`.
    pub fn check_place(&self, place: Place, opts: &StackOpts) -> Result<Ready, Failure> {
        let (data, log) = match place {
            Place::Stacks { data, log } => (data, log),
            Place::Target(path) => match self {
                Work::Io(p) | Work::Ramp(p, _) => {
                    let (target, claim) = preflight::target(&path, p)?;
                    return Ok(Ready::Target(target, claim));
                }
                _ => (self.target_dir(&path)?, None),
            },
        };
        let (data_bytes, log_bytes, warnings) = self.stack_bytes(&data, log.as_ref(), opts);
        if let Some(log) = &log {
            preflight::stack(log, &loop_only(opts), log_bytes)?;
        }
        preflight::stack(&data, opts, data_bytes)?;
        for w in warnings {
            eprintln!("bakeoff: warning: {w}");
        }
        Ok(Ready::Stacks { data, log })
    }

    /// A database's or recipe's `--target DIR`: an existing directory, run as `dir=DIR`.
    fn target_dir(&self, dir: &Path) -> Result<StackSpec, Failure> {
        if !dir.is_dir() {
            let what = match self {
                Work::Db(_) => "a database run",
                _ => "commands",
            };
            let m = format!(
                "--target {}: {what} needs an existing directory",
                dir.display()
            );
            return Err(failure(Code::Environment, m));
        }
        preflight::spec(&format!("dir={}", dir.display()))
    }
}

/// Room the run's own threads and the page cache need beside a replay's balloon.
const BESIDE_BALLOON: u64 = 128 << 20;

/// A replay's balloon is held inside the run's memory cgroup: one that leaves no room under
/// `--mem-limit` would have the run's own memory reclaimed or the run killed.
fn check_balloon(plan: &Plan, mem_limit: Option<u64>) -> Result<(), Failure> {
    let (Some(replay), Some(limit)) = (&plan.replay, mem_limit) else {
        return Ok(());
    };
    if replay.balloon_bytes.saturating_add(BESIDE_BALLOON) <= limit {
        return Ok(());
    }
    let mib = |b: u64| b >> 20;
    Err(failure(
        Code::Usage,
        format!(
            "balloon={} MiB leaves less than {} MiB of --mem-limit {} MiB for the replay and \
             the page cache (the balloon is held inside the run's memory limit): give balloon \
             at most {} MiB, or a larger --mem-limit",
            mib(replay.balloon_bytes),
            mib(BESIDE_BALLOON),
            mib(limit),
            mib(limit.saturating_sub(BESIDE_BALLOON)),
        ),
    ))
}
