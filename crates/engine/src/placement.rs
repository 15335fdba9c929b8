//! Where each fileset lives: on the data target, or — for the filesets of log roles (a log
//! writer's redo, a role with `log = true`) when a separate log stack is given — on the log
//! target, as seed 004 put data and redo on separate pools.

use crate::layout::{lay_out, Dataset, LayoutError, Target};
use bakeoff_core::plan::{Plan, RolePlan};

/// The targets of a run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Placement {
    /// Where data filesets go (and every fileset without a log target).
    pub data: Target,
    /// Where the log roles' filesets go, if apart.
    pub log: Option<Target>,
}

impl Placement {
    /// Everything on one target.
    pub fn single(target: Target) -> Placement {
        Placement {
            data: target,
            log: None,
        }
    }
}

/// The filesets of log roles (their writes are log writes), in plan order.
pub fn log_filesets(plan: &Plan) -> Vec<usize> {
    let is_log = |r: &RolePlan| r.log || r.log_writer;
    let mut sets: Vec<usize> = plan
        .roles
        .iter()
        .filter(|r| is_log(r))
        .map(|r| r.fileset)
        .collect();
    sets.sort_unstable();
    sets.dedup();
    sets
}

/// The plan restricted to the filesets `keep` says, with the positions they came from.
fn part(plan: &Plan, keep: &dyn Fn(usize) -> bool) -> (Plan, Vec<usize>) {
    let positions: Vec<usize> = (0..plan.filesets.len()).filter(|i| keep(*i)).collect();
    let sub = Plan {
        filesets: positions
            .iter()
            .map(|&i| plan.filesets[i].clone())
            .collect(),
        roles: Vec::new(),
        ..plan.clone()
    };
    (sub, positions)
}

/// Lays out every fileset on its target (see [`lay_out`]); progress counts over both.
pub fn lay_out_placed(
    plan: &Plan,
    placement: &Placement,
    progress: &dyn Fn(u64, u64) -> bool,
) -> Result<Dataset, LayoutError> {
    let Some(log) = &placement.log else {
        return lay_out(plan, &placement.data, progress);
    };
    if plan.clients > 0 {
        return Err(LayoutError::Unsupported(format!(
            "clients={} puts all of each client's files in a directory of its own: a separate log \
             stack ({}) is not supported with clients",
            plan.clients,
            log.path().display()
        )));
    }
    let logs = log_filesets(plan);
    let (data_plan, data_pos) = part(plan, &|i| !logs.contains(&i));
    let (log_plan, log_pos) = part(plan, &|i| logs.contains(&i));
    let total = plan.dataset_bytes();
    let first = data_plan.dataset_bytes();
    let data = lay_out(&data_plan, &placement.data, &|done, _| {
        progress(done, total)
    })?;
    let logged = lay_out(&log_plan, log, &|done, _| progress(first + done, total))?;
    let mut filesets = vec![Vec::new(); plan.filesets.len()];
    for (pos, regions) in data_pos.iter().zip(data.filesets) {
        filesets[*pos] = regions;
    }
    for (pos, regions) in log_pos.iter().zip(logged.filesets) {
        filesets[*pos] = regions;
    }
    Ok(Dataset {
        filesets,
        reused: data.reused && logged.reused,
        written_bytes: data.written_bytes + logged.written_bytes,
        elapsed: data.elapsed + logged.elapsed,
        client_dirs: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use bakeoff_core::settings::Settings;
    use bakeoff_core::workload::builtin;

    #[test]
    fn the_redo_goes_to_the_log_target() {
        let plan = builtin("slob")
            .unwrap()
            .plan(&Settings::parse_set("data_size=8m,redo_size=1m,datafiles=2").unwrap())
            .unwrap();
        let redo = plan.filesets.iter().position(|f| f.name == "redo").unwrap();
        assert_eq!(log_filesets(&plan), vec![redo]);
        let (data_dir, log_dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let placement = Placement {
            data: Target::Directory(data_dir.path().into()),
            log: Some(Target::Directory(log_dir.path().into())),
        };
        let d = lay_out_placed(&plan, &placement, &|_, _| true).unwrap();
        assert!(d.filesets[redo]
            .iter()
            .all(|r| r.path.starts_with(log_dir.path())));
        let data = plan.filesets.iter().position(|f| f.name == "data").unwrap();
        assert_eq!(d.filesets[data].len(), 2);
        assert!(d.filesets[data]
            .iter()
            .all(|r| r.path.starts_with(data_dir.path())));
        assert_eq!(d.written_bytes, plan.dataset_bytes());
    }
}
