//! What the kernel keeps of each traced thread (its task's BPF storage): a call still in
//! progress when the capture ends is counted, and a thread that was running before the capture
//! has no CPU time before its first call.

use super::*;

/// A capture of the running process `pid` and what it starts, writing to a trace in memory.
fn capture_pid(dir: &Path, pid: u32) -> (Capture, Arc<Mutex<Trace>>) {
    let trace = Arc::new(Mutex::new(Trace::new(
        Header::new([3; 16]),
        Provenance::default(),
    )));
    let spec = CaptureSpec {
        filter: Filter::Pids(vec![pid]),
        under: vec![("data".into(), dir.to_path_buf())],
        anonymize: false,
        buffer_bytes: 1 << 20,
    };
    let capture = Capture::start(spec, Box::new(Shared(trace.clone())), Provenance::default())
        .unwrap_or_else(|e| panic!("starting the capture: {e}"));
    (capture, trace)
}

#[test]
fn a_call_in_progress_at_the_end_is_counted_unfinished() {
    let Some(_turn) = bakeoff_testkit::privileged_turn() else {
        return;
    };
    let scratch = bakeoff_testkit::scratch_dir();
    let fifo = scratch.path().join("fifo");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    // Opening a FIFO for reading waits for a writer: the open starts and never ends.
    let script = format!("sleep 1; exec cat {}", fifo.display());
    let mut shell = Command::new("sh").args(["-c", &script]).spawn().unwrap();
    let (capture, trace) = capture_pid(scratch.path(), shell.id());
    std::thread::sleep(std::time::Duration::from_millis(2500));
    let summary = capture.finish().unwrap();
    shell.kill().unwrap();
    shell.wait().unwrap();
    assert_eq!(summary.lost.unfinished_at_end, 1, "{:?}", summary.lost);
    assert_eq!(summary.lost.total(), 1, "{:?}", summary.lost);
    assert_eq!(records(&trace.lock().unwrap()), []);
}

#[test]
fn a_thread_found_running_has_no_cpu_time_before_its_first_call() {
    let Some(_turn) = bakeoff_testkit::privileged_turn() else {
        return;
    };
    // On a file system of its own: the kernel records a call on any traced file system (and
    // a failed open of any absolute path), user space keeps those under the directory; the
    // shell (whose libraries were loaded before the capture) makes no other such call, so its
    // redirection's open is the thread's first call the kernel records.
    let scratch = (tempfile::Builder::new().prefix("bakeoff-test-"))
        .tempdir_in("/dev/shm")
        .unwrap();
    let out = scratch.path().join("p");
    let script = format!("sleep 1; echo x > {}", out.display());
    let mut shell = Command::new("sh").args(["-c", &script]).spawn().unwrap();
    let (capture, trace) = capture_pid(scratch.path(), shell.id());
    assert!(shell.wait().unwrap().success());
    let summary = capture.finish().unwrap();
    assert_eq!(summary.lost.total(), 0, "{:?}", summary.lost);
    let recs = records(&trace.lock().unwrap());
    let writes = recs.iter().filter(|r| r.op == Some(OpCode::Write)).count();
    assert_eq!((recs[0].op, writes), (Some(OpCode::Open), 1), "{recs:?}");
    // The shell ran (it started, and forked `sleep`) before the capture found it: that time
    // is not known to follow a call of the trace, so its first call carries none of it.
    assert_eq!(recs[0].cpu_ns, 0, "{recs:?}");
}
