//! One output convention for `run` and `compare`: `--export-json/-markdown/-csv/-html FILE` (and
//! `--export-timeseries` for a run), `-` for stdout, `--json`/`--timeseries` as aliases.

mod common;
use common::{bakeoff, tmp};
use predicates::prelude::*;
use std::path::{Path, PathBuf};

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// `run randread` warm on the null engine (no cache drop, so it disturbs nobody) with `args`.
fn run(target: &Path, args: &[&str]) -> assert_cmd::assert::Assert {
    bakeoff()
        .args(["run", "randread", "--quiet", "--warm", "--target"])
        .arg(target)
        .args(["--set", "engine=null,size=1m,ramp_time=0,runtime=1200ms"])
        .args(args)
        .assert()
}

#[test]
fn a_run_exports_every_format_and_only_the_files() {
    let d = tmp();
    let data = d.path().join("data");
    let out = d.path().join("out");
    std::fs::create_dir(&data).unwrap();
    std::fs::create_dir(&out).unwrap();
    let f = |name: &str| out.join(name);
    run(
        &data,
        &[
            "--export-json",
            f("r.json").to_str().unwrap(),
            "--export-markdown",
            f("r.md").to_str().unwrap(),
            "--export-csv",
            f("r.csv").to_str().unwrap(),
            "--export-timeseries",
            f("t.csv").to_str().unwrap(),
            "--export-html",
            f("r.html").to_str().unwrap(),
        ],
    )
    .success()
    .stdout(predicate::str::contains("randread on"));
    let json: serde_json::Value = serde_json::from_str(&read(&f("r.json"))).unwrap();
    assert_eq!(json["status"], "completed");
    let md = read(&f("r.md"));
    assert!(md.contains("| role | thr | op | ops/s |"), "{md}");
    assert!(md.contains("| job | 1 | read |"), "{md}");
    assert!(md.contains("\n- cpu "), "{md}");
    let csv = read(&f("r.csv"));
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 2, "a header and one row: {csv}");
    assert!(lines[0].starts_with("workload,target,stack,status,measured_s,threads,read_iops,"));
    let row: Vec<&str> = lines[1].split(',').collect();
    assert_eq!(row[0], "randread");
    assert_eq!(row[3], "completed");
    let read_iops: f64 = row[6].parse().unwrap();
    assert!(
        (read_iops - json["summary"]["read_iops"].as_f64().unwrap()).abs() < 1e-6,
        "the CSV row holds the record's figures"
    );
    assert!(read(&f("t.csv")).starts_with("t_s,measured,read_iops"));
    let html = read(&f("r.html"));
    assert!(
        html.starts_with("<!DOCTYPE html>") && html.contains("<svg"),
        "{html:.200}"
    );
    let mut names: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        ["r.csv", "r.html", "r.json", "r.md", "t.csv"],
        "no temporary files left"
    );
}

#[test]
fn an_export_to_stdout_moves_the_summary_to_stderr_and_aliases_still_work() {
    let d = tmp();
    let json = d.path().join("alias.json");
    let data = d.path().join("data");
    std::fs::create_dir(&data).unwrap();
    let out = run(
        &data,
        &["--export-csv", "-", "--json", json.to_str().unwrap()],
    )
    .success()
    .stderr(predicate::str::contains("randread on"));
    let stdout = String::from_utf8_lossy(&out.get_output().stdout);
    assert!(stdout.starts_with("workload,target,"), "{stdout}");
    assert_eq!(stdout.lines().count(), 2, "{stdout}");
    let v: serde_json::Value = serde_json::from_str(&read(&json)).unwrap();
    assert_eq!(v["schema_version"], 2);
    run(&data, &["--export-markdown", "-", "--timeseries", "-"])
        .code(2)
        .stderr(predicate::str::contains(
            "--export-markdown and --export-timeseries both write to stdout",
        ));
    let same = d.path().join("same").to_str().unwrap().to_string();
    run(&data, &["--export-json", &same, "--export-csv", &same])
        .code(2)
        .stderr(predicate::str::contains("both write to"));
}

#[test]
fn compare_exports_the_comparison_in_each_format() {
    let d = tmp();
    let (a, b) = (d.path().join("a"), d.path().join("b"));
    std::fs::create_dir(&a).unwrap();
    std::fs::create_dir(&b).unwrap();
    let f = |name: &str| d.path().join(name);
    let compare = |extra: &[&str]| common::quick_compare(&a, &b, 1, extra);
    // An export that cannot be created stops the study before its first run.
    compare(&[
        "--out",
        f("r0").to_str().unwrap(),
        "--export-csv",
        "/nonexistent/c.csv",
    ])
    .code(2)
    .stderr(predicate::str::contains(
        "cannot create --export-csv /nonexistent/c.csv",
    ));
    assert!(!f("r0").exists(), "no results directory");
    compare(&[
        "--out",
        f("r").to_str().unwrap(),
        "--export-json",
        f("c.json").to_str().unwrap(),
        "--export-markdown",
        f("c.md").to_str().unwrap(),
        "--export-csv",
        f("c.csv").to_str().unwrap(),
        "--export-html",
        f("c.html").to_str().unwrap(),
    ])
    .success();
    let v: serde_json::Value = serde_json::from_str(&read(&f("c.json"))).unwrap();
    assert_eq!(v["rows"].as_array().unwrap().len(), 2);
    // The Markdown opens with the answer, then the table.
    let md = read(&f("c.md"));
    let (answer, table) = md.split_once("\n\n").unwrap();
    assert!(
        answer.starts_with("**") && answer.contains("read IOPS"),
        "{answer}"
    );
    assert!(table.starts_with("| cell | runs |"), "{md}");
    assert!(read(&f("c.csv")).starts_with("cell,stack,runs,baseline,figure,"));
    // The exports hold what `report` prints from the results directory.
    for (format, export) in [("csv", "c.csv"), ("html", "c.html")] {
        bakeoff()
            .arg("report")
            .arg(f("r"))
            .args(["--format", format])
            .assert()
            .success()
            .stdout(read(&f(export)));
    }
}

/// `report --format` takes the format of every exporter that renders a comparison (the report
/// crate's `EXPORTERS`, from which `compare` makes its `--export-<format>` flags) and prints
/// what `compare` exported in it.
#[test]
fn report_takes_every_comparison_exporters_format() {
    let d = tmp();
    let (a, b) = (d.path().join("a"), d.path().join("b"));
    std::fs::create_dir(&a).unwrap();
    std::fs::create_dir(&b).unwrap();
    let results = d.path().join("r");
    let exporters: Vec<_> = (bakeoff_report::EXPORTERS.iter())
        .filter(|e| e.comparison.is_some())
        .collect();
    assert!(
        exporters.len() >= 4,
        "JSON, Markdown, CSV and HTML at least"
    );
    let files: Vec<PathBuf> = (exporters.iter())
        .map(|e| d.path().join(format!("c.{}", e.format())))
        .collect();
    let mut extra = vec!["--out".to_string(), results.display().to_string()];
    for (e, file) in exporters.iter().zip(&files) {
        extra.extend([e.flag.to_string(), file.display().to_string()]);
    }
    let extra: Vec<&str> = extra.iter().map(String::as_str).collect();
    common::quick_compare(&a, &b, 1, &extra).success();
    for (e, file) in exporters.iter().zip(&files) {
        bakeoff()
            .arg("report")
            .arg(&results)
            .args(["--format", e.format()])
            .assert()
            .success()
            .stdout(read(file));
    }
}
