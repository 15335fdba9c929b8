use super::*;
use crate::comparison::CellRuns;
use crate::ramp_fixture::cells;
use bakeoff_core::verdict::Verdict;

fn common(row: &RampRow, key: &str) -> FigureCell {
    let i = COMMON_FIGURES
        .iter()
        .position(|f| f.figure.key == key)
        .unwrap();
    row.at_common[i].clone()
}

#[test]
fn the_common_point_is_the_highest_rate_every_run_met_the_limit_at() {
    let rc = build(&cells(), &Method::default()).unwrap();
    let g = &rc.groups[0];
    assert_eq!(g.common_ops_s, Some(1500.0));
    assert_eq!(g.limit, "p99 <= 5.00 ms");
    let [ext4, zfs] = &g.rows[..] else {
        panic!("two rows")
    };
    assert!(ext4.is_baseline && !zfs.is_baseline);
    // The highest rate within the limit: the bisected 1,875 against 2,812.5, worse.
    let max = &zfs.max_ops_s;
    assert!(
        (max.ratio.unwrap() - 1875.0 / 2812.5).abs() < 1e-9,
        "{max:?}"
    );
    assert_eq!(max.vs_baseline.as_ref().unwrap().verdict, Verdict::Worse);
    // At 1,500 ops/s: 8x the device bytes read and 3x the CPU per operation, both worse.
    let read = common(zfs, "device_read_kib_per_op");
    assert_eq!((read.median, read.ratio), (Some(64.0), Some(8.0)));
    assert_eq!(read.vs_baseline.unwrap().verdict, Verdict::Worse);
    assert_eq!(common(zfs, "cpu_us_per_op").ratio, Some(3.0));
    let bandwidth = common(zfs, "device_read_mb_s");
    assert!((bandwidth.ratio.unwrap() - 8.0).abs() < 1e-9);
    assert!(bandwidth.vs_baseline.is_none(), "bandwidth is a diagnostic");
    // ext4 writes nothing: no ratio of something near zero, a difference.
    let write = common(zfs, "device_write_kib_per_op");
    assert_eq!((write.ratio, write.difference), (None, Some(4.0)));
}

#[test]
fn a_study_without_ramps_has_no_ramp_comparison() {
    let plain = vec![CellRuns {
        label: "ext4".into(),
        stack: "ext4".into(),
        runs: vec![crate::fixture::record()],
        baseline: Some(0),
    }];
    assert!(build(&plain, &Method::default()).is_none());
}

#[test]
fn ramps_that_share_no_rate_have_no_common_point() {
    let mut cells = cells();
    for r in &mut cells[1].runs {
        let ramp = r.ramp.as_mut().unwrap();
        ramp.points.iter_mut().for_each(|p| p.offered_ops_s += 1.0);
    }
    let rc = build(&cells, &Method::default()).unwrap();
    assert_eq!(rc.groups[0].common_ops_s, None);
    assert!(rc.groups[0].rows[1]
        .at_common
        .iter()
        .all(|f| f.median.is_none()));
    let text = super::text::render_table(&rc);
    assert!(
        text.replace('\n', " ").contains("no common load point"),
        "{text}"
    );
}

fn report() -> crate::comparison::StudyReport {
    let cols = [crate::figures::figure("read_iops").unwrap()];
    crate::comparison::build(&cells(), &cols, &Method::default(), 3)
}

#[test]
fn table_golden() {
    insta::assert_snapshot!(crate::comparison::text::render_table(&report()));
}

#[test]
fn markdown_golden() {
    insta::assert_snapshot!(crate::comparison::text::render_markdown(&report()));
}

#[test]
fn csv_golden() {
    insta::assert_snapshot!(crate::comparison::text::render_csv(&report()));
}

#[test]
fn json_carries_the_ramps() {
    let json: serde_json::Value =
        serde_json::from_str(&crate::comparison::text::render_json(&report())).unwrap();
    let g = &json["ramps"]["groups"][0];
    assert_eq!(g["common_ops_s"], 1500.0);
    assert_eq!(g["rows"][1]["max_ops_s"]["vs_baseline"]["verdict"], "worse");
    assert_eq!(json["ramps"]["common_figures"][3], "device_read_kib_per_op");
}

#[test]
fn the_comparison_charts_each_cells_highest_rate_within_the_limit() {
    let r = report();
    let charts = crate::charts::study::charts(&r);
    let bars = charts.iter().find(|c| c.id == "ramp_max_ops_0").unwrap();
    let points = &bars.series[0].points;
    assert_eq!(
        bars.categories,
        ["ext4 / randread (baseline)", "zfs / randread"]
    );
    assert!(points[0].baseline && !points[1].baseline);
    assert_eq!(points[1].note.as_deref(), Some("×0.67 - worse"));
    insta::assert_snapshot!(bars.to_string());
}
