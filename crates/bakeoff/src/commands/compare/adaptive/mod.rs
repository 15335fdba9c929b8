//! `compare --until decided` and `--search best|pareto`: rounds (every cell's repetition N,
//! interleaved) that run only the cells whose answer is still open, looking after each one
//! (`bakeoff_core::verdict::sequential` and `race`), until the answer is known, `--max-repeat`
//! or `--budget`. `DIR/adaptive.json` says what was decided when, on what evidence.

use super::run_path;
use super::runs::StudyRun;
use crate::cli::{AdaptiveOpts, Search, Until};
use crate::exit::{failure, Code, Failure};
use bakeoff_core::record::RunRecord;
use bakeoff_core::study::adaptive::{AdaptiveCell, Goal, Stop};
use bakeoff_core::study::RunSlot;
use bakeoff_core::verdict::race::RaceMethod;
use bakeoff_core::verdict::sequential::SequentialMethod;
use bakeoff_core::verdict::Better;
use bakeoff_report::figures::{figure, Compare, Figure};
mod look;

/// Where `compare` keeps an adaptive study's decisions.
pub const ADAPTIVE_FILE: &str = "adaptive.json";

/// The figures `--figures` names, checked: known, with a direction, one (two for pareto).
pub fn check_figures(opts: &AdaptiveOpts) -> Result<Option<Vec<&'static Figure>>, Failure> {
    let usage = |m: String| failure(Code::Usage, m);
    let pareto = opts.search == Some(Search::Pareto);
    let Some(text) = &opts.figures else {
        return match pareto {
            true => Err(usage(
                "--search pareto: name the two figures to race on with --figures \
                 (e.g. --figures tps,device_write_bytes_per_txn)"
                    .into(),
            )),
            false => Ok(None),
        };
    };
    if !opts.on() {
        return Err(usage(
            "--figures chooses what --until decided or --search decides on: give one of them"
                .into(),
        ));
    }
    let keys: Vec<&str> = text.split(',').map(str::trim).collect();
    let wanted = if pareto { 2 } else { 1 };
    if keys.len() != wanted {
        return Err(usage(format!(
            "--figures {text}: {} takes {wanted} figure(s)",
            if pareto {
                "--search pareto"
            } else {
                "--until decided and --search best"
            }
        )));
    }
    keys.iter()
        .map(|k| match figure(k) {
            Some(f) if matches!(f.compare, Compare::Verdict(_)) => Ok(f),
            Some(_) => Err(usage(format!(
                "--figures: {k} is a diagnostic figure (neither more nor less is better): \
                 choose a result or a cost, such as tps, read_iops or cpu_us_per_op"
            ))),
            None => Err(usage(format!(
                "--figures: unknown figure '{k}' (known: {})",
                bakeoff_report::figures::keys().join(", ")
            ))),
        })
        .collect::<Result<_, _>>()
        .map(Some)
}

/// What a dry run says an adaptive study may add to the planned rounds.
pub fn dry_run_line(opts: &AdaptiveOpts, plan: &bakeoff_core::study::StudyPlan) -> Option<String> {
    let (cells, min, max) = (plan.cells.len(), plan.study.repeat, opts.max_repeat);
    let what = match (opts.until, opts.search) {
        (Some(Until::Decided), _) => format!(
            "--until decided: after the {min} planned rounds, rounds of the cells still undecided (and their baselines), up to {max}"
        ),
        (_, Some(_)) => format!(
            "--search: a race looking after every round, dropping the cells shown worse; up to {max} rounds"
        ),
        _ => return None,
    };
    let budget = opts.budget.map_or(String::new(), |b| {
        format!(", within --budget {:.0} min", b.as_secs_f64() / 60.0)
    });
    Some(format!(
        "{what}: at most {} runs{budget}",
        cells * max as usize
    ))
}

/// The headline figure of runs like `r`: transactions per second for a database, the replay's
/// time for a replay, read or else write IOPS for I/O.
fn headline(r: &RunRecord) -> &'static Figure {
    let key = if r.summary.tps.is_some() {
        "tps"
    } else if r.replay.is_some() {
        "replay_s"
    } else if r.summary.read_iops.is_some_and(|x| x > 0.0) {
        "read_iops"
    } else {
        "write_iops"
    };
    figure(key).expect("headline figures are known")
}

fn better(f: &Figure) -> Better {
    match f.compare {
        Compare::Verdict(b) => b,
        Compare::Diagnostic => Better::Higher,
    }
}

/// The completed, undisturbed runs of every cell, repetitions 1 to `rounds`.
fn results(study: &StudyRun, rounds: u32) -> Vec<Vec<RunRecord>> {
    (study.plan.cells.iter())
        .map(|cell| {
            (1..=rounds)
                .filter_map(|rep| {
                    let text = std::fs::read_to_string(run_path(study.out, &cell.id, rep)).ok()?;
                    let mut r: RunRecord = serde_json::from_str(&text).ok()?;
                    r.fill_summary();
                    r.disturbed.is_none().then_some(r)
                })
                .collect()
        })
        .collect()
}

fn values(runs: &[RunRecord], f: &Figure) -> Vec<f64> {
    runs.iter().filter_map(|r| (f.get)(&r.summary)).collect()
}

/// Runs the study adaptively. The planned rounds (`--repeat`) come first, for every cell
/// under `--until decided`; a race looks from the first round on.
pub fn run(study: &mut StudyRun) -> Result<(), Failure> {
    let opts = &study.args.adaptive;
    let cells = study.plan.cells.len();
    let (min, max) = (study.plan.study.repeat, opts.max_repeat);
    let mut state = State::new(study, check_figures(opts)?);
    for round in 1..=max {
        let slots = state.slots(study, round, round <= min);
        if slots.is_empty() {
            state.stop = Stop::Decided;
            break;
        }
        if round > 1 && !study.fits_budget(&slots) {
            eprintln!(
                "bakeoff: --budget: stopping before round {round}: it would end after {}",
                super::eta::describe_left(study.round_secs(&slots))
            );
            state.stop = Stop::Budget;
            break;
        }
        if round > min {
            study.plan_more(&slots);
        }
        let refs: Vec<&RunSlot> = slots.iter().collect();
        study.run_round(&refs)?;
        if study.interrupted() {
            state.stop = Stop::Interrupted;
            break;
        }
        state.look(study, round as usize);
        state.stop = match (state.open.iter().any(|o| *o), round == max) {
            (false, _) => Stop::Decided,
            (true, true) => Stop::MaxRepeat,
            (true, false) => Stop::Running,
        };
        state.save(study, cells, max)?;
    }
    state.save(study, cells, max)?;
    state.say();
    Ok(())
}

/// An adaptive study's decisions so far.
struct State {
    goal: Goal,
    figures: Option<Vec<&'static Figure>>,
    sequential: SequentialMethod,
    race: RaceMethod,
    allow_risk: bool,
    /// Per cell: what was decided, and when.
    cells: Vec<AdaptiveCell>,
    /// Per cell: still needs rounds.
    open: Vec<bool>,
    /// `--search best`: the answer after the last look.
    result: Option<bakeoff_core::verdict::race::RaceResult>,
    /// `--search pareto`: the front after the last look.
    front: Vec<usize>,
    stop: Stop,
    rounds: usize,
}

impl State {
    fn new(study: &StudyRun, figures: Option<Vec<&'static Figure>>) -> State {
        let opts = &study.args.adaptive;
        let goal = match (opts.until, opts.search) {
            (Some(Until::Decided), _) => Goal::UntilDecided,
            (_, Some(Search::Pareto)) => Goal::SearchPareto,
            _ => Goal::SearchBest,
        };
        let sequential = SequentialMethod {
            min_effect: study.plan.study.min_effect,
            min_rounds: study.plan.study.repeat.max(2) as usize,
            max_rounds: opts.max_repeat as usize,
            ..SequentialMethod::default()
        };
        let race = RaceMethod {
            sequential: SequentialMethod {
                min_rounds: 1,
                ..sequential
            },
            ..RaceMethod::default()
        };
        State {
            goal,
            figures,
            sequential,
            race,
            allow_risk: opts.allow_risk,
            cells: (study.plan.cells.iter())
                .map(|c| AdaptiveCell {
                    label: c.label.clone(),
                    runs: 0,
                    comparison: None,
                    finished_after: None,
                    dropped: None,
                    risky: false,
                })
                .collect(),
            open: vec![true; study.plan.cells.len()],
            result: None,
            front: Vec::new(),
            stop: Stop::Running,
            rounds: 0,
        }
    }

    /// Round `round`'s runs: every cell in a planned round of `--until decided`, else the
    /// open cells (and, for `--until decided`, their baselines).
    fn slots(&self, study: &StudyRun, round: u32, planned: bool) -> Vec<RunSlot> {
        let plan = study.plan;
        let mut run = self.open.clone();
        if self.goal == Goal::UntilDecided {
            if planned {
                run = vec![true; run.len()];
            }
            for (i, open) in self.open.iter().enumerate() {
                if let Some(b) = plan.baseline_of[i].filter(|_| *open) {
                    run[b] = true;
                }
            }
        }
        // In the plan's interleaved order of cells.
        let order = (plan.order.iter()).filter(|s| s.rep == 1).map(|s| s.cell);
        order
            .filter(|&c| run[c])
            .map(|cell| RunSlot { cell, rep: round })
            .collect()
    }

    /// The figures, chosen on the first round's records if `--figures` did not name them.
    fn figures(&mut self, runs: &[Vec<RunRecord>]) -> Vec<&'static Figure> {
        if self.figures.is_none() {
            let first = runs.iter().flatten().next();
            self.figures = first.map(|r| vec![headline(r)]);
        }
        self.figures.clone().unwrap_or_default()
    }
}
