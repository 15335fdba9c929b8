//! Plain jobs in fio's vocabulary, and the run-wide keys every workload accepts.

use crate::plan::*;
use crate::settings::{Settings, SpecError};
use crate::values::{Lookup, Val};
use std::collections::BTreeMap;
use std::time::Duration;

/// A documented key: name, default and one line of help.
pub struct KeyDoc {
    /// The key as written in files and `--set`.
    pub key: &'static str,
    /// Default value.
    pub default: &'static str,
    /// What it means (fio's meaning where fio has the key).
    pub help: &'static str,
}

/// Keys every workload accepts, plain job or personality.
pub const RUN_KEYS: &[KeyDoc] = &[
    KeyDoc {
        key: "engine",
        default: "psync",
        help: "I/O engine: psync, io_uring or null (no I/O; tests the tool)",
    },
    KeyDoc {
        key: "runtime",
        default: "30s",
        help: "measured duration",
    },
    KeyDoc {
        key: "ramp_time",
        default: "0s",
        help: "warm-up before measuring, in addition to runtime",
    },
    KeyDoc {
        key: "seed",
        default: "1",
        help: "seed of data contents and offsets",
    },
    KeyDoc {
        key: "buffer_compress_percentage",
        default: "0",
        help: "share of each data buffer that compresses (0 = incompressible)",
    },
];

/// Keys of a plain job (fio's meaning unless noted).
pub const JOB_KEYS: &[KeyDoc] = &[
    KeyDoc { key: "rw", default: "randread", help: "read, write, randread, randwrite, randrw, rw (sequential mixed)" },
    KeyDoc { key: "rwmixread", default: "50", help: "percentage of reads in randrw / rw" },
    KeyDoc { key: "bs", default: "4k", help: "bytes per I/O" },
    KeyDoc { key: "iodepth", default: "1", help: "I/Os in flight per job thread (needs engine=io_uring above 1)" },
    KeyDoc { key: "jobs", default: "1", help: "job threads (fio numjobs); they share the data files" },
    KeyDoc { key: "direct", default: "false", help: "O_DIRECT (bypass the page cache)" },
    KeyDoc { key: "sync", default: "none", help: "open flag: none, dsync (O_DSYNC) or sync (O_SYNC); true means sync" },
    KeyDoc { key: "fsync", default: "0", help: "fsync after every N writes (0 = never)" },
    KeyDoc { key: "fdatasync", default: "0", help: "fdatasync after every N writes (0 = never)" },
    KeyDoc { key: "size", default: "1g", help: "total bytes of the data files (shared by all jobs)" },
    KeyDoc { key: "offset", default: "0", help: "start of the I/O region inside each file" },
    KeyDoc { key: "nrfiles", default: "1", help: "number of data files" },
    KeyDoc { key: "rate_iops", default: "0", help: "target IOPS per job thread, open loop; latency counts from the scheduled time (0 = unthrottled)" },
];

/// Largest block size accepted.
pub const MAX_BS: u64 = 256 << 20;

/// Run-wide values resolved from [`RUN_KEYS`].
pub(crate) struct RunValues {
    pub engine: EngineKind,
    pub runtime: Duration,
    pub ramp_time: Duration,
    pub seed: u64,
    pub compress_pct: u8,
}

pub(crate) fn run_values(look: &Lookup) -> Result<RunValues, SpecError> {
    let d = |k: &str| look.get(k, default_of(RUN_KEYS, k));
    let engine = d("engine");
    let engine = EngineKind::parse(engine.text.trim()).map_err(|m| engine.invalid(m))?;
    let week = Duration::from_secs(7 * 86400);
    Ok(RunValues {
        engine,
        runtime: d("runtime").duration(Duration::from_millis(100), week)?,
        ramp_time: d("ramp_time").duration(Duration::ZERO, week)?,
        seed: d("seed").int(0, u64::MAX)?,
        compress_pct: d("buffer_compress_percentage").int(0, 100)? as u8,
    })
}

/// The default of `key` in a key table.
pub fn default_of(keys: &[KeyDoc], key: &str) -> &'static str {
    keys.iter()
        .find(|k| k.key == key)
        .map(|k| k.default)
        .unwrap_or("")
}

/// Refuses keys that neither table knows, listing what is allowed.
pub(crate) fn check_known(settings: &Settings, allowed: &[&str]) -> Result<(), SpecError> {
    for (key, s) in settings.iter() {
        if !allowed.contains(&key.as_str()) {
            let mut names: Vec<&str> = allowed.to_vec();
            names.sort_unstable();
            return Err(SpecError::new(
                s.origin.clone(),
                key,
                format!("unknown key (allowed: {})", names.join(", ")),
            ));
        }
    }
    Ok(())
}

fn io_mix(rw: &Val, mixread: u8) -> Result<(IoMix, Pattern), SpecError> {
    let kinds = [
        "read",
        "write",
        "randread",
        "randwrite",
        "randrw",
        "rw",
        "readwrite",
    ];
    Ok(match rw.choice(&kinds)? {
        "read" => (IoMix::Read, Pattern::Sequential),
        "write" => (IoMix::Write, Pattern::Sequential),
        "randread" => (IoMix::Read, Pattern::Random),
        "randwrite" => (IoMix::Write, Pattern::Random),
        "randrw" => (IoMix::Mixed { read_pct: mixread }, Pattern::Random),
        _ => (IoMix::Mixed { read_pct: mixread }, Pattern::Sequential),
    })
}

/// Parses `sync`: none/false, dsync, sync/true.
pub(crate) fn sync_mode(v: &Val) -> Result<SyncMode, SpecError> {
    Ok(
        match v.choice(&["none", "false", "0", "dsync", "sync", "true", "1"])? {
            "dsync" => SyncMode::Dsync,
            "sync" | "true" | "1" => SyncMode::Sync,
            _ => SyncMode::None,
        },
    )
}

/// Checks direct-I/O alignment and engine/iodepth agreement for one role.
pub(crate) fn check_io_rules(
    engine: EngineKind,
    direct: bool,
    iodepth: &Val,
    depth: u32,
    bs: &Val,
    bs_bytes: u64,
) -> Result<(), SpecError> {
    if depth > 1 && engine == EngineKind::Psync {
        return Err(iodepth.invalid(format!(
            "iodepth={depth} needs an asynchronous engine: psync has one I/O in flight per \
             thread (use engine=io_uring, or raise jobs instead)"
        )));
    }
    if direct && bs_bytes % 512 != 0 {
        return Err(bs.invalid(format!(
            "'{}' with direct=true must be a multiple of 512 bytes (the smallest logical block)",
            bs.text
        )));
    }
    Ok(())
}

/// Resolves a plain job into a one-role plan.
pub(crate) fn plan_job(name: &str, settings: &Settings) -> Result<Plan, SpecError> {
    let allowed: Vec<&str> = RUN_KEYS.iter().chain(JOB_KEYS).map(|k| k.key).collect();
    check_known(settings, &allowed)?;
    let look = Lookup {
        settings,
        workload: name,
    };
    let run = run_values(&look)?;
    let g = |k: &str| look.get(k, default_of(JOB_KEYS, k));
    let mixread = g("rwmixread").int(0, 100)? as u8;
    let (mix, pattern) = io_mix(&g("rw"), mixread)?;
    let bs_val = g("bs");
    let bs = bs_val.size(1, MAX_BS)?;
    let depth_val = g("iodepth");
    let iodepth = depth_val.int(1, 4096)? as u32;
    let direct = g("direct").boolean()?;
    check_io_rules(run.engine, direct, &depth_val, iodepth, &bs_val, bs)?;
    let nrfiles = g("nrfiles").int(1, 100_000)? as u32;
    let size_val = g("size");
    let size = size_val.size(1, u64::MAX / 2)?;
    let file_size = size / u64::from(nrfiles);
    let offset_val = g("offset");
    let offset = offset_val.size(0, u64::MAX / 2)?;
    if offset + bs > file_size {
        return Err(size_val.invalid(format!(
            "each of the {nrfiles} file(s) holds {file_size} bytes, too small for offset {offset} \
             plus one {bs}-byte block (raise size or lower offset/bs)"
        )));
    }
    if direct && offset % 512 != 0 {
        return Err(offset_val.invalid("with direct=true the offset must be a multiple of 512"));
    }
    let rate = g("rate_iops");
    let rate_iops = if rate.text.trim() == "0" {
        None
    } else {
        Some(rate.rate(1e8)?)
    };
    let sync_every = sync_every(&g("fsync"), &g("fdatasync"))?;
    let role = RolePlan {
        name: "job".into(),
        threads: g("jobs").int(1, 4096)? as u32,
        fileset: 0,
        direct,
        sync_mode: sync_mode(&g("sync"))?,
        iodepth,
        offset,
        rate_iops,
        steps: vec![Step::Io(IoStep {
            mix,
            pattern,
            bs,
            count: None,
        })],
        gate: None,
        sync_every,
        log: false,
        log_writer: false,
    };
    let mut resolved = BTreeMap::new();
    for k in RUN_KEYS.iter().chain(JOB_KEYS) {
        resolved.insert(k.key.to_string(), look.get(k.key, k.default).text);
    }
    Ok(Plan {
        workload: name.to_string(),
        engine: run.engine,
        runtime: run.runtime,
        ramp_time: run.ramp_time,
        seed: run.seed,
        compress_pct: run.compress_pct,
        filesets: vec![FilesetPlan {
            name: "data".into(),
            nrfiles,
            file_size,
        }],
        roles: vec![role],
        settings: resolved,
    })
}

fn sync_every(fsync: &Val, fdatasync: &Val) -> Result<Option<SyncEvery>, SpecError> {
    let f = fsync.int(0, 1 << 32)?;
    let fd = fdatasync.int(0, 1 << 32)?;
    Ok(match (f, fd) {
        (0, 0) => None,
        (n, 0) => Some(SyncEvery {
            kind: SyncKind::Fsync,
            writes: n,
        }),
        (0, n) => Some(SyncEvery {
            kind: SyncKind::Fdatasync,
            writes: n,
        }),
        _ => return Err(fdatasync.invalid("set fsync or fdatasync, not both")),
    })
}

#[cfg(test)]
mod tests {
    use crate::settings::Settings;
    use crate::workload::builtin;

    fn plan(name: &str, set: &str) -> Result<crate::Plan, crate::SpecError> {
        builtin(name)
            .unwrap()
            .plan(&Settings::parse_set(set).unwrap())
    }

    #[test]
    fn randread_takes_fio_keys() {
        let p = plan("randread", "bs=8k,direct=true,jobs=4,runtime=30s").unwrap();
        assert_eq!(p.roles[0].threads, 4);
        assert!(p.roles[0].direct);
        assert_eq!(p.runtime.as_secs(), 30);
        assert_eq!(p.settings["bs"], "8k");
    }

    #[test]
    fn errors_name_key_origin_and_range() {
        let e = plan("randread", "jobs=0").unwrap_err().to_string();
        assert_eq!(e, "--set: jobs: '0' is out of range (allowed 1 to 4096)");
        let e = plan("randread", "colour=blue").unwrap_err().to_string();
        assert!(e.contains("unknown key") && e.contains("bs"), "{e}");
        let e = plan("randread", "iodepth=8").unwrap_err().to_string();
        assert!(e.contains("io_uring"), "{e}");
        let e = plan("randread", "direct=1,bs=1000")
            .unwrap_err()
            .to_string();
        assert!(e.contains("multiple of 512"), "{e}");
        let e = plan("randread", "fsync=1,fdatasync=1")
            .unwrap_err()
            .to_string();
        assert!(e.contains("not both"), "{e}");
    }

    #[test]
    fn file_errors_carry_line_numbers() {
        let w = crate::workload::Workload::parse(
            "mine",
            "rw = \"randread\"\nbs = \"0\"\n",
            "mine.toml",
        )
        .unwrap();
        let e = w.plan(&Settings::default()).unwrap_err().to_string();
        assert!(e.starts_with("mine.toml:2: bs:"), "{e}");
    }
}
