//! The README's one-screen tour as an executable test list: every command of the section "A
//! one-screen tour" is read from README.md itself (so the README cannot drift from what runs)
//! and run as written, as root, with these substitutions and nothing else:
//!
//! * `bakeoff` is the binary under test; each command runs in a scratch directory holding a
//!   link to the repository's `studies/`, with a private `BAKEOFF_STATE_DIR`; commands that
//!   build a ZFS stack run under `flock /tmp/bakeoff-zfs.lock` (one zfs-fuse per machine).
//! * Stand-ins for the paths a user would have: `/mnt/x` is a scratch directory on disk,
//!   `/dev/loop3` a 512 MiB loop device over a sparse image, `my-workload.toml` the TOML `bakeoff
//!   workloads show oltp` prints (what the tour's second line says to copy), `results/seed000`
//!   the results of a one-run comparison made by the test, `NAME` the name `stack create --keep`
//!   printed. Optional options in brackets (`[--resume] [--dry-run]`) are given; `results/seed000`
//!   is made just before the first `report` line.
//! * Shorter runs, by arguments appended to the line (`--set` is repeatable and the later value
//!   wins), listed per line in [`TOUR`]: `runtime=1s` (2s for TPC-C), and smaller datasets on
//!   the `--target` lines (`size=64m` for randread, `data_size=64m,redo_size=8m` for slob).
//!
//! Run for real: `workloads`, `workloads show oltp`, the randread, slob and oltp runs on
//! `/mnt/x`, the `--job` run on `/dev/loop3` with its JSON and CSV exports, the slob exports,
//! the slob dry run, `stack list`, slob on `zfs:recordsize=8k,primarycache=metadata,arc=100m`
//! and on `zfs` with its HTML export (both with slob's default 1 GiB + 64 MiB dataset: the stack
//! is sized to it), oltp on btrfs raid10 with `--mem-limit`, `stack create --keep && stack
//! destroy`, `cleanup`, SQLite TPC-C on `/mnt/x`, the three `report`s and `completions bash`.
//!
//! Run with `--dry-run` (too long for a test: minutes of ramps, database loads, builds and
//! repeated studies): the ramp on ext4, the four-stack slob `compare --repeat 3`, PostgreSQL
//! TPC-C, pgbench at scale 50, TPC-H, both `exec` lines (they need a project to build), the
//! build recipe, the three study comparisons and the ramp comparison.
//!
//! The whole list takes about two and a half minutes here, most of it the two ZFS runs laying
//! out slob's dataset and the SQLite TPC-C load.

mod common;
use bakeoff_testkit::loop_device::LoopDevice;
use bakeoff_testkit::{privileged_turn, scratch_dir};
use std::path::{Path, PathBuf};
use std::process::Command;

/// How a tour line is run.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Mode {
    /// As written, with the appended arguments.
    Real,
    /// With `--dry-run` (and the appended arguments).
    Dry,
}

/// A tour line (by how it starts), how it runs, and the arguments appended to it.
struct Entry {
    starts: &'static str,
    mode: Mode,
    append: &'static [&'static str],
}

const fn real(starts: &'static str, append: &'static [&'static str]) -> Entry {
    Entry {
        starts,
        mode: Mode::Real,
        append,
    }
}

const fn dry(starts: &'static str) -> Entry {
    Entry {
        starts,
        mode: Mode::Dry,
        append: &[],
    }
}

const QUICK: &[&str] = &["--set", "runtime=1s"];
const SMALL_SLOB: &[&str] = &["--set", "runtime=1s,data_size=64m,redo_size=8m"];

/// Every line of the tour, in order: a line the table does not list fails the test.
const TOUR: &[Entry] = &[
    real("bakeoff workloads  ", &[]),
    real("bakeoff workloads show oltp", &[]),
    real(
        "bakeoff run randread --target /mnt/x",
        &["--set", "runtime=1s,size=64m"],
    ),
    real("bakeoff run slob --target /mnt/x --set readers", SMALL_SLOB),
    real("bakeoff run oltp --target /mnt/x", QUICK),
    real(
        "bakeoff run --job my-workload.toml",
        &["--set", "runtime=1s"],
    ),
    real(
        "bakeoff run slob --target /mnt/x --export-markdown",
        SMALL_SLOB,
    ),
    real("bakeoff run slob --target /mnt/x --dry-run", &[]),
    real("bakeoff stack list", &[]),
    real("bakeoff run slob --stack 'zfs:recordsize=8k", QUICK),
    dry("bakeoff run randread --stack ext4"),
    real("bakeoff run oltp --stack 'btrfs", QUICK),
    real("bakeoff stack create", &[]),
    real("bakeoff cleanup", &[]),
    dry("bakeoff compare --stack raw"),
    dry("bakeoff run tpcc --stack"),
    real("bakeoff run tpcc --target /mnt/x", &["--set", "runtime=2s"]),
    dry("bakeoff run pgbench"),
    dry("bakeoff run tpch"),
    dry("bakeoff exec --stack 'zfs:compression=on'"),
    dry("bakeoff exec --stack xfs"),
    dry("bakeoff run build"),
    dry("bakeoff compare --study studies/seed001"),
    dry("bakeoff compare --study studies/seed000"),
    dry("bakeoff compare --study studies/seed004"),
    dry("bakeoff compare --stack ext4 --stack xfs"),
    real("bakeoff report results/seed000 --format markdown", &[]),
    real("bakeoff report results/seed000 --format html", &[]),
    real("bakeoff report results/seed000 --format svg", &[]),
    real("bakeoff run slob --stack zfs --export-html", QUICK),
    real("bakeoff completions bash", &[]),
];

/// The tour's commands as README.md has them: the first code block after the heading,
/// continuation lines joined, comments dropped.
fn tour_lines() -> Vec<String> {
    let readme = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md");
    let text = std::fs::read_to_string(&readme).unwrap();
    let section = text.split("## A one-screen tour").nth(1).expect("the tour");
    let block = section.split("```").nth(1).expect("its code block");
    let mut lines = Vec::new();
    let mut pending = String::new();
    for raw in block.lines().skip(1) {
        let line = match raw.find("  #") {
            Some(i) => &raw[..i],
            None => raw,
        };
        match line.trim_end().strip_suffix('\\') {
            Some(head) => pending += head,
            None => {
                pending += line;
                // Two spaces keep `bakeoff workloads` apart from `bakeoff workloads show`.
                lines.push(format!("{}  ", pending.trim_end()));
                pending.clear();
            }
        }
    }
    lines.retain(|l| !l.trim().is_empty());
    lines
}

/// What the test prepared for the tour's paths.
struct StandIns {
    cwd: PathBuf,
    state: PathBuf,
    mnt_x: PathBuf,
    loop3: LoopDevice,
}

impl StandIns {
    /// `line` as arguments, with the stand-ins' paths and the kept stack's `name`.
    fn argv(&self, line: &str, name: &str) -> Vec<String> {
        let line = line
            .replace("[--resume]", "--resume")
            .replace("[--dry-run]", "--dry-run");
        let words = shell_words::split(&line).unwrap();
        words
            .into_iter()
            .map(|w| match w.as_str() {
                "/mnt/x" => self.mnt_x.to_string_lossy().into_owned(),
                "/dev/loop3" => self.loop3.node().to_string(),
                "NAME" => name.to_string(),
                _ => w,
            })
            .collect()
    }

    /// Runs `argv` (`bakeoff ...`) in the scratch directory; its output.
    fn run(&self, argv: &[String]) -> std::process::Output {
        let bin = assert_cmd::cargo::cargo_bin("bakeoff");
        let mut cmd = if argv.iter().any(|a| a.contains("zfs")) {
            let mut c = Command::new("flock");
            c.arg("/tmp/bakeoff-zfs.lock").arg(&bin);
            c
        } else {
            Command::new(&bin)
        };
        cmd.args(&argv[1..])
            .current_dir(&self.cwd)
            .env("BAKEOFF_STATE_DIR", &self.state);
        cmd.output().unwrap()
    }
}

/// Inserts `extra` before a `--` (the command of `exec`), else at the end.
fn with_args(mut argv: Vec<String>, extra: &[&str]) -> Vec<String> {
    let at = argv.iter().position(|a| a == "--").unwrap_or(argv.len());
    let extra: Vec<String> = extra.iter().map(|s| s.to_string()).collect();
    argv.splice(at..at, extra);
    argv
}

/// The test's stand-ins: directories, a loop device and the workload file.
fn prepare(dir: &Path) -> StandIns {
    let cwd = dir.join("cwd");
    let mnt_x = dir.join("mnt-x");
    for d in [&cwd, &mnt_x] {
        std::fs::create_dir_all(d).unwrap();
    }
    let studies = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../studies");
    std::os::unix::fs::symlink(studies.canonicalize().unwrap(), cwd.join("studies")).unwrap();
    let s = StandIns {
        cwd,
        state: dir.join("state"),
        mnt_x,
        loop3: LoopDevice::new(512 << 20),
    };
    let show = s.run(&s.argv("bakeoff workloads show oltp", ""));
    assert!(show.status.success());
    std::fs::write(s.cwd.join("my-workload.toml"), &show.stdout).unwrap();
    s
}

/// `results/seed000` for the `report` lines, made before the first of them (after the tour's
/// own `compare --out results/seed000 --resume --dry-run`, which must find no other study
/// there): a comparison of one run on tmpfs and one on `/mnt/x`.
fn results_stand_in(s: &StandIns) {
    if s.cwd.join("results/seed000").exists() {
        return;
    }
    let compare = format!(
        "bakeoff compare --stack tmpfs --stack dir={} --workload randread \
         --set engine=null,size=1m,runtime=1s --out results/seed000",
        s.mnt_x.display()
    );
    let results = s.run(&s.argv(&compare, ""));
    assert!(
        results.status.success(),
        "{}",
        String::from_utf8_lossy(&results.stderr)
    );
}

#[test]
fn every_line_of_the_readme_tour_runs() {
    let Some(_turn) = privileged_turn() else {
        return;
    };
    let d = scratch_dir();
    let s = prepare(d.path());
    let lines = tour_lines();
    let mut used = vec![false; TOUR.len()];
    let mut name = String::new();
    for line in &lines {
        let matching: Vec<usize> = (0..TOUR.len())
            .filter(|&i| line.starts_with(TOUR[i].starts))
            .collect();
        assert_eq!(
            matching.len(),
            1,
            "tour line {line:?} is listed once in TOUR"
        );
        let entry = &TOUR[matching[0]];
        used[matching[0]] = true;
        if line.starts_with("bakeoff report results/seed000") {
            results_stand_in(&s);
        }
        for command in line.split(" && ") {
            let mut argv = with_args(s.argv(command, &name), entry.append);
            if entry.mode == Mode::Dry && !argv.iter().any(|a| a == "--dry-run") {
                argv = with_args(argv, &["--dry-run"]);
            }
            let started = std::time::Instant::now();
            let out = s.run(&argv);
            let stdout = String::from_utf8_lossy(&out.stdout);
            eprintln!(
                "{:?} {:.1}s: {}",
                entry.mode,
                started.elapsed().as_secs_f64(),
                argv[1..].join(" ")
            );
            assert!(
                out.status.success(),
                "{line}\nran {argv:?}: {:?}\n{}",
                out.status.code(),
                String::from_utf8_lossy(&out.stderr)
            );
            if let Some(kept) = stdout.split("bakeoff stack destroy ").nth(1) {
                name = kept.split('`').next().unwrap().to_string();
            }
        }
    }
    let unused: Vec<&str> = (TOUR.iter().zip(&used))
        .filter(|(_, u)| !**u)
        .map(|(e, _)| e.starts)
        .collect();
    assert!(
        unused.is_empty(),
        "TOUR lists lines the README no longer has: {unused:?}"
    );
    for made in [
        "result.json",
        "per-second.csv",
        "run.md",
        "run.csv",
        "seed000.html",
        "run.html",
    ] {
        assert!(s.cwd.join(made).is_file(), "the tour wrote {made}");
    }
    let charts = std::fs::read_dir(s.cwd.join("charts")).unwrap().count();
    assert!(charts > 0, "the tour wrote SVG charts");
}
