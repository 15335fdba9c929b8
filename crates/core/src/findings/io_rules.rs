//! Rules over the I/O figures: where reads were served, and what the device did per write.

use super::context::{bytes, slug, Ctx};
use super::*;

pub(super) fn cache_served(c: &Ctx) -> Option<Finding> {
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

pub(super) fn read_amplification(c: &Ctx) -> Option<Finding> {
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

pub(super) fn prefetch_inflation(c: &Ctx) -> Option<Finding> {
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
pub(super) fn write_amp(c: &Ctx) -> Option<(f64, f64, String)> {
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
pub(super) fn mirrored_writes(c: &Ctx) -> Option<Finding> {
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

pub(super) fn write_doubling(c: &Ctx) -> Option<Finding> {
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
pub(super) fn record_for(size: f64) -> f64 {
    let p = size.max(512.0).log2().ceil();
    2f64.powf(p).min(131_072.0)
}

pub(super) fn write_amplification(c: &Ctx) -> Option<Finding> {
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
pub(super) fn writes_absorbed(c: &Ctx) -> Option<Finding> {
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
