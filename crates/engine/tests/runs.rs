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
fn slob_writers_dirty_blocks_that_dbwr_writes_and_commit_through_the_log_writer() {
    let (_d, out, _) = run(
        "slob",
        "readers=2,writers=4,data_size=8m,redo_size=1m,runtime=1s",
    );
    assert!(out.error.is_none(), "{:?}", out.error);
    let by = |n: &str| out.roles.iter().find(|r| r.name == n).unwrap();
    assert!(ops(by("reader"), OpKind::Read) > 0);
    let writer = by("writer");
    let reads = ops(writer, OpKind::Read);
    assert!(reads > 100, "{reads} writer reads");
    assert_eq!(
        ops(writer, OpKind::Write),
        0,
        "sessions do not write data blocks"
    );
    // Every block a writer read was dirtied and committed; DBWR wrote (nearly) all of them.
    assert!(ops(writer, OpKind::Commit).abs_diff(reads) <= 4);
    let written = ops(by("dbwr"), OpKind::Write) as f64;
    assert!(
        (0.8..=1.02).contains(&(written / reads as f64)),
        "DBWR wrote {written} of {reads} dirtied blocks"
    );
    let lgwr = by("lgwr");
    assert!(ops(lgwr, OpKind::LogWrite) > 0 && ops(lgwr, OpKind::Sync) > 0);
    assert!(lgwr.commits_per_write.unwrap() >= 1.0);
}

#[test]
fn slob_without_dbwr_writers_write_in_place() {
    let set = "readers=1,writers=4,dbwriters=0,data_size=8m,redo_size=1m,runtime=1s";
    let (_d, out, _) = run("slob", set);
    assert!(out.error.is_none(), "{:?}", out.error);
    let writer = out.roles.iter().find(|r| r.name == "writer").unwrap();
    // bakeoff 0.1's shape: each update reads the block and writes it back itself.
    assert!(ops(writer, OpKind::Read).abs_diff(ops(writer, OpKind::Write)) <= 4);
    assert!(ops(writer, OpKind::Write) > 100);
}

#[test]
fn slob_sessions_update_their_share_of_reads() {
    let set = "readers=0,writers=0,sessions=4,update_pct=30,data_size=8m,redo_size=1m,runtime=2s";
    let (_d, out, _) = run("slob", set);
    assert!(out.error.is_none(), "{:?}", out.error);
    let by = |n: &str| out.roles.iter().find(|r| r.name == n).unwrap();
    let reads = ops(by("session"), OpKind::Read) as f64;
    let commits = ops(by("session"), OpKind::Commit) as f64;
    let written = ops(by("dbwr"), OpKind::Write) as f64;
    assert!(reads > 1000.0, "{reads} reads");
    // docs/workloads.md: data writes = commits = update_pct % of the sessions' reads.
    assert!(
        (0.26..=0.34).contains(&(commits / reads)),
        "commits/reads {}",
        commits / reads
    );
    assert!(
        (0.24..=0.34).contains(&(written / reads)),
        "writes/reads {}",
        written / reads
    );
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

#[test]
fn commits_and_log_writes_count_in_the_same_window() {
    // A ramp as long as the window: counting commits over the whole run would double them.
    let set = "readers=1,writers=4,data_size=8m,redo_size=1m,ramp_time=1s,runtime=1s";
    let (_d, out, _) = run("slob", set);
    assert!(out.error.is_none(), "{:?}", out.error);
    let by = |n: &str| out.roles.iter().find(|r| r.name == n).unwrap();
    let lgwr = by("lgwr");
    let served = lgwr.commits_per_write.unwrap() * ops(lgwr, OpKind::LogWrite) as f64;
    let committed = ops(by("writer"), OpKind::Commit) as f64;
    assert!(committed > 50.0, "{committed} commits");
    let ratio = served / committed;
    assert!(
        (0.9..=1.1).contains(&ratio),
        "log writer served {served} commits in the window, writers completed {committed}"
    );
}

#[test]
fn headline_latency_merges_every_role() {
    let (_d, out, _) = run(
        "slob",
        "readers=2,writers=2,data_size=8m,redo_size=1m,runtime=1s",
    );
    assert!(out.error.is_none(), "{:?}", out.error);
    let read = out.ops.iter().find(|o| o.kind == OpKind::Read).unwrap();
    let role_reads: Vec<_> = out
        .roles
        .iter()
        .flat_map(|r| &r.ops)
        .filter(|o| o.kind == OpKind::Read)
        .collect();
    assert_eq!(read.ops, role_reads.iter().map(|o| o.ops).sum::<u64>());
    let p99 = |o: &bakeoff_core::record::OpStats| o.lat.as_ref().unwrap().at(99.0).unwrap();
    let (lo, hi) = role_reads.iter().fold((u64::MAX, 0), |(lo, hi), o| {
        (lo.min(p99(o)), hi.max(p99(o)))
    });
    assert!(
        lo <= p99(read) && p99(read) <= hi,
        "{lo} <= {} <= {hi}",
        p99(read)
    );
    let commit = out.ops.iter().find(|o| o.kind == OpKind::Commit).unwrap();
    let log = out.ops.iter().find(|o| o.kind == OpKind::LogWrite).unwrap();
    let p50 = |o: &bakeoff_core::record::OpStats| o.lat.as_ref().unwrap().at(50.0).unwrap();
    assert!(p50(commit) >= p50(log), "a commit waits for its log write");
}

#[test]
fn engine_setup_happens_before_the_window() {
    // 128 MiB of write buffers to fill per worker: setup takes a good part of a second.
    let set = "engine=null,rw=randwrite,iodepth=128,bs=1m,size=4m,jobs=2,runtime=2s";
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let plan = builtin("randwrite")
        .unwrap()
        .plan(&Settings::parse_set(set).unwrap())
        .unwrap();
    let data = lay_out(&plan, &Target::Directory(dir.path().into()), &|_, _| true).unwrap();
    let mut points = Vec::new();
    let out = execute(&plan, &data, &AtomicBool::new(false), &mut |t| {
        let ops = t.totals.ops[OpKind::Write.index()];
        if t.kind != TickKind::Start {
            points.push((t.kind, t.elapsed.as_secs_f64(), ops));
        }
    })
    .unwrap();
    assert!(out.error.is_none(), "{:?}", out.error);
    let start = points
        .iter()
        .position(|p| p.0 == TickKind::MeasureStart)
        .unwrap();
    // Every stretch of the window between ticks ran at a similar rate: none was spent setting up.
    let rates: Vec<f64> = points[start..]
        .windows(2)
        .filter(|w| w[1].1 - w[0].1 > 0.2)
        .map(|w| (w[1].2 - w[0].2) as f64 / (w[1].1 - w[0].1))
        .collect();
    let max = rates.iter().cloned().fold(0.0, f64::max);
    assert!(rates.len() >= 2, "{points:?}");
    assert!(
        rates.iter().all(|r| *r > 0.3 * max),
        "rates inside the window {rates:?} (ticks {points:?})"
    );
}

#[test]
fn repetitions_replay_different_offsets_over_the_same_data() {
    use bakeoff_engine::run::worker_seed;
    let plan = builtin("slob")
        .unwrap()
        .plan(&Settings::parse_set("data_size=8m,redo_size=1m").unwrap())
        .unwrap();
    let rep = |n| bakeoff_core::study::for_repetition(&plan, n);
    assert_eq!(worker_seed(&rep(1), 0, 0), worker_seed(&plan, 0, 0));
    assert_ne!(worker_seed(&rep(2), 0, 0), worker_seed(&rep(1), 0, 0));
    assert_ne!(worker_seed(&rep(3), 0, 0), worker_seed(&rep(2), 0, 0));
    // Another stack of the same repetition: the same plan, the same offsets.
    assert_eq!(worker_seed(&rep(2), 1, 3), worker_seed(&rep(2), 1, 3));
    // The data does not change with the repetition.
    assert_eq!(rep(2).seed, plan.seed);
}
