//! Loop-device scaffolding for privileged tests: an image file, its loop device (direct I/O on),
//! an optional file system and mount, all undone on drop in reverse order. Without root or loop
//! support the tests skip, except under `CI=true`, where that is a failure.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// Runs a command, panicking with its stderr if it fails.
pub fn sh(cmd: &str, args: &[&str]) -> String {
    let out = Command::new(cmd)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{cmd}: {e}"));
    assert!(
        out.status.success(),
        "{cmd} {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// Runs on stacks and targets drop the page cache machine-wide and zfs-fuse is one daemon per
/// machine, so the tests of a binary that measure take turns: hold this for the whole test.
pub fn serial() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

/// True if loop devices can be used; under CI=true, false is a failure.
pub fn privileged() -> bool {
    let root = rustix::process::geteuid().is_root();
    let loops = Path::new("/dev/loop-control").exists();
    if root && loops {
        return true;
    }
    let why = format!("needs root ({root}) and /dev/loop-control ({loops})");
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "{why}: CI=true, so this fails instead of skipping"
    );
    eprintln!("skipping: {why}");
    false
}

/// An image, its loop device and maybe a mounted file system.
pub struct LoopStack {
    pub dir: tempfile::TempDir,
    pub image: PathBuf,
    pub device: String,
    pub mount: Option<PathBuf>,
}

impl LoopStack {
    /// A `size_mib` image attached with loop direct I/O on.
    pub fn new(size_mib: u64) -> LoopStack {
        let dir = tempfile::Builder::new()
            .prefix("bakeoff-test-")
            .tempdir_in("/var/tmp")
            .unwrap();
        let image = dir.path().join("disk.img");
        std::fs::File::create(&image)
            .unwrap()
            .set_len(size_mib << 20)
            .unwrap();
        let device = sh(
            "losetup",
            &[
                "--find",
                "--show",
                "--direct-io=on",
                image.to_str().unwrap(),
            ],
        );
        LoopStack {
            dir,
            image,
            device,
            mount: None,
        }
    }

    /// Makes `fs` (ext4, xfs, ...) and mounts it with `options`.
    pub fn with_fs(mut self, fs: &str, options: &str) -> LoopStack {
        if fs == "ext4" {
            // No lazy init: background inode-table writes would disturb the device counters.
            sh(
                "mkfs.ext4",
                &[
                    "-q",
                    "-F",
                    "-E",
                    "lazy_itable_init=0,lazy_journal_init=0",
                    &self.device,
                ],
            );
        } else {
            sh(&format!("mkfs.{fs}"), &["-q", "-f", &self.device]);
        }
        let mnt = self.dir.path().join("mnt");
        std::fs::create_dir(&mnt).unwrap();
        sh(
            "mount",
            &["-o", options, &self.device, mnt.to_str().unwrap()],
        );
        self.mount = Some(mnt);
        self
    }

    /// Kernel name of the loop device (`loop3`).
    pub fn name(&self) -> &str {
        self.device.trim_start_matches("/dev/")
    }
}

impl Drop for LoopStack {
    fn drop(&mut self) {
        if let Some(m) = &self.mount {
            let _ = Command::new("umount").arg(m).status();
        }
        let _ = Command::new("losetup").args(["-d", &self.device]).status();
    }
}

/// Runs bakeoff and returns its JSON run record.
pub fn run_json(args: &[&str]) -> serde_json::Value {
    let out_dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let json = out_dir.path().join("run.json");
    let bin = assert_cmd::cargo::cargo_bin("bakeoff");
    let out = Command::new(bin)
        .args(args)
        .args(["--quiet", "--json", json.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "bakeoff {args:?}: {}\n{}",
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
    serde_json::from_str(&std::fs::read_to_string(json).unwrap()).unwrap()
}

/// A summary figure.
pub fn fig(v: &serde_json::Value, key: &str) -> f64 {
    v["summary"][key]
        .as_f64()
        .unwrap_or_else(|| panic!("summary.{key} is {}", v["summary"][key]))
}

/// A quick `compare` of two directory stacks: randread on the null engine, warm (no cache
/// drop, so it disturbs nobody), 200 ms per run, with its own stack ledger and images beside `a` (so it
/// runs without root and never replays another run's ledger). Add `--out DIR` and more
/// through `extra`.
pub fn quick_compare(
    a: &Path,
    b: &Path,
    repeat: u32,
    extra: &[&str],
) -> assert_cmd::assert::Assert {
    assert_cmd::Command::cargo_bin("bakeoff")
        .unwrap()
        .env("BAKEOFF_STATE_DIR", a.with_file_name("state"))
        .args(["compare", "--warm", "--workload", "randread"])
        .arg("--images")
        .arg(a.with_file_name("images"))
        .args(["--repeat", &repeat.to_string()])
        .args(["--set", "engine=null,size=1m,runtime=200ms"])
        .arg("--stack")
        .arg(format!("dir={}", a.display()))
        .arg("--stack")
        .arg(format!("dir={}", b.display()))
        .args(extra)
        .assert()
}

/// A private state directory (`BAKEOFF_STATE_DIR`) and images directory for one test.
pub struct Scene {
    pub state: tempfile::TempDir,
    pub images: tempfile::TempDir,
}

impl Scene {
    pub fn new() -> Scene {
        let images = tempfile::Builder::new()
            .prefix("bakeoff-test-")
            .tempdir_in("/var/tmp")
            .unwrap();
        Scene {
            state: tempfile::tempdir().unwrap(),
            images,
        }
    }

    /// bakeoff with `args`, keeping its state in ours.
    pub fn cmd(&self, args: &[&str]) -> Command {
        let mut c = Command::new(assert_cmd::cargo::cargo_bin("bakeoff"));
        c.env("BAKEOFF_STATE_DIR", self.state.path()).args(args);
        c
    }
}
