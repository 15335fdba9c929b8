//! Stopping daemons bakeoff started (zfs-fuse), safely: only if the pid still runs the same
//! executable, SIGTERM first, SIGKILL after a grace period.

use rustix::process::{kill_process, Pid, Signal};
use std::time::{Duration, Instant};

/// The executable of `pid`, if it runs.
pub fn exe_of(pid: i32) -> Option<String> {
    std::fs::read_link(format!("/proc/{pid}/exe"))
        .ok()
        .map(|p| {
            p.to_string_lossy()
                .trim_end_matches(" (deleted)")
                .to_string()
        })
}

/// True while `pid` exists and is not a zombie.
pub fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
        s.rsplit(')')
            .next()
            .and_then(|r| r.split_whitespace().next())
            != Some("Z")
    })
}

/// Stops `pid` if it still runs `exe`; a pid that is gone or reused by another program is left alone.
pub fn stop(pid: i32, exe: &str) -> Result<(), String> {
    if exe_of(pid).as_deref() != Some(exe) {
        return Ok(());
    }
    let Some(p) = Pid::from_raw(pid) else {
        return Ok(());
    };
    let _ = kill_process(p, Signal::TERM);
    let start = Instant::now();
    while alive(pid) && start.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(50));
    }
    if alive(pid) {
        let _ = kill_process(p, Signal::KILL);
        std::thread::sleep(Duration::from_millis(200));
    }
    if alive(pid) && exe_of(pid).as_deref() == Some(exe) {
        return Err(format!("process {pid} ({exe}) did not stop"));
    }
    Ok(())
}

/// SIGKILLs `pid` if it is stopped (state T) and still runs `exe`.
pub fn kill_if_stopped(pid: i32, exe: &str) {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let state = stat
        .rsplit(')')
        .next()
        .and_then(|r| r.split_whitespace().next());
    if matches!(state, Some("T" | "t")) && exe_of(pid).as_deref() == Some(exe) {
        if let Some(p) = Pid::from_raw(pid) {
            let _ = kill_process(p, Signal::KILL);
        }
    }
}
