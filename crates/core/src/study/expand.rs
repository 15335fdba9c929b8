//! Expands a study into cells (stacks × workloads × sweep values), the baseline of each cell
//! and the interleaved run order, refusing what would be ignored or counted twice.

use super::{
    Cell, RunSlot, Study, StudyPlan, StudyWorkload, Sweep, MAX_REPEAT, STUDY_SCHEMA_VERSION,
};
use crate::settings::{echo, Origin};
use std::collections::{HashMap, HashSet};

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
        self.check_size()?;
        let mut cells = Vec::new();
        for stack in &self.stacks {
            let spec = self.spec_of(stack);
            for w in &self.workloads {
                let applicable: Vec<&Sweep> =
                    self.sweeps.iter().filter(|s| applies(s, spec, w)).collect();
                refuse_swept_twice(stack, w, &applicable)?;
                for combo in combinations(&applicable) {
                    cells.push(self.cell(stack, w, &applicable, &combo));
                }
            }
        }
        refuse_same_cell_twice(&cells)?;
        // With several stacks, a cell is compared with the baseline stack under the same workload
        // and sweep values; with one stack, with the first sweep value (the sweep is the study).
        // First cells by key, so that large studies expand in linear time.
        let mut first_of_workload = HashMap::new();
        let mut baseline_cells = HashMap::new();
        for (i, b) in cells.iter().enumerate() {
            first_of_workload.entry(&b.workload).or_insert(i);
            if b.base_stack == baseline {
                baseline_cells.entry((&b.workload, &b.set)).or_insert(i);
            }
        }
        let baseline_of = cells
            .iter()
            .map(|c| {
                if self.stacks.len() == 1 {
                    first_of_workload.get(&c.workload).copied()
                } else {
                    baseline_cells.get(&(&c.workload, &c.set)).copied()
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

    /// Sweeps multiply: refuse a study too large to plan, let alone run, before expanding it.
    fn check_size(&self) -> Result<(), String> {
        let mut cells = 0usize;
        for stack in &self.stacks {
            for w in &self.workloads {
                let combos = self
                    .sweeps
                    .iter()
                    .filter(|s| applies(s, self.spec_of(stack), w))
                    .fold(1usize, |n, s| n.saturating_mul(s.values.len()));
                cells = cells.saturating_add(combos);
            }
        }
        let runs = cells.saturating_mul(self.repeat as usize);
        if cells > MAX_CELLS || runs > MAX_RUNS {
            return Err(format!(
                "the study has {cells} cells x {} repetitions: at most {MAX_CELLS} cells and \
                 {MAX_RUNS} runs (sweep fewer values, or split the study)",
                self.repeat
            ));
        }
        Ok(())
    }

    /// A scoped sweep must name a stack type or a workload of the study: otherwise it would
    /// apply to nothing.
    fn check_sweep_scopes(&self) -> Result<(), String> {
        for s in &self.sweeps {
            let Some(scope) = &s.scope else { continue };
            let kinds: Vec<&str> = (self.stacks.iter())
                .map(|st| stack_kind(self.spec_of(st)))
                .collect();
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
        let def = self.stack_defs.get(stack);
        let base_spec = self.spec_of(stack);
        let mut spec = base_spec.to_string();
        let mut entries: Vec<((String, String), Origin)> = (w.set.iter().enumerate())
            .map(|(i, kv)| (kv.clone(), w.origin_of(i)))
            .collect();
        let mut tags = Vec::new();
        for (i, value) in combo {
            let s = sweeps[*i];
            if is_stack_sweep(s, base_spec, w) {
                spec = with_stack_key(&spec, &s.key, value);
            } else {
                entries.retain(|((k, _), _)| *k != s.key);
                entries.push(((s.key.clone(), value.clone()), s.origin.clone()));
                tags.push(format!("{}={value}", s.key));
            }
        }
        let (set, origins) = entries.into_iter().unzip();
        // A named stack shows its name; its sweeps still show in the spec they changed.
        let shown = match def {
            Some(_) if spec == base_spec => stack.to_string(),
            Some(_) => format!("{stack} ({spec})"),
            None => spec.clone(),
        };
        let mut label = format!("{shown} / {}", w.name);
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
            log_stack: def.and_then(|d| d.log.clone()),
            stack_set: def.map(|d| d.set.clone()).unwrap_or_default(),
            workload: w.name.clone(),
            set,
            origins,
        }
    }
}

/// Most cells a study may have, and most runs (cells × repetitions): far beyond what runs in
/// a week, small enough to plan in memory at once.
const MAX_CELLS: usize = 10_000;
const MAX_RUNS: usize = 100_000;

/// A sweep applies to a cell of its stack type or workload; an unscoped one to every cell.
fn applies(s: &Sweep, stack: &str, w: &StudyWorkload) -> bool {
    match &s.scope {
        None => true,
        Some(scope) => scope == stack_kind(stack) || *scope == w.name,
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
    let (mut ids, mut runs) = (HashSet::new(), HashSet::new());
    for c in cells {
        // What the workload runs with: a stack's own settings count unless the workload's
        // override them (two named stacks of one spec differ by their `set`).
        let stack_own = (c.stack_set.iter()).filter(|(k, _)| !c.set.iter().any(|s| s.0 == *k));
        let mut set: Vec<&(String, String)> = c.set.iter().chain(stack_own).collect();
        set.sort();
        if !ids.insert(&c.id) || !runs.insert((&c.stack, &c.workload, set)) {
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
