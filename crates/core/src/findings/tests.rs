//! Tests of the findings rules, on records built from compact JSON.

use super::*;
use crate::plan::OpKind;
use crate::record::*;
use serde_json::json;

const OPS: u64 = 100_000;

/// A 10 s run of 8 KiB direct random reads on `kind` (64 GiB dataset, 16 GiB memory, steady
/// 10 000 IOPS): the devices read `amp` bytes per application byte.
fn run(kind: &str, props: &[(&str, &str)], amp: f64) -> RunRecord {
    let props: std::collections::BTreeMap<_, _> = props.iter().copied().collect();
    let v = json!({
        "schema_version": 1, "status": "completed", "started_unix_s": 0,
        "measured_ns": 10_000_000_000u64, "cold": true, "summary": {}, "roles": [],
        "target": {"path": "/t", "kind": "directory"},
        "plan": {"workload": "randread", "engine": "psync", "runtime_ns": 10_000_000_000u64,
            "ramp_time_ns": 0, "seed": 1, "compress_pct": 0, "settings": {},
            "filesets": [{"name": "d", "nrfiles": 1, "file_size": 64u64 << 30}],
            "roles": [{"name": "reader", "threads": 4, "fileset": 0, "direct": true,
                "sync_mode": "none", "iodepth": 1, "offset": 0, "log": false,
                "log_writer": false, "steps": [{"io": {"mix": {"kind": "read"},
                "pattern": "random", "bs": 8192, "count": null}}]}]},
        "stack": {"name": "s", "spec": kind, "kind": kind, "backend": "kernel", "target": "/t",
            "backing": [], "properties": props, "tool_versions": {}, "commands": []},
        "environment": {"tool_version": "0", "kernel": "6", "hostname": "h", "cpu_model": "c",
            "cpus": 2, "memory_bytes": 16u64 << 30, "clocksource": "tsc",
            "timer_overhead_ns": 20.0},
        "tool": {"user_us": 0, "system_us": 0, "max_rss_bytes": 0},
        "devices": [{"name": "loop0", "role": "stack", "read_ops": 0, "read_bytes": 0,
            "write_ops": 0, "write_bytes": 0, "read_iops": 0.0, "write_iops": 0.0,
            "util_pct": 50.0}],
        "samples": (1..=10).map(|t| json!({"t_s": t, "measured": true, "read_iops": 1e4,
            "write_iops": 0.0, "read_mb_s": 0.0, "write_mb_s": 0.0})).collect::<Vec<_>>(),
    });
    let mut r: RunRecord = serde_json::from_value(v).unwrap();
    set_io(&mut r, OpKind::Read, 8192, amp);
    r
}

/// `OPS` application operations of `kind` and `bs`; the devices move `amp` bytes per byte in
/// as many requests.
fn set_io(r: &mut RunRecord, kind: OpKind, bs: u64, amp: f64) {
    let op = json!({"kind": kind, "ops": OPS, "bytes": OPS * bs, "iops": 1e4, "mb_s": 0.0});
    let role = json!({"name": kind.name(), "threads": 1, "ops": [op]});
    let dev = (amp * (OPS * bs) as f64) as u64;
    let d = &mut r.devices[0];
    match kind {
        OpKind::Read => (d.read_ops, d.read_bytes) = (OPS, dev),
        _ => (d.write_ops, d.write_bytes) = (OPS, dev),
    }
    r.roles.retain(|x| x.name != kind.name());
    r.roles.push(serde_json::from_value(role).unwrap());
    recompute(r);
}

/// The summary of `r`, its per-kind totals taken from its roles (these records have one role
/// per kind).
fn recompute(r: &mut RunRecord) {
    r.ops = r.roles.iter().flat_map(|x| x.ops.clone()).collect();
    r.summary = Summary::compute(r);
}

fn ids(r: &RunRecord) -> Vec<String> {
    run_findings(r).into_iter().map(|f| f.id).collect()
}

fn has(r: &RunRecord, id: &str) -> bool {
    ids(r).iter().any(|x| x == id)
}

fn get(r: &RunRecord, id: &str) -> Finding {
    let all = run_findings(r);
    let f = all.iter().find(|f| f.id == id);
    f.unwrap_or_else(|| panic!("{id} missing from {all:#?}"))
        .clone()
}

#[test]
fn clean_raw_direct_run_has_no_findings() {
    assert_eq!(ids(&run("raw", &[], 1.0)), Vec::<String>::new());
}

#[test]
fn large_recordsize_names_the_read_size() {
    let r = run(
        "zfs",
        &[("recordsize", "128K"), ("primarycache", "metadata")],
        16.0,
    );
    let f = get(&r, "read_amplification");
    assert!(f.suggestion.contains("recordsize=8k"), "{f:?}");
    assert!(
        f.evidence.contains("128 KiB") && f.evidence.contains("16.0"),
        "{f:?}"
    );
    assert!(!has(&r, "cache_served") && !has(&r, "prefetch_inflation"));
}

#[test]
fn cached_zfs_reads_are_cache_served() {
    let mut r = run("zfs", &[("recordsize", "8K")], 0.1);
    r.plan.roles[0].direct = false;
    r.plan.filesets[0].file_size = 1 << 30;
    let f = get(&r, "cache_served");
    assert!(f.evidence.contains("90.0%"), "{f:?}");
    assert!(f.suggestion.contains("primarycache=metadata"), "{f:?}");
    assert!(f.suggestion.contains("direct=true"), "{f:?}");
    assert!(get(&r, "dataset_fits_in_memory").evidence.contains("1 GiB"));
    assert!(!has(&r, "read_amplification"));
    r.stack.as_mut().unwrap().mem_limit_bytes = Some(256 << 20);
    assert!(!has(&r, "dataset_fits_in_memory"));
}

#[test]
fn doubled_reads_with_matching_records_are_misaligned() {
    let mut r = run("zfs", &[("recordsize_bytes", "8192")], 2.0);
    r.plan.roles[0].offset = 4096;
    let f = get(&r, "read_amplification");
    assert!(
        f.title.contains("misaligned") && f.suggestion.contains("offset"),
        "{f:?}"
    );
    assert!(!has(&r, "prefetch_inflation"), "explained by alignment");
}

#[test]
fn doubled_reads_with_matching_records_and_aligned_offsets_are_not_misaligned() {
    // recordsize = bs at offset 0: the extra read is ZFS's cold indirect blocks, not alignment:
    // two 8 KiB device reads (the record and a block of pointers) per 8 KiB read.
    let mut r = run("zfs", &[("recordsize_bytes", "8192")], 2.0);
    r.devices[0].read_ops *= 2;
    recompute(&mut r);
    let f = get(&r, "read_amplification");
    let words = format!("{} {} {}", f.title, f.evidence, f.suggestion);
    assert!(!words.contains("misaligned"), "{f:?}");
    assert!(words.contains("indirect"), "{f:?}");
    assert!(!has(&r, "prefetch_inflation"), "{:?}", ids(&r));
}

#[test]
fn large_device_reads_are_prefetch() {
    let r = run(
        "zfs",
        &[("recordsize", "8K"), ("vdev_cache", "10485760")],
        8.0,
    );
    let f = get(&r, "prefetch_inflation");
    assert!(
        f.evidence.contains("64 KiB") && f.suggestion.contains("vdev_cache=0"),
        "{f:?}"
    );
    let f = get(&run("ext4", &[], 8.0), "prefetch_inflation");
    assert!(f.suggestion.contains("read_ahead_kb"), "{f:?}");
}

#[test]
fn write_amplification_by_stack() {
    let mut r = run("ext4", &[], 1.0);
    set_io(&mut r, OpKind::Write, 8192, 2.0);
    let f = get(&r, "write_doubling");
    assert!(
        f.evidence.contains("2.0") && f.suggestion.contains("journal"),
        "{f:?}"
    );
    let mut r = run("btrfs", &[], 1.0);
    set_io(&mut r, OpKind::Write, 4096, 5.0);
    assert!(get(&r, "write_amplification")
        .suggestion
        .contains("copy-on-write"));
    assert!(!has(&r, "write_doubling"));
    let mut r = run("raw", &[], 1.0);
    set_io(&mut r, OpKind::Write, 8192, 2.0);
    assert!(ids(&r).is_empty(), "no journal: {:?}", ids(&r));
    r.plan.roles[0].sync_mode = SyncMode::Dsync;
    assert!(has(&r, "write_doubling"));
}

#[test]
fn saturation() {
    let mut r = run("raw", &[], 1.0);
    r.devices[0].util_pct = 99.0;
    let cpu = json!({"cpus": 2, "busy_pct": 95.0, "user_pct": 5.0, "system_pct": 90.0,
        "iowait_pct": 0.0, "irq_pct": 0.0, "softirq_pct": 0.0, "steal_pct": 0.0,
        "busy_us": 19e6});
    r.cpu = serde_json::from_value(cpu).unwrap();
    recompute(&mut r);
    assert!(get(&r, "cpu_saturated").evidence.contains("95.0%"));
    assert!(get(&r, "device_saturated")
        .evidence
        .contains("loop0 busy 99.0%"));
}

#[test]
fn trends_and_short_runs() {
    let mut r = run("raw", &[], 1.0);
    for s in &mut r.samples {
        s.read_iops = 20_000.0 - 1000.0 * s.t_s;
    }
    let f = get(&r, "not_steady");
    assert!(
        f.evidence.contains("-62%") && f.evidence.contains("last third"),
        "{f:?}"
    );
    r.samples.truncate(3);
    r.measured_ns = 3_000_000_000;
    let f = get(&r, "too_short");
    assert!(
        f.title.contains("measured 3.00 s;") && f.evidence.contains("3 measured"),
        "{f:?}"
    );
    assert_eq!(f.severity, Severity::Info);
}

#[test]
fn a_warm_up_that_reached_its_cap_makes_the_run_not_steady() {
    let mut r = run("raw", &[], 1.0);
    assert!(!has(&r, "not_steady"));
    let check = |name: &str, steady| crate::steady::Check {
        name: name.into(),
        mean: 0.5,
        spread_pct: 4.0,
        slope_pct: -6.5,
        steady,
    };
    r.steady = Some(crate::steady::SteadyRecord {
        warmup: crate::steady::WarmupKind::Auto,
        warmup_s: 120.0,
        capped: true,
        checks: vec![check("ops_s", true), check("fpi_per_txn", false)],
        stop: None,
    });
    let f = get(&r, "not_steady");
    assert!(f.title.contains("120 s"), "{f:?}");
    assert!(
        f.evidence.contains("fpi_per_txn") && f.evidence.contains("-6.5%/s"),
        "{f:?}"
    );
    assert!(!f.evidence.contains("ops_s"), "{f:?}");
    r.steady.as_mut().unwrap().capped = false;
    assert!(!has(&r, "not_steady"));
}

#[test]
fn a_window_under_a_second_gives_no_verdict_and_no_figures() {
    let mut r = run("raw", &[], 3.0);
    r.cpu = serde_json::from_value(json!({"cpus": 2, "busy_pct": 100.0, "user_pct": 90.0,
        "system_pct": 10.0, "iowait_pct": 0.0, "irq_pct": 0.0, "softirq_pct": 0.0,
        "steal_pct": 0.0, "busy_us": 1.0}))
    .unwrap();
    r.status = RunStatus::Interrupted;
    r.measured_ns = 0;
    assert!(r.window_too_short());
    assert!(ids(&r).is_empty(), "{:?}", ids(&r));
    r.drop_short_window();
    assert!(r.cpu.is_none() && r.devices.is_empty() && r.samples.is_empty());
    r.measured_ns = 1_000_000_000;
    assert!(!r.window_too_short());
}

#[test]
fn compression_and_warm_runs() {
    let mut r = run("zfs", &[("compression", "lz4")], 1.0);
    assert!(ids(&r).is_empty());
    r.plan.compress_pct = 50;
    r.cold = Some(false);
    assert!(get(&r, "compressible_data")
        .evidence
        .contains("compression=lz4"));
    assert_eq!(get(&r, "warm_run").severity, Severity::Info);
    let props = &mut r.stack.as_mut().unwrap().properties;
    props.insert("compression".into(), "off".into());
    assert!(!has(&r, "compressible_data"));
    // A tmpfs target has no cache to drop: it starts warm by necessity, not by choice.
    r.stack = None;
    r.target.filesystem = Some("tmpfs".into());
    assert!(!has(&r, "warm_run"));
}

#[test]
fn empty_and_degenerate_records_do_not_panic() {
    let mut r = run("raw", &[], f64::NAN);
    (r.roles, r.devices, r.plan.roles) = (vec![], vec![], vec![]);
    r.summary = Summary {
        read_amplification: Some(f64::NAN),
        ..Default::default()
    };
    r.samples.iter_mut().for_each(|s| s.read_iops = 0.0);
    assert!(ids(&r).is_empty());
    (r.samples, r.measured_ns, r.stack) = (vec![], 0, None);
    // A window shorter than steady::MIN_WINDOW gives no verdict at all.
    assert!(ids(&r).is_empty());
    r.measured_ns = 1_500_000_000;
    assert_eq!(ids(&r), ["too_short"]);
    assert!(cell_findings(&[], 0).is_empty());
}

#[test]
fn cell_rules_and_merging() {
    let r = run("zfs", &[("recordsize", "128K")], 16.0);
    let mut runs = vec![r.clone(), r.clone(), r];
    for (i, r) in runs.iter_mut().enumerate() {
        r.summary.read_iops = Some(1e4 * (i + 1) as f64);
    }
    runs[0].cold = Some(false);
    let all = cell_findings(&runs, 5);
    let id: Vec<&str> = all.iter().map(|f| f.id.as_str()).collect();
    let want = [
        "too_few_repetitions",
        "high_variance",
        "read_amplification",
        "warm_run",
    ];
    assert_eq!(id, want);
    assert!(all[1].evidence.contains("CV 50.0%"), "{:?}", all[1]);
    assert!(all[2].evidence.ends_with("(in 3 of 3 runs; median run)"));
    assert_eq!(all[2].severity, Severity::Warning);
    assert_eq!(all[3].severity, Severity::Info, "1 of 3 runs");
    assert_eq!(
        cell_findings(&runs[..1], 1).len(),
        2,
        "one run: no variance"
    );
}

#[test]
fn a_postgres_window_without_a_checkpoint_is_named() {
    use crate::record::database::{DatabaseRun, DbCounters};
    let mut r = run("ext4", &[], 1.0);
    let with = |checkpoints| DatabaseRun {
        window: Some(DbCounters {
            checkpoints,
            wal_bytes: Some(5 << 20),
            ..DbCounters::default()
        }),
        ..DatabaseRun::default()
    };
    r.database = Some(with(Some(0)));
    let f = get(&r, "no_checkpoint");
    assert_eq!(f.severity, Severity::Warning);
    assert!(
        f.evidence.starts_with("checkpoints 0 in "),
        "{}",
        f.evidence
    );
    assert!(f.suggestion.contains("pg.checkpoint_timeout"));
    r.database = Some(with(Some(2)));
    assert!(!has(&r, "no_checkpoint"));
    // SQLite counts no checkpoints: nothing to say.
    r.database = Some(with(None));
    assert!(!has(&r, "no_checkpoint"));
}

#[test]
fn a_mariadb_window_that_left_its_page_writes_for_later_is_named() {
    use crate::record::database::{DatabaseRun, DbCounters, InnodbCounters};
    let mut r = run("ext4", &[], 1.0);
    let with = |written, start, end| DatabaseRun {
        window: Some(DbCounters {
            innodb: Some(InnodbCounters {
                pages_written: Some(written),
                dirty_pages_at_start: Some(start),
                dirty_pages: Some(end),
                ..InnodbCounters::default()
            }),
            ..DbCounters::default()
        }),
        ..DatabaseRun::default()
    };
    // The TPC-C run on MariaDB of docs/mariadb.md: no page written, 5,527 more dirty.
    r.database = Some(with(0, 7449, 12976));
    let f = get(&r, "innodb_writes_deferred");
    assert_eq!(f.severity, Severity::Warning);
    assert!(f.evidence.contains("7449 → 12976"), "{}", f.evidence);
    assert!(f.suggestion.contains("my.innodb_max_dirty_pages_pct"));
    // Flushing kept up with the dirtying, or the pages dirty fell: nothing to say.
    r.database = Some(with(6000, 7449, 12976));
    assert!(!has(&r, "innodb_writes_deferred"));
    r.database = Some(with(0, 900, 600));
    assert!(!has(&r, "innodb_writes_deferred"));
    // PostgreSQL and SQLite have no InnoDB counters.
    r.database = Some(DatabaseRun::default());
    assert!(!has(&r, "innodb_writes_deferred"));
}

#[test]
fn database_cells_at_different_throughputs_are_told_to_compare_at_one_rate() {
    let db_run = |tps: f64| {
        let mut r = run("ext4", &[], 1.0);
        let db = json!({"db": "postgres", "version": "15", "settings": {}, "paths": {},
            "load": null, "window": null});
        r.database = Some(serde_json::from_value(db).unwrap());
        r.summary.tps = Some(tps);
        r
    };
    let (slow, fast) = (vec![db_run(900.0), db_run(910.0)], vec![db_run(1650.0)]);
    let f = costs_at_different_rates(&[("tmpfs", &fast), ("ext4", &slow)]).unwrap();
    assert_eq!(f.id, "costs_at_different_rates");
    assert!(
        f.evidence.contains("tmpfs 1650") && f.evidence.contains("ext4 910"),
        "{f:?}"
    );
    assert!(f.suggestion.contains("rate_tps=728"), "{f:?}");
    // Within 10 %: the same load.
    let close = vec![db_run(980.0)];
    assert!(costs_at_different_rates(&[("a", &close), ("b", &slow)]).is_none());
    // I/O cells have no transactions.
    let io = vec![run("ext4", &[], 1.0)];
    assert!(costs_at_different_rates(&[("a", &io), ("b", &slow)]).is_none());
}

#[test]
fn a_faster_cell_that_loses_acknowledged_commits_is_marked_against_a_safe_baseline() {
    use crate::record::durability::{DurabilityRecord, StateRecord};
    let db_run = |tps: f64, outcomes: &[(&str, u64)]| {
        let mut r = run("ext4", &[], 1.0);
        let db = json!({"db": "postgres", "version": "15", "settings": {}, "paths": {},
            "load": null, "window": null});
        r.database = Some(serde_json::from_value(db).unwrap());
        r.summary.tps = Some(tps);
        let states: Vec<StateRecord> = (outcomes.iter())
            .map(|(o, lost)| StateRecord {
                outcome: o.to_string(),
                lost: *lost,
                ..StateRecord::default()
            })
            .collect();
        let mut d = DurabilityRecord {
            states_checked: states.len() as u64,
            states,
            ..DurabilityRecord::default()
        };
        for s in d.states.clone() {
            *d.outcomes.entry(s.outcome).or_default() += 1;
        }
        r.durability = Some(d);
        r
    };
    let safe = vec![db_run(900.0, &[("clean", 0), ("clean", 0)])];
    let fast = vec![db_run(1800.0, &[("clean", 0), ("lost_commits", 4)])];
    let f = riskier_than_baseline(&fast, &safe).unwrap();
    assert_eq!(f.id, "riskier_than_baseline");
    assert!(
        f.evidence
            .contains("of 2 crash states, 1 lost acknowledged commits and 0 were damaged")
            && f.evidence.contains("×2.00"),
        "{f:?}"
    );
    // The baseline itself, a cell as safe as it, and cells without crash states: nothing.
    assert!(riskier_than_baseline(&safe, &safe).is_none());
    assert!(riskier_than_baseline(&safe, &fast).is_none());
    let plain = vec![run("ext4", &[], 1.0)];
    assert!(riskier_than_baseline(&plain, &safe).is_none());
    // Damage the baseline does not have counts too.
    let torn = vec![db_run(1000.0, &[("corrupt", 0), ("clean", 0)])];
    assert!(riskier_than_baseline(&torn, &safe).is_some());
}
