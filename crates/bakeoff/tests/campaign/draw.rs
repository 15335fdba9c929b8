//! The campaign's cases, drawn from a seed: a stack from `bakeoff stack list`, a workload (an
//! I/O personality, a database, `exec` of a command, a two-stack `compare`) and a way to end
//! it (SIGKILL after a delay over the run's expected length or at a fault point, SIGINT,
//! SIGTERM, a stack that runs out of space). Case `i` is drawn from its own generator, seeded
//! with the campaign's seed and `i`, so that one case reproduces without the ones before it.

use std::fmt;
use std::time::Duration;

/// SplitMix64: small, seedable, and the same on every machine.
pub struct Rng(u64);

impl Rng {
    /// The generator of case `index` of the campaign seeded `seed`.
    pub fn for_case(seed: u64, index: u64) -> Rng {
        let mut r = Rng(seed ^ index.wrapping_mul(0xA076_1D64_78BD_642F));
        r.next();
        r
    }

    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n`.
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }

    /// A fraction in `[0, 1)`.
    pub fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// One of `items`, each as likely as its weight.
    pub fn weighted<'a, T>(&mut self, items: &'a [(u32, T)]) -> &'a T {
        let total: u64 = items.iter().map(|(w, _)| u64::from(*w)).sum();
        let mut pick = self.below(total);
        for (w, item) in items {
            if pick < u64::from(*w) {
                return item;
            }
            pick -= u64::from(*w);
        }
        &items.last().expect("a non-empty list").1
    }

    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len() as u64) as usize]
    }
}

/// The stack types a case may build: `bakeoff stack list`'s available ones, less `dir` (a
/// directory of the user's: nothing to build or leave).
pub struct Registry {
    /// Every type that holds files (a database, `exec`, a file workload can run on it).
    pub file_types: Vec<String>,
    /// Every type, `raw` (a block device) among them.
    pub all_types: Vec<String>,
}

impl Registry {
    /// Parses `bakeoff stack list` (`NAME  available` or `NAME  install ...` per line).
    pub fn parse(list: &str) -> Registry {
        let all_types: Vec<String> = (list.lines())
            .filter_map(|l| {
                let mut words = l.split_whitespace();
                let (name, state) = (words.next()?, words.next()?);
                (state == "available" && name != "dir").then(|| name.to_string())
            })
            .collect();
        let file_types = (all_types.iter())
            .filter(|t| *t != "raw")
            .cloned()
            .collect();
        Registry {
            file_types,
            all_types,
        }
    }
}

/// What runs on the stack.
#[derive(Clone, Debug)]
pub enum Work {
    /// `bakeoff run NAME` of an I/O workload, short.
    Io(&'static str),
    /// `bakeoff run tpcc` on this database.
    Db(&'static str),
    /// `bakeoff exec` of a command that writes, syncs and sleeps (in `n` instances).
    Exec { instances: u32 },
    /// `bakeoff compare` of an I/O workload on the case's stack and a second one.
    Compare {
        workload: &'static str,
        other: String,
    },
    /// `bakeoff exec` of `dd` until the stack, of this many MiB, is full.
    Fill { mib: u64 },
}

/// How the case ends.
#[derive(Clone, Debug)]
pub enum End {
    /// SIGKILL after this delay, then `bakeoff cleanup`.
    Kill(Duration),
    /// SIGKILL by bakeoff itself at this fault point (`BAKEOFF_FAULT_AT`), then cleanup.
    FaultAt(&'static str),
    /// SIGINT after this delay: exit 130 naming it, nothing left.
    Int(Duration),
    /// SIGTERM after this delay: exit 130 naming it, nothing left.
    Term(Duration),
    /// The run fills its stack: a failure naming no space and where, nothing left.
    NoSpace,
}

/// One case of the campaign.
#[derive(Clone, Debug)]
pub struct Case {
    pub index: u64,
    pub stack: String,
    pub work: Work,
    pub end: End,
}

const IO: [&str; 6] = [
    "randrw",
    "randread",
    "randwrite",
    "write",
    "slob",
    "fileserver",
];

/// Expected length of an uninterrupted case, from building to teardown, as measured on the
/// 2-core VM with a debug build (an optimised one is faster: kills then land later in it).
fn expected(work: &Work, stack: &str) -> Duration {
    let zfs = if stack == "zfs" { 5.0 } else { 0.0 };
    let secs = match work {
        Work::Io(_) | Work::Fill { .. } => 3.5,
        Work::Exec { .. } => 3.0,
        Work::Compare { other, .. } => 6.0 + if other == "zfs" { 5.0 } else { 0.0 },
        Work::Db("sqlite") => 17.0,
        Work::Db("postgres") => 15.0,
        Work::Db(_) => 22.0,
    };
    let scale = if cfg!(debug_assertions) { 1.0 } else { 0.6 };
    Duration::from_secs_f64((secs + zfs) * scale)
}

/// Draws case `index` of the campaign seeded `seed`.
pub fn case(seed: u64, index: u64, reg: &Registry) -> Case {
    let mut r = Rng::for_case(seed, index);
    let work = r
        .weighted(&[
            (32, "io"),
            (12, "compare"),
            (12, "exec"),
            (8, "sqlite"),
            (3, "postgres"),
            (2, "mariadb"),
            (5, "fill"),
        ])
        .to_string();
    let io = *r.pick(&IO);
    // fileserver works on files: not on a raw device.
    let types = match work.as_str() {
        "io" if io != "fileserver" => &reg.all_types,
        "compare" => &reg.all_types,
        _ => &reg.file_types,
    };
    let stack = r.pick(types).clone();
    let others: Vec<String> = (reg.all_types.iter())
        .filter(|t| **t != stack)
        .cloned()
        .collect();
    let work = match work.as_str() {
        "io" => Work::Io(io),
        "compare" => Work::Compare {
            workload: IO[r.below(5) as usize],
            other: r.pick(&others).clone(),
        },
        "exec" => Work::Exec {
            instances: 1 + r.below(2) as u32,
        },
        // Sizes from XFS's smallest up: the stack runs out at a different point each time.
        "fill" => Work::Fill {
            mib: 320 + r.below(193),
        },
        db => Work::Db(match db {
            "sqlite" => "sqlite",
            "postgres" => "postgres",
            _ => "mariadb",
        }),
    };
    let end = draw_end(&mut r, &work, &stack);
    Case {
        index,
        stack,
        work,
        end,
    }
}

fn draw_end(r: &mut Rng, work: &Work, stack: &str) -> End {
    if matches!(work, Work::Fill { .. }) {
        return End::NoSpace;
    }
    let length = expected(work, stack).as_secs_f64();
    // Over the whole run: kills land in building, layout or loading, warm-up, measurement
    // and teardown (or, when the run was quicker than expected, after it).
    let at = |r: &mut Rng, from: f64| Duration::from_secs_f64(from + r.unit() * length);
    let layout = matches!(work, Work::Io(_) | Work::Compare { .. });
    match r.weighted(&[(76, 'k'), (6, 'f'), (9, 'i'), (9, 't')]) {
        'f' if layout && r.below(2) == 0 => End::FaultAt("layout"),
        'f' => End::FaultAt("teardown"),
        'i' => End::Int(at(r, 0.5)),
        't' => End::Term(at(r, 0.5)),
        _ => End::Kill(at(r, 0.2)),
    }
}

impl Case {
    /// Whether the case builds a ZFS stack (the machine has one zfs-fuse: the ZFS lock).
    pub fn uses_zfs(&self) -> bool {
        self.stack == "zfs" || matches!(&self.work, Work::Compare { other, .. } if other == "zfs")
    }
}

impl fmt::Display for Case {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let work = match &self.work {
            Work::Io(w) => format!("run {w}"),
            Work::Db(db) => format!("run tpcc db={db}"),
            Work::Exec { instances } => format!("exec (dd, sync, sleep) x{instances}"),
            Work::Compare { workload, other } => format!("compare {workload} with {other}"),
            Work::Fill { mib } => format!("exec dd until {mib} MiB are full"),
        };
        let end = match &self.end {
            End::Kill(d) => format!("SIGKILL after {:.2} s", d.as_secs_f64()),
            End::FaultAt(p) => format!("SIGKILL at fault point {p}"),
            End::Int(d) => format!("SIGINT after {:.2} s", d.as_secs_f64()),
            End::Term(d) => format!("SIGTERM after {:.2} s", d.as_secs_f64()),
            End::NoSpace => "runs out of space".into(),
        };
        write!(f, "case {}: {work} on {}, {end}", self.index, self.stack)
    }
}
