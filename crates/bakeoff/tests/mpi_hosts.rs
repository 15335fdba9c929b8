//! `run --mpi` with its ranks on four hosts made of network namespaces (root, loop devices,
//! OpenMPI, iproute2; built with `--features mpi`): `mpirun` in a head namespace starts its
//! daemons on the hosts through an rsh agent that enters a host's namespace (`netns.rs`), and
//! every host's ranks work on one ext4 loop file system mounted before the run. The record names
//! every host and rank, each host sampled by its lowest rank, its counts the ranks' exact sum,
//! and it marks the hosts as one kernel's; a host's link cut, a rank killed on one host and a
//! host whose target is another file system each end every rank with an error naming the host,
//! leaving no process in any namespace and no `rank-N/` behind.

#![cfg(feature = "mpi")]

mod common;
#[path = "mpi_hosts/netns.rs"]
mod netns;

use bakeoff_testkit::command::{succeeds, KillOnDrop};
use bakeoff_testkit::loop_device::{kernel_name, LoopFs};
use bakeoff_testkit::{privileged_turn, require, scratch_dir, TurnGuard};
use common::mpi::{bakeoff_bin, rank_dirs, text};
use netns::Cluster;
use serde_json::Value;
use std::path::Path;
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

/// Root, loop devices, mpirun, ip and unshare, or skip (fail under CI=true).
fn hosts_turn() -> Option<TurnGuard> {
    let turn = privileged_turn()?;
    let tools = succeeds("mpirun", &["--version"])
        && succeeds("ip", &["netns", "list"])
        && succeeds("unshare", &["--version"]);
    require(tools, "mpirun (OpenMPI), ip (iproute2) and unshare").then_some(turn)
}

/// `bakeoff run randread --mpi --target TARGET` and `extra`, as every rank's command line.
fn ranks_run(target: &str, extra: &[&str]) -> Vec<String> {
    let words = ["run", "randread", "--mpi", "--target", target];
    std::iter::once(bakeoff_bin())
        .chain(words.iter().chain(extra).map(|s| s.to_string()))
        .collect()
}

/// No process in any of `cluster`'s namespaces (within 10 s of the job's end: a killed rank
/// may still be exiting) and no rank's directory or marker in `target`.
fn assert_nothing_left(cluster: &Cluster, target: &str) {
    let left = cluster.settle(Duration::from_secs(10));
    assert!(
        left.is_empty(),
        "processes left in the namespaces: {left:?}"
    );
    assert!(rank_dirs(target).is_empty(), "{:?}", rank_dirs(target));
}

fn u64_of(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

/// Six ranks on four hosts (`--map-by node`: ranks 0 and 4 on the first, 1 and 5 on the
/// second, 2 and 3 alone): one record naming every host with its ranks, each sampled by its
/// lowest rank, one client per rank whose operations add up exactly to the record's; the hosts
/// share this machine's kernel, so the totals are that one machine's figures, counted once.
#[test]
fn six_ranks_on_four_hosts_make_one_record_that_knows_the_hosts_share_a_kernel() {
    let Some(_turn) = hosts_turn() else { return };
    let fs = LoopFs::new(512 << 20, "ext4", "defaults");
    let target = fs.target();
    let cluster = Cluster::new(4, &[]);
    let out_dir = scratch_dir();
    let json = out_dir.path().join("run.json");
    let work = "size=16m,direct=true,runtime=2s,ramp_time=0";
    let extra = ["--set", work, "--warm", "--remove-data"];
    let out = (cluster.mpirun(6))
        .args(ranks_run(&target, &extra))
        .args(["--json", json.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("6 ranks x 1 thread on 4 hosts sharing 1 kernel"),
        "{stdout}"
    );
    let record: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(record["status"], "completed");
    let mpi = &record["mpi"];
    assert_eq!(mpi["ranks"], 6);
    let hosts = mpi["hosts"].as_array().unwrap();
    let names: Vec<&str> = hosts.iter().map(|h| h["name"].as_str().unwrap()).collect();
    assert_eq!(names, cluster.hosts, "{mpi}");
    let ranks: Vec<Vec<u64>> = (hosts.iter())
        .map(|h| h["ranks"].as_array().unwrap().iter().map(u64_of).collect())
        .collect();
    assert_eq!(ranks, [vec![0, 4], vec![1, 5], vec![2], vec![3]]);
    let device = kernel_name(fs.device.path());
    for (host, ranks) in hosts.iter().zip(&ranks) {
        assert_eq!(u64_of(&host["sampled_by_rank"]), ranks[0], "{host}");
        assert!(host["cpu"]["busy_us"].as_f64().unwrap() > 0.0, "{host}");
        assert!(u64_of(&host["memory"]["total_bytes"]) > 0, "{host}");
        // Each host resolved the target to the loop device and counted its reads.
        let loop_dev = (host["devices"].as_array().unwrap().iter())
            .find(|d| d["name"] == device.as_str())
            .unwrap_or_else(|| panic!("{device} not sampled: {host}"));
        assert!(u64_of(&loop_dev["read_ops"]) > 0, "{host}");
    }
    let per_rank: Vec<u64> = (record["clients"].as_array().unwrap().iter())
        .enumerate()
        .map(|(rank, c)| {
            assert_eq!(u64_of(&c["index"]), rank as u64);
            assert!(c["dir"]
                .as_str()
                .unwrap()
                .ends_with(&format!("/rank-{rank}")));
            u64_of(&c["ops"][0]["ops"])
        })
        .collect();
    assert_eq!(per_rank.len(), 6);
    assert!(per_rank.iter().all(|&n| n > 0), "{per_rank:?}");
    assert_eq!(
        u64_of(&record["ops"][0]["ops"]),
        per_rank.iter().sum::<u64>()
    );
    assert_shared_kernel(&record, &cluster);
    assert_nothing_left(&cluster, &target);
}

/// Every host ran this machine's kernel: the first holds the machine's figures, the others
/// name it, and the totals, the record's `cpu`, `memory` and `devices` are the first's alone.
fn assert_shared_kernel(record: &Value, cluster: &Cluster) {
    let boot_id = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").unwrap();
    let (mpi, first) = (&record["mpi"], &record["mpi"]["hosts"][0]);
    for (i, host) in mpi["hosts"].as_array().unwrap().iter().enumerate() {
        assert_eq!(host["boot_id"], boot_id.trim(), "{host}");
        let expected = (i > 0).then(|| cluster.hosts[0].as_str());
        assert_eq!(host["same_kernel_as"].as_str(), expected, "{host}");
    }
    let totals = &mpi["totals"];
    assert_eq!(totals["kernels"], 1, "{totals}");
    assert_eq!(totals["cpus"], first["cpu"]["cpus"], "{totals}");
    assert_eq!(totals["cpu_busy_us"], first["cpu"]["busy_us"], "{totals}");
    let memory = &first["memory"]["total_bytes"];
    assert_eq!(&totals["memory_total_bytes"], memory, "{totals}");
    let devices = first["devices"].as_array().unwrap();
    for field in ["read_ops", "read_bytes", "write_ops", "write_bytes"] {
        let sum: u64 = devices.iter().map(|d| u64_of(&d[field])).sum();
        assert_eq!(u64_of(&totals[&format!("device_{field}")]), sum, "{field}");
    }
    assert_eq!(record["cpu"]["cpus"], first["cpu"]["cpus"]);
    assert_eq!(&record["memory"]["total_bytes"], memory);
    let named: Vec<&str> = (record["devices"].as_array().unwrap().iter())
        .map(|d| d["name"].as_str().unwrap())
        .collect();
    assert_eq!(named.len(), devices.len(), "{named:?}");
    let prefix = format!("{}:", cluster.hosts[0]);
    assert!(named.iter().all(|n| n.starts_with(&prefix)), "{named:?}");
}

/// `mpirun -np 4` (one rank per host) in the background with `extra`, once every rank has
/// laid out its files.
fn start(cluster: &Cluster, target: &str, extra: &[&str]) -> KillOnDrop {
    let child = (cluster.mpirun(4))
        .args(ranks_run(target, extra))
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
    while (0..4).any(|r| !laid_out(r)) {
        assert!(
            Instant::now() < deadline,
            "the ranks never laid out their files"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    job
}

/// The output of `job`, which must end with an error within `limit`.
fn end_of(job: &mut KillOnDrop, limit: Duration) -> Output {
    let since = Instant::now();
    while job.0.try_wait().unwrap().is_none() {
        assert!(since.elapsed() < limit, "mpirun still runs after {limit:?}");
        std::thread::sleep(Duration::from_millis(50));
    }
    let child = std::mem::replace(
        &mut job.0,
        std::process::Command::new("true").spawn().unwrap(),
    );
    let out = child.wait_with_output().unwrap();
    assert!(!out.status.success(), "{}", text(&out));
    out
}

/// A minute's run, stopped by the test: the ranks' command line.
const LONG: [&str; 5] = [
    "--set",
    "size=16m,runtime=60s,ramp_time=0",
    "--warm",
    "--mpi-timeout",
    "5s",
];

/// The third host's link goes down mid-run: `mpirun` loses its daemon there within seconds
/// (the agent's keepalive settings), names the host and ends the job; the cut host's daemon,
/// which lost `mpirun`, ends its rank.
#[test]
fn a_host_whose_link_is_cut_mid_run_ends_the_job_naming_it() {
    let Some(_turn) = hosts_turn() else { return };
    let fs = LoopFs::new(512 << 20, "ext4", "defaults");
    let target = fs.target();
    let cluster = Cluster::new(4, &[]);
    let mut job = start(&cluster, &target, &LONG);
    std::thread::sleep(Duration::from_secs(2));
    let cut = Instant::now();
    cluster.cut(2);
    let out = end_of(&mut job, Duration::from_secs(30));
    eprintln!("mpirun ended {:?} after the cut", cut.elapsed());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains(&cluster.hosts[2]), "{stderr}");
    assert_nothing_left(&cluster, &target);
}

/// The process id of rank `rank`, which runs on host `host`.
fn rank_pid(cluster: &Cluster, host: usize, rank: u32) -> u32 {
    let is_rank = |pid: &u32| {
        let env = std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
        let wanted = format!("OMPI_COMM_WORLD_RANK={rank}");
        (env.split(|&b| b == 0)).any(|kv| kv == wanted.as_bytes())
    };
    let found = cluster.pids_on(host).into_iter().find(is_rank);
    found.unwrap_or_else(|| panic!("no rank {rank} on {}", cluster.hosts[host]))
}

/// Rank 2, on the third host, is killed: `mpirun` hears it from that host's daemon and ends
/// every rank, naming the rank and its host.
#[test]
fn a_rank_killed_on_one_host_ends_every_rank_naming_its_host() {
    let Some(_turn) = hosts_turn() else { return };
    let fs = LoopFs::new(512 << 20, "ext4", "defaults");
    let target = fs.target();
    let cluster = Cluster::new(4, &[]);
    let mut job = start(&cluster, &target, &LONG);
    std::thread::sleep(Duration::from_secs(2));
    let victim = rank_pid(&cluster, 2, 2);
    assert!(succeeds("kill", &["-KILL", &victim.to_string()]));
    let out = end_of(&mut job, Duration::from_secs(30));
    let stderr = String::from_utf8_lossy(&out.stderr);
    // mpirun's notice ("process rank 2 ... on node HOST"), or rank 0's ("for rank 2 on HOST"),
    // whichever came first.
    let named = [
        format!("rank 2 on {}", cluster.hosts[2]),
        format!("on node {}", cluster.hosts[2]),
    ];
    assert!(named.iter().any(|n| stderr.contains(n)), "{stderr}");
    assert_nothing_left(&cluster, &target);
    assert!(succeeds("umount", &[&target]), "the mount is busy");
}

/// On the third host the target's path is a tmpfs (mounted in that host's namespace only, as
/// a host where the shared file system is not mounted): every rank exits non-zero naming rank
/// 2 on that host, and no rank's directory is left in the shared target.
#[test]
fn a_host_whose_target_is_another_file_system_stops_every_rank_naming_it() {
    let Some(_turn) = hosts_turn() else { return };
    let fs = LoopFs::new(256 << 20, "ext4", "defaults");
    let target = fs.target();
    let mount = format!("mount -t tmpfs -o size=64m bakeoff-test-other {target}");
    let cluster = Cluster::new(4, &[(2, mount)]);
    let work = "size=16m,runtime=2s,ramp_time=0";
    let out = (cluster.mpirun(4))
        .args(ranks_run(&target, &["--set", work, "--warm", "--quiet"]))
        .output()
        .unwrap();
    assert!(!out.status.success(), "{}", text(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let culprit = format!("rank 2 on {}", cluster.hosts[2]);
    for (rank, host) in cluster.hosts.iter().enumerate() {
        let said = format!("bakeoff: error: rank {rank} on {host}: ");
        let line = (stderr.lines().find(|l| l.starts_with(&said)))
            .unwrap_or_else(|| panic!("rank {rank} said nothing:\n{stderr}"));
        assert!(
            line.contains(&culprit) && line.contains("is not the directory rank 0 sees"),
            "{line}"
        );
    }
    assert_nothing_left(&cluster, &target);
}
