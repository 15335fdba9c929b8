//! File operations through whole runs on a temporary directory: each operation does what it
//! says to the tree (files created, deleted, renamed, grown), counted and timed under its own
//! kind; the built-in file-serving personalities run.

use bakeoff_core::plan::OpKind;
use bakeoff_core::record::OpStats;
use bakeoff_core::settings::Settings;
use bakeoff_core::workload::{builtin, Workload};
use bakeoff_engine::{execute, lay_out, RunOutput, Target};
use std::path::Path;
use std::sync::atomic::AtomicBool;

fn run_plan(plan: &bakeoff_core::Plan, dir: &Path) -> RunOutput {
    let target = Target::Directory(dir.into());
    let data = lay_out(plan, &target, &|_, _| true).unwrap();
    let out = execute(plan, &data, &AtomicBool::new(false), &mut |_| {}).unwrap();
    assert!(out.error.is_none(), "{:?}", out.error);
    out
}

fn run(workload: &str, set: &str) -> (tempfile::TempDir, RunOutput) {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let plan = builtin(workload)
        .unwrap()
        .plan(&Settings::parse_set(set).unwrap())
        .unwrap();
    let out = run_plan(&plan, dir.path());
    (dir, out)
}

fn kind(out: &RunOutput, kind: OpKind) -> &OpStats {
    out.ops
        .iter()
        .find(|o| o.kind == kind)
        .unwrap_or_else(|| panic!("no {kind:?} in {:?}", out.ops))
}

#[test]
fn fileserver_runs_every_operation_of_its_flow() {
    let (_d, out) = run(
        "fileserver",
        "nfiles=200,nthreads=4,meanfilesize=16k,runtime=1s",
    );
    for k in [
        OpKind::Create,
        OpKind::WriteFile,
        OpKind::Close,
        OpKind::Open,
        OpKind::Append,
        OpKind::ReadFile,
        OpKind::Delete,
        OpKind::Stat,
    ] {
        let op = kind(&out, k);
        assert!(op.ops > 10, "{k:?}: {} ops", op.ops);
        let lat = op.lat.as_ref().unwrap();
        assert!(lat.min_ns > 0 && lat.at(50.0).unwrap() <= lat.at(99.0).unwrap());
    }
}
