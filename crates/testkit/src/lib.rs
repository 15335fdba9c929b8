//! Scaffolding for bakeoff's tests, written once: whether a privileged test can run (and the
//! rule that under `CI=true` a test that cannot run fails instead of skipping), turns on the
//! machine ([`turn`]), scratch directories and the process-wide state directory. Commands are in
//! [`command`]; loop devices, mounts and device counters in [`loop_device`].
//!
//! A dev-dependency of the crates whose tests use it; never published.

pub mod command;
pub mod loop_device;
pub mod turn;

pub use turn::{Turn, TurnGuard};

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// Where tests put images and scratch directories: on disk (`/tmp` may be a tmpfs, which a
/// loop device with direct I/O cannot sit on) and where CI looks for leftovers.
pub const SCRATCH: &str = "/var/tmp";

/// Prefix of every scratch directory and image the tests make (CI fails on
/// `/var/tmp/bakeoff-test-*` left behind).
pub const PREFIX: &str = "bakeoff-test-";

/// True under `CI=true`, where a test that cannot run must fail instead of skipping.
pub fn in_ci() -> bool {
    std::env::var("CI").as_deref() == Ok("true")
}

/// `ok`, and when it is false the test skips, saying it needs `what`; under `CI=true` not being
/// able to run is a failure instead.
pub fn require(ok: bool, what: &str) -> bool {
    if !ok {
        assert!(
            !in_ci(),
            "needs {what}; CI=true, so this fails instead of skipping"
        );
        eprintln!("skipping: needs {what}");
    }
    ok
}

/// Whether loop devices can be set up here: root, `/dev/loop-control` and `losetup`. False
/// skips the test ([`require`]: under `CI=true` it fails).
pub fn privileged() -> bool {
    let root = rustix::process::geteuid().is_root();
    let control = Path::new("/dev/loop-control").exists();
    let losetup = command::succeeds("losetup", &["--version"]);
    let what = format!("root ({root}), /dev/loop-control ({control}) and losetup ({losetup})");
    require(root && control && losetup, &what)
}

/// The machine alone ([`Turn::Alone`]): tests that drop the page cache machine-wide, count a
/// device's I/O, measure CPU or latency, or start the one zfs-fuse daemon a machine has. Hold
/// it for the whole test.
pub fn serial() -> TurnGuard {
    turn::take(Turn::Alone)
}

/// A turn beside other shared ones ([`Turn::Shared`]): tests that check what a database or a
/// command did, never how fast or at what cost. Hold it for the whole test.
pub fn shared() -> TurnGuard {
    turn::take(Turn::Shared)
}

/// [`privileged`], then [`serial`]: the turn of a privileged test, or `None` when it skips.
pub fn privileged_turn() -> Option<TurnGuard> {
    privileged().then(serial)
}

/// [`privileged`], then [`shared`].
pub fn privileged_shared_turn() -> Option<TurnGuard> {
    privileged().then(shared)
}

/// The lock around a ZFS stack: a machine has one zfs-fuse daemon, and a second bakeoff run
/// that wants it with other settings is refused. Tests and the README tour's ZFS lines take it
/// (the tour with `flock(1)`).
pub const ZFS_LOCK: &str = "/tmp/bakeoff-zfs.lock";

/// A shared turn and the [`ZFS_LOCK`], held until dropped (the lock first).
pub struct ZfsTurn {
    _zfs: std::fs::File,
    _turn: TurnGuard,
}

/// A shared turn and the [`ZFS_LOCK`]: a test that builds ZFS stacks and checks outcomes, not
/// figures, runs beside the other lane's shared tests, one ZFS test at a time. (A ZFS test that
/// measures takes [`serial`]: alone, no other ZFS test can run.)
pub fn zfs_turn() -> ZfsTurn {
    let turn = shared();
    ZfsTurn {
        _zfs: zfs_lock(),
        _turn: turn,
    }
}

/// The [`ZFS_LOCK`] alone, held until the file is dropped: for a test that already holds its
/// shared turn and builds ZFS stacks in some of its steps only (tests/campaign.rs), so that
/// other ZFS tests run between them.
pub fn zfs_lock() -> std::fs::File {
    let zfs = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(ZFS_LOCK)
        .unwrap_or_else(|e| panic!("{ZFS_LOCK}: {e}"));
    rustix::fs::flock(&zfs, rustix::fs::FlockOperation::LockExclusive)
        .unwrap_or_else(|e| panic!("flock {ZFS_LOCK}: {e}"));
    zfs
}

/// [`privileged`], then [`zfs_turn`].
pub fn privileged_zfs_turn() -> Option<ZfsTurn> {
    privileged().then(zfs_turn)
}

/// A fresh directory under [`SCRATCH`], removed on drop.
pub fn scratch_dir() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(PREFIX)
        .tempdir_in(SCRATCH)
        .unwrap_or_else(|e| panic!("cannot make a scratch directory in {SCRATCH}: {e}"))
}

/// Points `BAKEOFF_STATE_DIR` (ledgers, locks) at a private directory, once per test process:
/// the variable is process-wide, so every test of the binary shares that directory.
pub fn process_state_dir() -> &'static Path {
    static STATE: OnceLock<tempfile::TempDir> = OnceLock::new();
    STATE
        .get_or_init(|| {
            let dir = tempfile::tempdir().expect("a temporary state directory");
            std::env::set_var("BAKEOFF_STATE_DIR", dir.path());
            dir
        })
        .path()
}

/// Everything under `dir`, files and directories, deepest first; empty if `dir` is missing.
pub fn walk(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok())
        .flat_map(|e| {
            let p = e.path();
            if p.is_dir() {
                let mut below = walk(&p);
                below.push(p);
                below
            } else {
                vec![p]
            }
        })
        .collect()
}

/// The files under `dir`, at any depth.
pub fn files_under(dir: &Path) -> Vec<PathBuf> {
    walk(dir).into_iter().filter(|p| p.is_file()).collect()
}
