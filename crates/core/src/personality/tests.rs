//! Nothing written in a personality is ignored: every refusal names the key, the line it was
//! written on and what is allowed.

use crate::settings::{SettingError, Settings};
use crate::workload::{builtin, Workload};

/// The built-in slob as a user's file, with `from` replaced by `to`.
fn slob_with(from: &str, to: &str) -> String {
    let text = builtin("slob").unwrap().source;
    assert!(text.contains(from), "slob.toml has no {from:?}");
    text.replacen(from, to, 1)
}

/// Parses `text` as `mine.toml` and plans it with `set`.
fn plan(text: &str, set: &str) -> Result<crate::plan::Plan, SettingError> {
    Workload::parse("mine", text, "mine.toml")?.plan(&Settings::parse_set(set).unwrap())
}

/// The line of the first line of `text` containing `needle`.
fn line_of(text: &str, needle: &str) -> usize {
    text.lines().position(|l| l.contains(needle)).unwrap() + 1
}

/// Asserts `text` is refused at the line of `needle`, naming `key`.
fn refused_at(text: &str, needle: &str, key: &str) -> SettingError {
    let e = plan(text, "").unwrap_err();
    let at = format!("mine.toml:{}", line_of(text, needle));
    assert_eq!(e.origin.to_string(), at, "{e}");
    assert_eq!(e.key, key, "{e}");
    e
}

#[test]
fn unknown_keys_are_refused_at_their_line() {
    let top = slob_with("runtime = \"30s\"", "runtme = \"5s\"");
    let e = refused_at(&top, "runtme", "runtme");
    assert!(e.message.contains("unknown key (allowed: "), "{e}");
    assert!(e.message.contains("runtime"), "{e}");

    let role = slob_with("direct = \"$direct\"\noffset", "direcct = true\noffset");
    let e = refused_at(&role, "direcct", "role.reader.direcct");
    assert!(
        e.message.contains("direct, dirty_limit, engine, fdatasync"),
        "{e}"
    );

    let param = slob_with(
        "help = \"sessions that only read",
        "hlep = \"reader sessions",
    );
    refused_at(&param, "hlep", "params.readers.hlep");

    let fileset = slob_with("nrfiles = \"$datafiles\"", "nrfile = \"$datafiles\"");
    refused_at(&fileset, "nrfile", "fileset.data.nrfile");

    let step = slob_with("{ io = \"randread\", bs", "{ io = \"randread\", bss");
    let e = refused_at(&step, "bss", "role.reader.steps[0].bss");
    assert!(
        e.message
            .contains("allowed: async, bs, count, io, rwmixread"),
        "{e}"
    );

    let oltp = builtin("oltp")
        .unwrap()
        .source
        .replace("highwater = 2000", "highwatr = 2000");
    let e = plan(&oltp, "").unwrap_err();
    assert_eq!(e.key, "role.dbwr.gate.highwatr", "{e}");
    assert_eq!(
        e.origin.to_string(),
        format!("mine.toml:{}", line_of(&oltp, "highwatr"))
    );
}

#[test]
fn a_step_does_exactly_one_thing() {
    let two = slob_with("{ io = \"randread\",", "{ hog = 5, io = \"randread\",");
    let e = refused_at(&two, "hog = 5", "role.reader.steps[0].hog");
    assert!(e.message.contains("both io and hog"), "{e}");
    let hog_bs = slob_with(
        "{ io = \"randread\", bs = \"$block\" }",
        "{ hog = 5, bs = \"8k\" }",
    );
    refused_at(&hog_bs, "hog = 5", "role.reader.steps[0].bs");
    let wait = builtin("oltp")
        .unwrap()
        .source
        .replacen("{ wait = true }", "{ wait = false }", 1);
    let e = plan(&wait, "").unwrap_err();
    assert!(e.message.contains("wait = true"), "{e}");
}

#[test]
fn filesets_without_roles_are_not_a_default_job() {
    let text = "[[fileset]]\nname = \"data\"\nsize = \"1g\"\n";
    let e = Workload::parse("mine", text, "mine.toml").unwrap_err();
    assert_eq!(e.origin.to_string(), "mine.toml:1");
    assert!(e.message.contains("at least one [[role]]"), "{e}");
    let params_only = "[params]\nx = 1\n";
    assert!(Workload::parse("mine", params_only, "mine.toml").is_err());
}

#[test]
fn a_literal_zero_thread_role_is_refused_but_a_zero_parameter_disables_it() {
    let text = slob_with("threads = \"$writers\"", "threads = 0");
    let e = refused_at(&text, "threads = 0", "role.writer.threads");
    assert!(e.message.contains("allowed 1 to 4096"), "{e}");

    let slob = builtin("slob").unwrap();
    let p = slob
        .plan(&Settings::parse_set("writers=0").unwrap())
        .unwrap();
    assert_eq!(p.roles[1].threads, 0, "slob's documented --set writers=0");

    let e = slob
        .plan(&Settings::parse_set("writers=0,readers=0").unwrap())
        .unwrap_err();
    assert_eq!(e.origin.to_string(), "--set", "{e}");
    assert!(e.message.contains("nothing would run"), "{e}");
    assert!(
        e.message.contains("reader: readers=0, writer: writers=0"),
        "{e}"
    );
}

#[test]
fn names_are_unique_and_usable_in_file_names() {
    let roles = slob_with("name = \"lgwr\"", "name = \"reader\"");
    let e = plan(&roles, "").unwrap_err();
    assert_eq!(e.key, "role.name");
    assert!(e.message.contains("a second role named 'reader'"), "{e}");
    let at = roles.match_indices("name = \"reader\"").nth(1).unwrap().0;
    assert_eq!(
        e.origin.to_string(),
        format!("mine.toml:{}", roles[..at].lines().count() + 1)
    );

    let filesets = slob_with("name = \"redo\"", "name = \"data\"");
    let e = plan(&filesets, "").unwrap_err();
    assert!(e.message.contains("a second fileset named 'data'"), "{e}");

    let escape = slob_with("name = \"redo\"", "name = \"../../etc/redo\"");
    let e = refused_at(&escape, "../../etc", "fileset.name");
    assert!(e.message.contains("is not a name"), "{e}");
}

#[test]
fn blocks_must_fit_in_their_files() {
    let slob = builtin("slob").unwrap();
    let e = slob
        .plan(&Settings::parse_set("data_size=4k").unwrap())
        .unwrap_err();
    assert_eq!(e.to_string().split(':').next(), Some("--set"), "{e}");
    assert_eq!(e.key, "data_size", "{e}");
    let e = slob
        .plan(&Settings::parse_set("data_size=64k,block=32k").unwrap())
        .unwrap_err();
    assert_eq!(e.key, "block", "{e}");
    assert!(
        e.message
            .contains("too small for offset 0 plus one 32768-byte block"),
        "{e}"
    );
    let e = slob
        .plan(&Settings::parse_set("data_size=64k,offset=12k").unwrap())
        .unwrap_err();
    assert_eq!(e.key, "offset", "{e}");
    let big = slob_with(
        "{ io = \"randread\", bs = \"$block\" }",
        "{ io = \"randread\", bs = \"2g\" }",
    );
    refused_at(&big, "bs = \"2g\"", "role.reader.steps[0].bs");
}

#[test]
fn logwriters_take_only_what_they_use() {
    let text = slob_with(
        "kind = \"logwriter\"\nthreads = 1",
        "kind = \"logwriter\"\niodepth = 4\nthreads = 1",
    );
    let e = refused_at(&text, "iodepth = 4", "role.lgwr.iodepth");
    assert!(e.message.contains("does not apply to a logwriter"), "{e}");
    let silent = slob_with(
        "kind = \"logwriter\"\nthreads = 1",
        "kind = \"logwriter\"\nthreads = \"$loggers\"",
    )
    .replacen("[params]\n", "[params]\nloggers = 1\n", 1);
    if let Err(e) = plan(&silent, "") {
        panic!("{e}");
    }
    let e = plan(&silent, "loggers=0").unwrap_err();
    assert!(e.message.contains("no commit would ever be durable"), "{e}");
}

#[test]
fn parameters_must_be_declared_where_they_are_used() {
    let text = slob_with("bs = \"$block\" }]", "bs = \"$blok\" }]");
    let e = refused_at(&text, "$blok", "role.reader.steps[0].bs");
    assert!(e.message.contains("undeclared parameter $blok"), "{e}");
}
