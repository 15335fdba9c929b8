use super::*;
use crate::ramp_fixture::{ramp, record, DIRECT};

#[test]
fn the_bar_reaches_eight_cells_at_the_limit_and_marks_values_past_the_end() {
    assert_eq!(bar(Some(5.0), 10.0), "████");
    assert_eq!(bar(Some(10.0), 10.0), "█".repeat(8));
    assert_eq!(bar(Some(1.0), 16.0), "▌");
    assert_eq!(bar(Some(100.0), 10.0), format!("{}›", "█".repeat(12)));
    assert_eq!(bar(None, 10.0), "");
}

#[test]
fn the_sparkline_scales_to_the_largest_value() {
    assert_eq!(sparkline(&[0.0, 1.0, 7.0]), "▁▂█");
    assert_eq!(sparkline(&[]), "");
}

#[test]
fn the_curve_table_lists_points_by_offered_rate_with_the_headline() {
    insta::assert_snapshot!(render_table(&ramp(DIRECT, 1.0)));
}

#[test]
fn the_csv_has_one_row_per_point_in_the_order_run() {
    let csv = render_csv(&ramp(DIRECT, 1.0));
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 7, "{csv}");
    let head: Vec<&str> = lines[0].split(',').collect();
    assert!(lines[1..]
        .iter()
        .all(|l| l.split(',').count() == head.len()));
    let col = |name: &str| head.iter().position(|h| *h == name).unwrap();
    let row5: Vec<&str> = lines[5].split(',').collect();
    assert_eq!(row5[col("index")], "5");
    assert_eq!(row5[col("phase")], "bisect");
    assert_eq!(row5[col("offered_ops_s")], "2812.5");
    assert_eq!(row5[col("headline")], "true");
    assert_eq!(row5[col("arc_bytes")], "", "no ARC: an empty cell, not 0");
    insta::assert_snapshot!(csv);
}

#[test]
fn a_runs_csv_export_is_the_points_of_a_ramp_and_the_summary_otherwise() {
    assert!(run_csv(&record(DIRECT, 1.0)).starts_with("index,phase,offered_ops_s"));
    let plain = crate::fixture::record();
    assert_eq!(run_csv(&plain), crate::csv::render_summary(&plain));
}

#[test]
fn a_ramp_that_never_met_the_limit_says_so() {
    let mut r = ramp(DIRECT, 1.0);
    r.points.iter_mut().for_each(|p| p.over_limit = true);
    let r = RampRecord::finish(&r.spec, r.points, Stop::Limit);
    assert_eq!(
        headline(&r),
        "no point met p99 <= 5.00 ms (the latency limit was crossed at 1,000 ops/s offered)"
    );
}
