//! Checks the target before anything is written: an existing directory, or a loop device that
//! is not mounted, not swap and not held by another device. Until the stacks' safety gate
//! exists, no other block device is accepted.

use crate::exit::{failure, Code, Failure};
use bakeoff_engine::Target;
use rustix::fs::{major, minor, stat, FileType};
use std::path::Path;

/// Major number of loop devices.
const LOOP_MAJOR: u32 = 7;

/// Validates `path` as a run target.
pub fn check(path: &Path) -> Result<Target, Failure> {
    let st = stat(path).map_err(|e| {
        failure(
            Code::Environment,
            format!(
                "target {}: {e} (give an existing directory or loop device)",
                path.display()
            ),
        )
    })?;
    match FileType::from_raw_mode(st.st_mode) {
        FileType::Directory => {
            rustix::fs::access(path, rustix::fs::Access::WRITE_OK).map_err(|e| {
                failure(
                    Code::Environment,
                    format!("target directory {} is not writable: {e}", path.display()),
                )
            })?;
            Ok(Target::Directory(path.to_path_buf()))
        }
        FileType::BlockDevice => {
            let (maj, min) = (major(st.st_rdev), minor(st.st_rdev));
            if maj != LOOP_MAJOR {
                return Err(failure(
                    Code::Environment,
                    format!(
                        "refusing block device {} ({maj}:{min}): bakeoff writes only to loop devices \
                         until its safety gate for real devices exists; make a loop device with \
                         `losetup --find --show --direct-io=on IMAGE` and pass that",
                        path.display()
                    ),
                ));
            }
            check_loop_unused(path, maj, min)?;
            Ok(Target::Device(path.to_path_buf()))
        }
        _ => Err(failure(
            Code::Environment,
            format!(
                "target {} is neither a directory nor a block device",
                path.display()
            ),
        )),
    }
}

fn check_loop_unused(path: &Path, maj: u32, min: u32) -> Result<(), Failure> {
    let refuse = |why: String| {
        failure(
            Code::Environment,
            format!("refusing {}: {why}", path.display()),
        )
    };
    let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    if let Some(m) = bakeoff_probe::parse_mountinfo(&mountinfo)
        .iter()
        .find(|m| m.major == maj && m.minor == min)
    {
        return Err(refuse(format!("it is mounted on {}", m.mount_point)));
    }
    let holders = format!("/sys/dev/block/{maj}:{min}/holders");
    if std::fs::read_dir(&holders)
        .map(|mut d| d.next().is_some())
        .unwrap_or(false)
    {
        return Err(refuse(
            "another device holds it (see ".to_string() + &holders + ")",
        ));
    }
    let swaps = std::fs::read_to_string("/proc/swaps").unwrap_or_default();
    for dev in swaps
        .lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().next())
    {
        if let Ok(s) = stat(dev) {
            if major(s.st_rdev) == maj && minor(s.st_rdev) == min {
                return Err(refuse("it is in use as swap".into()));
            }
        }
    }
    let bdev = format!("/sys/dev/block/{maj}:{min}/loop/backing_file");
    if std::fs::metadata(&bdev).is_err() {
        return Err(refuse(
            "it has no backing file (attach an image with losetup first)".into(),
        ));
    }
    Ok(())
}
