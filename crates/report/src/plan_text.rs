//! What `run --dry-run` prints: the resolved plan a person reads (the JSON goes to
//! `--json FILE`): the workload and its window, the files, each role and its loop, and every
//! resolved setting.

use crate::fmt::{duration, size};
use bakeoff_core::dbplan::{Db, DbPlan};
use bakeoff_core::plan::{IoMix, IoStep, Pattern, Plan, RolePlan, Step, SyncMode};
use bakeoff_core::recipe::{PhaseWork, RecipePlan};
use std::collections::BTreeMap;
use std::fmt::Write;

/// Version of the dry run's JSON (`{"schema_version", "plan"}`).
pub const PLAN_SCHEMA_VERSION: u32 = 1;

/// The dry run's JSON: the plan under `plan`, with `schema_version`.
pub fn render_json(plan: &impl serde::Serialize) -> String {
    #[derive(serde::Serialize)]
    struct Doc<'a, T> {
        schema_version: u32,
        plan: &'a T,
    }
    let doc = Doc {
        schema_version: PLAN_SCHEMA_VERSION,
        plan,
    };
    let mut s = serde_json::to_string_pretty(&doc).expect("plans serialise");
    s.push('\n');
    s
}

/// `30 s measured after 5 s of warm-up`, `30 s measured after a warm-up until steady (at most
/// 2 min)`, or `30 s measured, no warm-up`.
fn window(
    runtime: std::time::Duration,
    ramp: std::time::Duration,
    auto: Option<bakeoff_core::steady::AutoRamp>,
) -> String {
    let run = duration(runtime.as_nanos() as f64);
    if let Some(auto) = auto {
        format!(
            "{run} measured after a warm-up until steady (at most {})",
            duration(auto.max.as_nanos() as f64)
        )
    } else if ramp.is_zero() {
        format!("{run} measured, no warm-up")
    } else {
        format!(
            "{run} measured after {} of warm-up",
            duration(ramp.as_nanos() as f64)
        )
    }
}

/// The plan of an I/O or file workload.
pub fn render(plan: &Plan) -> String {
    let mut s = format!(
        "plan     {}: engine {}, {}, seed {}{}\n",
        plan.workload,
        plan.engine.name(),
        window(plan.runtime, plan.ramp_time, plan.ramp_auto),
        plan.seed,
        if plan.clients > 1 {
            format!(", {} client processes", plan.clients)
        } else {
            String::new()
        },
    );
    if let Some(r) = &plan.replay {
        let _ = writeln!(
            s,
            "replay   trace {}: {} calls by {} threads over {:.1} s; files {} at the start, up to {}",
            r.capture_id,
            bakeoff_core::units::format_count(r.ops),
            r.threads,
            r.duration.as_secs_f64(),
            size(r.layout_bytes),
            size(r.peak_bytes),
        );
    }
    let files: Vec<String> = (plan.filesets.iter())
        .map(|f| {
            let what = if f.tree.is_some() { "tree of" } else { "" };
            format!("{} {what} {} × {}", f.name, f.nrfiles, size(f.file_size)).replace("  ", " ")
        })
        .collect();
    let _ = writeln!(
        s,
        "files    {} ({} in all)",
        files.join("; "),
        size(plan.dataset_bytes())
    );
    if let Some(algorithm) = plan.verify {
        let _ = writeln!(s, "verify   {}", verify_text(plan, algorithm));
    }
    // A role of 0 threads (slob's sessions by default) does not run.
    let running = plan.roles.iter().filter(|r| r.threads > 0);
    for (i, role) in running.enumerate() {
        let label = if i == 0 { "roles" } else { "" };
        let _ = writeln!(s, "{label:<8} {}", role_line(plan, role));
    }
    s + &settings_lines(&plan.settings)
}

/// What `verify=` checks: each verified fileset's blocks, and those left unverified.
fn verify_text(plan: &Plan, algorithm: bakeoff_core::plan::Algorithm) -> String {
    let mut parts: Vec<String> = (plan.filesets.iter())
        .filter_map(|f| {
            let g = f.verify?;
            let at = match g.offset {
                0 => String::new(),
                o => format!(" from offset {o}"),
            };
            Some(format!(
                "{} in blocks of {}{at}",
                f.name,
                size(g.block_bytes)
            ))
        })
        .collect();
    let unverified: Vec<&str> = (plan.filesets.iter())
        .filter(|f| f.verify.is_none())
        .map(|f| f.name.as_str())
        .collect();
    if !unverified.is_empty() {
        parts.push(format!("not {} (redo, not blocks)", unverified.join(", ")));
    }
    format!(
        "{}: {}; every read checked, every block read back after the run",
        algorithm.name(),
        parts.join("; ")
    )
}

fn role_line(plan: &Plan, r: &RolePlan) -> String {
    let mut how = vec![if r.direct { "direct" } else { "buffered" }.to_string()];
    match r.sync_mode {
        SyncMode::None => {}
        m => how.push(format!("{m:?}").to_lowercase()),
    }
    if r.iodepth > 1 {
        how.push(format!("iodepth {}", r.iodepth));
    }
    if let Some(rate) = r.rate_iops {
        how.push(format!("{rate:.0} ops/s per thread"));
    }
    if let Some(e) = r.engine {
        how.push(format!("engine {}", e.name()));
    }
    let mut steps: Vec<String> = r.steps.iter().map(|st| step_text(plan, st)).collect();
    if r.db_writer {
        steps.push("writes the blocks sessions dirty".into());
    }
    if r.log_writer {
        steps.push("writes the redo commits hand it (group commit)".into());
    }
    format!(
        "{}: {} on {} ({}): {}",
        r.name,
        crate::fmt::count(u64::from(r.threads), "thread"),
        plan.filesets
            .get(r.fileset)
            .map_or("-", |f| f.name.as_str()),
        how.join(", "),
        steps.join(", ")
    )
}

fn io_text(io: &IoStep) -> String {
    let mix = match io.mix {
        IoMix::Read => "read".to_string(),
        IoMix::Write => "write".into(),
        IoMix::Update => "read and write back".into(),
        IoMix::Mixed { read_pct } => format!("{read_pct}% read, the rest write"),
    };
    let pattern = match io.pattern {
        Pattern::Random => "random",
        Pattern::Sequential => "sequential",
    };
    let count = io.count.map_or(String::new(), |n| format!(" ×{n}"));
    let aio = if io.async_io { " async" } else { "" };
    format!("{pattern}{aio} {mix} {}{count}", size(io.bs))
}

fn step_text(plan: &Plan, step: &Step) -> String {
    let role = |i: usize| plan.roles.get(i).map_or("?", |r| r.name.as_str());
    match step {
        Step::Io(io) => io_text(io),
        Step::Hog(n) => format!("CPU for {n} iterations"),
        Step::File(f) => format!("{} {}", f.op.name(), size(f.bs)),
        Step::Post(to) => {
            let names: Vec<&str> = to.iter().map(|&i| role(i)).collect();
            format!("post to {}", names.join(" and "))
        }
        Step::Wait => "wait for its gate".into(),
        Step::Commit { bytes, log_role } => {
            format!("commit {} through {}", size(*bytes), role(*log_role))
        }
        Step::Sync(k) => format!("{k:?}").to_lowercase(),
        Step::AioWait => "wait for its async I/O".into(),
        Step::Dirty { dbwriter, pct } => format!("dirty {pct}% for {}", role(*dbwriter)),
    }
}

/// The resolved settings, `key=value`, wrapped at 100 columns.
fn settings_lines(settings: &BTreeMap<String, String>) -> String {
    let mut s = String::new();
    let mut line = String::from("settings");
    for (k, v) in settings {
        let item = format!(" {k}={v}");
        if line.len() + item.len() > 100 && line.trim() != "settings" {
            let _ = writeln!(s, "{line}");
            line = " ".repeat(8);
        }
        line.push_str(&item);
    }
    if line.trim() != "settings" && !line.trim().is_empty() {
        let _ = writeln!(s, "{line}");
    }
    s
}

/// The plan of a database workload.
///
/// The `room` line says what `--size auto` sizes the stacks for: the load, a bound on what
/// the run adds with connections on `cpus` CPUs, and the WAL the server keeps (on the log
/// stack when `log_stack`).
pub fn render_db(plan: &DbPlan, log_stack: bool, cpus: u32) -> String {
    let mut s = format!(
        "plan     {} on {}: {}, seed {}\n",
        plan.workload,
        plan.db.name(),
        window(plan.runtime, plan.ramp_time, plan.ramp_auto),
        plan.seed,
    );
    let _ = write!(s, "room     {} loaded", size(plan.dataset_bytes()));
    let growth = plan.growth_bytes(cpus);
    if growth > 0 {
        let _ = write!(s, ", up to {} added while it runs", size(growth));
    }
    let wal = plan.wal_room_bytes();
    if wal > 0 {
        let place = if log_stack {
            "the log stack"
        } else {
            "the stack"
        };
        let _ = match plan.db {
            Db::Mariadb => write!(
                s,
                ", {} for the redo log on {place} (innodb_log_file_size {} and a margin)",
                size(wal),
                size(plan.innodb_log_file_size())
            ),
            _ => write!(
                s,
                ", up to {} of WAL on {place} (twice max_wal_size {})",
                size(wal),
                size(plan.max_wal_size())
            ),
        };
    }
    s.push('\n');
    s + &settings_lines(&plan.settings)
}

/// A command on one line of at most 90 characters: lines joined with `; `, the rest `…`.
fn one_line(cmd: &str) -> String {
    let joined = cmd
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("; ");
    match joined.char_indices().nth(90) {
        Some((i, _)) => format!("{}…", &joined[..i]),
        None => joined,
    }
}

/// The plan of a recipe: its phases in order.
pub fn render_recipe(plan: &RecipePlan) -> String {
    let mut s = format!(
        "plan     recipe {}: {} phases\n",
        plan.recipe,
        plan.phases.len()
    );
    for (i, p) in plan.phases.iter().enumerate() {
        let work = match &p.work {
            PhaseWork::Shell(cmd) => one_line(cmd),
            PhaseWork::Argv(argv) => argv.join(" "),
            PhaseWork::Action { name, .. } => format!("action {name}"),
        };
        let par = if p.parallel > 1 {
            format!(" (×{} at once)", p.parallel)
        } else {
            String::new()
        };
        let label = if i == 0 { "phases" } else { "" };
        let _ = writeln!(s, "{label:<8} {}{par}: {work}", p.name);
    }
    s + &settings_lines(&plan.params)
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_plan_reads_as_lines_not_json() {
        let w = bakeoff_core::workload::builtin("slob").unwrap();
        let plan = w.plan(&Default::default()).unwrap();
        let text = super::render(&plan);
        insta::assert_snapshot!(text);
        assert!(text.lines().count() < 20, "{text}");
        let json: serde_json::Value = serde_json::from_str(&super::render_json(&plan)).unwrap();
        assert_eq!(json["schema_version"], 1);
        assert_eq!(json["plan"]["workload"], "slob");
    }

    #[test]
    fn a_database_plan_says_the_room_its_stacks_are_sized_for() {
        let sets = bakeoff_core::settings::Settings::parse_set(
            "db=postgres,warehouses=4,terminals=8,runtime=60s,pg.max_wal_size=512MB",
        )
        .unwrap();
        let plan = bakeoff_core::dbplan::plan_db("tpcc", &sets).unwrap();
        let with_log = super::render_db(&plan, true, 2);
        let room = with_log.lines().find(|l| l.starts_with("room")).unwrap();
        assert_eq!(
            room,
            "room     520 MiB loaded, up to 1.4 GiB added while it runs, up to 1 GiB of WAL \
             on the log stack (twice max_wal_size 512 MiB)"
        );
        assert!(super::render_db(&plan, false, 2).contains("of WAL on the stack ("));
    }
}
