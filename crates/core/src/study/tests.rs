//! Studies expand as written, and a study file refuses what it would ignore, at its line.

use super::*;

fn study(stacks: &[&str], sweeps: &[&str], repeat: u32) -> Study {
    Study {
        stacks: stacks.iter().map(|s| s.to_string()).collect(),
        stack_defs: Default::default(),
        workloads: vec![StudyWorkload::from_flags(
            "slob",
            vec![("readers".into(), "32".into())],
        )],
        sweeps: sweeps.iter().map(|s| Sweep::parse(s).unwrap()).collect(),
        repeat,
        baseline: None,
        min_effect: 0.05,
        size: "1g".into(),
        mem_limit: None,
        crash_states: None,
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
    assert!(p.cells.iter().any(
        |c| c.stack == "zfs:recordsize=32k" && c.set.contains(&("block".into(), "32k".into()))
    ));
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
    let stacks = [
        "raw",
        "zfs:arc=100m",
        "zfs:recordsize=8k,primarycache=metadata",
    ];
    let expand = || study(&stacks, &[], 1).expand().unwrap();
    let (p, again) = (expand(), expand());
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

fn parse(text: &str) -> Result<Study, SettingError> {
    parse_study(text, "s.toml")
}

const WORKLOAD: &str = "[[workload]]\nname = \"slob\"\n";

#[test]
fn study_files_refuse_unknown_keys_and_wrong_types_at_their_line() {
    let e = parse(&format!("stacks = [\"ext4\"]\n\nrepat = 5\n{WORKLOAD}")).unwrap_err();
    assert_eq!(
        (e.origin.to_string(), e.key.as_str()),
        ("s.toml:3".into(), "repat")
    );
    assert!(
        e.message.contains(
            "unknown key (allowed: baseline, crash_states, mem_limit, min_effect, ramp, repeat"
        ),
        "{e}"
    );
    let e = parse(&format!("stacks = [\"ext4\"]\nrepeat = \"5\"\n{WORKLOAD}")).unwrap_err();
    assert_eq!(
        e.to_string(),
        "s.toml:2: repeat: expected a whole number (repeat = 3), found a string"
    );
    let e = parse(&format!(
        "stacks = [\"ext4\"]\nrepeat = 100000000000\n{WORKLOAD}"
    ))
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "s.toml:2: repeat: 100000000000 is out of range (allowed 1 to 10000)"
    );
    let e = parse(&format!("stacks = \"ext4\"\n{WORKLOAD}")).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("s.toml:1: stacks: expected a list"),
        "{e}"
    );
    let e = parse(&format!("stacks = [\"ext4\"]\nsize = \"big\"\n{WORKLOAD}")).unwrap_err();
    assert_eq!(e.origin.to_string(), "s.toml:2", "{e}");
    let e = parse(&format!(
        "stacks = [\"ext4\"]\n{WORKLOAD}readers = [1, 2]\n"
    ))
    .unwrap_err();
    assert_eq!(
        (e.origin.to_string(), e.key.as_str()),
        ("s.toml:4".into(), "workload.slob.readers")
    );
}

#[test]
fn sweeps_must_apply_to_something_and_only_once() {
    let text = format!("stacks = [\"ext4\"]\nsweep = [\n  \"slob.block=8k,32k\",\n  \"zfs.recordsize=8k\",\n]\n{WORKLOAD}");
    let e = parse(&text).unwrap().expand().unwrap_err();
    assert!(
        e.starts_with("s.toml:4: zfs.recordsize: no stack of type 'zfs'"),
        "{e}"
    );
    assert!(e.contains("stack types: ext4; workloads: slob"), "{e}");
    let twice =
        format!("stacks = [\"ext4\"]\nsweep = [\"block=8k\", \"slob.block=16k\"]\n{WORKLOAD}");
    let e = parse(&twice).unwrap().expand().unwrap_err();
    assert!(
        e.starts_with("s.toml:2: slob.block: 'block' is swept twice"),
        "{e}"
    );
    let flags = study(&["ext4"], &["nosuch.bs=4k"], 1).expand().unwrap_err();
    assert!(
        flags.starts_with("--sweep: nosuch.bs: no stack of type 'nosuch'"),
        "{flags}"
    );
    let e = parse(&format!(
        "stacks = [\"ext4\"]\nsweep = [\"block\"]\n{WORKLOAD}"
    ))
    .unwrap_err();
    assert_eq!(e.origin.to_string(), "s.toml:2", "{e}");
}

#[test]
fn workload_settings_keep_the_line_they_were_written_on() {
    let text = format!(
        "stacks = [\"ext4\"]\nsweep = [\"slob.block=8k\"]\n{WORKLOAD}readers = 4\nwriterz = 2\n"
    );
    let plan = parse(&text).unwrap().expand().unwrap();
    let settings = plan.cells[0].settings();
    assert_eq!(
        settings.get("readers").unwrap().origin.to_string(),
        "s.toml:5"
    );
    assert_eq!(
        settings.get("block").unwrap().origin.to_string(),
        "s.toml:2"
    );
    let slob = crate::workload::builtin("slob").unwrap();
    let e = slob.plan(&settings).unwrap_err();
    assert_eq!(e.origin.to_string(), "s.toml:6", "{e}");
    assert_eq!(e.key, "writerz");
}

#[test]
fn stacks_of_one_spec_with_different_settings_are_two_cells() {
    let stack = |name: &str, page: &str| {
        format!("[[stack]]\nname = \"{name}\"\nspec = \"ext4\"\nset = {{ \"sqlite.page_size\" = \"{page}\" }}\n")
    };
    let workload = "[[workload]]\nname = \"tpch\"\ndb = \"sqlite\"\n";
    let text = stack("4k", "4096") + &stack("8k", "8192") + workload;
    assert_eq!(parse(&text).unwrap().expand().unwrap().cells.len(), 2);
    let text = stack("4k", "4096") + &stack("again", "4096") + workload;
    let e = parse(&text).unwrap().expand().unwrap_err();
    assert!(e.contains("same cell twice"), "{e}");
}

#[test]
fn the_same_workload_twice_with_different_settings_is_two_cells() {
    let text = "stacks = [\"ext4\", \"xfs\"]\n[[workload]]\nname = \"slob\"\nwriters = 0\n[[workload]]\nname = \"slob\"\nreaders = 0\n";
    let plan = parse(text).unwrap().expand().unwrap();
    assert_eq!(plan.cells.len(), 4);
    let labels: Vec<&str> = plan.cells.iter().map(|c| c.label.as_str()).collect();
    assert_eq!(
        labels,
        [
            "ext4 / slob writers=0",
            "ext4 / slob readers=0",
            "xfs / slob writers=0",
            "xfs / slob readers=0"
        ]
    );
    assert_ne!(plan.cells[0].id, plan.cells[1].id);
    assert_eq!(
        plan.baseline_of[3],
        Some(1),
        "each is compared with its own kind"
    );
    let same = "stacks = [\"ext4\"]\n[[workload]]\nname = \"slob\"\nwriters = 0\n[[workload]]\nname = \"slob\"\nwriters = 0\n";
    let e = parse(same).unwrap().expand().unwrap_err();
    assert!(e.contains("the same cell twice"), "{e}");
}

#[test]
fn a_unique_start_of_a_stack_spec_selects_the_baseline() {
    let mut s = study(
        &["ext4", "raw:size=2g", "zfs:arc=100m", "zfs:recordsize=8k"],
        &[],
        1,
    );
    s.baseline = Some("raw".into());
    let plan = s.expand().unwrap();
    assert_eq!(plan.study.baseline.as_deref(), Some("raw:size=2g"));
    assert_eq!(plan.baseline_of[0], Some(1));
    s.baseline = Some("zfs".into());
    let e = s.expand().unwrap_err();
    assert!(
        e.contains("several stacks (zfs:arc=100m, zfs:recordsize=8k)"),
        "{e}"
    );
    s.baseline = Some("btrfs".into());
    assert!(s.expand().unwrap_err().contains("not one of the stacks"));
    let text = format!("stacks = [\"raw:size=2g\", \"ext4\"]\nbaseline = \"raw\"\n{WORKLOAD}");
    assert_eq!(
        parse(&text).unwrap().baseline.as_deref(),
        Some("raw:size=2g")
    );
}

#[test]
fn messages_echo_at_most_200_characters_of_a_value() {
    let long = "x".repeat(5000);
    let e = parse(&format!(
        "stacks = [\"ext4\"]\nsize = \"{long}\"\n{WORKLOAD}"
    ))
    .unwrap_err();
    assert!(e.to_string().len() < 400, "{e}");
    assert!(e.to_string().contains('…'), "{e}");
    let mut s = study(&["ext4"], &[], 1);
    s.baseline = Some(long);
    assert!(s.expand().unwrap_err().len() < 400);
}

#[test]
fn repeat_from_flags_has_the_same_range() {
    assert!(study(&["ext4"], &[], 0)
        .expand()
        .unwrap_err()
        .contains("allowed 1 to 10000"));
    assert!(study(&["ext4"], &[], MAX_REPEAT + 1).expand().is_err());
}

#[test]
fn a_study_too_large_to_plan_is_refused_before_expanding() {
    let values: Vec<String> = (1..=100).map(|i| format!("{i}k")).collect();
    let sweep = |key: &str| format!("slob.{key}={}", values.join(","));
    let sweeps = [sweep("block"), sweep("offset"), sweep("readers")];
    let refs: Vec<&str> = sweeps.iter().map(String::as_str).collect();
    let e = study(&["ext4"], &refs, 1).expand().unwrap_err();
    assert!(
        e.contains("1000000 cells x 1 repetitions: at most 10000 cells"),
        "{e}"
    );
    let e = study(&["ext4"], &refs[..2], 11).expand().unwrap_err();
    assert!(e.contains("at most 10000 cells and 100000 runs"), "{e}");
    assert_eq!(
        study(&["ext4"], &refs[..2], 10)
            .expand()
            .unwrap()
            .order
            .len(),
        100_000
    );
}

#[test]
fn stack_tables_name_a_spec_a_log_stack_and_settings_of_their_own() {
    let text = "stacks = [\"ext4\"]\n\
        [[stack]]\nname = \"zfs tuned\"\nspec = \"zfs:recordsize=8k\"\nlog = \"zfs\"\n\
        set = { \"pg.full_page_writes\" = \"off\", terminals = 2 }\n\
        [[workload]]\nname = \"tpcc\"\nterminals = 8\n";
    let s = parse(text).unwrap();
    assert_eq!(s.stacks, ["ext4", "zfs tuned"]);
    let plan = s.expand().unwrap();
    let tuned = &plan.cells[1];
    assert_eq!(
        (tuned.label.as_str(), tuned.stack.as_str()),
        ("zfs tuned / tpcc", "zfs:recordsize=8k")
    );
    assert_eq!(tuned.log_stack.as_deref(), Some("zfs"));
    // The stack's own settings apply, the workload's win, and the cells still pair up.
    let set = tuned.settings();
    assert_eq!(set.get("pg.full_page_writes").unwrap().value, "off");
    assert_eq!(set.get("terminals").unwrap().value, "8");
    assert_eq!(plan.baseline_of[1], Some(0));
    assert_eq!(plan.cells[0].settings().get("pg.full_page_writes"), None);

    let e = parse("[[stack]]\nname = \"a\"\n[[workload]]\nname = \"tpcc\"\n").unwrap_err();
    assert_eq!(
        e.to_string(),
        "s.toml:1: stack: needs spec = \"...\" (name, spec; log and set are optional)"
    );
    let e = parse("stacks = [\"a\"]\n[[stack]]\nname = \"a\"\nspec = \"ext4\"\n[[workload]]\nname = \"tpcc\"\n")
        .unwrap_err();
    assert!(e.to_string().contains("names two stacks"), "{e}");
    let e = parse(
        "[[stack]]\nname = \"a\"\nspec = \"ext4\"\nlogs = \"x\"\n[[workload]]\nname = \"tpcc\"\n",
    )
    .unwrap_err();
    assert_eq!(
        (e.origin.to_string(), e.key.as_str()),
        ("s.toml:4".into(), "stack.logs")
    );
}

#[test]
fn a_study_ramp_goes_to_every_workload_without_its_own_and_is_checked_at_its_line() {
    let text = "stacks = [\"ext4\"]\nramp = \"until=mean>15ms\"\n\
                [[workload]]\nname = \"randread\"\n\
                [[workload]]\nname = \"randrw\"\nramp = \"until=p99>5ms\"\n";
    let s = parse(text).unwrap();
    let ramp_of = |w: &StudyWorkload| {
        let i = w.set.iter().position(|(k, _)| k == "ramp").unwrap();
        (w.set[i].1.clone(), w.origin_of(i).to_string())
    };
    assert_eq!(
        ramp_of(&s.workloads[0]),
        ("until=mean>15ms".into(), "s.toml:2".into())
    );
    assert_eq!(
        ramp_of(&s.workloads[1]),
        ("until=p99>5ms".into(), "s.toml:7".into())
    );
    let mut settings = s.expand().unwrap().cells[1].settings();
    let ramp = crate::ramp::take_from(&mut settings).unwrap().unwrap();
    assert_eq!(ramp.limit.max_ns, 5_000_000);
    assert!(settings.get("ramp").is_none(), "the workload never sees it");
    let e =
        parse("stacks = [\"ext4\"]\n\nramp = \"until=p95>1ms\"\n[[workload]]\nname = \"slob\"\n")
            .unwrap_err();
    assert_eq!(
        (e.origin.to_string(), e.key.as_str()),
        ("s.toml:3".into(), "ramp")
    );
    assert!(e.message.contains("'p95' is not a statistic"), "{e}");
}

#[test]
fn a_study_file_asks_for_crash_states_as_a_whole_number_from_one() {
    let ok = parse(&format!(
        "stacks = [\"ext4\"]\ncrash_states = 50\n{WORKLOAD}"
    ))
    .unwrap();
    assert_eq!(ok.crash_states, Some(50));
    let none = parse(&format!("stacks = [\"ext4\"]\n{WORKLOAD}")).unwrap();
    assert_eq!(none.crash_states, None);
    for (bad, says) in [("0", "give 1 or more"), ("\"50\"", "a whole number")] {
        let e = parse(&format!(
            "stacks = [\"ext4\"]\ncrash_states = {bad}\n{WORKLOAD}"
        ))
        .unwrap_err();
        assert_eq!(
            (e.origin.to_string(), e.key.as_str()),
            ("s.toml:2".into(), "crash_states")
        );
        assert!(e.message.contains(says), "{e}");
    }
}

#[test]
fn a_plan_grows_by_cells_added_after_the_saved_ones_only() {
    let saved = study(&["ext4", "xfs"], &[], 2).expand().unwrap();
    assert_eq!(saved.grows(&saved), Ok(0));
    let grown = study(&["ext4", "xfs", "zfs"], &[], 2).expand().unwrap();
    assert_eq!(grown.grows(&saved), Ok(1));
    // Not a prefix: a stack inserted before the saved ones, or one removed.
    let inserted = study(&["zfs", "ext4", "xfs"], &[], 2).expand().unwrap();
    let e = inserted.grows(&saved).unwrap_err();
    assert!(e.contains("cells differ") && e.contains("ext4"), "{e}");
    assert!(saved.grows(&grown).is_err());
    // The same cells run differently.
    let more = study(&["ext4", "xfs", "zfs"], &[], 3).expand().unwrap();
    assert!(more
        .grows(&saved)
        .unwrap_err()
        .contains("repeat was 2 and is 3"));
    let mut crash = study(&["ext4", "xfs", "zfs"], &[], 2);
    crash.crash_states = Some(10);
    let e = crash.expand().unwrap().grows(&saved).unwrap_err();
    assert!(e.contains("crash_states was None and is Some(10)"), "{e}");
}
