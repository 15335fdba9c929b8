//! `bakeoff demo`: slob for a few seconds on small loop stacks (raw, ext4, xfs, btrfs, zfs by
//! default), each built, measured cold and torn down, then the headline figures side by side.
//! A stack type that cannot be built here is skipped with what to install.

use super::measure::{interrupt_flag, status_code};
use super::on_stack::{run_on_stack, StackRun};
use super::pipeline::parse_sets;
use crate::cli::DemoArgs;
use crate::exit::{failure, Code, Failure};
use bakeoff_core::record::RunRecord;
use bakeoff_core::settings::{Origin, Settings};
use bakeoff_core::workload::builtin;
use bakeoff_stack::fs::missing_tool;

/// Runs the demo.
pub fn run(args: DemoArgs) -> Result<Code, Failure> {
    args.status.apply();
    let mut settings = Settings::default();
    for (k, v) in [
        ("readers", "4"),
        ("writers", "2"),
        ("data_size", "256m"),
        ("redo_size", "16m"),
        ("direct", "true"),
    ] {
        settings.insert(k, v, Origin::CommandLine);
    }
    settings.insert("runtime", &args.runtime, Origin::CommandLine);
    settings.merge(&parse_sets(&args.set)?);
    let plan = builtin("slob")
        .expect("slob is built in")
        .plan(&settings)
        .map_err(|e| failure(Code::Usage, e))?;
    let buildable = check(&args, plan.dataset_bytes())?;
    let interrupt = interrupt_flag()?;
    let (mut labels, mut records) = (Vec::new(), Vec::new());
    for spec in buildable {
        let spec_text = spec.text.as_str();
        eprintln!("== slob on {spec_text} ==");
        let run = StackRun {
            spec: &spec,
            log_spec: None,
            opts: &args.stack_opts,
            warm: false,
            mem_limit: None,
            quiet: false,
            capture: None,
            crash_states: None,
        };
        let record = run_on_stack(&run, &plan, &interrupt)?;
        println!("{}", bakeoff_report::terminal::render(&record));
        let code = status_code(&record);
        labels.push(spec_text.to_string());
        records.push(record);
        if code != Code::Ok {
            return Ok(code);
        }
    }
    if records.is_empty() {
        return Err(failure(
            Code::Environment,
            "no stack could be built here (see `bakeoff stack list`)",
        ));
    }
    print!("{}", side_by_side(labels, records));
    Ok(Code::Ok)
}

/// The stacks that can be built here, each checked as `run` checks it before anything is
/// built (a bad mount option, a size its mkfs refuses, room for the dataset), so the demo is
/// refused up front rather than after building the first stacks; a type whose tools are
/// missing is skipped with what to install.
fn check(args: &DemoArgs, dataset: u64) -> Result<Vec<bakeoff_stack::StackSpec>, Failure> {
    let mut buildable = Vec::new();
    for spec_text in &args.stacks {
        let spec = super::preflight::spec(spec_text)?;
        if let Some((tool, package)) = missing_tool(spec.kind) {
            eprintln!("== skipping {spec_text}: {tool} is missing (apt-get install {package}) ==");
            continue;
        }
        super::preflight::stack(&spec, &args.stack_opts, dataset)?;
        buildable.push(spec);
    }
    Ok(buildable)
}

/// The demo as a one-repetition study against the first stack, in the study table.
fn side_by_side(labels: Vec<String>, records: Vec<RunRecord>) -> String {
    use bakeoff_report::comparison::{build, CellRuns};
    use bakeoff_report::figures::figure;
    let cells: Vec<CellRuns> = labels
        .into_iter()
        .zip(records)
        .map(|(label, r)| CellRuns {
            stack: label.clone(),
            label,
            runs: vec![r],
            baseline: Some(0),
        })
        .collect();
    let columns: Vec<_> = DEMO_COLUMNS.iter().filter_map(|k| figure(k)).collect();
    let method = bakeoff_core::verdict::Method::default();
    bakeoff_report::comparison_text::render_table(&build(&cells, &columns, &method, 1))
}

/// What the demo compares: what each stack achieved and what it cost.
const DEMO_COLUMNS: &[&str] = &[
    "read_iops",
    "write_iops",
    "read_lat_p99_us",
    "commit_lat_p99_us",
    "cpu_us_per_op",
    "read_amplification",
    "write_amplification",
    "reads_not_from_device_pct",
];
