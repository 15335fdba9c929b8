//! Headline figures mean what their names say, shown on real runs whose physics is known
//! (root, loop devices the tests create; in CI for real): CPU per operation excludes other
//! processes and the kernel's work for another file system's writes, a partition is counted as
//! itself, buffered writes the page cache absorbed are
//! named, and a run on tmpfs starts warm rather than "cold".

mod common;
use bakeoff_testkit::command::KillOnDrop;
use bakeoff_testkit::loop_device::{mkfs, Attach, Image, LoopDevice, LoopFs, Mount};
use bakeoff_testkit::privileged_turn;
use common::{fig, finding_ids, run_json, run_on, Scene};
use std::path::Path;
use std::process::{Command, Stdio};

/// `yes > /dev/null` pinned to CPU 0: another process competing with the run.
fn start_hog() -> KillOnDrop {
    let child = Command::new("taskset")
        .args(["-c", "0", "yes"])
        .stdout(Stdio::null())
        .spawn()
        .expect("taskset yes");
    KillOnDrop(child)
}

#[test]
fn cpu_per_operation_leaves_out_a_cpu_hog_and_warns() {
    let Some(_turn) = privileged_turn() else {
        return;
    };
    let stack = LoopFs::new(512 << 20, "ext4", "noatime");
    let mnt = stack.target();
    let run = || run_on(&mnt, "randread", "bs=8k,direct=true,size=128m,runtime=3s");
    let quiet = run();
    let (busy, hog_cpus) = {
        let hog = start_hog();
        std::thread::sleep(std::time::Duration::from_millis(200));
        let (pid, t0) = (hog.0.id(), std::time::Instant::now());
        let before = process_cpu_us(pid);
        let busy = run();
        let held = process_cpu_us(pid) - before;
        (busy, held / t0.elapsed().as_micros() as f64)
    };
    // The independent instrument: the hog's own CPU time in /proc, over the window.
    let split = &busy["cpu"]["split"];
    let us = |key: &str| {
        split[key]
            .as_f64()
            .unwrap_or_else(|| panic!("{key}: {split}"))
    };
    let hog_us = hog_cpus * busy["measured_ns"].as_f64().unwrap() / 1e3;
    assert!(
        hog_cpus > 0.5 && us("other_us") >= 0.8 * hog_us,
        "the hog held {hog_cpus:.2} CPUs, {hog_us:.0} µs of the window; other_us {}",
        us("other_us")
    );
    // Were the hog's time charged to the run, the figure would rise by its time per operation.
    // It may move less than that either way: CI runs gave 33.07 µs alone and 18.91 µs beside
    // the hog, and 23.69 µs and 47.13 µs (this VM's host is shared: the figure alone spreads
    // that much), so the bound is half the hog's share, not the figure alone.
    let (a, b) = (fig(&quiet, "cpu_us_per_op"), fig(&busy, "cpu_us_per_op"));
    let ops = (us("tool_us") + us("daemons_us") + us("kernel_us")) / b;
    let hog_per_op = hog_us / ops;
    assert!(
        b > 0.0 && b < a + 0.5 * hog_per_op,
        "CPU per operation {a:.2} µs alone, {b:.2} µs beside a hog whose time per operation \
         is {hog_per_op:.2} µs"
    );
    let other = fig(&busy, "cpu_other_pct");
    assert!(other > 30.0, "the hog is one of two CPUs: other {other}%");
    assert!(fig(&quiet, "cpu_other_pct") < 10.0);
    assert!(finding_ids(&busy).contains(&"cpu_contention".to_string()));
    assert!(!finding_ids(&quiet).contains(&"cpu_contention".to_string()));
    assert!(us("kernel_us") > 0.0, "{split}");
}

/// A process's user and system CPU time so far, in µs, from `/proc/PID/stat`.
fn process_cpu_us(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("/proc/PID/stat");
    // Fields after the command's closing parenthesis: state is field 3, utime 14, stime 15.
    let after = &stat[stat.rfind(')').expect("(comm)") + 2..];
    let field = |n: usize| after.split(' ').nth(n - 3).unwrap().parse::<f64>().unwrap();
    let tck = Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .expect("getconf CLK_TCK");
    let per_second: f64 = String::from_utf8_lossy(&tck.stdout).trim().parse().unwrap();
    (field(14) + field(15)) / per_second * 1e6
}

/// `dd` writing 256 MiB through the page cache into `dir` and syncing it, over and over: an
/// unrelated process's heavy buffered writes on another file system (its own loop device).
fn start_writer(dir: &str) -> KillOnDrop {
    let script = format!(
        "while true; do dd if=/dev/zero of={dir}/hog bs=1M count=256 conv=fsync 2>/dev/null; done"
    );
    let child = Command::new("sh")
        .args(["-c", &script])
        .stdout(Stdio::null())
        .spawn()
        .expect("sh -c dd");
    KillOnDrop(child)
}

/// Asks the kernel for a zero wake-up latency (`/dev/cpu_dma_latency`) until the file is
/// closed: idle CPUs poll rather than halt.
fn keep_cpus_awake() -> std::fs::File {
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/cpu_dma_latency")
        .expect("open /dev/cpu_dma_latency");
    f.write_all(&0i32.to_ne_bytes())
        .expect("write /dev/cpu_dma_latency");
    f
}

/// The kernel's CPU charged to the run, per operation: the split's kernel part over the
/// operations that the record's CPU per operation divides by.
fn kernel_us_per_op(record: &serde_json::Value) -> f64 {
    let split = &record["cpu"]["split"];
    let part = |key: &str| {
        split[key]
            .as_f64()
            .unwrap_or_else(|| panic!("{key} in {split}"))
    };
    let charged = part("tool_us") + part("kernel_us") + part("daemons_us");
    let operations = charged / fig(record, "cpu_us_per_op");
    part("kernel_us") / operations
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

#[test]
fn cpu_per_operation_leaves_out_another_file_systems_writes() {
    let Some(_turn) = privileged_turn() else {
        return;
    };
    // The run's stack over an image in memory, so that the writer competes for CPU and the
    // kernel's shared work (pooled workers, the block soft interrupt) but not for the disk.
    let how = Attach {
        direct_io: false,
        partscan: false,
    };
    let device = LoopDevice::attach(Image::sparse_in(Path::new("/dev/shm"), 512 << 20), how);
    mkfs("ext4", device.path());
    let stack = Mount::new(device.path(), "noatime");
    // The writer's file system on a buffered loop device over the disk: its loop workers copy
    // every page, ext4 converts its extents and the disk's writeback writes them, all in the
    // kernel's pooled workers and interrupts.
    let other_device = LoopDevice::attach(Image::sparse(1 << 30), how);
    mkfs("ext4", other_device.path());
    let other = Mount::new(other_device.path(), "noatime");
    let mnt = stack.target();
    let run = || {
        // At one offered rate both sides sustain: the costs are spread over the same operations.
        let set = "bs=8k,direct=true,size=128m,runtime=3s,rate_iops=3000";
        let r = run_on(&mnt, "randread", set);
        eprintln!(
            "split {}; read IOPS {}",
            r["cpu"]["split"], r["summary"]["read_iops"]
        );
        (kernel_us_per_op(&r), r)
    };
    // The CPUs are kept from halting when idle (as `cyclictest` does): on this VM a halted
    // virtual CPU's wake-up makes a lightly loaded run's every operation dearer, a physics of
    // the machine that is not the question here (measured, release build, 3,000 IOPS: 67-70
    // µs per operation alone and 51-57 beside the writer with halts; 40-54 and 50-51 without).
    let _no_halts = keep_cpus_awake();
    // Alternated, so a drift of the machine falls on both sides; medians of three.
    let alternated = || {
        let (mut alone, mut beside) = (Vec::new(), Vec::new());
        let mut last_busy = None;
        for _ in 0..3 {
            alone.push(run().0);
            let _writer = start_writer(&other.target());
            std::thread::sleep(std::time::Duration::from_millis(500));
            let (b, r) = run();
            beside.push(b);
            last_busy = Some(r);
        }
        let (a, b) = (median(alone.clone()), median(beside.clone()));
        eprintln!("kernel µs/op alone {alone:?}, beside the writer {beside:?}");
        (a, b, last_busy)
    };
    // The kernel's share is what attribution decides; the tool's own threads' CPU is the
    // kernel's per-thread account and does rise beside a busy neighbour (caches, a shared
    // virtual CPU: a CI run, debug build, other tests running, measured 3.6-4.5 % of the CPUs
    // alone and 4.7-5.2 % beside), which is a real cost and not the question here. The old
    // method, charging all the kernel's pooled work to the run, measured +79 % CPU per
    // operation beside the writer (quiet, release build). Up to two more tries: a CI run
    // measured +30 % once (medians 7.59 and 9.83 µs, alone 7.05-8.90, beside 8.85-10.05).
    let within = |a: f64, b: f64| (b / a - 1.0).abs() <= 0.25;
    let (mut a, mut b, mut last_busy) = alternated();
    for _ in 0..2 {
        if within(a, b) {
            break;
        }
        (a, b, last_busy) = alternated();
    }
    assert!(
        within(a, b),
        "kernel CPU per operation {a:.2} µs alone, {b:.2} µs beside another file system's writes"
    );
    let busy = last_busy.unwrap();
    let split = &busy["cpu"]["split"];
    // The kernel's work was traced (root, eBPF), and the writer's is visible, as other.
    assert_eq!(split["kernel_traced"], true, "{split}");
    assert!(split["other_us"].as_f64().unwrap() > 0.0, "{split}");
    assert!(split["kernel_us"].as_f64().unwrap() > 0.0, "{split}");
    drop((stack, other));
    drop((device, other_device));
}

/// A loop device with two GPT partitions; ext4 on the first, mounted.
struct Partitioned {
    mount: Mount,
    device: LoopDevice,
}

impl Partitioned {
    fn new() -> Partitioned {
        let image = Image::sparse(512 << 20);
        let mut sfdisk = Command::new("sfdisk")
            .args(["-q", image.path().to_str().unwrap()])
            .stdin(Stdio::piped())
            .spawn()
            .expect("sfdisk (package fdisk)");
        use std::io::Write;
        let table = "label: gpt\n,200M\n,200M\n";
        let mut stdin = sfdisk.stdin.take().unwrap();
        stdin.write_all(table.as_bytes()).unwrap();
        drop(stdin);
        assert!(sfdisk.wait().unwrap().success());
        let how = Attach {
            direct_io: true,
            partscan: true,
        };
        let device = LoopDevice::attach(image, how);
        device.partition(2);
        let p1 = device.partition(1);
        mkfs("ext4", &p1);
        let mount = Mount::new(&p1, "noatime");
        Partitioned { mount, device }
    }
}

#[test]
fn a_partition_is_counted_as_itself_not_its_disk() {
    let Some(_turn) = privileged_turn() else {
        return;
    };
    let p = Partitioned::new();
    let p2 = p.device.partition(2).display().to_string();
    // Writes to the other partition throughout the run: they are not the stack's.
    let mut dd = Command::new("dd")
        .args([
            "if=/dev/zero",
            &format!("of={p2}"),
            "bs=1M",
            "count=150",
            "oflag=direct",
        ])
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let v = run_json(&[
        "run",
        "randread",
        "--target",
        &p.mount.target(),
        "--warm",
        "--set",
        "bs=8k,direct=true,size=64m,ramp_time=0,runtime=2s",
    ]);
    assert!(dd.wait().unwrap().success());
    let dev = &v["devices"][0];
    assert_eq!(dev["name"], format!("{}p1", p.device.name()), "{dev}");
    assert_eq!(dev["role"], "stack");
    let per_op = fig(&v, "device_reads_per_op");
    assert!(
        (0.95..=1.1).contains(&per_op),
        "{per_op} device reads per read"
    );
    let written = dev["write_bytes"].as_u64().unwrap();
    assert!(
        written < 4 << 20,
        "{written} bytes written to the read-only workload's partition: p2's dd leaked in"
    );
}

#[test]
fn buffered_writes_absorbed_by_the_page_cache_are_named() {
    let Some(_turn) = privileged_turn() else {
        return;
    };
    let stack = LoopFs::new(1024 << 20, "ext4", "noatime");
    let mnt = stack.target();
    // 256 MiB of buffered writes in 2 s on a machine with GiBs free: most stay dirty.
    let v = run_on(&mnt, "randwrite", "bs=64k,size=256m,ramp_time=0,runtime=2s");
    let amp = fig(&v, "write_amplification");
    let ids = finding_ids(&v);
    if amp < 0.5 {
        assert!(
            ids.contains(&"writes_absorbed".to_string()),
            "amp {amp}: {ids:?}"
        );
    }
    // Direct writes reach the device: no such finding.
    let d = run_on(
        &mnt,
        "randwrite",
        "bs=64k,size=256m,ramp_time=0,runtime=2s,direct=true",
    );
    assert!(fig(&d, "write_amplification") > 0.9);
    assert!(!finding_ids(&d).contains(&"writes_absorbed".to_string()));
    assert!(
        amp < 0.5,
        "buffered writes reached the device at once: amplification {amp}"
    );
}

#[test]
fn a_mirror_names_its_copies_in_the_write_amplification() {
    let Some(_turn) = privileged_turn() else {
        return;
    };
    let v = Scene::new().run_json(&[
        "run",
        "randwrite",
        "--stack",
        "btrfs:devices=2,metadata=raid1,profile=raid1",
        "--size",
        "512m",
        "--set",
        "bs=64k,direct=true,size=128m,ramp_time=0,runtime=2s",
    ]);
    assert_eq!(v["stack"]["redundancy"], 2.0, "{}", v["stack"]);
    let (total, per_copy) = (
        fig(&v, "write_amplification"),
        fig(&v, "write_amplification_per_copy"),
    );
    assert!(total >= 1.9, "two copies of every byte: {total}");
    assert!((per_copy - total / 2.0).abs() < 1e-9);
    assert!(
        finding_ids(&v).contains(&"mirrored_writes".to_string()),
        "{:?}",
        finding_ids(&v)
    );
}

#[test]
fn slob_readers_keep_iodepth_ios_in_flight() {
    let Some(_turn) = privileged_turn() else {
        return;
    };
    let stack = LoopFs::new(512 << 20, "ext4", "noatime");
    let mnt = stack.target();
    let run = |depth: u32| {
        let set = format!(
            "readers=2,writers=0,engine=io_uring,iodepth={depth},direct=true,data_size=256m,\
             redo_size=4m,ramp_time=1s,runtime=3s"
        );
        run_on(&mnt, "slob", &set)
    };
    let (one, eight) = (run(1), run(8));
    let queue = |v: &serde_json::Value| v["devices"][0]["avg_queue_depth"].as_f64().unwrap();
    assert!(
        queue(&eight) >= 4.0,
        "device queue depth {} at iodepth=8",
        queue(&eight)
    );
    assert!(
        queue(&one) <= 2.5,
        "device queue depth {} at iodepth=1",
        queue(&one)
    );
    // Whether more in flight gives more IOPS is the host's business (a loop device over this
    // VM's virtual disk gave 1.93x on one quiet CI run, 1.41x on another and 0.87x on a third),
    // not bakeoff's. bakeoff's own figures must agree with the queue it claims to keep: by
    // Little's law, reads per second times their mean latency is the number in flight, 2 readers
    // x iodepth while the readers refill at once.
    let in_flight = |v: &serde_json::Value| {
        let roles = v["roles"].as_array().unwrap();
        (roles.iter())
            .flat_map(|r| r["ops"].as_array().unwrap())
            .filter(|o| o["kind"] == "read")
            .map(|o| o["iops"].as_f64().unwrap() * o["lat"]["mean_ns"].as_f64().unwrap() / 1e9)
            .sum::<f64>()
    };
    let (l1, l8) = (in_flight(&one), in_flight(&eight));
    assert!(
        (1.0..=2.2).contains(&l1),
        "{l1:.2} reads in flight at iodepth=1"
    );
    assert!(
        (12.0..=16.5).contains(&l8),
        "{l8:.2} reads in flight at iodepth=8"
    );
}

#[test]
fn the_redo_lands_on_the_log_stack() {
    let Some(_turn) = privileged_turn() else {
        return;
    };
    let v = Scene::new().run_json(&[
        "run",
        "slob",
        "--stack",
        "ext4",
        "--log-stack",
        "xfs",
        "--size",
        "512m",
        "--set",
        "readers=1,writers=4,data_size=128m,redo_size=16m,direct=true,ramp_time=0,runtime=2s",
    ]);
    assert_eq!(v["log_stack"]["kind"], "xfs", "{}", v["log_stack"]);
    let devices = v["devices"].as_array().unwrap();
    let role = |r: &str| devices.iter().find(|d| d["role"] == r).unwrap().clone();
    let (data, log) = (role("stack"), role("log"));
    let app = |kind: &str| -> u64 {
        let ops = v["ops"].as_array().unwrap();
        ops.iter()
            .find(|o| o["kind"] == kind)
            .map_or(0, |o| o["bytes"].as_u64().unwrap())
    };
    let (redo, blocks) = (app("log_write") as f64, app("write") as f64);
    let log_written = log["write_bytes"].as_u64().unwrap() as f64;
    assert!(
        log_written >= 0.9 * redo,
        "log device {log_written} bytes for {redo} of redo"
    );
    // The data device carries the data blocks DBWR wrote, not the redo.
    let data_written = data["write_bytes"].as_u64().unwrap() as f64;
    assert!(
        (0.9..1.3).contains(&(data_written / blocks)),
        "data device {data_written} bytes for {blocks} of data blocks"
    );
    assert!(fig(&v, "log_write_amplification") >= 0.9);
}

#[test]
fn a_run_on_tmpfs_does_not_drop_caches_and_says_so() {
    // Dropping caches cannot empty tmpfs; it only moves the target's pages to the inactive
    // list, so a "cold" run would measure their re-activation on the LRU lock.
    let Some(_turn) = privileged_turn() else {
        return;
    };
    let dir = tempfile::tempdir_in("/dev/shm").unwrap();
    let out_dir = common::tmp();
    let json = out_dir.path().join("run.json");
    let out = Command::new(assert_cmd::cargo::cargo_bin("bakeoff"))
        .args(["run", "randread", "--target", dir.path().to_str().unwrap()])
        .args(["--set", "bs=4k,size=16m,runtime=200ms", "--json"])
        .arg(&json)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("the target is on tmpfs") && stderr.contains("caches are not dropped"),
        "{stderr}"
    );
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(v["cold"], false, "{}", v["cold"]);
    assert_eq!(v["target"]["filesystem"], "tmpfs");
}
