//! What the stack crate's tests share beyond `bakeoff-testkit`: stack options over a test's
//! images directory, and the images under a stack.

#![allow(dead_code)]

use bakeoff_stack::{Options, Stack};
use std::path::Path;

/// A fresh images directory; this test process's private state directory is set up first, so a
/// stack never replays another run's ledger.
pub fn scratch() -> tempfile::TempDir {
    bakeoff_testkit::process_state_dir();
    bakeoff_testkit::scratch_dir()
}

/// Options that make each of a stack's images `bytes` large, in `images`.
pub fn options(images: &Path, bytes: u64) -> Options {
    let mut o = Options {
        images: images.to_path_buf(),
        ..Options::default()
    };
    o.backing.size = bytes;
    o
}

/// The image files under a stack's loop devices.
pub fn images_of(stack: &Stack) -> Vec<String> {
    stack
        .info
        .backing
        .iter()
        .filter_map(|b| b.image.clone())
        .collect()
}
