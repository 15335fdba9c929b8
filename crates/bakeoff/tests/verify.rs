//! `verify=` through the command line: a verified run passes and its record says what was
//! checked; what cannot verify exits 2 up front, naming the key and why, with nothing laid
//! out; a block damaged on disk while the run runs fails it with exit 4, naming the offset.

mod common;
use common::{bakeoff, run_on, tmp};
use std::os::unix::fs::FileExt;
use std::time::{Duration, Instant};

#[test]
fn a_verified_run_passes_and_its_record_says_what_was_checked() {
    let d = tmp();
    let t = d.path().to_str().unwrap();
    let set = "verify=crc32c,bs=8k,size=4m,runtime=1s,ramp_time=0";
    let r = run_on(t, "randwrite", set);
    assert_eq!(r["status"], "completed");
    assert_eq!(r["plan"]["verify"], "crc32c");
    assert_eq!(r["plan"]["filesets"][0]["verify"]["block_bytes"], 8192);
    let v = &r["verify"];
    assert_eq!(v["mode"], "crc32c");
    assert_eq!(v["filesets"][0]["blocks"], 512);
    assert_eq!(v["final_pass"]["blocks_checked"], 512);
    assert_eq!(v["final_pass"]["complete"], true);
    assert_eq!(v["mismatches"], 0);
    assert!(v["blocks_written"].as_u64().unwrap() > 0, "{v}");
    // A run without verify has no section, and lays the data out anew rather than reuse
    // blocks with headers.
    let plain = run_on(t, "randwrite", "bs=8k,size=4m,runtime=200ms,ramp_time=0");
    assert!(plain.get("verify").is_none());
    assert_eq!(plain["dataset"]["reused"], false);
}

#[test]
fn what_cannot_verify_exits_2_up_front_naming_the_key_and_why() {
    let d = tmp();
    let t = d.path().to_str().unwrap();
    let cases: [(&[&str], &str); 6] = [
        (&["fileserver", "--set", "verify=crc32c"], "file operations"),
        (
            &["randwrite", "--set", "verify=crc32c,engine=null"],
            "null engine",
        ),
        (
            &["randwrite", "--set", "verify=sha256,bs=32"],
            "64-byte header",
        ),
        (
            &["randwrite", "--set", "verify=crc32c,clients=2"],
            "clients=2",
        ),
        (&["tpcc", "--set", "verify=crc32c"], "page checksums"),
        (
            &[
                "randread",
                "--set",
                "verify=crc32c",
                "--ramp",
                "start=100,step=x2,until=p99>10ms",
            ],
            "ramp",
        ),
    ];
    for (args, why) in cases {
        let out = bakeoff()
            .arg("run")
            .args(args)
            .args(["--target", t])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(
            stderr.contains("verify") && stderr.contains(why),
            "{args:?}: {stderr}"
        );
    }
    assert_eq!(
        std::fs::read_dir(d.path()).unwrap().count(),
        0,
        "nothing was laid out"
    );
    let dry = bakeoff()
        .args(["run", "randwrite", "--dry-run", "--target", t])
        .args(["--set", "verify=sha256,bs=2k"])
        .output()
        .unwrap();
    assert!(dry.status.success());
    let plan = String::from_utf8_lossy(&dry.stdout);
    assert!(
        plan.contains("verify   sha256: data in blocks of 2 KiB"),
        "{plan}"
    );
}

#[test]
fn a_block_damaged_while_the_run_runs_fails_it_with_exit_4_naming_the_offset() {
    let d = tmp();
    let json = d.path().join("run.json");
    let data = d.path().join("data");
    std::fs::create_dir(&data).unwrap();
    // One sequential reader at 2 reads a second: in 3 s it reads the first few blocks, never
    // the last, which only the final pass reads back.
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("bakeoff"))
        .args(["run", "read", "--quiet", "--target", data.to_str().unwrap()])
        .args([
            "--set",
            "verify=crc32c,bs=4k,size=256k,rate_iops=2,runtime=3s,ramp_time=0",
        ])
        .args(["--json", json.to_str().unwrap()])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The manifest is written once the layout is complete and synced.
    let manifest = data.join(".bakeoff-dataset.json");
    let start = Instant::now();
    while !manifest.exists() {
        assert!(start.elapsed() < Duration::from_secs(60), "no layout");
        std::thread::sleep(Duration::from_millis(20));
    }
    let last = 63 * 4096;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(data.join("bakeoff-data.0"))
        .unwrap();
    let mut byte = [0u8];
    file.read_exact_at(&mut byte, last + 777).unwrap();
    file.write_all_at(&[!byte[0]], last + 777).unwrap();
    file.sync_all().unwrap();
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(4), "{stderr}");
    assert!(
        stderr.contains(&format!("block at offset {last} of")) && stderr.contains("bakeoff-data.0"),
        "{stderr}"
    );
    assert!(stderr.contains("expected an intact block"), "{stderr}");
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(r["status"], "failed");
    let v = &r["verify"];
    assert_eq!(v["mismatches"], 1);
    assert_eq!(v["first_mismatches"][0]["found_by"], "final_pass");
    assert_eq!(v["first_mismatches"][0]["offset_bytes"], last);
    assert_eq!(v["first_mismatches"][0]["fault"], "checksum");
}
