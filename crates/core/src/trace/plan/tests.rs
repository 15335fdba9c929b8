use super::*;
use crate::settings::Origin;
use crate::trace::model::*;

/// Two threads on one 16 KiB file: a write that grows it to 24 KiB, an fsync; 300 ms long.
fn trace() -> Trace {
    let mut t = Trace::new(Header::new([0xab; 16]), Provenance::default());
    let path = t
        .path(PathEntry {
            root: 0,
            path: "base/1".into(),
        })
        .unwrap();
    let file = (t.file(FileEntry {
        path,
        kind: FileKind::File,
        start_size: Some(16384),
        end_size: Some(16384),
    }))
    .unwrap();
    let handle = t
        .handle(HandleEntry {
            file,
            flags: 0,
            implicit: true,
        })
        .unwrap();
    let a = t
        .thread(ThreadEntry {
            tid: 1,
            tgid: 1,
            comm: "postgres".into(),
        })
        .unwrap();
    let b = t
        .thread(ThreadEntry {
            tid: 2,
            tgid: 1,
            comm: "postgres".into(),
        })
        .unwrap();
    let write = Record {
        op: Some(OpCode::Write),
        handle: Some(handle),
        offset: 16384,
        len: 8192,
        result: 8192,
        start_ns: 1_000,
        dur_ns: 1_000,
        ..Record::default()
    };
    t.op(a, &write).unwrap();
    let fsync = Record {
        op: Some(OpCode::Fsync),
        handle: Some(handle),
        start_ns: 5_000,
        dur_ns: 1_000,
        ..Record::default()
    };
    t.op(b, &fsync).unwrap();
    t.finish(Footer {
        ops: 2,
        duration_ns: 300_000_000,
        ..Footer::default()
    })
    .unwrap();
    t
}

fn plan(trace: &Trace, set: &str) -> Result<Plan, SettingError> {
    plan_replay(trace, "prod.trace", &Settings::parse_set(set).unwrap())
}

#[test]
fn defaults_replay_fast_with_the_traces_sizes_and_a_cap_of_ten_durations() {
    let t = trace();
    let p = plan(&t, "").unwrap();
    let r = p.replay.as_ref().unwrap();
    assert_eq!(r.capture_id, "ab".repeat(16));
    assert_eq!(
        (r.timing, r.think, r.window, r.flags),
        (
            ReplayTiming::Fast,
            Think::None,
            ReplayWindow::All,
            FlagRule::Captured
        )
    );
    assert_eq!((r.threads, r.ops, r.speed), (2, 2, 1.0));
    assert_eq!(r.duration, Duration::from_millis(300));
    assert_eq!((r.layout_bytes, r.peak_bytes), (16384, 24576));
    assert_eq!(p.runtime, Duration::from_secs(3));
    assert_eq!(p.ramp_time, Duration::ZERO);
    assert_eq!(p.threads(), 2);
    assert_eq!(
        p.dataset_bytes(),
        24576,
        "--size auto must hold the trace's growth"
    );
    assert_eq!(p.settings["timing"], "fast");
}

#[test]
fn original_timing_takes_a_speed_that_shortens_the_cap() {
    let t = trace();
    let p = plan(&t, "timing=original,speed=2x,flags=no_direct").unwrap();
    let r = p.replay.unwrap();
    assert_eq!(
        (r.timing, r.speed, r.flags),
        (ReplayTiming::Original, 2.0, FlagRule::NoDirect)
    );
    assert_eq!(p.runtime, Duration::from_millis(1500));
    let p = plan(&t, "timing=original,speed=0.5,runtime=5s").unwrap();
    assert_eq!(
        (p.replay.unwrap().speed, p.runtime),
        (0.5, Duration::from_secs(5))
    );
}

#[test]
fn bad_keys_and_values_are_named() {
    let t = trace();
    let e = plan(&t, "bs=8k").unwrap_err();
    assert_eq!(e.key, "bs");
    assert!(
        e.message.contains("unknown key") && e.message.contains("timing"),
        "{e}"
    );
    assert_eq!(e.origin, Origin::CommandLine);
    let e = plan(&t, "timing=slow").unwrap_err();
    assert!(
        e.key == "timing" && e.message.contains("original, fast"),
        "{e}"
    );
    let e = plan(&t, "speed=2x").unwrap_err();
    assert!(e.key == "speed" && e.message.contains("timing=fast"), "{e}");
    let e = plan(&t, "timing=original,speed=0x").unwrap_err();
    assert!(e.key == "speed" && e.message.contains("not a speed"), "{e}");
    let e = plan(&t, "ramp_time=10s").unwrap_err();
    assert!(e.key == "ramp_time" && e.message.contains("is 0"), "{e}");
    assert!(plan(&t, "ramp_time=0").is_ok());
    let e = plan(&t, "think=cpu").unwrap_err();
    assert!(e.key == "think" && e.message.contains("cpu_ns"), "{e}");
    let e = plan(&t, "window=marked").unwrap_err();
    assert!(
        e.key == "window" && e.message.contains("window_start"),
        "{e}"
    );
    let e = plan(&t, "balloon=lots").unwrap_err();
    assert_eq!(e.key, "balloon");
}

#[test]
fn marks_cpu_time_and_balloon_come_from_the_trace() {
    let mut t = trace();
    t.provenance.cpu_ns_recorded = true;
    t.provenance.app_memory_bytes = 1 << 20;
    t.mark(Mark {
        t_ns: 100,
        name: WINDOW_START.into(),
    })
    .unwrap();
    t.mark(Mark {
        t_ns: 900,
        name: WINDOW_END.into(),
    })
    .unwrap();
    assert_eq!(marked_window(&t), Some((100, 900)));
    let r = plan(&t, "think=cpu,window=marked,balloon=auto")
        .unwrap()
        .replay
        .unwrap();
    assert_eq!(
        (r.think, r.window, r.balloon_bytes),
        (Think::Cpu, ReplayWindow::Marked, 1 << 20)
    );
    let r = plan(&t, "balloon=64m").unwrap().replay.unwrap();
    assert_eq!(r.balloon_bytes, 64 << 20);
}

#[test]
fn a_plan_with_a_replay_survives_json_and_one_without_has_no_field() {
    let t = trace();
    let p = plan(&t, "timing=original").unwrap();
    let json = serde_json::to_string(&p).unwrap();
    assert_eq!(serde_json::from_str::<Plan>(&json).unwrap(), p);
    let plain = Plan { replay: None, ..p };
    assert!(!serde_json::to_string(&plain).unwrap().contains("replay"));
}
