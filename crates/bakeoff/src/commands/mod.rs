//! One file per subcommand.

pub mod cleanup;
pub mod compare;
pub mod completions;
pub mod dbrun;
pub mod demo;
pub mod exec;
pub mod exports;
pub mod measure;
pub mod mpi;
pub mod on_stack;
pub mod phases;
pub mod preflight;
pub mod ramp;
pub mod report;
pub mod report_files;
pub mod results;
pub mod run;
pub mod sizing;
pub mod stack;
pub mod workloads;
