//! A minimal run record for unit tests: a 10 s run of one psync reader on a directory.

use super::RunRecord;
use serde_json::json;

/// A completed 10 s run with no operations, devices, CPU or samples.
pub(crate) fn minimal() -> RunRecord {
    let v = json!({
        "schema_version": 2, "status": "completed", "started_unix_s": 0,
        "measured_ns": 10_000_000_000u64, "summary": {}, "roles": [],
        "target": {"path": "/t", "kind": "directory"},
        "plan": {"workload": "randread", "engine": "psync", "runtime_ns": 10_000_000_000u64,
            "ramp_time_ns": 0, "seed": 1, "compress_pct": 0, "settings": {},
            "filesets": [{"name": "d", "nrfiles": 1, "file_size": 1u64 << 30}],
            "roles": []},
        "environment": {"tool_version": "0", "kernel": "6", "hostname": "h", "cpu_model": "c",
            "cpus": 2, "memory_bytes": 16u64 << 30, "clocksource": "tsc",
            "timer_overhead_ns": 20.0},
        "tool": {"user_us": 0, "system_us": 0, "max_rss_bytes": 0},
        "devices": [], "samples": [],
    });
    serde_json::from_value(v).expect("the minimal record parses")
}
