//! The README's one-screen tour as an executable test list: every command of the section "A
//! one-screen tour" is read from README.md itself (so the README cannot drift from what runs)
//! and run as written, as root, with these substitutions and nothing else:
//!
//! * `bakeoff` is the binary under test, with the disturbance rule off
//!   (`BAKEOFF_DISTURBANCE_LIMIT=0`: the other lane's tests run beside it); each command runs in a scratch directory holding a
//!   link to the repository's `studies/`, with a private `BAKEOFF_STATE_DIR`; commands that
//!   build a ZFS stack run under `flock /tmp/bakeoff-zfs.lock` (one zfs-fuse per machine).
//! * Stand-ins for the paths a user would have: `/mnt/x` is a scratch directory on disk,
//!   `/dev/loop3` a 512 MiB loop device over a sparse image, `my-workload.toml` the TOML `bakeoff
//!   workloads show oltp` prints (what the tour's second line says to copy), `results/seed000`
//!   the results of a one-run comparison made by the test, `NAME` the name `stack create --keep`
//!   printed. Optional options in brackets (`[--resume] [--dry-run]`) are given; `results/seed000`
//!   is made just before the first `report` line.
//! * The user's project in the `exec` lines: `make -j2` gets `-f` and a makefile of two targets
//!   the test writes (built at once in the stack's directory), `./build.sh` is a script the test
//!   writes (given by its absolute path: the command runs in the stack's directory).
//! * The `build` recipe's source (`--set BUILD_SRC=...`, its documented parameter): a bare git
//!   repository of a one-crate workspace with no dependencies instead of this project with its
//!   vendored crates, so its clones and three builds, rebuild and two parallel builds take
//!   seconds; the recipe, its phases and its 10 s stagger run as written.
//! * Shorter runs, listed per line in [`TOUR`]: arguments appended to the line (`--set` is
//!   repeatable and the later value wins), and where a line's own option cannot be given twice,
//!   its text replaced. `ramp_time=0` on every timed run (TPC-H has none) so the test's length
//!   does not follow the default warm-up; `runtime=1s` (2 s for SQLite TPC-C, 3 s for PostgreSQL
//!   TPC-C and pgbench); smaller datasets (`size=64m` for randread and the verified randwrite,
//!   `data_size=64m,redo_size=8m` for slob on `/mnt/x` and in the four-stack `compare`, TPC-C
//!   `warehouses=1,terminals=2`, pgbench `scale=1,clients=2`, sysbench one table of 1,000 rows,
//!   2 threads, 2 s and a 64 MiB redo log, TPC-H `sf=0.01`); `--repeat 3` -> `--repeat 1` in the slob
//!   `compare` and `--repeat 1` added to the ramp `compare`; ramps of at most three 1 s points
//!   (`point=1s,max_points=2,bisect=1`, the latency limit as written); `--stagger 10s` ->
//!   `--stagger 1s` in the parallel `exec`.
//!
//! Every line runs for real except the three study comparisons (`compare --study
//! studies/seed001-build.toml`, `seed000-asm-zfs-ufs.toml`, `seed004-tpcc.toml`), which run with
//! `--dry-run`: a study file fixes its stacks, repetitions, sizes and runtimes (`compare --study`
//! applies no `--set` or `--repeat`), and as written they take from many minutes (seed 000:
//! four stacks, three repetitions of 20 s slob runs over 1 GiB) to hours (seed 001: twelve
//! builds of this project; seed 004: twelve PostgreSQL TPC-C loads and 60 s runs).
//!
//! Beyond exit 0, a run whose figures are cheap to recognise must show them ([`Entry::shows`]):
//! the ramp's headline, the stacks of each comparison, the database and stack of the database
//! runs, the `exec` commands' own output (passed through), the recipe's last phase; and the
//! exports the tour names must exist.
//!
//! Measured on the 2-core development VM (`CI=true cargo test -p bakeoff --test readme_tour`,
//! debug build, other helpers' builds running): 205 to 254 s, most of it the ZFS runs (two
//! slob runs laying out slob's default 1 GiB dataset, the four-stack comparison, TPC-H), the
//! two TPC-C runs and the build recipe's 10 s stagger.

mod common;
#[path = "readme_tour/stand_ins.rs"]
mod stand_ins;
use bakeoff_testkit::{privileged_shared_turn, scratch_dir};
use stand_ins::{prepare, results_stand_in, with_args, StandIns};
use std::path::Path;

/// How a tour line is run.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Mode {
    /// As written, with the substitutions and the appended arguments.
    Real,
    /// With `--dry-run` (and the appended arguments), for the reason given.
    Dry(&'static str),
}

/// A tour line (by how it starts), how it runs, the text replaced in it (as written, as run),
/// the arguments appended to it, and what its output (stdout and stderr) must show.
/// `SCRATCH` in a replacement or an appended argument is the test's scratch directory.
struct Entry {
    starts: &'static str,
    mode: Mode,
    replace: &'static [(&'static str, &'static str)],
    append: &'static [&'static str],
    /// Text the run's stdout or stderr must contain.
    shows: &'static [&'static str],
}

const LINE: Entry = Entry {
    starts: "",
    mode: Mode::Real,
    replace: &[],
    append: &[],
    shows: &[],
};

const fn real(starts: &'static str, append: &'static [&'static str]) -> Entry {
    Entry {
        starts,
        append,
        ..LINE
    }
}

const fn dry(starts: &'static str, why: &'static str) -> Entry {
    Entry {
        starts,
        mode: Mode::Dry(why),
        ..LINE
    }
}

const QUICK: &[&str] = &["--set", "runtime=1s,ramp_time=0"];
const SMALL_SLOB: &[&str] = &["--set", "runtime=1s,ramp_time=0,data_size=64m,redo_size=8m"];
const STUDY: &str = "a study file fixes its stacks, repetitions, sizes and runtimes (`compare \
     --study` takes no --set or --repeat), and it runs for many minutes";

const ZFS: &str = "a ZFS run; its kind runs for real in other tests (see above)";

/// Every line of the tour, in order: a line the table does not list fails the test.
const TOUR: &[Entry] = &[
    real("bakeoff workloads  ", &[]),
    real("bakeoff workloads show oltp", &[]),
    real(
        "bakeoff run randread --target /mnt/x",
        &["--set", "runtime=1s,ramp_time=0,size=64m"],
    ),
    real("bakeoff run slob --target /mnt/x --set readers", SMALL_SLOB),
    real("bakeoff run oltp --target /mnt/x", QUICK),
    real("bakeoff run --job my-workload.toml", QUICK),
    real(
        "bakeoff run slob --target /mnt/x --export-markdown",
        SMALL_SLOB,
    ),
    real("bakeoff run slob --target /mnt/x --dry-run", &[]),
    real("bakeoff stack list", &[]),
    // ZFS's lines are checked, not run: zfs-fuse takes about 15 s to build a pool and import
    // it cold, and CI's time is kept under 40 minutes; slob on ZFS runs for real in
    // tests/physics.rs and tests/faults.rs, TPC-H in tests/tpch.rs, an HTML export in
    // tests/html.rs, and the tour's comparison and exec below run on ZFS.
    dry("bakeoff run slob --stack 'zfs:recordsize=8k", ZFS),
    Entry {
        starts: "bakeoff run randread --stack ext4",
        replace: &[(
            "until=p99>5ms'",
            "until=p99>5ms,point=1s,max_points=2,bisect=1'",
        )],
        append: &["--set", "ramp_time=0,size=64m"],
        shows: &["headline:"],
        ..LINE
    },
    real("bakeoff run oltp --stack 'btrfs", QUICK),
    Entry {
        starts: "bakeoff run randwrite --stack xfs",
        append: &["--set", "runtime=1s,ramp_time=0,size=64m"],
        shows: &[
            "verify   crc32c: data (8,192 blocks of 8 KiB)",
            "no mismatch",
        ],
        ..LINE
    },
    dry(
        "bakeoff run tpcc --stack ext4 --set db=postgres,pg.synchronous_commit=off",
        "200 PostgreSQL crash states take many minutes; tests/durability.rs runs --crash-states \
         for real (and kill -9 in it)",
    ),
    real("bakeoff stack create", &[]),
    real("bakeoff cleanup", &[]),
    Entry {
        starts: "bakeoff compare --stack raw",
        replace: &[("--repeat 3", "--repeat 1")],
        append: SMALL_SLOB,
        shows: &[
            "raw / slob:",
            "zfs:arc=100m / slob:",
            "zfs:recordsize=8k,primarycache=metadata / slob:",
            "ext4:mount=noatime / slob:",
        ],
        ..LINE
    },
    Entry {
        starts: "bakeoff run tpcc --stack 'ext4",
        append: &["--set", "warehouses=1,terminals=2,runtime=3s,ramp_time=0"],
        shows: &["tpcc on stack ext4:mount=noatime", "db postgres", "NOPM"],
        ..LINE
    },
    real(
        "bakeoff run tpcc --target /mnt/x",
        &["--set", "runtime=2s,ramp_time=0"],
    ),
    Entry {
        starts: "bakeoff run pgbench --stack xfs",
        append: &["--set", "scale=1,clients=2,runtime=3s,ramp_time=0"],
        shows: &["pgbench on stack xfs", "scale 1", "skipped 0, failed 0"],
        ..LINE
    },
    Entry {
        starts: "bakeoff run pgbench --stack ext4",
        append: &["--set", "scale=1,clients=2,runtime=3s,ramp_time=0"],
        shows: &["pgbench on stack ext4", "skipped 0, failed 0"],
        ..LINE
    },
    Entry {
        starts: "bakeoff trace show",
        shows: &["postgres pgbench on ext4", "B/call"],
        ..LINE
    },
    Entry {
        starts: "bakeoff trace personality",
        shows: &["[[role]]", "[[fileset]]"],
        ..LINE
    },
    Entry {
        starts: "bakeoff compare --replay",
        replace: &[("--repeat 3", "--repeat 1")],
        shows: &["ext4 / ", "xfs / ", "zfs:recordsize=8k / "],
        ..LINE
    },
    Entry {
        starts: "bakeoff run sysbench",
        append: &[
            "--set",
            "tables=1,table_size=1000,threads=2,runtime=2s,ramp_time=0,my.innodb_log_file_size=64M",
        ],
        shows: &["sysbench on stack xfs", "db mariadb", "sysbench printed"],
        ..LINE
    },
    dry("bakeoff run tpch --stack 'zfs", ZFS),
    Entry {
        starts: "bakeoff exec --stack 'zfs:compression=on'",
        replace: &[("make -j2", "make -j2 -f SCRATCH/tour.mk")],
        shows: &[
            "compiled a",
            "compiled b",
            "exec on stack zfs:compression=on",
        ],
        ..LINE
    },
    Entry {
        starts: "bakeoff exec --stack xfs",
        replace: &[
            ("--stagger 10s", "--stagger 1s"),
            ("./build.sh", "SCRATCH/build.sh"),
        ],
        shows: &["mnt/inst-1", "mnt/inst-2", "2 instances"],
        ..LINE
    },
    Entry {
        starts: "bakeoff run build",
        append: &["--set", "BUILD_SRC=SCRATCH/build-src.git"],
        shows: &["recipe build, 7 phases", "build-2x"],
        ..LINE
    },
    dry("bakeoff compare --study studies/seed001", STUDY),
    dry("bakeoff compare --study studies/seed000", STUDY),
    dry("bakeoff compare --study studies/seed004", STUDY),
    Entry {
        starts: "bakeoff compare --stack ext4 --stack xfs",
        replace: &[("point=10s'", "point=1s,max_points=2,bisect=1'")],
        append: &["--repeat", "1", "--set", "ramp_time=0,size=64m"],
        shows: &["ext4 / randread:", "xfs / randread:"],
        ..LINE
    },
    real("bakeoff report results/seed000 --format markdown", &[]),
    real("bakeoff report results/seed000 --format html", &[]),
    real("bakeoff report results/seed000 --format svg", &[]),
    dry("bakeoff run slob --stack zfs --export-html", ZFS),
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

/// The entry of TOUR that `line` is, marked used.
fn entry_of(line: &str, used: &mut [bool]) -> &'static Entry {
    let matching: Vec<usize> = (0..TOUR.len())
        .filter(|&i| line.starts_with(TOUR[i].starts))
        .collect();
    assert_eq!(
        matching.len(),
        1,
        "tour line {line:?} is listed once in TOUR"
    );
    used[matching[0]] = true;
    &TOUR[matching[0]]
}

/// Runs one command of a tour line as `entry` says; the kept stack's name if it printed one.
fn run_command(s: &StandIns, line: &str, command: &str, entry: &Entry, name: &str) -> String {
    let append: Vec<String> = entry.append.iter().map(|a| s.in_scratch(a)).collect();
    let mut argv = with_args(s.argv(command, name), &append);
    if matches!(entry.mode, Mode::Dry(_)) && !argv.iter().any(|a| a == "--dry-run") {
        argv = with_args(argv, &["--dry-run".to_string()]);
    }
    let started = std::time::Instant::now();
    let out = s.run(&argv);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let how = match entry.mode {
        Mode::Real => "real",
        Mode::Dry(_) => "dry",
    };
    eprintln!(
        "{how} {:.1}s: {}",
        started.elapsed().as_secs_f64(),
        argv[1..].join(" ")
    );
    assert!(
        out.status.success(),
        "{line}\nran {argv:?}: {:?}\n{stderr}",
        out.status.code(),
    );
    assert!(
        !stderr.contains("panicked"),
        "{line}\nran {argv:?}: a thread panicked\n{stderr}"
    );
    for shown in entry.shows {
        assert!(
            stdout.contains(shown) || stderr.contains(shown),
            "{line}\nran {argv:?}: its output shows {shown:?}\n{stdout}\n{stderr}"
        );
    }
    match stdout.split("bakeoff stack destroy ").nth(1) {
        Some(kept) => kept.split('`').next().unwrap().to_string(),
        None => name.to_string(),
    }
}

#[test]
fn every_line_of_the_readme_tour_runs() {
    let Some(_turn) = privileged_shared_turn() else {
        return;
    };
    if !common::db::postgres() || !common::db::mariadb() {
        return;
    }
    let d = scratch_dir();
    let s = prepare(d.path());
    let mut used = vec![false; TOUR.len()];
    let mut name = String::new();
    for line in &tour_lines() {
        let entry = entry_of(line, &mut used);
        if line.starts_with("bakeoff report results/seed000") {
            results_stand_in(&s);
        }
        let mut text = line.clone();
        for (written, run) in entry.replace {
            assert!(text.contains(written), "{line:?} has {written:?}");
            text = text.replace(written, run);
        }
        for command in text.split(" && ") {
            name = run_command(&s, line, command, entry, &name);
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
    ] {
        assert!(s.cwd.join(made).is_file(), "the tour wrote {made}");
    }
    let charts = std::fs::read_dir(s.cwd.join("charts")).unwrap().count();
    assert!(charts > 0, "the tour wrote SVG charts");
}
