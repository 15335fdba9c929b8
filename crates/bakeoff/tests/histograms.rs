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
        // The counters and the latencies see the window's edges apart: the operations in
        // flight there (one per thread) may fall on either side.
        let ops = op["ops"].as_u64().unwrap();
        assert!(
            h.len().abs_diff(ops) <= 4,
            "{}: {} of {ops}",
            op["kind"],
            h.len()
        );
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
