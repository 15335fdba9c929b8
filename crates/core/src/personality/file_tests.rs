//! The rules of file steps and tree filesets: what a personality of file operations may say,
//! and what each refusal names.

use crate::plan::{Plan, Step};
use crate::settings::{SettingError, Settings};
use crate::workload::{builtin, Workload};

/// The built-in `name` as a user's file, with `from` replaced by `to`.
fn with(name: &str, from: &str, to: &str) -> String {
    let text = builtin(name).unwrap().source;
    assert!(text.contains(from), "{name}.toml has no {from:?}");
    text.replacen(from, to, 1)
}

fn plan(text: &str, set: &str) -> Result<Plan, SettingError> {
    Workload::parse("mine", text, "mine.toml")?.plan(&Settings::parse_set(set).unwrap())
}

/// Asserts `text` is refused naming `key`, with `words` in the message.
fn refused(text: &str, set: &str, key: &str, words: &str) {
    let e = plan(text, set).unwrap_err();
    assert_eq!(e.key, key, "{e}");
    assert!(e.message.contains(words), "{e}");
}

#[test]
fn file_steps_need_trees_and_io_steps_need_flat_files() {
    let flat = with(
        "fileserver",
        "entries = \"$nfiles\"\ndirwidth = \"$meandirwidth\"\nfilesize = \"$meanfilesize\"\nprealloc = \"$prealloc\"",
        "nrfiles = 4\nfilesize = \"1m\"",
    );
    refused(
        &flat,
        "",
        "role.filereader.fileset",
        "a file step needs a tree fileset",
    );
    let io_on_tree = with(
        "fileserver",
        "{ file = \"create\" },",
        "{ io = \"randread\" },",
    );
    refused(
        &io_on_tree,
        "",
        "role.filereader.steps[0].io",
        "only file and hog steps",
    );
    let stray = with("slob", "nrfiles = 1", "nrfiles = 1\ndirwidth = 4");
    refused(
        &stray,
        "",
        "fileset.redo.dirwidth",
        "applies to a directory tree",
    );
    let both = with("fileserver", "dirwidth = \"$meandirwidth\"", "nrfiles = 3");
    refused(
        &both,
        "",
        "fileset.bigfileset.nrfiles",
        "counts its files in entries",
    );
}

#[test]
fn file_roles_refuse_the_keys_of_block_io() {
    let role = |key: &str| {
        with(
            "fileserver",
            "fileset = \"bigfileset\"\nsteps",
            &format!("fileset = \"bigfileset\"\n{key}\nsteps"),
        )
    };
    refused(
        &role("direct = true"),
        "",
        "role.filereader.direct",
        "page cache",
    );
    refused(
        &role("iodepth = 4"),
        "",
        "role.filereader.iodepth",
        "one at a time",
    );
    refused(
        &role("fsync = 2"),
        "",
        "role.filereader.fsync",
        "{ file = \"fsync\" }",
    );
    refused(
        &role("engine = \"io_uring\""),
        "",
        "role.filereader.engine",
        "own system calls",
    );
    let bad = with("fileserver", "{ file = \"stat\" }", "{ file = \"chmod\" }");
    refused(
        &bad,
        "",
        "role.filereader.steps[10].file",
        "allowed: create, delete, open",
    );
    let random = with(
        "fileserver",
        "{ file = \"stat\" }",
        "{ file = \"stat\", random = true }",
    );
    refused(
        &random,
        "",
        "role.filereader.steps[10].random",
        "applies to append steps",
    );
}

#[test]
fn weights_belong_to_mixes_and_mixes_have_no_open_file() {
    let weight = with(
        "fileserver",
        "{ file = \"stat\" }",
        "{ file = \"stat\", weight = 3 }",
    );
    refused(
        &weight,
        "",
        "role.filereader.steps[10].weight",
        "mix = true",
    );
    let open = with(
        "nfsmix",
        "{ file = \"delete\", weight = 1 }",
        "{ file = \"open\", weight = 1 }",
    );
    refused(
        &open,
        "",
        "role.nfsd.steps[6].file",
        "opens and closes the file it works on",
    );
    let zero = plan(&builtin("nfsmix").unwrap().source, "").unwrap();
    assert_eq!(zero.roles[0].weights, vec![63, 18, 10, 4, 3, 1, 1]);
}

#[test]
fn threads_that_create_and_delete_need_a_file_each() {
    let p = plan(
        &builtin("fileserver").unwrap().source,
        "nfiles=50,nthreads=50",
    )
    .unwrap();
    assert_eq!(p.filesets[0].nrfiles, 50);
    let text = builtin("fileserver").unwrap().source;
    let e = plan(&text, "nfiles=49,nthreads=50").unwrap_err();
    assert_eq!(e.key, "nfiles", "{e}");
    assert!(
        e.message.contains("49 working-set files for 50 threads"),
        "{e}"
    );
    // Readers alone share every file: one page for 100 threads is fine.
    plan(&builtin("webserver").unwrap().source, "nfiles=1").unwrap();
}

#[test]
fn nfsmix_sizes_its_tree_by_the_offered_load() {
    let text = builtin("nfsmix").unwrap().source;
    let hint = plan(&text, "rate_hint=20,meanfilesize=10k,data_per_ops=1m").unwrap();
    assert_eq!(
        hint.filesets[0].nrfiles, 2048,
        "1 MiB per op/s x 20 op/s in 10 KiB files"
    );
    let rated = plan(&text, "rate=10,threads=4,meanfilesize=10k,data_per_ops=1m").unwrap();
    assert_eq!(rated.filesets[0].nrfiles, 4096, "4 threads x 10 op/s");
    let mut ramped = rated.clone();
    for r in &mut ramped.roles {
        r.rate_iops = Some(20.0);
    }
    assert!(ramped.fit_datasets_to_rate());
    assert_eq!(ramped.filesets[0].nrfiles, 8192);
    let tree = ramped.filesets[0].tree.as_ref().unwrap();
    assert_eq!((tree.working_set_pct, tree.prealloc_pct), (10, 90));
    let step_ops: Vec<&str> = (ramped.roles[0].steps.iter())
        .filter_map(|s| match s {
            Step::File(f) => Some(f.op.name()),
            _ => None,
        })
        .collect();
    assert_eq!(
        step_ops,
        ["stat", "read", "write", "setattr", "readdir", "create", "delete"]
    );
    let no_rate = with("nfsmix", "rate_hint = \"$rate_hint\"\n", "");
    refused(&no_rate, "", "data_per_ops", "needs a rate");
}

#[test]
fn clients_is_a_key_of_every_workload() {
    let p = builtin("randread")
        .unwrap()
        .plan(&Settings::parse_set("clients=4").unwrap())
        .unwrap();
    assert_eq!(p.clients, 4);
    assert_eq!(p.dataset_bytes(), 4 << 30, "every client has its own copy");
    assert_eq!(p.client_plan(1).clients, 0);
    assert_ne!(p.client_plan(1).seed, p.client_plan(2).seed);
    let e = builtin("fileserver")
        .unwrap()
        .plan(&Settings::parse_set("clients=5000").unwrap());
    assert!(e.unwrap_err().message.contains("out of range"));
}
