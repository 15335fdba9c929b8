//! Measurements checked against physics on loop devices the tests create (root; in CI for
//! real). Direct I/O must reach the device one for one; a re-read of a small file must come
//! from the page cache; every fdatasync must carry a flush to the device.

mod common;
use bakeoff_testkit::loop_device::{device_writes, LoopDevice, LoopFs};
use bakeoff_testkit::{privileged_turn, process_state_dir, scratch_dir};
use common::{fig, run_json, run_on};

#[test]
fn direct_reads_on_ext4_reach_the_device_one_for_one() {
    let Some(_turn) = privileged_turn() else {
        return;
    };
    let stack = LoopFs::new(512 << 20, "ext4", "noatime");
    let mnt = stack.target();
    let v = run_on(
        &mnt,
        "randread",
        "bs=8k,direct=true,size=256m,ramp_time=0,runtime=3s",
    );
    let dev = &v["devices"][0];
    assert_eq!(
        dev["name"],
        stack.device.name(),
        "the loop device is the stack's disk"
    );
    assert_eq!(dev["loop_dio"], true);
    let per_op = fig(&v, "device_reads_per_op");
    assert!(
        (0.95..=1.1).contains(&per_op),
        "device reads per application read {per_op}"
    );
    let size = fig(&v, "avg_device_read_size_bytes");
    assert!(
        (size - 8192.0).abs() < 8192.0 * 0.02,
        "average device read {size} bytes"
    );
    assert!((0.95..=1.1).contains(&fig(&v, "read_amplification")));
    assert!(fig(&v, "reads_not_from_device_pct") < 5.0);
}

#[test]
fn direct_reads_on_the_raw_loop_device_reach_it_one_for_one() {
    let Some(_turn) = privileged_turn() else {
        return;
    };
    let device = LoopDevice::new(256 << 20);
    let v = run_on(
        device.node(),
        "randread",
        "bs=8k,direct=true,size=128m,ramp_time=0,runtime=2s",
    );
    assert_eq!(v["target"]["kind"], "block_device");
    let per_op = fig(&v, "device_reads_per_op");
    assert!(
        (0.95..=1.1).contains(&per_op),
        "device reads per application read {per_op}"
    );
    assert!((fig(&v, "avg_device_read_size_bytes") - 8192.0).abs() < 100.0);
}

#[test]
fn a_second_buffered_pass_is_served_from_the_page_cache() {
    let Some(_turn) = privileged_turn() else {
        return;
    };
    let stack = LoopFs::new(256 << 20, "ext4", "noatime");
    let mnt = stack.target();
    let set = "rw=read,bs=128k,size=32m,ramp_time=0,runtime=2s";
    let first = run_on(&mnt, "randread", set);
    assert!(
        fig(&first, "device_read_iops") > 0.0,
        "the first pass reads the device"
    );
    let second = run_json(&["run", "randread", "--warm", "--target", &mnt, "--set", set]);
    let hits = fig(&second, "reads_not_from_device_pct");
    assert!(hits > 99.0, "second pass cache hits {hits}%");
}

#[test]
fn page_cache_hits_are_pages_the_kernel_did_not_add() {
    let Some(_turn) = privileged_turn() else {
        return;
    };
    let stack = LoopFs::new(1280 << 20, "ext4", "noatime");
    let mnt = stack.target();
    let hot = format!("{mnt}/hot");
    std::fs::create_dir(&hot).unwrap();
    // A sequential pass brings the whole 64 MiB file into the page cache; random reads then
    // find every page there.
    let warm = |set: &str| run_json(&["run", "randread", "--warm", "--target", &hot, "--set", set]);
    warm("rw=read,bs=1m,size=64m,ramp_time=0,runtime=1s");
    let hits = warm("bs=4k,size=64m,ramp_time=0,runtime=2s");
    assert!(hits["ops"][0]["ops"].as_u64().unwrap() > 10_000);
    let pct = fig(&hits, "page_cache_hit_pct");
    assert!(
        pct >= 95.0,
        "warm 4 KiB random reads: {pct}% page-cache hits"
    );

    // After caches are dropped, a sequential pass over 1 GiB adds every page it reads
    // (readahead adds them before the reader looks them up): next to no hits. On a quiet
    // machine the pass wraps around the file within its second, and every later round of
    // the file is hits: the kernel adds each page once.
    let cold = run_on(
        &mnt,
        "randread",
        "rw=read,bs=128k,size=1g,ramp_time=0,runtime=1s",
    );
    let read = cold["ops"][0]["bytes"].as_f64().unwrap();
    let added = cold["memory"]["page_cache_added_pages"].as_f64().unwrap() * 4096.0;
    let first_round = read.min((1u64 << 30) as f64);
    assert!(
        added >= first_round * 0.95 && added <= first_round * 1.05 + (4 << 20) as f64,
        "{added} bytes added for {read} read (first round of the file {first_round})"
    );
    let pct = fig(&cold, "page_cache_hit_pct");
    let later_rounds = 100.0 * (1.0 - first_round / read);
    assert!(
        (pct - later_rounds).abs() <= 5.0,
        "cold sequential pass: {pct}% hits, expected {later_rounds:.1}% ({read} bytes read)"
    );
}

/// On a fresh machine tracefs is not mounted (`/sys/kernel/tracing` is an empty directory):
/// bakeoff as root mounts it, as perf does, and counts; anyone else gets the figure null with
/// the reason. Checked in a private mount namespace where tracefs was unmounted first, so
/// neither a hand-made mount nor this test's own mount can hide or leak anything.
#[test]
fn tracefs_is_mounted_by_root_where_a_fresh_machine_lacks_it() {
    let Some(_turn) = privileged_turn() else {
        return;
    };
    let dir = scratch_dir();
    std::fs::set_permissions(
        dir.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o777),
    )
    .unwrap();
    let d = dir.path().display();
    let bin = assert_cmd::cargo::cargo_bin("bakeoff");
    let run = |json: &str| {
        format!(
            "{} run randread --warm --target {d} --set engine=psync,size=8m,ramp_time=0,runtime=1s \
             --quiet --json {d}/{json}",
            bin.display()
        )
    };
    let mounted = "grep -q ' /sys/kernel/tracing ' /proc/self/mountinfo";
    let script = format!(
        "while umount /sys/kernel/tracing 2>/dev/null; do :; done
         {mounted} && exit 90
         BAKEOFF_STATE_DIR={d} setpriv --reuid 65534 --regid 65534 --clear-groups {} || exit 91
         {mounted} && exit 92
         {} || exit 93
         {mounted} || exit 94",
        run("nobody.json"),
        run("root.json"),
    );
    let _ = process_state_dir();
    let out = std::process::Command::new("unshare")
        .args([
            "--mount",
            "--propagation",
            "private",
            "/bin/sh",
            "-c",
            &script,
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{:?}: {stderr}", out.status);
    let record = |name: &str| -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(dir.path().join(name)).unwrap()).unwrap()
    };
    let nobody = record("nobody.json");
    let why = nobody["memory"]["page_cache_unavailable"].as_str().unwrap();
    assert!(why.contains("only root can mount it"), "{why}");
    assert!(nobody["summary"]["page_cache_hit_pct"].is_null());
    let root = record("root.json");
    assert!(root["memory"]["page_cache_unavailable"].is_null(), "{root}");
    assert!(root["memory"]["page_cache_added_pages"].is_u64(), "{root}");
    assert!(root["summary"]["page_cache_hit_pct"].is_number(), "{root}");
}

#[test]
fn every_fdatasync_carries_a_flush_to_the_device() {
    let Some(_turn) = privileged_turn() else {
        return;
    };
    let stack = LoopFs::new(256 << 20, "ext4", "noatime");
    let mnt = stack.target();
    let v = run_on(
        &mnt,
        "randwrite",
        "bs=4k,size=64m,fdatasync=1,ramp_time=0,runtime=2s",
    );
    let syncs = v["roles"][0]["ops"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["kind"] == "sync")
        .unwrap()["ops"]
        .as_u64()
        .unwrap();
    let flushes = v["devices"][0]["flush_ops"]
        .as_u64()
        .expect("kernel reports flushes");
    assert!(syncs > 50, "{syncs} syncs");
    assert!(
        flushes + 2 >= syncs,
        "{flushes} device flushes for {syncs} fdatasyncs"
    );
}

#[test]
fn a_mounted_loop_device_is_refused_and_not_written() {
    let Some(_turn) = privileged_turn() else {
        return;
    };
    let stack = LoopFs::new(128 << 20, "ext4", "noatime");
    let writes = || device_writes(&stack.device.name());
    let before = writes();
    let out = std::process::Command::new(assert_cmd::cargo::cargo_bin("bakeoff"))
        .args([
            "run",
            "randwrite",
            "--target",
            stack.device.node(),
            "--set",
            "size=16m,ramp_time=0,runtime=1s",
        ])
        .output()
        .unwrap();
    // The safety gate's refusal: exit 5, as for --device (README, exit codes).
    assert_eq!(out.status.code(), Some(5));
    assert!(String::from_utf8_lossy(&out.stderr).contains("mounted on"));
    assert_eq!(writes(), before, "the device's write counter did not move");
}

/// Runs `randread` on a fresh stack and returns its record.
fn on_stack(spec: &str, set: &str) -> serde_json::Value {
    process_state_dir();
    let images = scratch_dir();
    let dir = images.path().to_str().unwrap().to_string();
    run_json(&[
        "run", "randread", "--stack", spec, "--images", &dir, "--size", "1g", "--set", set,
    ])
}

#[test]
fn zfs_records_larger_or_misaligned_to_the_io_multiply_device_reads() {
    let Some(_turn) = privileged_turn() else {
        return;
    };
    // One test: the zfs-fuse daemon is one per machine, so these run one after the other.
    let big = on_stack(
        "zfs:recordsize=128k,primarycache=metadata,vdev_cache=0",
        "bs=8k,size=128m,ramp_time=0,runtime=3s",
    );
    assert_eq!(big["stack"]["properties"]["recordsize"], "128K");
    let amp = fig(&big, "read_amplification");
    assert!(
        (14.0..=17.0).contains(&amp),
        "128 KiB records under 8 KiB reads: amplification {amp}"
    );
    let spec = "zfs:recordsize=8k,primarycache=metadata,vdev_cache=0";
    let aligned = fig(
        &on_stack(spec, "bs=8k,size=256m,ramp_time=0,runtime=3s"),
        "device_read_bytes_per_op",
    );
    let shifted = fig(
        &on_stack(spec, "bs=8k,size=256m,offset=4k,ramp_time=0,runtime=3s"),
        "device_read_bytes_per_op",
    );
    let ratio = shifted / aligned;
    assert!(
        (1.8..=2.2).contains(&ratio),
        "offset=4k: {shifted} vs aligned {aligned} device bytes per read"
    );
}
