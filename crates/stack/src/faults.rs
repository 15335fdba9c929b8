//! Fault injection for tests (reliability plan F1): a crash or `kill -9` at a named phase.

/// Test hook for fault injection: if `BAKEOFF_FAULT_AT` names this phase, the process kills
/// itself with SIGKILL here, as a crash or `kill -9` would (reliability plan F1).
pub fn fault_point(phase: &str) {
    if std::env::var("BAKEOFF_FAULT_AT").as_deref() == Ok(phase) {
        let me = rustix::process::getpid();
        let _ = rustix::process::kill_process(me, rustix::process::Signal::KILL);
        std::thread::sleep(std::time::Duration::from_secs(60));
    }
}
