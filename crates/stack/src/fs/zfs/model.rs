//! What the parts of the ZFS driver share: which ZFS runs here, the names of a stack's pool and
//! dataset, and what the implementation was set up with.

use crate::daemon::Daemon;
use std::collections::BTreeMap;
use std::path::Path;

/// String properties.
pub(crate) type Props = BTreeMap<String, String>;

/// What the ZFS implementation was set up with.
pub(crate) struct Setup {
    /// `zfs-fuse 0.7.0`, `OpenZFS 2.2.0`.
    pub backend: String,
    /// The cache settings in force.
    pub settings: Props,
    /// Tool versions.
    pub versions: Props,
    /// The zfs-fuse daemon started for the stack (none with OpenZFS).
    pub daemon: Option<Daemon>,
}

/// True if the OpenZFS kernel module is loaded (then it is used rather than zfs-fuse).
pub fn openzfs_loaded() -> bool {
    Path::new("/sys/module/zfs").exists()
}

/// The pool of a stack: `bk_` and the stack name, with characters ZFS refuses replaced by `_`.
pub fn pool_name(stack: &str) -> String {
    let ok = |c: char| c.is_ascii_alphanumeric() || "_-.".contains(c);
    let clean: String = stack
        .chars()
        .map(|c| if ok(c) { c } else { '_' })
        .take(200)
        .collect();
    format!("bk_{clean}")
}

/// The dataset the workload runs in.
pub fn dataset(pool: &str) -> String {
    format!("{pool}/data")
}
