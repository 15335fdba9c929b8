//! Studies: stacks × workloads × sweeps × repetitions, from flags or a TOML file, expanded into
//! cells and an interleaved run order (A B C A B C ...) so drift hits every cell alike.

pub mod adaptive;
mod expand;
mod file;

use crate::settings::{echo, Origin, SettingError, Settings};
use serde::{Deserialize, Serialize};

use expand::pick_baseline;
pub use file::parse_study;

/// Version of the study plan file (`study.json` in a results directory).
pub const STUDY_SCHEMA_VERSION: u32 = 1;

/// Most repetitions of a cell: far beyond any useful study, well inside `u32`.
pub const MAX_REPEAT: u32 = 10_000;

/// A sweep: one key, several values. `zfs.recordsize` sweeps a stack key of every zfs stack;
/// `slob.block` a parameter of the slob workload; a bare key (`bs`) every workload.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sweep {
    /// Stack type or workload name the sweep applies to (`None`: every workload).
    pub scope: Option<String>,
    /// The key.
    pub key: String,
    /// Its values, in order.
    pub values: Vec<String>,
    /// Where it was written (a study file's line, or `--sweep`); not part of results.
    #[serde(skip, default = "sweep_flag")]
    pub origin: Origin,
}

fn sweep_flag() -> Origin {
    Origin::Flag("--sweep".into())
}

impl Sweep {
    /// Parses `scope.key=v1,v2,...` or `key=v1,v2`, written on the command line (`--sweep`).
    /// The message of an error does not repeat `text`.
    pub fn parse(text: &str) -> Result<Sweep, String> {
        let usage = "expected KEY=V1,V2,... (e.g. zfs.recordsize=8k,128k or slob.block=8k,32k)";
        let (lhs, values) = text.split_once('=').ok_or(usage)?;
        let values: Vec<String> = values
            .split(',')
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty())
            .collect();
        if values.is_empty() {
            return Err(format!("no values: {usage}"));
        }
        let (scope, key) = match lhs.split_once('.') {
            Some((s, k)) => (Some(s.trim().to_string()), k.trim().to_string()),
            None => (None, lhs.trim().to_string()),
        };
        if key.is_empty() || scope.as_deref() == Some("") {
            return Err(usage.into());
        }
        Ok(Sweep {
            scope,
            key,
            values,
            origin: sweep_flag(),
        })
    }

    /// How messages name it: `zfs.recordsize`, or `bs`.
    fn name(&self) -> String {
        match &self.scope {
            Some(scope) => format!("{}.{}", echo(scope), echo(&self.key)),
            None => echo(&self.key).into_owned(),
        }
    }

    fn error(&self, message: impl Into<String>) -> String {
        SettingError::new(self.origin.clone(), self.name(), message).to_string()
    }
}

/// A workload of a study with its settings (`--set` text).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StudyWorkload {
    /// Built-in name or workload file path.
    pub name: String,
    /// `key=value` settings.
    pub set: Vec<(String, String)>,
    /// Where each of `set` was written (a study file's line, or `--set`); not part of results.
    #[serde(skip)]
    pub origins: Vec<Origin>,
}

impl StudyWorkload {
    /// Where setting `i` was written.
    pub fn origin_of(&self, i: usize) -> Origin {
        self.origins.get(i).cloned().unwrap_or(Origin::CommandLine)
    }

    /// A workload with settings given by `--set`.
    pub fn from_flags(name: &str, set: Vec<(String, String)>) -> StudyWorkload {
        StudyWorkload {
            name: name.to_string(),
            origins: vec![Origin::CommandLine; set.len()],
            set,
        }
    }
}

/// A stack of a study given as a table: a name for the comparison, its spec, a separate log
/// stack, and workload settings only this stack's cells get (seed 004's "ZFS tuned" turns
/// PostgreSQL's full-page writes off).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StackDef {
    /// The stack spec.
    pub spec: String,
    /// The log stack's spec (a database's WAL, slob's and oltp's redo), if any.
    #[serde(default)]
    pub log: Option<String>,
    /// Workload settings of this stack's cells, before the workload's own.
    #[serde(default)]
    pub set: Vec<(String, String)>,
}

/// A study as written.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Study {
    /// The stacks: specs, or names of [`Study::stack_defs`].
    pub stacks: Vec<String>,
    /// Stacks given as tables, by name.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub stack_defs: std::collections::BTreeMap<String, StackDef>,
    /// Workloads.
    pub workloads: Vec<StudyWorkload>,
    /// Sweeps.
    pub sweeps: Vec<Sweep>,
    /// Repetitions of every cell.
    pub repeat: u32,
    /// The baseline stack spec (default: the first).
    pub baseline: Option<String>,
    /// Minimum effect for a verdict (fraction, default 0.05).
    pub min_effect: f64,
    /// Size of each loop image.
    pub size: String,
    /// Memory limit of every run (a cgroup holding bakeoff, a database server and the page
    /// cache they use), as written (`512m`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mem_limit: Option<String>,
    /// Crash states every run checks (`--crash-states N`, docs/durability.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub crash_states: Option<u32>,
}

/// One combination: a stack spec, a workload and its settings, with sweep values applied.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Cell {
    /// Stable identifier, used as a directory name.
    pub id: String,
    /// Human label (`zfs:recordsize=8k / slob block=8k`).
    pub label: String,
    /// The stack spec with stack sweeps applied.
    pub stack: String,
    /// The stack as the study names it (its spec, or its name), before sweeps: cells of a
    /// stack share it.
    pub base_stack: String,
    /// The log stack's spec, if the stack has one.
    #[serde(default)]
    pub log_stack: Option<String>,
    /// Workload settings the stack itself brings (a `[[stack]]` table's `set`); the
    /// workload's and the sweeps' override them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stack_set: Vec<(String, String)>,
    /// Workload name.
    pub workload: String,
    /// Settings with workload sweeps applied.
    pub set: Vec<(String, String)>,
    /// Where each of `set` was written, so that planning errors point there; not part of
    /// results (a cell read back from `study.json` has none, and its settings say `--set`).
    #[serde(skip)]
    pub origins: Vec<Origin>,
}

/// Cells are the same when they run the same thing: where their settings were written is not
/// part of what they are (`--resume` compares a study with the cells saved in `study.json`).
impl PartialEq for Cell {
    fn eq(&self, other: &Cell) -> bool {
        (
            &self.id,
            &self.label,
            &self.stack,
            &self.base_stack,
            &self.workload,
            &self.set,
            &self.log_stack,
            &self.stack_set,
        ) == (
            &other.id,
            &other.label,
            &other.stack,
            &other.base_stack,
            &other.workload,
            &other.set,
            &other.log_stack,
            &other.stack_set,
        )
    }
}

impl Eq for Cell {}

impl Cell {
    /// The cell's workload settings, each with where it was written.
    pub fn settings(&self) -> Settings {
        let mut settings = Settings::default();
        for (k, v) in self
            .stack_set
            .iter()
            .filter(|(k, _)| !self.set.iter().any(|s| s.0 == *k))
        {
            let origin = Origin::Flag(format!("the set of stack '{}'", self.base_stack));
            settings.insert(k, v, origin);
        }
        for (i, (k, v)) in self.set.iter().enumerate() {
            let origin = self.origins.get(i).cloned().unwrap_or(Origin::CommandLine);
            settings.insert(k, v, origin);
        }
        settings
    }
}

/// One run: a cell and a repetition.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunSlot {
    /// Index into the cells.
    pub cell: usize,
    /// Repetition, from 1.
    pub rep: u32,
}

/// The expanded study.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StudyPlan {
    /// Format version.
    pub schema_version: u32,
    /// The study as written.
    pub study: Study,
    /// Cells.
    pub cells: Vec<Cell>,
    /// Index of the baseline cell for each cell (the baseline stack with the same workload and sweep values).
    pub baseline_of: Vec<Option<usize>>,
    /// Runs in execution order: repetitions interleaved across cells.
    pub order: Vec<RunSlot>,
}

impl StudyPlan {
    /// How many cells this plan adds to `saved` (a study's plan as a results directory holds
    /// it): `Ok(0)` when they run the same; `Ok(n)` when this one runs the saved cells, in the
    /// same order and with the same repetitions, crash states, size and memory limit, and `n`
    /// more after them (a stack or a workload appended to the study file); `Err` with what
    /// differs otherwise, since the saved runs would not be runs of this study.
    pub fn grows(&self, saved: &StudyPlan) -> Result<usize, String> {
        let (a, b) = (&saved.study, &self.study);
        let settings = [
            ("repeat", a.repeat.to_string(), b.repeat.to_string()),
            (
                "crash_states",
                format!("{:?}", a.crash_states),
                format!("{:?}", b.crash_states),
            ),
            ("size", a.size.clone(), b.size.clone()),
            (
                "mem_limit",
                format!("{:?}", a.mem_limit),
                format!("{:?}", b.mem_limit),
            ),
        ];
        if let Some((key, was, is)) = settings.iter().find(|(_, was, is)| was != is) {
            return Err(format!("its {key} was {was} and is {is}"));
        }
        let n = saved.cells.len();
        match self.cells.get(..n) {
            Some(head) if head == saved.cells.as_slice() => Ok(self.cells.len() - n),
            _ => {
                let changed = (saved.cells.iter().enumerate())
                    .find(|(i, c)| self.cells.get(*i) != Some(*c))
                    .map_or_else(String::new, |(_, c)| format!(": cell {} ", c.label));
                Err(format!(
                    "its cells differ{changed}(cells may only be added after the saved ones)"
                ))
            }
        }
    }
}

impl Study {
    /// The spec of the stack the study calls `stack` (a name of a table, else the spec itself).
    pub fn spec_of<'a>(&'a self, stack: &'a str) -> &'a str {
        self.stack_defs
            .get(stack)
            .map_or(stack, |d| d.spec.as_str())
    }
}

/// The plan of repetition `rep` of a cell: the same data (the seed of the data is kept), but
/// offsets drawn for this repetition, the same for every cell of the repetition so the cells
/// stay comparable.
pub fn for_repetition(plan: &crate::plan::Plan, rep: u32) -> crate::plan::Plan {
    crate::plan::Plan {
        repetition: rep,
        ..plan.clone()
    }
}

/// `5%` or `0.05` → 0.05.
pub fn parse_fraction(text: &str) -> Result<f64, String> {
    let t = text.trim();
    let v: f64 = match t.strip_suffix('%') {
        Some(p) => p.trim().parse::<f64>().map(|x| x / 100.0),
        None => t.parse(),
    }
    .map_err(|_| format!("'{}' is not a fraction (e.g. 5% or 0.05)", echo(text)))?;
    if !(0.0..1.0).contains(&v) {
        return Err(format!("'{}' must be between 0% and 100%", echo(text)));
    }
    Ok(v)
}

#[cfg(test)]
mod tests;
