//! Black-box tests of the command line: exit codes, messages, outputs. They use the null engine
//! or tiny datasets in temporary directories, so they run anywhere in seconds.

mod common;
use common::{bakeoff, tmp};
use predicates::prelude::*;
use std::time::{Duration, Instant};

#[test]
fn workloads_lists_and_shows() {
    bakeoff()
        .arg("workloads")
        .assert()
        .success()
        .stdout(predicate::str::contains("slob").and(predicate::str::contains("oltp")));
    bakeoff()
        .args(["workloads", "show", "oltp"])
        .assert()
        .success()
        .stdout(predicate::str::contains("shadows").and(predicate::str::contains("[[role]]")));
    bakeoff()
        .args(["workloads", "show", "randread"])
        .assert()
        .success()
        .stdout(predicate::str::contains("rate_iops"));
}

/// The names `bakeoff workloads` lists: the first word of each line before the blank one.
fn listed_names() -> Vec<String> {
    let out = bakeoff().arg("workloads").output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    text.lines()
        .take_while(|l| !l.is_empty())
        .map(|l| l.split_whitespace().next().unwrap().to_string())
        .collect()
}

#[test]
fn every_list_of_workloads_names_every_workload() {
    let names = listed_names();
    for n in ["randread", "nfsmix", "tpcc", "pgbench", "tpch", "build"] {
        assert!(names.iter().any(|x| x == n), "{n} not in {names:?}");
    }
    let d = tmp();
    let t = d.path().to_str().unwrap();
    let help = bakeoff().args(["run", "--help"]).output().unwrap();
    let help = String::from_utf8(help.stdout).unwrap();
    let error = bakeoff()
        .args(["run", "nosuch", "--target", t])
        .output()
        .unwrap();
    assert_eq!(error.status.code(), Some(2));
    let error = String::from_utf8(error.stderr).unwrap();
    let compare = bakeoff().args(["compare", "--help"]).output().unwrap();
    let compare = String::from_utf8(compare.stdout).unwrap();
    let bash = bakeoff().args(["completions", "bash"]).output().unwrap();
    let bash = String::from_utf8(bash.stdout).unwrap();
    let words = |text: &str| -> Vec<String> {
        text.split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .map(str::to_string)
            .collect()
    };
    for (what, text) in [
        ("run --help", &help),
        ("the unknown-workload error", &error),
        ("compare --help", &compare),
        ("bash completions", &bash),
    ] {
        let words = words(text);
        for n in &names {
            assert!(words.contains(n), "{what} does not name {n}:\n{text}");
        }
    }
}

#[test]
fn bad_settings_exit_2_and_name_the_key() {
    let d = tmp();
    let t = d.path().to_str().unwrap();
    bakeoff()
        .args(["run", "randread", "--target", t, "--set", "jobs=0"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "--set: jobs: '0' is out of range (allowed 1 to 4096)",
        ));
    bakeoff()
        .args(["run", "nosuch", "--target", t])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("unknown workload"));
    bakeoff()
        .args(["run", "slob", "--target", t, "--set", "iosize=8k"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("unknown key"));
    assert_eq!(
        std::fs::read_dir(d.path()).unwrap().count(),
        0,
        "nothing written before validation"
    );
}

#[test]
fn job_file_errors_point_at_the_line() {
    let d = tmp();
    let job = d.path().join("mine.toml");
    std::fs::write(&job, "rw = \"randread\"\n# comment\nbs = \"12q\"\n").unwrap();
    bakeoff()
        .args([
            "run",
            "--job",
            job.to_str().unwrap(),
            "--target",
            d.path().to_str().unwrap(),
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("mine.toml:3: bs:"));
}

#[test]
fn refused_targets_exit_3() {
    bakeoff()
        .args(["run", "randread", "--target", "/nonexistent/dir"])
        .assert()
        .code(3)
        .stderr(predicate::str::contains("/nonexistent/dir"));
    let root_disk = std::fs::read_to_string("/proc/self/mountinfo")
        .unwrap()
        .lines()
        .find(|l| l.split(' ').nth(4) == Some("/"))
        .and_then(|l| l.split(" - ").nth(1)?.split(' ').nth(1).map(str::to_string))
        .unwrap();
    if root_disk.starts_with("/dev/") && !root_disk.starts_with("/dev/loop") {
        bakeoff()
            .args(["run", "randread", "--target", &root_disk])
            .assert()
            .code(3)
            .stderr(predicate::str::contains("refusing block device"));
    }
}

#[test]
fn dry_run_prints_the_plan_and_touches_nothing() {
    let d = tmp();
    bakeoff()
        .args([
            "run",
            "oltp",
            "--dry-run",
            "--target",
            d.path().to_str().unwrap(),
            "--set",
            "shadows=20",
        ])
        .assert()
        .success()
        .stdout(predicate::str::contains("shadow: 20 threads on datafiles"));
    assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 0);
}

#[test]
fn json_and_timeseries_have_the_documented_fields() {
    let d = tmp();
    let (json, csv) = (d.path().join("r.json"), d.path().join("r.csv"));
    let data = d.path().join("data");
    std::fs::create_dir(&data).unwrap();
    bakeoff()
        .args([
            "run",
            "randread",
            "--quiet",
            "--target",
            data.to_str().unwrap(),
            "--set",
            "engine=null,size=4m,ramp_time=0,runtime=1500ms",
        ])
        .args([
            "--json",
            json.to_str().unwrap(),
            "--timeseries",
            csv.to_str().unwrap(),
            "--remove-data",
        ])
        .assert()
        .success()
        .stdout(predicate::str::contains("randread on"));
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(v["schema_version"], 2);
    assert_eq!(v["status"], "completed");
    let keys = [
        "read_iops",
        "write_iops",
        "read_mb_s",
        "write_mb_s",
        "read_lat_p50_us",
        "read_lat_p99_us",
        "write_lat_p99_us",
        "cpu_busy_pct",
        "cpu_us_per_op",
        "device_read_iops",
        "device_write_iops",
        "device_read_bytes_per_op",
        "device_write_bytes_per_op",
        "read_amplification",
        "write_amplification",
        "avg_device_read_size_bytes",
        "avg_device_write_size_bytes",
        "reads_not_from_device_pct",
    ];
    for k in keys {
        assert!(v["summary"].get(k).is_some(), "summary lacks {k}");
    }
    assert!(v["summary"]["read_iops"].as_f64().unwrap() > 1000.0);
    assert!(
        v["summary"]["write_iops"].is_null(),
        "no writes: null, not 0"
    );
    assert!(v["environment"]["kernel"].as_str().unwrap().len() > 1);
    let text = std::fs::read_to_string(&csv).unwrap();
    assert!(text.starts_with("t_s,measured,read_iops"));
    assert!(text.lines().count() >= 2, "{text}");
    assert_eq!(
        std::fs::read_dir(&data).unwrap().count(),
        0,
        "--remove-data removes the layout"
    );
}

#[test]
fn ctrl_c_stops_within_a_second_and_marks_the_run() {
    let d = tmp();
    let json = d.path().join("r.json");
    let bin = assert_cmd::cargo::cargo_bin("bakeoff");
    let mut child = std::process::Command::new(bin)
        .args([
            "run",
            "slob",
            "--quiet",
            "--warm",
            "--target",
            d.path().to_str().unwrap(),
        ])
        .args([
            "--set",
            "data_size=8m,redo_size=1m,ramp_time=0,runtime=60s",
            "--json",
            json.to_str().unwrap(),
        ])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Layout (9 MiB) and start take well under this; --warm skips dropping caches.
    std::thread::sleep(Duration::from_millis(2500));
    let sent = Instant::now();
    // Signal through the kill command, as a user at a terminal would.
    std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    let status = child.wait().unwrap();
    // The workers stop within milliseconds (strace: all 42 gone 13 ms after the signal); the
    // rest is the end of the run: the debug build's summaries, and detaching the kernel-work
    // tracer's tracepoints, each of which waits for an RCU grace period (0.92 s in all, alone;
    // a CI run with the binary's other tests on both CPUs took 2.3 s).
    assert!(
        sent.elapsed() < Duration::from_secs(3),
        "took {:?} to stop",
        sent.elapsed()
    );
    assert_eq!(status.code(), Some(130));
    let mut out = String::new();
    std::io::Read::read_to_string(&mut child.stdout.take().unwrap(), &mut out).unwrap();
    assert!(out.contains("INTERRUPTED"), "{out}");
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(v["status"], "interrupted");
    assert!(v["summary"]["read_iops"].as_f64().unwrap() > 0.0);
}

#[test]
fn compare_dry_run_prints_the_plan_estimate_and_disk() {
    let d = tmp();
    // Two directory stacks: a dry run now checks what building needs, and tmpfs needs root;
    // its own ledger and images directories, as the default ones need root too.
    let (other, state) = (tmp(), tmp());
    bakeoff()
        .env("BAKEOFF_STATE_DIR", state.path())
        .args(["compare", "--images"])
        .arg(state.path())
        .args([
            "--stack",
            &format!("dir={}", other.path().display()),
            "--stack",
            &format!("dir={}", d.path().display()),
        ])
        .args([
            "--workload",
            "randread",
            "--set",
            "size=16m,runtime=10s",
            "--repeat",
            "2",
            "--dry-run",
        ])
        .assert()
        .success()
        .stdout(
            predicate::str::contains("2 cells x 2 repetitions = 4 runs")
                .and(predicate::str::contains("estimated time")),
        );
    assert_eq!(
        std::fs::read_dir(d.path()).unwrap().count(),
        0,
        "a dry run touches nothing"
    );
    bakeoff()
        .args([
            "compare",
            "--stack",
            "ntfs",
            "--workload",
            "randread",
            "--dry-run",
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("unknown stack type 'ntfs'"));
}

/// Runs `bakeoff args` and asserts exit 2 with every `wanted` text on stderr.
fn refused(args: &[&str], wanted: &[&str]) {
    let out = bakeoff().args(args).assert().code(2).get_output().clone();
    let stderr = String::from_utf8_lossy(&out.stderr);
    for w in wanted {
        assert!(stderr.contains(w), "{args:?}: {w:?} not in {stderr}");
    }
}

#[test]
fn personality_files_refuse_what_they_would_ignore_at_its_line() {
    let d = tmp();
    let target = d.path().join("target");
    std::fs::create_dir(&target).unwrap();
    let t = target.to_str().unwrap();
    let slob = bakeoff()
        .args(["workloads", "show", "slob"])
        .output()
        .unwrap()
        .stdout;
    let slob = String::from_utf8(slob).unwrap();
    let job = d.path().join("mine.toml");
    let j = job.to_str().unwrap();
    let line_of =
        |text: &str, needle: &str| text.lines().position(|l| l.contains(needle)).unwrap() + 1;

    let typo = slob.replacen("direct = \"$direct\"", "direcct = true", 1);
    std::fs::write(&job, &typo).unwrap();
    let at = format!(
        "mine.toml:{}: role.reader.direcct: unknown key",
        line_of(&typo, "direcct")
    );
    refused(&["run", "--job", j, "--target", t], &[&at, "allowed: "]);

    let top = slob.replacen("runtime = \"30s\"", "runtme = \"5s\"", 1);
    std::fs::write(&job, &top).unwrap();
    let at = format!("mine.toml:{}: runtme: unknown key", line_of(&top, "runtme"));
    refused(&["run", "--job", j, "--target", t], &[&at]);

    std::fs::write(&job, "[[fileset]]\nname = \"data\"\nsize = \"1g\"\n").unwrap();
    refused(
        &["run", "--job", j, "--target", t],
        &["mine.toml:1: role:", "at least one [[role]]"],
    );

    let zero = slob.replacen("threads = \"$writers\"", "threads = 0", 1);
    std::fs::write(&job, &zero).unwrap();
    let at = format!(
        "mine.toml:{}: role.writer.threads:",
        line_of(&zero, "threads = 0")
    );
    refused(&["run", "--job", j, "--target", t], &[&at]);

    refused(
        &["run", "slob", "--target", t, "--set", "data_size=4k"],
        &["--set: data_size:", "each file needs at least 4 KiB"],
    );
    refused(
        &["run", "slob", "--target", t, "--set", "readers=0,writers=0"],
        &["--set:", "nothing would run"],
    );
    assert_eq!(
        std::fs::read_dir(&target).unwrap().count(),
        0,
        "nothing touched"
    );
}

#[test]
fn study_files_refuse_what_they_would_ignore_at_its_line() {
    let d = tmp();
    let study = d.path().join("s.toml");
    let s = study.to_str().unwrap();
    let workload = "[[workload]]\nname = \"randread\"\nsize = \"16m\"\n";
    let cases = [
        ("repat = 5\n", "s.toml:2: repat: unknown key"),
        (
            "repeat = \"5\"\n",
            "s.toml:2: repeat: expected a whole number",
        ),
        (
            "repeat = 100000000000\n",
            "s.toml:2: repeat: 100000000000 is out of range (allowed 1 to",
        ),
        (
            "sweep = [\"zfs.recordsize=8k\"]\n",
            "s.toml:2: zfs.recordsize: no stack of type 'zfs'",
        ),
        (
            "sweep = [\"bs=4k\", \"randread.bs=8k\"]\n",
            "s.toml:2: randread.bs: 'bs' is swept twice",
        ),
    ];
    for (line, wanted) in cases {
        std::fs::write(
            &study,
            format!("stacks = [\"tmpfs:size=64m\"]\n{line}{workload}"),
        )
        .unwrap();
        refused(&["compare", "--study", s, "--dry-run"], &[wanted]);
    }
    std::fs::write(
        &study,
        format!("stacks = [\"tmpfs:size=64m\"]\n{workload}bz = \"4k\"\n"),
    )
    .unwrap();
    refused(
        &["compare", "--study", s, "--dry-run"],
        &["s.toml:5: bz: unknown key"],
    );
}

#[test]
fn compare_flags_are_checked_like_run_flags() {
    let base = [
        "compare",
        "--stack",
        "tmpfs:size=64m",
        "--workload",
        "randread",
    ];
    refused(
        &[&base[..], &["--set", "bs", "--dry-run"]].concat(),
        &["--set: bs: expected key=value"],
    );
    bakeoff()
        .args([
            "compare",
            "--stack",
            "tmpfs:size=64m",
            "--stack",
            "raw:size=2g",
        ])
        .args([
            "--workload",
            "randread",
            "--set",
            "size=16m",
            "--baseline",
            "raw",
            "--dry-run",
        ])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "tmpfs:size=64m / randread  (baseline: raw:size=2g / randread;",
        ));
    refused(
        &[
            "compare",
            "--stack",
            "xfs",
            "--stack",
            "xfs:mount=noatime",
            "--workload",
            "randread",
        ]
        .into_iter()
        .chain(["--baseline", "xf", "--dry-run"])
        .collect::<Vec<_>>(),
        &["--baseline xf: the start of several stacks (xfs, xfs:mount=noatime)"],
    );
    let d = tmp();
    let study = d.path().join("s.toml");
    let slob = "[[workload]]\nname = \"slob\"\ndata_size = \"64m\"\n";
    let text = format!("stacks = [\"tmpfs:size=256m\"]\n{slob}writers = 0\n{slob}readers = 0\n");
    std::fs::write(&study, text).unwrap();
    bakeoff()
        .args(["compare", "--study", study.to_str().unwrap(), "--dry-run"])
        .assert()
        .success()
        .stdout(
            predicate::str::contains("2 cells x 3 repetitions")
                .and(predicate::str::contains("slob data_size=64m,writers=0"))
                .and(predicate::str::contains("slob data_size=64m,readers=0")),
        );
}

#[test]
fn the_plan_keeps_iodepth_in_flight_or_says_why_not() {
    let d = tmp();
    let t = d.path().to_str().unwrap();
    let out = bakeoff()
        .args(["run", "slob", "--dry-run", "--json", "-", "--target", t])
        .args(["--set", "engine=io_uring,iodepth=16"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let plan: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let reader = &plan["plan"]["roles"][0];
    assert_eq!(
        (reader["name"].as_str(), reader["iodepth"].as_u64()),
        (Some("reader"), Some(16))
    );
    assert!(reader["steps"][0]["io"]["count"].is_null(), "{reader}");
    refused(
        &[
            "run",
            "oltp",
            "--dry-run",
            "--target",
            t,
            "--set",
            "engine=io_uring,aio_depth=200",
        ],
        &["--set: aio_depth: iodepth=200 but this I/O step issues count=100"],
    );
    refused(
        &[
            "run",
            "slob",
            "--dry-run",
            "--target",
            t,
            "--set",
            "iodepth=16",
        ],
        &["--set: iodepth: iodepth=16 needs an asynchronous engine"],
    );
}

/// `--destroy-data-on` confirms a `--device`; without one (or naming another device) it was
/// silently ignored and the stack went on loop devices.
#[test]
fn destroy_data_on_without_its_device_is_refused() {
    let d = tmp();
    let stack = format!("dir={}", d.path().display());
    let run = |extra: &[&str]| {
        bakeoff()
            .env("BAKEOFF_STATE_DIR", d.path().join("state"))
            .args(["run", "randread", "--dry-run", "--stack", &stack])
            .args(["--set", "engine=null,size=8m,runtime=1s"])
            .args(extra)
            .assert()
    };
    for extra in [
        &["--destroy-data-on", "/dev/loop99"][..],
        &["--device", "/dev/null", "--destroy-data-on", "/dev/zero"][..],
    ] {
        run(extra).code(2).stderr(predicate::str::contains(
            "confirms a --device, and no --device names it",
        ));
    }
    let out = bakeoff()
        .env("BAKEOFF_STATE_DIR", d.path().join("state"))
        .args([
            "stack",
            "create",
            &stack,
            "--destroy-data-on",
            "/dev/loop99",
        ])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
