//! bakeoff's storage stacks: a spec (`zfs:recordsize=8k`) becomes loop devices over sparse
//! images (or devices the user handed over, after the safety gate), a file system or pool,
//! and a mount; every side effect goes through the ledger first, and teardown undoes it all.

pub mod backing;
pub mod cgroup;
pub mod command_group;
pub mod crash;
pub mod daemon;
pub mod error;
pub mod exec;
pub mod faults;
pub mod fs;
pub mod gate;
pub mod ledger;
pub mod process;
pub mod sharing;
pub mod spec;
pub mod stack;
pub mod undo;
pub mod writelog;

pub use error::StackError;
pub use spec::{StackKind, StackSpec};
pub use stack::{Options, Stack};
