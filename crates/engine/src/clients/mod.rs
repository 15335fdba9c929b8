//! `clients=N`: the roles run in N client processes instead of threads of bakeoff itself, like
//! seed 004's NFS clients. Each client is the same binary (`bakeoff __client`) running
//! [`Plan::client_plan`](bakeoff_core::plan::Plan::client_plan) on its own copy of the
//! filesets (laid out by the parent in `client-<i>`). They set up, report ready, and are
//! started together by the parent's `go`; each measures its own window as any run does and
//! hands back exact counts (every latency counter), which the parent adds into one result.
//! Each client measures its own CPU over its window; they are the parent's children, so the
//! whole-machine CPU split counts them as bakeoff's. A client that fails or dies fails the
//! run, naming it; Ctrl-C or an error stops them all; a client whose parent is gone stops.

mod child;
mod parent;
pub mod protocol;

pub use child::serve;
pub use parent::run_clients;

use std::path::PathBuf;
use std::sync::OnceLock;

/// The hidden subcommand of the `bakeoff` binary that runs one client.
pub const SUBCOMMAND: &str = "__client";

/// How a client process is started: a program and its first arguments.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Launcher {
    /// The program.
    pub program: PathBuf,
    /// Its arguments.
    pub args: Vec<String>,
    /// Environment variables it gets besides bakeoff's own.
    pub env: Vec<(String, String)>,
}

static LAUNCHER: OnceLock<Launcher> = OnceLock::new();

/// Starts clients with `launcher` instead of this executable's [`SUBCOMMAND`] (a test binary
/// that serves as a client). The first call wins; returns false if one was already set.
pub fn set_launcher(launcher: Launcher) -> bool {
    LAUNCHER.set(launcher).is_ok()
}

/// The launcher in force.
fn launcher() -> std::io::Result<Launcher> {
    if let Some(l) = LAUNCHER.get() {
        return Ok(l.clone());
    }
    Ok(Launcher {
        program: std::env::current_exe()?,
        args: vec![SUBCOMMAND.to_string()],
        env: Vec::new(),
    })
}
