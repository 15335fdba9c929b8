//! The rules of file operations: tree filesets (`entries`, `dirwidth`, `prealloc`, sizing by
//! offered load), file steps, roles made of them (and their operation mixes), and the one rule
//! between them: threads that create, delete or rename own disjoint files, so a tree needs at
//! least one working-set file per thread.

use super::{FileSize, FilesetInput, RoleInput, StepInput, StepKind, MAX_BS};
use crate::fileop::{FileOp, FileStep, SizeDist, TreeSpec, MAX_TREE_ENTRIES};
use crate::plan::{FilesetPlan, Plan, Step};
use crate::settings::SettingError;
use crate::values::Val;

/// Shape of the gamma distribution of file sizes (filebench 1.4's `sizegamma=1500`).
const GAMMA_SHAPE: f64 = 1.5;

/// A tree fileset as written (the keys of [`crate::keys::FILESET_KEYS`] only trees take).
pub(crate) struct TreeInput {
    pub entries: Option<Val>,
    pub data_per_ops: Option<Val>,
    pub rate_hint: Option<Val>,
    pub dirwidth: Val,
    pub prealloc: Val,
    pub size_dist: Val,
    pub working_set: Val,
}

/// A tree fileset: its mean file size, and its number of files (for one sized by offered
/// load, 1 until [`size_trees`] knows the rates).
pub(super) fn tree_fileset(f: &FilesetInput, t: &TreeInput) -> Result<FilesetPlan, SettingError> {
    let FileSize::PerFile(mean) = &f.size else {
        let FileSize::Total(total) = &f.size else {
            unreachable!("a size is total or per file")
        };
        return Err(total.invalid(
            "a tree's files have a mean size: give filesize (per file), not size (total)",
        ));
    };
    let file_size = mean.size(1, 1 << 40)?;
    let nrfiles = match &t.entries {
        Some(e) => e.int(1, MAX_TREE_ENTRIES)? as u32,
        None => 1,
    };
    let data_per_ops = t
        .data_per_ops
        .as_ref()
        .map(|v| v.size(1, 1 << 40))
        .transpose()?;
    let rate_hint = t.rate_hint.as_ref().map(|v| v.rate(1e8)).transpose()?;
    if let (Some(e), Some(_)) = (&t.entries, &t.data_per_ops) {
        return Err(e.invalid("give entries or data_per_ops (sized by offered load), not both"));
    }
    if let (Some(hint), None) = (&t.rate_hint, &t.data_per_ops) {
        return Err(hint.invalid("rate_hint sizes a tree given by data_per_ops"));
    }
    let size_dist = match t.size_dist.choice(&["gamma", "fixed"])? {
        "gamma" => SizeDist::Gamma { shape: GAMMA_SHAPE },
        _ => SizeDist::Fixed,
    };
    Ok(FilesetPlan {
        name: f.name.clone(),
        nrfiles,
        file_size,
        tree: Some(TreeSpec {
            dirwidth: t.dirwidth.int(1, 1_000_000)? as u32,
            prealloc_pct: t.prealloc.int(0, 100)? as u8,
            size_dist,
            working_set_pct: t.working_set.int(1, 100)? as u8,
            data_per_ops,
            rate_hint,
        }),
        verify: None,
    })
}

/// A file step on the tree it names (or its role's).
pub(super) fn file_step(s: &StepInput, filesets: &[FilesetPlan]) -> Result<Step, SettingError> {
    let StepKind::File {
        op,
        fileset,
        bs,
        random,
    } = &s.kind
    else {
        return Err(s.at.invalid("not a file step"));
    };
    let names: Vec<&str> = FileOp::ALL.iter().map(|o| o.name()).collect();
    let op = FileOp::from_name(op.choice(&names)?).unwrap_or(FileOp::Stat);
    let index = filesets
        .iter()
        .position(|f| f.name == fileset.text.trim())
        .ok_or_else(|| {
            let known: Vec<&str> = filesets.iter().map(|f| f.name.as_str()).collect();
            fileset.invalid(format!(
                "no fileset named {} (filesets: {})",
                fileset.shown(),
                known.join(", ")
            ))
        })?;
    if filesets[index].tree.is_none() {
        return Err(fileset.invalid(format!(
            "fileset '{}' is flat files for io steps: a file step needs a tree fileset (give \
             it entries or data_per_ops)",
            filesets[index].name
        )));
    }
    let random_size = random.boolean()?;
    if random_size && op != FileOp::Append {
        return Err(random.invalid("random applies to append steps"));
    }
    Ok(Step::File(FileStep {
        op,
        fileset: index,
        bs: bs.size(1, MAX_BS)?,
        random: random_size,
    }))
}

/// The rules of a role's shape: file steps share a role only with hog steps and take none of
/// the block-I/O keys; io roles (and log and db writers) use flat filesets; a mix's weights.
/// Returns the mix's weights (empty when the role is not a mix).
pub(super) fn check_role(
    r: &RoleInput,
    steps: &[Step],
    filesets: &[FilesetPlan],
    fileset: usize,
) -> Result<Vec<u32>, SettingError> {
    let file_role = steps.iter().any(|s| matches!(s, Step::File(_)));
    if file_role {
        check_file_role(r, steps)?;
    } else if filesets[fileset].tree.is_some() {
        return Err(r.fileset.invalid(format!(
            "fileset '{}' is a directory tree (entries): io steps and writer roles read and \
             write flat files (give it nrfiles and size, or use file steps)",
            filesets[fileset].name
        )));
    }
    let mix = r.mix.boolean()?;
    if mix && !file_role {
        return Err(r.mix.invalid("mix applies to roles of file steps"));
    }
    let mut weights = Vec::new();
    for (s, planned) in r.steps.iter().zip(steps) {
        if let (true, Step::File(f)) = (mix, planned) {
            if matches!(f.op, FileOp::Open | FileOp::Close) {
                return Err(s.at.invalid(
                    "each operation of a mix opens and closes the file it works on: open and \
                     close steps apply to a role whose steps run in order",
                ));
            }
        }
        match (&s.weight, mix) {
            (Some(w), false) => {
                return Err(w.invalid("weight applies to the steps of a mix = true role"))
            }
            (Some(w), true) => weights.push(w.int(0, 1_000_000)? as u32),
            (None, true) => weights.push(1),
            (None, false) => {}
        }
    }
    if mix && weights.iter().all(|&w| w == 0) {
        return Err(r
            .mix
            .invalid("every step of this mix has weight 0: nothing would run"));
    }
    Ok(weights)
}

fn check_file_role(r: &RoleInput, steps: &[Step]) -> Result<(), SettingError> {
    for (input, step) in r.steps.iter().zip(steps) {
        if !matches!(step, Step::File(_) | Step::Hog(_)) {
            return Err(input.at.invalid(
                "a role of file steps takes only file and hog steps (give this step a role of \
                 its own)",
            ));
        }
    }
    if r.direct.boolean()? {
        return Err(r.direct.invalid(
            "file operations go through the page cache: direct=true applies to io steps",
        ));
    }
    let refuse = |v: &Val, why: &str| Err(v.invalid(format!("{why} (a role of file steps)")));
    if r.iodepth.int(1, 4096)? > 1 {
        return refuse(&r.iodepth, "file operations are one at a time per thread");
    }
    if r.offset.size(0, u64::MAX / 2)? > 0 {
        return refuse(&r.offset, "offset applies to io steps");
    }
    for v in [&r.fsync, &r.fdatasync] {
        if v.int(0, 1 << 32)? > 0 {
            return refuse(v, "use a { file = \"fsync\" } step");
        }
    }
    if !r.engine.text.trim().is_empty() {
        return refuse(
            &r.engine,
            "file steps make their own system calls: engine applies to io steps",
        );
    }
    Ok(())
}

/// Sizes the trees given by `data_per_ops` to the plan's rates (or their rate hints), then
/// checks that every tree whose files are created, deleted or renamed has a working-set file
/// for each thread that uses it.
pub(super) fn size_trees(plan: &mut Plan, inputs: &[FilesetInput]) -> Result<(), SettingError> {
    plan.fit_datasets_to_rate();
    for (i, (f, input)) in plan.filesets.iter().zip(inputs).enumerate() {
        let (Some(spec), Some(t)) = (&f.tree, &input.tree) else {
            continue;
        };
        let blamed = t.entries.as_ref().or(t.data_per_ops.as_ref());
        let Some(blamed) = blamed else { continue };
        let by_load_only = spec.data_per_ops.is_some() && spec.rate_hint.is_none();
        if by_load_only && plan.offered_ops_per_s(i).is_none() {
            return Err(blamed.invalid(
                "a tree sized by offered load needs a rate: give the fileset a rate_hint, or its \
                 roles rate_iops",
            ));
        }
        let users = plan.roles.iter().filter(|r| uses(r, i));
        let threads: u32 = users.clone().map(|r| r.threads).sum();
        let renamed = users
            .flat_map(|r| &r.steps)
            .any(|s| matches!(s, Step::File(st) if st.fileset == i && st.op.changes_names()));
        let ws = working_set_files(f.nrfiles, spec.working_set_pct);
        if renamed && u64::from(threads) > ws {
            return Err(blamed.invalid(format!(
                "fileset '{}' has {ws} working-set files for {threads} threads that create, \
                 delete or rename in it: each thread owns its own files, so it needs at least \
                 one per thread (raise entries or working_set, or lower threads)",
                f.name
            )));
        }
    }
    Ok(())
}

/// The role has file steps on fileset `i`.
fn uses(r: &crate::plan::RolePlan, i: usize) -> bool {
    r.steps
        .iter()
        .any(|s| matches!(s, Step::File(st) if st.fileset == i))
}

/// Files `i < entries` with `i % 100 < pct` (see [`crate::fileop::Tree::of`]).
fn working_set_files(entries: u32, pct: u8) -> u64 {
    let (entries, pct) = (u64::from(entries), u64::from(pct));
    entries / 100 * pct + (entries % 100).min(pct)
}
