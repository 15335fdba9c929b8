//! Shared by the privileged stack tests.

#![allow(dead_code)]

use std::path::Path;

/// True if `ok`; otherwise the test skips with a message naming `what`, except under `CI=true`,
/// where not being able to run is a failure.
pub fn require(ok: bool, what: &str) -> bool {
    if !ok {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "needs {what}; CI=true, so this fails"
        );
        eprintln!("skipping: needs {what}");
    }
    ok
}

/// Root and loop devices.
pub fn privileged() -> bool {
    let ok = rustix::process::geteuid().is_root() && Path::new("/dev/loop-control").exists();
    require(ok, "root and loop devices")
}

/// The image files under a stack's loop devices.
pub fn images_of(stack: &bakeoff_stack::Stack) -> Vec<String> {
    stack
        .info
        .backing
        .iter()
        .filter_map(|b| b.image.clone())
        .collect()
}
