//! The arguments of `compare` and `report`, and the report formats they share.

use super::ExportOpts;
use clap::Args;
use std::path::PathBuf;

/// Output format of comparisons.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// A table for the terminal.
    Table,
    /// A Markdown table and the findings; with `report --out FILE`, its charts as SVG files
    /// beside FILE, linked (on stdout: no charts).
    Markdown,
    /// CSV, one row per cell and figure.
    Csv,
    /// JSON with schema_version.
    Json,
    /// One self-contained HTML page: the table with verdict colours, findings and charts.
    Html,
    /// One SVG file per chart, into `report --out DIR`.
    Svg,
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
        required_unless_present = "study",
        value_parser = super::WorkloadName,
        hide_possible_values = true,
        help = super::names::help("A workload to run on every stack (repeatable), or a workload file")
    )]
    pub workloads: Vec<String>,
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
    /// Run only what the results directory is missing.
    #[arg(long)]
    pub resume: bool,
    #[command(flatten)]
    pub run_opts: super::RunOpts,
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
}
