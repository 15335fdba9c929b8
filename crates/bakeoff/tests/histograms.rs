//! What fio and pgbench users look for in a record: each kind's whole latency histogram (fio's
//! `json+`) that HdrHistogram's tools load back, the standard deviation beside the percentiles,
//! and latency percentiles per interval in the time series (fio's `log_hist`).

mod common;
use base64::Engine;
use common::{run_on, tmp};
use hdrhistogram::serialization::Deserializer;
use hdrhistogram::Histogram;

/// The histogram a record's latency object carries, decoded as a user would.
fn decode(lat: &serde_json::Value) -> Histogram<u64> {
    let text = lat["histogram"].as_str().unwrap_or_else(|| panic!("{lat}"));
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(text)
        .unwrap();
    Deserializer::new().deserialize(&mut &bytes[..]).unwrap()
}

#[test]
fn each_kinds_histogram_decodes_to_its_count_percentiles_and_stdev() {
    let d = tmp();
    let r = run_on(
        d.path().to_str().unwrap(),
        "randrw",
        "size=4m,runtime=500ms",
    );
    let ops = r["ops"].as_array().unwrap();
    assert_eq!(ops.len(), 2, "{r}");
    for op in ops {
        let lat = &op["lat"];
        let h = decode(lat);
        // The count and the histogram hold the same operations: those that finished inside
        // the window (CI once saw 6 more in the histogram, when the count was read from the
        // counters as the harness woke at the window's start).
        assert_eq!(h.len(), op["ops"].as_u64().unwrap(), "{}", op["kind"]);
        for p in lat["percentiles"].as_array().unwrap() {
            let q = p["p"].as_f64().unwrap() / 100.0;
            assert_eq!(h.value_at_quantile(q), p["lat_ns"].as_u64().unwrap());
        }
        assert_eq!(h.max(), lat["max_ns"].as_u64().unwrap());
        assert_eq!(h.min(), lat["min_ns"].as_u64().unwrap());
        let stdev = lat["stdev_ns"].as_f64().unwrap();
        assert!(
            stdev > 0.0 && (h.stdev() - stdev).abs() < 1e-6 * stdev,
            "{stdev}"
        );
    }
}

#[test]
fn every_sample_has_the_intervals_percentiles_in_the_json_and_the_csv() {
    let d = tmp();
    let target = d.path().join("data");
    std::fs::create_dir(&target).unwrap();
    let csv = d.path().join("t.csv");
    let r = common::run_json(&[
        "run",
        "randread",
        "--target",
        target.to_str().unwrap(),
        "--set",
        "size=4m,ramp_time=0,runtime=2800ms",
        "--export-timeseries",
        csv.to_str().unwrap(),
    ]);
    // Two whole seconds and the last 0.8 s: a last part under half a second is dropped as a
    // stub (steady::MIN_SAMPLE_SHARE), and at 2,500 ms the seconds' ticks, a few ms late each,
    // left it at 0.49 s in one run of three.
    let samples = r["samples"].as_array().unwrap();
    assert!(samples.len() >= 3, "{samples:?}");
    let mut counted = 0;
    for s in samples {
        let lat = s["lat"].as_array().unwrap_or_else(|| panic!("{s}"));
        assert_eq!(lat.len(), 1, "reads only: {s}");
        let l = &lat[0];
        assert_eq!(l["kind"], "read");
        let n = |k: &str| l[k].as_u64().unwrap();
        assert!(0 < n("p50_ns") && n("p50_ns") <= n("p99_ns") && n("p99_ns") <= n("max_ns"));
        counted += n("ops");
    }
    // The intervals cover the whole run: their operations add up to the window's.
    let ops = r["ops"][0]["ops"].as_u64().unwrap();
    assert!(counted.abs_diff(ops) <= 4, "{counted} of {ops}");
    let text = std::fs::read_to_string(&csv).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).expect(name);
    let (p50, p99, max) = (
        col("read_lat_p50_ns"),
        col("read_lat_p99_ns"),
        col("read_lat_max_ns"),
    );
    for (line, s) in lines.zip(samples) {
        let cells: Vec<&str> = line.split(',').collect();
        let l = &s["lat"][0];
        assert_eq!(cells[p50], l["p50_ns"].to_string(), "{line}");
        assert_eq!(cells[p99], l["p99_ns"].to_string(), "{line}");
        assert_eq!(cells[max], l["max_ns"].to_string(), "{line}");
    }
}
