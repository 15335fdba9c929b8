//! Turns on the machine: `scripts/test.sh` runs two lanes of test binaries at once, and a
//! privileged test holds a turn for its whole length. A test that measures (CPU, device
//! counters, latency), drops the page cache or starts the one zfs-fuse daemon a machine has
//! takes the machine [`Turn::Alone`]; a test that only checks what a database or a command did
//! may run beside another such test ([`Turn::Shared`]).
//!
//! Two `flock(2)` locks make it: the turn lock, taken shared or exclusive, and a gate held while
//! waiting for it, so that a test waiting to be alone is not overtaken for ever by shared turns
//! that keep coming. Within one test binary, turns are also taken one at a time (a static
//! mutex), as `cargo test` runs a binary's tests on several threads.
//!
//! With `BAKEOFF_TEST_TURN_LOG=FILE` set, each turn appends a line to FILE when it ends: the
//! seconds held and waited, alone or shared, and the test (`.ci/run` prints the longest), so
//! that the lanes can be balanced on what the tests take rather than on guesses.

use rustix::fs::{flock, FlockOperation};
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::PathBuf;
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// How a test shares the machine with the other lane.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Turn {
    /// Nothing else privileged runs meanwhile: the test measures, or touches what is one per
    /// machine.
    Alone,
    /// Another shared test may run meanwhile: the test checks outcomes, not figures.
    Shared,
}

/// A turn, held until dropped: this binary's lock and the machine's.
pub struct TurnGuard {
    turn: Turn,
    waited: Duration,
    held_since: Instant,
    _machine: File,
    _binary: MutexGuard<'static, ()>,
}

impl Drop for TurnGuard {
    fn drop(&mut self) {
        let Some(path) = std::env::var_os("BAKEOFF_TEST_TURN_LOG") else {
            return;
        };
        let exe = std::env::current_exe().unwrap_or_default();
        let binary = exe.file_name().unwrap_or_default().to_string_lossy();
        // A test binary's file name is `NAME-HASH`.
        let binary = binary.rsplit_once('-').map_or(&*binary, |(name, _)| name);
        let thread = std::thread::current();
        let line = format!(
            "{:.1}\t{:.1}\t{}\t{binary}::{}\n",
            self.held_since.elapsed().as_secs_f64(),
            self.waited.as_secs_f64(),
            if self.turn == Turn::Alone {
                "alone"
            } else {
                "shared"
            },
            thread.name().unwrap_or("?"),
        );
        // One write(2) of an O_APPEND file: the lanes' lines do not interleave.
        let file = OpenOptions::new().create(true).append(true).open(&path);
        if let Ok(mut file) = file {
            let _ = file.write_all(line.as_bytes());
        }
    }
}

/// Where the locks live: `/run/lock` (a tmpfs every Debian machine has), else the temporary
/// directory.
fn lock_path(name: &str) -> PathBuf {
    let dir = PathBuf::from("/run/lock");
    let dir = if dir.is_dir() {
        dir
    } else {
        std::env::temp_dir()
    };
    dir.join(format!("bakeoff-test-{name}.lock"))
}

fn open_lock(name: &str) -> File {
    let path = lock_path(name);
    // flock(2) needs no write access: a user's test locks the file root's test made.
    (OpenOptions::new().create(true).truncate(false).write(true))
        .open(&path)
        .or_else(|_| File::open(&path))
        .unwrap_or_else(|e| panic!("cannot open the test lock {}: {e}", path.display()))
}

fn lock(file: &File, op: FlockOperation, name: &str) {
    flock(file, op).unwrap_or_else(|e| panic!("cannot lock the test lock {name}: {e}"));
}

/// Waits for a turn of kind `turn` and returns it.
pub fn take(turn: Turn) -> TurnGuard {
    static BINARY: Mutex<()> = Mutex::new(());
    // A test that failed while holding the lock leaves nothing behind it that needs repair.
    let binary = BINARY.lock().unwrap_or_else(|e| e.into_inner());
    // The wait for the other lane (a binary's own tests queue on the mutex above).
    let asked = Instant::now();
    let gate = open_lock("gate");
    lock(&gate, FlockOperation::LockExclusive, "gate");
    let machine = open_lock("turn");
    let op = match turn {
        Turn::Alone => FlockOperation::LockExclusive,
        Turn::Shared => FlockOperation::LockShared,
    };
    lock(&machine, op, "turn");
    // Dropping the gate's file releases it: the next waiter may queue now.
    drop(gate);
    TurnGuard {
        turn,
        waited: asked.elapsed(),
        held_since: Instant::now(),
        _machine: machine,
        _binary: binary,
    }
}
