//! `--dry-run` checks everything the real run would, and the real run checks it before any I/O:
//! "dry run: ok" only when the run would start, else the run's own exit code.

mod common;
use bakeoff_testkit::command::which;
use bakeoff_testkit::loop_device::{device_writes, LoopDevice};
use bakeoff_testkit::privileged;
use common::{bakeoff, tmp};
use predicates::prelude::*;
use std::path::Path;

fn entries(dir: &Path) -> usize {
    std::fs::read_dir(dir).unwrap().count()
}

/// `run randread --dry-run` with a tiny null-engine dataset, plus `args`.
fn dry(args: &[&str]) -> assert_cmd::assert::Assert {
    bakeoff()
        .args(["run", "randread", "--dry-run"])
        .args(["--set", "engine=null,size=4m,ramp_time=0,runtime=1s"])
        .args(args)
        .assert()
}

/// [`dry`] on `--target dir`.
fn dry_run(dir: &Path, extra: &[&str]) -> assert_cmd::assert::Assert {
    let mut args = vec!["--target", dir.to_str().unwrap()];
    args.extend(extra);
    dry(&args)
}

#[test]
fn a_dry_run_says_ok_only_when_the_run_would_start() {
    let d = tmp();
    let json = d.path().join("out").join("r.json");
    std::fs::create_dir(d.path().join("out")).unwrap();
    let data = d.path().join("data");
    std::fs::create_dir(&data).unwrap();
    let html = d.path().join("out").join("r.html");
    dry_run(
        &data,
        &[
            "--json",
            json.to_str().unwrap(),
            "--export-html",
            html.to_str().unwrap(),
        ],
    )
    .success()
    .stdout(predicate::str::starts_with(
        "plan     randread: engine null, 1.00 s measured",
    ))
    .stderr(predicate::str::ends_with(
        "dry run: ok, the run would start\n",
    ));
    assert_eq!(entries(&data), 0, "the target is untouched");
    // --json gets the plan; no other output is made.
    assert_eq!(entries(&d.path().join("out")), 1, "only the plan's JSON");
    let plan: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(plan["schema_version"], 1);
    assert_eq!(plan["plan"]["workload"], "randread");
}

#[test]
fn a_dry_run_prints_a_plan_to_read_and_its_json_with_json() {
    let d = tmp();
    let out = dry_run(d.path(), &[]).success().get_output().clone();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.lines().count() <= 12, "{text}");
    for line in [
        "plan ",
        "files    data 1 × 4 MiB",
        "roles    job: 1 thread on data",
        "settings ",
    ] {
        assert!(text.contains(line), "{line:?} missing:\n{text}");
    }
    assert!(!text.contains('{'), "no JSON without --json:\n{text}");
    let out = dry_run(d.path(), &["--json", "-"])
        .success()
        .get_output()
        .clone();
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["plan"]["engine"], "null");
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.starts_with("plan     randread"),
        "the plan goes to stderr: {err}"
    );
}

#[test]
fn a_dry_run_fails_with_the_runs_exit_code_for_each_reason() {
    let d = tmp();
    let t = d.path();
    let no_ok = || predicate::str::contains("dry run: ok").not();
    // Usage (2): a bad spec, size, memory limit, both exports on stdout.
    let target = t.to_str().unwrap();
    let usage: [(&[&str], &str); 7] = [
        (&["--stack", "ntfs"], "unknown stack type 'ntfs'"),
        (
            &["--target", target, "--size", "bogus"],
            "--size: 'bogus' is not a size",
        ),
        (
            &["--stack", "dir=/tmp", "--mem-limit", "lots"],
            "--mem-limit: 'lots' is not a size",
        ),
        (
            &["--target", target, "--mem-limit", "1g"],
            "--mem-limit applies to runs on a stack",
        ),
        (
            &["--target", target, "--device", "/dev/null"],
            "--device and --destroy-data-on apply to runs on a stack",
        ),
        (
            &["--target", target, "--json", "-", "--timeseries", "-"],
            "--export-json and --export-timeseries both write to stdout",
        ),
        (&["--target", target, "--json", target], "is a directory"),
    ];
    for (args, message) in usage {
        dry(args)
            .code(2)
            .stderr(predicate::str::contains(message).and(no_ok()));
    }
    // Usage (2): an output that cannot be created.
    dry_run(t, &["--json", "/nonexistent/dir/x.json"])
        .code(2)
        .stderr(predicate::str::contains(
            "cannot create --export-json /nonexistent/dir/x.json: there is no directory /nonexistent/dir",
        ));
    dry_run(t, &["--timeseries", "/proc/x.csv"])
        .code(2)
        .stderr(predicate::str::contains(
            "cannot create --export-timeseries /proc/x.csv",
        ));
    // Environment (3): a target without room, a missing target.
    dry_run(t, &["--set", "size=100t"])
        .code(3)
        .stderr(predicate::str::contains("not enough space in"));
    dry_run(Path::new("/nonexistent/target"), &[])
        .code(3)
        .stderr(predicate::str::contains("/nonexistent/target"));
    assert_eq!(entries(t), 0, "no check left anything behind");
}

#[test]
fn a_bad_value_is_echoed_clipped() {
    let d = tmp();
    let huge = format!("{}q", "9".repeat(100_000));
    let out = dry_run(d.path(), &["--size", &huge]).code(2);
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(stderr.contains("--size: '9999"), "{stderr}");
    assert!(stderr.contains('…'), "{stderr}");
    assert!(stderr.len() < 400, "{} bytes of error", stderr.len());
}

#[test]
fn an_uncreatable_json_fails_before_any_io() {
    let d = tmp();
    bakeoff()
        .args(["run", "randread", "--quiet", "--target"])
        .arg(d.path())
        .args(["--set", "engine=null,size=4m,ramp_time=0,runtime=1s"])
        .args(["--json", "/nonexistent/dir/x.json"])
        .assert()
        .code(2)
        .stderr(predicate::str::starts_with(
            "bakeoff: error: cannot create --export-json /nonexistent/dir/x.json",
        ))
        .stdout("");
    assert_eq!(entries(d.path()), 0, "no data files were laid out");
}

#[test]
fn compare_checks_the_report_options_and_sizes_before_the_first_run() {
    let d = tmp();
    let data = d.path().join("data");
    std::fs::create_dir(&data).unwrap();
    let out = d.path().join("results");
    // Its own stack ledger and images: runs without root, and replays no other run's ledger.
    let state = d.path().join("state");
    let compare = |extra: &[&str]| {
        bakeoff()
            .env("BAKEOFF_STATE_DIR", &state)
            .args(["compare", "--images"])
            .arg(&state)
            .arg("--stack")
            .arg(format!("dir={}", data.display()))
            .args([
                "--workload",
                "randread",
                "--set",
                "engine=null,size=1m,ramp_time=0,runtime=1s",
            ])
            .arg("--out")
            .arg(&out)
            .args(extra)
            .assert()
    };
    for (args, message) in [
        (
            &["--columns", "read_iops,bogus"][..],
            "--columns: unknown figure 'bogus' (known: read_iops",
        ),
        (
            &["--against", "nosuch"],
            "--against 'nosuch' is not a stack of this study (its stacks: dir=",
        ),
        (&["--size", "bogus"], "--size: 'bogus' is not a size"),
        (&["--min-effect", "lots"], "'lots' is not a fraction"),
        (
            &["--mem-limit", "bogus"],
            "--mem-limit: 'bogus' is not a size",
        ),
    ] {
        compare(args)
            .code(2)
            .stderr(predicate::str::contains(message));
        let mut dry = args.to_vec();
        dry.push("--dry-run");
        compare(&dry)
            .code(2)
            .stderr(predicate::str::contains(message));
    }
    assert!(!out.exists(), "no results directory was made");
    assert_eq!(entries(&data), 0, "nothing ran");
    // A results directory that cannot be created is a usage error, found before any run.
    for dry in [false, true] {
        let mut cmd = bakeoff();
        cmd.env("BAKEOFF_STATE_DIR", &state)
            .args(["compare", "--stack"])
            .arg(format!("dir={}", data.display()))
            .args(["--workload", "randread", "--set", "engine=null,size=1m"])
            .args(["--out", "/proc/no/results"]);
        if dry {
            cmd.arg("--dry-run");
        }
        cmd.assert().code(2).stderr(predicate::str::contains(
            "cannot create the results directory /proc/no/results",
        ));
    }
    assert_eq!(entries(&data), 0, "nothing ran");
    compare(&["--dry-run"])
        .success()
        .stderr(predicate::str::ends_with(
            "dry run: ok, the study would start\n",
        ));
    assert!(!out.exists(), "a dry run makes no results directory");
}

#[test]
fn compare_dry_run_uses_the_studys_own_size() {
    let d = tmp();
    let study = d.path().join("s.toml");
    let write = |size: &str| {
        std::fs::write(
            &study,
            format!(
                "stacks = [\"tmpfs:size=64m\"]\nsize = \"{size}\"\n[[workload]]\nname = \"randread\"\nsize = \"16m\"\n"
            ),
        )
        .unwrap()
    };
    write("bogus");
    bakeoff()
        .args(["compare", "--dry-run", "--study"])
        .arg(&study)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "s.toml:2: size: 'bogus' is not a size",
        ));
    if !privileged() {
        return;
    }
    // The study's size, not the command line's, is what the runs and the dry run use.
    let compare = |size: &str| {
        std::fs::write(
            &study,
            format!("stacks = [\"ext4\"]\nsize = \"{size}\"\n[[workload]]\nname = \"randread\"\nsize = \"16m\"\n"),
        )
        .unwrap();
        bakeoff()
            .args(["compare", "--dry-run", "--size", "1g", "--out"])
            .arg(d.path().join("r"))
            .arg("--study")
            .arg(&study)
            .assert()
    };
    compare("2g").success().stdout(predicate::str::contains(
        "disk: up to 2 GiB of sparse images",
    ));
    // auto: sized to the cells' 16 MiB dataset, at least 1 GiB.
    compare("auto").success().stdout(predicate::str::contains(
        "disk: up to 1 GiB of sparse images",
    ));
    compare("4m").code(3).stderr(predicate::str::contains(
        "stack ext4 holds about 2.3 MiB for data (1 device of 4 MiB, less what its file system keeps), \
         the dataset needs 16777216 bytes (16 MiB)",
    ));
    // Without `size`, a study's stacks are sized to their cells' datasets, as `--size auto`:
    // 1200 MiB fits (a default of 1 GiB would not hold it).
    std::fs::write(
        &study,
        "stacks = [\"ext4\"]\n[[workload]]\nname = \"randread\"\nsize = \"1200m\"\n",
    )
    .unwrap();
    bakeoff()
        .args(["compare", "--dry-run", "--out"])
        .arg(d.path().join("r"))
        .arg("--study")
        .arg(&study)
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "disk: up to 1.3 GiB of sparse images",
        ));
}

/// Privileged: a stack's tools, its devices and the loop images' room, on a loop device this
/// test makes.
#[test]
fn stack_dry_runs_check_tools_devices_and_room() {
    if !privileged() {
        return;
    }
    let d = tmp();
    let small = "engine=null,size=8m,ramp_time=0,runtime=1s";
    let run = |args: &[&str]| {
        bakeoff()
            .args(["run", "randread", "--dry-run", "--set", small])
            .args(args)
            .assert()
    };
    // A missing tool: nothing on PATH, and the standard directories hidden in a private mount
    // namespace (the stack crate also looks there).
    let bin = assert_cmd::cargo::cargo_bin("bakeoff");
    let mount = which("mount");
    let mut script = format!("{} -t tmpfs none /usr/sbin", mount.display());
    if !Path::new("/sbin").is_symlink() {
        script += &format!(" && {} -t tmpfs none /sbin", mount.display());
    }
    script += &format!(
        " && exec {} run randread --dry-run --stack xfs --set {small}",
        bin.display()
    );
    let empty = d.path().join("empty-path");
    std::fs::create_dir(&empty).unwrap();
    let out = std::process::Command::new(which("unshare"))
        .args([
            "--mount",
            "--propagation",
            "private",
            "/bin/sh",
            "-c",
            &script,
        ])
        .env("PATH", &empty)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("need `mkfs.xfs`"), "{stderr}");
    assert!(!stderr.contains("dry run: ok"), "{stderr}");

    let disk = LoopDevice::new(64 << 20);
    let dev = disk.node();
    let writes_before = device_writes(&disk.name());
    run(&["--stack", "ext4", "--device", dev])
        .code(5)
        .stderr(predicate::str::contains(
            "--destroy-data-on names the same device",
        ));
    run(&[
        "--stack",
        "zfs:devices=2",
        "--device",
        dev,
        "--destroy-data-on",
        dev,
    ])
    .code(3)
    .stderr(predicate::str::contains("needs 2 device(s), 1 were given"));
    run(&[
        "--stack",
        "ext4",
        "--device",
        dev,
        "--destroy-data-on",
        dev,
        "--set",
        "size=1g",
    ])
    .code(3)
    .stderr(predicate::str::contains(
        "for data (1 device given, less what its file system keeps), the dataset needs 1073741824 bytes (1 GiB)",
    ));
    run(&["--stack", "xfs", "--device", dev, "--destroy-data-on", dev])
        .code(3)
        .stderr(predicate::str::contains(
            "a device of 64 MiB is below the smallest this type's mkfs accepts, 300 MiB",
        ));
    run(&["--stack", "ext4", "--device", dev, "--destroy-data-on", dev])
        .success()
        .stderr(predicate::str::contains("dry run: ok"));
    run(&["--stack", "ext4", "--size", "200t", "--set", "size=100t"])
        .code(3)
        .stderr(predicate::str::contains(
            "not enough space for the loop images under",
        ));
    run(&["--stack", "ext4", "--size", "4m"])
        .code(3)
        .stderr(predicate::str::contains(
            "holds about 2.3 MiB for data (1 device of 4 MiB, less",
        ));
    assert_eq!(
        device_writes(&disk.name()),
        writes_before,
        "dry runs never wrote to {dev}"
    );
}

/// Privileged: `demo` checks every stack as `run` does before it builds any: a mount option
/// the kernel refuses on the second stack is refused (exit 2) before the first is built.
#[test]
fn demo_refuses_what_run_refuses_before_building() {
    if !privileged() {
        return;
    }
    let d = tmp();
    bakeoff()
        .env("BAKEOFF_STATE_DIR", d.path().join("state"))
        .args(["demo", "--runtime", "1s", "--stack", "raw", "--stack"])
        .arg("tmpfs:mount=bogus")
        .arg("--images")
        .arg(d.path().join("images"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "stack tmpfs:mount=bogus: the kernel's tmpfs refuses mount option 'bogus'",
        ))
        .stderr(predicate::str::contains("slob on").not())
        .stderr(predicate::str::contains("building stack").not());
    assert!(
        !d.path().join("state").join("ledger").exists(),
        "nothing was built"
    );
}

#[test]
fn run_exec_and_compare_refuse_what_a_work_cannot_do_in_one_wording() {
    let refused = |args: &[&str], message: &str| {
        bakeoff().args(args).assert().code(2).stderr(
            predicate::str::contains(message).and(predicate::str::contains("dry run: ok").not()),
        );
    };
    let no_log =
        "a log stack holds a database's WAL or a log writer's redo; this workload writes no log";
    refused(
        &[
            "run",
            "randread",
            "--stack",
            "ext4",
            "--log-stack",
            "xfs",
            "--dry-run",
        ],
        no_log,
    );
    refused(
        &[
            "run",
            "tpcc",
            "--stack",
            "ext4",
            "--log-stack",
            "xfs",
            "--set",
            "db=sqlite",
            "--dry-run",
        ],
        "--log-stack: ",
    );
    refused(
        &["exec", "--stack", "raw", "--dry-run", "--", "true"],
        "commands need a file system to run in: a raw stack holds no files",
    );
    refused(
        &[
            "run",
            "build",
            "--stack",
            "ext4",
            "--log-stack",
            "xfs",
            "--dry-run",
        ],
        "a recipe's commands choose their own paths on one stack: it takes no log stack",
    );
    // The ramp refusal is worded once: on the command line and in a study.
    let ramp = "paces I/O and file workloads; tpcc has its own rate key (rate_tps)";
    refused(
        &[
            "run",
            "tpcc",
            "--stack",
            "ext4",
            "--ramp",
            "until=p99>5ms",
            "--dry-run",
        ],
        &format!("--ramp {ramp}"),
    );
    let d = tmp();
    let study = d.path().join("s.toml");
    std::fs::write(
        &study,
        "repeat = 1\nmem_limit = \"1g\"\n[[stack]]\nname = \"e\"\nspec = \"ext4\"\nlog = \"xfs\"\n\
         [[workload]]\nname = \"tpcc\"\nramp = \"until=p99>5ms\"\n",
    )
    .unwrap();
    let study = study.to_str().unwrap();
    refused(
        &["compare", "--study", study, "--dry-run"],
        &format!("ramp {ramp}"),
    );
    refused(
        &[
            "compare",
            "--study",
            study,
            "--mem-limit",
            "1g",
            "--dry-run",
        ],
        "sets the study's memory limit (its mem_limit key): give it there",
    );
}

#[test]
fn sqlite_wal_on_zfs_fuse_is_refused_before_the_stack_is_built() {
    // zfs-fuse cannot map WAL's -shm file shared and writable: the first connection would fail
    // after the stack was built. Refused up front (exit 2), with the setting that works.
    if !privileged() || Path::new("/sys/module/zfs").exists() {
        return;
    }
    let run = |set: &str| {
        bakeoff()
            .args(["run", "tpch", "--stack", "zfs", "--dry-run", "--set", set])
            .assert()
    };
    run("db=sqlite,sf=0.01")
        .code(2)
        .stderr(predicate::str::contains("sqlite.journal_mode=delete"));
    run("db=sqlite,sf=0.01,sqlite.journal_mode=wal").code(2);
    run("db=sqlite,sf=0.01,sqlite.journal_mode=delete")
        .success()
        .stderr(predicate::str::contains("dry run: ok"));
}
