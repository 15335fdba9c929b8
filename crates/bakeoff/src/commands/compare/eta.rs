//! How long a study has left: the runs still to do, each as long as its plan says (warm-up,
//! measured time, and the building, laying out and tearing down around them), scaled by how
//! long this session's finished runs took against their plans.

use super::super::pipeline::Work;
use bakeoff_stack::fs::check::StateChecking;
use bakeoff_stack::StackKind;
use std::time::Duration;

/// What checking one crash state of a kernel file system took on this project's 2-core VM,
/// debug build (the records of docs/studies/records/crash-states-2026-11-28/: `checking_ns`
/// over the states): 2.0 s (PostgreSQL, `fsync=off`: most states do not start) to 5.0 s
/// (PostgreSQL on btrfs); 3.3 s for PostgreSQL's defaults on ext4, 3.4 s for MariaDB.
pub const KERNEL_STATE_SECS: u32 = 4;

/// The same for a ZFS state on zfs-fuse (an import, a scrub and an export around the
/// database's checks): 9.2 s and 10.1 s in the two ZFS cells of
/// docs/studies/records/fullpage-risk/.
pub const POOL_STATE_SECS: u32 = 10;

/// Seconds checking `states` crash states of a stack of type `kind` takes.
pub fn checking_secs(kind: Option<StackKind>, states: u32) -> f64 {
    let each = match kind.and_then(|k| k.driver().crash_state) {
        Some(StateChecking::Pool) => POOL_STATE_SECS,
        _ => KERNEL_STATE_SECS,
    };
    f64::from(states * each)
}

/// Seconds one run of `plan` is planned to take.
pub fn planned_secs(plan: &Work) -> f64 {
    plan.timed().as_secs_f64() + plan.overhead_secs()
}

/// The runs this session finished: what their plans said and what they took.
#[derive(Default)]
pub struct Eta {
    planned_done: f64,
    spent: f64,
}

impl Eta {
    /// A run planned at `planned` seconds finished after `took`.
    pub fn finished(&mut self, planned: f64, took: Duration) {
        self.planned_done += planned;
        self.spent += took.as_secs_f64();
    }

    /// Seconds left for runs planned at `planned_left` seconds in all: the plans as they are
    /// until a run has finished, then scaled as the finished runs went.
    pub fn left(&self, planned_left: f64) -> f64 {
        if self.planned_done > 0.0 {
            planned_left * self.spent / self.planned_done
        } else {
            planned_left
        }
    }
}

/// "about 40 s left", "about 12 min left", "about 2.5 h left".
pub fn describe_left(secs: f64) -> String {
    let secs = secs.max(0.0);
    if secs < 59.5 {
        format!("about {} s left", secs.ceil().max(1.0))
    } else if secs < 5400.0 {
        format!("about {:.0} min left", secs / 60.0)
    } else {
        format!("about {:.1} h left", secs / 3600.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn left_follows_the_plans_then_the_pace_of_finished_runs() {
        let mut eta = Eta::default();
        assert_eq!(eta.left(30.0), 30.0, "nothing finished: the plans");
        eta.finished(10.0, Duration::from_secs(5));
        assert_eq!(eta.left(30.0), 15.0, "runs went at half their plans");
        assert_eq!(eta.left(0.0), 0.0);
    }

    #[test]
    fn short_times_are_seconds_not_zero_minutes() {
        assert_eq!(describe_left(0.2), "about 1 s left");
        assert_eq!(describe_left(42.3), "about 43 s left");
        assert_eq!(describe_left(170.0), "about 3 min left");
        assert_eq!(describe_left(3.0 * 3600.0), "about 3.0 h left");
    }
}
