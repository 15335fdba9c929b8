//! Where `bakeoff report --out` writes: one file in the chosen format, a Markdown file with
//! its charts as SVG files beside it, or a directory of SVG charts. Checked before any
//! results are read; every file is written atomically.

use super::render;
use crate::cli::{Format, ReportOpts};
use crate::commands::exports::directory_of;
use crate::commands::exports::write_atomically;
use crate::exit::{clip, failure, Code, Failure};
use bakeoff_report::charts::{study::charts, svg, Chart};
use bakeoff_report::comparison::StudyReport;
use std::path::{Path, PathBuf};

/// What `--out` names.
#[derive(Debug)]
pub enum Out {
    /// One file: the table, CSV, JSON or HTML.
    File(PathBuf),
    /// A Markdown file, and its charts as SVG files beside it.
    Markdown(PathBuf),
    /// A directory for one SVG file per chart.
    Charts(PathBuf),
}

impl Out {
    /// Checks `--out` for `format`: a directory for SVG, else a file in an existing directory.
    pub fn check(out: Option<&Path>, format: Format) -> Result<Option<Out>, Failure> {
        let Some(path) = out else {
            return Ok(None);
        };
        let shown = clip(&path.display().to_string());
        if matches!(format, Format::Svg) {
            if path.exists() && !path.is_dir() {
                return Err(failure(
                    Code::Usage,
                    format!("--out {shown} is a file: --format svg writes a directory of charts"),
                ));
            }
            return Ok(Some(Out::Charts(path.to_path_buf())));
        }
        if path.is_dir() {
            return Err(failure(
                Code::Usage,
                format!(
                    "--out {shown} is a directory: give a file name (a directory is for \
                     --format svg)"
                ),
            ));
        }
        let dir = directory_of(path);
        if !dir.is_dir() {
            // As for the exports: an output path that cannot be created is a usage error.
            return Err(failure(
                Code::Usage,
                format!(
                    "cannot write --out {shown}: there is no directory {}",
                    clip(&dir.display().to_string())
                ),
            ));
        }
        Ok(Some(match format {
            Format::Export { exporter, .. } if exporter.links_charts => {
                Out::Markdown(path.to_path_buf())
            }
            _ => Out::File(path.to_path_buf()),
        }))
    }

    /// Writes the report in the format `opts` give, with the charts the format takes.
    pub fn write(self, report: &StudyReport, opts: &ReportOpts) -> Result<(), Failure> {
        match self {
            Out::File(path) => write_atomically(&path, &render(report, opts)?),
            Out::Markdown(path) => {
                let text = render(report, opts)?;
                let stem = path.file_stem().unwrap_or_default().to_string_lossy();
                let mut md = format!("{text}\n## Charts\n");
                for c in charts(report) {
                    let name = format!("{stem}-{}.svg", c.id);
                    write_chart(&directory_of(&path).join(&name), &c)?;
                    let link = name.replace(' ', "%20");
                    md.push_str(&format!("\n![{}]({link})\n\n{}\n", c.title, c.caption));
                }
                write_atomically(&path, &md)
            }
            Out::Charts(dir) => {
                std::fs::create_dir_all(&dir).map_err(|e| {
                    let shown = clip(&dir.display().to_string());
                    failure(Code::Usage, format!("cannot make --out {shown}: {e}"))
                })?;
                let charts = charts(report);
                for c in &charts {
                    write_chart(&dir.join(format!("{}.svg", c.id)), c)?;
                }
                eprintln!("wrote {} charts into {}", charts.len(), dir.display());
                Ok(())
            }
        }
    }
}

fn write_chart(path: &Path, chart: &Chart) -> Result<(), Failure> {
    let svg = svg::render(chart).map_err(|e| failure(Code::Io, e))?;
    write_atomically(path, &svg)
}
