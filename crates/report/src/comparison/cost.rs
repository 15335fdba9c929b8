//! What a study cost in wall-clock time, and where it went: measuring, warming up, laying out
//! or loading the data, building stacks, checking crash states, and the rest (cache drops,
//! starting and stopping servers, tearing down, the sample before each run). Summed over every
//! run record of the results, the disturbed attempts included (their time was spent too).

use bakeoff_core::record::RunRecord;
use serde::Serialize;

/// Seconds per part of the study's wall time.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct StudyCost {
    /// Runs whose records hold their wall time (`timing`; records of older bakeoffs do not).
    pub runs: usize,
    /// Of them, attempts disturbed by other work (run again, or kept marked).
    pub disturbed_runs: usize,
    /// Wall time of those runs, from building to tearing down, plus the samples before them.
    pub wall_s: f64,
    /// The measured windows.
    pub measuring_s: f64,
    /// Warm-ups.
    pub warming_s: f64,
    /// Laying out datasets and loading databases.
    pub preparing_s: f64,
    /// The stacks' commands (mkfs, mount, zpool ...): building, mostly.
    pub building_s: f64,
    /// Checking crash states.
    pub checking_s: f64,
    /// The samples before runs (or `--quiet-wait`'s waits).
    pub waiting_s: f64,
    /// Wall time of the disturbed attempts.
    pub disturbed_s: f64,
}

impl StudyCost {
    /// Adds one run record (`disturbed`: it was not a result). A record without `timing` is
    /// not counted: its wall time is unknown.
    pub fn add(&mut self, r: &RunRecord, disturbed: bool) {
        let Some(t) = &r.timing else {
            return;
        };
        let wall = (t.wall_ms + t.before_ms) as f64 / 1e3;
        self.runs += 1;
        self.wall_s += wall;
        self.waiting_s += t.before_ms as f64 / 1e3;
        self.measuring_s += r.measured_ns as f64 / 1e9;
        self.warming_s += r.steady.as_ref().map_or(0.0, |s| s.warmup_s);
        let layout = r.dataset.as_ref().map_or(0, |d| d.layout_ms) as f64 / 1e3;
        let load = (r.database.as_ref())
            .and_then(|d| d.load.as_ref())
            .map_or(0.0, |l| l.seconds);
        self.preparing_s += layout + load;
        let commands = |s: &Option<bakeoff_core::record::StackInfo>| {
            s.as_ref()
                .map_or(0, |s| s.commands.iter().map(|c| c.ms).sum::<u64>())
        };
        self.building_s += (commands(&r.stack) + commands(&r.log_stack)) as f64 / 1e3;
        self.checking_s +=
            (r.durability.as_ref()).map_or(0, |d| d.recording.checking_ns) as f64 / 1e9;
        if disturbed {
            self.disturbed_runs += 1;
            self.disturbed_s += wall;
        }
    }

    /// Everything not in a named part.
    pub fn other_s(&self) -> f64 {
        let named = self.measuring_s
            + self.warming_s
            + self.preparing_s
            + self.building_s
            + self.checking_s
            + self.waiting_s;
        (self.wall_s - named).max(0.0)
    }

    /// One line: "cost: 15 runs in 23.4 min: measuring 42%, warming up 9%, ...".
    pub fn line(&self) -> Option<String> {
        if self.runs == 0 || self.wall_s <= 0.0 {
            return None;
        }
        let pct = |s: f64| 100.0 * s / self.wall_s;
        let parts = [
            ("measuring", self.measuring_s),
            ("warming up", self.warming_s),
            ("laying out or loading", self.preparing_s),
            ("stack commands", self.building_s),
            ("checking crash states", self.checking_s),
            ("sampling the machine before runs", self.waiting_s),
            (
                "the rest (cache drops, servers, tearing down)",
                self.other_s(),
            ),
        ];
        let shown: Vec<String> = (parts.iter())
            .filter(|(_, s)| *s > 0.0 && pct(*s) >= 0.5)
            .map(|(what, s)| format!("{what} {:.0}%", pct(*s)))
            .collect();
        let mut line = format!(
            "the study's {} runs took {}: {}",
            self.runs,
            minutes(self.wall_s),
            shown.join(", ")
        );
        if self.disturbed_runs > 0 {
            line += &format!(
                "; {} of them disturbed by other work ({})",
                self.disturbed_runs,
                minutes(self.disturbed_s)
            );
        }
        Some(line)
    }
}

/// "42 s", "23.4 min", "2.5 h".
fn minutes(secs: f64) -> String {
    if secs < 90.0 {
        format!("{secs:.0} s")
    } else if secs < 5400.0 {
        format!("{:.1} min", secs / 60.0)
    } else {
        format!("{:.1} h", secs / 3600.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bakeoff_core::record::RunTiming;

    #[test]
    fn the_parts_add_up_to_the_wall_time_and_the_rest_is_what_is_left() {
        let mut r = crate::fixture::record();
        r.measured_ns = 30_000_000_000;
        r.timing = Some(RunTiming {
            wall_ms: 50_000,
            before_ms: 1_000,
        });
        let mut cost = StudyCost::default();
        cost.add(&r, false);
        cost.add(&r, true);
        let mut old = r.clone();
        old.timing = None;
        cost.add(&old, false);
        assert_eq!((cost.runs, cost.disturbed_runs), (2, 1));
        assert_eq!(cost.wall_s, 102.0);
        assert_eq!(cost.measuring_s, 60.0);
        assert_eq!(cost.waiting_s, 2.0);
        let line = cost.line().unwrap();
        assert!(
            line.starts_with("the study's 2 runs took 1.7 min: measuring 59%"),
            "{line}"
        );
        assert!(
            line.ends_with("; 1 of them disturbed by other work (51 s)"),
            "{line}"
        );
        assert!(StudyCost::default().line().is_none());
    }
}
