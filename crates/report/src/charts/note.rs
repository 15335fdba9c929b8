//! What a bar of a comparison says against its baseline, beside it: the ratio with the
//! verdict, a difference, or that it is the baseline.

use super::compact;
use crate::comparison::cell_text::{verdict_mark, verdict_word};
use crate::comparison::FigureCell;
use crate::figures::Figure;

/// What a bar says against its baseline: `×0.50 − worse`, `+41.0 pt`, or `baseline`.
pub(crate) fn note(cell: &FigureCell, f: &Figure, is_baseline: bool) -> Option<String> {
    if is_baseline {
        return Some("baseline".into());
    }
    let verdict = cell.vs_baseline.as_ref().map(|c| c.verdict);
    let mark = verdict.map_or(String::new(), |v| {
        format!(" {} {}", verdict_mark(v), verdict_word(v))
    });
    if let Some(r) = cell.ratio.filter(|r| r.is_finite()) {
        return Some(format!("×{r:.2}{mark}"));
    }
    let d = cell.difference.filter(|d| d.is_finite())?;
    let unit = if f.percent { " pt" } else { "" };
    let sign = if d < 0.0 { "−" } else { "+" };
    Some(format!("{sign}{}{unit}", compact(d.abs())))
}
