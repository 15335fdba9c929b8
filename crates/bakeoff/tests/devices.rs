//! Stacks on devices the user hands over (`--device D --destroy-data-on D`). Loop devices made
//! here stand in for real disks: they sit outside bakeoff's images directory, so to bakeoff
//! they are the user's. Every type is built on them with `stack create`, then a workload runs
//! on the same devices (so the second build meets the first one's signatures), and after each
//! teardown the devices are still attached, unmounted and carry what was built: teardown never
//! wipes or detaches a user's device. A device with ambiguous signatures (blkid "ambivalent")
//! is refused unless confirmed, and wiped once confirmed (root; in CI for real). And
//! `stack list --keys TYPE` prints the keys a type's specs take.

mod common;
use bakeoff_testkit::loop_device::{make_ambivalent, mkfs, LoopDevice};
use bakeoff_testkit::privileged_turn;
use common::Scene;
use std::process::{Command, Output};

/// What the tests look at on a disk the user handed over (a loop device made here).
trait UserDisk {
    /// What `blkid -p` finds: the type, `nothing` or `ambivalent`.
    fn probe(&self) -> String;
    /// Still attached over its image and mounted nowhere (by device number or source).
    fn assert_attached_and_unmounted(&self, after: &str);
}

impl UserDisk for LoopDevice {
    fn probe(&self) -> String {
        let out = Command::new("blkid")
            .args(["-p", "-o", "value", "-s", "TYPE", self.node()])
            .output()
            .unwrap();
        match out.status.code() {
            Some(0) => String::from_utf8_lossy(&out.stdout).trim().to_string(),
            Some(2) => "nothing".into(),
            Some(8) => "ambivalent".into(),
            other => panic!("blkid -p {}: {other:?}", self.node()),
        }
    }

    fn assert_attached_and_unmounted(&self, after: &str) {
        let name = self.name();
        let backing = std::fs::read_to_string(format!("/sys/block/{name}/loop/backing_file"));
        assert!(
            backing.is_ok_and(|b| b.trim() == self.image().to_str().unwrap()),
            "{after}: {} was detached",
            self.node()
        );
        let dev_no = std::fs::read_to_string(format!("/sys/block/{name}/dev")).unwrap();
        let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
        let mounted: Vec<&str> = mounts
            .lines()
            .filter(|l| l.split(' ').nth(2) == Some(dev_no.trim()) || l.contains(self.node()))
            .collect();
        assert!(
            mounted.is_empty(),
            "{after}: {} still mounted: {mounted:?}",
            self.node()
        );
    }
}

impl Scene {
    /// Runs bakeoff with `args`, then `--device D --destroy-data-on D` for each of `disks`.
    fn bakeoff(&self, args: &[&str], disks: &[&LoopDevice]) -> Output {
        let mut c = self.cmd(args);
        c.args(["--images", self.images.path().to_str().unwrap()]);
        for d in disks {
            c.args(["--device", d.node(), "--destroy-data-on", d.node()]);
        }
        c.output().unwrap()
    }

    /// Nothing of bakeoff's own is left: no image, mount point or ledger.
    fn assert_clean(&self, after: &str) {
        let images: Vec<_> = std::fs::read_dir(self.images.path())
            .map(|d| d.flatten().map(|e| e.path()).collect())
            .unwrap_or_default();
        assert!(images.is_empty(), "{after}: left {images:?}");
        let ledgers: Vec<_> = std::fs::read_dir(self.state.path().join("ledger"))
            .map(|d| d.flatten().map(|e| e.path()).collect())
            .unwrap_or_default();
        assert!(ledgers.is_empty(), "{after}: ledgers left {ledgers:?}");
    }
}

fn text(out: &Output) -> String {
    format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// `stack create SPEC` on `disks` (the first carrying an xfs file system, as a disk a user
/// hands over might), then `run randrw` on the same disks; after each, the disks are attached,
/// unmounted and carry `built` (the signature the stack leaves; `None` for raw).
fn create_then_run(
    scene: &Scene,
    spec: &str,
    disks: &[&LoopDevice],
    built: Option<&str>,
    redundancy: f64,
) {
    mkfs("xfs", disks[0].path());
    let out = scene.bakeoff(&["stack", "create", spec], disks);
    assert!(out.status.success(), "stack create {spec}: {}", text(&out));
    assert!(
        text(&out).contains("wiped xfs"),
        "{spec}: the old signature is not reported wiped: {}",
        text(&out)
    );
    let after_create = format!("stack create {spec}");
    for d in disks {
        d.assert_attached_and_unmounted(&after_create);
        if let Some(t) = built {
            assert_eq!(
                d.probe(),
                t,
                "{after_create}: {} was wiped or changed",
                d.node()
            );
        }
    }
    scene.assert_clean(&after_create);
    let json = scene.state.path().join("run.json");
    let out = scene.bakeoff(
        &[
            "run",
            "randrw",
            "--quiet",
            "--stack",
            spec,
            "--set",
            "size=64m,ramp_time=0,runtime=1s",
            "--json",
            json.to_str().unwrap(),
        ],
        disks,
    );
    assert!(out.status.success(), "run on {spec}: {}", text(&out));
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    std::fs::remove_file(&json).unwrap();
    assert!(v["summary"]["read_iops"].as_f64().unwrap() > 0.0, "{spec}");
    assert!(v["summary"]["write_iops"].as_f64().unwrap() > 0.0, "{spec}");
    let backing = v["stack"]["backing"].as_array().unwrap();
    let devices: Vec<&str> = backing
        .iter()
        .map(|b| b["device"].as_str().unwrap())
        .collect();
    let ours: Vec<&str> = disks.iter().map(|d| d.node()).collect();
    assert_eq!(devices, ours, "{spec}");
    assert_eq!(
        v["stack"]["redundancy"].as_f64(),
        Some(redundancy),
        "{spec}"
    );
    if let Some(t) = built {
        // The second build met the first one's signatures, wiped them and says so.
        let wiped = backing[0]["wiped_signatures"].to_string();
        assert!(wiped.contains(t), "{spec}: wiped {wiped}");
    }
    let after_run = format!("run on {spec}");
    for d in disks {
        d.assert_attached_and_unmounted(&after_run);
        if let Some(t) = built {
            assert_eq!(
                d.probe(),
                t,
                "{after_run}: {} was wiped or changed",
                d.node()
            );
        }
    }
    scene.assert_clean(&after_run);
}

#[test]
fn kernel_file_systems_and_raw_build_and_run_on_confirmed_devices() {
    let Some(_turn) = privileged_turn() else {
        return;
    };
    let scene = Scene::new();
    let (a, b) = (LoopDevice::new(512 << 20), LoopDevice::new(512 << 20));
    create_then_run(&scene, "ext4", &[&a], Some("ext4"), 1.0);
    create_then_run(&scene, "xfs", &[&a], Some("xfs"), 1.0);
    create_then_run(&scene, "btrfs", &[&a], Some("btrfs"), 1.0);
    let raid1 = "btrfs:devices=2,profile=raid1";
    create_then_run(&scene, raid1, &[&a, &b], Some("btrfs"), 2.0);
    create_then_run(&scene, "raw", &[&a], None, 1.0);
}

#[test]
fn zfs_builds_and_runs_on_confirmed_devices() {
    let Some(_turn) = privileged_turn() else {
        return;
    };
    let scene = Scene::new();
    let (a, b) = (LoopDevice::new(512 << 20), LoopDevice::new(512 << 20));
    create_then_run(&scene, "zfs", &[&a], Some("zfs_member"), 1.0);
    let mirror = "zfs:devices=2,layout=mirror";
    create_then_run(&scene, mirror, &[&a, &b], Some("zfs_member"), 2.0);
}

#[test]
fn a_kept_stack_on_a_device_is_destroyed_and_the_device_left_attached() {
    let Some(_turn) = privileged_turn() else {
        return;
    };
    let scene = Scene::new();
    let disk = LoopDevice::new(512 << 20);
    mkfs("xfs", disk.path());
    let out = scene.bakeoff(
        &["stack", "create", "ext4", "--keep", "--name", "on-device"],
        &[&disk],
    );
    assert!(out.status.success(), "{}", text(&out));
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    assert!(
        mounts.contains(disk.node()),
        "the kept stack is not mounted"
    );
    let out = scene
        .cmd(&["stack", "destroy", "on-device"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    disk.assert_attached_and_unmounted("stack destroy");
    assert_eq!(disk.probe(), "ext4");
    scene.assert_clean("stack destroy");
}

#[test]
fn a_device_with_ambiguous_signatures_is_refused_unless_confirmed_then_wiped() {
    let Some(_turn) = privileged_turn() else {
        return;
    };
    let scene = Scene::new();
    let disk = LoopDevice::new(512 << 20);
    make_ambivalent(&disk);
    assert_eq!(disk.probe(), "ambivalent");
    let out = scene
        .cmd(&["stack", "create", "raw", "--device", disk.node()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(5), "{}", text(&out));
    assert_eq!(disk.probe(), "ambivalent", "a refused device was touched");
    let out = scene.bakeoff(&["stack", "create", "raw"], &[&disk]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        text(&out).contains("wiped xfs, btrfs"),
        "the wiped signatures are not reported: {}",
        text(&out)
    );
    assert_eq!(
        disk.probe(),
        "nothing",
        "the old signatures are still there"
    );
    disk.assert_attached_and_unmounted("raw on an ambivalent device");
    scene.assert_clean("raw on an ambivalent device");
}

#[test]
fn stack_list_keys_prints_the_keys_a_type_takes() {
    let keys = |t: &str| {
        let out = Command::new(assert_cmd::cargo::cargo_bin("bakeoff"))
            .args(["stack", "list", "--keys", t])
            .output()
            .unwrap();
        (out.status.code(), text(&out))
    };
    let (code, zfs) = keys("zfs");
    assert_eq!(code, Some(0), "{zfs}");
    for key in [
        "size",
        "devices",
        "layout",
        "arc",
        "recordsize",
        "primarycache",
    ] {
        assert!(
            zfs.contains(&format!("\n  {key} ")),
            "zfs lacks {key}: {zfs}"
        );
    }
    assert!(zfs.contains("128k") && !zfs.contains("\n  mkfs "), "{zfs}");
    let (_, btrfs) = keys("btrfs");
    assert!(
        btrfs.contains("\n  profile ") && btrfs.contains("\n  mkfs "),
        "{btrfs}"
    );
    assert!(!btrfs.contains("recordsize"), "{btrfs}");
    let (code, err) = keys("ntfs");
    assert_eq!(code, Some(2));
    assert!(
        err.contains("allowed: raw, ext4, xfs, btrfs, zfs, tmpfs, dir"),
        "{err}"
    );
}
