//! Client processes (`clients=N`): this test binary serves as the client (the launcher runs
//! its `client_process` test with an environment variable set), so the parent's side runs as
//! bakeoff runs it: copies laid out per client, a barrier, exact merged counts, per-client CPU,
//! a dead client named, an interrupt that stops every client, nothing left running.

use bakeoff_core::plan::{OpKind, Plan};
use bakeoff_core::settings::Settings;
use bakeoff_core::workload::builtin;
use bakeoff_engine::clients::{serve, set_launcher, Launcher};
use bakeoff_engine::{execute, lay_out, RunOutput, Target, TickKind};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

/// One test at a time: each checks that no child of this process is left.
fn serial() -> MutexGuard<'static, ()> {
    static TURN: Mutex<()> = Mutex::new(());
    TURN.lock().unwrap_or_else(|e| e.into_inner())
}

const AS_CLIENT: &str = "BAKEOFF_TEST_AS_CLIENT";

/// Not a test: the body of a client process when the launcher starts this binary.
#[test]
fn client_process() {
    if std::env::var_os(AS_CLIENT).is_some() {
        std::process::exit(serve(Arc::new(AtomicBool::new(false))));
    }
}

fn use_this_binary() {
    set_launcher(Launcher {
        program: std::env::current_exe().unwrap(),
        args: [
            "client_process",
            "--exact",
            "--nocapture",
            "--test-threads=1",
        ]
        .map(String::from)
        .to_vec(),
        env: vec![(AS_CLIENT.into(), "1".into())],
    });
}

fn plan(set: &str) -> Plan {
    builtin("fileserver")
        .unwrap()
        .plan(&Settings::parse_set(set).unwrap())
        .unwrap()
}

/// The pids of this process's children.
fn children() -> Vec<u32> {
    let me = std::process::id().to_string();
    let mut pids = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        let after = stat.rsplit_once(") ").map_or("", |(_, rest)| rest);
        if after.split(' ').nth(1) == Some(me.as_str()) {
            pids.extend(
                entry
                    .file_name()
                    .to_str()
                    .and_then(|p| p.parse::<u32>().ok()),
            );
        }
    }
    pids
}

fn run(plan: &Plan, on_tick: &mut dyn FnMut(TickKind)) -> (tempfile::TempDir, RunOutput) {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let data = lay_out(plan, &Target::Directory(dir.path().into()), &|_, _| true).unwrap();
    assert_eq!(data.client_dirs.len(), plan.clients as usize);
    let interrupt = AtomicBool::new(false);
    let out = execute(plan, &data, &interrupt, &mut |t| on_tick(t.kind)).unwrap();
    (dir, out)
}

#[test]
fn clients_counts_add_up_exactly_and_each_reports_its_cpu() {
    let _turn = serial();
    use_this_binary();
    let p = plan("clients=3,nfiles=120,nthreads=2,meanfilesize=8k,runtime=1s");
    let (dir, out) = run(&p, &mut |_| {});
    assert!(out.error.is_none(), "{:?}", out.error);
    assert_eq!(out.clients.len(), 3);
    assert_eq!(out.roles[0].threads, 6, "2 threads in each of 3 clients");
    for kind in [OpKind::Create, OpKind::ReadFile, OpKind::Stat] {
        let merged = out.ops.iter().find(|o| o.kind == kind).unwrap();
        let per_client: Vec<u64> = out
            .clients
            .iter()
            .map(|c| c.ops.iter().find(|o| o.kind == kind).map_or(0, |o| o.ops))
            .collect();
        assert!(
            per_client.iter().all(|&n| n > 0),
            "{kind:?}: {per_client:?}"
        );
        assert_eq!(merged.ops, per_client.iter().sum::<u64>(), "{kind:?}");
        let lat = merged.lat.as_ref().unwrap();
        assert!(lat.min_ns > 0 && lat.max_ns >= lat.at(99.0).unwrap());
    }
    for c in &out.clients {
        assert!(c.pid > 0 && c.cpu_user_us + c.cpu_system_us > 0, "{c:?}");
        assert!(c.dir.ends_with(&format!("client-{}", c.index)));
        assert!(
            (0.8e9..1.3e9).contains(&(c.measured_ns as f64)),
            "{}",
            c.measured_ns
        );
    }
    assert!(dir.path().join("client-2/bakeoff-bigfileset").is_dir());
    assert!(children().is_empty(), "every client exited");
}

#[test]
fn a_client_that_dies_fails_the_run_naming_it() {
    let _turn = serial();
    use_this_binary();
    let p = plan("clients=2,nfiles=60,nthreads=1,meanfilesize=8k,runtime=3s");
    let mut killed = false;
    let (_d, out) = run(&p, &mut |kind| {
        if kind == TickKind::Second && !killed {
            let victim = children()[0];
            rustix::process::kill_process(
                rustix::process::Pid::from_raw(victim as i32).unwrap(),
                rustix::process::Signal::KILL,
            )
            .unwrap();
            killed = true;
        }
    });
    let e = out.error.expect("the run failed").to_string();
    assert!(
        e.starts_with("client ") && e.contains("exited before reporting"),
        "{e}"
    );
    assert!(e.contains("signal: 9"), "{e}");
    assert!(
        children().is_empty(),
        "the other client was stopped and reaped"
    );
}

#[test]
fn an_interrupt_stops_every_client() {
    let _turn = serial();
    use_this_binary();
    let p = plan("clients=2,nfiles=60,nthreads=1,meanfilesize=8k,ramp_time=0,runtime=30s");
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let data = lay_out(&p, &Target::Directory(dir.path().into()), &|_, _| true).unwrap();
    let interrupt = AtomicBool::new(false);
    let started = std::time::Instant::now();
    let out = execute(&p, &data, &interrupt, &mut |t| {
        if t.kind == TickKind::Second {
            interrupt.store(true, Ordering::Relaxed);
        }
    })
    .unwrap();
    assert!(out.interrupted && out.error.is_none(), "{:?}", out.error);
    assert!(started.elapsed().as_secs() < 10, "{:?}", started.elapsed());
    assert_eq!(out.clients.len(), 2, "both reported what they did");
    assert!(out.ops.iter().any(|o| o.ops > 0));
    assert!(children().is_empty());
}
