use super::*;

fn feed(s: &mut Steadiness, ops: &[u64]) {
    for &n in ops {
        s.push(1.0, n, &[n as f64]);
    }
}

#[test]
fn spread_and_slope_follow_fio() {
    let (mean, spread, slope) = spread_and_slope(&[90.0, 100.0, 110.0]).unwrap();
    assert_eq!(mean, 100.0);
    assert!((spread - 10.0).abs() < 1e-9);
    // 10 per second on a mean of 100.
    assert!((slope - 10.0).abs() < 1e-9);
    assert!(spread_and_slope(&[5.0]).is_none());
    assert!(spread_and_slope(&[0.0, 0.0]).is_none());
}

#[test]
fn a_steady_throughput_is_steady_after_one_window() {
    let mut s = Steadiness::new(WINDOW_S, vec![SeriesSpec::THROUGHPUT]);
    feed(&mut s, &[1000, 1010, 990, 1005]);
    assert!(s.checks().is_none(), "no decision before a full window");
    feed(&mut s, &[995]);
    let checks = s.steady().expect("steady after one window");
    assert_eq!(checks[0].name, "ops_s");
    assert!(checks[0].spread_pct < 2.0);
}

#[test]
fn a_climbing_throughput_is_not_steady_until_it_flattens() {
    let mut s = Steadiness::new(WINDOW_S, vec![SeriesSpec::THROUGHPUT]);
    feed(&mut s, &[200, 400, 600, 800, 1000]);
    assert!(s.steady().is_none());
    assert!(!s.checks().unwrap()[0].steady);
    feed(&mut s, &[1000, 1000, 1000]);
    assert!(s.steady().is_none(), "the climb is still in the window");
    feed(&mut s, &[1000]);
    assert!(s.steady().is_some());
}

#[test]
fn a_decaying_cost_holds_the_warm_up_until_it_settles_or_is_negligible() {
    let mut s = Steadiness::new(
        3,
        vec![SeriesSpec::THROUGHPUT, SeriesSpec::cost("fpi_per_txn")],
    );
    for fpi in [500.0, 250.0, 120.0] {
        s.push(1.0, 1000, &[1000.0, fpi]);
    }
    let checks = s.checks().unwrap();
    assert!(checks[0].steady && !checks[1].steady, "{checks:?}");
    // Below the floor (0.02 per transaction): steady whatever its relative slope.
    for fpi in [15.0, 8.0, 4.0] {
        s.push(1.0, 1000, &[1000.0, fpi]);
    }
    assert!(s.steady().is_some());
}

#[test]
fn a_second_without_transactions_leaves_a_cost_as_it_was() {
    let mut s = Steadiness::new(2, vec![SeriesSpec::cost("wal_bytes_per_txn")]);
    s.push(1.0, 100, &[500_000.0]);
    s.push(1.0, 0, &[1000.0]);
    assert!(s.checks().is_none());
}

#[test]
fn stop_rules_parse_like_fio() {
    let r = StopRule::parse("iops:2%", 30).unwrap();
    assert_eq!(
        (r.metric, r.slope, r.limit_pct),
        (StopMetric::Iops, false, 2.0)
    );
    let r = StopRule::parse("bw_slope:0.1%", 10).unwrap();
    assert_eq!((r.metric, r.slope, r.dur_s), (StopMetric::Bw, true, 10));
    for bad in ["iops", "lat:2%", "iops:2", "iops:0%", "iops:x%"] {
        assert!(StopRule::parse(bad, 30).is_err(), "{bad}");
    }
    let spec = SeriesSpec::of_stop(&StopRule::parse("iops_slope:0.5%", 5).unwrap());
    assert_eq!((spec.spread_pct, spec.slope_pct), (None, Some(0.5)));
}
