//! Scaffolding for the MariaDB tests: they need root (the server runs as `mysql`) and Debian's
//! MariaDB; without them they skip, except under `CI=true`, where that is a failure. Servers
//! run on tmpfs stacks under a private state directory.

#![allow(dead_code)]

use bakeoff_db::mariadb::{mysql_user, Binaries, MyOptions, MyServer};
use bakeoff_stack::{Options, Stack, StackSpec};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// The redo log's size in the tests (the default, 1 GiB, would fill their small tmpfs stacks).
pub const TEST_REDO: &str = "my.innodb_log_file_size=48M";

/// True if servers can be started here: root, the `mysql` user and MariaDB's binaries. False
/// skips the test ([`bakeoff_testkit::require`]: under CI=true it fails).
pub fn privileged() -> bool {
    let what = match Binaries::find().and_then(|_| mysql_user()) {
        Ok(_) => return true,
        Err(e) => format!("root, the mysql user and MariaDB: {e}"),
    };
    bakeoff_testkit::require(false, &what)
}

/// A directory for images and mount points the mysql user can traverse (a temporary directory
/// is private to root by default).
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

/// Options for a server with its data in `mariadb` on `stack`, for `clients` clients, with the
/// tests' small redo log.
pub fn options(stack: &Stack, clients: u32) -> MyOptions {
    let mut opts = MyOptions::new(stack.target.join("mariadb"));
    opts.clients = clients;
    opts.set(TEST_REDO).unwrap();
    opts
}

/// Starts a server, panicking with the error.
pub fn start(stack: &mut Stack, opts: MyOptions) -> MyServer {
    MyServer::start(stack, opts).unwrap_or_else(|e| panic!("starting MariaDB: {e}"))
}

/// A server with the tests' options for `clients` on a new tmpfs stack of `size_mib` (the
/// images directory goes last: it holds the stack).
pub fn tmpfs_server(size_mib: u64, clients: u32) -> (tempfile::TempDir, Stack, MyServer) {
    let images = images_dir();
    let mut stack = tmpfs(images.path(), size_mib);
    let opts = options(&stack, clients);
    let server = start(&mut stack, opts);
    (images, stack, server)
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
    std::env::temp_dir().join(format!("bakeoff-my-{name}"))
}
