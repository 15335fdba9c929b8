//! Tests of `stack`.

use super::*;
use crate::daemon::{alive, StopBy};
use std::time::Duration;

/// A `dir=` stack (no root needed) in a scratch directory, with its own state directory.
fn dir_stack(scratch: &std::path::Path) -> Stack {
    std::env::set_var("BAKEOFF_STATE_DIR", scratch.join("state"));
    let data = scratch.join("data");
    std::fs::create_dir(&data).unwrap();
    let spec = StackSpec::parse(&format!("dir={}", data.display())).unwrap();
    let opts = Options {
        images: scratch.join("images"),
        ..Options::default()
    };
    Stack::create(&spec, &opts).unwrap()
}

fn sleeper(pidfile: &std::path::Path) -> DaemonStart {
    let script = format!(
        "sleep 600 >/dev/null 2>&1 & echo $! > {}",
        pidfile.display()
    );
    DaemonStart {
        name: "sleeper".into(),
        exe: std::fs::canonicalize("/bin/sleep").unwrap(),
        command: Cmd::new("sh", &["-c", &script]),
        pidfile: pidfile.to_path_buf(),
        stop: StopBy::Signal,
        ready_within: Duration::from_secs(10),
        launched: None,
    }
}

#[test]
fn a_daemon_stops_and_starts_again_and_a_recorded_undo_runs_at_teardown() {
    let scratch = tempfile::tempdir().unwrap();
    let mut stack = dir_stack(scratch.path());
    let run = scratch.path().join("run");
    stack
        .record_undo(Undo::RemoveDirAndFiles { path: run.clone() })
        .unwrap();
    std::fs::create_dir(&run).unwrap();
    let pidfile = run.join("pid");
    let first = stack.start_daemon(sleeper(&pidfile)).unwrap().pid();
    stack.stop_daemon(first).unwrap();
    assert!(!alive(first), "stopped now, not at teardown");
    assert!(stack.daemons().is_empty() && stack.info.daemons.is_empty());
    let err = stack.stop_daemon(first).unwrap_err().to_string();
    assert!(
        err.contains(&format!("no daemon with pid {first}")),
        "{err}"
    );
    let second = stack.start_daemon(sleeper(&pidfile)).unwrap().pid();
    assert_ne!(first, second);
    assert_eq!(stack.info.daemons.len(), 1);
    stack.destroy().unwrap();
    assert!(!alive(second), "teardown stops the restarted daemon");
    assert!(!run.exists(), "the recorded undo ran");
}
