//! The risk half on PostgreSQL, end to end (root, PostgreSQL and /dev/fuse; in CI for real):
//! TPC-C on a cluster made with page checksums, on ext4 whose loop device sits on the write
//! log; crash states drawn from the run (torn 4 KiB writes included) are each started again
//! from a copy (crash recovery) and checked: the acknowledged New-Orders, TPC-C's conditions,
//! `pg_amcheck`, `pg_checksums`. With PostgreSQL's defaults (`synchronous_commit=on`,
//! `full_page_writes=on`) every state is clean: no commit it acknowledged is lost, no page is
//! torn past what its WAL repairs, and the checks find nothing they should not.

mod durability_common;
mod pg_common;
use bakeoff_db::durability::{Checker, Outcome, StateDb};
use bakeoff_db::postgres::{PgOptions, PgServer};
use bakeoff_db::tpcc::{self, TpccPlan};
use bakeoff_stack::exec::Exec;
use bakeoff_stack::ledger::Ledger;
use bakeoff_stack::writelog::{Recorder, RecorderOptions};
use bakeoff_stack::{Options, Stack, StackKind, StackSpec};
use bakeoff_testkit::command::sh;
use bakeoff_testkit::shared;
use pg_common::{images_dir, privileged};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

const IMAGE: &str = "disk0.img";
const STATES: usize = 4;

fn plan() -> TpccPlan {
    TpccPlan {
        warehouses: 1,
        terminals: 4,
        runtime: Duration::from_secs(3),
        ramp: Duration::from_millis(200),
        rate_tps: None,
        seed: 31,
        load_threads: 2,
        procedures: false,
        journal: true,
    }
}

#[test]
fn postgresql_defaults_leave_every_crash_state_clean() {
    if !privileged() || !bakeoff_testkit::require(Path::new("/dev/fuse").exists(), "/dev/fuse") {
        return;
    }
    let _turn = shared();
    let dir = images_dir();
    let dir = dir.path();
    let mut ledger = Ledger::create(&dir.join("state"), "durability-pg").unwrap();
    let mut exec = Exec::default();
    let backing = dir.join("backing");
    std::fs::create_dir(&backing).unwrap();
    let image = std::fs::File::create(backing.join(IMAGE)).unwrap();
    image.set_len(1 << 30).unwrap();
    drop(image);
    let opts = RecorderOptions {
        backing_dir: backing,
        images: vec![IMAGE.into()],
        mountpoint: dir.join("fuse"),
        log: dir.join("load.log"),
    };
    let mut recorder = Recorder::start(&opts, &mut ledger).unwrap();
    let device = recorder.attach_loop(IMAGE, &mut exec, &mut ledger).unwrap();
    bakeoff_testkit::loop_device::mkfs("ext4", Path::new(&device.device));
    let fs = dir.join("fs");
    std::fs::create_dir(&fs).unwrap();
    sh("mount", &[&device.device, &fs.to_string_lossy()]);
    let (base, log) = (dir.join("base"), dir.join("run.log"));
    std::fs::create_dir(&base).unwrap();
    let acks = {
        let spec = StackSpec::parse(&format!("dir:path={}", fs.display())).unwrap();
        let stack_opts = Options {
            name: Some("durability-pg".into()),
            images: dir.to_path_buf(),
            ..Options::default()
        };
        let mut stack = Stack::create(&spec, &stack_opts).unwrap();
        let mut pg = PgOptions::new(fs.join("pgdata"));
        pg.clients = 4;
        pg.data_checksums = true;
        let mut server = PgServer::start(&mut stack, pg).unwrap();
        let db = Arc::new(server.database());
        tpcc::load(db.as_ref(), &plan()).unwrap();
        // The states start from the loaded cluster, stopped cleanly and flushed.
        server
            .restart(&mut stack, |_| {
                sh("sync", &["-f", &fs.to_string_lossy()]);
                sh("blockdev", &["--flushbufs", &device.device]);
                recorder.checkpoint(&base, &log).map(drop)
            })
            .unwrap();
        let db = Arc::new(server.database());
        let run = tpcc::run(db, &plan(), &AtomicBool::new(false), &mut |_| {}).unwrap();
        assert!(run.output.error.is_none(), "{:?}", run.output.error);
        server.stop(&mut stack).unwrap();
        stack.destroy().unwrap();
        run.acknowledged
    };
    sh("umount", &[&fs.to_string_lossy()]);
    assert!(acks.len() > 20, "{} New-Orders acknowledged", acks.len());
    let recording = recorder.finish(&mut exec).unwrap();
    let checker = Checker {
        kind: StackKind::named("ext4").unwrap(),
        db: StateDb::Postgres {
            data_dir: PathBuf::from("pgdata"),
            name: "durability-state".into(),
            checksums: true,
        },
        mountpoint: dir.join("mnt"),
        origin: fs.clone(),
        log: None,
    };
    let work = dir.join("work");
    let outcomes = durability_common::outcomes(
        "defaults:",
        STATES,
        (&recording.log, &base, &work),
        &checker,
        &acks,
        ledger,
        &mut exec,
    );
    assert!(outcomes.len() >= STATES - 1, "{outcomes:?}");
    assert_eq!(outcomes, vec![Outcome::Clean; outcomes.len()]);
}
