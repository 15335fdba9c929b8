//! `kill -9` of the process that owns a managed server: the postmaster outlives it (it runs in
//! its own process group), and replaying the dead owner's ledger, as `bakeoff cleanup` does,
//! stops the server and removes its socket directory before unmounting its file system.

mod pg_common;
use bakeoff_db::postgres::PgServer;
use bakeoff_stack::exec::Exec;
use bakeoff_stack::ledger::{replay_file, stale_ledgers};
use bakeoff_stack::{Options, Stack, StackSpec};
use pg_common::*;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Tells the child test where to build its stack and report.
const CHILD: &str = "BAKEOFF_PG_TEST_CHILD";

/// What the child reports once its server runs.
struct Report {
    pid: i32,
    socket_dir: PathBuf,
    mount: PathBuf,
}

fn wait_for_report(file: &Path, child: &mut std::process::Child) -> Report {
    let start = Instant::now();
    while !file.exists() {
        if let Some(status) = child.try_wait().unwrap() {
            panic!("the child ended before its server ran: {status}");
        }
        assert!(start.elapsed() < Duration::from_secs(120), "no report");
        std::thread::sleep(Duration::from_millis(50));
    }
    let text = std::fs::read_to_string(file).unwrap();
    let f: Vec<&str> = text.split('\n').collect();
    Report {
        pid: f[0].parse().unwrap(),
        socket_dir: f[1].into(),
        mount: f[2].into(),
    }
}

fn mounted(path: &Path) -> bool {
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    let p = format!(" {} ", path.display());
    mounts.lines().any(|l| l.contains(&p))
}

#[test]
fn a_killed_owners_server_is_stopped_by_cleanup_before_the_unmount() {
    if !privileged() {
        return;
    }
    let _turn = bakeoff_testkit::shared();
    let state = tempfile::tempdir().unwrap();
    let images = images_dir();
    let report = images.path().join("report");
    let mut child = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "child_that_owns_a_server",
            "--ignored",
            "--nocapture",
        ])
        .env("BAKEOFF_STATE_DIR", state.path())
        .env(CHILD, images.path())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let server = wait_for_report(&report, &mut child);
    child.kill().unwrap(); // SIGKILL: no teardown runs
    child.wait().unwrap();
    assert!(running(server.pid), "the postmaster outlives its owner");
    assert!(server.socket_dir.exists() && mounted(&server.mount));
    let ledgers = stale_ledgers(state.path());
    assert_eq!(ledgers.len(), 1, "{ledgers:?}");
    let mut exec = Exec::default();
    let failures = replay_file(&ledgers[0], &mut exec).unwrap();
    assert!(failures.is_empty(), "{failures:?}");
    assert!(wait_gone(server.pid), "cleanup left the postmaster running");
    assert!(
        !server.socket_dir.exists(),
        "cleanup left the socket directory"
    );
    assert!(!mounted(&server.mount), "cleanup left the mount");
    let ran: Vec<String> = exec.log.iter().map(|c| c.argv.join(" ")).collect();
    let at = |what: &str| ran.iter().position(|c| c.contains(what));
    let (stop, umount) = (at("pg_ctl -D"), at("umount"));
    assert!(
        stop.is_some() && stop < umount,
        "stop before unmount: {ran:?}"
    );
    assert!(
        at("umount -l").is_none(),
        "the unmount found the file system busy: {ran:?}"
    );
}

/// The child of the test above: builds a tmpfs stack, starts a server on it, reports, and
/// waits to be killed. Run on its own (without the variable) it does nothing.
#[test]
#[ignore = "a child process of a_killed_owners_server_is_stopped_by_cleanup_before_the_unmount"]
fn child_that_owns_a_server() {
    let Some(images) = std::env::var_os(CHILD).map(PathBuf::from) else {
        return;
    };
    let spec = StackSpec::parse("tmpfs:size=256m").unwrap();
    let opts = Options {
        images: images.clone(),
        ..Options::default()
    };
    let mut stack = Stack::create(&spec, &opts).unwrap();
    let opts = options(&stack, 2);
    let server = PgServer::start(&mut stack, opts).unwrap();
    let text = format!(
        "{}\n{}\n{}",
        server.pid(),
        server.socket_dir().display(),
        stack.target.display()
    );
    let partial = images.join("report.partial");
    std::fs::write(&partial, text).unwrap();
    std::fs::rename(&partial, images.join("report")).unwrap();
    std::thread::sleep(Duration::from_secs(600));
}
