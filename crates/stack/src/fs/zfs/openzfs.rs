//! OpenZFS, when its kernel module is loaded: the cache settings of a spec (`arc=`,
//! `prefetch=`, `vdev_cache=`) are module parameters, set for the stack and restored at teardown.

use super::model::{Props, Setup};
use super::owner::Waiting;
use super::spec::ZfsSpec;
use crate::backing::Ctx;
use crate::error::StackError;
use crate::sharing::{Registry, User};
use crate::undo::Undo;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// OpenZFS module parameters.
const PARAMS: &str = "/sys/module/zfs/parameters";
/// The registry of the runs whose stacks use the parameters bakeoff set (`crate::sharing`).
const REGISTRY: &str = "/run/bakeoff/openzfs";

/// What the registry says of the parameters in force.
#[derive(Debug, PartialEq, Serialize, Deserialize)]
struct ParamsState {
    /// The parameters the stacks using them asked for (name and value).
    asked: Props,
    /// Their values before the first of those stacks set them: the last restores them.
    originals: Props,
    /// The stack that set them.
    started_for: String,
}

/// OpenZFS: applies `arc=` (`zfs_arc_max`), `prefetch=` (`zfs_prefetch_disable`) and
/// `vdev_cache=` (`zfs_vdev_cache_size`, gone since OpenZFS 2.2) as module parameters. They are
/// host-wide, so stacks of any run that ask for the same ones share them and the last restores
/// them; a stack asking for others is refused naming the runs using them, or with `--wait`
/// waits until they are done.
pub(super) fn setup(spec: &ZfsSpec, ctx: &mut Ctx) -> Result<Setup, StackError> {
    let param = |n: &str| std::fs::read_to_string(Path::new(PARAMS).join(n)).ok();
    let asked = asked(spec, param("zfs_vdev_cache_size").is_some())?;
    let mut waiting = Waiting::default();
    loop {
        let registry = Registry::lock(Path::new(REGISTRY))?;
        let users = registry.users();
        let state = (registry.state::<ParamsState>()).filter(|_| !users.is_empty());
        match state {
            None => {
                set_params(&registry, asked, ctx)?;
                break;
            }
            Some(state) if state.asked == asked => {
                become_user(&registry, &state.originals, ctx)?;
                break;
            }
            Some(state) => {
                drop(registry);
                let (why, whom) = refusal(&state, &asked, &users);
                waiting.wait_or_refuse(why, whom, ctx.wait.as_ref())?;
            }
        }
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

/// The module parameters `spec` asks for; `vdev_cache` exists where this OpenZFS has one.
fn asked(spec: &ZfsSpec, vdev_cache: bool) -> Result<Props, StackError> {
    let mut asked = Props::new();
    if let Some(arc) = spec.arc {
        asked.insert("zfs_arc_max".into(), arc.to_string());
    }
    if let Some(on) = spec.prefetch {
        let disable = if on { "0" } else { "1" };
        asked.insert("zfs_prefetch_disable".into(), disable.into());
    }
    match spec.vdev_cache {
        Some(v) if vdev_cache => {
            asked.insert("zfs_vdev_cache_size".into(), v.to_string());
        }
        Some(v) if v > 0 => {
            return Err(StackError::Environment(
                "vdev_cache: this OpenZFS has no vdev cache (gone since 2.2): drop it".into(),
            ))
        }
        _ => {}
    }
    Ok(asked)
}

/// Records this stack's leaving of the parameters (the last to leave restores `originals`),
/// then adds it to the registry's users.
fn become_user(registry: &Registry, originals: &Props, ctx: &mut Ctx) -> Result<(), StackError> {
    let user = User::this_process(&ctx.name);
    let last = (originals.iter())
        .map(|(name, value)| Undo::RestoreFile {
            path: Path::new(PARAMS).join(name),
            value: value.clone(),
        })
        .collect();
    ctx.ledger.record(Undo::LeaveShared {
        dir: registry.dir().to_path_buf(),
        user: user.token.clone(),
        last,
    })?;
    registry.join(&user)
}

/// The first stack using the parameters: reads what they are, records their restoring, sets
/// them and writes the registry's state.
fn set_params(registry: &Registry, asked: Props, ctx: &mut Ctx) -> Result<(), StackError> {
    registry.reset();
    let read = |p: &Path| std::fs::read_to_string(p).map_err(StackError::io("reading", p));
    let mut originals = Props::new();
    for name in asked.keys() {
        let old = read(&Path::new(PARAMS).join(name))?;
        originals.insert(name.clone(), old.trim().to_string());
    }
    become_user(registry, &originals, ctx)?;
    for (name, value) in &asked {
        set_param(name, value)?;
    }
    registry.set_state(&ParamsState {
        asked,
        originals,
        started_for: ctx.name.clone(),
    })
}

/// Why a stack asking for `asked` cannot use the parameters `state` says are in force, naming
/// their `users`; and whom `--wait` waits for, if they are other live runs.
fn refusal(state: &ParamsState, asked: &Props, users: &[User]) -> (String, Option<String>) {
    let show = |p: &Props| {
        let v: Vec<String> = p.iter().map(|(k, v)| format!("{k}={v}")).collect();
        if v.is_empty() {
            "the machine's own values".to_string()
        } else {
            v.join(", ")
        }
    };
    let (set, want) = (show(&state.asked), show(asked));
    let whom: Vec<String> = users.iter().map(User::describe).collect();
    let whom = whom.join("; and ");
    let why = format!(
        "the OpenZFS module parameters are host-wide and {whom} uses them with {set}, while \
         this stack asks for {want}: stacks share them only when they ask for the same arc, \
         prefetch and vdev_cache"
    );
    if users.iter().any(User::is_this_process) {
        return (
            format!("{why}; give the stacks of this run the same settings"),
            None,
        );
    }
    if users.iter().all(|u| u.kept.is_some()) {
        return (why, None);
    }
    let why = format!(
        "{why}. Run this again when that run has finished, give this stack the same settings, \
         or add --wait to wait for it"
    );
    (
        why,
        Some(format!(
            "{whom} to finish with the OpenZFS parameters {set}"
        )),
    )
}

/// Writes an OpenZFS module parameter (its old value is in the ledger); checks it took.
fn set_param(name: &str, value: &str) -> Result<(), StackError> {
    let path = Path::new(PARAMS).join(name);
    let read = |p: &Path| std::fs::read_to_string(p).map_err(StackError::io("reading", p));
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

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(text: &str) -> ZfsSpec {
        ZfsSpec::of(&crate::spec::StackSpec::parse(text).unwrap()).unwrap()
    }

    #[test]
    fn the_parameters_asked_for_and_a_missing_vdev_cache() {
        let both = asked(&spec("zfs:arc=64m,prefetch=off"), false).unwrap();
        assert_eq!(both["zfs_arc_max"], (64u64 << 20).to_string());
        assert_eq!(both["zfs_prefetch_disable"], "1");
        assert!(asked(&spec("zfs:vdev_cache=1m"), false).is_err());
        assert!(asked(&spec("zfs:vdev_cache=0"), false).unwrap().is_empty());
        assert!(asked(&spec("zfs"), true).unwrap().is_empty());
    }

    #[test]
    fn other_parameters_name_the_run_using_them_and_wait_only_for_another_run() {
        let state = ParamsState {
            asked: Props::from([("zfs_arc_max".into(), "104857600".into())]),
            originals: Props::from([("zfs_arc_max".into(), "0".into())]),
            started_for: "zfs-1-0".into(),
        };
        let asked = Props::new();
        let other = User {
            token: "1-zfs-1-0".into(),
            pid: 1,
            ..User::this_process("zfs-1-0")
        };
        let (why, whom) = refusal(&state, &asked, std::slice::from_ref(&other));
        assert!(why.contains("bakeoff pid 1") && why.contains("zfs_arc_max=104857600"));
        assert!(why.contains("the machine's own values") && why.contains("--wait"));
        assert!(!why.contains("kill") && whom.is_some(), "{why}");
        let me = User::this_process("zfs-2-0");
        let (why, whom) = refusal(&state, &asked, &[me]);
        assert!(
            whom.is_none() && why.contains("stacks of this run"),
            "{why}"
        );
    }
}
