//! Each stack type's limits are known before anything is built: a `--dry-run` is ok exactly
//! when the real run gets past building (the property, on generated specs and sizes around
//! each type's smallest device, and datasets just under and just over what each stack holds),
//! and what cannot be built is refused up front with the documented code, naming the spec.

mod common;
use bakeoff_testkit::loop_device::LoopFs;
use bakeoff_testkit::{privileged_shared_turn, scratch_dir};
use common::bakeoff;
use predicates::prelude::*;
use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use std::path::Path;

const KIB: u64 = 1 << 10;
const MIB: u64 = 1 << 20;
const GIB: u64 = 1 << 30;

/// A quick run: the null engine over 16 KiB for a moment, so a case costs the build.
const QUICK: &str = "engine=null,size=16k,ramp_time=0,runtime=1s";

/// A quick run's dataset.
const TINY: u64 = 16 * KIB;

/// `bakeoff run randread --stack SPEC --size SIZE` over a dataset of `dataset` bytes with
/// private state and images, plus `extra`.
fn run_over(
    dir: &Path,
    spec: &str,
    size: u64,
    dataset: u64,
    extra: &[&str],
) -> std::process::Output {
    let set = format!("engine=null,size={dataset},ramp_time=0,runtime=1s");
    bakeoff()
        .env("BAKEOFF_STATE_DIR", dir.join("state"))
        .args(["run", "randread", "--set", &set, "--stack", spec])
        .args(["--size", &size.to_string(), "--images"])
        .arg(dir.join("images"))
        .args(extra)
        .output()
        .unwrap()
}

/// Datasets just under what `spec` on devices of `size` holds by its driver's model (both runs
/// go ahead) and just over the most the built stack can hold, the model's figure plus its
/// tolerance (the dry run refuses; the real run builds and refuses before writing).
fn near_capacity(spec: &str, size: u64) -> [u64; 2] {
    use bakeoff_stack::fs::capacity;
    let parsed = bakeoff_stack::StackSpec::parse_arg(spec).unwrap();
    let model = capacity(&parsed, size);
    let data_bytes = size * parsed.roles().iter().filter(|r| **r == "data").count() as u64;
    let margin = (data_bytes as f64 * capacity::TOLERANCE) as u64;
    [model - MIB, model + margin + MIB]
}

/// A stack spec and a device size around its type's smallest device (measured: ext4 104 KiB,
/// xfs 300 MiB, btrfs 109 MiB on one device), with a mount option the kernel takes or not.
fn cases() -> impl Strategy<Value = (String, u64, u64)> {
    let around = |min: u64, step: u64| prop_oneof![Just(min - step), Just(min), Just(min + step)];
    prop_oneof![
        (
            prop::sample::select(vec!["ext4", "ext4:mount=noatime", "ext4:mount=bogus"]),
            around(104 * KIB, 4 * KIB)
        ),
        (
            prop::sample::select(vec!["xfs", "xfs:mount=logbufs=8", "xfs:mount=data=journal"]),
            around(300 * MIB, MIB)
        ),
        (
            prop::sample::select(vec![
                "btrfs",
                "btrfs:mount=compress=zstd",
                "btrfs:mount=nope"
            ]),
            around(109 * MIB, MIB)
        ),
        (Just("raw"), around(MIB, 64 * KIB)),
    ]
    .prop_map(|(spec, size)| (spec.to_string(), size, TINY))
}

/// A stack spec, a device size and a dataset just under or just over what it holds (see
/// [`near_capacity`]): the reviewer's cases (`ext4 --size 1g --set size=1000m` said ok and
/// failed once built; a raid1 mirror holds one device's bytes), at sizes a case writes quickly.
fn full_cases() -> impl Strategy<Value = (String, u64, u64)> {
    prop_oneof![
        Just(("ext4", 256 * MIB)),
        Just(("ext4", 600 * MIB)),
        Just(("xfs", 320 * MIB)),
        Just(("btrfs", 256 * MIB)),
        Just(("btrfs:devices=2,profile=raid1", 200 * MIB)),
        Just(("raw", 64 * MIB)),
    ]
    .prop_flat_map(|(spec, size)| {
        let [under, over] = near_capacity(spec, size);
        (
            Just(spec.to_string()),
            Just(size),
            prop_oneof![Just(under), Just(over)],
        )
    })
}

/// The property: for 36 generated (spec, size, dataset) cases across ext4, xfs, btrfs and raw,
/// the dry run's exit code is the real run's: 0 for both (the real run built the stack, ran and
/// tore it down), the same refusal before anything was built (limits, mount options), or, for
/// a dataset the stack cannot hold, exit 3 from both (the real run's once built, before it
/// writes). zfs is left out (one zfs-fuse daemon per machine); its smallest pool is checked by
/// `zfs_pools_below_64_mib_are_refused`, its capacity there too.
#[test]
fn a_dry_run_is_ok_exactly_when_the_real_run_gets_past_building() {
    let Some(_turn) = privileged_shared_turn() else {
        return;
    };
    let config = Config {
        cases: 36,
        failure_persistence: None,
        max_shrink_iters: 0,
        ..Config::default()
    };
    // The same cases every time, so a failure can be run again.
    let rng = TestRng::deterministic_rng(RngAlgorithm::ChaCha);
    let mut runner = TestRunner::new_with_rng(config, rng);
    let outcomes = std::cell::RefCell::new(Vec::new());
    runner
        .run(
            &prop_oneof![cases(), full_cases()],
            |(spec, size, dataset)| {
                let d = scratch_dir();
                let dry = run_over(d.path(), &spec, size, dataset, &["--dry-run"]);
                let real = run_over(d.path(), &spec, size, dataset, &[]);
                let said =
                    |o: &std::process::Output| String::from_utf8_lossy(&o.stderr).to_string();
                eprintln!(
                    "{spec} --size {size}, dataset {dataset}: dry {:?}, real {:?}",
                    dry.status.code(),
                    real.status.code()
                );
                outcomes.borrow_mut().push(real.status.code());
                prop_assert_eq!(
                    dry.status.code(),
                    real.status.code(),
                    "{} --size {}, dataset {}: dry run said {:?}, the real run {:?}",
                    spec,
                    size,
                    dataset,
                    said(&dry),
                    said(&real)
                );
                if !dry.status.success() && dataset == TINY {
                    prop_assert!(
                        said(&dry).contains(&spec) && !said(&real).contains("building stack"),
                        "{}: a refusal names the spec and builds nothing: {:?}",
                        spec,
                        said(&real)
                    );
                }
                Ok(())
            },
        )
        .unwrap();
    let outcomes = outcomes.into_inner();
    assert!(
        [Some(0), Some(2), Some(3)]
            .iter()
            .all(|c| outcomes.contains(c)),
        "the cases have runs that build, runs refused and stacks too small: {outcomes:?}"
    );
}

/// The cases the issue found, each refused by the dry run with its code before anything is
/// built: a device below mkfs.xfs's 300 MiB, a mount option the kernel refuses, an image the
/// file system of `--images` cannot hold, and mkfs's allocation beyond the free space.
#[test]
fn what_cannot_be_built_is_refused_up_front() {
    let Some(_turn) = privileged_shared_turn() else {
        return;
    };
    let d = scratch_dir();
    let dry_in = |images: &Path, spec: &str, size: &str| {
        bakeoff()
            .env("BAKEOFF_STATE_DIR", d.path().join("state"))
            .args([
                "run",
                "randread",
                "--dry-run",
                "--set",
                QUICK,
                "--stack",
                spec,
            ])
            .args(["--size", size, "--images"])
            .arg(images)
            .assert()
    };
    let dry = |spec: &str, size: &str| dry_in(&d.path().join("images"), spec, size);
    // The images' own file system, whatever this machine's /var/tmp is: a 64 MiB ext4 made
    // here (its files end at 16 TiB at most) with about 50 MiB free.
    let small = LoopFs::new(64 * MIB, "ext4", "");
    let small_images = Path::new(&small.target()).join("images");
    dry("xfs", "256m").code(2).stderr(predicate::str::contains(
        "stack xfs: a device of 256 MiB is below the smallest this type's mkfs accepts, 300 MiB",
    ));
    dry("xfs:mount=bogus", "1g")
        .code(2)
        .stderr(predicate::str::contains(
            "stack xfs:mount=bogus: the kernel's xfs refuses mount option 'bogus'",
        ));
    dry("ext4:mount=data=sometimes", "1g")
        .code(2)
        .stderr(predicate::str::contains(
            "refuses mount option 'data=sometimes'",
        ));
    // An ext4's files end far below 100 TiB: a raw stack's image cannot be made there.
    dry_in(&small_images, "raw", "100t")
        .code(3)
        .stderr(predicate::str::contains("cannot hold an image of 100 TiB"));
    // ext4's mkfs allocates 1/128 of a 10 TiB device in inode tables: more than is free there.
    dry_in(&small_images, "ext4", "10t")
        .code(3)
        .stderr(predicate::str::contains("mkfs allocates about 81 GiB"));
    dry("btrfs:devices=2,profile=raid1", "120m")
        .code(2)
        .stderr(predicate::str::contains("125 MiB"));
    dry("xfs", "300m").success();
    bakeoff()
        .env("BAKEOFF_STATE_DIR", d.path().join("state"))
        .args(["stack", "create", "xfs:mount=bogus", "--images"])
        .arg(d.path().join("images"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("refuses mount option 'bogus'"))
        .stderr(predicate::str::contains("building stack").not());
    assert!(
        !d.path().join("images").exists() && !d.path().join("state").join("ledger").exists(),
        "dry runs built nothing"
    );
}

/// A ZFS pool's vdevs are 64 MiB at least (SPA_MINDEVSIZE): refused below, built at it. What
/// a pool holds is known before building: a mirror holds one device's bytes, and datasets just
/// under and just over a pool's room go ahead or are refused by both runs.
#[test]
fn zfs_pools_below_64_mib_are_refused() {
    // Its runs take the ZFS lock themselves (flock(1)), so a shared turn.
    let Some(_turn) = privileged_shared_turn() else {
        return;
    };
    let d = scratch_dir();
    let real = |spec: &str, size: u64, dataset: u64, extra: &[&str]| {
        let set = format!("engine=null,size={dataset},ramp_time=0,runtime=1s");
        let mut cmd = std::process::Command::new("flock");
        cmd.arg(bakeoff_testkit::ZFS_LOCK)
            .arg(assert_cmd::cargo::cargo_bin("bakeoff"))
            .env("BAKEOFF_STATE_DIR", d.path().join("state"))
            .args(["run", "randread", "--quiet", "--set", &set, "--stack", spec])
            .args(["--size", &size.to_string(), "--images"])
            .arg(d.path().join("images"))
            .args(extra);
        cmd.output().unwrap()
    };
    let mirror = real(
        "zfs:devices=2,layout=mirror",
        GIB,
        1500 * MIB,
        &["--dry-run"],
    );
    assert_eq!(mirror.status.code(), Some(3), "{mirror:?}");
    for dataset in near_capacity("zfs", 128 * MIB) {
        let dry = real("zfs", 128 * MIB, dataset, &["--dry-run"]);
        let built = real("zfs", 128 * MIB, dataset, &[]);
        assert_eq!(
            dry.status.code(),
            built.status.code(),
            "dataset {dataset}: {dry:?} {built:?}"
        );
    }
    let below = real("zfs", 63 * MIB, TINY, &["--dry-run"]);
    assert_eq!(below.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&below.stderr).contains("64 MiB"));
    let at = real("zfs", 64 * MIB, TINY, &[]);
    assert!(
        at.status.success(),
        "{}",
        String::from_utf8_lossy(&at.stderr)
    );
}
