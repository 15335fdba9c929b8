use super::*;

fn settings(arc: &str) -> BTreeMap<String, String> {
    BTreeMap::from([
        ("arc_max".to_string(), arc.to_string()),
        ("prefetch".to_string(), "off".to_string()),
    ])
}

fn flags(arc: &str) -> Vec<String> {
    vec!["--max-arc-size".into(), arc.into()]
}

/// A registry in a scratch directory whose daemon (pid 7) runs with a 100 MiB ARC.
fn registry(dir: &std::path::Path) -> (Registry, Vec<(i32, String)>) {
    let registry = Registry::lock(dir).unwrap();
    registry
        .set_state(&DaemonState {
            pid: 7,
            flags: flags("100"),
            settings: settings("104857600"),
            started_for: "zfs-1-0".into(),
        })
        .unwrap();
    let pidfile = dir.join(PIDFILE);
    let cmd = format!(
        "/usr/sbin/zfs-fuse --pidfile {} --max-arc-size 100",
        pidfile.display()
    );
    (registry, vec![(7, cmd)])
}

/// Another live process's user entry: this test's parent (`cargo test`) runs.
fn other_run() -> User {
    let ppid = rustix::process::getppid().map_or(1, |p| p.as_raw_nonzero().get() as u32);
    User {
        token: format!("{ppid}-zfs-{ppid}-0"),
        pid: ppid,
        command: crate::process::command_line(ppid as i32).unwrap(),
        stack: format!("zfs-{ppid}-0"),
        kept: None,
    }
}

#[test]
fn the_same_settings_share_and_nothing_running_starts() {
    let dir = tempfile::tempdir().unwrap();
    let (registry, running) = registry(dir.path());
    let found = examine(&registry, &running, &flags("100"), &settings("104857600"));
    assert!(matches!(found, Found::Same(s) if s.pid == 7));
    let found = examine(&registry, &[], &flags("64"), &settings("67108864"));
    assert!(matches!(found, Found::Nothing));
}

#[test]
fn other_settings_name_the_run_using_the_daemon_and_never_advise_killing_it() {
    let dir = tempfile::tempdir().unwrap();
    let (registry, running) = registry(dir.path());
    let other = other_run();
    registry.join(&other).unwrap();
    let Found::Refused { why, waits_for } =
        examine(&registry, &running, &flags("64"), &settings("67108864"))
    else {
        panic!("other settings must be refused");
    };
    assert!(why.contains("in use by another bakeoff run"), "{why}");
    assert!(why.contains(&format!("bakeoff pid {}", other.pid)), "{why}");
    assert!(why.contains(&other.command.join(" ")), "{why}");
    assert!(
        why.contains("arc_max 104857600 (running) vs 67108864 (this stack)"),
        "{why}"
    );
    assert!(why.contains("--wait") && !why.contains("kill"), "{why}");
    let whom = waits_for.expect("a live run is waited for");
    assert!(
        whom.contains(&format!("bakeoff pid {}", other.pid)),
        "{whom}"
    );
}

#[test]
fn a_second_stack_of_this_run_is_refused_without_waiting_for_itself() {
    let dir = tempfile::tempdir().unwrap();
    let (registry, running) = registry(dir.path());
    registry.join(&User::this_process("zfs-9-0")).unwrap();
    let Found::Refused { why, waits_for } =
        examine(&registry, &running, &flags("64"), &settings("67108864"))
    else {
        panic!("other settings must be refused");
    };
    assert!(why.contains("one zfs-fuse per machine"), "{why}");
    assert!(waits_for.is_none(), "a run never waits for itself");
}

#[test]
fn a_daemon_without_live_users_or_outside_bakeoff_is_not_waited_for() {
    let dir = tempfile::tempdir().unwrap();
    let (registry, running) = registry(dir.path());
    let Found::Refused { why, waits_for } =
        examine(&registry, &running, &flags("64"), &settings("67108864"))
    else {
        panic!("other settings must be refused");
    };
    assert!(
        why.contains("bakeoff cleanup") && waits_for.is_none(),
        "{why}"
    );
    let foreign = vec![(7, "zfs-fuse --pidfile /elsewhere/x.pid".to_string())];
    let Found::Refused { why, waits_for } =
        examine(&registry, &foreign, &flags("100"), &settings("104857600"))
    else {
        panic!("a daemon started elsewhere must be refused");
    };
    assert!(
        why.contains("started outside bakeoff") && waits_for.is_none(),
        "{why}"
    );
    // A pid file in our directory but another pid: a daemon that is not the one recorded.
    let mut other_pid = running.clone();
    other_pid[0].0 = 8;
    let found = examine(&registry, &other_pid, &flags("100"), &settings("104857600"));
    assert!(matches!(found, Found::Refused { .. }), "{found:?}");
}

#[test]
fn a_run_waits_with_wait_says_whom_for_and_stops_on_ctrl_c() {
    let stop = Arc::new(AtomicBool::new(false));
    let mut waiting = Waiting::default();
    let whom = || Some("bakeoff pid 1".to_string());
    // Without --wait: refused at once with the message.
    let e = waiting
        .wait_or_refuse("why".into(), whom(), None)
        .unwrap_err();
    assert!(e.to_string().contains("why"), "{e}");
    // Nobody to wait for: refused even with --wait.
    let e = (waiting.wait_or_refuse("why".into(), None, Some(&stop))).unwrap_err();
    assert!(e.to_string().contains("why"), "{e}");
    let started = Instant::now();
    waiting
        .wait_or_refuse("why".into(), whom(), Some(&stop))
        .unwrap();
    assert!(started.elapsed() >= Duration::from_millis(500));
    assert!(waiting.said.is_some(), "it said whom it waits for");
    stop.store(true, Ordering::Relaxed);
    let e = waiting
        .wait_or_refuse("why".into(), whom(), Some(&stop))
        .unwrap_err();
    assert!(matches!(e, StackError::Interrupted(_)), "{e}");
}
