//! The defaults a first run meets: slob reads the device (O_DIRECT) as its database does, and
//! a stack without `--size` is sized to hold the dataset, while an explicit `--size` too small
//! is still refused before anything is built.

mod common;
use bakeoff_testkit::{privileged_turn, scratch_dir};
use common::{bakeoff, run_json};
use predicates::prelude::*;

#[test]
fn slob_reads_and_writes_with_o_direct_by_default() {
    let d = scratch_dir();
    let v = run_json(&[
        "run",
        "slob",
        "--target",
        d.path().to_str().unwrap(),
        "--set",
        "data_size=16m,redo_size=4m,runtime=1s,readers=1,writers=1",
    ]);
    assert_eq!(v["plan"]["settings"]["direct"], "true", "{}", v["plan"]);
    let roles = v["plan"]["roles"].as_array().unwrap();
    assert!(roles.iter().all(|r| r["direct"] == true), "{roles:?}");
    let off = run_json(&[
        "run",
        "slob",
        "--target",
        d.path().to_str().unwrap(),
        "--set",
        "data_size=16m,redo_size=4m,runtime=1s,readers=1,writers=0,direct=false",
    ]);
    assert_eq!(
        off["plan"]["settings"]["direct"], "false",
        "direct=false still reads the cache"
    );
}

/// slob's default dataset (1 GiB of data files and 64 MiB of redo) fits the default stack; the
/// old default of 1 GiB is refused, naming `--size`.
#[test]
fn the_default_stack_size_follows_the_dataset() {
    let Some(_turn) = privileged_turn() else {
        return;
    };
    let d = scratch_dir();
    let dry = |extra: &[&str]| {
        bakeoff()
            .env("BAKEOFF_STATE_DIR", d.path().join("state"))
            .args(["run", "slob", "--dry-run", "--stack", "ext4", "--images"])
            .arg(d.path().join("images"))
            .args(extra)
            .assert()
    };
    dry(&[])
        .success()
        .stderr(predicate::str::contains("dry run: ok"));
    dry(&["--size", "1g"])
        .code(3)
        .stderr(predicate::str::contains(
            "for data (1 device of 1 GiB, less what its file system keeps), the dataset needs 1140850688 bytes",
        ))
        .stderr(predicate::str::contains("raise --size"));
}
