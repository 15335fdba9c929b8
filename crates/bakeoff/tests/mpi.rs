//! `run --mpi` under `mpirun` on one machine (root, loop devices, OpenMPI; built with
//! `--features mpi`): four ranks give one record whose counts are the ranks' sum and whose IOPS
//! is within noise of `clients=4`; a rank killed mid-run stops every rank, leaving nothing; a
//! rank that sees another target stops every rank, naming it.

#![cfg(feature = "mpi")]

mod common;

use bakeoff_testkit::command::{succeeds, KillOnDrop};
use bakeoff_testkit::loop_device::LoopFs;
use bakeoff_testkit::{privileged_turn, require, scratch_dir};
use common::mpi::{bakeoff_bin, rank_dirs, text};
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// `mpirun` as root with more ranks than cores, unbound (the ranks share the machine as
/// `clients=4`'s processes do).
fn mpirun(np: u32) -> Command {
    let mut cmd = Command::new("mpirun");
    cmd.args([
        "--allow-run-as-root",
        "--oversubscribe",
        "--bind-to",
        "none",
    ])
    .args(["-np", &np.to_string()]);
    cmd
}

/// Root, loop devices and mpirun, or skip (fail under CI=true).
fn mpi_turn() -> Option<bakeoff_testkit::TurnGuard> {
    let turn = privileged_turn()?;
    require(succeeds("mpirun", &["--version"]), "mpirun (OpenMPI)").then_some(turn)
}

/// A small direct-I/O random read: what the noise comparison measures.
const WORK: &str = "size=32m,direct=true,runtime=3s,ramp_time=0";

fn ops_of(record: &serde_json::Value) -> u64 {
    record["ops"][0]["ops"].as_u64().unwrap()
}

fn iops_of(record: &serde_json::Value) -> f64 {
    record["ops"][0]["iops"].as_f64().unwrap()
}

/// One `mpirun -np 4 bakeoff run randread --mpi` on `target`: its record, checked for the
/// ranks' counts adding up to its own.
fn mpi_run(target: &str, extra: &[&str]) -> serde_json::Value {
    let out_dir = common::tmp();
    let json = out_dir.path().join("run.json");
    let out = mpirun(4)
        .arg(bakeoff_bin())
        .args([
            "run", "randread", "--mpi", "--target", target, "--set", WORK,
        ])
        .args(["--quiet", "--json", json.to_str().unwrap()])
        .args(extra)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let record: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(json).unwrap()).unwrap();
    let ranks = record["clients"].as_array().unwrap();
    assert_eq!(ranks.len(), 4, "one entry per rank");
    let per_rank: Vec<u64> = ranks
        .iter()
        .map(|c| c["ops"][0]["ops"].as_u64().unwrap())
        .collect();
    assert!(per_rank.iter().all(|&n| n > 0), "{per_rank:?}");
    assert_eq!(
        ops_of(&record),
        per_rank.iter().sum::<u64>(),
        "{per_rank:?}"
    );
    let mpi = &record["mpi"];
    assert_eq!(mpi["ranks"], 4);
    assert_eq!(mpi["hosts"].as_array().unwrap().len(), 1, "{mpi}");
    assert_eq!(mpi["hosts"][0]["ranks"].as_array().unwrap().len(), 4);
    assert!(mpi["hosts"][0]["cpu"]["busy_us"].as_f64().unwrap() > 0.0);
    assert!(
        mpi["totals"]["device_read_ops"].as_u64().unwrap() > 0,
        "{mpi}"
    );
    record
}

/// The median and the range (max - min) of three or more runs.
fn median_and_range(mut v: Vec<f64>) -> (f64, f64) {
    v.sort_by(f64::total_cmp);
    (v[v.len() / 2], v[v.len() - 1] - v[0])
}

/// `clients=4` without MPI on `target`: its IOPS.
fn clients_run(target: &str) -> f64 {
    let set = format!("{WORK},clients=4");
    let args = [
        "run", "randread", "--target", target, "--set", &set, "--warm",
    ];
    iops_of(&common::run_json(&args))
}

/// Noise, from 3 runs of each (after one of each that lays out the files and is not counted):
/// the medians may differ by the two ranges (max - min) added, plus 10% of the larger median
/// (three runs on a shared 2-CPU machine understate the spread). Direct I/O, so the runs are
/// `--warm` (no machine-wide cache drop) without reading from the page cache.
#[test]
fn four_ranks_make_one_record_within_noise_of_four_clients() {
    let Some(_turn) = mpi_turn() else { return };
    let fs = LoopFs::new(512 << 20, "ext4", "defaults");
    let target = fs.target();
    mpi_run(&target, &["--warm"]);
    clients_run(&target);
    let mut mpi = Vec::new();
    let mut clients = Vec::new();
    for _ in 0..3 {
        mpi.push(iops_of(&mpi_run(&target, &["--warm"])));
        clients.push(clients_run(&target));
    }
    let removed = mpi_run(&target, &["--warm", "--remove-data"]);
    assert_eq!(removed["status"], "completed");
    assert!(rank_dirs(&target).is_empty(), "{:?}", rank_dirs(&target));
    let (m_mpi, r_mpi) = median_and_range(mpi.clone());
    let (m_cli, r_cli) = median_and_range(clients.clone());
    let allowed = r_mpi + r_cli + 0.10 * m_mpi.max(m_cli);
    let differ = (m_mpi - m_cli).abs();
    eprintln!("IOPS: MPI {mpi:.0?}, clients=4 {clients:.0?}: medians differ by {differ:.0}, allowed {allowed:.0}");
    assert!(
        differ <= allowed,
        "MPI {mpi:?} vs clients=4 {clients:?}: medians differ by more than {allowed:.0}"
    );
}

/// The process ids of `mpirun`'s ranks, with each one's rank (from its environment).
fn ranks_of(mpirun: u32) -> Vec<(u32, u32)> {
    let children = std::fs::read_to_string(format!("/proc/{mpirun}/task/{mpirun}/children"))
        .unwrap_or_default();
    children
        .split_whitespace()
        .filter_map(|p| p.parse::<u32>().ok())
        .filter_map(|pid| {
            let env = std::fs::read(format!("/proc/{pid}/environ")).ok()?;
            let env = String::from_utf8_lossy(&env).into_owned();
            let rank = env
                .split('\0')
                .find_map(|kv| kv.strip_prefix("OMPI_COMM_WORLD_RANK="))?;
            Some((pid, rank.parse().ok()?))
        })
        .collect()
}

/// Processes whose command line names `target`.
fn processes_on(target: &str) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().filter_map(Result::ok) {
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        if cmdline.contains(target) {
            found.push(cmdline);
        }
    }
    found
}

/// No process on `target` and no rank's directory or marker in it.
fn assert_nothing_left(target: &str) {
    assert!(
        processes_on(target).is_empty(),
        "{:?}",
        processes_on(target)
    );
    assert!(rank_dirs(target).is_empty(), "{:?}", rank_dirs(target));
}

/// `mpirun -np NP bakeoff run randread --mpi` on `target` with `extra` arguments, in the
/// background, once every rank has laid out its files: the job, and rank `rank`'s process id.
fn start(np: u32, target: &str, extra: &[&str], rank: u32) -> (KillOnDrop, u32) {
    let child = mpirun(np)
        .arg(bakeoff_bin())
        .args(["run", "randread", "--mpi", "--target", target, "--quiet"])
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let job = KillOnDrop(child);
    let laid_out = |r: u32| {
        let dir = Path::new(target).join(format!("rank-{r}"));
        dir.join(".bakeoff-dataset.json").exists()
    };
    let deadline = Instant::now() + Duration::from_secs(60);
    while (0..np).any(|r| !laid_out(r)) || ranks_of(job.0.id()).len() < np as usize {
        assert!(Instant::now() < deadline, "the ranks never started");
        std::thread::sleep(Duration::from_millis(100));
    }
    let ranks = ranks_of(job.0.id());
    let (pid, _) = ranks.into_iter().find(|(_, r)| *r == rank).unwrap();
    (job, pid)
}

/// The output of `job`, which must end with an error within 30 s.
fn end_of(job: &mut KillOnDrop, still: &str) -> Output {
    let since = Instant::now();
    while job.0.try_wait().unwrap().is_none() {
        assert!(since.elapsed() < Duration::from_secs(30), "{still}");
        std::thread::sleep(Duration::from_millis(50));
    }
    let child = std::mem::replace(&mut job.0, Command::new("true").spawn().unwrap());
    let out = child.wait_with_output().unwrap();
    assert!(!out.status.success(), "{}", text(&out));
    out
}

#[test]
fn a_rank_killed_mid_run_stops_every_rank_and_leaves_nothing() {
    let Some(_turn) = mpi_turn() else { return };
    let fs = LoopFs::new(512 << 20, "ext4", "defaults");
    let target = fs.target();
    // The run lasts a minute.
    let (mut job, victim) = start(
        4,
        &target,
        &["--set", "size=32m,runtime=60s,ramp_time=0"],
        2,
    );
    std::thread::sleep(Duration::from_secs(3));
    assert!(succeeds("kill", &["-KILL", &victim.to_string()]));
    let out = end_of(&mut job, "ranks still run");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "the job failed:\n{stderr}");
    // mpirun aborts the job when a rank dies and SIGKILLs the rest about a second later; on a
    // busy machine it may do so before the ranks have written their own errors. Its notice
    // then names the dead rank, and that is the error the user sees; the ranks it killed may
    // still be exiting when it returns.
    if stderr.contains("mpirun noticed that process rank 2 ") {
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while !processes_on(&target).is_empty() && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(100));
        }
    } else {
        for rank in [0, 1, 3] {
            let said = format!("bakeoff: error: rank {rank} on ");
            assert!(
                stderr.contains(&said),
                "rank {rank} said nothing:\n{stderr}"
            );
        }
        let rank0 = stderr.lines().find(|l| l.contains("error: rank 0 on "));
        assert!(
            rank0.is_some_and(|l| l.contains("for rank 2 on")),
            "rank 0 names the dead rank:\n{stderr}"
        );
    }
    assert_nothing_left(&target);
    assert!(succeeds("umount", &[&target]), "the mount is busy");
}

#[test]
fn a_rank_that_sees_another_target_stops_every_rank_naming_it() {
    let Some(_turn) = mpi_turn() else { return };
    let fs = LoopFs::new(256 << 20, "ext4", "defaults");
    let target = fs.target();
    let elsewhere = scratch_dir();
    // A directory of the same name as a rank's in the wrong target is not the run's.
    std::fs::create_dir(elsewhere.path().join("rank-1")).unwrap();
    let missing = format!("{}/missing", elsewhere.path().display());
    for (other, why) in [
        (
            elsewhere.path().to_str().unwrap(),
            "is not the directory rank 0 sees",
        ),
        (missing.as_str(), "No such file or directory"),
    ] {
        let args = |t: &str| -> Vec<String> {
            let words = [
                "run", "randread", "--mpi", "--quiet", "--set", WORK, "--target", t,
            ];
            std::iter::once(bakeoff_bin())
                .chain(words.iter().map(|s| s.to_string()))
                .collect()
        };
        let out = mpirun(3)
            .args(args(&target))
            .args([":", "-np", "1"])
            .args(args(other))
            .output()
            .unwrap();
        assert!(!out.status.success(), "{}", text(&out));
        let stderr = String::from_utf8_lossy(&out.stderr);
        for rank in 0..4 {
            let line = stderr
                .lines()
                .find(|l| l.starts_with(&format!("bakeoff: error: rank {rank} on ")))
                .unwrap_or_else(|| panic!("rank {rank} said nothing:\n{stderr}"));
            assert!(line.contains("rank 3 on ") && line.contains(why), "{line}");
        }
        assert!(rank_dirs(&target).is_empty(), "{:?}", rank_dirs(&target));
        assert!(
            elsewhere.path().join("rank-1").exists(),
            "not the run's: kept"
        );
    }
}

/// A rank that stops answering (SIGSTOP: alive, but never at the next step) is named by rank 0
/// after `--mpi-timeout` beyond the window, and every rank ends.
#[test]
fn a_rank_that_stops_answering_is_named_after_the_timeout() {
    let Some(_turn) = mpi_turn() else { return };
    let fs = LoopFs::new(256 << 20, "ext4", "defaults");
    let target = fs.target();
    let set = ["--set", "size=16m,runtime=4s,ramp_time=0", "--warm"];
    let (mut job, stopped) = start(
        3,
        &target,
        &[&set[..], &["--mpi-timeout", "3s"]].concat(),
        1,
    );
    std::thread::sleep(Duration::from_secs(1));
    let since = Instant::now();
    assert!(succeeds("kill", &["-STOP", &stopped.to_string()]));
    let out = end_of(&mut job, "ranks still wait");
    // Its window (at most 4 s left) and the timeout (3 s) passed before rank 0 gave up.
    assert!(
        since.elapsed() >= Duration::from_secs(3),
        "{:?}",
        since.elapsed()
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    let rank0 = stderr.lines().find(|l| l.contains("error: rank 0 on "));
    assert!(
        rank0.is_some_and(|l| l.contains("for rank 1 on") && l.contains("not there within 7 s")),
        "rank 0 names the silent rank:\n{stderr}"
    );
    assert!(
        stderr.contains("bakeoff: error: rank 2 on "),
        "rank 2 said nothing:\n{stderr}"
    );
    assert_nothing_left(&target);
}

/// A ramp under MPI: each point's offered rate is shared by the ranks, and the one record's
/// points carry what all ranks achieved together.
#[test]
fn a_ramp_shares_each_point_among_the_ranks() {
    let Some(_turn) = mpi_turn() else { return };
    let fs = LoopFs::new(256 << 20, "ext4", "defaults");
    let target = fs.target();
    let ramp = "start=400,step=x2,until=mean>500ms,point=2s,max_points=2,bisect=0";
    let record = {
        let out_dir = common::tmp();
        let json = out_dir.path().join("run.json");
        let out = mpirun(2)
            .arg(bakeoff_bin())
            .args(["run", "randread", "--mpi", "--target", &target, "--warm"])
            .args(["--set", "size=16m", "--ramp", ramp, "--remove-data"])
            .args(["--quiet", "--json", json.to_str().unwrap()])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", text(&out));
        let text = std::fs::read_to_string(json).unwrap();
        serde_json::from_str::<serde_json::Value>(&text).unwrap()
    };
    let points = record["ramp"]["points"].as_array().unwrap();
    assert_eq!(points.len(), 2, "{points:?}");
    for (point, offered) in points.iter().zip([400.0, 800.0]) {
        assert_eq!(point["offered_ops_s"], offered);
        let achieved = point["achieved_ops_s"].as_f64().unwrap();
        assert!(
            (achieved - offered).abs() < 0.1 * offered,
            "both ranks together carry the point: {achieved} of {offered}"
        );
    }
    // The record shows the headline point (800 ops/s): each of 2 ranks' 1 thread paced at 400.
    assert_eq!(record["plan"]["roles"][0]["rate_iops"], 400.0);
    let per_rank: Vec<u64> = (record["clients"].as_array().unwrap().iter())
        .map(|c| c["ops"][0]["ops"].as_u64().unwrap())
        .collect();
    assert_eq!(per_rank.len(), 2);
    assert_eq!(ops_of(&record), per_rank.iter().sum::<u64>());
    assert!(rank_dirs(&target).is_empty(), "{:?}", rank_dirs(&target));
}
