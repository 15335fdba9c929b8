//! What the rules need of one run, computed once, and the formatting they share.

use crate::plan::{IoMix, OpKind, Step, SyncMode};
use crate::record::{RunRecord, Summary};
use crate::units::{format_bytes, parse_size};

/// What the rules need of one run, computed once.
pub(super) struct Ctx<'a> {
    pub(super) r: &'a RunRecord,
    pub(super) s: &'a Summary,
    pub(super) kind: String,
    pub(super) read_size: Option<f64>,
    pub(super) write_size: Option<f64>,
    pub(super) record: Option<(&'static str, f64)>,
}

impl<'a> Ctx<'a> {
    pub(super) fn new(r: &'a RunRecord) -> Ctx<'a> {
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

    pub(super) fn prop(&self, key: &str) -> Option<&'a str> {
        self.r
            .stack
            .as_ref()?
            .properties
            .get(key)
            .map(String::as_str)
    }

    /// Average application read (or write) size, else the plan's block size for that direction.
    pub(super) fn app_size(&self, read: bool) -> Option<f64> {
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

    pub(super) fn mount_options(&self) -> &'a str {
        let target = self.r.target.mount_options.as_deref();
        self.prop("mount_options").or(target).unwrap_or("")
    }

    pub(super) fn buffered_roles(&self) -> Vec<&'a str> {
        let roles = self.r.plan.roles.iter().filter(|x| !x.direct);
        roles.map(|x| x.name.as_str()).collect()
    }

    /// The workload asks for durability: O_DSYNC/O_SYNC, fsync/fdatasync, or log commits.
    pub(super) fn syncs(&self) -> bool {
        self.r.plan.roles.iter().any(|x| {
            let step = |s: &Step| matches!(s, Step::Sync(_) | Step::Commit { .. });
            x.sync_mode != SyncMode::None
                || x.sync_every.is_some()
                || x.log_writer
                || x.steps.iter().any(step)
        })
    }

    /// A role offset or a backing-device offset that is not a multiple of `unit`.
    pub(super) fn misaligned(&self, unit: f64) -> bool {
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

pub(super) fn bytes(b: f64) -> String {
    format_bytes(b.max(0.0).round() as u64)
}

/// A size as a property value: `8k`, `1m`, `4096`.
pub(super) fn slug(b: f64) -> String {
    let b = b.round() as u64;
    match b {
        _ if b >= 1 << 20 && b % (1 << 20) == 0 => format!("{}m", b >> 20),
        _ if b >= 1 << 10 && b % (1 << 10) == 0 => format!("{}k", b >> 10),
        _ => b.to_string(),
    }
}
