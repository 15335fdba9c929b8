//! The HTML report: one self-contained file (inline CSS and SVG charts, nothing fetched, no
//! script needed to read it), for a comparison ([`render_study`]) or a run ([`render_run`]).
//! A few lines of script sort the comparison table by a column and open every collapsed
//! section before printing; the print style does the same without them where it can.

mod phases;
mod run;
mod study;

use crate::charts::{svg, Chart};
use bakeoff_core::verdict::Verdict;
use maud::{html, Markup, PreEscaped, DOCTYPE};

pub use run::render_run;
pub use study::render_study;

/// The page's style: readable on screen, charts scaled to the width, and for print every
/// section open and every chart kept on one page.
const CSS: &str = r#"
:root { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; color: #222; }
body { max-width: 1180px; margin: 1.5rem auto; padding: 0 1rem; line-height: 1.45; }
h1 { font-size: 1.5rem; margin-bottom: .2rem; }
h2 { font-size: 1.2rem; margin-top: 2rem; border-bottom: 1px solid #bbb; }
h3 { font-size: 1rem; }
.meta { color: #555; font-size: .9rem; }
.wide { overflow-x: auto; }
table { border-collapse: collapse; font-size: .85rem; margin: .5rem 0; }
th, td { border: 1px solid #ccc; padding: .2rem .45rem; text-align: left; vertical-align: top; }
th { background: #f3f3f3; }
td.num { text-align: right; white-space: nowrap; font-variant-numeric: tabular-nums; }
td.num .range { color: #555; font-size: .8rem; }
.answer { font-size: 1.1rem; font-weight: 600; margin: .6rem 0; }
pre.summary { white-space: pre-wrap; overflow-wrap: anywhere; }
table.sortable th { cursor: pointer; }
.better { background: #cfe9d9; }
.worse { background: #f6cdb8; }
.same { background: #e8e8e8; }
.few { background: #fbefc0; }
.legend span { display: inline-block; padding: 0 .4rem; margin: 0 .4rem .3rem 0; border: 1px solid #bbb; }
.warning { border-left: 4px solid #d55e00; padding-left: .5rem; }
.info { border-left: 4px solid #0072b2; padding-left: .5rem; }
.error { color: #a33; font-weight: 600; }
.charts { display: grid; grid-template-columns: repeat(auto-fill, minmax(540px, 1fr)); gap: 0 1.5rem; }
figure.chart { margin: 1rem 0; break-inside: avoid; page-break-inside: avoid; }
figure.chart svg { max-width: 100%; height: auto; display: block; }
figcaption { font-size: .85rem; color: #444; max-width: 760px; }
pre { overflow-x: auto; font-size: .8rem; background: #f6f6f6; padding: .5rem; }
details { margin: .4rem 0; }
summary { cursor: pointer; font-weight: 600; }
code { font-size: .85em; }
@media print {
  body { max-width: none; margin: 0; font-size: 10pt; }
  details::details-content { content-visibility: visible; display: contents; }
  summary { list-style: none; }
  pre { white-space: pre-wrap; background: none; border: 1px solid #ccc; }
  h2 { break-after: avoid; }
  .noprint { display: none; }
  .charts { display: block; }
}
"#;

/// Sorting by a table heading, and every `<details>` opened before printing.
const SCRIPT: &str = r#"
document.querySelectorAll("table.sortable th").forEach((th, i) => th.addEventListener("click", () => {
  const body = th.closest("table").tBodies[0];
  const key = row => {
    const cell = row.cells[i];
    const v = cell && cell.dataset.sort;
    return v === undefined ? (cell ? cell.textContent : "") : parseFloat(v);
  };
  const up = th.dataset.dir !== "up";
  th.dataset.dir = up ? "up" : "down";
  [...body.rows].sort((a, b) => {
    const x = key(a), y = key(b);
    const c = typeof x === "number" && typeof y === "number" ? x - y : String(x).localeCompare(String(y));
    return up ? c : -c;
  }).forEach(row => body.appendChild(row));
}));
window.addEventListener("beforeprint", () => document.querySelectorAll("details").forEach(d => d.open = true));
"#;

/// The class of a verdict's colour (the stylesheet's `.better`, `.worse`, ...).
fn verdict_class(v: Verdict) -> &'static str {
    match v {
        Verdict::Better => "better",
        Verdict::Worse => "worse",
        Verdict::NoSignificantDifference => "same",
        Verdict::TooFewSamples => "few",
        Verdict::Equivalent => "same",
    }
}

/// A whole page around `body`.
fn page(title: &str, body: Markup) -> String {
    let doc = html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                meta name="generator" content=(concat!("bakeoff ", env!("CARGO_PKG_VERSION")));
                title { (title) }
                style { (PreEscaped(CSS)) }
            }
            body {
                (body)
                script { (PreEscaped(SCRIPT)) }
            }
        }
    };
    doc.into_string()
}

/// A chart as a figure: the SVG, its caption, and its data as text under a collapsed section.
fn figure(chart: &Chart) -> Markup {
    let drawn = svg::render(chart);
    html! {
        figure.chart id=(format!("chart-{}", chart.id)) {
            @match &drawn {
                Ok(svg) => (PreEscaped(svg)),
                Err(e) => p.error { (e) },
            }
            figcaption {
                (chart.caption)
                details.noprint {
                    summary { "data" }
                    pre { (chart.to_string()) }
                }
            }
        }
    }
}

/// Every chart of a report, under a heading.
fn charts_section(charts: &[Chart]) -> Markup {
    html! {
        @if !charts.is_empty() {
            h2 #charts { "Charts" }
            div.charts {
                @for c in charts {
                    (figure(c))
                }
            }
        }
    }
}

/// A two-column table of names and values.
fn pairs<'a>(rows: impl IntoIterator<Item = (&'a str, String)>) -> Markup {
    html! {
        table {
            tbody {
                @for (name, value) in rows {
                    tr { th { (name) } td { (value) } }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The tags that would make a browser fetch something: none may appear.
    pub(crate) fn assert_self_contained(html: &str) {
        for needle in [
            "src=", "href=", "url(", "@import", "<link", "<iframe", "<img",
        ] {
            assert!(!html.contains(needle), "the page contains {needle}");
        }
        // The only URL is the SVG namespace, which names and fetches nothing.
        let urls = html.matches("http").count();
        let namespaces = html.matches("xmlns=\"http://www.w3.org/2000/svg\"").count();
        assert_eq!(urls, namespaces, "a URL other than the SVG namespace");
    }

    #[test]
    fn a_figure_is_the_svg_its_caption_and_escaped_text() {
        let mut chart = crate::charts::run::charts(&crate::fixture::record()).remove(0);
        let ok = figure(&chart).into_string();
        assert!(ok.contains("<svg") && ok.contains(&chart.caption));
        // A label with markup stays text.
        chart.title = "<b>x</b> & y".into();
        let escaped = figure(&chart).into_string();
        assert!(!escaped.contains("<b>x</b>"), "{escaped:.300}");
    }
}
