//! A fault campaign (issue 25): cases drawn from a seed, each a stack from `bakeoff stack list`,
//! a workload (an I/O personality, TPC-C on SQLite or, less often, PostgreSQL or MariaDB, `exec`
//! of a command, a two-stack `compare`) and an end: SIGKILL at a random moment over the run's
//! expected length or at a fault point (`BAKEOFF_FAULT_AT`) followed by `bakeoff cleanup`,
//! SIGINT or SIGTERM (exit 130 naming the signal), or a stack that fills up (the failure names
//! no space and where). After each case nothing of its bakeoff may be left (`campaign/left.rs`);
//! every fifth case and the last, a normal short run on the same stack type must succeed.
//!
//! `BAKEOFF_CAMPAIGN_SEED` (default 25) and `BAKEOFF_CAMPAIGN_CASES` (default 48, about five
//! minutes here) choose the cases; `BAKEOFF_CAMPAIGN_FIRST` starts at another case, so that a
//! failure's line reproduces that one case alone; it stops after
//! `BAKEOFF_CAMPAIGN_MAX_FAILURES` (3) failed cases. Root; a shared turn, and the ZFS lock around
//! the cases that build ZFS (one zfs-fuse a machine).

mod common;
#[path = "campaign/draw.rs"]
mod draw;
#[path = "campaign/left.rs"]
mod left;
#[path = "campaign/play.rs"]
mod play;

use bakeoff_testkit::{privileged_shared_turn, zfs_lock};
use std::os::unix::fs::PermissionsExt;
use std::time::Instant;

/// Cases in CI: with seed 25's draws, about 35 SIGKILLs that reach a live bakeoff, in about five
/// minutes on the project's 2-core VM (a debug build).
const CI_CASES: u64 = 48;

fn env_u64(name: &str, default: u64) -> u64 {
    match std::env::var(name) {
        Ok(v) => v
            .parse()
            .unwrap_or_else(|_| panic!("{name}={v}: not a whole number")),
        Err(_) => default,
    }
}

/// The stack types this machine can build, as bakeoff lists them.
fn registry(dirs: &play::Dirs) -> draw::Registry {
    let mut c = std::process::Command::new(assert_cmd::cargo::cargo_bin("bakeoff"));
    let out = (c.env("BAKEOFF_STATE_DIR", &dirs.state))
        .args(["stack", "list"])
        .output()
        .expect("bakeoff stack list");
    assert!(out.status.success(), "bakeoff stack list: {out:?}");
    let reg = draw::Registry::parse(&String::from_utf8_lossy(&out.stdout));
    assert!(
        reg.file_types.len() >= 3,
        "bakeoff stack list offers too few stack types: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    reg
}

#[test]
fn random_kills_interrupts_and_full_stacks_leave_nothing() {
    let asked = Instant::now();
    let Some(_turn) = privileged_shared_turn() else {
        return;
    };
    eprintln!(
        "campaign: waited {:.0} s for a shared turn",
        asked.elapsed().as_secs_f64()
    );
    let seed = env_u64("BAKEOFF_CAMPAIGN_SEED", 25);
    let cases = env_u64("BAKEOFF_CAMPAIGN_CASES", CI_CASES);
    let first = env_u64("BAKEOFF_CAMPAIGN_FIRST", 0);
    // A long run by hand goes on past failures, to count them all.
    let max_failures = env_u64("BAKEOFF_CAMPAIGN_MAX_FAILURES", 3);
    eprintln!("campaign: BAKEOFF_CAMPAIGN_SEED={seed} BAKEOFF_CAMPAIGN_FIRST={first} BAKEOFF_CAMPAIGN_CASES={cases}");
    let (state, images) = (tempfile::tempdir().unwrap(), bakeoff_testkit::scratch_dir());
    // Database servers run as their own users and must reach the images.
    std::fs::set_permissions(images.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let dirs = play::Dirs {
        images: images.path().to_path_buf(),
        state: state.path().to_path_buf(),
    };
    let reg = registry(&dirs);
    let started = Instant::now();
    let mut tally = Tally::default();
    let mut failed = Vec::new();
    for index in first..first + cases {
        let case = draw::case(seed, index, &reg);
        let zfs = case.uses_zfs();
        let lock = zfs.then(zfs_lock);
        let t = Instant::now();
        let mut out = play::play(&case, &dirs, zfs);
        let last = index + 1 == first + cases;
        if (index + 1) % 5 == 0 || last {
            play::next_run(&case.stack, &dirs, zfs, &mut out);
        }
        drop(lock);
        eprintln!(
            "campaign: {case}: {} in {:.1} s",
            tally.add(&out),
            t.elapsed().as_secs_f64()
        );
        if !out.failures.is_empty() {
            let again = format!(
                "BAKEOFF_CAMPAIGN_SEED={seed} BAKEOFF_CAMPAIGN_FIRST={index} BAKEOFF_CAMPAIGN_CASES=1"
            );
            failed.push(format!(
                "{case} (again: {again}):\n{}",
                out.failures.join("\n")
            ));
            if failed.len() as u64 >= max_failures {
                break;
            }
        }
    }
    eprintln!(
        "campaign: seed {seed}, {} cases in {:.0} s: {tally}",
        tally.cases,
        started.elapsed().as_secs_f64()
    );
    assert!(
        failed.is_empty(),
        "campaign seed {seed}:\n{}",
        failed.join("\n\n")
    );
    // The CI share promises at least 30 kills of a live bakeoff a run (issue 25). Were the runs
    // to get quicker, kills would land after them: re-measure `expected` in campaign/draw.rs.
    if seed == 25 && first == 0 && cases == CI_CASES && cfg!(debug_assertions) {
        let kills = tally.kills;
        assert!(
            kills >= 30,
            "only {kills} SIGKILLs reached a live bakeoff: {tally}"
        );
    }
}

/// What the cases did.
#[derive(Default)]
struct Tally {
    cases: u64,
    kills: u64,
    interrupts: u64,
    full: u64,
    finished_first: u64,
    failures: u64,
}

impl Tally {
    /// Counts `out`; says what it was.
    fn add(&mut self, out: &play::Outcome) -> &'static str {
        self.cases += 1;
        if !out.failures.is_empty() {
            self.failures += 1;
            "FAILED"
        } else if out.killed {
            self.kills += 1;
            "killed, cleaned up"
        } else if out.interrupted {
            self.interrupts += 1;
            "interrupted, exit 130"
        } else if out.no_space {
            self.full += 1;
            "out of space, named"
        } else {
            self.finished_first += 1;
            "finished before its end came"
        }
    }
}

impl std::fmt::Display for Tally {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} SIGKILLs, {} SIGINT/SIGTERM, {} full stacks, {} finished first, {} failed",
            self.kills, self.interrupts, self.full, self.finished_first, self.failures
        )
    }
}
