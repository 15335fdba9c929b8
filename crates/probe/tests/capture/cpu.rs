//! The CPU time a thread used between its calls (`cpu_ns`, for a replay's `think=cpu`).

use super::*;

const CHILD_BURN: &str = "BAKEOFF_CAPTURE_TEST_BURN";
/// The CPU time the child burns between its two writes.
const BURN_NS: u64 = 200_000_000;

/// This thread's CPU time.
fn thread_cpu_ns() -> u64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `t` is a valid timespec for the call to fill.
    let read = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
    assert_eq!(read, 0);
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

#[test]
fn each_call_carries_the_cpu_time_its_thread_used_before_it() {
    if let Some(dir) = std::env::var_os(CHILD_BURN) {
        let f = std::fs::File::create(Path::new(&dir).join("burn")).unwrap();
        f.write_at(b"before", 0).unwrap();
        // CPU time, not wall time: the machine may be busy with other work.
        let start = thread_cpu_ns();
        let mut spin = 0u64;
        while thread_cpu_ns() - start < BURN_NS {
            spin = std::hint::black_box(spin.wrapping_add(1));
        }
        f.write_at(b"after", 4096).unwrap();
        return;
    }
    let Some(_turn) = bakeoff_testkit::privileged_turn() else {
        return;
    };
    let scratch = bakeoff_testkit::scratch_dir();
    let (capture, trace) = start(scratch.path(), 1 << 20);
    assert!(capture.provenance().cpu_ns_recorded);
    let test = "cpu::each_call_carries_the_cpu_time_its_thread_used_before_it";
    run_child(test, &[(CHILD_BURN, scratch.path())]);
    let summary = capture.finish().unwrap();
    let trace = trace.lock().unwrap();
    assert_eq!(summary.lost.total(), 0, "{:?}", summary.lost);
    let recs = records(&trace);
    let writes: Vec<&Record> = (recs.iter())
        .filter(|r| r.op == Some(OpCode::Write))
        .collect();
    assert_eq!(writes.len(), 2, "{recs:?}");
    let ms = |r: &Record| r.cpu_ns as f64 / 1e6;
    // The scheduler's count can lag by a tick; the busy loop's own calls add a little.
    assert!(
        (150.0..400.0).contains(&ms(writes[1])),
        "{} ms before the second write",
        ms(writes[1])
    );
    // The open (the thread's first call, from its start) and the write right after it.
    assert_eq!(recs[0].op, Some(OpCode::Open));
    assert!(ms(&recs[0]) < 150.0, "{} ms before the open", ms(&recs[0]));
    assert!(
        ms(writes[0]) < 50.0,
        "{} ms before the first write",
        ms(writes[0])
    );
}
