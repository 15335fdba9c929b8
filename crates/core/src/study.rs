//! Studies: stacks × workloads × sweeps × repetitions, from flags or a TOML file, expanded into
//! cells and an interleaved run order (A B C A B C ...) so drift hits every cell alike.

use crate::settings::{value_text, Origin, SpecError};
use serde::{Deserialize, Serialize};

/// Version of the study plan file (`study.json` in a results directory).
pub const STUDY_SCHEMA_VERSION: u32 = 1;

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
}

impl Sweep {
    /// Parses `scope.key=v1,v2,...` or `key=v1,v2`.
    pub fn parse(text: &str) -> Result<Sweep, String> {
        let (lhs, values) = text
            .split_once('=')
            .ok_or_else(|| format!("--sweep {text}: expected KEY=V1,V2,..."))?;
        let values: Vec<String> = values
            .split(',')
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty())
            .collect();
        if values.is_empty() {
            return Err(format!("--sweep {text}: no values"));
        }
        let (scope, key) = match lhs.split_once('.') {
            Some((s, k)) => (Some(s.trim().to_string()), k.trim().to_string()),
            None => (None, lhs.trim().to_string()),
        };
        Ok(Sweep { scope, key, values })
    }
}

/// A workload of a study with its settings (`--set` text).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StudyWorkload {
    /// Built-in name or workload file path.
    pub name: String,
    /// `key=value` settings.
    pub set: Vec<(String, String)>,
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
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
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
        if self.repeat == 0 {
            return Err("--repeat must be at least 1".into());
        }
        let baseline = self
            .baseline
            .clone()
            .unwrap_or_else(|| self.stacks[0].clone());
        if !self.stacks.contains(&baseline) {
            return Err(format!(
                "--baseline {baseline} is not one of the stacks ({})",
                self.stacks.join(", ")
            ));
        }
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
                for combo in combinations(&applicable) {
                    cells.push(self.cell(stack, w, &applicable, &combo));
                }
            }
        }
        for (i, c) in cells.iter().enumerate() {
            if cells[..i].iter().any(|d| d.id == c.id) {
                return Err(format!("the study lists the same cell twice: {}", c.label));
            }
        }
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
        Ok(StudyPlan {
            schema_version: STUDY_SCHEMA_VERSION,
            study: self.clone(),
            cells,
            baseline_of,
            order,
        })
    }

    fn cell(
        &self,
        stack: &str,
        w: &StudyWorkload,
        sweeps: &[&Sweep],
        combo: &[(usize, String)],
    ) -> Cell {
        let mut spec = stack.to_string();
        let mut set = w.set.clone();
        let mut tags = Vec::new();
        for (i, value) in combo {
            let s = sweeps[*i];
            let is_stack = s.scope.as_deref() == Some(stack_kind(stack))
                && s.scope.as_deref() != Some(w.name.as_str());
            if is_stack {
                spec = with_stack_key(&spec, &s.key, value);
            } else {
                set.retain(|(k, _)| *k != s.key);
                set.push((s.key.clone(), value.clone()));
                tags.push(format!("{}={value}", s.key));
            }
        }
        let mut label = format!("{spec} / {}", w.name);
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
        }
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

/// Reads a study file: `stacks = [...]`, `[[workload]]` tables (`name`, other keys are settings),
/// `sweep = ["zfs.recordsize=8k,128k"]`, `repeat`, `baseline`, `min_effect` ("5%"), `size`.
pub fn parse_study(text: &str, path: &str) -> Result<Study, SpecError> {
    let err = |key: &str, m: String| {
        SpecError::new(
            Origin::File {
                path: path.to_string(),
                line: 1,
            },
            key,
            m,
        )
    };
    let doc: toml::Table =
        toml::from_str(text).map_err(|e| crate::settings::toml_error(&e, text, path))?;
    let strings = |key: &str| -> Result<Vec<String>, SpecError> {
        match doc.get(key) {
            None => Ok(Vec::new()),
            Some(toml::Value::Array(a)) => a
                .iter()
                .map(|v| {
                    v.as_str()
                        .map(str::to_string)
                        .ok_or_else(|| err(key, "expected strings".into()))
                })
                .collect(),
            Some(_) => Err(err(key, "expected a list of strings".into())),
        }
    };
    let mut workloads = Vec::new();
    for t in doc
        .get("workload")
        .and_then(|w| w.as_array())
        .into_iter()
        .flatten()
    {
        let t = t
            .as_table()
            .ok_or_else(|| err("workload", "each [[workload]] is a table".into()))?;
        let name = t
            .get("name")
            .and_then(|n| n.as_str())
            .ok_or_else(|| err("workload", "needs a name".into()))?;
        let set = t
            .iter()
            .filter(|(k, _)| *k != "name")
            .map(|(k, v)| {
                value_text(v)
                    .map(|v| (k.clone(), v))
                    .ok_or_else(|| err(k, "expected a single value".into()))
            })
            .collect::<Result<_, _>>()?;
        workloads.push(StudyWorkload {
            name: name.to_string(),
            set,
        });
    }
    let sweeps = strings("sweep")?
        .iter()
        .map(|s| Sweep::parse(s).map_err(|m| err("sweep", m)))
        .collect::<Result<_, _>>()?;
    let repeat = doc.get("repeat").and_then(|r| r.as_integer()).unwrap_or(3);
    let min_effect = match doc.get("min_effect").and_then(value_text) {
        Some(t) => parse_fraction(&t).map_err(|m| err("min_effect", m))?,
        None => 0.05,
    };
    Ok(Study {
        stacks: strings("stacks")?,
        workloads,
        sweeps,
        repeat: u32::try_from(repeat)
            .ok()
            .filter(|r| *r >= 1)
            .ok_or_else(|| err("repeat", format!("{repeat}: must be 1 or more")))?,
        baseline: doc
            .get("baseline")
            .and_then(|b| b.as_str())
            .map(str::to_string),
        min_effect,
        size: doc
            .get("size")
            .and_then(|s| s.as_str())
            .unwrap_or("1g")
            .to_string(),
    })
}

/// `5%` or `0.05` → 0.05.
pub fn parse_fraction(text: &str) -> Result<f64, String> {
    let t = text.trim();
    let v: f64 = match t.strip_suffix('%') {
        Some(p) => p.trim().parse::<f64>().map(|x| x / 100.0),
        None => t.parse(),
    }
    .map_err(|_| format!("'{text}' is not a fraction (e.g. 5% or 0.05)"))?;
    if !(0.0..1.0).contains(&v) {
        return Err(format!("'{text}' must be between 0% and 100%"));
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn study(stacks: &[&str], sweeps: &[&str], repeat: u32) -> Study {
        Study {
            stacks: stacks.iter().map(|s| s.to_string()).collect(),
            workloads: vec![StudyWorkload {
                name: "slob".into(),
                set: vec![("readers".into(), "32".into())],
            }],
            sweeps: sweeps.iter().map(|s| Sweep::parse(s).unwrap()).collect(),
            repeat,
            baseline: None,
            min_effect: 0.05,
            size: "1g".into(),
        }
    }

    #[test]
    fn sweeps_apply_to_their_scope_and_runs_interleave() {
        let p = study(
            &["ext4", "zfs"],
            &["zfs.recordsize=8k,32k,128k", "slob.block=8k,32k"],
            2,
        )
        .expand()
        .unwrap();
        // ext4: 2 block sizes; zfs: 3 record sizes x 2 block sizes.
        assert_eq!(p.cells.len(), 2 + 6);
        assert!(p
            .cells
            .iter()
            .filter(|c| c.stack.starts_with("ext4"))
            .all(|c| !c.stack.contains("recordsize")));
        assert!(p
            .cells
            .iter()
            .any(|c| c.stack == "zfs:recordsize=32k"
                && c.set.contains(&("block".into(), "32k".into()))));
        assert_eq!(p.order.len(), 16);
        assert_eq!(
            (p.order[0].cell, p.order[1].cell, p.order[8].cell),
            (0, 1, 0),
            "A B C ... A B C"
        );
        // Each zfs cell's baseline is the ext4 cell with the same block size.
        let z = p
            .cells
            .iter()
            .position(|c| {
                c.stack == "zfs:recordsize=8k" && c.set.contains(&("block".into(), "32k".into()))
            })
            .unwrap();
        let b = p.baseline_of[z].unwrap();
        assert_eq!(
            (
                p.cells[b].stack.as_str(),
                p.cells[b].set.contains(&("block".into(), "32k".into()))
            ),
            ("ext4", true)
        );
    }

    #[test]
    fn ids_are_stable_and_distinct() {
        let p = study(
            &[
                "raw",
                "zfs:arc=100m",
                "zfs:recordsize=8k,primarycache=metadata",
            ],
            &[],
            1,
        )
        .expand()
        .unwrap();
        let again = study(
            &[
                "raw",
                "zfs:arc=100m",
                "zfs:recordsize=8k,primarycache=metadata",
            ],
            &[],
            1,
        )
        .expand()
        .unwrap();
        assert_eq!(p.cells, again.cells);
        assert!(p
            .cells
            .iter()
            .all(|c| !c.id.contains('/') && !c.id.contains(':')));
        assert!(study(&["raw", "raw"], &[], 1)
            .expand()
            .unwrap_err()
            .contains("twice"));
    }

    #[test]
    fn study_files_mean_the_same_as_flags() {
        let text = "stacks = [\"ext4\", \"zfs\"]\nrepeat = 2\nmin_effect = \"10%\"\nsweep = [\"zfs.recordsize=8k,128k\"]\n[[workload]]\nname = \"slob\"\nreaders = 32\n";
        let s = parse_study(text, "s.toml").unwrap();
        assert_eq!((s.repeat, s.min_effect), (2, 0.1));
        assert_eq!(
            s.workloads[0].set,
            vec![("readers".to_string(), "32".to_string())]
        );
        assert_eq!(s.expand().unwrap().cells.len(), 3);
        assert!(parse_fraction("150%").is_err());
    }
}
