//! Reading `compare` results directories for a report, trusting nothing: each directory and
//! each run record counts once however often it is named, a `schema_version` this bakeoff
//! does not know is refused, a corrupt `study.json` is an error (never a panic), and an
//! unreadable run record is named, left out and noted. Any of its files may be kept
//! gzip-compressed (`study.json.gz`, `rep-1.json.gz`, as docs/studies/records keeps them).

use crate::exit::{failure, Code, Failure};
use bakeoff_core::record::{RunRecord, READABLE_SCHEMA_VERSIONS};
use bakeoff_core::study::adaptive::{AdaptiveRecord, ADAPTIVE_SCHEMA_VERSION};
use bakeoff_core::study::{Cell, StudyPlan, STUDY_SCHEMA_VERSION};
use std::collections::HashSet;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::{Path, PathBuf};

/// One results directory's plan and the completed runs of each of its cells.
pub struct Study {
    /// The plan saved in `study.json`, checked.
    pub plan: StudyPlan,
    /// Completed runs per cell, in the plan's cell order.
    pub runs: Vec<Vec<RunRecord>>,
    /// `compare --until decided` or `--search`: what it decided (`adaptive.json`).
    pub adaptive: Option<AdaptiveRecord>,
}

/// What was read, and what was left out and why.
#[derive(Default)]
pub struct Reader {
    /// Directories read, by canonical path.
    seen_dirs: Vec<PathBuf>,
    /// Hashes of the run records read, so a copy of a record counts once.
    seen_records: HashSet<u64>,
    /// Caveats for the report's notes.
    pub notes: Vec<String>,
    /// Run records that could not be read.
    pub unreadable: usize,
    /// What the runs read cost in wall time, disturbed attempts included.
    pub cost: bakeoff_report::comparison::StudyCost,
}

/// The `schema_version` of a JSON document, checked against those this bakeoff reads.
fn check_schema(
    path: &Path,
    value: &serde_json::Value,
    what: &str,
    readable: &[u32],
) -> Result<(), Failure> {
    let version = value
        .get("schema_version")
        .and_then(serde_json::Value::as_u64);
    if version.is_some_and(|v| readable.iter().any(|r| u64::from(*r) == v)) {
        return Ok(());
    }
    let found = version.map_or("no schema_version".to_string(), |v| {
        format!("schema_version {v}")
    });
    let known: Vec<String> = readable.iter().map(u32::to_string).collect();
    Err(failure(
        Code::Usage,
        format!(
            "{}: {found}; this bakeoff reads {what} of schema_version {} \
             (use the bakeoff that wrote it, or a newer one)",
            path.display(),
            known.join(" or ")
        ),
    ))
}

/// The study plan saved in a results directory, checked so that nothing in it can make a
/// report index out of range or read outside the directory.
pub fn read_plan(dir: &Path) -> Result<StudyPlan, Failure> {
    let path = dir.join("study.json");
    let corrupt = |m: String| failure(Code::Usage, format!("{}: {m}", path.display()));
    let (path, text) = read_maybe_gz(&path).map_err(|e| {
        corrupt(format!(
            "{e} (is {} a `bakeoff compare` results directory?)",
            dir.display()
        ))
    })?;
    let plan: StudyPlan = parse_checked(&path, &text, "study.json", STUDY_SCHEMA_VERSION)?;
    plan_problem(&plan).map_or(Ok(plan), |m| Err(corrupt(format!("corrupt study: {m}"))))
}

/// `DIR/adaptive.json`, if the study was adaptive; checked like `study.json`.
fn read_adaptive(dir: &Path) -> Result<Option<AdaptiveRecord>, Failure> {
    let Ok((path, text)) = read_maybe_gz(&dir.join("adaptive.json")) else {
        return Ok(None);
    };
    parse_checked(&path, &text, "adaptive.json", ADAPTIVE_SCHEMA_VERSION).map(Some)
}

/// The text of `path`, or of `path.gz` decompressed if only that exists; with the path read.
fn read_maybe_gz(path: &Path) -> std::io::Result<(PathBuf, String)> {
    match std::fs::read_to_string(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let gz = PathBuf::from(format!("{}.gz", path.display()));
            let text = read_gz(&gz).map_err(|g| match g.kind() {
                std::io::ErrorKind::NotFound => e,
                _ => g,
            })?;
            Ok((gz, text))
        }
        other => other.map(|text| (path.to_path_buf(), text)),
    }
}

/// The text of a gzip-compressed file.
fn read_gz(path: &Path) -> std::io::Result<String> {
    use std::io::Read;
    let mut text = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(path)?).read_to_string(&mut text)?;
    Ok(text)
}

/// A results directory's JSON document `what` at `path`, of `schema_version` `version`: a
/// corrupt one or one of another version is an error (exit 2) naming the file.
fn parse_checked<T: serde::de::DeserializeOwned>(
    path: &Path,
    text: &str,
    what: &str,
    version: u32,
) -> Result<T, Failure> {
    let corrupt = |m: String| failure(Code::Usage, format!("{}: {m}", path.display()));
    let value: serde_json::Value =
        serde_json::from_str(text).map_err(|e| corrupt(e.to_string()))?;
    check_schema(path, &value, what, &[version])?;
    serde_json::from_value(value).map_err(|e| corrupt(e.to_string()))
}

/// What makes a saved plan unusable, if anything.
fn plan_problem(plan: &StudyPlan) -> Option<String> {
    let n = plan.cells.len();
    if plan.study.stacks.is_empty() || n == 0 {
        return Some("it lists no stacks or no cells".into());
    }
    if plan.baseline_of.len() != n {
        return Some(format!(
            "baseline_of has {} entries for {n} cells",
            plan.baseline_of.len()
        ));
    }
    if let Some(b) = plan.baseline_of.iter().flatten().find(|b| **b >= n) {
        return Some(format!("baseline_of names cell {b}, of {n}"));
    }
    if let Some(s) = plan.order.iter().find(|s| s.cell >= n) {
        return Some(format!("order names cell {}, of {n}", s.cell));
    }
    // Cell ids are directory names under runs/.
    let unsafe_id = |id: &str| id.is_empty() || id == "." || id == ".." || id.contains('/');
    if let Some(c) = plan.cells.iter().find(|c| unsafe_id(&c.id)) {
        return Some(format!("cell id {:?} is not a directory name", c.id));
    }
    None
}

impl Reader {
    /// Reads `dir`, or `None` if the same directory (by canonical path) was read already.
    pub fn read(&mut self, dir: &Path) -> Result<Option<Study>, Failure> {
        let canonical = std::fs::canonicalize(dir).map_err(|e| {
            failure(
                Code::Usage,
                format!("results directory {}: {e}", dir.display()),
            )
        })?;
        if self.seen_dirs.contains(&canonical) {
            self.notes.push(format!(
                "{} was given more than once and is counted once",
                dir.display()
            ));
            return Ok(None);
        }
        self.seen_dirs.push(canonical);
        let plan = read_plan(dir)?;
        // Without it every cell would show no runs: an empty table that looks like a result.
        let runs = dir.join("runs");
        if !runs.is_dir() {
            return Err(failure(
                Code::Usage,
                format!(
                    "{} is missing: {} has its study.json but no run records to report \
                     (moved or deleted? `bakeoff compare --resume --out {}` runs them again)",
                    runs.display(),
                    dir.display(),
                    dir.display()
                ),
            ));
        }
        let runs = plan
            .cells
            .iter()
            .map(|cell| self.read_runs(dir, cell))
            .collect::<Result<_, _>>()?;
        Ok(Some(Study {
            plan,
            runs,
            adaptive: read_adaptive(dir)?,
        }))
    }

    /// Completed runs of a cell (failed runs, half-written files and runs disturbed by other
    /// work are not results; the disturbed ones are counted in the notes).
    fn read_runs(&mut self, dir: &Path, cell: &Cell) -> Result<Vec<RunRecord>, Failure> {
        let cell_dir = dir.join("runs").join(&cell.id);
        let Ok(entries) = std::fs::read_dir(&cell_dir) else {
            return Ok(Vec::new());
        };
        let mut paths: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| {
                p.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
                    let n = n.strip_suffix(".gz").unwrap_or(n);
                    n.starts_with("rep-") && n.ends_with(".json") && !n.ends_with(".failed.json")
                })
            })
            .collect();
        paths.sort();
        let mut runs = Vec::new();
        let (mut copies, mut disturbed) = (0, Disturbed::default());
        for path in paths {
            let Some((text, record)) = self.read_record(&path)? else {
                continue;
            };
            let mut h = DefaultHasher::new();
            text.hash(&mut h);
            if !self.seen_records.insert(h.finish()) {
                copies += 1;
                continue;
            }
            let was_disturbed = disturbed.counted(&path, &record);
            self.cost.add(&record, was_disturbed);
            if !was_disturbed {
                runs.push(record);
            }
        }
        if let Some(note) = disturbed.note(&cell.label) {
            self.notes.push(note);
        }
        if copies > 0 {
            self.notes.push(format!(
                "{}: {copies} run record(s) already read from another directory were counted once",
                cell.label
            ));
        }
        Ok(runs)
    }

    /// One run record with its text; `None` (named on stderr and noted) if it cannot be read.
    fn read_record(&mut self, path: &Path) -> Result<Option<(String, RunRecord)>, Failure> {
        let text = match path.extension().is_some_and(|e| e == "gz") {
            true => read_gz(path),
            false => std::fs::read_to_string(path),
        };
        let parsed = text.map_err(|e| e.to_string()).and_then(|text| {
            let value: serde_json::Value =
                serde_json::from_str(&text).map_err(|e| e.to_string())?;
            Ok((text, value))
        });
        let record = match parsed {
            Ok((text, value)) => {
                check_schema(path, &value, "run records", READABLE_SCHEMA_VERSIONS)?;
                serde_json::from_value::<RunRecord>(value)
                    .map(|mut r| {
                        r.fill_summary();
                        (text, r)
                    })
                    .map_err(|e| e.to_string())
            }
            Err(e) => Err(e),
        };
        match record {
            Ok(r) => Ok(Some(r)),
            Err(e) => {
                eprintln!(
                    "bakeoff: error: {}: unreadable run record ({e}); left out of the report",
                    path.display()
                );
                self.notes.push(format!(
                    "{} was unreadable and is left out: its cell shows one run fewer",
                    path.display()
                ));
                self.unreadable += 1;
                Ok(None)
            }
        }
    }
}

/// A cell's runs disturbed by other work (docs/verdicts.md): attempts kept beside the results
/// and run again (`rep-N.disturbed-K.json`), and runs kept marked after the last redo; neither
/// is a result.
#[derive(Default)]
struct Disturbed {
    redone: usize,
    kept: usize,
    first_reason: Option<String>,
}

impl Disturbed {
    /// Counts `record` if it was disturbed; false if it is a result.
    fn counted(&mut self, path: &Path, record: &RunRecord) -> bool {
        let Some(d) = &record.disturbed else {
            return false;
        };
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        match name.contains(".disturbed-") {
            true => self.redone += 1,
            false => self.kept += 1,
        }
        self.first_reason.get_or_insert_with(|| d.reason());
        true
    }

    /// The note for cell `label`, if any of its runs was disturbed.
    fn note(&self, label: &str) -> Option<String> {
        let reason = self.first_reason.as_ref()?;
        let mut parts = Vec::new();
        if self.redone > 0 {
            parts.push(format!(
                "{} run(s) disturbed by other work and run again",
                self.redone
            ));
        }
        if self.kept > 0 {
            parts.push(format!(
                "{} run(s) still disturbed after the last redo, left out of the verdicts",
                self.kept
            ));
        }
        Some(format!("{label}: {} (first: {reason})", parts.join("; ")))
    }
}
