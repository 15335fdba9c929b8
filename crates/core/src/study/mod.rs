//! Studies: stacks × workloads × sweeps × repetitions, from flags or a TOML file, expanded into
//! cells and an interleaved run order (A B C A B C ...) so drift hits every cell alike.

mod file;

use crate::settings::{echo, Origin, Settings, SpecError};
use serde::{Deserialize, Serialize};

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
        SpecError::new(self.origin.clone(), self.name(), message).to_string()
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

/// A study as written.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Study {
    /// Stack specs.
    pub stacks: Vec<String>,
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
    /// The stack spec as written in the study (before sweeps): cells of a stack share it.
    pub base_stack: String,
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
        ) == (
            &other.id,
            &other.label,
            &other.stack,
            &other.base_stack,
            &other.workload,
            &other.set,
        )
    }
}

impl Eq for Cell {}

impl Cell {
    /// The cell's workload settings, each with where it was written.
    pub fn settings(&self) -> Settings {
        let mut settings = Settings::default();
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

fn stack_kind(spec: &str) -> &str {
    let head = spec.split(':').next().unwrap_or(spec);
    head.split('=').next().unwrap_or(head)
}

fn with_stack_key(spec: &str, key: &str, value: &str) -> String {
    let sep = if spec.contains(':') { ',' } else { ':' };
    format!("{spec}{sep}{key}={value}")
}

/// Every combination of the values of `sweeps`, as (sweep index, value) lists.
fn combinations(sweeps: &[&Sweep]) -> Vec<Vec<(usize, String)>> {
    let mut out: Vec<Vec<(usize, String)>> = vec![Vec::new()];
    for (i, s) in sweeps.iter().enumerate() {
        out = out
            .into_iter()
            .flat_map(|c| {
                s.values.iter().map(move |v| {
                    let mut c = c.clone();
                    c.push((i, v.clone()));
                    c
                })
            })
            .collect();
    }
    out
}

impl Study {
    /// Expands into cells, baselines and the interleaved order.
    pub fn expand(&self) -> Result<StudyPlan, String> {
        if self.stacks.is_empty() || self.workloads.is_empty() {
            return Err("a study needs at least one --stack and one --workload".into());
        }
        if !(1..=MAX_REPEAT).contains(&self.repeat) {
            return Err(format!(
                "--repeat {}: out of range (allowed 1 to {MAX_REPEAT})",
                self.repeat
            ));
        }
        let baseline = match &self.baseline {
            None => self.stacks[0].clone(),
            Some(b) => pick_baseline(&self.stacks, b)
                .map_err(|m| format!("--baseline {}: {m}", echo(b)))?,
        };
        self.check_sweep_scopes()?;
        let mut cells = Vec::new();
        for stack in &self.stacks {
            for w in &self.workloads {
                let applicable: Vec<&Sweep> = self
                    .sweeps
                    .iter()
                    .filter(|s| match &s.scope {
                        None => true,
                        Some(scope) => scope == stack_kind(stack) || *scope == w.name,
                    })
                    .collect();
                refuse_swept_twice(stack, w, &applicable)?;
                for combo in combinations(&applicable) {
                    cells.push(self.cell(stack, w, &applicable, &combo));
                }
            }
        }
        refuse_same_cell_twice(&cells)?;
        // With several stacks, a cell is compared with the baseline stack under the same workload
        // and sweep values; with one stack, with the first sweep value (the sweep is the study).
        let baseline_of = cells
            .iter()
            .map(|c| {
                if self.stacks.len() == 1 {
                    cells.iter().position(|b| b.workload == c.workload)
                } else {
                    cells.iter().position(|b| {
                        b.base_stack == baseline && b.workload == c.workload && b.set == c.set
                    })
                }
            })
            .collect();
        let order = (1..=self.repeat)
            .flat_map(|rep| (0..cells.len()).map(move |cell| RunSlot { cell, rep }))
            .collect();
        let mut study = self.clone();
        if study.baseline.is_some() {
            study.baseline = Some(baseline); // the full spec a prefix selected
        }
        Ok(StudyPlan {
            schema_version: STUDY_SCHEMA_VERSION,
            study,
            cells,
            baseline_of,
            order,
        })
    }

    /// A scoped sweep must name a stack type or a workload of the study: otherwise it would
    /// apply to nothing.
    fn check_sweep_scopes(&self) -> Result<(), String> {
        for s in &self.sweeps {
            let Some(scope) = &s.scope else { continue };
            let kinds: Vec<&str> = self.stacks.iter().map(|st| stack_kind(st)).collect();
            let names: Vec<&str> = self.workloads.iter().map(|w| w.name.as_str()).collect();
            if !kinds.contains(&scope.as_str()) && !names.contains(&scope.as_str()) {
                return Err(s.error(format!(
                    "no stack of type '{}' and no workload named so in this study (stack types: \
                     {}; workloads: {})",
                    echo(scope),
                    kinds.join(", "),
                    names.join(", ")
                )));
            }
        }
        Ok(())
    }

    fn cell(
        &self,
        stack: &str,
        w: &StudyWorkload,
        sweeps: &[&Sweep],
        combo: &[(usize, String)],
    ) -> Cell {
        let mut spec = stack.to_string();
        let mut entries: Vec<((String, String), Origin)> = w
            .set
            .iter()
            .enumerate()
            .map(|(i, kv)| (kv.clone(), w.origin_of(i)))
            .collect();
        let mut tags = Vec::new();
        for (i, value) in combo {
            let s = sweeps[*i];
            if is_stack_sweep(s, stack, w) {
                spec = with_stack_key(&spec, &s.key, value);
            } else {
                entries.retain(|((k, _), _)| *k != s.key);
                entries.push(((s.key.clone(), value.clone()), s.origin.clone()));
                tags.push(format!("{}={value}", s.key));
            }
        }
        let (set, origins) = entries.into_iter().unzip();
        let mut label = format!("{spec} / {}", w.name);
        // The same workload listed twice with different settings: its settings tell the cells apart.
        if self.workloads.iter().filter(|x| x.name == w.name).count() > 1 && !w.set.is_empty() {
            let own: Vec<String> = w.set.iter().map(|(k, v)| format!("{k}={v}")).collect();
            label = format!("{label} {}", own.join(","));
        }
        if !tags.is_empty() {
            label = format!("{label} {}", tags.join(","));
        }
        let id = slug(&label);
        Cell {
            id,
            label,
            stack: spec,
            base_stack: stack.to_string(),
            workload: w.name.clone(),
            set,
            origins,
        }
    }
}

/// A sweep of `stack`'s type sets a stack key; any other sweep sets a workload key.
fn is_stack_sweep(s: &Sweep, stack: &str, w: &StudyWorkload) -> bool {
    s.scope.as_deref() == Some(stack_kind(stack)) && s.scope.as_deref() != Some(w.name.as_str())
}

/// Two sweeps of the same key on one cell: the second would silently replace the first.
fn refuse_swept_twice(stack: &str, w: &StudyWorkload, sweeps: &[&Sweep]) -> Result<(), String> {
    for (i, s) in sweeps.iter().enumerate() {
        let earlier = sweeps[..i]
            .iter()
            .find(|e| e.key == s.key && is_stack_sweep(e, stack, w) == is_stack_sweep(s, stack, w));
        if let Some(first) = earlier {
            return Err(s.error(format!(
                "'{}' is swept twice for {} / {} (also by {} at {}): sweep each key once",
                echo(&s.key),
                echo(stack),
                echo(&w.name),
                first.name(),
                first.origin
            )));
        }
    }
    Ok(())
}

/// Two cells that run the same stack, workload and settings would be counted as one.
fn refuse_same_cell_twice(cells: &[Cell]) -> Result<(), String> {
    let what = |c: &Cell| {
        let mut set = c.set.clone();
        set.sort();
        (c.stack.clone(), c.workload.clone(), set)
    };
    for (i, c) in cells.iter().enumerate() {
        if cells[..i]
            .iter()
            .any(|d| d.id == c.id || what(d) == what(c))
        {
            return Err(format!(
                "the study lists the same cell twice: {}",
                echo(&c.label)
            ));
        }
    }
    Ok(())
}

/// The stack `wanted` names: itself, or the only stack it is the start of.
pub(crate) fn pick_baseline(stacks: &[String], wanted: &str) -> Result<String, String> {
    if stacks.iter().any(|s| s == wanted) {
        return Ok(wanted.to_string());
    }
    let candidates: Vec<&str> = stacks
        .iter()
        .filter(|s| !wanted.is_empty() && s.starts_with(wanted))
        .map(String::as_str)
        .collect();
    match candidates[..] {
        [one] => Ok(one.to_string()),
        [] => Err(format!(
            "not one of the stacks ({}); the start of a stack's spec selects it",
            stacks.join(", ")
        )),
        _ => Err(format!(
            "the start of several stacks ({}): write more of the one you mean",
            candidates.join(", ")
        )),
    }
}

/// A file-system-safe, stable identifier for a label.
fn slug(label: &str) -> String {
    let mut s: String = label
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    while s.contains("--") {
        s = s.replace("--", "-");
    }
    let s = s.trim_matches('-').to_string();
    // A short hash keeps labels that differ only in punctuation apart.
    let hash = label.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    });
    format!("{}-{:08x}", &s[..s.len().min(60)], hash as u32)
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
