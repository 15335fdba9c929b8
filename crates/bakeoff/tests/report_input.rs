//! `bakeoff report` counts each run once and refuses what it cannot trust: the same results
//! directory or run record named twice, unknown schema versions, a corrupt study.json, an
//! unreadable run record, a directory whose runs/ is gone.

mod common;
use common::{bakeoff, tmp};
use predicates::prelude::*;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// A results directory of two cells with two runs each, made by a quick `compare` whose read
/// IOPS are then set by hand: the second cell twice as fast as the baseline.
fn results(root: &Path) -> PathBuf {
    let (a, b, out) = (root.join("a"), root.join("b"), root.join("results"));
    std::fs::create_dir(&a).unwrap();
    std::fs::create_dir(&b).unwrap();
    common::quick_compare(&a, &b, 2, &["--out", out.to_str().unwrap()]).success();
    for (cell, iops) in [(0, [1000.0, 1010.0]), (1, [2000.0, 2020.0])] {
        for (rep, v) in iops.iter().enumerate() {
            edit(&record_path(&out, cell, rep as u32 + 1), |r| {
                r["summary"]["read_iops"] = (*v).into();
            });
        }
    }
    out
}

fn study(out: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(out.join("study.json")).unwrap()).unwrap()
}

fn record_path(out: &Path, cell: usize, rep: u32) -> PathBuf {
    let id = study(out)["cells"][cell]["id"]
        .as_str()
        .unwrap()
        .to_string();
    out.join("runs").join(id).join(format!("rep-{rep}.json"))
}

fn edit(path: &Path, change: impl FnOnce(&mut Value)) {
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    change(&mut v);
    std::fs::write(path, serde_json::to_string_pretty(&v).unwrap()).unwrap();
}

/// `report ARGS --format json --columns read_iops`, with its exit code and JSON.
fn report(args: &[&Path]) -> (i32, Value, String) {
    let out = bakeoff()
        .arg("report")
        .args(args)
        .args(["--format", "json", "--columns", "read_iops"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(!stderr.contains("panicked"), "{stderr}");
    let json = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    (out.status.code().unwrap(), json, stderr)
}

fn runs_and_verdict(r: &Value) -> (Vec<u64>, String) {
    let rows = r["rows"].as_array().unwrap();
    let runs = rows
        .iter()
        .map(|row| row["runs"].as_u64().unwrap())
        .collect();
    let verdict = rows[1]["figures"][0]["vs_baseline"]["verdict"]
        .as_str()
        .unwrap()
        .to_string();
    (runs, verdict)
}

#[test]
fn each_directory_and_record_counts_once() {
    let root = tmp();
    let d = results(root.path());
    let (code, r, _) = report(&[&d]);
    assert_eq!(code, 0);
    assert_eq!(runs_and_verdict(&r), (vec![2, 2], "too_few_samples".into()));
    // The same directory three times, or under another spelling: still two runs, still "?".
    let dotted = d.join(".");
    for args in [vec![&*d, &*d, &*d], vec![&*d, &*dotted]] {
        let (code, r, _) = report(&args);
        assert_eq!(code, 0);
        assert_eq!(runs_and_verdict(&r), (vec![2, 2], "too_few_samples".into()));
        assert!(r["notes"].to_string().contains("counted once"), "{r}");
    }
    // A copy of the directory holds the same run records: they count once too.
    let copy = root.path().join("copy");
    let status = std::process::Command::new("cp")
        .arg("-r")
        .arg(&d)
        .arg(&copy)
        .status()
        .unwrap();
    assert!(status.success());
    let (code, r, _) = report(&[&d, &copy]);
    assert_eq!(code, 0);
    assert_eq!(runs_and_verdict(&r), (vec![2, 2], "too_few_samples".into()));
}

#[test]
fn unknown_schema_versions_are_refused_naming_the_file() {
    let root = tmp();
    let d = results(root.path());
    let rec = record_path(&d, 1, 2);
    let original = std::fs::read_to_string(&rec).unwrap();
    edit(&rec, |r| r["schema_version"] = 99.into());
    let (code, _, stderr) = report(&[&d]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains(&format!("{}: schema_version 99", rec.display())),
        "{stderr}"
    );
    assert!(
        stderr.contains("reads run records of schema_version 1 or 2"),
        "{stderr}"
    );
    std::fs::write(&rec, original).unwrap();
    edit(&d.join("study.json"), |s| s["schema_version"] = 7.into());
    let (code, _, stderr) = report(&[&d]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("study.json: schema_version 7"), "{stderr}");
    assert!(
        stderr.contains("reads study.json of schema_version 1"),
        "{stderr}"
    );
}

/// A results directory whose `runs/` is gone has nothing to report: it printed an empty
/// table and exited 0.
#[test]
fn a_directory_without_its_runs_is_an_error_naming_the_path() {
    let root = tmp();
    let d = results(root.path());
    std::fs::remove_dir_all(d.join("runs")).unwrap();
    let (code, json, stderr) = report(&[&d]);
    assert_eq!(code, 2, "{stderr}");
    assert_eq!(json, Value::Null, "no report is printed");
    let runs = d.join("runs");
    assert!(
        stderr.contains(&format!("{} is missing", runs.display())),
        "{stderr}"
    );
}

#[test]
fn a_corrupt_study_is_an_error_not_a_panic() {
    let root = tmp();
    let d = results(root.path());
    let original = std::fs::read_to_string(d.join("study.json")).unwrap();
    type Corruption<'a> = (&'a dyn Fn(&mut Value), &'a str);
    let corruptions: [Corruption; 4] = [
        (
            &|s| s["study"]["stacks"] = Value::Array(vec![]),
            "no stacks",
        ),
        (
            &|s| s["baseline_of"][1] = 7.into(),
            "baseline_of names cell 7, of 2",
        ),
        (
            &|s| s["cells"][0]["id"] = "../..".into(),
            "is not a directory name",
        ),
        (&|s| s["cells"] = 3.into(), "study.json: invalid type"),
    ];
    for (corrupt, message) in corruptions {
        std::fs::write(d.join("study.json"), &original).unwrap();
        edit(&d.join("study.json"), corrupt);
        let (code, _, stderr) = report(&[&d]);
        assert_eq!(code, 2, "{stderr}");
        assert!(stderr.starts_with("bakeoff: error: "), "{stderr}");
        assert!(stderr.contains(message), "{message}: {stderr}");
    }
    std::fs::write(d.join("study.json"), "{ not json").unwrap();
    let (code, _, stderr) = report(&[&d]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("study.json"), "{stderr}");
}

#[test]
fn an_unreadable_record_is_named_left_out_and_noted() {
    let root = tmp();
    let d = results(root.path());
    let rec = record_path(&d, 1, 2);
    std::fs::write(&rec, "{\"schema_version\": 1, \"status\": ").unwrap();
    let (code, r, stderr) = report(&[&d]);
    assert_eq!(code, 6, "{stderr}");
    assert!(
        stderr.starts_with(&format!(
            "bakeoff: error: {}: unreadable run record",
            rec.display()
        )),
        "{stderr}"
    );
    let runs: Vec<u64> = r["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| row["runs"].as_u64().unwrap())
        .collect();
    assert_eq!(runs, vec![2, 1], "the cell shows one run fewer");
    assert!(
        r["notes"]
            .to_string()
            .contains("unreadable and is left out"),
        "{r}"
    );
    // The table shows the note too.
    bakeoff()
        .arg("report")
        .arg(&d)
        .assert()
        .code(6)
        .stdout(predicate::str::contains("note: ").and(predicate::str::contains("rep-2.json")));
}

#[test]
fn report_options_are_checked_before_reading() {
    let root = tmp();
    let d = results(root.path());
    bakeoff()
        .arg("report")
        .arg(&d)
        .args(["--against", "nosuch"])
        .assert()
        .code(2)
        .stderr(
            predicate::str::contains("--against 'nosuch' is not a stack of this study").and(
                predicate::str::contains(format!("dir={}", root.path().join("a").display())),
            ),
        );
    bakeoff()
        .args(["report", "/nonexistent/results", "--columns", "bogus"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "--columns: unknown figure 'bogus'",
        ));
}

#[test]
fn resume_runs_only_the_cells_a_grown_study_added_and_refuses_a_changed_one() {
    let root = tmp();
    let out = results(root.path());
    let kept = std::fs::read_to_string(record_path(&out, 1, 2)).unwrap();
    let c = root.path().join("c");
    std::fs::create_dir(&c).unwrap();
    let (a, b) = (root.path().join("a"), root.path().join("b"));
    let out_arg = out.to_str().unwrap();
    // A stack appended: only its cell runs; the saved runs are kept as they were.
    let grown = format!("dir={}", c.display());
    let extra = ["--stack", &grown, "--out", out_arg, "--resume"];
    common::quick_compare(&a, &b, 2, &extra)
        .success()
        .stderr(predicate::str::contains("the study grew by 1 cell(s)"));
    assert_eq!(study(&out)["cells"].as_array().unwrap().len(), 3);
    assert_eq!(
        std::fs::read_to_string(record_path(&out, 1, 2)).unwrap(),
        kept
    );
    assert!(record_path(&out, 2, 1).exists() && record_path(&out, 2, 2).exists());
    let (code, json, _) = report(&[&out]);
    let rows = json["rows"].as_array().unwrap();
    let runs: Vec<u64> = rows.iter().map(|r| r["runs"].as_u64().unwrap()).collect();
    assert_eq!((code, runs), (0, vec![2, 2, 2]));
    // Other repetitions, or the cells in another order, are another study.
    let more = common::quick_compare(&a, &b, 3, &extra);
    more.code(2)
        .stderr(predicate::str::contains("repeat was 2 and is 3"));
    let swapped = common::quick_compare(&b, &a, 2, &extra);
    swapped
        .code(2)
        .stderr(predicate::str::contains("cells differ"));
}

#[test]
fn a_directory_kept_gzip_compressed_reports_the_same() {
    let root = tmp();
    let d = results(root.path());
    let (code, plain, _) = report(&[&d]);
    assert_eq!(code, 0);
    // Every file compressed in place, as docs/studies/records keeps results.
    let status = std::process::Command::new("gzip")
        .arg("-r")
        .arg(&d)
        .status()
        .unwrap();
    assert!(status.success());
    assert!(!d.join("study.json").exists() && d.join("study.json.gz").exists());
    let (code, packed, stderr) = report(&[&d]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(packed, plain);
    assert_eq!(
        runs_and_verdict(&packed),
        (vec![2, 2], "too_few_samples".into())
    );
    // A corrupt compressed record is named and left out, as a corrupt plain one is.
    let rep = record_path_gz(&d, 1, 2);
    std::fs::write(&rep, b"not gzip").unwrap();
    let (code, r, stderr) = report(&[&d]);
    assert_ne!(code, 0);
    assert!(stderr.contains(&*rep.to_string_lossy()), "{stderr}");
    assert_eq!(runs_and_verdict(&r).0, vec![2, 1]);
}

/// [`record_path`] of a directory whose files were compressed.
fn record_path_gz(out: &Path, cell: usize, rep: u32) -> PathBuf {
    let text = {
        use std::io::Read;
        let f = std::fs::File::open(out.join("study.json.gz")).unwrap();
        let mut s = String::new();
        flate2::read::GzDecoder::new(f)
            .read_to_string(&mut s)
            .unwrap();
        s
    };
    let study: Value = serde_json::from_str(&text).unwrap();
    let id = study["cells"][cell]["id"].as_str().unwrap().to_string();
    out.join("runs").join(id).join(format!("rep-{rep}.json.gz"))
}
