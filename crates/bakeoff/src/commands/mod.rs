//! One file per subcommand.

pub mod demo;
pub mod measure;
pub mod run;
pub mod workloads;
