//! `bakeoff workloads`: list the built-ins, or print one as TOML.

use crate::cli::{WorkloadsAction, WorkloadsArgs};
use crate::exit::{Code, Failure};
use bakeoff_core::dbplan::{databases_of, db_run_keys, is_db_workload, DB_WORKLOADS, SQLITE_KEYS};
use bakeoff_core::job::{JOB_KEYS, RUN_KEYS};
use bakeoff_core::workload::{builtin, Body};

/// Runs the command.
pub fn run(args: WorkloadsArgs) -> Result<Code, Failure> {
    match args.action.unwrap_or(WorkloadsAction::List) {
        WorkloadsAction::List => {
            for (name, kind) in bakeoff_core::catalog::entries() {
                println!("{name:<10} {}", description(name, kind));
            }
            println!("\n`bakeoff workloads show NAME` prints one as TOML (a database workload: its keys); run your copy with --job FILE (a recipe: --recipe FILE).");
        }
        WorkloadsAction::Show { name } if bakeoff_core::recipe::builtin(&name).is_some() => {
            let r = bakeoff_core::recipe::builtin(&name).expect("just found");
            print!("{}", r.source);
            println!("\n# Phase keys ([[phase]]):");
            for k in bakeoff_core::recipe::PHASE_KEYS {
                println!("#   {:<27} default {:<8} {}", k.key, k.default, k.help);
            }
            println!("# Built-in actions (action = NAME):");
            for a in bakeoff_core::recipe::ACTIONS {
                println!("#   {:<27} {}", a.key, a.help);
            }
        }
        WorkloadsAction::Show { name } if is_db_workload(&name) => show_db(&name),
        WorkloadsAction::Show { name } => {
            let w = super::pipeline::load_workload(Some(&name), None)?;
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

/// The one line `workloads list` shows for a name of the catalog.
fn description(name: &str, kind: bakeoff_core::catalog::Kind) -> String {
    use bakeoff_core::catalog::Kind;
    match kind {
        Kind::Io => builtin(name).map(|w| w.description).unwrap_or_default(),
        Kind::Database => (DB_WORKLOADS.iter())
            .find(|(n, _, _)| *n == name)
            .map(|(_, d, _)| d.to_string())
            .unwrap_or_default(),
        Kind::Recipe => bakeoff_core::recipe::builtin(name)
            .map(|r| format!("recipe: {}", r.description))
            .unwrap_or_default(),
    }
}

/// A database workload has no TOML of its own: its keys, and where its settings go.
fn show_db(name: &str) {
    let Some((_, description, keys)) = DB_WORKLOADS.iter().find(|(n, _, _)| *n == name) else {
        return;
    };
    println!("# {name}: {description}");
    if name == "tpch" {
        println!(
            "# No run keys: each phase runs to its end, the 22 queries once each (docs/tpch.md)"
        );
    } else {
        println!("# Run keys (--set KEY=VALUE):");
        for k in db_run_keys() {
            println!("#   {:<27} default {:<8} {}", k.key, k.default, k.help);
        }
    }
    println!("# Keys of {name}:");
    for k in *keys {
        println!("#   {:<27} default {:<8} {}", k.key, k.default, k.help);
    }
    let databases = databases_of(name);
    if databases.contains(&"sqlite") {
        println!("# SQLite options (db=sqlite):");
        for k in SQLITE_KEYS {
            println!("#   {:<27} default {:<8} {}", k.key, k.default, k.help);
        }
    }
    if databases.contains(&"postgres") {
        println!("# pg.KEY=VALUE: any postgresql.conf setting, checked by the server's own binaries before anything is built (docs/postgres.md)");
    }
    if databases.contains(&"mariadb") {
        println!("# my.KEY=VALUE: any MariaDB server variable, checked against `mariadbd --verbose --help` before anything is built (docs/mariadb.md)");
    }
}
