//! Layout: the same bytes for the same seed, reuse, and room checked before writing.

use super::*;
use bakeoff_core::settings::Settings;
use bakeoff_core::workload::builtin;
use std::io::Write;

fn plan(set: &str) -> Plan {
    builtin("randread")
        .unwrap()
        .plan(&Settings::parse_set(set).unwrap())
        .unwrap()
}

#[test]
fn same_seed_same_bytes_and_reuse() {
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let p = plan("size=3m,nrfiles=2,seed=9");
    let da = lay_out(&p, &Target::Directory(a.path().into()), &|_, _| true).unwrap();
    lay_out(&p, &Target::Directory(b.path().into()), &|_, _| true).unwrap();
    assert!(!da.reused);
    for i in 0..2 {
        let name = format!("bakeoff-data.{i}");
        let x = std::fs::read(a.path().join(&name)).unwrap();
        assert_eq!(x.len(), 3 * 512 * 1024);
        assert_eq!(x, std::fs::read(b.path().join(&name)).unwrap());
    }
    let again = lay_out(&p, &Target::Directory(a.path().into()), &|_, _| true).unwrap();
    assert!(again.reused);
    let other = lay_out(
        &plan("size=2m,seed=9"),
        &Target::Directory(a.path().into()),
        &|_, _| true,
    )
    .unwrap();
    assert!(!other.reused);
    assert!(
        !a.path().join("bakeoff-data.1").exists(),
        "the old layout's files are removed"
    );
    remove_dataset(a.path());
    assert_eq!(std::fs::read_dir(a.path()).unwrap().count(), 0);
}

#[test]
fn no_space_is_reported_before_writing() {
    let dir = tempfile::tempdir().unwrap();
    let p = plan("size=1000t");
    let err = lay_out(&p, &Target::Directory(dir.path().into()), &|_, _| true).unwrap_err();
    assert!(err.to_string().contains("not enough space"), "{err}");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

fn tree_plan(set: &str) -> Plan {
    builtin("varmail")
        .unwrap()
        .plan(&Settings::parse_set(set).unwrap())
        .unwrap()
}

#[test]
fn a_changed_tree_is_repaired_to_its_plan_when_reused() {
    let dir = tempfile::tempdir().unwrap();
    let target = Target::Directory(dir.path().into());
    let p = tree_plan("nfiles=50,nthreads=2,meanfilesize=4k");
    let first = lay_out(&p, &target, &|_, _| true).unwrap();
    assert!(!first.reused);
    let tree = plan_trees(&p)[0].clone().unwrap();
    let root = tree_root(dir.path(), "bigfileset");
    let path = |i: usize| root.join(tree.file_path(i as u32));
    let existing: Vec<usize> = (0..50).filter(|&i| tree.files[i].exists).collect();
    let absent = (0..50).find(|&i| !tree.files[i].exists).unwrap();
    for (i, f) in tree.files.iter().enumerate() {
        let len = std::fs::metadata(path(i)).map(|m| m.len()).ok();
        assert_eq!(len, f.exists.then_some(f.size), "file {i}");
    }
    // What a run does: delete one, append to another, create a third.
    let (gone, grown) = (existing[0], existing[1]);
    std::fs::remove_file(path(gone)).unwrap();
    std::fs::OpenOptions::new()
        .append(true)
        .open(path(grown))
        .unwrap()
        .write_all(&[7; 100])
        .unwrap();
    std::fs::write(path(absent), b"created").unwrap();
    let again = lay_out(&p, &target, &|_, _| true).unwrap();
    assert!(again.reused);
    let rewritten = tree.files[gone].size + tree.files[grown].size;
    assert_eq!(again.written_bytes, rewritten);
    assert!(
        !path(absent).exists(),
        "a file the plan does not have is removed"
    );
    assert_eq!(
        std::fs::metadata(path(grown)).unwrap().len(),
        tree.files[grown].size
    );
    assert!(path(gone).exists());
}

#[test]
fn clients_get_copies_of_their_own_removed_with_the_dataset() {
    let dir = tempfile::tempdir().unwrap();
    let target = Target::Directory(dir.path().into());
    let p = tree_plan("nfiles=20,nthreads=1,meanfilesize=4k,clients=3");
    let d = lay_out(&p, &target, &|_, _| true).unwrap();
    assert_eq!(
        d.client_dirs,
        (0..3)
            .map(|c| client_dir(dir.path(), c))
            .collect::<Vec<_>>()
    );
    let size = |c: u32| {
        std::fs::read_dir(tree_root(&client_dir(dir.path(), c), "bigfileset"))
            .unwrap()
            .count()
    };
    assert!(size(0) > 0 && size(2) > 0);
    let fewer = tree_plan("nfiles=20,nthreads=1,meanfilesize=4k,clients=1");
    assert!(
        lay_out(&fewer, &target, &|_, _| true).unwrap().reused,
        "client 0's copy is the same"
    );
    assert!(
        !client_dir(dir.path(), 2).exists(),
        "copies of clients beyond the plan go"
    );
    remove_dataset(dir.path());
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}
