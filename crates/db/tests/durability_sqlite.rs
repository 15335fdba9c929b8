//! The risk half of a comparison, end to end on SQLite (root and /dev/fuse; in CI for real):
//! TPC-C runs on ext4 whose loop device sits on the write log; crash states are drawn from what
//! reached the device during the run and each is checked as after a power cut (mount, e2fsck,
//! SQLite's own recovery and integrity check, the acknowledged New-Orders, TPC-C's conditions).
//! With `synchronous=FULL` every state is clean; with `synchronous=OFF` SQLite acknowledges
//! commits it never flushed and writes pages in no safe order, and states lose those commits,
//! are corrupt or do not open (which, depends on where the power went).

mod durability_common;
use bakeoff_db::durability::{Checker, Outcome, StateDb};
use bakeoff_db::sqlite::{JournalMode, Sqlite, SqliteOptions, Synchronous};
use bakeoff_db::tpcc::{self, TpccPlan};
use bakeoff_stack::exec::Exec;
use bakeoff_stack::ledger::Ledger;
use bakeoff_stack::writelog::{Recorder, RecorderOptions};
use bakeoff_stack::StackKind;
use bakeoff_testkit::command::sh;
use bakeoff_testkit::loop_device::{mkfs, Mount};
use bakeoff_testkit::{privileged_turn, require, scratch_dir};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

const IMAGE: &str = "disk0.img";
const STATES: usize = 6;

fn plan() -> TpccPlan {
    TpccPlan {
        warehouses: 1,
        terminals: 2,
        runtime: Duration::from_secs(2),
        ramp: Duration::from_millis(200),
        rate_tps: None,
        seed: 23,
        load_threads: 2,
        procedures: false,
        journal: true,
    }
}

/// Loads and runs TPC-C with `synchronous` on ext4 over the write log in `dir`; returns the
/// outcome of each crash state drawn from the run's log, and the acknowledged New-Orders.
fn outcomes(dir: &Path, synchronous: Synchronous) -> (Vec<Outcome>, usize) {
    let mut ledger = Ledger::create(&dir.join("state"), "durability").unwrap();
    let mut exec = Exec::default();
    let backing = dir.join("backing");
    std::fs::create_dir(&backing).unwrap();
    let image = std::fs::File::create(backing.join(IMAGE)).unwrap();
    image.set_len(640 << 20).unwrap();
    drop(image);
    let opts = RecorderOptions {
        backing_dir: backing,
        images: vec![IMAGE.into()],
        mountpoint: dir.join("fuse"),
        log: dir.join("load.log"),
    };
    let mut recorder = Recorder::start(&opts, &mut ledger).unwrap();
    let device = recorder.attach_loop(IMAGE, &mut exec, &mut ledger).unwrap();
    mkfs("ext4", Path::new(&device.device));
    let options = SqliteOptions {
        journal_mode: Some(JournalMode::Wal),
        synchronous: Some(synchronous),
        ..SqliteOptions::default()
    };
    let (base, log) = (dir.join("base"), dir.join("run.log"));
    let acks = {
        let mount = Mount::new(Path::new(&device.device), "defaults");
        let db = Arc::new(Sqlite::open(&mount.path().join("tpcc.db"), options.clone()).unwrap());
        tpcc::load(db.as_ref(), &plan()).unwrap();
        // The states start from the loaded database, flushed: the run's log is what follows.
        // (syncfs writes the journal's superblock after its last flush: flush the device too.)
        sh("sync", &["-f", &mount.target()]);
        sh("blockdev", &["--flushbufs", &device.device]);
        std::fs::create_dir(&base).unwrap();
        recorder.checkpoint(&base, &log).unwrap();
        let run = tpcc::run(db.clone(), &plan(), &AtomicBool::new(false), &mut |_| {}).unwrap();
        assert!(run.output.error.is_none(), "{:?}", run.output.error);
        run.acknowledged
    };
    assert!(acks.len() > 20, "{} New-Orders acknowledged", acks.len());
    let recording = recorder.finish(&mut exec).unwrap();
    let checker = Checker {
        kind: StackKind::named("ext4").unwrap(),
        db: StateDb::Sqlite {
            file: PathBuf::from("tpcc.db"),
            options,
        },
        mountpoint: dir.join("mnt"),
    };
    let work = dir.join("work");
    let outcomes = durability_common::outcomes(
        &format!("{synchronous:?}"),
        STATES,
        (&recording.log, &base, &work),
        &checker,
        &acks,
        ledger,
        &mut exec,
    );
    (outcomes, acks.len())
}

#[test]
fn synchronous_off_leaves_damaged_states_where_full_leaves_none() {
    let Some(_turn) = privileged_turn() else {
        return;
    };
    if !require(
        Path::new("/dev/fuse").exists(),
        "/dev/fuse (the fuse module)",
    ) {
        return;
    }
    let full_dir = scratch_dir();
    let (full, _) = outcomes(full_dir.path(), Synchronous::Full);
    assert_eq!(full, vec![Outcome::Clean; full.len()], "synchronous=FULL");
    assert!(full.len() >= STATES - 1, "{full:?}");
    let off_dir = scratch_dir();
    let (off, _) = outcomes(off_dir.path(), Synchronous::Off);
    assert!(
        off.contains(&Outcome::LostCommits),
        "synchronous=OFF: {off:?}"
    );
    assert!(
        !off.contains(&Outcome::FsDamaged),
        "ext4's journal recovers: {off:?}"
    );
}
