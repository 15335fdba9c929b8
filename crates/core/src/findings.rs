//! Findings: rules over measured figures that explain results, with evidence and a suggestion.
//!
//! [`run_findings`] applies the rules to one run; [`cell_findings`] judges the repetitions of
//! one cell and merges their run findings. Thresholds are the constants below; every rule is
//! listed in `docs/findings.md`. Figures that are `None` make a rule stay silent, never panic.

use crate::plan::{IoMix, OpKind, Step, SyncMode};
use crate::record::{RunRecord, RunStatus, Summary};
use crate::units::{format_bytes, parse_size};
use serde::{Deserialize, Serialize};

/// Share of application read bytes that did not reach the devices at which reads count as
/// cache-served, %.
pub const CACHE_HIT_PCT: f64 = 50.0;
/// Device bytes per application read, as a fraction of the read size, below which reads count
/// as cache-served.
pub const CACHE_BYTES_FRACTION: f64 = 0.5;
/// Device bytes per application read, as a multiple of the read size, from which
/// `read_amplification` fires.
pub const READ_AMP: f64 = 1.8;
/// Highest read amplification one extra record per read explains (misaligned I/O).
pub const MISALIGNED_AMP_MAX: f64 = 2.3;
/// Average device read, as a multiple of max(record size, read size), that means prefetch.
pub const PREFETCH_FACTOR: f64 = 1.5;
/// Write amplification from which a journal or intent log writing beside the data is named.
pub const WRITE_DOUBLING_MIN: f64 = 1.7;
/// Write amplification from which `write_amplification` fires (and `write_doubling` stops).
pub const WRITE_AMP_HIGH: f64 = 3.0;
/// Whole-machine busy CPU from which the result measures CPU, %.
pub const CPU_BUSY_PCT: f64 = 90.0;
/// Stack-device utilisation from which the device is saturated, %.
pub const DEVICE_UTIL_PCT: f64 = 95.0;
/// Change of throughput over the measured window (linear fit) that is not steady, %.
pub const TREND_PCT: f64 = 20.0;
/// Measured samples (seconds) needed to judge steady state.
pub const MIN_STEADY_SAMPLES: usize = 5;
/// Runtime suggested when a run was too short to judge, seconds.
pub const SUGGESTED_RUNTIME_S: u64 = 30;
/// Device write bytes per application write byte below which buffered writes were absorbed.
pub const WRITES_ABSORBED_AMP: f64 = 0.5;
/// Share of all CPU time used by other processes plus steal above which the run had company, %.
pub const CPU_CONTENTION_PCT: f64 = 10.0;
/// Coefficient of variation of IOPS between repetitions above which results are unstable, %.
pub const CV_PCT: f64 = 20.0;

/// How much a finding matters.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// Context worth knowing; the result stands.
    Info,
    /// The result may not measure what it seems to.
    Warning,
}

/// A diagnosis attached to a result.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    /// Stable slug, e.g. `cache_served`.
    pub id: String,
    /// How much it matters.
    pub severity: Severity,
    /// One line.
    pub title: String,
    /// The numbers that triggered it.
    pub evidence: String,
    /// What to change, naming the property or option.
    pub suggestion: String,
}

use Severity::{Info, Warning};

fn found(
    id: &str,
    sev: Severity,
    title: impl Into<String>,
    ev: String,
    fix: impl Into<String>,
) -> Option<Finding> {
    Some(Finding {
        id: id.into(),
        severity: sev,
        title: title.into(),
        evidence: ev,
        suggestion: fix.into(),
    })
}

/// What the rules need of one run, computed once.
struct Ctx<'a> {
    r: &'a RunRecord,
    s: &'a Summary,
    kind: String,
    read_size: Option<f64>,
    write_size: Option<f64>,
    record: Option<(&'static str, f64)>,
}

impl<'a> Ctx<'a> {
    fn new(r: &'a RunRecord) -> Ctx<'a> {
        let kind = match (&r.stack, &r.target.filesystem) {
            (Some(st), _) if !matches!(st.kind.as_str(), "" | "dir") => {
                st.kind.to_ascii_lowercase()
            }
            (_, Some(fs)) if fs.contains("zfs") => "zfs".into(),
            (_, Some(fs)) => fs.to_ascii_lowercase(),
            _ if r.target.kind == "block_device" => "raw".into(),
            _ => String::new(),
        };
        let mut c = Ctx {
            r,
            s: &r.summary,
            kind,
            read_size: None,
            write_size: None,
            record: None,
        };
        c.read_size = c.app_size(true);
        c.write_size = c.app_size(false);
        let size = |k: &str| {
            c.prop(k)
                .and_then(|v| v.parse().ok().or_else(|| parse_size(v).ok()))
        };
        c.record = match size("recordsize_bytes").or_else(|| size("recordsize")) {
            Some(b) => Some(("recordsize", b as f64)),
            None => size("block_size").map(|b| ("block_size", b as f64)),
        }
        .filter(|(_, b)| *b > 0.0);
        c
    }

    fn prop(&self, key: &str) -> Option<&'a str> {
        self.r
            .stack
            .as_ref()?
            .properties
            .get(key)
            .map(String::as_str)
    }

    /// Average application read (or write) size, else the plan's block size for that direction.
    fn app_size(&self, read: bool) -> Option<f64> {
        let is =
            |k: OpKind| (k == OpKind::Read) == read && !matches!(k, OpKind::Sync | OpKind::Commit);
        let ops = self
            .r
            .roles
            .iter()
            .flat_map(|x| &x.ops)
            .filter(|o| is(o.kind));
        let (n, b) = ops.fold((0.0, 0.0), |(n, b), o| {
            (n + o.ops as f64, b + o.bytes as f64)
        });
        if n > 0.0 && b > 0.0 {
            return Some(b / n);
        }
        let does = |m: IoMix| match m {
            IoMix::Read => read,
            IoMix::Write => !read,
            IoMix::Update => true,
            IoMix::Mixed { read_pct } => (read && read_pct > 0) || (!read && read_pct < 100),
        };
        let steps = self.r.plan.roles.iter().flat_map(|x| &x.steps);
        steps
            .filter_map(|s| if let Step::Io(io) = s { Some(io) } else { None })
            .find(|io| does(io.mix) && io.bs > 0)
            .map(|io| io.bs as f64)
    }

    fn mount_options(&self) -> &'a str {
        let target = self.r.target.mount_options.as_deref();
        self.prop("mount_options").or(target).unwrap_or("")
    }

    fn buffered_roles(&self) -> Vec<&'a str> {
        let roles = self.r.plan.roles.iter().filter(|x| !x.direct);
        roles.map(|x| x.name.as_str()).collect()
    }

    /// The workload asks for durability: O_DSYNC/O_SYNC, fsync/fdatasync, or log commits.
    fn syncs(&self) -> bool {
        self.r.plan.roles.iter().any(|x| {
            let step = |s: &Step| matches!(s, Step::Sync(_) | Step::Commit { .. });
            x.sync_mode != SyncMode::None
                || x.sync_every.is_some()
                || x.log_writer
                || x.steps.iter().any(step)
        })
    }

    /// A role offset or a backing-device offset that is not a multiple of `unit`.
    fn misaligned(&self, unit: f64) -> bool {
        let unit = unit as u64;
        let roles = self.r.plan.roles.iter().map(|x| x.offset);
        let backing = self
            .r
            .stack
            .iter()
            .flat_map(|s| &s.backing)
            .map(|b| b.offset_bytes);
        unit > 0 && roles.chain(backing).any(|o| o % unit != 0)
    }
}

fn bytes(b: f64) -> String {
    format_bytes(b.max(0.0).round() as u64)
}

/// A size as a property value: `8k`, `1m`, `4096`.
fn slug(b: f64) -> String {
    let b = b.round() as u64;
    match b {
        _ if b >= 1 << 20 && b % (1 << 20) == 0 => format!("{}m", b >> 20),
        _ if b >= 1 << 10 && b % (1 << 10) == 0 => format!("{}k", b >> 10),
        _ => b.to_string(),
    }
}

/// The per-run rules over one run record. A failed run's figures are not results: no findings.
pub fn run_findings(record: &RunRecord) -> Vec<Finding> {
    if record.status == RunStatus::Failed {
        return Vec::new();
    }
    let c = Ctx::new(record);
    let rules: [fn(&Ctx) -> Option<Finding>; 14] = [
        cache_served,
        mirrored_writes,
        writes_absorbed,
        cpu_contention,
        read_amplification,
        prefetch_inflation,
        write_doubling,
        write_amplification,
        cpu_saturated,
        device_saturated,
        steadiness,
        dataset_fits_in_memory,
        compressible_data,
        warm_run,
    ];
    rules.iter().filter_map(|rule| rule(&c)).collect()
}

fn cache_served(c: &Ctx) -> Option<Finding> {
    let size = c.read_size?;
    let hit =
        c.s.reads_not_from_device_pct
            .filter(|h| *h >= CACHE_HIT_PCT);
    let per_op = c.s.device_read_bytes_per_op;
    if hit.is_none() && !per_op.is_some_and(|b| b < CACHE_BYTES_FRACTION * size) {
        return None;
    }
    let mut fixes = Vec::new();
    if !c.buffered_roles().is_empty() {
        fixes.push("direct=true".to_string());
    }
    if c.kind == "zfs" && !matches!(c.prop("primarycache"), Some("metadata" | "none")) {
        fixes.push("primarycache=metadata (the ARC caches data even under O_DIRECT)".into());
    }
    fixes.push("--mem-limit below the dataset size".into());
    let mem = bytes(c.r.environment.memory_bytes as f64);
    fixes.push(format!("a dataset larger than memory ({mem})"));
    let ev = format!(
        "{:.1}% of read bytes did not come from the devices: {} of device reads per {} \
         application read; dataset {}",
        c.s.reads_not_from_device_pct.unwrap_or(0.0),
        bytes(per_op.unwrap_or(0.0)),
        bytes(size),
        bytes(c.r.plan.dataset_bytes() as f64)
    );
    let title = "reads were served by caches: the number measures the cache, not the storage";
    found("cache_served", Warning, title, ev, fixes.join("; "))
}

fn read_amplification(c: &Ctx) -> Option<Finding> {
    let size = c.read_size?;
    let amp = c.s.device_read_bytes_per_op? / size;
    if amp.is_nan() || amp < READ_AMP {
        return None;
    }
    let mut ev = format!(
        "each {} application read costs {} of device reads (amplification {amp:.1})",
        bytes(size),
        bytes(amp * size)
    );
    let misaligned = "misaligned: each read spans two records; align the I/O region (offset, \
                      and any partition offset) to the record size";
    let (title, fix) = match c.record {
        Some((name, rec)) if rec > size * 1.01 => {
            ev += &format!("; {name} {}", bytes(rec));
            let title = format!(
                "{name} {} is larger than the {} reads",
                bytes(rec),
                bytes(size)
            );
            let fix = match name {
                "recordsize" => format!(
                    "set recordsize={0} (--stack zfs:recordsize={0})",
                    slug(record_for(size))
                ),
                _ => format!(
                    "make the file system with a {} block size (mkfs=)",
                    bytes(size)
                ),
            };
            (title, fix + " to match the I/O size")
        }
        Some((_, rec)) if (rec - size).abs() <= size * 0.01 && c.misaligned(rec) => (
            "reads are misaligned with the records".into(),
            misaligned.into(),
        ),
        // Aligned reads of whole records: a cold ZFS reads the indirect blocks (block
        // pointers) of each record beside it, about one more block per read.
        Some(("recordsize", _)) if amp <= MISALIGNED_AMP_MAX => (
            "cold reads fetched ZFS indirect blocks beside the data".into(),
            "each record's block pointers are read on first access: a longer run, a warm \
             metadata cache (primarycache=metadata keeps them) or a smaller dataset lowers it"
                .into(),
        ),
        _ if c.misaligned(size) => (
            "reads are misaligned with the blocks".into(),
            misaligned.into(),
        ),
        _ => (
            "the devices read more than the application asked for".into(),
            "check the file-system block size against the read size and the device's \
             read_ahead_kb; direct=true avoids page-cache read-ahead"
                .into(),
        ),
    };
    found("read_amplification", Warning, title, ev, fix)
}

fn prefetch_inflation(c: &Ctx) -> Option<Finding> {
    let size = c.read_size?;
    let amp = c.s.device_read_bytes_per_op? / size;
    let avg = c.s.avg_device_read_size_bytes?;
    let base = c.record.map_or(size, |(_, rec)| rec.max(size));
    let misaligned = amp <= MISALIGNED_AMP_MAX && c.misaligned(base);
    if !(amp >= READ_AMP && avg >= PREFETCH_FACTOR * base) || misaligned {
        return None;
    }
    let mut ev = format!(
        "average device read {} vs {} (larger of record and application read size); \
         amplification {amp:.1}",
        bytes(avg),
        bytes(base)
    );
    for key in ["vdev_cache", "prefetch"] {
        if let Some(v) = c.prop(key) {
            ev += &format!("; {key}: {v}");
        }
    }
    let fix = if c.kind == "zfs" {
        "--stack zfs:vdev_cache=0,prefetch=off (the vdev cache reads 64 KiB around small \
         reads; file prefetch reads ahead)"
    } else {
        "lower the device's read_ahead_kb, or posix_fadvise(POSIX_FADV_RANDOM), or direct=true"
    };
    let title = "device reads are larger than any record or I/O: prefetch or read-ahead";
    found("prefetch_inflation", Warning, title, ev, fix)
}

/// Write amplification per copy the layout stores (so a mirror's first 2x is not blamed on
/// the file system), with the evidence in words.
fn write_amp(c: &Ctx) -> Option<(f64, f64, String)> {
    let size = c.write_size?;
    let total = c.s.device_write_bytes_per_op? / size;
    let mut ev = format!(
        "each {} application write costs {} of device writes (amplification {total:.1})",
        bytes(size),
        bytes(total * size)
    );
    let copies = c.s.redundancy.filter(|r| *r > 1.0);
    let amp = copies.map_or(total, |r| total / r);
    if let Some(r) = copies {
        ev += &format!("; the layout stores {r:.2} copies, so {amp:.1} per copy");
    }
    amp.is_finite().then_some((size, amp, ev))
}

/// A mirrored or parity layout: say that part of the write amplification is the layout's.
fn mirrored_writes(c: &Ctx) -> Option<Finding> {
    let r = c.s.redundancy.filter(|r| *r > 1.0)?;
    let total = c.s.write_amplification?;
    let ev = format!(
        "write amplification {total:.2} over all member devices: {r:.2} from the layout's copies \
         ({}), {:.2} per copy",
        c.prop("layout")
            .or(c.prop("data_profile"))
            .unwrap_or("mirror or parity"),
        total / r
    );
    let title = format!("the layout writes every byte {r:.2} times: that much of the write amplification is redundancy");
    let fix = "compare write_amplification_per_copy across stacks with different layouts; a single-device baseline writes each byte once";
    found("mirrored_writes", Info, title, ev, fix)
}

fn write_doubling(c: &Ctx) -> Option<Finding> {
    let (_, amp, ev) = write_amp(c)?;
    let zfs_sync = c.kind == "zfs" && c.prop("sync") == Some("always");
    let journal = c.kind.starts_with("ext") || c.kind == "xfs" || zfs_sync || c.syncs();
    if !(WRITE_DOUBLING_MIN..WRITE_AMP_HIGH).contains(&amp) || !journal {
        return None;
    }
    let fix = if c.kind == "zfs" {
        "ZFS writes sync data to its intent log (ZIL) and again into the records when the \
         transaction group commits: a separate log device (--stack zfs:log=1) takes the log \
         writes off the data devices; logbias=throughput writes large sync writes once, at a \
         latency cost"
    } else if c.kind.starts_with("ext") {
        "ext4's journal writes metadata beside the data: an external journal device moves it; \
         data=writeback weakens ordering and data=journal doubles all data, so name the mount \
         option with the result"
    } else if c.kind == "xfs" {
        "the XFS log writes metadata beside the data: an external log device (mkfs logdev=) moves it"
    } else {
        "each sync writes log or metadata blocks beside the data: fewer syncs (fsync every N \
         writes, group commit) write less"
    };
    let title = "device writes about double the data: a journal or intent log writes too";
    found("write_doubling", Info, title, ev, fix)
}

/// The ZFS record size that fits I/O of `size` bytes: the next power of two, 512 B to 128 KiB.
fn record_for(size: f64) -> f64 {
    let p = size.max(512.0).log2().ceil();
    2f64.powf(p).min(131_072.0)
}

fn write_amplification(c: &Ctx) -> Option<Finding> {
    let (size, amp, mut ev) = write_amp(c)?;
    if amp < WRITE_AMP_HIGH {
        return None;
    }
    let fix = match (c.kind.as_str(), c.record) {
        ("zfs", Some((_, rec))) if rec > size * 1.01 => {
            ev += &format!("; recordsize {}", bytes(rec));
            format!(
                "each small write rewrites a whole record plus checksums and metadata \
                     (copy-on-write): set recordsize={}",
                slug(record_for(size))
            )
        }
        ("zfs" | "btrfs", _) => "copy-on-write: each small overwrite writes a new block plus \
             checksum and metadata-tree updates; on btrfs nodatacow (chattr +C) turns COW and \
             data checksums off, on zfs match recordsize to the write size"
            .into(),
        _ => "journal, metadata and partial-block writes: compare the block size with the \
              write size and count the syncs"
            .into(),
    };
    let title = "the devices write several times the data the application wrote";
    found("write_amplification", Warning, title, ev, fix)
}

/// Buffered writes the page cache took in and had not written out by the end of the window.
fn writes_absorbed(c: &Ctx) -> Option<Finding> {
    let amp = c.s.write_amplification?;
    let mem = c.r.memory.as_ref();
    let grew = mem.and_then(|m| Some(m.dirty_end_bytes?.saturating_sub(m.dirty_start_bytes?)));
    let buffered = c.r.plan.roles.iter().any(|x| {
        let writes = x
            .steps
            .iter()
            .any(|s| matches!(s, Step::Io(io) if io.mix != IoMix::Read));
        writes && !x.direct && x.sync_mode == SyncMode::None
    });
    if !buffered || amp >= WRITES_ABSORBED_AMP {
        return None;
    }
    let mut ev = format!(
        "the devices wrote {:.0}% of the bytes the application wrote",
        100.0 * amp
    );
    if let (Some(g), Some(m)) = (grew, mem) {
        ev += &format!(
            "; dirty page cache grew by {} (largest {})",
            bytes(g as f64),
            bytes(m.dirty_max_bytes as f64)
        );
    }
    let title =
        "buffered writes were absorbed by the page cache: the devices had not written them yet";
    let fix = "direct=true, or fsync/fdatasync=N, or a runtime long enough for write-back to \
               keep up (vm.dirty_* limits decide when it does)";
    found("writes_absorbed", Info, title, ev, fix)
}

/// Other processes or the hypervisor took a noticeable share of the machine.
fn cpu_contention(c: &Ctx) -> Option<Finding> {
    let cpu = c.r.cpu.as_ref()?;
    let other = cpu.split.as_ref()?.other_pct;
    if other + cpu.steal_pct <= CPU_CONTENTION_PCT {
        return None;
    }
    let ev = format!(
        "other processes used {other:.1}% and the hypervisor stole {:.1}% of all CPU time",
        cpu.steal_pct
    );
    let title = "the machine was not idle: other processes or steal competed with the run";
    let fix = "stop other work on the machine (or pin it elsewhere) and repeat; cpu_us_per_op \
               excludes them, but latency and throughput do not";
    found("cpu_contention", Warning, title, ev, fix)
}

fn cpu_saturated(c: &Ctx) -> Option<Finding> {
    let busy = c.s.cpu_busy_pct.or(c.r.cpu.as_ref().map(|x| x.busy_pct))?;
    if busy < CPU_BUSY_PCT {
        return None;
    }
    let mut ev = format!("CPU {busy:.1}% busy");
    if let Some(cpu) = &c.r.cpu {
        ev += &format!(" of {} CPUs ({:.1}% system)", cpu.cpus, cpu.system_pct);
    }
    if let Some(us) = c.s.cpu_us_per_op {
        ev += &format!("; {us:.1} µs CPU per operation");
    }
    let mut fix =
        "compare cpu_us_per_op rather than IOPS, or give the run more CPUs / fewer threads"
            .to_string();
    let fuse =
        c.r.stack
            .as_ref()
            .is_some_and(|st| st.backend.contains("zfs-fuse"));
    if fuse {
        fix += "; zfs-fuse is a user-space file system that spends CPU on every I/O";
    }
    let title = "the CPU was saturated: the result measures CPU, not storage";
    found("cpu_saturated", Warning, title, ev, &fix)
}

fn device_saturated(c: &Ctx) -> Option<Finding> {
    let busy: Vec<String> = (c.r.devices.iter())
        .filter(|d| d.role == "stack" && d.util_pct >= DEVICE_UTIL_PCT)
        .map(|d| {
            format!(
                "{} busy {:.1}% ({:.0} r/s, {:.0} w/s)",
                d.name, d.util_pct, d.read_iops, d.write_iops
            )
        })
        .collect();
    if busy.is_empty() {
        return None;
    }
    let fix = "latency includes queueing: lower threads/iodepth or set rate_iops to measure \
               below saturation; for loop devices the backing device is the limit";
    let title = "a stack device was busy all the time: it is the bottleneck";
    found("device_saturated", Info, title, busy.join("; "), fix)
}

/// `not_steady` over the measured samples, or `too_short` when there are too few to judge.
fn steadiness(c: &Ctx) -> Option<Finding> {
    let mut pts: Vec<(f64, f64)> = (c.r.samples.iter())
        .filter(|s| s.measured && s.t_s.is_finite())
        .map(|s| (s.t_s, s.read_iops + s.write_iops))
        .collect();
    // The last sample covers a partial second; its rate is noisy.
    if let [.., (a, _), (b, _)] = pts[..] {
        if b - a < 0.75 && pts.len() > MIN_STEADY_SAMPLES {
            pts.pop();
        }
    }
    let secs = c.r.measured_ns as f64 / 1e9;
    if pts.len() < MIN_STEADY_SAMPLES {
        if c.r.samples.is_empty() && secs >= MIN_STEADY_SAMPLES as f64 {
            return None;
        }
        let title = format!("the run measured {secs:.1} s; steady state cannot be judged");
        let ev = format!("{} measured samples (need {MIN_STEADY_SAMPLES})", pts.len());
        let fix = format!("use runtime ≥ {SUGGESTED_RUNTIME_S}s");
        return found("too_short", Info, title, ev, fix);
    }
    let n = pts.len() as f64;
    let (mx, my) = pts
        .iter()
        .fold((0.0, 0.0), |(x, y), p| (x + p.0 / n, y + p.1 / n));
    let sxx: f64 = pts.iter().map(|p| (p.0 - mx).powi(2)).sum();
    let sxy: f64 = pts.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    let span = pts[pts.len() - 1].0 - pts[0].0;
    let change = 100.0 * sxy / sxx * span / my;
    if !(my > 0.0 && sxx > 0.0 && change.abs() >= TREND_PCT) {
        return None;
    }
    let k = pts.len() / 3;
    let mean = |p: &[(f64, f64)]| p.iter().map(|x| x.1).sum::<f64>() / p.len() as f64;
    let ev = format!(
        "throughput changed {change:+.0}% over {span:.0} s (linear fit, mean {my:.0} ops/s); \
         first third {:.0} ops/s, last third {:.0} ops/s",
        mean(&pts[..k]),
        mean(&pts[pts.len() - k..])
    );
    let fix = "a longer ramp_time and runtime, so caches, write-back and background work settle \
               before measuring; see the --timeseries CSV";
    let title = "throughput was still trending over the measured window";
    found("not_steady", Warning, title, ev, fix)
}

fn dataset_fits_in_memory(c: &Ctx) -> Option<Finding> {
    let data = c.r.plan.dataset_bytes();
    let (limit, mem) = (c.r.stack.as_ref(), c.r.environment.memory_bytes);
    let mem = limit
        .and_then(|s| s.mem_limit_bytes)
        .map_or(mem, |l| l.min(mem));
    let buffered = c.buffered_roles();
    let arc = c.kind == "zfs" && c.prop("primarycache") == Some("all");
    let tmpfs = c.kind == "tmpfs"; // memory by design
    if data == 0 || data >= mem || (buffered.is_empty() && !arc) || tmpfs {
        return None;
    }
    let who = match buffered.is_empty() {
        true => "the ZFS ARC (primarycache=all)".to_string(),
        false => format!("buffered roles: {}", buffered.join(", ")),
    };
    let ev = format!(
        "dataset {} < memory {}; {who}",
        bytes(data as f64),
        bytes(mem as f64)
    );
    let fix = "direct=true (and primarycache=metadata on ZFS), a data size larger than memory, \
               or --mem-limit below the dataset size";
    let title = "the dataset fits in memory: caches may serve the I/O";
    found("dataset_fits_in_memory", Warning, title, ev, fix)
}

fn compressible_data(c: &Ctx) -> Option<Finding> {
    let pct = c.r.plan.compress_pct;
    let on = match c.kind.as_str() {
        "zfs" => c
            .prop("compression")
            .filter(|v| *v != "off")
            .map(|v| format!("compression={v}")),
        "btrfs" => (c
            .mount_options()
            .split(',')
            .find(|o| o.starts_with("compress")))
        .filter(|o| !o.ends_with("=no"))
        .map(|o| format!("mount option {o}")),
        _ => None,
    };
    let on = on.filter(|_| pct > 0)?;
    let mut ev = format!("compress_pct={pct}; {on}");
    if let Some(wa) = c.s.write_amplification {
        ev += &format!("; write amplification {wa:.2}");
    }
    let fix = "compare with compress_pct=0, or turn compression off, to measure the storage; \
               report compress_pct with the result";
    let title = "the data compresses and the stack compresses: it may store less than written";
    found("compressible_data", Info, title, ev, fix)
}

fn warm_run(c: &Ctx) -> Option<Finding> {
    let warm = c.r.cold == Some(false) || c.r.stack.as_ref().is_some_and(|s| s.cold == Some(false));
    if !warm {
        return None;
    }
    let fix = "drop --warm (bakeoff syncs, drops caches and re-imports ZFS pools before a run)";
    let title = "caches were not dropped before the run";
    found("warm_run", Info, title, "cold: false".into(), fix)
}

/// Rules over the repetitions of one cell: too few repetitions, results that differ a lot
/// between repetitions, then the run findings merged. A run finding is reported once, with the
/// evidence of the median run (by total IOPS) among those it fired in and how many did; one
/// seen in no more than half of the runs is downgraded to [`Severity::Info`]. Failed runs
/// do not count.
pub fn cell_findings(runs: &[RunRecord], min_repetitions: usize) -> Vec<Finding> {
    let ok: Vec<&RunRecord> = runs
        .iter()
        .filter(|r| r.status != RunStatus::Failed)
        .collect();
    let mut out = Vec::new();
    if ok.len() < min_repetitions {
        let ev = format!(
            "{} usable of {} runs; need {min_repetitions}",
            ok.len(),
            runs.len()
        );
        let fix = format!("repeat the cell at least {min_repetitions} times");
        let title = "too few repetitions to tell a difference from noise".to_string();
        out.extend(found("too_few_repetitions", Warning, title, ev, fix));
    }
    out.extend(variance(&ok));
    out.extend(merge(&ok));
    out
}

type Metric = fn(&Summary) -> Option<f64>;

fn variance(runs: &[&RunRecord]) -> Option<Finding> {
    let metrics: [(&str, Metric); 2] = [
        ("read IOPS", |s| s.read_iops),
        ("write IOPS", |s| s.write_iops),
    ];
    let mut parts = Vec::new();
    for (name, get) in metrics {
        let v: Vec<f64> = runs
            .iter()
            .filter_map(|r| get(&r.summary))
            .filter(|x| x.is_finite())
            .collect();
        let n = v.len() as f64;
        let mean = v.iter().sum::<f64>() / n;
        let sd = (v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt();
        let cv = 100.0 * sd / mean;
        if v.len() >= 2 && mean > 0.0 && cv > CV_PCT {
            let (lo, hi) = v
                .iter()
                .fold((f64::MAX, f64::MIN), |(a, b), x| (a.min(*x), b.max(*x)));
            parts.push(format!(
                "{name} {lo:.0}–{hi:.0} over {} runs: mean {mean:.0}, CV {cv:.1}%",
                v.len()
            ));
        }
    }
    if parts.is_empty() {
        return None;
    }
    let fix = "look for not_steady and warm_run; a longer ramp_time and runtime, a quiet \
               machine and more repetitions";
    let title = "results differ a lot between repetitions";
    found("high_variance", Warning, title, parts.join("; "), fix)
}

fn merge(runs: &[&RunRecord]) -> Vec<Finding> {
    let total =
        |r: &RunRecord| r.summary.read_iops.unwrap_or(0.0) + r.summary.write_iops.unwrap_or(0.0);
    let per_run: Vec<(f64, Vec<Finding>)> =
        runs.iter().map(|r| (total(r), run_findings(r))).collect();
    let mut ids: Vec<&str> = Vec::new();
    for f in per_run.iter().flat_map(|(_, fs)| fs) {
        if !ids.contains(&f.id.as_str()) {
            ids.push(&f.id);
        }
    }
    ids.iter()
        .filter_map(|id| {
            let mut with: Vec<(f64, &Finding)> = (per_run.iter())
                .filter_map(|(t, fs)| fs.iter().find(|f| f.id == *id).map(|f| (*t, f)))
                .collect();
            with.sort_by(|a, b| a.0.total_cmp(&b.0));
            let mut f = with.get(with.len() / 2)?.1.clone();
            f.evidence += &format!(" (in {} of {} runs; median run)", with.len(), runs.len());
            if with.len() * 2 <= runs.len() {
                f.severity = Severity::Info;
            }
            Some(f)
        })
        .collect()
}

#[cfg(test)]
#[path = "findings_tests.rs"]
mod tests;
