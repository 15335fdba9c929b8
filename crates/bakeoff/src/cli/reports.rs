//! The arguments of `compare` and `report`, and the report formats they share.

use super::ExportOpts;
use bakeoff_report::comparison::StudyReport;
use bakeoff_report::{Exporter, EXPORTERS};
use clap::builder::PossibleValue;
use clap::Args;
use std::path::PathBuf;
use std::sync::LazyLock;

/// Output format of comparisons: the terminal table, each exporter's that renders a
/// comparison (the report crate's [`EXPORTERS`], as `compare --export-<format>` writes it), or
/// SVG charts.
#[derive(Clone, Copy, Debug)]
pub enum Format {
    /// A table for the terminal.
    Table,
    /// An exporter's format (JSON, Markdown, CSV, HTML, ...) and its renderer of a comparison.
    Export {
        /// Its entry in [`EXPORTERS`].
        exporter: &'static Exporter,
        /// Its renderer of a comparison.
        render: fn(&StudyReport) -> String,
    },
    /// One SVG file per chart, into `report --out DIR`.
    Svg,
}

/// Every format, in the order `--help` lists them.
static FORMATS: LazyLock<Vec<Format>> = LazyLock::new(|| {
    let exports = (EXPORTERS.iter()).filter_map(|exporter| {
        Some(Format::Export {
            exporter,
            render: exporter.comparison?,
        })
    });
    (std::iter::once(Format::Table).chain(exports))
        .chain([Format::Svg])
        .collect()
});

impl clap::ValueEnum for Format {
    fn value_variants<'a>() -> &'a [Self] {
        &FORMATS
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(match self {
            Format::Table => PossibleValue::new("table").help("A table for the terminal"),
            Format::Export { exporter: e, .. } => {
                let mut help = format!("The comparison as `compare {}` writes it", e.flag);
                if e.links_charts {
                    help += "; with `report --out FILE`, its charts as SVG files beside FILE, \
                             linked (on stdout: no charts)";
                }
                PossibleValue::new(e.format()).help(help)
            }
            Format::Svg => {
                PossibleValue::new("svg").help("One SVG file per chart, into `report --out DIR`")
            }
        })
    }
}

/// How a comparison is shown.
#[derive(Args, Debug, Clone)]
pub struct ReportOpts {
    /// Output format.
    #[arg(long, value_enum, default_value = "table")]
    pub format: Format,
    /// Figures to show, e.g. read_iops,write_iops,cpu_busy_pct (seed 000's table).
    #[arg(long, value_name = "KEYS")]
    pub columns: Option<String>,
    /// Minimum effect for a verdict (default: the study's, 5%).
    #[arg(long, value_name = "PCT")]
    pub min_effect: Option<String>,
    /// Compare against this stack spec instead of the study's baseline.
    #[arg(long, value_name = "SPEC")]
    pub against: Option<String>,
}

#[derive(Args, Debug)]
pub struct CompareArgs {
    /// A stack to compare (repeatable).
    #[arg(long = "stack", value_name = "SPEC", required_unless_present = "study")]
    pub stacks: Vec<String>,
    #[arg(
        long = "workload",
        value_name = "NAME",
        required_unless_present_any = ["study", "replays"],
        value_parser = super::WorkloadName,
        hide_possible_values = true,
        help = super::names::help("A workload to run on every stack (repeatable), or a workload file")
    )]
    pub workloads: Vec<String>,
    /// A trace of `bakeoff capture` to replay on every stack (repeatable; the same as
    /// --workload FILE): the replay's keys (timing=fast, ...) go in --set (docs/replay.md).
    #[arg(long = "replay", value_name = "FILE", conflicts_with = "study")]
    pub replays: Vec<String>,
    /// Workload keys for every workload: --set readers=32,writers=8.
    #[arg(long = "set", value_name = "KEY=VALUE,...")]
    pub set: Vec<String>,
    /// A sweep: zfs.recordsize=8k,32k,128k (a stack key) or slob.block=8k,32k (a workload key).
    #[arg(long = "sweep", value_name = "SCOPE.KEY=V1,V2")]
    pub sweeps: Vec<String>,
    /// A load ramp in every run instead of one window (see `run --ramp`); the comparison
    /// adds each stack's highest rate within the limit and its costs at a common load point.
    #[arg(long, value_name = "SPEC", conflicts_with = "study")]
    pub ramp: Option<String>,
    /// Repetitions of every cell (interleaved across cells).
    #[arg(long, default_value_t = 3)]
    pub repeat: u32,
    /// The stack every other is compared with (default: the first).
    #[arg(long)]
    pub baseline: Option<String>,
    /// A study file (TOML) instead of the flags above.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["stacks", "workloads"])]
    pub study: Option<PathBuf>,
    /// Results directory (default: results/study-PID).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Run only what the results directory is missing. The study may have grown since (cells
    /// added after the saved ones: a stack or workload appended, the rest unchanged).
    #[arg(long)]
    pub resume: bool,
    /// Check N crash states in every run, as `run --crash-states` (TPC-C, or an I/O workload
    /// with verify=, on ext4, xfs, btrfs or zfs): the comparison shows each cell's risk beside
    /// its cost (docs/durability.md).
    /// A study file says it with its crash_states key.
    #[arg(long, value_name = "N")]
    pub crash_states: Option<u32>,
    #[command(flatten)]
    pub run_opts: super::RunOpts,
    #[command(flatten)]
    pub disturbance: super::DisturbanceOpts,
    #[command(flatten)]
    pub adaptive: super::AdaptiveOpts,
    #[command(flatten)]
    pub report: ReportOpts,
    #[command(flatten)]
    pub export: ExportOpts<false>,
}

#[derive(Args, Debug)]
pub struct ReportArgs {
    /// Results directories of `bakeoff compare` (several are combined).
    #[arg(required = true, value_name = "DIR")]
    pub dirs: Vec<PathBuf>,
    #[command(flatten)]
    pub report: ReportOpts,
    /// Write the report to FILE instead of stdout (Markdown: with its charts as SVG files
    /// beside it, FILE's name then the chart's); with --format svg, the directory to write
    /// one SVG per chart into (made if missing).
    #[arg(long, value_name = "FILE|DIR")]
    pub out: Option<PathBuf>,
    /// Only the answer, the tables and their legends: no findings, notes, adaptive decisions
    /// or cost (for quoting a table in a document; docs/studies' generated tables).
    #[arg(long)]
    pub table_only: bool,
}
