//! Runs disturbed by other work (`bakeoff_core::disturbance`): the sample before each run
//! (or `--quiet-wait`'s wait for a quiet machine), the judgement after it, and where a
//! disturbed attempt is kept.

use crate::cli::{DisturbanceOpts, StackOpts};
use crate::commands::preflight::nearest_existing;
use bakeoff_core::disturbance::{quiet, QuietSample};
use bakeoff_core::study::Cell;
use bakeoff_probe::{resolve_devices, sample_quiet, DeviceInfo};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Length of the sample before a run.
const SAMPLE: Duration = Duration::from_secs(1);
/// `--quiet-wait`: samples this long, until [`QUIET_SAMPLES`] in a row are quiet.
const WAIT_SAMPLE: Duration = Duration::from_millis(500);
/// 3 s of quiet.
const QUIET_SAMPLES: u32 = 6;

/// The devices whose I/O before a run would be another process's: the disk holding the
/// images directory (loop images live there), each `--device`, and a `dir=` stack's disk.
pub fn watched_devices(cells: &[Cell], opts: &StackOpts) -> Vec<DeviceInfo> {
    let mut paths: Vec<PathBuf> = vec![nearest_existing(&opts.images).to_path_buf()];
    paths.extend(opts.devices.iter().cloned());
    for cell in cells {
        if let Ok(spec) = bakeoff_stack::StackSpec::parse_arg(&cell.stack) {
            if let Some(dir) = spec
                .options
                .get("path")
                .filter(|_| spec.kind.name() == "dir")
            {
                paths.push(nearest_existing(Path::new(dir)).to_path_buf());
            }
        }
    }
    let mut devices: Vec<DeviceInfo> = Vec::new();
    for d in paths
        .iter()
        .filter_map(|p| resolve_devices(p).ok())
        .flatten()
    {
        if !devices.iter().any(|x| x.name == d.name) {
            devices.push(d);
        }
    }
    devices
}

/// The machine just before a run: one sample, or with `--quiet-wait` the last of the samples
/// taken until it was quiet for 3 s (or the wait's limit passed). `None` when the rule is off.
pub fn before_run(opts: &DisturbanceOpts, devices: &[DeviceInfo]) -> Option<QuietSample> {
    if opts.disturbance_limit <= 0.0 {
        return None;
    }
    // The previous run's own data still being written back is not another process's I/O.
    rustix::fs::sync();
    let Some(limit) = opts.quiet_wait else {
        return Some(sample_quiet(devices, SAMPLE));
    };
    let started = Instant::now();
    let (mut quiet_in_a_row, mut said) = (0, Instant::now() - Duration::from_secs(60));
    loop {
        let s = sample_quiet(devices, WAIT_SAMPLE);
        if quiet(&s, opts.disturbance_limit) {
            quiet_in_a_row += 1;
        } else {
            quiet_in_a_row = 0;
            if said.elapsed() >= Duration::from_secs(10) {
                eprintln!(
                    "bakeoff: --quiet-wait: waiting for a quiet machine: {}",
                    busy(&s)
                );
                said = Instant::now();
            }
        }
        if quiet_in_a_row >= QUIET_SAMPLES {
            return Some(s);
        }
        if started.elapsed() >= limit {
            eprintln!(
                "bakeoff: --quiet-wait: still busy after {} ({}); running, and the run is \
                 judged as it goes",
                bakeoff_core::units::format_nanos(limit.as_nanos() as f64),
                busy(&s)
            );
            return Some(s);
        }
    }
}

/// "CPU 54.0% busy, most of it yes (pid 4711) 49.8%; 3.2 MB/s on vda".
fn busy(s: &QuietSample) -> String {
    let mut text = format!("CPU {:.1}% busy", s.busy_pct);
    if let Some(b) = &s.busiest {
        text += &format!(", most of it {b}");
    }
    if s.device_bytes_per_s > 0.0 {
        text += &format!(
            "; {:.1} MB/s on {}",
            s.device_bytes_per_s / 1e6,
            s.devices.join(", ")
        );
    }
    text
}

/// Where disturbed attempt `attempt` (1, 2, ...) of the run recorded at `path` is kept.
pub fn attempt_path(path: &Path, attempt: u32) -> PathBuf {
    path.with_extension(format!("disturbed-{attempt}.json"))
}

/// Disturbed attempts already kept for the run recorded at `path` (a resumed study numbers
/// its new ones after them).
pub fn attempts_kept(path: &Path) -> u32 {
    (1..)
        .take_while(|k| attempt_path(path, *k).exists())
        .count() as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn disturbed_attempts_sit_beside_the_run_and_are_counted() {
        let d = tempfile::tempdir().unwrap();
        let run = d.path().join("rep-2.json");
        assert_eq!(
            attempt_path(&run, 1),
            d.path().join("rep-2.disturbed-1.json")
        );
        assert_eq!(attempts_kept(&run), 0);
        std::fs::write(attempt_path(&run, 1), "{}").unwrap();
        std::fs::write(attempt_path(&run, 2), "{}").unwrap();
        assert_eq!(attempts_kept(&run), 2);
    }
}
