//! An adaptive study's answer in words (`compare --until decided`, `--search`): each cell's
//! decision and when it was made, or what the race dropped when and on what evidence, and the
//! runs it took against the fixed design's.

use super::study::StudyReport;
use bakeoff_core::study::adaptive::{any_undecided, AdaptiveRecord, Goal, Stop};
use bakeoff_core::verdict::race::{Bound, RaceStatus};
use bakeoff_core::verdict::sequential::{Decision, SequentialComparison};
use bakeoff_core::verdict::Verdict;

/// "×0.61 [0.55, 0.68]".
fn ratio(r: f64, low: f64, high: f64) -> String {
    if low.is_finite() && high.is_finite() {
        format!("×{r:.2} [{low:.2}, {high:.2}]")
    } else {
        format!("×{r:.2}")
    }
}

fn bound(b: &Bound) -> String {
    ratio(b.ratio, b.low, b.high)
}

fn decision(c: &SequentialComparison) -> String {
    let word = match (c.decision, c.futile) {
        (Decision::Better, _) => "better",
        (Decision::Worse, _) => "worse",
        (Decision::Equivalent, _) => "equivalent (within the minimum effect)",
        (Decision::Undecided, true) => "undecided, and out of reach by the last round",
        (Decision::Undecided, false) => "undecided",
    };
    format!("{word} {}", ratio(c.ratio, c.low, c.high))
}

/// The section's lines: a headline, then one line per cell.
pub fn lines(a: &AdaptiveRecord) -> Vec<String> {
    let figures = a.figures.join(" and ");
    let stop = match a.stop {
        Stop::Decided if any_undecided(&a.cells) => "stopped: every cell decided or out of reach",
        Stop::Decided => "answered",
        Stop::MaxRepeat => "stopped at --max-repeat",
        Stop::Budget => "stopped by --budget",
        Stop::Interrupted => "interrupted",
        Stop::Running => "still running",
    };
    let saved = match a.fixed_runs {
        0 => String::new(),
        f => format!(
            "; {} runs against {f} for every cell at --max-repeat ({:.0}% fewer)",
            a.runs,
            100.0 * (1.0 - a.runs as f64 / f as f64)
        ),
    };
    let mut out = vec![match a.goal {
        Goal::UntilDecided => format!(
            "--until decided on {figures}: {stop} after {} round(s){saved}",
            a.rounds
        ),
        Goal::SearchBest | Goal::SearchPareto => format!(
            "--search on {figures}: {stop} after {} round(s){saved}",
            a.rounds
        ),
    }];
    for c in &a.cells {
        let risky = if c.risky {
            " (lost acknowledged writes in crash states: cannot win)"
        } else {
            ""
        };
        let line = match (&c.comparison, &c.dropped) {
            (Some(cmp), _) => {
                let when = c
                    .finished_after
                    .map_or(String::new(), |r| format!(", after round {r}"));
                format!("{}: {}{when} ({} runs)", c.label, decision(cmp), c.runs)
            }
            (None, Some(d)) => {
                let against = (a.cells.get(d.against)).map_or("?", |x| x.label.as_str());
                let evidence: Vec<String> = d.bounds.iter().map(bound).collect();
                format!(
                    "{}: dropped after round {} against {against}: {} ({} runs)",
                    c.label,
                    d.round,
                    evidence.join(" and "),
                    c.runs
                )
            }
            (None, None) if a.goal == Goal::UntilDecided => {
                format!("{}: a baseline ({} runs)", c.label, c.runs)
            }
            (None, None) => format!("{}: still in the race ({} runs)", c.label, c.runs),
        };
        out.push(format!("  {line}{risky}"));
    }
    if let Some(r) = &a.result {
        out.push(race_answer(a, r));
    }
    if a.goal == Goal::SearchPareto {
        let front: Vec<&str> = (a.front.iter())
            .filter_map(|i| a.cells.get(*i).map(|c| c.label.as_str()))
            .collect();
        out.push(format!("front: {}", front.join("; ")));
    }
    out
}

fn race_answer(a: &AdaptiveRecord, r: &bakeoff_core::verdict::race::RaceResult) -> String {
    let label = |i: Option<usize>| i.and_then(|i| a.cells.get(i)).map_or("?", |c| &c.label);
    let vs = r.vs_runner_up.as_ref().map_or(String::new(), |b| {
        format!(" ({} against {})", bound(b), label(r.runner_up))
    });
    match r.status {
        RaceStatus::Won => format!("best: {}{vs}", label(r.best)),
        RaceStatus::Equivalent => format!(
            "best: {}, equivalent within the minimum effect to the cells still in the race{vs}",
            label(r.best)
        ),
        RaceStatus::Open => format!(
            "best so far: {}, not separated from {} other cell(s){vs}",
            label(r.best),
            r.not_separated.len()
        ),
        RaceStatus::NoEligible => {
            "no cell can win: every one left lost acknowledged writes (--allow-risk lets them)"
                .into()
        }
    }
}

/// Puts `--until decided`'s decisions in the table: the decided figure's verdict of each cell
/// is the sequential rule's (better, worse, equivalent "≈", or "?" when its runs could not
/// decide), with that rule's ratio of geometric means and interval, since the fixed rule's
/// error rate does not hold for runs whose number the data chose. A note says so.
pub fn apply(r: &mut StudyReport) {
    let Some(a) = r.adaptive.as_ref().filter(|a| a.goal == Goal::UntilDecided) else {
        return;
    };
    let Some(key) = a.figures.first() else {
        return;
    };
    let Some(col) = r.columns.iter().position(|c| c == key) else {
        return;
    };
    let mut applied = 0;
    for row in r.rows.iter_mut() {
        let decided = (a.cells.iter())
            .find(|c| c.label == row.label)
            .and_then(|c| c.comparison.as_ref());
        let (Some(d), Some(cmp)) = (decided, row.figures[col].vs_baseline.as_mut()) else {
            continue;
        };
        cmp.verdict = match d.decision {
            Decision::Better => Verdict::Better,
            Decision::Worse => Verdict::Worse,
            Decision::Equivalent => Verdict::Equivalent,
            Decision::Undecided => Verdict::TooFewSamples,
        };
        (cmp.ratio, cmp.ci_low, cmp.ci_high) = (d.ratio, d.low, d.high);
        (cmp.n_cell, cmp.n_baseline) = (d.n_cell, d.n_baseline);
        applied += 1;
    }
    if applied > 0 {
        r.notes.push(format!(
            "the verdicts of {key} are --until decided's (≈: equivalent within the minimum \
             effect; ?: undecided when the study stopped), with their ratio of geometric means \
             and interval (docs/verdicts.md, \"Deciding sooner\")"
        ));
    }
}
