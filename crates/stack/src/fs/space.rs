//! Space read back after a run of phases: what the data takes on the devices and, where the
//! file system compresses, before compression. Each driver's `space` hook picks its source;
//! this file holds the common one (`df`) and the parsers, which are pure and tested on the
//! tools' output.

use crate::error::StackError;
use crate::exec::Exec;
use bakeoff_core::phaserecord::SpaceRecord;
use bakeoff_core::record::StackInfo;
use std::path::Path;

/// The hook of stacks that hold no file system (raw): nothing to read back.
pub(crate) fn none(
    _: &StackInfo,
    _: &Path,
    _: &mut Exec,
) -> Result<Option<SpaceRecord>, StackError> {
    Ok(None)
}

/// `df -B1` of the mount: size, used, available; no compression.
pub(crate) fn df(
    _: &StackInfo,
    target: &Path,
    exec: &mut Exec,
) -> Result<Option<SpaceRecord>, StackError> {
    let t = target.to_string_lossy();
    let out = exec.run("df", &["-B1", "--output=size,used,avail", &t])?;
    Ok(Some(
        parse_df(&out).ok_or_else(|| unreadable("df", &t, &out))?,
    ))
}

/// An error for output a tool printed that is not what it should be.
pub(crate) fn unreadable(tool: &str, target: &str, out: &str) -> StackError {
    let first = out.lines().next().unwrap_or("").trim();
    StackError::Environment(format!(
        "`{tool}` of {target} printed what bakeoff cannot read (\"{first}\"): space not read back"
    ))
}

/// `df -B1 --output=size,used,avail`: a header, then the three numbers.
pub(crate) fn parse_df(out: &str) -> Option<SpaceRecord> {
    let line = out.lines().nth(1)?;
    let n: Vec<u64> = line
        .split_whitespace()
        .filter_map(|w| w.parse().ok())
        .collect();
    let [size, used, avail] = n[..] else {
        return None;
    };
    Some(SpaceRecord {
        source: "df".into(),
        used_bytes: Some(used),
        size_bytes: Some(size),
        available_bytes: Some(avail),
        ..SpaceRecord::default()
    })
}

/// `compsize -b`'s TOTAL row: disk usage and uncompressed bytes, their ratio.
pub(crate) fn parse_compsize(out: &str) -> Option<SpaceRecord> {
    let total = out.lines().find(|l| l.starts_with("TOTAL"))?;
    let n: Vec<u64> = total
        .split_whitespace()
        .filter_map(|w| w.parse().ok())
        .collect();
    let [disk, uncompressed, ..] = n[..] else {
        return None;
    };
    Some(SpaceRecord {
        source: "compsize".into(),
        used_bytes: Some(disk),
        logical_bytes: Some(uncompressed),
        compress_ratio: (disk > 0).then(|| uncompressed as f64 / disk as f64),
        ..SpaceRecord::default()
    })
}

/// `btrfs filesystem df -b`: the bytes used by data, metadata and system chunks.
pub(crate) fn parse_btrfs_df(out: &str) -> Option<SpaceRecord> {
    let mut used = None;
    // The global reserve is held back for metadata, not used by anything.
    for line in out.lines().filter(|l| !l.starts_with("GlobalReserve")) {
        let Some((_, rest)) = line.split_once("used=") else {
            continue;
        };
        let n: u64 = rest
            .trim()
            .split(|c: char| !c.is_ascii_digit())
            .next()?
            .parse()
            .ok()?;
        used = Some(used.unwrap_or(0) + n);
    }
    Some(SpaceRecord {
        source: "btrfs filesystem df".into(),
        used_bytes: Some(used?),
        ..SpaceRecord::default()
    })
}

/// `zfs get -Hp -o property,value all`: `used`, `logicalused` (where the pool has it),
/// `available` in bytes, `compressratio` as `1.72x` or `1.72`.
pub(crate) fn parse_zfs(out: &str) -> Option<SpaceRecord> {
    let mut r = SpaceRecord {
        source: "zfs get".into(),
        ..SpaceRecord::default()
    };
    for line in out.lines() {
        let mut f = line.split_whitespace();
        let (Some(k), Some(v)) = (f.next(), f.next()) else {
            continue;
        };
        match k {
            "used" => r.used_bytes = v.parse().ok(),
            "logicalused" => r.logical_bytes = v.parse().ok(),
            "available" => r.available_bytes = v.parse().ok(),
            "compressratio" => r.compress_ratio = v.trim_end_matches('x').parse().ok(),
            _ => {}
        }
    }
    r.used_bytes?;
    r.size_bytes = Some(r.used_bytes? + r.available_bytes?);
    Some(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn df_gives_size_used_and_available() {
        let out = "     1B-blocks      Used     Avail\n1006632960 2637824 935264256\n";
        let r = parse_df(out).unwrap();
        assert_eq!(r.size_bytes, Some(1_006_632_960));
        assert_eq!(r.used_bytes, Some(2_637_824));
        assert_eq!(r.available_bytes, Some(935_264_256));
        assert_eq!(r.compress_ratio, None, "df knows nothing of compression");
        assert!(parse_df("df: /x: No such file or directory\n").is_none());
    }

    #[test]
    fn compsize_gives_the_ratio_of_its_total_row() {
        let out = "Processed 14517 files, 9120 regular extents (9120 refs), 5402 inline.\n\
                   Type       Perc     Disk Usage   Uncompressed Referenced\n\
                   TOTAL       38%     120586240    317308928    317308928\n\
                   none       100%      52428800     52428800     52428800\n\
                   zstd        25%      68157440    264880128    264880128\n";
        let r = parse_compsize(out).unwrap();
        assert_eq!(r.used_bytes, Some(120_586_240));
        assert_eq!(r.logical_bytes, Some(317_308_928));
        assert!((r.compress_ratio.unwrap() - 2.6314).abs() < 1e-3);
        assert!(parse_compsize("No files.\n").is_none());
    }

    #[test]
    fn btrfs_df_sums_data_metadata_and_system() {
        let out = "Data, single: total=8388608, used=4096\nSystem, DUP: total=8388608, used=16384\n\
                   Metadata, DUP: total=53673984, used=131072\nGlobalReserve, single: total=3670016, used=0\n";
        let r = parse_btrfs_df(out).unwrap();
        assert_eq!(r.used_bytes, Some(4096 + 16384 + 131072));
        assert_eq!(r.source, "btrfs filesystem df");
    }

    #[test]
    fn zfs_get_gives_the_ratio_as_zfs_reports_it() {
        let out =
            "used\t52428800\nlogicalused\t91226112\ncompressratio\t1.74x\navailable\t947912704\n";
        let r = parse_zfs(out).unwrap();
        assert_eq!(r.compress_ratio, Some(1.74));
        assert_eq!(r.logical_bytes, Some(91_226_112));
        assert_eq!(r.size_bytes, Some(52_428_800 + 947_912_704));
        assert!(parse_zfs("cannot open 'p/data': dataset does not exist\n").is_none());
        // zfs-fuse: no logicalused.
        let fuse = parse_zfs("used\t1024\ncompressratio\t1.00x\navailable\t2048\n").unwrap();
        assert_eq!((fuse.logical_bytes, fuse.compress_ratio), (None, Some(1.0)));
    }
}
