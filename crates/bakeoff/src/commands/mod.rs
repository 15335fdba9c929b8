//! One file per subcommand.

pub mod capture;
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
pub mod pipeline;
pub mod preflight;
pub mod report;
pub mod results;
pub mod run;
pub mod stack;
pub mod trace;
pub mod workloads;
