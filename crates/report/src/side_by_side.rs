//! Several runs as columns of headline figures (the demo's comparison).

use crate::fmt::{bytes, lat, pct, rate, ratio};
use bakeoff_core::record::{RunRecord, Summary};
use comfy_table::{presets::UTF8_FULL_CONDENSED, CellAlignment, Table};

type Row = (&'static str, fn(&Summary) -> String);

const ROWS: &[Row] = &[
    ("read IOPS", |s| s.read_iops.map_or("-".into(), rate)),
    ("write IOPS", |s| s.write_iops.map_or("-".into(), rate)),
    ("read MB/s", |s| {
        s.read_mb_s.map_or("-".into(), |v| format!("{v:.1}"))
    }),
    ("write MB/s", |s| {
        s.write_mb_s.map_or("-".into(), |v| format!("{v:.1}"))
    }),
    ("read p50", |s| {
        lat(s.read_lat_p50_us.map(|u| (u * 1e3) as u64))
    }),
    ("read p99", |s| {
        lat(s.read_lat_p99_us.map(|u| (u * 1e3) as u64))
    }),
    ("write p99", |s| {
        lat(s.write_lat_p99_us.map(|u| (u * 1e3) as u64))
    }),
    ("CPU busy", |s| pct(s.cpu_busy_pct)),
    ("CPU us/op", |s| ratio(s.cpu_us_per_op)),
    ("device read IOPS", |s| {
        s.device_read_iops.map_or("-".into(), rate)
    }),
    ("device write IOPS", |s| {
        s.device_write_iops.map_or("-".into(), rate)
    }),
    ("device bytes/read", |s| bytes(s.device_read_bytes_per_op)),
    ("read amplification", |s| ratio(s.read_amplification)),
    ("write amplification", |s| ratio(s.write_amplification)),
    ("cache hits", |s| pct(s.cache_hit_pct)),
];

/// One column per run, labelled by `labels`.
pub fn render(labels: &[String], records: &[RunRecord]) -> String {
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED);
    let mut head = vec![String::new()];
    head.extend(labels.iter().cloned());
    t.set_header(head);
    for (name, f) in ROWS {
        let mut row = vec![name.to_string()];
        row.extend(records.iter().map(|r| f(&r.summary)));
        t.add_row(row);
    }
    for i in 1..=records.len() {
        if let Some(c) = t.column_mut(i) {
            c.set_cell_alignment(CellAlignment::Right);
        }
    }
    format!("{t}\n")
}

#[cfg(test)]
mod tests {
    #[test]
    fn columns_per_run() {
        let a = crate::fixture::record();
        let mut b = a.clone();
        b.summary.read_iops = Some(250_000.0);
        b.summary.read_amplification = None;
        insta::assert_snapshot!(super::render(&["./".into(), "/dev/shm".into()], &[a, b]));
    }
}
