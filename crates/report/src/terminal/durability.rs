//! The terminal summary's lines of a run with crash states (`run --crash-states N`): how many
//! states each outcome had, the worst loss of acknowledged commits, the first problem of the
//! worst state, and what recording cost.

use crate::fmt::{duration, group};
use bakeoff_core::record::durability::{DurabilityRecord, OUTCOMES};
use bakeoff_core::record::RunRecord;
use bakeoff_core::units::format_bytes;
use std::fmt::Write;

/// The `risk` lines, or nothing for a run without crash states.
pub fn lines(r: &RunRecord) -> String {
    let Some(d) = &r.durability else {
        return String::new();
    };
    let counts: Vec<String> = OUTCOMES
        .iter()
        .rev()
        .filter(|o| d.count(o) > 0)
        .map(|o| format!("{} {}", group(d.count(o)), o.replace('_', " ")))
        .collect();
    let mut s = format!(
        "risk     {} of {} crash states checked (seed {}, torn writes at {}): {}\n",
        group(d.states_checked),
        group(d.states_asked),
        d.seed,
        format_bytes(d.sector_bytes),
        counts.join(", ")
    );
    let _ = writeln!(
        s,
        "         acknowledged {} {}; states losing any {}, the worst lost {}",
        d.acknowledged_unit.noun(),
        group(d.acknowledged),
        group(d.states_losing_commits()),
        group(d.worst_loss)
    );
    if let Some(worst) = worst(d) {
        let _ = writeln!(
            s,
            "         worst state #{} ({}): {}",
            worst.number,
            worst.outcome.replace('_', " "),
            worst.problems.first().map_or("", String::as_str)
        );
    }
    let c = &d.recording;
    let _ = writeln!(
        s,
        "         recorded {} writes ({}) and {} flushes, a {} log; checking took {}",
        group(c.writes),
        format_bytes(c.write_bytes),
        group(c.flushes),
        format_bytes(c.log_bytes),
        duration(c.checking_ns as f64)
    );
    s
}

/// The first state with the worst outcome found, unless every state was clean.
fn worst(d: &DurabilityRecord) -> Option<&bakeoff_core::record::durability::StateRecord> {
    let rank = |o: &str| {
        OUTCOMES
            .iter()
            .position(|x| *x == o)
            .unwrap_or(OUTCOMES.len())
    };
    let worst = d.states.iter().min_by_key(|s| rank(&s.outcome))?;
    (worst.outcome != "clean").then_some(worst)
}

#[cfg(test)]
mod tests {
    use super::*;
    use bakeoff_core::record::durability::StateRecord;

    fn state(number: u64, outcome: &str, lost: u64, problem: &str) -> StateRecord {
        StateRecord {
            number,
            kind: "subset".into(),
            outcome: outcome.into(),
            lost,
            expected: 40,
            problems: (!problem.is_empty())
                .then(|| problem.to_string())
                .into_iter()
                .collect(),
            ..StateRecord::default()
        }
    }

    #[test]
    fn the_lines_count_each_outcome_and_name_the_worst_state() {
        let mut r = crate::fixture::record();
        let states = vec![
            state(0, "clean", 0, ""),
            state(1, "lost_commits", 3, ""),
            state(
                2,
                "corrupt",
                1,
                "pg_checksums: 2 problem(s): checksum verification failed",
            ),
        ];
        r.durability = Some(DurabilityRecord {
            states_asked: 3,
            states_checked: 3,
            seed: 7,
            sector_bytes: 4096,
            torn: true,
            outcomes: [("clean", 1), ("lost_commits", 1), ("corrupt", 1)]
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect(),
            acknowledged: 120,
            acknowledged_unit: Default::default(),
            worst_loss: 3,
            states,
            ..DurabilityRecord::default()
        });
        let text = lines(&r);
        assert!(
            text.starts_with(
                "risk     3 of 3 crash states checked (seed 7, torn writes at 4 KiB): 1 clean, \
                 1 lost commits, 1 corrupt\n"
            ),
            "{text}"
        );
        assert!(
            text.contains("states losing any 2, the worst lost 3"),
            "{text}"
        );
        assert!(
            text.contains("worst state #2 (corrupt): pg_checksums: 2 problem(s)"),
            "{text}"
        );
        r.durability = None;
        assert_eq!(lines(&r), "");
    }
}
