//! Property tests of the job, personality and study parsers: no input panics, and no unknown
//! key is silently accepted. Each property runs 10,000 cases.

use bakeoff_core::keys::{
    FILESET_KEYS, GATE_KEYS, JOB_FILE_KEYS, JOB_KEYS, PARAM_KEYS, PERSONALITY_KEYS, ROLE_KEYS,
    RUN_KEYS, STEP_KEYS, STUDY_KEYS,
};
use bakeoff_core::settings::{Origin, SettingError, Settings};
use bakeoff_core::study::{parse_study, Study};
use bakeoff_core::workload::Workload;
use bakeoff_core::Plan;
use proptest::prelude::*;
use std::sync::OnceLock;

const CASES: u32 = 10_000;

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: CASES,
        failure_persistence: None,
        // ChaCha, the default, dominates the run time of an unoptimised build.
        rng_algorithm: proptest::test_runner::RngAlgorithm::XorShift,
        ..ProptestConfig::default()
    }
}

/// The source of a built-in workload.
fn source(name: &str) -> &'static str {
    &builtins().iter().find(|w| w.name == name).unwrap().source
}

/// Parses `text` as a user's file and plans it with `set`.
fn plan_file(text: &str, set: &Settings) -> Result<Plan, SettingError> {
    Workload::parse("fuzz", text, "fuzz.toml")?.plan(set)
}

/// A message stays readable whatever was written: values are echoed at most ~200 characters.
fn bounded(e: &SettingError) -> bool {
    e.to_string().chars().count() < 2000
}

/// A key no table knows.
fn unknown_key() -> impl Strategy<Value = String> {
    let tables = [
        RUN_KEYS,
        JOB_KEYS,
        JOB_FILE_KEYS,
        PERSONALITY_KEYS,
        PARAM_KEYS,
        FILESET_KEYS,
        ROLE_KEYS,
        GATE_KEYS,
        STEP_KEYS,
        STUDY_KEYS,
    ];
    "[a-z][a-z0-9_]{0,14}".prop_filter("a known key", move |k| {
        !tables.iter().any(|t| t.iter().any(|d| d.key == k)) && k != "name"
    })
}

/// A TOML value: plausible and implausible settings alike, mostly scalars.
fn value() -> impl Strategy<Value = String> {
    let words = vec![
        "8k",
        "4k",
        "512",
        "1000",
        "0",
        "1",
        "16",
        "1g",
        "64m",
        "2g",
        "-1",
        "30s",
        "1ms",
        "0s",
        "randread",
        "randwrite",
        "update",
        "randrw",
        "rw",
        "sideways",
        "psync",
        "io_uring",
        "null",
        "true",
        "dsync",
        "fsync",
        "fdatasync",
        "worker",
        "logwriter",
        "data",
        "redo",
        "datafiles",
        "logfile",
        "reader",
        "writer",
        "lgwr",
        "dbwr",
        "shadow",
        "$readers",
        "$writers",
        "$block",
        "$iosize",
        "$iodepth",
        "$nosuch",
        "$",
        "5%",
        "",
    ];
    prop_oneof![
        2 => any::<i64>().prop_map(|i| i.to_string()),
        4 => (0u64..70_000).prop_map(|i| i.to_string()),
        1 => any::<bool>().prop_map(|b| b.to_string()),
        1 => any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(|f| format!("{f:e}")),
        8 => prop::sample::select(words).prop_map(|s| format!("\"{s}\"")),
        3 => "[a-z0-9$%._ -]{0,12}".prop_map(|s| format!("\"{s}\"")),
        1 => prop_oneof![
            Just("[1, 2]".to_string()),
            Just("{ a = 1 }".to_string()),
            Just("1979-05-27".to_string()),
        ],
    ]
}

/// `text` with the scalar values after `= ` replaced by `values` in turn (cycled; `None` keeps
/// what was written, so most documents stay close enough to valid to reach the planner's rules);
/// lists and tables keep their shape, comments stay.
fn with_values(text: &str, values: &[Option<String>]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut n = 0;
    for line in text.lines() {
        let mut rest = line;
        while let Some(at) = rest
            .find("= ")
            .filter(|_| !line.trim_start().starts_with('#'))
        {
            let (head, tail) = rest.split_at(at + 2);
            out.push_str(head);
            let len = scalar_len(tail);
            if len > 0 {
                let written = &tail[..len];
                out.push_str(values[n % values.len()].as_deref().unwrap_or(written));
                n += 1;
            }
            rest = &tail[len..];
        }
        out.push_str(rest);
        out.push('\n');
    }
    out
}

/// The length of the scalar `s` starts with (0 for a list or table).
fn scalar_len(s: &str) -> usize {
    match s.strip_prefix('"') {
        Some(body) => body.find('"').map_or(0, |i| i + 2),
        None if s.starts_with(['[', '{']) => 0,
        None => s.find([',', '}', ']', ' ']).unwrap_or(s.len()),
    }
}

/// Replacement values for [`with_values`]: each of `len` slots changes with probability `p`.
fn some_values(len: usize, p: f64) -> impl Strategy<Value = Vec<Option<String>>> {
    prop::collection::vec(prop::option::weighted(p, value()), len)
}

/// Random `--set` settings over `keys`.
fn user_settings(keys: &'static [&'static str]) -> impl Strategy<Value = Settings> {
    prop::collection::vec((prop::sample::select(keys), value()), 0..4).prop_map(|pairs| {
        let mut s = Settings::default();
        for (k, v) in pairs {
            s.insert(k, v.trim_matches('"'), Origin::CommandLine);
        }
        s
    })
}

const SLOB_SET: &[&str] = &[
    "readers",
    "writers",
    "block",
    "data_size",
    "datafiles",
    "redo_size",
    "redo_per_commit",
    "direct",
    "offset",
    "iodepth",
    "engine",
    "runtime",
    "seed",
];
const OLTP_SET: &[&str] = &[
    "iosize",
    "shadows",
    "dbwriters",
    "usermode",
    "filesize",
    "nfiles",
    "logfilesize",
    "directio",
    "aio_depth",
    "engine",
    "runtime",
];
const JOB_SET: &[&str] = &[
    "rw",
    "bs",
    "iodepth",
    "jobs",
    "direct",
    "sync",
    "fsync",
    "fdatasync",
    "size",
    "offset",
    "nrfiles",
    "rate_iops",
    "engine",
    "rwmixread",
    "runtime",
];

/// Where an unknown key goes in a personality: (text to find, its occurrence, replacement).
fn personality_places() -> Vec<(&'static str, &'static str, &'static str)> {
    vec![
        ("slob", "\ndescription = ", "\nKEY = VALUE\ndescription = "),
        ("slob", "{ default = ", "{ KEY = VALUE, default = "),
        ("slob", "[[fileset]]\n", "[[fileset]]\nKEY = VALUE\n"),
        ("slob", "[[role]]\n", "[[role]]\nKEY = VALUE\n"),
        ("slob", "{ io = ", "{ KEY = VALUE, io = "),
        ("slob", ", log = \"lgwr\"", ", log = \"lgwr\", KEY = VALUE"),
        ("oltp", "gate = { value", "gate = { KEY = VALUE, value"),
        ("oltp", "{ hog = ", "{ KEY = VALUE, hog = "),
        ("oltp", "{ wait = true", "{ wait = true, KEY = VALUE"),
        (
            "oltp",
            "\nsync = \"dsync\"\n",
            "\nsync = \"dsync\"\nKEY = VALUE\n",
        ),
    ]
}

/// Replaces the `nth` occurrence (wrapping) of `find` in `text`.
fn replace_nth(text: &str, find: &str, nth: usize, with: &str) -> String {
    let spots: Vec<usize> = text.match_indices(find).map(|(i, _)| i).collect();
    assert!(!spots.is_empty(), "{find:?} not in the template");
    let at = spots[nth % spots.len()];
    format!("{}{with}{}", &text[..at], &text[at + find.len()..])
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn job_parser_never_panics_on_arbitrary_text(bytes in prop::collection::vec(any::<u8>(), 0..400)) {
        let text = String::from_utf8_lossy(&bytes);
        if let Err(e) = plan_file(&text, &Settings::default()) {
            prop_assert!(bounded(&e), "{e}");
        }
    }

    #[test]
    fn job_parser_never_panics_on_random_values(
        values in some_values(8, 0.3),
        set in user_settings(JOB_SET),
        template in prop::sample::select(vec!["randread", "randrw"]),
    ) {
        let text = with_values(source(template), &values);
        match plan_file(&text, &set) {
            Ok(plan) => prop_assert!(plan.threads() > 0 && plan.dataset_bytes() > 0),
            Err(e) => prop_assert!(bounded(&e), "{e}"),
        }
    }

    #[test]
    fn job_files_name_every_unknown_key(key in unknown_key(), value in value(), line in 0usize..8) {
        let text = source("randread");
        let lines: Vec<&str> = text.lines().collect();
        let at = line % (lines.len() + 1);
        let mut edited = lines[..at].join("\n");
        edited.push_str(&format!("\n{key} = {value}\n"));
        edited.push_str(&lines[at..].join("\n"));
        let e = plan_file(&edited, &Settings::default()).unwrap_err();
        prop_assert!(e.key.contains(&key) || e.message.contains(&key), "{key}: {e}");
    }

    #[test]
    fn personality_parser_never_panics_on_arbitrary_text(
        text in "(\\[\\[role\\]\\]\n|\\[\\[fileset\\]\\]\n|\\[params\\]\n|[a-z]{1,6} = (\"[$a-z0-9]{0,6}\"|[0-9]{1,3}|\\[\\{ io = \"read\" \\}\\])\n|.{0,20}\n){0,12}",
    ) {
        if let Err(e) = plan_file(&text, &Settings::default()) {
            prop_assert!(bounded(&e), "{e}");
        }
    }

    #[test]
    fn personality_parser_never_panics_on_random_values(
        values in some_values(64, 0.04),
        (template, set) in prop_oneof![
            (Just("slob"), user_settings(SLOB_SET)),
            (Just("oltp"), user_settings(OLTP_SET)),
        ],
    ) {
        let text = with_values(source(template), &values);
        match plan_file(&text, &set) {
            Ok(plan) => prop_assert!(plan.dataset_bytes() > 0 && !plan.roles.is_empty()),
            Err(e) => prop_assert!(bounded(&e), "{e}"),
        }
    }

    #[test]
    fn personality_files_name_every_unknown_key(
        key in unknown_key(),
        value in value(),
        place in prop::sample::select(personality_places()),
        nth in 0usize..4,
    ) {
        let (template, find, with) = place;
        let with = with.replace("KEY", &key).replace("VALUE", &value);
        let edited = replace_nth(source(template), find, nth, &with);
        let e = plan_file(&edited, &Settings::default()).unwrap_err();
        prop_assert!(e.key.contains(&key) || e.message.contains(&key), "{key} at {find:?}: {e}");
    }
}

const STUDY: &str = "stacks = [\"ext4\", \"xfs:mount=noatime\"]\nrepeat = 2\nbaseline = \"xfs\"\n\
min_effect = \"5%\"\nsize = \"1g\"\nsweep = [\"slob.block=8k,16k\", \"xfs.agcount=4\"]\n\
[[workload]]\nname = \"slob\"\nreaders = 2\ndata_size = \"64m\"\n";

/// The built-in workloads, parsed once.
fn builtins() -> &'static [Workload] {
    static ALL: OnceLock<Vec<Workload>> = OnceLock::new();
    ALL.get_or_init(bakeoff_core::workload::builtins)
}

/// Parses a study, expands it, and plans every cell of a built-in workload.
fn plan_study(text: &str) -> Result<(Study, Vec<Plan>), String> {
    let study = parse_study(text, "s.toml").map_err(|e| e.to_string())?;
    let expanded = study.expand()?;
    let mut plans = Vec::new();
    for cell in &expanded.cells {
        let Some(w) = builtins().iter().find(|w| w.name == cell.workload) else {
            continue;
        };
        plans.push(w.plan(&cell.settings()).map_err(|e| e.to_string())?);
    }
    Ok((study, plans))
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn study_parser_never_panics_on_arbitrary_text(bytes in prop::collection::vec(any::<u8>(), 0..300)) {
        let text = String::from_utf8_lossy(&bytes);
        if let Err(e) = plan_study(&text) {
            prop_assert!(e.chars().count() < 2000, "{e}");
        }
    }

    #[test]
    fn study_parser_never_panics_on_random_values(values in some_values(16, 0.15)) {
        let text = with_values(STUDY, &values);
        if let Err(e) = plan_study(&text) {
            prop_assert!(e.chars().count() < 2000, "{e}");
        }
    }

    #[test]
    fn study_files_name_every_unknown_key(key in unknown_key(), value in value(), top in any::<bool>()) {
        let text = if top {
            format!("{key} = {value}\n{STUDY}")
        } else {
            format!("{STUDY}{key} = {value}\n")
        };
        let e = plan_study(&text).unwrap_err();
        prop_assert!(e.contains(&format!("{key}:")), "{key}: {e}");
    }
}

#[test]
fn the_templates_plan_as_written() {
    // The properties above edit these; each must be valid to begin with.
    for name in ["randread", "randrw", "slob", "oltp"] {
        plan_file(source(name), &Settings::default()).unwrap();
    }
    let (study, plans) = plan_study(STUDY).unwrap();
    assert_eq!((study.stacks.len(), plans.len()), (2, 4));
}
