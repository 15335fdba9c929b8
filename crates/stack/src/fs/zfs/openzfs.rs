//! OpenZFS, when its kernel module is loaded: the cache settings of a spec (`arc=`,
//! `prefetch=`, `vdev_cache=`) are module parameters, set for the stack and restored at teardown.

use super::model::{Props, Setup};
use super::spec::ZfsSpec;
use crate::backing::Ctx;
use crate::error::StackError;
use crate::undo::Undo;
use std::path::Path;

/// OpenZFS module parameters.
const PARAMS: &str = "/sys/module/zfs/parameters";

/// OpenZFS: applies `arc=` (`zfs_arc_max`), `prefetch=` (`zfs_prefetch_disable`) and
/// `vdev_cache=` (`zfs_vdev_cache_size`, gone since OpenZFS 2.2) as module parameters, each
/// restored at teardown. They are host-wide: other pools see them while the stack lives.
pub(super) fn setup(spec: &ZfsSpec, ctx: &mut Ctx) -> Result<Setup, StackError> {
    let param = |n: &str| std::fs::read_to_string(Path::new(PARAMS).join(n)).ok();
    if let Some(arc) = spec.arc {
        set_param(ctx, "zfs_arc_max", &arc.to_string())?;
    }
    if let Some(on) = spec.prefetch {
        set_param(ctx, "zfs_prefetch_disable", if on { "0" } else { "1" })?;
    }
    match spec.vdev_cache {
        Some(v) if param("zfs_vdev_cache_size").is_some() => {
            set_param(ctx, "zfs_vdev_cache_size", &v.to_string())?
        }
        Some(v) if v > 0 => {
            return Err(StackError::Environment(
                "vdev_cache: this OpenZFS has no vdev cache (gone since 2.2): drop it".into(),
            ))
        }
        _ => {}
    }
    let mut rec = Props::new();
    for (key, name) in [
        ("arc_max", "zfs_arc_max"),
        ("prefetch", "zfs_prefetch_disable"),
        ("vdev_cache", "zfs_vdev_cache_size"),
    ] {
        let v = param(name).map_or("absent".into(), |v| v.trim().to_string());
        rec.insert(key.into(), format!("{name}={v}"));
    }
    let version = (ctx.exec)
        .version_of("zfs", &["version"])
        .or_else(|| param("../version").map(|v| v.trim().to_string()))
        .unwrap_or_else(|| "(version unknown)".into());
    Ok(Setup {
        backend: format!("OpenZFS {}", version.trim_start_matches("zfs-")),
        settings: rec,
        versions: Props::from([("zfs".into(), version)]),
        daemon: None,
    })
}

/// Writes an OpenZFS module parameter, recording the old value first; checks it took.
fn set_param(ctx: &mut Ctx, name: &str, value: &str) -> Result<(), StackError> {
    let path = Path::new(PARAMS).join(name);
    let read = |p: &Path| std::fs::read_to_string(p).map_err(StackError::io("reading", p));
    let old = read(&path)?.trim().to_string();
    ctx.ledger.record(Undo::RestoreFile {
        path: path.clone(),
        value: old,
    })?;
    std::fs::write(&path, value).map_err(StackError::io("writing", &path))?;
    let now = read(&path)?;
    if now.trim() != value {
        return Err(StackError::Environment(format!(
            "OpenZFS did not take {name}={value}: it reads back {}",
            now.trim()
        )));
    }
    Ok(())
}
