//! The answer a comparison opens with: which cell did best on the headline figure (the first
//! column that has a verdict: throughput by default) and by how much against its baseline, or
//! that no cell differs significantly from it.

use super::cell_text::cell_text;
use super::study::{CellRow, StudyReport};
use crate::figures::{figure, Compare, Figure};
use bakeoff_core::verdict::{Better, Verdict};

/// One sentence, or `None` when there is nothing to compare (no figure with a verdict, or no
/// cell beside a baseline).
pub fn answer(r: &StudyReport) -> Option<String> {
    let (i, f) = (r.columns.iter().enumerate())
        .filter_map(|(i, k)| Some((i, figure(k)?)))
        .find(|(i, f)| {
            matches!(f.compare, Compare::Verdict(_))
                && r.rows
                    .iter()
                    .any(|row| row.figures[*i].vs_baseline.is_some())
        })?;
    let Compare::Verdict(better) = f.compare else {
        return None;
    };
    let base = r.rows.iter().find(|row| row.is_baseline)?;
    let median = |row: &CellRow| row.figures[i].median;
    let best = (r.rows.iter())
        .filter(|row| median(row).is_some())
        .max_by(|a, b| {
            let (x, y) = (median(a).unwrap_or(0.0), median(b).unwrap_or(0.0));
            match better {
                Better::Higher => x.total_cmp(&y),
                Better::Lower => y.total_cmp(&x),
            }
        })?;
    let word = match better {
        Better::Higher => "highest",
        Better::Lower => "lowest",
    };
    let value = |row: &CellRow| cell_text(&row.figures[i], Some(f), false);
    let plain = |row: &CellRow| {
        let mut c = row.figures[i].clone();
        (c.ratio, c.difference) = (None, None);
        cell_text(&c, Some(f), false)
    };
    let verdicts: Vec<Verdict> = (r.rows.iter())
        .filter_map(|row| row.figures[i].vs_baseline.as_ref().map(|c| c.verdict))
        .collect();
    if best.is_baseline {
        return Some(baseline_best(f, base, &verdicts, word, plain(base)));
    }
    let verdict = best.figures[i].vs_baseline.as_ref().map(|c| c.verdict);
    Some(match verdict {
        Some(Verdict::Better) => format!(
            "{} has the {word} {}: {}, against {} on the baseline {}.",
            best.label,
            f.label,
            value(best),
            plain(base),
            base.label
        ),
        Some(Verdict::TooFewSamples) => format!(
            "{} has the {word} {} ({}, against {} on the baseline {}), but there are too few \
             repetitions to tell it from noise.",
            best.label,
            f.label,
            value(best),
            plain(base),
            base.label
        ),
        _ => format!(
            "No significant difference in {}: the {word}, {} ({}), is within the noise of the \
             baseline {} ({}).",
            f.label,
            best.label,
            value(best),
            base.label,
            plain(base)
        ),
    })
}

/// The sentence when the baseline itself did best.
fn baseline_best(
    f: &Figure,
    base: &CellRow,
    verdicts: &[Verdict],
    word: &str,
    value: String,
) -> String {
    let worse = verdicts.iter().filter(|v| **v == Verdict::Worse).count();
    let few = (verdicts.iter())
        .filter(|v| **v == Verdict::TooFewSamples)
        .count();
    if worse == 0 && few > 0 {
        return format!(
            "The baseline {} has the {word} {} ({value}), but there are too few repetitions to \
             tell {few} of {} other cells from it.",
            base.label,
            f.label,
            verdicts.len()
        );
    }
    if worse == 0 {
        return format!(
            "No significant difference in {}: no cell does better or worse than the baseline \
             {} ({value}).",
            f.label, base.label
        );
    }
    format!(
        "The baseline {} has the {word} {} ({value}); {worse} of {} other cells are \
         significantly worse.",
        base.label,
        f.label,
        verdicts.len()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_answer_names_the_best_cell_and_by_how_much_or_no_difference() {
        // raw (baseline) 97,845 read IOPS; zfs worse (×0.50); ext4 the same.
        let r = crate::fixture::study(&["cpu_busy_pct", "read_iops"]);
        assert_eq!(
            answer(&r).unwrap(),
            "The baseline raw / slob has the highest read IOPS (97,845); 1 of 2 other cells \
             are significantly worse."
        );
        let mut cells = crate::fixture::THREE_STACKS.to_vec();
        cells[2].1 = [150_000.0, 151_000.0, 149_000.0];
        let r = crate::fixture::study_of(&cells, &["read_iops"]);
        assert_eq!(
            answer(&r).unwrap(),
            "ext4 / slob has the highest read IOPS: 150,000 ×1.53+, against 97,845 on the \
             baseline raw / slob."
        );
        let same = [
            crate::fixture::THREE_STACKS[0],
            crate::fixture::THREE_STACKS[2],
        ];
        let r = crate::fixture::study_of(&same, &["read_iops"]);
        assert!(
            answer(&r)
                .unwrap()
                .starts_with("No significant difference in read IOPS"),
            "{:?}",
            answer(&r)
        );
        assert_eq!(answer(&crate::fixture::study(&["cpu_busy_pct"])), None);
        // One run of a slower cell: the baseline is ahead, but nothing is told from noise.
        let mut one = crate::fixture::THREE_STACKS.to_vec();
        one[2].1 = [50_000.0, f64::NAN, f64::NAN];
        one[1].1 = [60_000.0, f64::NAN, f64::NAN];
        let r = crate::fixture::study_of(&one, &["read_iops"]);
        assert_eq!(
            answer(&r).unwrap(),
            "The baseline raw / slob has the highest read IOPS (97,845), but there are too few \
             repetitions to tell 2 of 2 other cells from it."
        );
    }
}
