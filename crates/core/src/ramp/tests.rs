use super::control::{Outcome, Phase, Stop};
use super::*;
use crate::record::{Latency, OpStats, Percentile, RoleResult};
use crate::settings::Settings;

fn spec(text: &str) -> RampSpec {
    RampSpec::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"))
}

#[test]
fn a_limit_alone_takes_every_default() {
    let s = spec("until=p99>5ms");
    assert_eq!(s.start_ops_s, DEFAULT_START);
    assert_eq!(s.step, DEFAULT_STEP);
    assert_eq!(
        s.limit,
        Limit {
            stat: Stat::Percentile(99.0),
            max_ns: 5_000_000
        }
    );
    assert_eq!((s.point, s.max_points, s.bisect), (DEFAULT_POINT, 20, 3));
}

#[test]
fn every_part_is_read() {
    let s = spec("start=1.5k, step=+250, until=mean>15ms, point=2s, max_points=7, bisect=0");
    assert_eq!(s.start_ops_s, 1500.0);
    assert_eq!(s.step, RampStep::Add(250.0));
    assert_eq!(s.limit.stat, Stat::Mean);
    assert_eq!(s.limit.max_ns, 15_000_000);
    assert_eq!(s.point, std::time::Duration::from_secs(2));
    assert_eq!((s.max_points, s.bisect), (7, 0));
    assert_eq!(spec("step=*2,until=p99.9>1s").step, RampStep::Factor(2.0));
}

#[test]
fn the_canonical_text_parses_back_to_the_same_ramp() {
    for text in [
        "until=p99>5ms",
        "start=333.5,step=+12.5,until=p99.99>1.5ms,point=90s,max_points=3,bisect=9",
        "step=x1.05,until=mean>250us",
    ] {
        let s = spec(text);
        assert_eq!(spec(&s.to_string()), s, "{s}");
    }
}

#[test]
fn errors_name_the_part_that_is_wrong() {
    let cases = [
        ("start=0,until=mean>1ms", "start=0:"),
        ("start=fast,until=mean>1ms", "start=fast:"),
        (
            "step=x1,until=mean>1ms",
            "step=x1: the factor must be above 1",
        ),
        ("step=2,until=mean>1ms", "step=2: expected xFACTOR"),
        ("step=+0,until=mean>1ms", "step=+0:"),
        ("until=p95>1ms", "until=p95>1ms: 'p95' is not a statistic"),
        ("until=mean<1ms", "until=mean<1ms: expected STAT>DURATION"),
        (
            "until=mean>0ms",
            "until=mean>0ms: the limit must be above 0",
        ),
        (
            "until=mean>5parsecs",
            "until=mean>5parsecs: '5parsecs': unknown time unit",
        ),
        (
            "until=mean>1ms,point=500ms",
            "point=500ms: a point lasts at least 1s",
        ),
        (
            "until=mean>1ms,max_points=0",
            "max_points=0: expected a whole number from 1",
        ),
        (
            "until=mean>1ms,bisect=-1",
            "bisect=-1: expected a whole number from 0",
        ),
        (
            "until=mean>1ms,speed=3",
            "unknown part 'speed' (parts: start, step",
        ),
        ("until=mean>1ms,until=p99>1ms", "until is given twice"),
        ("until", "'until' is not KEY=VALUE"),
        ("start=100", "give the latency limit: until=mean>15ms"),
        ("", "give the latency limit"),
    ];
    for (text, expected) in cases {
        let e = RampSpec::parse(text).expect_err(text);
        assert!(
            e.starts_with(expected) || e.contains(expected),
            "{text}: {e}"
        );
    }
}

fn outcome(rate: f64, phase: Phase, over: bool, saturated: bool) -> Outcome {
    Outcome {
        offered_ops_s: rate,
        phase,
        over_limit: over,
        saturated,
    }
}

/// Runs the controller against a stack that meets the limit up to `capacity` ops/s.
fn replay(s: &RampSpec, capacity: f64) -> (Vec<Outcome>, Stop) {
    let mut done = Vec::new();
    loop {
        match next_point(s, &done) {
            Next::Point {
                offered_ops_s,
                phase,
            } => done.push(outcome(
                offered_ops_s,
                phase,
                offered_ops_s > capacity,
                false,
            )),
            Next::Done(stop) => return (done, stop),
        }
        assert!(done.len() < 100, "the ramp ends");
    }
}

#[test]
fn the_ramp_climbs_by_its_step_then_bisects_the_bracket() {
    let s = spec("start=100,step=x2,until=mean>1ms,bisect=3");
    let (done, stop) = replay(&s, 1000.0);
    let rates: Vec<f64> = done.iter().map(|o| o.offered_ops_s).collect();
    // 800 is the last good climbing rate, 1600 the first bad: then 1200 (bad), 1000 (good),
    // 1100 (bad).
    assert_eq!(
        rates,
        [100.0, 200.0, 400.0, 800.0, 1600.0, 1200.0, 1000.0, 1100.0]
    );
    assert_eq!(stop, Stop::Limit);
    assert!(done[5..].iter().all(|o| o.phase == Phase::Bisect));
    let best = control::best(&done).unwrap();
    assert_eq!(done[best].offered_ops_s, 1000.0);
}

#[test]
fn saturation_stops_the_climb_like_the_limit() {
    let s = spec("start=100,step=+100,until=p99>1ms,bisect=0");
    let done = [
        outcome(100.0, Phase::Climb, false, false),
        outcome(200.0, Phase::Climb, false, true),
    ];
    assert_eq!(next_point(&s, &done), Next::Done(Stop::Saturated));
}

#[test]
fn max_points_ends_a_ramp_that_never_crossed_the_limit() {
    let s = spec("start=10,step=+10,until=p99>1ms,max_points=4");
    let (done, stop) = replay(&s, f64::INFINITY);
    assert_eq!(done.len(), 4);
    assert_eq!(stop, Stop::MaxPoints);
}

#[test]
fn a_first_point_over_the_limit_bisects_down_from_it() {
    let s = spec("start=1000,until=mean>1ms,bisect=2");
    let (done, stop) = replay(&s, 300.0);
    let rates: Vec<f64> = done.iter().map(|o| o.offered_ops_s).collect();
    assert_eq!(rates, [1000.0, 500.0, 250.0]);
    assert_eq!(stop, Stop::Limit);
    assert_eq!(done[control::best(&done).unwrap()].offered_ops_s, 250.0);
}

#[test]
fn bisection_ends_when_the_bracket_is_narrower_than_a_percent() {
    let s = spec("start=1000,step=x1.01,until=mean>1ms,bisect=10");
    let (done, _) = replay(&s, 1005.0);
    // 1000 good, 1010 bad: the bracket is already under 1 % of 1010.
    assert_eq!(done.len(), 2);
}

fn kind(kind: OpKind, ops: u64, mean_ns: f64, p99_ns: u64) -> OpStats {
    let lat = |scale: u64| Latency {
        mean_ns: mean_ns / scale as f64,
        min_ns: 1,
        max_ns: 2 * p99_ns / scale,
        percentiles: [50.0, 99.0, 99.9]
            .iter()
            .map(|&p| Percentile {
                p,
                lat_ns: (p99_ns as f64 * p / 99.0) as u64 / scale,
            })
            .collect(),
        stdev_ns: None,
        histogram: None,
    };
    OpStats {
        kind,
        ops,
        bytes: ops * 8192,
        iops: ops as f64 / 10.0,
        mb_s: 0.0,
        lat: Some(lat(1)),
        service: Some(lat(2)),
    }
}

use crate::op::OpKind;

/// A 10 s point of randrw at 1000 ops/s offered: 7,000 reads (mean 1 ms, p99 2 ms) and
/// 2,000 writes (mean 4 ms, p99 8 ms), plus syncs that do not count as operations.
fn measured_point() -> crate::record::RunRecord {
    let w = crate::workload::builtin("randrw").unwrap();
    let plan = w.plan(&Settings::default()).unwrap();
    let mut r = crate::record::fixture::minimal();
    r.plan = paced_plan(&plan, 1000.0, &spec("until=p99>5ms,point=10s"));
    r.roles = vec![RoleResult {
        name: r.plan.roles[0].name.clone(),
        threads: 1,
        ops: vec![
            kind(OpKind::Read, 7000, 1e6, 2_000_000),
            kind(OpKind::Write, 2000, 4e6, 8_000_000),
            kind(OpKind::Sync, 50, 9e6, 20_000_000),
        ],
        commits_per_write: None,
    }];
    r
}

#[test]
fn a_point_counts_operations_and_bounds_percentiles_by_the_slowest_kind() {
    let r = measured_point();
    let s = spec("until=p99>5ms");
    let p = RampPoint::from_record(&r, 1, 1000.0, Phase::Climb, &s.limit);
    assert_eq!(p.ops, 9000);
    assert!((p.achieved_ops_s - 900.0).abs() < 1e-9);
    // 900 of 1000 offered is under 95 %: saturated.
    assert!(p.saturated);
    assert!((p.lat_mean_ns.unwrap() - (7000.0 * 1e6 + 2000.0 * 4e6) / 9000.0).abs() < 1e-6);
    assert_eq!(p.lat_p99_ns, Some(8_000_000));
    assert_eq!(p.limit_stat_ns, Some(8e6));
    assert!(p.over_limit);
    assert_eq!(p.service_p50_ns, Some(4_040_404 / 2));
    let mean = RampPoint::from_record(&r, 1, 900.0, Phase::Climb, &spec("until=mean>2ms").limit);
    assert!(!mean.over_limit && !mean.saturated && mean.good());
}

#[test]
fn the_pacing_splits_the_offered_rate_over_the_threads() {
    let w = crate::workload::builtin("randread").unwrap();
    let mut set = Settings::default();
    set.insert("jobs", "4", crate::settings::Origin::CommandLine);
    let plan = w.plan(&set).unwrap();
    point::check_rampable(&plan).unwrap();
    let paced = paced_plan(&plan, 1000.0, &spec("until=p99>5ms,point=3s"));
    assert_eq!(paced.runtime, std::time::Duration::from_secs(3));
    assert_eq!(paced.roles[0].threads, 4);
    assert_eq!(paced.roles[0].rate_iops, Some(250.0));
    let e = point::check_rampable(&paced).unwrap_err();
    assert!(e.contains("remove rate_iops"), "{e}");
}

#[test]
fn client_processes_share_the_offered_rate_and_the_tree_follows_it() {
    let w = crate::workload::builtin("nfsmix").unwrap();
    let mut set = Settings::default();
    set.insert("clients", "4", crate::settings::Origin::CommandLine);
    let plan = w.plan(&set).unwrap();
    let threads: u32 = plan.roles.iter().map(|r| r.threads).sum();
    let low = paced_plan(&plan, 400.0, &spec("until=mean>15ms"));
    let high = paced_plan(&plan, 1600.0, &spec("until=mean>15ms"));
    let offered: f64 = low
        .roles
        .iter()
        .filter_map(|r| r.rate_iops.map(|x| x * f64::from(r.threads)))
        .sum();
    // 4 clients run every role: together they offer the point's rate, not 4 times it.
    assert!(
        (offered * 4.0 - 400.0).abs() < 1e-6,
        "{offered} per client, {threads} threads"
    );
    // The tree is sized by the load each client offers: 4x the load, 4x the files.
    let files =
        |p: &crate::plan::Plan| p.filesets.iter().map(|f| u64::from(f.nrfiles)).sum::<u64>();
    assert!(
        files(&high) > 3 * files(&low),
        "{} vs {}",
        files(&high),
        files(&low)
    );
}

#[test]
fn the_record_names_the_best_point_and_where_the_climb_stopped() {
    let r = measured_point();
    let limit = spec("until=mean>5ms").limit;
    let points: Vec<RampPoint> = [(500.0, Phase::Climb), (1000.0, Phase::Climb)]
        .iter()
        .zip(1..)
        .map(|(&(rate, phase), i)| RampPoint::from_record(&r, i, rate, phase, &limit))
        .collect();
    let ramp = RampRecord::finish(&spec("until=mean>5ms"), points, Stop::Saturated);
    let head = ramp.headline.clone().unwrap();
    assert_eq!(
        (head.point, head.offered_ops_s, head.lower_bound),
        (1, 500.0, false)
    );
    assert_eq!(ramp.stopped_at_ops_s, Some(1000.0));
    assert_eq!(ramp.limit, "mean <= 5.00 ms");
    let json = serde_json::to_string(&ramp).unwrap();
    let back: RampRecord = serde_json::from_str(&json).unwrap();
    assert_eq!(back, ramp);
}
