//! The comparison of a study: one row per cell, each headline figure as a median with its range
//! and, against the baseline cell, a ratio and a verdict; plus the findings that explain it.

use bakeoff_core::findings::{cell_findings, Finding};
use bakeoff_core::record::{RunRecord, Summary};
use bakeoff_core::verdict::{compare, median, spread, Better, Comparison, Method};
use serde::Serialize;

/// Version of the comparison JSON.
pub const REPORT_SCHEMA_VERSION: u32 = 1;

/// A headline figure that can be a column.
pub struct FigureDef {
    /// Key (a `Summary` field).
    pub key: &'static str,
    /// Column heading.
    pub label: &'static str,
    /// Which direction is better.
    pub better: Better,
    /// Reads it from a summary.
    pub get: fn(&Summary) -> Option<f64>,
    /// Decimals to show.
    pub decimals: usize,
}

/// Every figure a comparison can show, in the default order.
pub const FIGURES: &[FigureDef] = &[
    FigureDef {
        key: "read_iops",
        label: "read IOPS",
        better: Better::Higher,
        get: |s| s.read_iops,
        decimals: 0,
    },
    FigureDef {
        key: "write_iops",
        label: "write IOPS",
        better: Better::Higher,
        get: |s| s.write_iops,
        decimals: 0,
    },
    FigureDef {
        key: "cpu_busy_pct",
        label: "CPU %",
        better: Better::Lower,
        get: |s| s.cpu_busy_pct,
        decimals: 1,
    },
    FigureDef {
        key: "cpu_us_per_op",
        label: "CPU us/op",
        better: Better::Lower,
        get: |s| s.cpu_us_per_op,
        decimals: 1,
    },
    FigureDef {
        key: "read_lat_p99_us",
        label: "read p99 us",
        better: Better::Lower,
        get: |s| s.read_lat_p99_us,
        decimals: 0,
    },
    FigureDef {
        key: "device_read_bytes_per_op",
        label: "dev B/read",
        better: Better::Lower,
        get: |s| s.device_read_bytes_per_op,
        decimals: 0,
    },
    FigureDef {
        key: "read_amplification",
        label: "read amp",
        better: Better::Lower,
        get: |s| s.read_amplification,
        decimals: 2,
    },
    FigureDef {
        key: "cache_hit_pct",
        label: "cache hit %",
        better: Better::Lower,
        get: |s| s.cache_hit_pct,
        decimals: 1,
    },
    FigureDef {
        key: "write_amplification",
        label: "write amp",
        better: Better::Lower,
        get: |s| s.write_amplification,
        decimals: 2,
    },
    FigureDef {
        key: "read_mb_s",
        label: "read MB/s",
        better: Better::Higher,
        get: |s| s.read_mb_s,
        decimals: 1,
    },
    FigureDef {
        key: "write_mb_s",
        label: "write MB/s",
        better: Better::Higher,
        get: |s| s.write_mb_s,
        decimals: 1,
    },
    FigureDef {
        key: "write_lat_p99_us",
        label: "write p99 us",
        better: Better::Lower,
        get: |s| s.write_lat_p99_us,
        decimals: 0,
    },
];

/// The default columns (the `slob` headline figures).
pub const DEFAULT_COLUMNS: &[&str] = &[
    "read_iops",
    "write_iops",
    "cpu_busy_pct",
    "cpu_us_per_op",
    "read_lat_p99_us",
    "device_read_bytes_per_op",
    "read_amplification",
    "cache_hit_pct",
];

/// Looks up a column by key.
pub fn figure(key: &str) -> Option<&'static FigureDef> {
    FIGURES.iter().find(|f| f.key == key)
}

/// One figure of one cell.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FigureCell {
    /// Median over the repetitions.
    pub median: Option<f64>,
    /// Smallest and largest repetition.
    pub min: Option<f64>,
    /// Largest repetition.
    pub max: Option<f64>,
    /// Against the baseline cell (absent for the baseline itself).
    pub vs_baseline: Option<Comparison>,
}

/// One cell of the study.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CellRow {
    /// Label (stack / workload / sweep values).
    pub label: String,
    /// Stack spec.
    pub stack: String,
    /// Completed repetitions.
    pub runs: usize,
    /// This cell is a baseline.
    pub is_baseline: bool,
    /// Figures, in column order.
    pub figures: Vec<FigureCell>,
    /// Findings over its repetitions.
    pub findings: Vec<Finding>,
}

/// A whole comparison.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StudyReport {
    /// Format version.
    pub schema_version: u32,
    /// Column keys.
    pub columns: Vec<String>,
    /// Minimum effect used for verdicts.
    pub min_effect: f64,
    /// Rows.
    pub rows: Vec<CellRow>,
    /// Caveats (different machines or tool versions across results directories, ...).
    pub notes: Vec<String>,
}

/// A cell's runs and the index of its baseline cell.
pub struct CellRuns {
    /// Label.
    pub label: String,
    /// Stack spec.
    pub stack: String,
    /// Completed runs.
    pub runs: Vec<RunRecord>,
    /// Index of its baseline cell, if any.
    pub baseline: Option<usize>,
}

/// Builds the comparison of `cells` over `columns`.
pub fn build(
    cells: &[CellRuns],
    columns: &[&'static FigureDef],
    method: &Method,
    min_repetitions: usize,
) -> StudyReport {
    let values = |c: &CellRuns, f: &FigureDef| -> Vec<f64> {
        c.runs.iter().filter_map(|r| (f.get)(&r.summary)).collect()
    };
    let rows = cells
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let is_baseline = c.baseline == Some(i);
            let figures = columns
                .iter()
                .map(|f| {
                    let xs = values(c, f);
                    let (min, max) = spread(&xs).map_or((None, None), |(a, b)| (Some(a), Some(b)));
                    let vs_baseline = match c.baseline {
                        Some(b) if b != i => {
                            Some(compare(&xs, &values(&cells[b], f), f.better, method))
                        }
                        _ => None,
                    };
                    FigureCell {
                        median: median(&xs),
                        min,
                        max,
                        vs_baseline,
                    }
                })
                .collect();
            let findings = cell_findings(&c.runs, min_repetitions);
            CellRow {
                label: c.label.clone(),
                stack: c.stack.clone(),
                runs: c.runs.len(),
                is_baseline,
                figures,
                findings,
            }
        })
        .collect();
    StudyReport {
        schema_version: REPORT_SCHEMA_VERSION,
        columns: columns.iter().map(|f| f.key.to_string()).collect(),
        min_effect: method.min_effect,
        rows,
        notes: provenance_notes(cells),
    }
}

/// Says when runs come from different machines, kernels or tool versions.
fn provenance_notes(cells: &[CellRuns]) -> Vec<String> {
    let mut notes = Vec::new();
    let all = || cells.iter().flat_map(|c| c.runs.iter());
    let distinct = |f: &dyn Fn(&RunRecord) -> String| {
        let mut v: Vec<String> = all().map(f).collect();
        v.sort();
        v.dedup();
        v
    };
    for (what, values) in [
        ("machines", distinct(&|r| r.environment.hostname.clone())),
        ("kernels", distinct(&|r| r.environment.kernel.clone())),
        (
            "bakeoff versions",
            distinct(&|r| {
                format!(
                    "{} {}",
                    r.environment.tool_version,
                    r.environment.git_hash.clone().unwrap_or_default()
                )
            }),
        ),
    ] {
        if values.len() > 1 {
            notes.push(format!(
                "runs come from different {what}: {}",
                values.join(", ")
            ));
        }
    }
    notes
}
