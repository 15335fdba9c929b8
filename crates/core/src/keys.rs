//! Every key a workload or study file accepts, documented once. A key that means the same thing
//! in a plain job and in a personality's role is one [`KeyDoc`] used by both tables, so its
//! default, its help and its validation cannot drift apart.

use crate::settings::{SettingError, Settings};

/// A documented key: name, default and one line of help.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KeyDoc {
    /// The key as written in files and `--set`.
    pub key: &'static str,
    /// Default value (empty: required, or no default).
    pub default: &'static str,
    /// What it means (fio's meaning where fio has the key).
    pub help: &'static str,
}

/// A key's documentation: name, default, meaning (every key table is built with it).
pub(crate) const fn doc(key: &'static str, default: &'static str, help: &'static str) -> KeyDoc {
    KeyDoc { key, default, help }
}

/// The I/O kinds `rw` and `io` take: the planner's table (`planner::IO_KINDS`), in words. A
/// test keeps the two in step.
pub(crate) const IO_KINDS_HELP: &str = "read, write, randread, randwrite, randrw, rw or readwrite \
     (sequential mixed); update, randupdate (read a block, write it back)";

const DESCRIPTION: KeyDoc = doc(
    "description",
    "",
    "one line saying what the workload models",
);
const NAME: KeyDoc = doc("name", "", "name (unique in its file)");

pub(crate) const DIRECT: KeyDoc = doc("direct", "false", "O_DIRECT (bypass the page cache)");
pub(crate) const SYNC: KeyDoc = doc(
    "sync",
    "none",
    "open flag: none, dsync (O_DSYNC) or sync (O_SYNC); true means sync",
);
pub(crate) const IODEPTH: KeyDoc = doc(
    "iodepth",
    "1",
    "I/Os in flight per thread (needs engine=io_uring above 1)",
);
pub(crate) const OFFSET: KeyDoc = doc("offset", "0", "start of the I/O region inside each file");
pub(crate) const RATE_IOPS: KeyDoc = doc(
    "rate_iops",
    "0",
    "target IOPS per thread, open loop; latency counts from the scheduled time (0 = unthrottled)",
);
pub(crate) const FSYNC: KeyDoc = doc("fsync", "0", "fsync after every N writes (0 = never)");
pub(crate) const FDATASYNC: KeyDoc = doc(
    "fdatasync",
    "0",
    "fdatasync after every N writes (0 = never)",
);
pub(crate) const NRFILES: KeyDoc = doc("nrfiles", "1", "number of data files");
pub(crate) const RWMIXREAD: KeyDoc = doc("rwmixread", "50", "percentage of reads in randrw / rw");
pub(crate) const COUNT: KeyDoc = doc(
    "count",
    "1",
    "I/Os per pass of the role's loop (a role whose only step is one io step streams)",
);

/// Keys every workload accepts, plain job or personality.
pub const RUN_KEYS: &[KeyDoc] = &[
    doc("engine", "psync", crate::plan::EngineKind::HELP),
    doc("runtime", "30s", "measured duration"),
    doc(
        "ramp_time",
        "auto",
        "warm-up before measuring, in addition to runtime: auto warms up until throughput (and a \
         database's WAL and full-page images per transaction) are steady, or a duration",
    ),
    doc(
        "ramp_max",
        "120s",
        "longest automatic warm-up: measuring starts then, and the run counts as not steady",
    ),
    doc(
        "ss",
        "",
        "fio's steady-state stop rule on the measured window: iops:2%, iops_slope:0.1%, bw:2% or \
         bw_slope:0.1% ends it once steady over ss_dur (empty = run the whole runtime)",
    ),
    doc("ss_dur", "10s", "the window the ss= rule is judged over"),
    doc("seed", "1", "seed of data contents and offsets"),
    doc(
        "buffer_compress_percentage",
        "0",
        "share of each data buffer that compresses (0 = incompressible)",
    ),
    doc(
        "clients",
        "0",
        "client processes, each running every role on its own copy of the filesets in its own \
         directory (0 = threads in bakeoff itself)",
    ),
    doc(
        "verify",
        "off",
        "off, crc32c or sha256: every block written carries a header (offset, generation, \
         checksum) checked on every read and in a final pass after the run; a mismatch fails \
         the run (block I/O workloads only; for correctness, not speed: docs/verify.md)",
    ),
];

/// Keys of a replayed trace (`run --replay`); `runtime`, `seed` and `ramp_time` mean what they
/// mean in [`RUN_KEYS`], with a replay's own defaults.
pub const REPLAY_KEYS: &[KeyDoc] = &[
    doc(
        "timing",
        "fast",
        "original: each call at its captured time (divided by speed), latency from that time; \
         fast: each call as soon as the calls it depends on are done",
    ),
    doc(
        "speed",
        "1x",
        "with timing=original, how much faster than captured the schedule runs (2x, 0.5x)",
    ),
    doc(
        "think",
        "none",
        "none, or cpu: burn the CPU time each thread used between its calls (needs a trace \
         with cpu_ns) before issuing the next",
    ),
    doc(
        "window",
        "all",
        "all: measure the whole trace; marked: only between its window_start and window_end \
         marks",
    ),
    doc(
        "flags",
        "captured",
        "captured: open with the captured flags (O_DIRECT, O_DSYNC, O_SYNC); no_direct: \
         drop O_DIRECT",
    ),
    doc(
        "syncs",
        "each",
        "each: make every captured fsync and fdatasync; merge: group commit, a thread's sync of a \
         file waits for one under way and is not made if a sync begun after the file's writes \
         so far has made them durable (a database on a stack with dearer syncs makes fewer)",
    ),
    doc(
        "balloon",
        "0",
        "anonymous memory held during the replay, as the database's own memory was: auto (the \
         captured processes' memory), a size, or 0",
    ),
    doc(
        "runtime",
        "auto",
        "safety cap: the replay ends when the trace does, or after this long (auto = 10 x the \
         trace's duration / speed)",
    ),
    doc(
        "ramp_time",
        "0",
        "no warm-up: a replay measures from its first call (only 0)",
    ),
    doc("seed", "1", "seed of the written data"),
];

/// Keys of a plain job (fio's meaning unless noted). A plain job is a personality with one
/// fileset and one role; the keys they share are the same [`KeyDoc`]s.
pub const JOB_KEYS: &[KeyDoc] = &[
    doc("rw", "randread", IO_KINDS_HELP),
    RWMIXREAD,
    doc("bs", "4k", "bytes per I/O"),
    IODEPTH,
    doc(
        "jobs",
        "1",
        "job threads (fio numjobs); they share the data files",
    ),
    DIRECT,
    SYNC,
    FSYNC,
    FDATASYNC,
    doc(
        "size",
        "1g",
        "total bytes of the data files (shared by all jobs)",
    ),
    OFFSET,
    NRFILES,
    RATE_IOPS,
];

/// Top-level tables of a personality (besides [`RUN_KEYS`]).
pub const PERSONALITY_KEYS: &[KeyDoc] = &[
    DESCRIPTION,
    doc(
        "params",
        "",
        "declared parameters: name = default, or { default, help }",
    ),
    doc(
        "fileset",
        "",
        "[[fileset]] tables: data files the roles use",
    ),
    doc(
        "role",
        "",
        "[[role]] tables: groups of threads with one loop of steps",
    ),
];

/// Keys of a plain job file besides [`RUN_KEYS`] and [`JOB_KEYS`].
pub const JOB_FILE_KEYS: &[KeyDoc] = &[DESCRIPTION];

/// Keys of a `[params]` entry written as a table.
pub const PARAM_KEYS: &[KeyDoc] = &[
    doc("default", "", "value used unless --set gives another"),
    doc("help", "", "one line of help"),
];

/// Keys of a `[[fileset]]` table.
pub const FILESET_KEYS: &[KeyDoc] = &[
    NAME,
    doc(
        "size",
        "",
        "total bytes of the files (give size or filesize)",
    ),
    doc(
        "filesize",
        "",
        "bytes per file (give size or filesize); a tree's mean file size",
    ),
    NRFILES,
    doc(
        "entries",
        "",
        "files of a directory tree that file steps create, delete, read and write (filebench \
         entries); makes the fileset a tree",
    ),
    doc(
        "data_per_ops",
        "",
        "a tree sized by offered load: dataset bytes per op/s (SPECsfs: 10m), over the rate_iops \
         x threads of its roles, else rate_hint; instead of entries",
    ),
    doc(
        "rate_hint",
        "",
        "tree with data_per_ops: the op/s it is sized for when its roles have no rate_iops",
    ),
    doc(
        "dirwidth",
        "20",
        "tree: entries per directory (files per leaf directory, subdirectories per inner one)",
    ),
    doc(
        "prealloc",
        "100",
        "tree: share of the files that exist before the run, %; the rest are names to create",
    ),
    doc(
        "size_dist",
        "gamma",
        "tree: file sizes around filesize: gamma (shape 1.5, as filebench's filesets) or fixed",
    ),
    doc(
        "working_set",
        "100",
        "tree: share of the files the run touches, % (SPECsfs touches 10 %)",
    ),
];

/// The keys of a `[[fileset]]` that only a tree (`entries` or `data_per_ops`) takes.
pub(crate) const TREE_ONLY_KEYS: &[&str] = &[
    "rate_hint",
    "dirwidth",
    "prealloc",
    "size_dist",
    "working_set",
];

/// Keys of a `[[role]]` table.
pub const ROLE_KEYS: &[KeyDoc] = &[
    NAME,
    doc(
        "threads",
        "1",
        "threads running the loop (a $param set to 0 disables the role)",
    ),
    doc("fileset", "", "the fileset the role does I/O on"),
    doc(
        "kind",
        "worker",
        "worker; logwriter (group-commits the redo that commit steps hand it); dbwriter (writes \
         the blocks that dirty steps queue, in asynchronous batches of up to iodepth)",
    ),
    doc(
        "engine",
        "",
        "this role's I/O engine when it differs from the run's (e.g. io_uring for a db writer)",
    ),
    doc(
        "dirty_limit",
        "10000",
        "dbwriter: dirty blocks that may wait to be written; dirty steps block beyond it",
    ),
    DIRECT,
    SYNC,
    IODEPTH,
    OFFSET,
    RATE_IOPS,
    FSYNC,
    FDATASYNC,
    doc("log", "false", "its writes are log writes"),
    doc(
        "mix",
        "false",
        "true: each pass of the loop runs one step, drawn by the steps' weights (an operation \
         mix such as SPECsfs's); file steps only",
    ),
    doc(
        "gate",
        "",
        "{ value, highwater }: wait steps block until `value` posts arrived",
    ),
    doc(
        "steps",
        "",
        "the loop: a list of { io | file | hog | post | wait | commit | sync | aiowait | dirty }",
    ),
];

/// Keys of a role's `gate = { ... }`.
pub const GATE_KEYS: &[KeyDoc] = &[
    doc("value", "1", "posts consumed per pass of a wait step"),
    doc(
        "highwater",
        "1",
        "how far posters may run ahead before they block",
    ),
];

/// Keys of a step; each step has exactly one of the first nine (see [`STEP_KINDS`]).
pub const STEP_KEYS: &[KeyDoc] = &[
    doc("io", "", IO_KINDS_HELP),
    doc(
        "file",
        "",
        "a file operation on a tree fileset (create, delete, open, stat, append, read_whole, \
         ...: docs/workloads.md lists them)",
    ),
    doc("hog", "", "burn CPU: iterations of a memory-touching loop"),
    doc("post", "", "post to the gates of these roles"),
    doc("wait", "", "true: block on this role's gate"),
    doc(
        "commit",
        "",
        "redo bytes to hand to the log writer, waiting until durable",
    ),
    doc("sync", "", "fsync or fdatasync the current file"),
    doc(
        "aiowait",
        "",
        "true: wait until this thread's asynchronous I/Os completed",
    ),
    doc(
        "dirty",
        "",
        "the dbwriter role to queue the block the last read step read for (an update)",
    ),
    doc(
        "bs",
        "8k",
        "bytes per I/O of an io step; per read or write call of a file step",
    ),
    RWMIXREAD,
    COUNT,
    doc(
        "log",
        "",
        "the logwriter role a commit step hands its redo to",
    ),
    doc(
        "async",
        "false",
        "io step: end once the I/Os are submitted (filebench aiowrite); an aiowait step waits",
    ),
    doc(
        "pct",
        "100",
        "dirty step: the share of iterations that dirty their block (an update), %",
    ),
    doc(
        "fileset",
        "",
        "file step: the tree fileset it works on (default: the role's)",
    ),
    doc(
        "random",
        "false",
        "append step: append 1 to bs bytes at random (filebench appendfilerand), not bs",
    ),
    doc(
        "weight",
        "1",
        "step of a mix = true role: its relative share of the passes",
    ),
];

/// The kinds of step, in the order [`STEP_KEYS`] lists them.
pub(crate) const STEP_KINDS: [&str; 9] = [
    "io", "file", "hog", "post", "wait", "commit", "sync", "aiowait", "dirty",
];

/// Keys a step of `kind` takes besides `kind` itself.
pub(crate) fn step_companions(kind: &str) -> &'static [&'static str] {
    match kind {
        "io" => &["bs", "rwmixread", "count", "async", "weight"],
        "file" => &["bs", "fileset", "random", "weight"],
        "commit" => &["log", "weight"],
        "dirty" => &["pct", "weight"],
        _ => &["weight"],
    }
}

/// Keys of a `logwriter` role: it writes what commit steps hand it, so loop and I/O-shape keys
/// do not apply.
pub(crate) const LOGWRITER_KEYS: &[&str] = &[
    "name", "kind", "threads", "fileset", "direct", "sync", "engine",
];

/// Keys of a `dbwriter` role: it writes what dirty steps queue, `iodepth` blocks at a time.
pub(crate) const DBWRITER_KEYS: &[&str] = &[
    "name",
    "kind",
    "threads",
    "fileset",
    "direct",
    "sync",
    "engine",
    "iodepth",
    "dirty_limit",
];

/// Top-level keys of a study file.
pub const STUDY_KEYS: &[KeyDoc] = &[
    doc(
        "stacks",
        "",
        "stack specs, e.g. [\"raw\", \"zfs:recordsize=8k\"]",
    ),
    doc(
        "stack",
        "",
        "[[stack]] tables: name, spec, log (a log stack's spec), set (settings of its cells)",
    ),
    doc("workload", "", "[[workload]] tables: name and settings"),
    doc("sweep", "", "sweeps, e.g. [\"zfs.recordsize=8k,128k\"]"),
    doc("repeat", "3", "repetitions of every cell"),
    doc(
        "baseline",
        "",
        "the stack the others are compared with (default: the first)",
    ),
    doc("min_effect", "5%", "smallest difference called a verdict"),
    doc(
        "size",
        "auto",
        "size of each loop image (auto: sized to its cells' dataset)",
    ),
    doc(
        "mem_limit",
        "",
        "memory limit of every run: a cgroup for bakeoff, a database server and their page cache",
    ),
    doc(
        "ramp",
        "",
        "a load ramp for every workload (a workload's own ramp key wins), e.g. \
         \"start=500,step=x1.4,until=mean>15ms\" (docs/ramp.md)",
    ),
    doc(
        "crash_states",
        "",
        "check this many crash states in every run, as run --crash-states (TPC-C on \
         ext4, xfs or btrfs; docs/durability.md)",
    ),
];

/// The default of `key` in a key table.
pub fn default_of(keys: &[KeyDoc], key: &str) -> &'static str {
    keys.iter()
        .find(|k| k.key == key)
        .map(|k| k.default)
        .unwrap_or("")
}

/// The names of the keys of `tables`.
pub(crate) fn names<'a>(tables: &[&'a [KeyDoc]]) -> Vec<&'a str> {
    tables
        .iter()
        .flat_map(|t| t.iter().map(|k| k.key))
        .collect()
}

/// Refuses settings whose key is not in `allowed`, listing what is allowed.
pub(crate) fn check_known(settings: &Settings, allowed: &[&str]) -> Result<(), SettingError> {
    for (key, s) in settings.iter() {
        if !allowed.contains(&key.as_str()) {
            let mut names: Vec<&str> = allowed.to_vec();
            names.sort_unstable();
            names.dedup();
            return Err(SettingError::new(
                s.origin.clone(),
                key,
                format!("unknown key (allowed: {})", names.join(", ")),
            ));
        }
    }
    Ok(())
}
