//! `run --crash-states N` (docs/durability.md): the data stack's loop devices sit on images a
//! write-logging FUSE mount serves (`bakeoff_stack::writelog`), so every write and flush that
//! reaches them is recorded with its data. After the load the database is stopped, the stack
//! synced and the images copied (the base); the run then goes on as usual, its TPC-C client
//! journalling every New-Order it saw acknowledged. Once the stack is torn down, N states a
//! power cut could have left are drawn from the log and each checked (`bakeoff_db::durability`).
//!
//! Everything lives in one directory under `--images`, removed at the end; its ledger
//! (`write-log-PID`, which sorts after the stacks' ledgers, so `bakeoff cleanup` detaches a
//! stack's loop devices before it unmounts the FUSE mount under them) holds the mount, the
//! directory and each state's loop device and mount while it is checked.

use crate::exit::{stack_failure, Failure};
use bakeoff_core::dbplan::{Db, DbPlan};
use bakeoff_core::record::durability::{Acknowledged, DurabilityRecord};
use bakeoff_core::verify::journal::Journal;
use bakeoff_db::durability::{check_states, Checker, LogState, Sources, StateCheck, StateDb};
use bakeoff_db::tpcc::Ack;
use bakeoff_stack::backing::Logged;
use bakeoff_stack::crash::{CrashOptions, CrashState};
use bakeoff_stack::exec::Exec;
use bakeoff_stack::ledger::{state_dir, Ledger};
use bakeoff_stack::undo::Undo;
use bakeoff_stack::writelog::{Recorder, RecorderOptions};
use bakeoff_stack::{Stack, StackError, StackSpec};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

mod check;
mod record;
pub use check::check;
use record::{durability_record, state_line};

/// The sector a torn write is cut at: the loop devices' logical block size.
const SECTOR_BYTES: u32 = 4096;

/// A run's write log, its directory and what the states are checked against.
pub struct CrashRun {
    recorder: Option<Recorder>,
    ledger: Option<Ledger>,
    exec: Exec,
    dir: PathBuf,
    states: u32,
    seed: u64,
    quiet: bool,
    /// The New-Orders the run's client saw acknowledged.
    pub acknowledged: Vec<Ack>,
    /// Records in the run's log when the run ended, before the stack's teardown.
    end: Option<u64>,
    /// With a log stack: the number of its first image (the data stack's come first).
    log_first: Option<usize>,
}

/// Under `--crash-states` (`states`), starts the write log the data stack of `spec` (and the
/// log stack of `log`, its images after the data stack's) is to be built on and points their
/// options at it; `None` otherwise.
pub fn serve_images(
    spec: &StackSpec,
    options: &mut bakeoff_stack::Options,
    log: Option<(&StackSpec, &mut bakeoff_stack::Options)>,
    seed: u64,
    (states, quiet): (Option<u32>, bool),
) -> Result<Option<CrashRun>, Failure> {
    let Some(states) = states else {
        return Ok(None);
    };
    crate::commands::cleanup::replay_stale(false)?;
    let sizes_of = |spec: &StackSpec, options: &bakeoff_stack::Options| {
        let size = spec.size.unwrap_or(options.backing.size);
        vec![size; spec.roles().len()]
    };
    let mut sizes = sizes_of(spec, options);
    let data_images = sizes.len();
    if let Some((log_spec, log_options)) = &log {
        sizes.extend(sizes_of(log_spec, log_options));
    }
    let mut crash = CrashRun::start(&options.images, &sizes, seed, states, quiet)?;
    let served = |first| Logged {
        mount: crash.mount(),
        first,
    };
    options.backing.logged = Some(served(0));
    if let Some((_, log_options)) = log {
        log_options.backing.logged = Some(served(data_images));
        crash.log_first = Some(data_images);
    }
    Ok(Some(crash))
}

impl CrashRun {
    /// Makes an image of each of `sizes` bytes in a new directory under `images` and serves
    /// them, recording, at the mount a stack's loop devices go over ([`CrashRun::mount`]).
    pub fn start(
        images: &Path,
        sizes: &[u64],
        seed: u64,
        states: u32,
        quiet: bool,
    ) -> Result<CrashRun, Failure> {
        let pid = std::process::id();
        let mut ledger =
            Ledger::create(&state_dir(), &format!("write-log-{pid}")).map_err(stack_failure)?;
        let dir = images.join(format!("write-log-{pid}"));
        let made = make_images(&dir, sizes, &mut ledger);
        let names: Vec<String> = (0..sizes.len()).map(|i| format!("disk{i}.img")).collect();
        let opts = RecorderOptions {
            backing_dir: dir.join("backing"),
            images: names,
            mountpoint: dir.join("fuse"),
            log: dir.join("load.log"),
        };
        let recorder = made.and_then(|()| Recorder::start(&opts, &mut ledger));
        let mut run = CrashRun {
            recorder: None,
            ledger: Some(ledger),
            exec: Exec::default(),
            dir,
            states,
            seed,
            quiet,
            acknowledged: Vec::new(),
            end: None,
            log_first: None,
        };
        run.recorder = Some(recorder.map_err(stack_failure)?);
        Ok(run)
    }

    /// Where the images are served: the stack's `BackingOptions::logged`.
    pub fn mount(&self) -> PathBuf {
        self.dir.join("fuse")
    }

    /// Starts the log the states are drawn from, with the database stopped: the stacks synced
    /// and their devices flushed, then the images copied as the states' base.
    pub fn checkpoint(&self, stacks: &[&Stack]) -> Result<(), StackError> {
        let recorder = self.recorder.as_ref().expect("recording until finish");
        let mut exec = Exec::default();
        for stack in stacks {
            let target = stack.target.to_string_lossy().into_owned();
            exec.run("sync", &["-f", &target])?;
            for backing in &stack.info.backing {
                exec.run("blockdev", &["--flushbufs", &backing.device])?;
            }
        }
        // A stack that sends no flushes (ext4's `nobarrier`) still starts from a flushed base.
        for image in
            std::fs::read_dir(self.mount()).map_err(StackError::io("listing", &self.mount()))?
        {
            let path = image
                .map_err(StackError::io("listing", &self.mount()))?
                .path();
            let file = std::fs::File::open(&path).map_err(StackError::io("opening", &path))?;
            file.sync_all().map_err(StackError::io("flushing", &path))?;
        }
        recorder.checkpoint(&self.dir.join("base"), &self.dir.join("run.log"))?;
        // The load's log is not needed: the states start from the base.
        let load = self.dir.join("load.log");
        std::fs::remove_file(&load).map_err(StackError::io("removing", &load))
    }

    /// Marks the end of the window the states are drawn from: the run is over (its server
    /// stopped, the stack written back) and the stack's teardown is next; a power cut is no
    /// unmount or `zpool destroy`.
    pub fn end_window(&mut self) {
        self.end = self.recorder.as_ref().map(Recorder::records);
    }

    /// Ends the recording (the stack is torn down), draws the states and checks each against
    /// the acknowledged commits; Ctrl-C (`interrupt`) stops after the state being checked.
    pub fn finish(
        mut self,
        checker: &Checker,
        interrupt: &AtomicBool,
    ) -> Result<DurabilityRecord, Failure> {
        let recorder = self.recorder.take().expect("recording until finish");
        let recording = recorder.finish(&mut self.exec).map_err(stack_failure)?;
        let opts = CrashOptions {
            states: self.states as usize,
            seed: self.seed,
            sector_bytes: SECTOR_BYTES,
            torn: true,
            from_record: 0,
        };
        let (base, work) = (self.dir.join("base"), self.dir.join("work"));
        let from = Sources {
            log: &recording.log,
            base: &base,
            work: &work,
            end: self.end,
        };
        if !self.quiet {
            eprintln!(
                "bakeoff: checking {} crash states (seed {}, torn writes at {} bytes)",
                self.states, self.seed, SECTOR_BYTES
            );
        }
        let started = Instant::now();
        let (total, quiet, mut done) = (self.states, self.quiet, 0);
        let mut on_state = |state: &CrashState, check: &StateCheck| {
            done += 1;
            if !quiet {
                eprintln!(
                    "bakeoff: crash state {done}/{total} (#{}, crash point {}): {}",
                    state.number,
                    state.crash_point,
                    state_line(check)
                );
            }
            !interrupt.load(Ordering::Relaxed)
        };
        let ledger = self.ledger.as_mut().expect("a ledger until dropped");
        let acks = std::mem::take(&mut self.acknowledged);
        let checked = check_states(
            &from,
            &opts,
            checker,
            &acks,
            ledger,
            &mut self.exec,
            &mut on_state,
        )
        .map_err(stack_failure)?;
        // What the states were checked against, and whether page or block checksums were.
        let new_orders = (acks.len() as u64, Acknowledged::NewOrders);
        let (checksums, acknowledged) = match &checker.db {
            StateDb::Postgres { checksums, .. } => (*checksums, new_orders),
            StateDb::Blocks { journal } => {
                (true, (journal.acknowledged_blocks(), Acknowledged::Blocks))
            }
            _ => (false, new_orders),
        };
        let mut record = durability_record(&checked, &opts, acknowledged, &recording, checksums);
        record.recording.checking_ns = started.elapsed().as_nanos() as u64;
        Ok(record)
    }
}

impl Drop for CrashRun {
    /// The recorder's loop devices and mount go first, then the directory.
    fn drop(&mut self) {
        if let Some(recorder) = self.recorder.take() {
            drop(recorder);
        }
        if let Some(ledger) = self.ledger.take() {
            for failure in ledger.undo_all(&mut self.exec) {
                eprintln!("bakeoff: warning: removing the write log: {failure}");
            }
        }
    }
}

/// The run's directories, each recorded for removal before it is made (an undo never removes
/// a tree: each directory goes with its files), and a sparse image of each of `sizes` bytes.
fn make_images(dir: &Path, sizes: &[u64], ledger: &mut Ledger) -> Result<(), StackError> {
    for sub in ["", "backing", "base", "work"] {
        let path = dir.join(sub);
        ledger.record(Undo::RemoveDirAndFiles { path: path.clone() })?;
        std::fs::create_dir_all(&path).map_err(StackError::io("creating", &path))?;
    }
    // The states' mount points (the data stack's, a log stack's), made when the first is
    // checked.
    for sub in ["mnt", "mnt-log"] {
        ledger.record(Undo::RemoveDir {
            path: dir.join(sub),
        })?;
    }
    let backing = dir.join("backing");
    for (i, &size) in sizes.iter().enumerate() {
        let image = backing.join(format!("disk{i}.img"));
        let file = std::fs::File::create(&image).map_err(StackError::io("creating", &image))?;
        file.set_len(size)
            .map_err(StackError::io("sizing", &image))?;
    }
    Ok(())
}

/// The checker of a verified I/O run's states: its blocks against `journal`, the run's stack
/// of `spec`'s type having been mounted at `origin`.
pub fn block_checker(journal: Journal, spec: &StackSpec, origin: &Path, run: &CrashRun) -> Checker {
    Checker {
        kind: spec.kind,
        db: StateDb::Blocks {
            journal: std::sync::Arc::new(journal),
        },
        mountpoint: run.dir.join("mnt"),
        origin: origin.to_path_buf(),
        log: None,
    }
}

/// The checker for a run of `plan` on a stack of `spec`'s type that was mounted at `origin`
/// (and on a log stack of `log`'s type, mounted at its path), mounting states under the run's
/// directory.
pub fn checker(
    plan: &DbPlan,
    (spec, log): (&StackSpec, Option<(&StackSpec, PathBuf)>),
    origin: &Path,
    run: &CrashRun,
) -> Checker {
    let db = match plan.db {
        Db::Sqlite => StateDb::Sqlite {
            file: PathBuf::from(bakeoff_db::sqlite::managed::FILE),
            options: plan.sqlite.clone(),
        },
        Db::Mariadb => StateDb::Mariadb {
            data_dir: PathBuf::from("mariadb"),
            name: format!("crash-state-{}", std::process::id()),
            variables: plan.my.clone(),
        },
        Db::Postgres => StateDb::Postgres {
            data_dir: PathBuf::from("pgdata"),
            name: format!("crash-state-{}", std::process::id()),
            checksums: true,
        },
    };
    Checker {
        kind: spec.kind,
        db,
        mountpoint: run.dir.join("mnt"),
        origin: origin.to_path_buf(),
        log: log
            .zip(run.log_first)
            .map(|((log, origin), first)| LogState {
                kind: log.kind,
                origin,
                first,
                mountpoint: run.dir.join("mnt-log"),
            }),
    }
}
