//! The plan honours iodepth, and a rule shared by plain jobs and personalities says the same.

use crate::plan::{EngineKind, IoStep, Step};
use crate::settings::{SettingError, Settings};
use crate::workload::{builtin, Workload};

fn plan(name: &str, set: &str) -> Result<crate::plan::Plan, SettingError> {
    builtin(name)
        .unwrap()
        .plan(&Settings::parse_set(set).unwrap())
}

fn io_steps(p: &crate::plan::Plan, role: &str) -> Vec<IoStep> {
    let r = p.roles.iter().find(|r| r.name == role).unwrap();
    r.steps
        .iter()
        .filter_map(|s| match s {
            Step::Io(io) => Some(io.clone()),
            _ => None,
        })
        .collect()
}

#[test]
fn a_role_whose_loop_is_one_io_step_streams_at_its_iodepth() {
    let p = plan("slob", "engine=io_uring,iodepth=16").unwrap();
    let reader = p.roles.iter().find(|r| r.name == "reader").unwrap();
    assert_eq!(reader.iodepth, 16);
    assert_eq!(
        io_steps(&p, "reader")[0].count,
        None,
        "16 I/Os in flight across passes"
    );
    assert_eq!(
        io_steps(&p, "writer")[0].count,
        Some(1),
        "the writer commits after each update"
    );
    let job = plan("randread", "engine=io_uring,iodepth=8").unwrap();
    assert_eq!(
        (job.roles[0].iodepth, io_steps(&job, "job")[0].count),
        (8, None)
    );
}

#[test]
fn an_iodepth_a_loop_with_other_steps_cannot_reach_is_refused() {
    assert!(plan("oltp", "engine=io_uring,aio_depth=100").is_ok());
    let e = plan("oltp", "engine=io_uring,aio_depth=200").unwrap_err();
    assert_eq!(
        (e.origin.to_string(), e.key.as_str()),
        ("--set".into(), "aio_depth")
    );
    assert!(
        e.message
            .contains("iodepth=200 but this I/O step issues count=100"),
        "{e}"
    );
    assert!(
        e.message.contains("raise the step's count to at least 200"),
        "{e}"
    );

    let text = builtin("slob").unwrap().source.replacen(
        "direct = \"$direct\"\noffset = \"$offset\"\nsteps = [\n",
        "direct = \"$direct\"\noffset = \"$offset\"\niodepth = 4\nsteps = [\n",
        1,
    );
    assert!(text.contains(
        "iodepth = 4\nsteps = [\n    { io = \"randread\", bs = \"$block\" },\n    { dirty"
    ));
    let w = Workload::parse("mine", &text, "mine.toml").unwrap();
    let e = w
        .plan(&Settings::parse_set("engine=io_uring").unwrap())
        .unwrap_err();
    let line = text.lines().position(|l| l == "iodepth = 4").unwrap() + 1;
    assert_eq!(
        e.to_string().split(": ").next(),
        Some(format!("mine.toml:{line}").as_str())
    );
    assert_eq!(e.key, "role.writer.iodepth");
}

#[test]
fn psync_refuses_iodepth_in_one_message_for_jobs_and_personalities() {
    let job = plan("randread", "iodepth=8").unwrap_err();
    let slob = plan("slob", "iodepth=8").unwrap_err();
    assert_eq!(job.message, slob.message);
    assert!(
        job.message.contains("needs an asynchronous engine"),
        "{job}"
    );
    assert_eq!(
        (job.key.as_str(), slob.key.as_str()),
        ("iodepth", "iodepth")
    );
    assert!(plan("slob", "iodepth=8,writers=0,readers=1,engine=null").is_ok());
}

#[test]
fn async_io_dirty_steps_and_db_writers_are_checked() {
    let oltp = builtin("oltp").unwrap().source;
    let no_wait = oltp.replace("    { aiowait = true },\n", "");
    let e = Workload::parse("mine", &no_wait, "mine.toml")
        .unwrap()
        .plan(&Settings::default())
        .unwrap_err();
    assert!(e.message.contains("needs an aiowait = true step"), "{e}");
    let stray = oltp.replace("count = 100, async = true", "count = 100");
    let e = Workload::parse("mine", &stray, "mine.toml")
        .unwrap()
        .plan(&Settings::default())
        .unwrap_err();
    assert!(e.message.contains("this loop has none"), "{e}");

    let slob = builtin("slob").unwrap().source;
    let to_log = slob.replace(
        "{ dirty = \"dbwr\", pct = 100 }",
        "{ dirty = \"lgwr\", pct = 100 }",
    );
    let e = Workload::parse("mine", &to_log, "mine.toml")
        .unwrap()
        .plan(&Settings::default())
        .unwrap_err();
    assert!(e.message.contains("not kind = \"dbwriter\""), "{e}");
    let limit = slob.replace(
        "name = \"reader\"\nthreads",
        "name = \"reader\"\ndirty_limit = 5\nthreads",
    );
    let e = Workload::parse("mine", &limit, "mine.toml")
        .unwrap()
        .plan(&Settings::default())
        .unwrap_err();
    assert!(e.message.contains("dbwriter\" role only"), "{e}");
    let p = plan("slob", "sessions=2,update_pct=40").unwrap();
    let dbwr = p.roles.iter().find(|r| r.name == "dbwr").unwrap();
    assert!(dbwr.db_writer && dbwr.dirty_limit == 10_000);
    assert_eq!(dbwr.engine, Some(EngineKind::IoUring));
}

#[test]
fn the_help_of_rw_and_io_names_every_io_kind_the_planner_takes() {
    let help = crate::keys::IO_KINDS_HELP;
    let words: Vec<&str> = help
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    for (name, _, _) in super::IO_KINDS {
        assert!(words.contains(name), "'{name}' missing from: {help}");
    }
}
