//! One file per subcommand.

pub mod cleanup;
pub mod demo;
pub mod measure;
pub mod run;
pub mod stack;
pub mod workloads;
