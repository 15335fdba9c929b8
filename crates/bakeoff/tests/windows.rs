//! Windows that close where they open: a time series ends on a whole sample, not a stub of a
//! few milliseconds; a window too short to measure reports no CPU, device or steadiness
//! figures and no verdict; the automatic warm-up is recorded. Null engine, temporary
//! directories: they run anywhere.

mod common;
use common::{bakeoff, tmp};
use std::time::Duration;

/// The `t_s` column of a time-series CSV.
fn times(csv: &str) -> Vec<f64> {
    csv.lines()
        .skip(1)
        .map(|l| l.split(',').next().unwrap().parse().unwrap())
        .collect()
}

#[test]
fn a_time_series_has_no_stub_last_sample() {
    let d = tmp();
    let csv = d.path().join("r.csv");
    // 2.05 s measured: the run's end falls ~50 ms after the last whole second.
    bakeoff()
        .args(["run", "randread", "--quiet", "--target"])
        .arg(d.path())
        .args(["--set", "engine=null,size=1m,ramp_time=0,runtime=2050ms"])
        .arg("--timeseries")
        .arg(&csv)
        .assert()
        .success();
    let t = times(&std::fs::read_to_string(&csv).unwrap());
    assert!(t.len() >= 2, "{t:?}");
    for w in t.windows(2) {
        assert!(
            w[1] - w[0] >= 0.5,
            "a sample of {:.3} s: {t:?}",
            w[1] - w[0]
        );
    }
}

#[test]
fn a_window_interrupted_before_it_opens_reports_no_cpu_and_no_verdict() {
    let d = tmp();
    let json = d.path().join("r.json");
    let bin = assert_cmd::cargo::cargo_bin("bakeoff");
    let mut child = std::process::Command::new(bin)
        .args(["run", "randread", "--target"])
        .arg(d.path())
        .args(["--set", "engine=null,size=1m,ramp_time=30s,runtime=10s"])
        .arg("--json")
        .arg(&json)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Well inside the 30 s warm-up: the window never opens.
    std::thread::sleep(Duration::from_millis(2000));
    std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert_eq!(child.wait().unwrap().code(), Some(130));
    let mut out = String::new();
    std::io::Read::read_to_string(&mut child.stdout.take().unwrap(), &mut out).unwrap();
    assert!(out.contains(" 0 ns measured"), "{out}");
    for absent in [
        "cpu ",
        "devices ",
        "cpu_saturated",
        "warning:",
        "note:",
        "checks hold",
    ] {
        assert!(
            !out.contains(absent),
            "'{absent}' printed for a 0.0 s window:\n{out}"
        );
    }
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(v["status"], "interrupted");
    assert!(v["cpu"].is_null(), "{}", v["cpu"]);
    assert_eq!(v["devices"].as_array().map(Vec::len), Some(0));
    assert_eq!(v["findings"].as_array().map(Vec::len), Some(0));
    // The warm-up that did run is recorded.
    assert_eq!(v["steady"]["warmup"], "fixed");
}

#[test]
fn the_automatic_warm_up_of_a_steady_run_ends_within_two_windows_and_is_recorded() {
    let d = tmp();
    let json = d.path().join("r.json");
    bakeoff()
        .args(["run", "randread", "--quiet", "--target"])
        .arg(d.path())
        // A paced run: steady from its first second, whatever else the machine does.
        .args(["--set", "size=1m,rate_iops=2000,runtime=2s"])
        .arg("--json")
        .arg(&json)
        .assert()
        .success();
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let s = &v["steady"];
    assert_eq!(s["warmup"], "auto", "{s}");
    assert_eq!(s["capped"], false, "{s}");
    let window = bakeoff_core::steady::WINDOW_S as f64;
    let took = s["warmup_s"].as_f64().unwrap();
    assert!(took >= window - 1.0 && took <= 2.0 * window + 1.0, "{s}");
    let checks = s["checks"].as_array().unwrap();
    assert_eq!(checks[0]["name"], "ops_s", "{s}");
    assert!(checks.iter().all(|c| c["steady"] == true), "{s}");
    assert_eq!(v["plan"]["ramp_auto"]["max_ns"], 120_000_000_000u64);
}

#[test]
fn an_ss_rule_ends_the_window_once_its_throughput_is_steady() {
    let d = tmp();
    let json = d.path().join("r.json");
    bakeoff()
        .args(["run", "randread", "--quiet", "--target"])
        .arg(d.path())
        // Paced: steady from the start, so the rule holds after its 3 s of samples.
        .args([
            "--set",
            "size=1m,rate_iops=2000,ramp_time=0,runtime=60s,ss=iops:20%,ss_dur=3s",
        ])
        .arg("--json")
        .arg(&json)
        .assert()
        .success();
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let measured = v["measured_ns"].as_f64().unwrap() / 1e9;
    assert!((2.0..15.0).contains(&measured), "measured {measured} s");
    let stop = &v["steady"]["stop"];
    assert_eq!(stop["rule"]["metric"], "iops", "{stop}");
    assert_eq!(stop["rule"]["dur_s"], 3, "{stop}");
    assert_eq!(stop["attained"]["steady"], true, "{stop}");
    assert!(
        stop["attained"]["spread_pct"].as_f64().unwrap() <= 20.0,
        "{stop}"
    );
    assert_eq!(v["status"], "completed");
}
