//! The text of one figure cell, as every table of a comparison shows it (terminal, Markdown,
//! HTML, charts' notes), and its row of the comparison CSV. Each figure shows the median, the
//! range over repetitions, and against the baseline the ratio and the verdict:
//! `48,902 [47,1k–50,2k] ×0.50 worse`.

use super::cells::FigureCell;
use crate::figures::Figure;
use bakeoff_core::verdict::Verdict;
use std::fmt::Write;

fn number(v: f64, decimals: usize) -> String {
    if decimals == 0 {
        crate::fmt::group(v.round().max(0.0) as u64)
    } else {
        format!("{v:.decimals$}")
    }
}

pub(crate) fn verdict_word(v: Verdict) -> &'static str {
    match v {
        Verdict::Better => "better",
        Verdict::Worse => "worse",
        Verdict::NoSignificantDifference => "same",
        Verdict::TooFewSamples => "too few runs",
        Verdict::Equivalent => "equivalent",
    }
}

/// The compact mark used in tables: + better, - worse, = no significant difference, ? too few.
pub(crate) fn verdict_mark(v: Verdict) -> &'static str {
    match v {
        Verdict::Better => "+",
        Verdict::Worse => "-",
        Verdict::NoSignificantDifference => "=",
        Verdict::TooFewSamples => "?",
        Verdict::Equivalent => "≈",
    }
}

/// The text of one figure cell: `median [min–max]` and, against the baseline, `×ratio` with the
/// verdict mark (diagnostic figures: no mark), or `+difference` for percentages and figures that
/// are (near) zero on a side.
pub(crate) fn cell_text(f: &FigureCell, def: Option<&Figure>, with_range: bool) -> String {
    let decimals = def.map_or(1, |d| d.decimals);
    let micros = def.is_some_and(|d| d.micros);
    let value = |v: f64| match micros {
        true => crate::fmt::micros(Some(v)),
        false => number(v, decimals),
    };
    let Some(m) = f.median else { return "-".into() };
    let mut s = value(m);
    if with_range {
        if let (Some(a), Some(b)) = (f.min, f.max) {
            if a != b {
                let _ = write!(s, " [{}–{}]", value(a), value(b));
            }
        }
    }
    let mark = f
        .vs_baseline
        .as_ref()
        .map_or("", |c| verdict_mark(c.verdict));
    if let Some(r) = f.ratio.filter(|r| r.is_finite()) {
        let _ = write!(s, " ×{r:.2}{mark}");
    } else if let Some(d) = f.difference.filter(|d| d.is_finite()) {
        let unit = if def.is_some_and(|d| d.percent) {
            " pt"
        } else {
            ""
        };
        let sign = if d < 0.0 { "−" } else { "+" };
        let magnitude = match micros {
            true => crate::fmt::micros(Some(d.abs())),
            false => signed(d.abs(), decimals.max(1)),
        };
        let _ = write!(s, " {sign}{magnitude}{unit}");
    }
    s
}

fn signed(v: f64, decimals: usize) -> String {
    format!("{v:.decimals$}")
}

/// The heading of the comparison CSV.
pub(crate) const CSV_HEAD: &str =
    "cell,stack,runs,baseline,figure,median,min,max,ratio,difference,ci_low,ci_high,p_value,verdict\n";

/// One row of the comparison CSV: a figure of a cell, base units, empty where it does not apply.
pub(crate) fn csv_row(
    (label, stack, runs, is_baseline): (&str, &str, usize, bool),
    key: &str,
    f: &FigureCell,
) -> String {
    let (opt, quote) = (crate::fmt::csv_number, crate::fmt::csv_text);
    let c = f.vs_baseline.as_ref();
    format!(
        "{},{},{runs},{is_baseline},{key},{},{},{},{},{},{},{},{},{}\n",
        quote(label),
        quote(stack),
        opt(f.median),
        opt(f.min),
        opt(f.max),
        opt(f.ratio),
        opt(f.difference),
        opt(c.map(|c| c.ci_low)),
        opt(c.map(|c| c.ci_high)),
        opt(c.and_then(|c| c.p_value)),
        c.map_or("", |c| verdict_word(c.verdict)),
    )
}
