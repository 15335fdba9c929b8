//! File operations through whole runs on a temporary directory: each operation does what it
//! says to the tree (files created, deleted, renamed, grown, read, their times set), counted
//! and timed under its own kind; mixes follow their weights; the built-in file-serving
//! personalities run.

use bakeoff_core::plan::{OpKind, Plan};
use bakeoff_core::record::OpStats;
use bakeoff_core::settings::Settings;
use bakeoff_core::workload::{builtin, Workload};
use bakeoff_engine::layout::{plan_trees, tree_root};
use bakeoff_engine::{execute, lay_out, RunOutput, Target};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

fn run_plan(plan: &Plan, dir: &Path) -> RunOutput {
    let target = Target::Directory(dir.into());
    let data = lay_out(plan, &target, &|_, _| true).unwrap();
    let out = execute(plan, &data, &AtomicBool::new(false), &mut |_| {}).unwrap();
    assert!(out.error.is_none(), "{:?}", out.error);
    out
}

/// A one-role personality over one tree `t` (its keys in `fileset`), the role's `steps`,
/// measured from the start (`ramp_time=0`: the tests count every operation of the run).
fn job(fileset: &str, role: &str, steps: &str) -> Plan {
    let text = format!(
        "description = \"test\"\nruntime = \"400ms\"\n[[fileset]]\nname = \"t\"\n{fileset}\n\
         [[role]]\nname = \"w\"\nthreads = 1\nfileset = \"t\"\n{role}\nsteps = [{steps}]\n"
    );
    let w = Workload::parse("t", &text, "t.toml").unwrap();
    w.plan(&Settings::parse_set("ramp_time=0").unwrap())
        .unwrap_or_else(|e| panic!("{e}"))
}

fn tmp() -> tempfile::TempDir {
    tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap()
}

fn op(out: &RunOutput, kind: OpKind) -> Option<&OpStats> {
    out.ops.iter().find(|o| o.kind == kind)
}

fn ops(out: &RunOutput, kind: OpKind) -> u64 {
    op(out, kind).map_or(0, |o| o.ops)
}

fn bytes(out: &RunOutput, kind: OpKind) -> u64 {
    op(out, kind).map_or(0, |o| o.bytes)
}

/// Every regular file under `dir`, with its size.
fn files(dir: &Path) -> Vec<(PathBuf, u64)> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let meta = entry.metadata().unwrap();
        if meta.is_dir() {
            found.extend(files(&entry.path()));
        } else {
            found.push((entry.path(), meta.len()));
        }
    }
    found.sort();
    found
}

const FIXED: &str = "filesize = \"12k\"\nsize_dist = \"fixed\"\ndirwidth = 10";

#[test]
fn create_makes_every_free_name_and_delete_removes_every_file() {
    let d = tmp();
    let plan = job(
        &format!("entries = 40\nprealloc = 0\n{FIXED}"),
        "",
        "{ file = \"create\" }, { file = \"close\" }",
    );
    let out = run_plan(&plan, d.path());
    assert_eq!(ops(&out, OpKind::Create), 40, "one create per free name");
    assert_eq!(
        ops(&out, OpKind::Close),
        40,
        "a close with nothing open is not counted"
    );
    let root = tree_root(d.path(), "t");
    assert_eq!(files(&root).len(), 40);
    assert!(
        files(&root).iter().all(|(_, len)| *len == 0),
        "create writes nothing"
    );

    let d = tmp();
    let plan = job(
        &format!("entries = 40\n{FIXED}"),
        "",
        "{ file = \"delete\" }",
    );
    let out = run_plan(&plan, d.path());
    assert_eq!(ops(&out, OpKind::Delete), 40);
    assert!(files(&tree_root(d.path(), "t")).is_empty());
}

#[test]
fn rename_moves_files_to_free_names() {
    let d = tmp();
    let plan = job(
        &format!("entries = 40\nprealloc = 50\n{FIXED}"),
        "",
        "{ file = \"rename\" }",
    );
    let root = tree_root(d.path(), "t");
    let out = run_plan(&plan, d.path());
    let tree = plan_trees(&plan)[0].clone().unwrap();
    let before: Vec<PathBuf> = (0..40u32)
        .filter(|&i| tree.files[i as usize].exists)
        .map(|i| root.join(tree.file_path(i)))
        .collect();
    let after: Vec<PathBuf> = files(&root).into_iter().map(|(p, _)| p).collect();
    assert!(ops(&out, OpKind::Rename) > 100);
    assert_eq!(
        after.len(),
        before.len(),
        "a rename neither adds nor removes a file"
    );
    assert_ne!(after, before, "names moved");
    assert!(files(&root).iter().all(|(_, len)| *len == 12 << 10));
}

#[test]
fn whole_file_reads_and_writes_move_every_byte() {
    let d = tmp();
    let steps = "{ file = \"open\" }, { file = \"read_whole\", bs = \"8k\" }, { file = \"close\" }";
    let out = run_plan(&job(&format!("entries = 20\n{FIXED}"), "", steps), d.path());
    let reads = ops(&out, OpKind::ReadFile);
    assert!(reads > 100, "{reads}");
    assert_eq!(bytes(&out, OpKind::ReadFile), reads * (12 << 10));
    assert!(
        ops(&out, OpKind::Open).abs_diff(reads) <= 1,
        "an open per read"
    );

    let d = tmp();
    let steps =
        "{ file = \"create\" }, { file = \"write_whole\", bs = \"4k\" }, { file = \"close\" }";
    let fileset = format!("entries = 40\nprealloc = 0\n{FIXED}");
    let out = run_plan(&job(&fileset, "", steps), d.path());
    // Once every name exists, create finds none and write_whole opens an existing file.
    let writes = ops(&out, OpKind::WriteFile);
    assert!(writes > 40 && ops(&out, OpKind::Create) == 40, "{writes}");
    assert_eq!(bytes(&out, OpKind::WriteFile), writes * (12 << 10));
    let written = files(&tree_root(d.path(), "t"));
    assert!(written.len() == 40 && written.iter().all(|(_, len)| *len == 12 << 10));
}

#[test]
fn appends_grow_the_file_by_what_they_count() {
    let d = tmp();
    let fileset = "entries = 1\nfilesize = \"4k\"\nsize_dist = \"fixed\"";
    let steps = "{ file = \"open\" }, { file = \"append\", bs = \"1000\" }, { file = \"close\" }";
    let out = run_plan(&job(fileset, "", steps), d.path());
    let appended = bytes(&out, OpKind::Append);
    assert_eq!(appended, ops(&out, OpKind::Append) * 1000);
    let (_, len) = files(&tree_root(d.path(), "t"))[0].clone();
    // An append that finished after the window closed grew the file but is not counted.
    assert!(
        (appended..=appended + 1000).contains(&(len - 4096)),
        "{len} {appended}"
    );

    let d = tmp();
    let steps = "{ file = \"append\", bs = \"1000\", random = true }";
    let out = run_plan(&job(fileset, "", steps), d.path());
    let mean = bytes(&out, OpKind::Append) as f64 / ops(&out, OpKind::Append) as f64;
    assert!(
        (400.0..600.0).contains(&mean),
        "1 to 1000 bytes: mean {mean}"
    );
    assert_eq!(
        ops(&out, OpKind::Open),
        0,
        "the file stays open across passes"
    );
}

#[test]
fn fsync_stat_setattr_and_readdir_each_count_under_their_kind() {
    let d = tmp();
    let steps = "{ file = \"open\" }, { file = \"fsync\" }, { file = \"close\" }, \
                 { file = \"stat\" }, { file = \"setattr\" }, { file = \"readdir\" }";
    let plan = job(&format!("entries = 30\n{FIXED}"), "", steps);
    let started = std::time::SystemTime::now();
    let out = run_plan(&plan, d.path());
    for kind in [OpKind::Sync, OpKind::Stat, OpKind::Setattr, OpKind::Readdir] {
        let o = op(&out, kind).unwrap_or_else(|| panic!("no {kind:?}"));
        assert!(o.ops > 10 && o.lat.is_some(), "{kind:?}: {}", o.ops);
    }
    let touched = files(&tree_root(d.path(), "t"))
        .iter()
        .filter(|(p, _)| std::fs::metadata(p).unwrap().modified().unwrap() >= started)
        .count();
    assert!(touched > 0, "setattr set the times of some files");
}

#[test]
fn a_mix_draws_its_steps_by_weight_and_reads_and_writes_bs() {
    let d = tmp();
    let steps = "{ file = \"stat\", weight = 6 }, { file = \"read\", bs = \"4k\", weight = 2 }, \
                 { file = \"write\", bs = \"4k\", weight = 1 }, { file = \"setattr\", weight = 0 }";
    let fileset = "entries = 50\nfilesize = \"16k\"\nsize_dist = \"fixed\"";
    let out = run_plan(&job(fileset, "mix = true", steps), d.path());
    let (stats, reads, writes) = (
        ops(&out, OpKind::Stat) as f64,
        ops(&out, OpKind::Read),
        ops(&out, OpKind::Write),
    );
    assert!(reads > 200, "{reads}");
    assert!(
        (stats / reads as f64 - 3.0).abs() < 0.4,
        "6:2 gave {stats}:{reads}"
    );
    assert!(
        (reads as f64 / writes as f64 - 2.0).abs() < 0.4,
        "2:1 gave {reads}:{writes}"
    );
    assert_eq!(ops(&out, OpKind::Setattr), 0, "weight 0 never runs");
    assert_eq!(bytes(&out, OpKind::Read), reads * 4096);
    assert_eq!(bytes(&out, OpKind::Write), writes * 4096);
    assert_eq!(
        ops(&out, OpKind::Open),
        0,
        "a mix's operations open and close inside"
    );
}

#[test]
fn file_operations_follow_rate_iops_with_service_time_beside() {
    let d = tmp();
    let fileset = "entries = 20\nfilesize = \"4k\"";
    let out = run_plan(
        &job(fileset, "rate_iops = 300", "{ file = \"stat\" }"),
        d.path(),
    );
    let stat = op(&out, OpKind::Stat).unwrap();
    assert!(
        (100..=135).contains(&stat.ops),
        "300/s for 0.4 s: {}",
        stat.ops
    );
    assert!(stat.service.is_some());
}

fn builtin_run(name: &str, set: &str) -> RunOutput {
    let d = tmp();
    let plan = builtin(name)
        .unwrap()
        .plan(&Settings::parse_set(&format!("{set},ramp_time=0")).unwrap())
        .unwrap();
    run_plan(&plan, d.path())
}

#[test]
fn the_file_serving_personalities_run_their_flows() {
    let fileserver = "nfiles=200,nthreads=4,meanfilesize=16k,runtime=1s";
    let out = builtin_run("fileserver", fileserver);
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
        let o = op(&out, k).unwrap_or_else(|| panic!("fileserver: no {k:?}"));
        assert!(o.ops > 10, "{k:?}: {} ops", o.ops);
        let lat = o.lat.as_ref().unwrap();
        assert!(lat.min_ns > 0 && lat.at(50.0).unwrap() <= lat.at(99.0).unwrap());
    }
    let out = builtin_run("varmail", "nthreads=4,runtime=1s");
    assert!(ops(&out, OpKind::Sync) > 10 && ops(&out, OpKind::Delete) > 10);
    let out = builtin_run("webserver", "nthreads=4,runtime=1s");
    let reads = ops(&out, OpKind::ReadFile);
    assert!(reads > 100, "{reads}");
    let appends = ops(&out, OpKind::Append);
    assert!(
        reads.abs_diff(10 * appends) <= 40,
        "ten page reads per log append: {reads} {appends}"
    );
    let out = builtin_run("nfsmix", "rate_hint=2,runtime=1s");
    assert!(ops(&out, OpKind::Stat) > ops(&out, OpKind::Read));
    assert!(ops(&out, OpKind::Read) > ops(&out, OpKind::Write));
}
