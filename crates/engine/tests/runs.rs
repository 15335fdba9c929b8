//! Whole runs of small plans on a temporary directory: the plumbing from plan to role results.

use bakeoff_core::plan::OpKind;
use bakeoff_core::record::RoleResult;
use bakeoff_core::settings::Settings;
use bakeoff_core::workload::builtin;
use bakeoff_engine::{execute, lay_out, RunOutput, Target, TickKind};
use std::sync::atomic::AtomicBool;

fn run(workload: &str, set: &str) -> (tempfile::TempDir, RunOutput, Vec<TickKind>) {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let plan = builtin(workload)
        .unwrap()
        .plan(&Settings::parse_set(set).unwrap())
        .unwrap();
    let target = Target::Directory(dir.path().into());
    let data = lay_out(&plan, &target, &|_, _| true).unwrap();
    let mut ticks = Vec::new();
    let out = execute(&plan, &data, &AtomicBool::new(false), &mut |t| {
        ticks.push(t.kind)
    })
    .unwrap();
    (dir, out, ticks)
}

fn ops(role: &RoleResult, kind: OpKind) -> u64 {
    role.ops
        .iter()
        .find(|o| o.kind == kind)
        .map_or(0, |o| o.ops)
}

#[test]
fn plain_job_measures_every_operation() {
    for engine in ["null", "psync", "io_uring"] {
        let depth = if engine == "psync" { 1 } else { 8 };
        let set = format!(
            "engine={engine},iodepth={depth},size=8m,runtime=1200ms,ramp_time=200ms,jobs=2"
        );
        let (_d, out, ticks) = run("randread", &set);
        assert!(out.error.is_none(), "{engine}: {:?}", out.error);
        let role = &out.roles[0];
        let read = &role.ops[0];
        assert_eq!(read.kind, OpKind::Read);
        assert!(read.ops > 100, "{engine}: {} reads", read.ops);
        let lat = read.lat.as_ref().unwrap();
        assert!(lat.min_ns <= lat.at(50.0).unwrap() && lat.at(99.0).unwrap() <= lat.max_ns);
        assert!(
            (out.measured.as_secs_f64() - 1.2).abs() < 0.2,
            "{:?}",
            out.measured
        );
        assert_eq!(ticks.first(), Some(&TickKind::Start));
        assert!(ticks.contains(&TickKind::MeasureStart) && ticks.contains(&TickKind::Second));
        assert_eq!(ticks.last(), Some(&TickKind::End));
    }
}

#[test]
fn rate_iops_paces_and_reports_service_time() {
    let (_d, out, _) = run("randread", "rate_iops=500,size=4m,runtime=1s");
    let read = &out.roles[0].ops[0];
    assert!(
        (400..=560).contains(&read.ops),
        "500/s for 1 s gave {}",
        read.ops
    );
    assert!(
        read.service.is_some(),
        "open loop keeps service time beside latency"
    );
}

#[test]
fn slob_group_commits_through_the_log_writer() {
    let (_d, out, _) = run(
        "slob",
        "readers=2,writers=4,data_size=8m,redo_size=1m,runtime=1s",
    );
    assert!(out.error.is_none(), "{:?}", out.error);
    let by = |n: &str| out.roles.iter().find(|r| r.name == n).unwrap();
    assert!(ops(by("reader"), OpKind::Read) > 0);
    let writer = by("writer");
    assert!(ops(writer, OpKind::Write) > 0);
    // Each update reads the block before writing it back.
    assert!(ops(writer, OpKind::Read).abs_diff(ops(writer, OpKind::Write)) <= 4);
    let lgwr = by("lgwr");
    assert!(ops(lgwr, OpKind::LogWrite) > 0 && ops(lgwr, OpKind::Sync) > 0);
    assert!(lgwr.commits_per_write.unwrap() >= 1.0);
}

#[test]
fn oltp_writes_follow_reads() {
    let set = "shadows=8,dbwriters=10,usermode=1000,filesize=2m,nfiles=2,logfilesize=2m,runtime=2s";
    let (_d, out, _) = run("oltp", set);
    assert!(out.error.is_none(), "{:?}", out.error);
    let by = |n: &str| out.roles.iter().find(|r| r.name == n).unwrap();
    let reads = ops(by("shadow"), OpKind::Read) as f64;
    let writes = ops(by("dbwr"), OpKind::Write) as f64;
    assert!(reads > 2000.0, "{reads} reads");
    // 10 db writers x 100 writes per 1000 posts: one write per read, within the highwater slack.
    let ratio = writes / reads;
    assert!((0.7..=1.3).contains(&ratio), "write:read {ratio}");
}

#[test]
fn an_io_error_names_operation_file_and_offset() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let plan = builtin("randread")
        .unwrap()
        .plan(&Settings::parse_set("size=4m,runtime=2s").unwrap())
        .unwrap();
    let data = lay_out(&plan, &Target::Directory(dir.path().into()), &|_, _| true).unwrap();
    // Shrink the data file behind the layout's back: reads past the end come back short.
    std::fs::File::options()
        .write(true)
        .open(dir.path().join("bakeoff-data.0"))
        .unwrap()
        .set_len(4096)
        .unwrap();
    let out = execute(&plan, &data, &AtomicBool::new(false), &mut |_| {}).unwrap();
    let err = out.error.expect("a short read fails the run").to_string();
    assert!(
        err.contains("short read at offset") && err.contains("bakeoff-data.0"),
        "{err}"
    );
    assert!(
        out.measured.as_secs_f64() < 1.0,
        "the run stopped at the error"
    );
}

#[test]
fn interrupt_stops_within_a_second() {
    use std::sync::atomic::Ordering;
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let set = "data_size=8m,redo_size=1m,runtime=60s";
    let plan = builtin("slob")
        .unwrap()
        .plan(&Settings::parse_set(set).unwrap())
        .unwrap();
    let data = lay_out(&plan, &Target::Directory(dir.path().into()), &|_, _| true).unwrap();
    let (flag, measuring) = (AtomicBool::new(false), AtomicBool::new(false));
    let mut sent = None;
    let out = std::thread::scope(|s| {
        let interrupter = s.spawn(|| {
            while !measuring.load(Ordering::SeqCst) {
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
            std::thread::sleep(std::time::Duration::from_millis(500));
            flag.store(true, Ordering::SeqCst);
            std::time::Instant::now()
        });
        let out = execute(&plan, &data, &flag, &mut |t| {
            if t.kind == TickKind::MeasureStart {
                measuring.store(true, Ordering::SeqCst);
            }
        })
        .unwrap();
        sent = Some(interrupter.join().unwrap());
        out
    });
    let took = sent.unwrap().elapsed();
    assert!(out.interrupted);
    assert!(
        took.as_secs_f64() < 1.0,
        "stopped {took:?} after the interrupt"
    );
    assert!(
        out.roles[0].ops[0].ops > 0,
        "what was measured before the interrupt is kept"
    );
}
