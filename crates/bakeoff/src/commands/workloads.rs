//! `bakeoff workloads`: list the built-ins, or print one as TOML.

use crate::cli::{WorkloadsAction, WorkloadsArgs};
use crate::exit::{Code, Failure};
use bakeoff_core::job::{JOB_KEYS, RUN_KEYS};
use bakeoff_core::workload::{builtins, Body};

/// Runs the command.
pub fn run(args: WorkloadsArgs) -> Result<Code, Failure> {
    match args.action.unwrap_or(WorkloadsAction::List) {
        WorkloadsAction::List => {
            for w in builtins() {
                println!("{:<10} {}", w.name, w.description);
            }
            println!("\n`bakeoff workloads show NAME` prints one as TOML; run your copy with --job FILE.");
        }
        WorkloadsAction::Show { name } => {
            let w = super::run::load_workload(Some(&name), None)?;
            print!("{}", w.source);
            println!("\n# Keys every workload accepts (--set KEY=VALUE):");
            for k in RUN_KEYS {
                println!("#   {:<27} default {:<8} {}", k.key, k.default, k.help);
            }
            match &w.body {
                Body::Job(_) => {
                    println!("# Job keys (fio's meaning):");
                    for k in JOB_KEYS {
                        println!("#   {:<27} default {:<8} {}", k.key, k.default, k.help);
                    }
                }
                Body::Personality(p) => {
                    println!("# Parameters of {name}:");
                    for param in &p.params {
                        println!(
                            "#   {:<27} default {:<8} {}",
                            param.name, param.default, param.help
                        );
                    }
                }
            }
        }
    }
    Ok(Code::Ok)
}
