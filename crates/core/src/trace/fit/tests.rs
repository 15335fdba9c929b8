use super::emit::{rate_text, size_text};
use super::*;
use crate::plan::{IoMix, Pattern, Plan, Step, SyncKind, SyncMode};
use crate::settings::Settings;
use crate::trace::classify::O_DIRECT;
use crate::trace::stats::build::Build;
use crate::workload::Workload;

/// Four sessions reading random 8 KiB blocks of two data files, one log writer appending
/// 16 KiB with an fdatasync every second write: 100 rounds of 5.5 calls 1 ms apart.
fn two_roles(data_flags: u32, log_flags: u32) -> Trace {
    let mut b = Build::new();
    let data = [
        b.file("base/1/a", 4 << 20, data_flags),
        b.file("base/1/b", 4 << 20, data_flags),
    ];
    let wal = b.file("pg_wal/0001", 16 << 20, log_flags);
    let sessions: Vec<u32> = (0..4).map(|i| b.thread(100 + i, "postgres")).collect();
    let walwriter = b.thread(200, "walwriter");
    for i in 0..100u64 {
        for (k, t) in sessions.iter().enumerate() {
            let block = (i * 7919 + k as u64 * 104_729) % 512;
            b.read(*t, data[(i as usize + k) % 2], block * 8192, 8192);
        }
        b.write(walwriter, wal, i * 16384, 16384);
        if i % 2 == 1 {
            b.fdatasync(walwriter, wal);
        }
    }
    b.finish()
}

fn plan_of(text: &str) -> Plan {
    let w =
        Workload::parse("fitted", text, "fitted.toml").unwrap_or_else(|e| panic!("{e}\n{text}"));
    w.plan(&Settings::default())
        .unwrap_or_else(|e| panic!("{e}\n{text}"))
}

fn io_step(plan: &Plan, role: &str) -> crate::plan::IoStep {
    let r = plan.roles.iter().find(|r| r.name == role).unwrap();
    match &r.steps[..] {
        [Step::Io(io)] => io.clone(),
        other => panic!("{role}: {other:?}"),
    }
}

#[test]
fn a_two_role_trace_gives_back_its_two_roles_with_their_sizes_and_rates() {
    let text = fit_personality(&two_roles(0, 0), "fitted").unwrap();
    let plan = plan_of(&text);
    let names: Vec<&str> = plan.roles.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(names, vec!["log", "session"], "{text}");
    let (log, session) = (&plan.roles[0], &plan.roles[1]);
    // 100 I/Os each over 550 ms.
    let rate = 100.0 / 0.55;
    assert_eq!(session.threads, 4);
    assert!((session.rate_iops.unwrap() - rate).abs() < 0.5, "{text}");
    let reads = io_step(&plan, "session");
    assert_eq!(
        (reads.bs, reads.mix, reads.pattern),
        (8192, IoMix::Read, Pattern::Random)
    );
    assert_eq!(log.threads, 1);
    assert!((log.rate_iops.unwrap() - rate).abs() < 0.5, "{text}");
    assert!(log.log, "{text}");
    let sync = log.sync_every.unwrap();
    assert_eq!((sync.kind, sync.writes), (SyncKind::Fdatasync, 2));
    let writes = io_step(&plan, "log");
    assert_eq!(
        (writes.bs, writes.mix, writes.pattern),
        (16384, IoMix::Write, Pattern::Sequential)
    );
    let data = &plan.filesets[session.fileset];
    assert_eq!(
        (data.name.as_str(), data.nrfiles, data.file_size),
        ("data", 2, 4 << 20)
    );
    let wal = &plan.filesets[log.fileset];
    assert_eq!(
        (wal.name.as_str(), wal.nrfiles, wal.file_size),
        ("log", 1, 16 << 20)
    );
}

#[test]
fn the_header_says_where_it_came_from_and_params_carry_the_figures() {
    let text = fit_personality(&two_roles(0, 0), "fitted").unwrap();
    assert!(text.starts_with(&format!(
        "# fitted: fitted by `bakeoff trace personality` to trace {}, captured 2026-11-18 \
         11:06:40 UTC (postgres tpcc on ext4).",
        "ab".repeat(16)
    )));
    assert!(text.contains(
        "#   session: 4 threads (postgres x4), 182 reads+writes/s, 8 KiB modal, 100% reads"
    ));
    assert!(
        text.contains("session_rate = { default = \"182\""),
        "{text}"
    );
    assert!(text.contains("log_bs = { default = \"16k\""), "{text}");
    // A parameter sweeps like any other.
    let w = Workload::parse("fitted", &text, "fitted.toml").unwrap();
    let mut set = Settings::default();
    set.insert("session_threads", "2", crate::settings::Origin::CommandLine);
    assert_eq!(w.plan(&set).unwrap().roles[1].threads, 2);
}

#[test]
fn dsync_and_direct_handles_become_sync_and_direct() {
    let text = fit_personality(&two_roles(O_DIRECT, O_DSYNC | O_DIRECT), "f").unwrap();
    let plan = plan_of(&text);
    assert!(plan.roles.iter().all(|r| r.direct), "{text}");
    assert_eq!(plan.roles[0].sync_mode, SyncMode::Dsync);
    assert_eq!(plan.roles[1].sync_mode, SyncMode::None);
}

#[test]
fn a_writer_with_async_io_and_a_mixed_session() {
    let mut b = Build::new();
    let data = b.file("data", 1 << 20, 0);
    let (session, writer) = (b.thread(1, "mysqld"), b.thread(2, "ib_pg_flush_co"));
    b.dur_ns = 2_000_000;
    for i in 0..40u64 {
        let block = i * 13 % 128;
        b.read(session, data, block * 8192, 8192);
        if i % 4 == 0 {
            b.write(session, data, (block + 1) % 128 * 8192, 8192);
        }
        let w = crate::trace::model::Record {
            op: Some(OpCode::Write),
            is_async: true,
            handle: Some(data),
            offset: (i * 29 % 128) * 16384 % (1 << 20),
            len: 16384,
            result: 16384,
            ..Default::default()
        };
        b.call(writer, w);
    }
    let text = fit_personality(&b.finish(), "mixed").unwrap();
    let plan = plan_of(&text);
    let names: Vec<&str> = plan.roles.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(names, vec!["session", "writer_async"], "{text}");
    assert_eq!(io_step(&plan, "session").mix, IoMix::Mixed { read_pct: 80 });
    let writer = &plan.roles[1];
    assert_eq!(io_step(&plan, "writer_async").bs, 16384);
    assert!(writer.iodepth >= 1 && writer.engine.is_some(), "{text}");
}

#[test]
fn a_trace_without_data_or_log_io_is_refused() {
    let mut b = Build::new();
    let dir = b.dir("base");
    let t = b.thread(1, "db");
    b.fsync(t, dir);
    assert_eq!(fit_personality(&b.finish(), "x"), Err(FitError::NoIo));
    assert_eq!(
        fit_personality(&Build::new().finish(), "x"),
        Err(FitError::NoIo)
    );
}

#[test]
fn sizes_and_rates_are_written_as_personalities_write_them() {
    assert_eq!(size_text(8192), "8k");
    assert_eq!(size_text(3 << 30), "3g");
    assert_eq!(size_text(12_345), "12345");
    assert_eq!(rate_text(181.818), "182");
    assert_eq!(rate_text(12.345), "12.3");
    assert_eq!(rate_text(0.0001), "0.001");
}

#[test]
fn the_working_set_option_sizes_data_by_the_blocks_touched() {
    let trace = two_roles(0, 0);
    let stats = crate::trace::stats::TraceStats::of(&trace);
    let touched: u64 = (stats.files.iter())
        .filter(|f| f.class == FileClass::Data)
        .map(|f| f.working_set_bytes)
        .sum();
    assert!(touched < 8 << 20, "the sessions touch part of the 8 MiB");
    let options = FitOptions { working_set: true };
    let plan = plan_of(&fit_personality_with(&trace, "ws", options).unwrap());
    let data = plan.filesets.iter().find(|f| f.name == "data").unwrap();
    assert_eq!(data.file_size, touched / 2);
    let log = plan.filesets.iter().find(|f| f.name == "log").unwrap();
    assert_eq!(log.file_size, 16 << 20, "the log keeps its size");
}

/// A small deterministic generator (no dependency): xorshift64.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

/// Random traces with odd sizes, flags, failed and asynchronous calls: every fit is refused
/// as having nothing to fit, or parses and plans.
#[test]
fn every_fit_of_random_traces_parses_and_plans() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut planned = 0;
    for case in 0..200 {
        let mut b = Build::new();
        let flags = [0, O_DIRECT, O_DSYNC, O_DIRECT | O_DSYNC];
        let files: Vec<u32> = (0..1 + rng.below(4))
            .map(|i| {
                let f = flags[rng.below(4) as usize];
                b.file(&format!("f{i}"), rng.below(1 << 22), f)
            })
            .collect();
        let threads: Vec<u32> = (0..1 + rng.below(5))
            .map(|i| b.thread(i as u32, "t"))
            .collect();
        b.step_ns = 1 + rng.below(10_000_000);
        for _ in 0..rng.below(300) {
            let t = threads[rng.below(threads.len() as u64) as usize];
            let f = files[rng.below(files.len() as u64) as usize];
            let op = [
                OpCode::Read,
                OpCode::Write,
                OpCode::Fsync,
                OpCode::Fdatasync,
            ][rng.below(4) as usize];
            let sequential = rng.below(2) == 0;
            let len = [0, 1, 1000, 4096, 8192, 1 << 20][rng.below(6) as usize];
            let offset = if sequential {
                b.clock_ns % (1 << 20)
            } else {
                rng.below(1 << 24)
            };
            let r = crate::trace::model::Record {
                op: Some(op),
                is_async: rng.below(3) == 0,
                handle: Some(f),
                offset,
                len,
                result: if rng.below(20) == 0 { -5 } else { len as i64 },
                dur_ns: 1 + rng.below(5_000_000),
                ..Default::default()
            };
            b.call(t, r);
        }
        match fit_personality_with(
            &b.finish(),
            "random",
            FitOptions {
                working_set: case % 2 == 0,
            },
        ) {
            Err(FitError::NoIo) => {}
            Ok(text) => {
                plan_of(&text);
                planned += 1;
            }
        }
    }
    assert!(
        planned > 150,
        "only {planned} of 200 random traces had something to fit"
    );
}
