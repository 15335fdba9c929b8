//! What a built ZFS stack is, read back: the dataset's properties, the pool's layout from
//! `zpool status` and the redundancy of that layout.

use super::model::{dataset, Props};
use crate::error::StackError;
use crate::exec::Exec;
use bakeoff_core::phaserecord::SpaceRecord;
use bakeoff_core::record::StackInfo;
use std::path::Path;

/// `property<TAB>value` lines as a map.
fn tab_pairs(text: &str) -> Props {
    let pairs = text.lines().filter_map(|l| l.split_once('\t'));
    pairs
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect()
}

/// The dataset's properties as `zfs get` shows them (`recordsize` = `8K`), the exact byte
/// counts where they differ (`recordsize_bytes` = `8192`), the layout read back from
/// `zpool status` ([`layout`]), the pool's `pool_cachefile`, `pool_version`, `ashift`; and the
/// layout's [`redundancy`].
pub fn read_back(pool: &str, exec: &mut Exec) -> Result<(Props, Option<f64>), StackError> {
    let ds = dataset(pool);
    let get = ["get", "-H", "-o", "property,value", "all", &ds];
    let mut props = tab_pairs(&exec.run("zfs", &get)?);
    let exact = ["get", "-H", "-p", "-o", "property,value", "all", &ds];
    for (k, v) in tab_pairs(&exec.run("zfs", &exact)?) {
        let number = !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit());
        if number && k != "creation" && props.get(&k) != Some(&v) {
            props.insert(format!("{k}_bytes"), v);
        }
    }
    let status = exec.run("zpool", &["status", pool])?;
    props.extend(layout(&status, pool));
    // zfs-fuse's `zpool get` has no -H/-o: NAME PROPERTY VALUE SOURCE columns.
    let pool_props = exec.run("zpool", &["get", "cachefile,version,ashift,size", pool])?;
    for l in pool_props.lines().skip(1) {
        if let [_, k, v, ..] = l.split_whitespace().collect::<Vec<_>>()[..] {
            props.insert(format!("pool_{k}"), v.to_string());
        }
    }
    // zfs-fuse picks an ashift and says so on stderr only ("Defaulting to 4K blocksize
    // (ashift=12)"); OpenZFS reports it as the pool property.
    let create = ["zpool".to_string(), "create".to_string()];
    let created = exec.log.iter().rev().find(|c| c.argv.starts_with(&create));
    let stderr = created.map_or("", |c| c.stderr.as_str());
    if let Some((_, rest)) = stderr.split_once("ashift=") {
        let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
        props.insert("ashift".into(), digits);
    }
    props.insert("pool".into(), pool.to_string());
    props.insert("dataset".into(), ds);
    Ok((props, redundancy(&status, pool)))
}

/// The dataset's `used`, `logicalused` (OpenZFS; zfs-fuse has none), `available` and
/// `compressratio` (`zfs get -Hp`), after a `sync` so that the last transaction group is on the
/// devices and counted.
pub fn space(
    info: &StackInfo,
    _: &Path,
    exec: &mut Exec,
) -> Result<Option<SpaceRecord>, StackError> {
    let pool = info.properties.get("pool").ok_or_else(|| {
        StackError::Environment(format!("stack {} records no ZFS pool", info.name))
    })?;
    let ds = dataset(pool);
    rustix::fs::sync();
    // `all`: zfs-fuse's pools predate `logicalused`, and naming it would fail the query.
    let out = exec.run("zfs", &["get", "-Hp", "-o", "property,value", "all", &ds])?;
    let read = crate::fs::space::parse_zfs(&out);
    Ok(Some(read.ok_or_else(|| {
        crate::fs::space::unreadable("zfs get", &ds, &out)
    })?))
}

/// A top-level vdev as `zpool status` shows it: its section (`data` for the pool's own,
/// `logs`, `cache`, `spares`), its name, and its members (none for a plain device).
struct Vdev {
    section: String,
    name: String,
    members: Vec<String>,
}

/// The vdev tree of `zpool status POOL`, from the `config:` table (two spaces of indentation
/// per level below the pool).
fn vdevs(status: &str, pool: &str) -> Vec<Vdev> {
    let mut vdevs: Vec<Vdev> = Vec::new();
    let mut section = String::new();
    let mut lines = status
        .lines()
        .skip_while(|l| !l.trim_start().starts_with("NAME"));
    lines.next();
    for line in lines.take_while(|l| !l.trim_start().starts_with("errors:")) {
        let body = line.trim_start_matches('\t');
        let Some(name) = body.split_whitespace().next().map(str::to_string) else {
            continue;
        };
        match (body.len() - body.trim_start().len()) / 2 {
            0 if name == pool => section = "data".into(),
            0 => section = name,
            1 => vdevs.push(Vdev {
                section: section.clone(),
                name,
                members: Vec::new(),
            }),
            _ => vdevs
                .iter_mut()
                .last()
                .into_iter()
                .for_each(|v| v.members.push(name.clone())),
        }
    }
    vdevs
}

/// The layout from `zpool status POOL`: `layout` (stripe, mirror, raidz, mirror-stripe, or
/// mixed), `vdevs` (`mirror-0(loop0,loop1) mirror-1(loop2,loop3)`) and `log_vdevs` (`loop4`).
pub fn layout(status: &str, pool: &str) -> Props {
    let vdevs = vdevs(status, pool);
    let show = |s: &str| -> String {
        let of = vdevs.iter().filter(|v| v.section == s);
        let shown = of.map(|v| match v.members.as_slice() {
            [] => v.name.clone(),
            m => format!("{}({})", v.name, m.join(",")),
        });
        shown.collect::<Vec<_>>().join(" ")
    };
    let data: Vec<&Vdev> = vdevs.iter().filter(|v| v.section == "data").collect();
    let all = |p: &str| !data.is_empty() && data.iter().all(|v| v.name.starts_with(p));
    let kind = match data.len() {
        1 if all("mirror") => "mirror",
        _ if all("mirror") => "mirror-stripe",
        _ if all("raidz") => "raidz",
        _ if data.iter().all(|v| v.members.is_empty()) => "stripe",
        _ => "mixed",
    };
    let mut out = Props::from([
        ("layout".into(), kind.into()),
        ("vdevs".into(), show("data")),
    ]);
    let logs = show("logs");
    if !logs.is_empty() {
        out.insert("log_vdevs".into(), logs);
    }
    out
}

/// Bytes the pool's devices store per byte of data, from `zpool status POOL`: a plain device
/// 1, a mirror of n n, a raidzP of n n/(n-P). `None` if the top-level data vdevs differ (how
/// data spreads over them is not known) or one is of a kind not known here. Log and cache
/// devices hold no data of their own.
pub fn redundancy(status: &str, pool: &str) -> Option<f64> {
    let vdevs = vdevs(status, pool);
    let mut factors = vdevs.iter().filter(|v| v.section == "data").map(|v| {
        let n = v.members.len() as f64;
        if v.members.is_empty() {
            Some(1.0)
        } else if v.name.starts_with("mirror") {
            Some(n)
        } else if let Some(rest) = v.name.strip_prefix("raidz") {
            let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
            let parity: f64 = digits.parse().unwrap_or(1.0);
            (n > parity).then(|| n / (n - parity))
        } else {
            None
        }
    });
    let first = factors.next()??;
    factors.all(|f| f == Some(first)).then_some(first)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `zpool status` of pool `p` with this `config:` body (tab, then two spaces per level).
    fn status(body: &str) -> String {
        let rows: String = body
            .lines()
            .map(|l| format!("\t{l}  ONLINE  0  0  0\n"))
            .collect();
        format!("  pool: p\n state: ONLINE\nconfig:\n\n\tNAME STATE READ WRITE CKSUM\n\tp ONLINE 0 0 0\n{rows}\nerrors: No known data errors\n")
    }

    #[test]
    fn redundancy_of_each_layout() {
        let stripe = status("  loop0\n  loop1");
        assert_eq!(redundancy(&stripe, "p"), Some(1.0));
        let mirror3 = status("  mirror-0\n    loop0\n    loop1\n    loop2");
        assert_eq!(redundancy(&mirror3, "p"), Some(3.0));
        let raid10 = status("  mirror-0\n    a\n    b\n  mirror-1\n    c\n    d\nlogs\n  e");
        assert_eq!(redundancy(&raid10, "p"), Some(2.0));
        assert_eq!(layout(&raid10, "p")["log_vdevs"], "e");
        let raidz = status("  raidz1-0\n    a\n    b\n    c");
        assert_eq!(redundancy(&raidz, "p"), Some(1.5));
        let raidz2 = status("  raidz2-0\n    a\n    b\n    c\n    d");
        assert_eq!(redundancy(&raidz2, "p"), Some(2.0));
        let old_raidz = status("  raidz-0\n    a\n    b\n    c\n    d");
        assert_eq!(redundancy(&old_raidz, "p"), Some(4.0 / 3.0));
        let mixed = status("  mirror-0\n    a\n    b\n  c");
        assert_eq!(redundancy(&mixed, "p"), None);
        assert_eq!(layout(&mixed, "p")["layout"], "mixed");
        assert_eq!(redundancy("no pool here", "p"), None);
    }
}
