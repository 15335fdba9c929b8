//! Load ramps through the command line: the spec's errors, every point in the record and one
//! CSV row each, Ctrl-C keeping the finished points, a stall that shows in its own point only,
//! and (root, measuring) open and closed loop agreeing on what an ext4 loop stack carries.

mod common;
use bakeoff_testkit::command::KillOnDrop;
use bakeoff_testkit::loop_device::LoopFs;
use bakeoff_testkit::privileged_turn;
use common::{bakeoff, fig, run_json, tmp};
use serde_json::Value;
use std::io::BufRead;
use std::process::{Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::Duration;

/// A running `bakeoff run ... --ramp` whose stderr lines arrive on a channel.
struct Running {
    child: KillOnDrop,
    lines: Receiver<String>,
    json: std::path::PathBuf,
    _dir: tempfile::TempDir,
}

impl Running {
    /// Starts `run WORKLOAD --warm --target DIR --set SET,ramp_time=0 --ramp RAMP` with its
    /// JSON record (no warm-up in a point: these tests place events in points' windows).
    fn start(workload: &str, set: &str, ramp: &str) -> Running {
        let dir = tmp();
        let json = dir.path().join("r.json");
        let mut child = Command::new(assert_cmd::cargo::cargo_bin("bakeoff"))
            .args(["run", workload, "--warm", "--target"])
            .arg(dir.path())
            .args([
                "--set",
                &format!("{set},ramp_time=0"),
                "--ramp",
                ramp,
                "--json",
            ])
            .arg(&json)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let (tx, lines) = channel();
        let stderr = std::io::BufReader::new(child.stderr.take().unwrap());
        std::thread::spawn(move || {
            for line in stderr.lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        Running {
            child: KillOnDrop(child),
            lines,
            json,
            _dir: dir,
        }
    }

    /// Waits for a stderr line starting with `prefix`.
    fn wait_for(&self, prefix: &str) {
        loop {
            let line = (self.lines.recv_timeout(Duration::from_secs(120)))
                .unwrap_or_else(|_| panic!("no line '{prefix}' from bakeoff"));
            if line.starts_with(prefix) {
                return;
            }
        }
    }

    /// Sends `signal` (`-STOP`, `-INT`) as a user would with kill(1).
    fn signal(&self, signal: &str) {
        let pid = self.child.0.id().to_string();
        assert!(Command::new("kill")
            .args([signal, &pid])
            .status()
            .unwrap()
            .success());
    }

    /// Waits for the exit; the exit code and the JSON record.
    fn finish(mut self) -> (Option<i32>, Value) {
        let status = self.child.0.wait().unwrap();
        let text = std::fs::read_to_string(&self.json).unwrap();
        (status.code(), serde_json::from_str(&text).unwrap())
    }
}

fn points(v: &Value) -> &Vec<Value> {
    v["ramp"]["points"].as_array().expect("ramp.points")
}

fn ms(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("{v} is not a number")) / 1e6
}

#[test]
fn ramp_spec_errors_are_usage_errors_before_anything_is_laid_out() {
    let d = tmp();
    let target = d.path().to_str().unwrap();
    let cases = [
        (
            vec!["run", "randread", "--ramp", "until=p95>1ms"],
            "--ramp: until=p95>1ms: 'p95' is not a statistic",
        ),
        (
            vec!["run", "randread", "--ramp", "start=100"],
            "--ramp: give the latency limit: until=mean>15ms",
        ),
        (
            vec![
                "run",
                "randread",
                "--set",
                "rate_iops=10",
                "--ramp",
                "until=p99>1ms",
            ],
            "--ramp: the ramp sets every point's rate: remove rate_iops",
        ),
        (
            vec!["run", "tpcc", "--ramp", "until=p99>1ms"],
            "--ramp paces I/O and file workloads",
        ),
    ];
    for (args, expected) in cases {
        let out = bakeoff()
            .args(&args)
            .args(["--warm", "--target", target])
            .assert()
            .code(2);
        let stderr = String::from_utf8_lossy(&out.get_output().stderr).to_string();
        assert!(
            stderr.starts_with("bakeoff: error: ") && stderr.contains(expected),
            "{args:?}: {stderr}"
        );
        let laid_out = std::fs::read_dir(target).unwrap().count();
        assert_eq!(laid_out, 0, "{args:?} touched the target");
    }
    let study = d.path().join("s.toml");
    std::fs::write(
        &study,
        "stacks = [\"tmpfs\"]\n[[workload]]\nname = \"randread\"\nramp = \"until=mean>1ms,step=y\"\n",
    )
    .unwrap();
    let out = bakeoff()
        .args(["compare", "--dry-run", "--study"])
        .arg(&study)
        .assert()
        .code(2);
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(
        stderr.contains("s.toml:4: ramp: step=y: expected xFACTOR"),
        "{stderr}"
    );
}

#[test]
fn every_point_is_in_the_record_and_in_one_csv_row() {
    let d = tmp();
    let csv = d.path().join("points.csv");
    let v = run_json(&[
        "run",
        "randread",
        "--warm",
        "--target",
        d.path().to_str().unwrap(),
        "--set",
        "engine=null,size=4m,jobs=2,ramp_time=0",
        "--ramp",
        // 2 s points: at 100 ops/s a 1 s point holds 100 operations, and one 60 ms hiccup of
        // a shared machine made it "saturated" (achieved under 95 % of offered).
        "start=100,step=x2,until=p99>2s,point=2s,max_points=3",
        "--export-csv",
        csv.to_str().unwrap(),
    ]);
    let ramp = &v["ramp"];
    assert_eq!(ramp["stop"], "max_points");
    let offered: Vec<f64> = points(&v)
        .iter()
        .map(|p| p["offered_ops_s"].as_f64().unwrap())
        .collect();
    assert_eq!(offered, [100.0, 200.0, 400.0]);
    for p in points(&v) {
        let (o, a) = (
            p["offered_ops_s"].as_f64().unwrap(),
            p["achieved_ops_s"].as_f64().unwrap(),
        );
        assert!((0.9..1.1).contains(&(a / o)), "achieved {a} of {o} offered");
        assert!(p["cpu"]["busy_pct"].is_number() && p["page_cache_bytes"].is_number());
        assert_eq!(p["kinds"][0]["kind"], "read");
    }
    let head = &ramp["headline"];
    assert_eq!(
        (head["point"].as_u64(), head["lower_bound"].as_bool()),
        (Some(3), Some(true))
    );
    // The record's own figures are the headline point's.
    assert_eq!(v["plan"]["roles"][0]["rate_iops"], 200.0);
    let text = std::fs::read_to_string(csv).unwrap();
    let rows: Vec<&str> = text.lines().collect();
    assert_eq!(rows.len(), 4, "{text}");
    assert!(rows[0].starts_with("index,phase,offered_ops_s,achieved_ops_s"));
    assert!(rows[3].starts_with("3,climb,400,"));
}

#[test]
fn compare_of_ramps_adds_each_stacks_maximum_and_its_costs_at_the_common_point() {
    let d = tmp();
    let (a, b) = (d.path().join("a"), d.path().join("b"));
    std::fs::create_dir(&a).unwrap();
    std::fs::create_dir(&b).unwrap();
    let json = d.path().join("c.json");
    let out = common::quick_compare(
        &a,
        &b,
        1,
        &[
            "--out",
            d.path().join("r").to_str().unwrap(),
            "--ramp",
            "start=50,step=x2,until=p99>2s,point=1s,max_points=2",
            "--export-json",
            json.to_str().unwrap(),
        ],
    )
    .success();
    let table = String::from_utf8_lossy(&out.get_output().stdout).replace('\n', " ");
    let v: Value = serde_json::from_str(&std::fs::read_to_string(json).unwrap()).unwrap();
    let group = &v["ramps"]["groups"][0];
    // Both points (50 and 100 ops/s) are within the limit, but a one-second point falls short of
    // 95% of its rate if a busy machine (CI runs test binaries side by side on two CPUs) keeps
    // the paced thread off the CPU for 50 ms: then that cell's second point is saturated and the
    // common point is the first. Either way it is the highest rate both cells carried.
    let common = group["common_ops_s"].as_f64().unwrap();
    assert!(common == 100.0 || common == 50.0, "{group}");
    // Rates under 100 are printed with a decimal.
    let shown = if common == 100.0 { "100" } else { "50.0" };
    assert!(
        table.contains("ramps: the highest rate within p99 <= 2.00 s")
            && table.contains(&format!("common load point, {shown} ops/s offered")),
        "{table}"
    );
    let rows = group["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 2);
    for row in rows {
        let max = row["max_ops_s"]["median"].as_f64().unwrap();
        assert!((common * 0.9..110.0).contains(&max), "{row}");
        // A cell that carried both points reached max_points within the limit: its maximum
        // is a lower bound. One whose second point fell short stopped there, saturated.
        let carried_both = max >= 95.0;
        assert_eq!(
            row["lower_bound_runs"],
            u64::from(carried_both),
            "max_points within the limit: {row}"
        );
        let cpu = &row["at_common"][2];
        assert!(cpu["median"].as_f64().unwrap() > 0.0, "cpu us/op {cpu}");
    }
}

#[test]
fn ctrl_c_ends_the_ramp_and_keeps_the_finished_points() {
    let run = Running::start(
        "randread",
        "engine=null,size=4m",
        "start=100,step=+100,until=p99>2s,point=1s,max_points=50",
    );
    run.wait_for("ramp: point 2: achieved");
    run.signal("-INT");
    let (code, v) = run.finish();
    assert_eq!(code, Some(130));
    assert_eq!(v["status"], "interrupted");
    assert_eq!(v["ramp"]["stop"], "interrupted");
    let n = points(&v).len();
    assert!((2..=3).contains(&n), "{n} finished points kept");
    assert!(v["ramp"]["headline"]["achieved_ops_s"].as_f64().unwrap() > 0.0);
}

#[test]
fn a_one_second_stall_shows_in_its_points_p999_and_not_in_the_others() {
    // Buffered reads of a small file: served from the page cache, so only the stall (and the
    // machine's scheduling noise) can make an operation slow.
    let run = Running::start(
        "randread",
        "bs=4k,size=8m,jobs=4",
        "start=400,step=+400,until=p99.9>5s,point=4s,max_points=3,bisect=0",
    );
    run.wait_for("ramp: point 2 (climbing)");
    std::thread::sleep(Duration::from_millis(1200));
    run.signal("-STOP");
    std::thread::sleep(Duration::from_secs(1));
    run.signal("-CONT");
    let (code, v) = run.finish();
    assert_eq!(code, Some(0), "{v}");
    let p999: Vec<f64> = points(&v).iter().map(|p| ms(&p["lat_p999_ns"])).collect();
    assert_eq!(p999.len(), 3);
    assert!(
        p999[1] >= 500.0,
        "the stalled point's p99.9 is {} ms",
        p999[1]
    );
    for i in [0, 2] {
        assert!(p999[i] < 250.0, "point {}'s p99.9 is {} ms", i + 1, p999[i]);
    }
    // The schedule did not move: the stalled operations were issued late and counted.
    let stalled = &points(&v)[1];
    let achieved = stalled["achieved_ops_s"].as_f64().unwrap();
    assert!(achieved > 0.9 * 800.0, "achieved {achieved} of 800 offered");
}

/// Open and closed loop must agree where physics says they do: the highest rate an open loop
/// carries within a latency limit is the capacity a saturating closed loop measures.
///
/// The limit is seed 004's own: a mean of 15 ms, 40-50x this device's service time. Below
/// capacity the mean stays near the service time; past it the backlog grows by the excess
/// every second (by arithmetic: 2 % over capacity for 3 s leaves the last arrivals ~60 ms
/// of queue to wait behind), and the saturation rule (achieved < 95 % of offered) stops the
/// climb too. A limit near the service time instead meets the virtual disk's stalls: measured
/// on an idle machine (ext4 on a loop device over /dev/vda, 8 KiB direct reads, 16 threads;
/// closed loop 39-52k IOPS, p50 298-399 us), p99 is flat at 0.9-1.5 ms from 35 % to 90 % of
/// capacity in most points, but single 3 s points reached p99 5.3-42 ms, and a stall near
/// capacity takes ρ/(1-ρ) times its length to drain. With `until=p99>5ms` this test found
/// 0.74x and 0.78x, with a p99 limit of 1.5 ms 0.41x-0.44x, with a mean limit of 5x the median
/// 0.93-0.95x in three runs by hand, a pass in CI and 0.45x in the next CI (one stall lifted a
/// point at 47 % of capacity to a mean of 1.8 ms, p99 42 ms); with 15 ms, 1.06x and 1.02x by
/// hand and a pass in CI. That tail is what an open loop is right to report (a closed loop
/// hides it); it is not the capacity. The test checks the premise: at a quarter of the
/// capacity the mean is under half the limit. The capacity is measured on both sides of the
/// ramp.
///
/// Why 16 paced threads can reach what 16 closed-loop threads do: the role's threads share one
/// schedule (engine `worker::schedule`), so they are one queue with 16 servers, as the device
/// is. With a schedule per thread (16 separate queues, what the engine did before) an arrival
/// waits behind a slow read on its own thread while others idle (0.56x then).
#[test]
fn a_ramp_finds_the_capacity_a_saturating_closed_loop_measures_on_ext4() {
    let Some(_turn) = privileged_turn() else {
        return;
    };
    let stack = LoopFs::new(1 << 30, "ext4", "noatime");
    let mnt = stack.target();
    let set = "bs=8k,direct=true,size=512m,jobs=16,ramp_time=0";
    let run = |extra: &[&str]| {
        let mut args = vec!["run", "randread", "--warm", "--target", &mnt];
        args.extend(extra);
        run_json(&args)
    };
    let closed_set = format!("{set},runtime=5s");
    let closed_run = || run(&["--set", &closed_set]);
    let closed = closed_run();
    // The premise: the device, not the CPU, is the limit. Pacing (sleeps and wake-ups) costs
    // an open loop CPU a closed loop does not spend, so on a machine whose CPUs other work
    // takes, the open loop saturates the CPU first and the two cannot agree.
    let other = fig(&closed, "cpu_other_pct");
    let free = format!("CPUs not taken by other processes (they used {other:.0}% of all CPU)");
    if !bakeoff_testkit::require(other < 20.0, &free) {
        return;
    }
    let before = fig(&closed, "read_iops");
    let service_us = fig(&closed, "read_lat_p50_us");
    let per_thread = before / 4.0 / 16.0;
    let light = run(&["--set", &format!("{set},runtime=3s,rate_iops={per_thread}")]);
    let limit_us = 15_000.0;
    let light_mean = light["ops"][0]["lat"]["mean_ns"].as_f64().unwrap() / 1000.0;
    let calm = format!("a mean under half the limit at a quarter of capacity ({light_mean:.0} us)");
    if !bakeoff_testkit::require(light_mean < limit_us / 2.0, &calm) {
        return;
    }
    let spec = format!(
        "start={:.0},step=x1.15,until=mean>{limit_us:.0}us,point=3s,bisect=3",
        0.4 * before
    );
    // One ramp and the closed loop after it; `None` if other work took the CPUs meanwhile.
    let attempt = || {
        let ramp = run(&["--set", set, "--ramp", &spec]);
        // The virtual disk's capacity drifts between runs minutes apart (closed loops of
        // 40.7k, 43.3k and 50.6k IOPS in three runs of this test): measure it on both sides.
        let after = fig(&closed_run(), "read_iops");
        let (low, high) = (before.min(after), before.max(after));
        // The premise must hold while the points run too: other work that starts after the
        // closed loop would make the open loop's wake-ups, not the device, decide its maximum.
        let busiest = (points(&ramp).iter())
            .filter_map(|p| p["cpu"]["split"]["other_pct"].as_f64())
            .fold(0.0, f64::max);
        let free =
            format!("CPUs not taken by other processes during the ramp (up to {busiest:.0}%)");
        if !bakeoff_testkit::require(busiest < 20.0, &free) {
            return None;
        }
        let max = ramp["ramp"]["headline"]["achieved_ops_s"]
            .as_f64()
            .unwrap_or(0.0);
        let curve: Vec<String> = points(&ramp)
            .iter()
            .map(|p| {
                format!(
                    "{:.0}/s mean {:.2}ms p99 {:.2}ms",
                    p["offered_ops_s"].as_f64().unwrap(),
                    p["lat_mean_ns"].as_f64().unwrap_or(f64::NAN) / 1e6,
                    ms(&p["lat_p99_ns"])
                )
            })
            .collect();
        // The capacity lies somewhere between the two closed loops (a CI run: 37.4k before,
        // 34.5k after, and an open loop of 39.6k between them): the maximum is held to that
        // bracket, not to its middle.
        let ratio = if max > high {
            max / high
        } else {
            (max / low).min(1.0)
        };
        let said = format!(
            "closed loop {before:.0} and {after:.0} IOPS (p50 {service_us:.0}us, other \
             processes {other:.0}% of the CPU); open loop {max:.0} ops/s within mean \
             {limit_us:.0}us: ratio {ratio:.2}; stop: {}; points: {curve:?}",
            ramp["ramp"]["stop"]
        );
        Some((ramp, ratio, said))
    };
    let Some((mut ramp, mut ratio, mut said)) = attempt() else {
        return;
    };
    // What was measured, for `--nocapture` (and for whoever reads the log of a passing run).
    eprintln!("{said}");
    // The shared virtual disk stalls now and then (a CI run: mean 8 ms at 19.8k/s and 59 ms at
    // 22.8k/s, then 0.5 ms at 20.9k/s in the same ramp, closed loops of 37k and 40k around it):
    // one stall in a 3 s point ends a ramp early. Up to two more tries: a CI run missed twice
    // (0.75 and 0.75, other processes 6 %), and on a quiet machine a miss (0.69) was followed
    // by 1.00.
    for _ in 0..2 {
        if (0.8..=1.1).contains(&ratio) {
            break;
        }
        let Some(again) = attempt() else {
            return;
        };
        (ramp, ratio, said) = again;
        eprintln!("once more: {said}");
    }
    assert!((0.8..=1.1).contains(&ratio), "{said}");
    // Every point was measured on the stack's device, one device read per operation.
    for p in points(&ramp) {
        let per_op = p["device_read_bytes"].as_f64().unwrap() / p["ops"].as_f64().unwrap();
        assert!(
            (7000.0..9500.0).contains(&per_op),
            "{per_op} device bytes per read"
        );
    }
}

#[test]
fn a_paced_worker_woken_by_the_end_of_a_point_issues_nothing_more() {
    // At 100/s over 16 threads each thread sleeps ~160 ms for its next arrival, so the end of
    // every point finds them asleep; an I/O issued then would complete before its arrival
    // (a negative latency: a panic in a debug build, a wrapped one in the histogram else).
    let d = tmp();
    let out = bakeoff()
        .args(["run", "randread", "--warm", "--target"])
        .arg(d.path())
        .args(["--set", "size=4m,jobs=16,ramp_time=0", "--ramp"])
        .arg("start=100,step=x2,until=p99>2s,point=1s,max_points=2,bisect=0")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}
