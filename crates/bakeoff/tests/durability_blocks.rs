//! `run <I/O workload> --set verify=... --crash-states N` end to end (root and /dev/fuse; in CI
//! for real): the run journals its verified writes and syncs, and each crash state's blocks are
//! read back against what a sync had acknowledged by the state's instant. Known physics: with
//! the file system's barriers every acknowledged block survives, on copy-on-write btrfs nothing
//! is torn either, and without barriers (`nobarrier`: no flush reaches the devices)
//! acknowledged writes are lost.

mod common;
use bakeoff_testkit::privileged_shared_turn;
use common::db::*;
use common::Scene;
use serde_json::Value;

/// A random 4 KiB-aligned writer syncing after every write, verified.
const SET: &str = "verify=crc32c,fsync=1,runtime=3s,ramp_time=0,size=32m";

fn crash_run(scene: &Scene, stack: &str, bs: &str, states: &str) -> Value {
    let set = format!("{SET},bs={bs}");
    let r = scene.db_record(scene.db_run("randwrite", stack, &set, &["--crash-states", states]));
    let d = &r["durability"];
    assert_eq!(d["acknowledged_unit"], "blocks", "{stack}: {d}");
    assert!(f(&d["acknowledged"]) > 100.0, "{stack}: {d}");
    assert!(f(&d["states_checked"]) >= 6.0, "{stack}: {d}");
    r
}

fn all_clean(r: &Value) -> bool {
    let d = &r["durability"];
    d["outcomes"]["clean"] == d["states_checked"]
}

#[test]
fn acknowledged_blocks_survive_with_barriers_and_are_lost_without() {
    let Some(_turn) = privileged_shared_turn() else {
        return;
    };
    if !fuse() {
        return;
    }
    let scene = db_scene();
    // Blocks of the sector's size cannot be torn: with ext4's barriers every state holds
    // every block a sync acknowledged.
    let r = crash_run(&scene, "ext4", "4k", "10");
    assert!(all_clean(&r), "{}", r["durability"]);
    // Copy-on-write: a block is never overwritten in place, so none is torn either.
    let r = crash_run(&scene, "btrfs", "8k", "10");
    assert!(all_clean(&r), "{}", r["durability"]);
    // 8 KiB blocks overwritten in place on ext4 may be torn at 4 KiB (corrupt), never lost.
    let r = crash_run(&scene, "ext4", "8k", "10");
    for s in r["durability"]["states"].as_array().unwrap() {
        assert_eq!(f(&s["lost"]), 0.0, "{s}");
        if s["outcome"] != "clean" {
            assert_eq!(s["outcome"], "corrupt", "{s}");
            let problems = s["problems"].to_string();
            assert!(problems.contains("torn between two writes"), "{s}");
        }
    }
    // Without barriers no sync reaches the devices: states lose acknowledged blocks, each
    // named by its file and offset.
    let r = crash_run(&scene, "ext4:mount=nobarrier", "4k", "10");
    let d = &r["durability"];
    assert_eq!(f(&d["recording"]["flushes"]), 0.0, "{d}");
    let losing: Vec<&Value> = (d["states"].as_array().unwrap().iter())
        .filter(|s| f(&s["lost"]) > 0.0)
        .collect();
    assert!(!losing.is_empty(), "{d}");
    for s in losing {
        let problems = s["problems"].to_string();
        assert!(
            problems.contains("acknowledged write lost: block at offset"),
            "{s}"
        );
        assert!(problems.contains("bakeoff-data.0"), "{s}");
    }
    let ids = common::finding_ids(&r);
    assert!(
        ids.iter().any(|i| i == "acknowledged_commits_lost"),
        "{ids:?}"
    );
    scene.assert_nothing_left();
}
