//! Scaffolding for the PostgreSQL tests: they need root (the server runs as `postgres`) and
//! the PostgreSQL binaries; without them they skip, except under `CI=true`, where that is a
//! failure. Servers run on tmpfs stacks under a private state directory.

#![allow(dead_code)]

use bakeoff_db::postgres::{Binaries, PgOptions, PgServer};
use bakeoff_stack::{Options, Stack, StackSpec};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// True if servers can be started here: root and the PostgreSQL binaries. False skips the test
/// ([`bakeoff_testkit::require`]: under CI=true it fails).
pub fn privileged() -> bool {
    let root = nix::unistd::geteuid().is_root();
    let what = match Binaries::find(None) {
        Err(e) => format!("root ({root}) and PostgreSQL: {e}"),
        Ok(_) if !root => format!("root ({root})"),
        Ok(_) => return true,
    };
    bakeoff_testkit::require(false, &what)
}

/// A directory for images and mount points the postgres user can traverse (a temporary
/// directory is private to root by default).
pub fn images_dir() -> tempfile::TempDir {
    let dir = bakeoff_testkit::scratch_dir();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    dir
}

/// A tmpfs stack of `size_mib` in `images`.
pub fn tmpfs(images: &Path, size_mib: u64) -> Stack {
    bakeoff_testkit::process_state_dir();
    let spec = StackSpec::parse(&format!("tmpfs:size={size_mib}m")).unwrap();
    let opts = Options {
        images: images.to_path_buf(),
        ..Options::default()
    };
    Stack::create(&spec, &opts).unwrap_or_else(|e| panic!("tmpfs stack: {e}"))
}

/// Options for a server with its data in `pgdata` on `stack`, for `clients` clients.
pub fn options(stack: &Stack, clients: u32) -> PgOptions {
    let mut opts = PgOptions::new(stack.target.join("pgdata"));
    opts.clients = clients;
    opts
}

/// Starts a server, panicking with the error.
pub fn start(stack: &mut Stack, opts: PgOptions) -> PgServer {
    PgServer::start(stack, opts).unwrap_or_else(|e| panic!("starting PostgreSQL: {e}"))
}

/// A server with default options for `clients` on a new tmpfs stack of `size_mib` (the images
/// directory goes last: it holds the stack).
pub fn tmpfs_server(size_mib: u64, clients: u32) -> (tempfile::TempDir, Stack, PgServer) {
    let images = images_dir();
    let mut stack = tmpfs(images.path(), size_mib);
    let opts = options(&stack, clients);
    let server = start(&mut stack, opts);
    (images, stack, server)
}

/// A server for `clients` on a new tmpfs stack of `size_mib` in `images`, under a memory
/// limit of `limit` bytes: checks that this process and the postmaster are in the run's
/// cgroup (the limit moves this whole process there).
pub fn server_in_memory_cgroup(
    images: &Path,
    size_mib: u64,
    limit: u64,
    clients: u32,
) -> (Stack, PgServer) {
    let mut stack = tmpfs(images, size_mib);
    stack.limit_memory(limit).unwrap();
    let opts = options(&stack, clients);
    let server = start(&mut stack, opts);
    let cgroup = |pid: String| std::fs::read_to_string(format!("/proc/{pid}/cgroup")).unwrap();
    let ours = cgroup("self".into());
    assert!(
        ours.contains(&format!("bakeoff-{}", stack.name())),
        "{ours}"
    );
    assert_eq!(
        cgroup(server.pid().to_string()),
        ours,
        "the postmaster is in the run's cgroup"
    );
    (stack, server)
}

/// True while `pid` runs.
pub fn running(pid: i32) -> bool {
    bakeoff_stack::daemon::alive(pid)
}

/// Waits up to 10 s for `pid` to be gone.
pub fn wait_gone(pid: i32) -> bool {
    let start = std::time::Instant::now();
    while running(pid) && start.elapsed().as_secs() < 10 {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    !running(pid)
}

/// The socket directory a server named `name` uses.
pub fn socket_dir(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("bakeoff-pg-{name}"))
}
