//! A fixed run record for snapshot tests of every exporter.

use crate::comparison::{build, CellRuns, StudyReport};
use crate::figures::figure;
use bakeoff_core::phaserecord::{CpuSource, InstanceRecord, PhaseRecord, SpaceRecord};
use bakeoff_core::plan::OpKind;
use bakeoff_core::record::*;
use bakeoff_core::settings::Settings;
use bakeoff_core::verdict::Method;
use bakeoff_core::workload::builtin;

fn lat(p50: u64) -> Latency {
    let percentiles = [(50.0, 1), (90.0, 2), (99.0, 4), (99.9, 8), (99.99, 16)]
        .iter()
        .map(|&(p, m)| Percentile { p, lat_ns: p50 * m })
        .collect();
    Latency {
        mean_ns: p50 as f64 * 1.2,
        min_ns: p50 / 4,
        max_ns: p50 * 40,
        percentiles,
        stdev_ns: Some(p50 as f64 * 0.9),
        histogram: None,
    }
}

fn op(kind: OpKind, ops: u64, bs: u64, p50: u64) -> OpStats {
    OpStats {
        kind,
        ops,
        bytes: ops * bs,
        iops: ops as f64 / 10.0,
        mb_s: (ops * bs) as f64 / 1e7,
        lat: Some(lat(p50)),
        service: None,
    }
}

/// A 10-second slob run on a loop-backed ext4.
pub fn record() -> RunRecord {
    let plan = builtin("slob")
        .unwrap()
        .plan(&Settings::parse_set("readers=4,writers=2,runtime=10s").unwrap())
        .unwrap();
    let roles = vec![
        RoleResult {
            name: "reader".into(),
            threads: 4,
            ops: vec![op(OpKind::Read, 120_000, 8192, 310_000)],
            commits_per_write: None,
        },
        RoleResult {
            name: "writer".into(),
            threads: 2,
            ops: vec![
                op(OpKind::Read, 9_000, 8192, 300_000),
                op(OpKind::Write, 9_000, 8192, 40_000),
            ],
            commits_per_write: None,
        },
        RoleResult {
            name: "lgwr".into(),
            threads: 1,
            ops: vec![
                op(OpKind::LogWrite, 3_000, 3072, 90_000),
                op(OpKind::Sync, 3_000, 0, 450_000),
            ],
            commits_per_write: Some(3.0),
        },
    ];
    let cpu = CpuStats {
        cpus: 2,
        busy_pct: 55.5,
        user_pct: 10.0,
        system_pct: 40.0,
        iowait_pct: 30.0,
        irq_pct: 0.0,
        softirq_pct: 5.5,
        steal_pct: 0.0,
        busy_us: 11.1e6,
        split: Some(CpuSplit {
            tool_us: 2.5e6,
            daemons_us: 0.0,
            kernel_us: 7.6e6,
            other_us: 1.0e6,
            steal_us: 0.0,
            tool_pct: 12.5,
            daemons_pct: 0.0,
            kernel_pct: 38.0,
            other_pct: 5.0,
            kernel_traced: true,
        }),
    };
    let devices = vec![DeviceStats {
        name: "loop7".into(),
        role: "stack".into(),
        model: None,
        loop_backing: Some("/var/tmp/bakeoff/x.img".into()),
        loop_dio: Some(true),
        read_ops: 129_100,
        read_bytes: 129_100 * 8192,
        write_ops: 12_000,
        write_bytes: 9_000 * 8192 + 3_000 * 4096,
        flush_ops: Some(3_000),
        read_iops: 12_910.0,
        write_iops: 1_200.0,
        avg_read_size_bytes: Some(8192.0),
        avg_write_size_bytes: Some(7168.0),
        avg_read_wait_us: Some(290.0),
        avg_write_wait_us: Some(80.0),
        util_pct: 99.0,
        avg_queue_depth: Some(3.8),
    }];
    let mut ops: Vec<OpStats> = roles.iter().flat_map(|r| r.ops.clone()).collect();
    // Reads of both roles merged into one headline kind.
    let reads = ops
        .iter()
        .filter(|o| o.kind == OpKind::Read)
        .map(|o| o.ops)
        .sum();
    ops.retain(|o| o.kind != OpKind::Read);
    ops.insert(0, op(OpKind::Read, reads, 8192, 305_000));
    let sample = |t: f64, iops: f64, full: bool| Sample {
        t_s: t,
        measured: true,
        read_iops: iops,
        write_iops: 0.0,
        read_mb_s: iops * 8192.0 / 1e6,
        write_mb_s: 0.0,
        cpu_busy_pct: full.then_some(55.5),
        device_read_iops: full.then_some(12_010.0),
        device_write_iops: full.then_some(0.0),
        device_read_mb_s: full.then_some(12_010.0 * 8192.0 / 1e6),
        device_write_mb_s: full.then_some(0.0),
        dirty_bytes: full.then_some(4096),
        cached_bytes: full.then_some(1 << 30),
        lat: vec![bakeoff_core::record::SampleLatency {
            kind: OpKind::Read,
            ops: iops as u64,
            p50_ns: 310_000,
            p99_ns: if full { 1_240_000 } else { 2_010_000 },
            max_ns: 12_400_000,
        }],
    };
    let mut record = RunRecord {
        schema_version: SCHEMA_VERSION,
        status: RunStatus::Completed,
        error: None,
        started_unix_s: 1_700_000_000,
        measured_ns: 10_000_000_000,
        plan,
        target: TargetInfo {
            path: "/mnt/x".into(),
            kind: "directory".into(),
            filesystem: Some("ext4".into()),
            mount_options: Some("rw,noatime".into()),
            mount_source: Some("/dev/loop7".into()),
        },
        stack: None,
        log_stack: None,
        cold: None,
        environment: Environment {
            tool_version: "0.1.0".into(),
            kernel: "6.1.0".into(),
            cpus: 2,
            ..Default::default()
        },
        summary: Summary::default(),
        roles,
        ops,
        cpu: Some(cpu),
        tool: ToolUsage {
            user_us: 500_000,
            system_us: 2_000_000,
            max_rss_bytes: 50 << 20,
            share_of_busy_pct: Some(22.5),
        },
        devices,
        memory: Some(MemoryStats {
            total_bytes: 24 << 30,
            cached_start_bytes: 1 << 30,
            cached_end_bytes: 1 << 30,
            dirty_max_bytes: 8 << 20,
            dirty_start_bytes: Some(4 << 20),
            dirty_end_bytes: Some(6 << 20),
            writeback_max_bytes: 1 << 20,
            available_min_bytes: 20 << 30,
            arc_size_bytes: None,
            arc_hits: None,
            arc_misses: None,
            page_cache_added_pages: Some(60_000),
            page_cache_unavailable: None,
        }),
        samples: vec![sample(1.0, 12_000.0, true), sample(2.0, 11_800.0, false)],
        findings: Vec::new(),
        database: None,
        phases: Vec::new(),
        space: None,
        dataset: None,
        clients: Vec::new(),
        ramp: None,
        steady: None,
        mpi: None,
        capture: None,
        replay: None,
        verify: None,
        durability: None,
        disturbed: None,
        timing: None,
    };
    record.summary = Summary::compute(&record);
    record.findings = bakeoff_core::findings::run_findings(&record);
    record
}

fn instance(index: u32, start: f64, exit_code: Option<i32>) -> InstanceRecord {
    InstanceRecord {
        index,
        dir: format!("/mnt/par/inst-{index}"),
        start_offset_s: start,
        real_s: 12.5,
        user_s: Some(20.0),
        sys_s: Some(2.5),
        exit_code,
        signal: exit_code.is_none().then_some(9),
        stderr_tail: Vec::new(),
        stdout_file: None,
        stderr_file: None,
    }
}

/// A run of the recipe `build` on a ZFS stack with compression: two instances of a build
/// 10 s apart (the second killed), then an action; 22.5 s per phase, 3 GiB written each.
pub fn recipe_record() -> RunRecord {
    let mut r = record();
    r.plan.workload = "build".into();
    (r.roles, r.ops, r.plan.roles) = (Vec::new(), Vec::new(), Vec::new());
    r.summary = Summary::compute(&r);
    let phase = |name: &str, instances: Vec<InstanceRecord>| PhaseRecord {
        name: name.into(),
        command: "cargo build".into(),
        status: RunStatus::Completed,
        error: None,
        exit_code: Some(0),
        start_offset_s: 3.0,
        real_s: 22.5,
        user_s: Some(40.0),
        sys_s: Some(5.0),
        cpu_source: CpuSource::Cgroup,
        instances,
        device_read_bytes: Some(0),
        device_write_bytes: Some(3 << 30),
        device_flushes: Some(1234),
        cpu: r.cpu.clone(),
        rows: None,
        steps: Vec::new(),
    };
    r.phases = vec![
        phase(
            "build-2x",
            vec![instance(1, 3.0, Some(0)), instance(2, 13.0, None)],
        ),
        PhaseRecord {
            cpu_source: CpuSource::Bakeoff,
            ..phase("flush", Vec::new())
        },
    ];
    r.space = Some(SpaceRecord {
        source: "zfs get".into(),
        used_bytes: Some(300 << 20),
        logical_bytes: Some(520 << 20),
        compress_ratio: Some(1.73),
        size_bytes: Some(2 << 30),
        available_bytes: Some(1700 << 20),
    });
    r
}

/// One cell of a fixture comparison: stack, read IOPS of three repetitions, read
/// amplification, machine busy %.
pub type FixtureCell<'a> = (&'a str, [f64; 3], f64, f64);

/// Three repetitions each of raw (the baseline), a ZFS stack at half the read IOPS with 16x
/// read amplification, and ext4 within noise of raw.
pub const THREE_STACKS: [FixtureCell; 3] = [
    ("raw", [97_845.0, 96_500.0, 99_100.0], 1.0, 55.0),
    (
        "zfs:recordsize=128k",
        [48_902.0, 47_800.0, 50_100.0],
        16.0,
        69.0,
    ),
    ("ext4", [97_000.0, 98_900.0, 96_800.0], 1.0, 56.0),
];

/// The comparison of [`THREE_STACKS`] running slob, over `columns`.
pub fn study(columns: &[&str]) -> StudyReport {
    study_of(&THREE_STACKS, columns)
}

/// The comparison of `cells` (each running slob, the first the baseline) over `columns`.
pub fn study_of(cells: &[FixtureCell], columns: &[&str]) -> StudyReport {
    let base = record();
    let cells: Vec<CellRuns> = cells
        .iter()
        .map(|(stack, iops, amp, cpu)| CellRuns {
            label: format!("{stack} / slob"),
            stack: stack.to_string(),
            runs: iops
                .iter()
                .map(|&i| {
                    let mut r = base.clone();
                    r.summary.read_iops = Some(i);
                    r.summary.read_amplification = Some(*amp);
                    r.summary.cpu_busy_pct = Some(*cpu);
                    r
                })
                .collect(),
            baseline: Some(0),
        })
        .collect();
    let columns: Vec<_> = columns.iter().map(|k| figure(k).unwrap()).collect();
    build(&cells, &columns, &Method::default(), 3)
}

/// A comparison of the recipe `build` ([`recipe_record`]): ext4 (the baseline) and zfs, three
/// runs each: zfs's build-2x 20 % slower, its flush within noise, half the space at a
/// compression ratio of 1.8.
pub fn phase_study() -> StudyReport {
    let runs = |build_s: [f64; 3], used_mib: u64, ratio: f64| -> Vec<RunRecord> {
        build_s
            .iter()
            .map(|&s| {
                let mut r = recipe_record();
                r.phases[0].real_s = s;
                r.phases[1].real_s = 2.0 + s / 1000.0;
                r.measured_ns = ((s + 2.0) * 1e9) as u64;
                let space = r.space.as_mut().expect("the recipe fixture has space");
                space.used_bytes = Some(used_mib << 20);
                space.compress_ratio = Some(ratio);
                r
            })
            .collect()
    };
    let cells = vec![
        CellRuns {
            label: "ext4 / build".into(),
            stack: "ext4".into(),
            runs: runs([100.0, 101.0, 99.0], 600, 1.0),
            baseline: Some(0),
        },
        CellRuns {
            label: "zfs:compression=on / build".into(),
            stack: "zfs:compression=on".into(),
            runs: runs([120.0, 121.0, 119.5], 300, 1.8),
            baseline: Some(0),
        },
    ];
    build(&cells, &[], &Method::default(), 3)
}
