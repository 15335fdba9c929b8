//! One file per subcommand.

pub mod cleanup;
pub mod compare;
pub mod demo;
pub mod measure;
pub mod on_stack;
pub mod report;
pub mod run;
pub mod stack;
pub mod workloads;
