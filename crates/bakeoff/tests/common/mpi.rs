//! What the MPI tests (tests/mpi.rs, tests/mpi_hosts.rs) share: the binary the ranks run, a
//! job's output, the ranks' directories left in a target.

use std::process::Output;

/// The bakeoff binary every rank runs.
pub fn bakeoff_bin() -> String {
    assert_cmd::cargo::cargo_bin("bakeoff")
        .to_string_lossy()
        .into_owned()
}

/// A job's stderr then stdout, for messages and assertions.
pub fn text(out: &Output) -> String {
    format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    )
}

/// The ranks' directories and markers under `target`.
pub fn rank_dirs(target: &str) -> Vec<String> {
    std::fs::read_dir(target)
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("rank-") || n.starts_with(".bakeoff-mpi-"))
        .collect()
}
