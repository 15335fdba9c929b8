//! `compare --until decided` and `--search best` end to end, on cells whose answer is known:
//! the null engine paced at 1,000, 1,010 and 2,000 reads/s (an open loop: the rate it reaches
//! is the rate it was given, on a busy machine too), so "fast" is ×2 the baseline and "same"
//! is within the 5 % minimum effect. The refusals of impossible combinations are checked
//! before anything runs.

mod common;
use bakeoff_testkit::shared;
use common::{bakeoff, tmp};
use std::path::Path;

/// A study of three directories paced at 1,000 (the baseline), 1,010 and 2,000 reads/s.
fn study_file(root: &Path) -> std::path::PathBuf {
    let mut text = String::from("baseline = \"slow\"\nrepeat = 3\n");
    for (name, rate) in [("slow", 1000), ("same", 1010), ("fast", 2000)] {
        let dir = root.join(name);
        std::fs::create_dir_all(&dir).unwrap();
        text += &format!(
            "\n[[stack]]\nname = \"{name}\"\nspec = \"dir={}\"\nset = {{ rate_iops = \"{rate}\" }}\n",
            dir.display()
        );
    }
    text += "\n[[workload]]\nname = \"randread\"\nengine = \"null\"\nsize = \"1m\"\n\
             ramp_time = \"0\"\nruntime = \"1s\"\n";
    let path = root.join("paced.toml");
    std::fs::write(&path, text).unwrap();
    path
}

fn compare(root: &Path, out: &Path, extra: &[&str]) -> std::process::Output {
    bakeoff()
        .env("BAKEOFF_STATE_DIR", root.join("state"))
        .args(["compare", "--warm", "--study"])
        .arg(study_file(root))
        .arg("--images")
        .arg(root.join("images"))
        .arg("--out")
        .arg(out)
        .args(extra)
        .output()
        .unwrap()
}

fn adaptive(out: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(out.join("adaptive.json")).unwrap()).unwrap()
}

/// The cell labelled `name / randread` in `adaptive.json`.
fn cell<'a>(a: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    let label = format!("{name} / randread");
    (a["cells"].as_array().unwrap().iter())
        .find(|c| c["label"] == label.as_str())
        .unwrap()
}

#[test]
fn until_decided_stops_each_cell_when_its_verdict_is_decided() {
    let _turn = shared();
    let d = tmp();
    let out = d.path().join("results");
    let done = compare(d.path(), &out, &["--until", "decided"]);
    let (stdout, stderr) = (
        String::from_utf8_lossy(&done.stdout),
        String::from_utf8_lossy(&done.stderr),
    );
    assert!(done.status.success(), "{stderr}");
    let a = adaptive(&out);
    assert_eq!(a["goal"], "until_decided", "{a:#}");
    assert_eq!(a["stop"], "decided", "{a:#}");
    let fast = cell(&a, "fast");
    assert_eq!(fast["comparison"]["decision"], "better", "{a:#}");
    // ×2 is decided at the first look, after the planned 3 rounds: no fourth run.
    assert_eq!(fast["finished_after"], 3, "{a:#}");
    assert_eq!(fast["runs"], 3, "{a:#}");
    let ratio = fast["comparison"]["ratio"].as_f64().unwrap();
    assert!((1.9..2.1).contains(&ratio), "{a:#}");
    let same = cell(&a, "same");
    assert_eq!(same["comparison"]["decision"], "equivalent", "{a:#}");
    let runs = a["runs"].as_u64().unwrap();
    assert!(runs < a["fixed_runs"].as_u64().unwrap() / 2, "{a:#}");
    assert!(
        stdout.contains("--until decided on read_iops: answered after")
            && stdout.contains("fast / randread: better ×"),
        "{stdout}"
    );
    // The report over the directory says the same.
    let report = bakeoff().arg("report").arg(&out).output().unwrap();
    let text = String::from_utf8_lossy(&report.stdout);
    assert!(
        text.contains("same / randread: equivalent (within the minimum effect)"),
        "{text}"
    );
    // The table's verdicts on the decided figure are the sequential rule's: ≈ for "same".
    let row = (text.lines())
        .find(|l| l.contains("read IOPS") && l.contains("┆"))
        .unwrap();
    // (The paced rates come out within a percent or two of 1000, 1010 and 2000 reads/s when
    // the machine is busy: the marks are asserted, the ratios above.)
    assert!(row.contains('≈') && row.contains('+'), "{text}");
}

#[test]
fn search_best_drops_the_slower_cells_and_names_the_winner_with_its_evidence() {
    let _turn = shared();
    let d = tmp();
    let out = d.path().join("results");
    let done = compare(d.path(), &out, &["--search", "best"]);
    let stderr = String::from_utf8_lossy(&done.stderr);
    assert!(done.status.success(), "{stderr}");
    let a = adaptive(&out);
    assert_eq!(a["goal"], "search_best", "{a:#}");
    assert_eq!(a["result"]["status"], "won", "{a:#}");
    let fast_index = (a["cells"].as_array().unwrap().iter())
        .position(|c| c["label"] == "fast / randread")
        .unwrap();
    assert_eq!(a["result"]["best"], fast_index, "{a:#}");
    for name in ["slow", "same"] {
        let dropped = &cell(&a, name)["dropped"];
        assert_eq!(dropped["against"], fast_index, "{a:#}");
        let high = dropped["bounds"][0]["high"].as_f64().unwrap();
        assert!(high < 1.0, "dropped on evidence that it is worse: {a:#}");
    }
    let report = bakeoff().arg("report").arg(&out).output().unwrap();
    let text = String::from_utf8_lossy(&report.stdout);
    assert!(
        text.contains("slow / randread: dropped after round")
            && text.contains("best: fast / randread"),
        "{text}"
    );
}

#[test]
fn a_budget_stops_before_a_round_that_would_not_fit() {
    let _turn = shared();
    let d = tmp();
    let out = d.path().join("results");
    let done = compare(d.path(), &out, &["--until", "decided", "--budget", "1s"]);
    let stderr = String::from_utf8_lossy(&done.stderr);
    assert!(done.status.success(), "{stderr}");
    assert!(
        stderr.contains("--budget: stopping before round 2"),
        "{stderr}"
    );
    let a = adaptive(&out);
    assert_eq!(
        (a["stop"].as_str(), a["rounds"].as_u64()),
        (Some("budget"), Some(1))
    );
}

#[test]
fn impossible_adaptive_options_are_refused_before_anything_runs() {
    let d = tmp();
    let refused = |extra: &[&str], says: &str| {
        let out = d.path().join("never");
        let done = compare(d.path(), &out, extra);
        let stderr = String::from_utf8_lossy(&done.stderr);
        assert_eq!(done.status.code(), Some(2), "{extra:?}: {stderr}");
        assert!(stderr.contains(says), "{extra:?}: {stderr}");
        assert!(!out.exists(), "{extra:?} made {}", out.display());
    };
    refused(&["--search", "pareto"], "name the two figures");
    refused(
        &["--until", "decided", "--figures", "nope"],
        "unknown figure 'nope'",
    );
    refused(
        &["--until", "decided", "--figures", "cpu_busy_pct"],
        "diagnostic figure",
    );
    refused(&["--figures", "tps"], "give one of them");
    refused(
        &["--until", "decided", "--max-repeat", "2"],
        "--max-repeat 2 is below",
    );
    refused(
        &["--until", "decided", "--search", "best"],
        "cannot be used with",
    );
}
