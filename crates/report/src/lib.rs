//! Exporters of run records. Each format is one file with one entry point:
//! [`terminal::render`] (what a DBA pastes into a post), [`json::render`] (the full run record),
//! [`csv::render_timeseries`] (per-second samples); comparisons of several runs
//! ([`comparison`], whose figures are the one table in [`figures`]) render through
//! [`comparison::text`]; [`charts`] are the charts of either, drawn as SVG, and [`html`] the
//! page that holds them. [`EXPORTERS`] lists the formats `run` and `compare` export to.

pub mod charts;
pub mod comparison;
pub mod csv;
pub mod figures;
pub mod html;
pub mod json;
pub mod plan_text;
pub mod ramp;
pub mod terminal;
pub mod trace;

mod fmt;

/// The comparison's renderers under the name the bakeoff crate calls them by.
pub use comparison::text as comparison_text;

#[cfg(test)]
mod fixture;
#[cfg(test)]
mod ramp_fixture;

use bakeoff_core::record::RunRecord;
use comparison::StudyReport;

/// A format `run` and `compare` export to: the CLI makes one `--export-<format>` flag of each
/// and writes the file with the renderer for what the command made; `report --format` takes
/// each that renders a comparison.
#[derive(Debug)]
pub struct Exporter {
    /// The flag, `--export-<format>`.
    pub flag: &'static str,
    /// A shorter name of the flag (`--json`), if it has one.
    pub alias: Option<&'static str>,
    /// The flag's help.
    pub help: &'static str,
    /// Renders a run record; `None`: `run` does not offer this format.
    pub run: Option<fn(&RunRecord) -> String>,
    /// Renders a comparison; `None`: `compare` and `report` do not offer this format.
    pub comparison: Option<fn(&StudyReport) -> String>,
    /// The text links images rather than holding them (Markdown): `report --out FILE` writes
    /// the comparison's charts as SVG files beside FILE and links them.
    pub links_charts: bool,
}

impl Exporter {
    /// The format's name, as `report --format` takes it: the `<format>` of its flag (`json`).
    pub fn format(&self) -> &'static str {
        self.flag.trim_start_matches("--export-")
    }
}

/// Every export format, in the order `--help` lists them: adding a format is its file and a
/// line here.
pub const EXPORTERS: &[Exporter] = &[
    Exporter {
        flag: "--export-json",
        alias: Some("json"),
        help: "Export as JSON: a run's full record, or the comparison (\"-\" for stdout)",
        run: Some(json::render),
        comparison: Some(comparison::text::render_json),
        links_charts: false,
    },
    Exporter {
        flag: "--export-markdown",
        alias: None,
        help: "Export as Markdown: a run's summary table, or the comparison table",
        run: Some(terminal::render_markdown),
        comparison: Some(comparison::text::render_markdown),
        links_charts: true,
    },
    Exporter {
        flag: "--export-csv",
        alias: None,
        help: "Export as CSV: a run's headline figures in one row (a ramp's points, one row \
               each), or the comparison (a row per cell and figure)",
        run: Some(ramp::run_csv),
        comparison: Some(comparison::text::render_csv),
        links_charts: false,
    },
    Exporter {
        flag: "--export-html",
        alias: None,
        help: "Export as one self-contained HTML page with charts: a run's summary, time \
               series, latency percentiles and provenance, or the comparison table, findings \
               and charts",
        run: Some(html::render_run),
        comparison: Some(html::render_study),
        links_charts: false,
    },
    Exporter {
        flag: "--export-timeseries",
        alias: Some("timeseries"),
        help: "Export the per-second samples as CSV (\"-\" for stdout)",
        run: Some(|r| csv::render_timeseries(&r.samples)),
        comparison: None,
        links_charts: false,
    },
];

#[cfg(test)]
mod tests {
    use super::EXPORTERS;

    #[test]
    fn every_exporter_has_its_own_format_name() {
        let names: Vec<&str> = EXPORTERS.iter().map(|e| e.format()).collect();
        for (e, name) in EXPORTERS.iter().zip(&names) {
            assert_eq!(
                e.flag,
                format!("--export-{name}"),
                "a flag is --export-<format>"
            );
            assert_eq!(
                names.iter().filter(|n| *n == name).count(),
                1,
                "{name} twice"
            );
        }
    }
}
