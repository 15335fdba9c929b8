//! An adaptive study's look after each round: the decisions, `adaptive.json`, and what is
//! said on stderr at the end.

use super::{better, results, values, State, ADAPTIVE_FILE};
use crate::commands::compare::runs::StudyRun;
use crate::commands::exports::write_atomically;
use crate::exit::Failure;
use bakeoff_core::record::RunRecord;
use bakeoff_core::study::adaptive::{
    any_undecided, AdaptiveRecord, Goal, Stop, ADAPTIVE_SCHEMA_VERSION,
};
use bakeoff_core::verdict::race::{
    pareto_front, pareto_round, race_result, race_round, ParetoCell, RaceCell, RaceStatus,
};
use bakeoff_core::verdict::sequential::{decide, Decision};
use bakeoff_report::figures::Figure;

/// Whether a cell's crash states lost acknowledged writes.
fn risky(runs: &[RunRecord]) -> bool {
    runs.iter()
        .any(|r| r.summary.crash_lost_pct.is_some_and(|p| p > 0.0))
}

impl State {
    /// Looks after `round`: decides what it can and closes the cells that need no more rounds.
    pub(super) fn look(&mut self, study: &StudyRun, round: usize) {
        self.rounds = round;
        let runs = results(study, round as u32);
        for (cell, r) in self.cells.iter_mut().zip(&runs) {
            cell.runs = r.len();
            cell.risky = risky(r);
        }
        let figures = self.figures(&runs);
        let Some(&first) = figures.first() else {
            return;
        };
        match self.goal {
            Goal::UntilDecided => self.decide_each(study, &runs, first, round),
            Goal::SearchBest => self.race(&runs, first, round),
            Goal::SearchPareto => self.pareto(&runs, &figures, round),
        }
    }

    fn decide_each(&mut self, study: &StudyRun, runs: &[Vec<RunRecord>], f: &Figure, round: usize) {
        for i in 0..self.cells.len() {
            let Some(b) = study.plan.baseline_of[i].filter(|b| *b != i) else {
                // A baseline runs only while a cell compared with it needs it.
                self.open[i] = false;
                continue;
            };
            let c = decide(
                &values(&runs[i], f),
                &values(&runs[b], f),
                better(f),
                &self.sequential,
            );
            if self.open[i] && c.finished() {
                self.open[i] = false;
                self.cells[i].finished_after = Some(round);
            }
            if self.open[i] || self.cells[i].finished_after == Some(round) {
                self.cells[i].comparison = Some(c);
            }
        }
    }

    fn safe(&self, i: usize) -> bool {
        self.allow_risk || !self.cells[i].risky
    }

    fn race(&mut self, runs: &[Vec<RunRecord>], f: &Figure, round: usize) {
        let vals: Vec<Vec<f64>> = runs.iter().map(|r| values(r, f)).collect();
        let safe: Vec<bool> = (0..vals.len()).map(|i| self.safe(i)).collect();
        let cells = |open: &[bool]| -> Vec<RaceCell> {
            (0..vals.len())
                .map(|i| RaceCell {
                    values: &vals[i],
                    alive: open[i],
                    safe: safe[i],
                })
                .collect()
        };
        let dropped = race_round(&cells(&self.open), better(f), &self.race, round);
        let mut open = self.open.clone();
        for d in &dropped {
            open[d.cell] = false;
        }
        let result = race_result(&cells(&open), better(f), &self.race);
        for d in dropped {
            let i = d.cell;
            self.cells[i].dropped = Some(d);
        }
        self.open = open;
        if result.status != RaceStatus::Open {
            self.open.fill(false);
        }
        self.result = Some(result);
    }

    fn pareto(&mut self, runs: &[Vec<RunRecord>], figures: &[&'static Figure], round: usize) {
        let [f, g] = [figures[0], figures[figures.len() - 1]];
        let vals: Vec<[Vec<f64>; 2]> = (runs.iter())
            .map(|r| [values(r, f), values(r, g)])
            .collect();
        let safe: Vec<bool> = (0..vals.len()).map(|i| self.safe(i)).collect();
        let cells = |open: &[bool]| -> Vec<ParetoCell> {
            (0..vals.len())
                .map(|i| ParetoCell {
                    values: [&vals[i][0], &vals[i][1]],
                    alive: open[i],
                    safe: safe[i],
                })
                .collect()
        };
        let dropped = pareto_round(
            &cells(&self.open),
            [better(f), better(g)],
            &self.race,
            round,
        );
        for d in dropped {
            let i = d.cell;
            self.open[i] = false;
            self.cells[i].dropped = Some(d);
        }
        self.front = pareto_front(&cells(&self.open));
        if self.open.iter().filter(|o| **o).count() <= 1 {
            self.open.fill(false);
        }
    }

    /// Writes `adaptive.json` (atomically: a reader never sees half of it).
    pub(super) fn save(&self, study: &StudyRun, cells: usize, max: u32) -> Result<(), Failure> {
        let record = AdaptiveRecord {
            schema_version: ADAPTIVE_SCHEMA_VERSION,
            goal: self.goal,
            figures: (self.figures.iter().flatten())
                .map(|f| f.key.to_string())
                .collect(),
            sequential: (self.goal == Goal::UntilDecided).then_some(self.sequential),
            race: (self.goal != Goal::UntilDecided).then_some(self.race),
            rounds: self.rounds,
            stop: self.stop,
            runs: self.cells.iter().map(|c| c.runs).sum(),
            fixed_runs: cells * max as usize,
            cells: self.cells.clone(),
            result: self.result.clone(),
            front: self.front.clone(),
        };
        let text = serde_json::to_string_pretty(&record).expect("adaptive records serialise");
        write_atomically(&study.out.join(ADAPTIVE_FILE), &text)
    }

    /// Says on stderr how the study ended.
    pub(super) fn say(&self) {
        let runs: usize = self.cells.iter().map(|c| c.runs).sum();
        let why = match self.stop {
            Stop::Decided if any_undecided(&self.cells) => "the undecided ones out of reach",
            Stop::Decided => "answered",
            Stop::MaxRepeat => "--max-repeat reached",
            Stop::Budget => "--budget reached",
            Stop::Interrupted | Stop::Running => "stopped",
        };
        let what = match self.goal {
            Goal::UntilDecided => {
                let decided = (self.cells.iter())
                    .filter_map(|c| c.comparison.as_ref())
                    .filter(|c| c.decision != Decision::Undecided)
                    .count();
                let compared = self.cells.iter().filter(|c| c.comparison.is_some()).count();
                format!("{decided} of {compared} cells decided")
            }
            Goal::SearchBest => match self.result.as_ref().and_then(|r| r.best) {
                Some(b) => format!("best: {}", self.cells[b].label),
                None => "no cell can win".into(),
            },
            Goal::SearchPareto => format!("{} cells on the front", self.front.len()),
        };
        eprintln!(
            "bakeoff: {what} after {} round(s), {runs} runs ({why}); details in {ADAPTIVE_FILE} \
             and `bakeoff report`",
            self.rounds
        );
    }
}
