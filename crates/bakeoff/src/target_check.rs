//! Checks the target before anything is written: an existing, writable directory, or a loop
//! device that passes the stacks' safety gate (naming it as the target is the consent to
//! overwrite it). Other block devices are built on only through `--stack ... --device` with
//! `--destroy-data-on`.

use crate::exit::{failure, stack_failure, Code, Failure};
use bakeoff_engine::Target;
use bakeoff_stack::gate::{self, Claim};
use rustix::fs::{major, minor, stat, FileType};
use std::path::Path;

/// Major number of loop devices.
const LOOP_MAJOR: u32 = 7;

/// Validates `path` as a run target. For a device, the returned claim (an exclusive open) must
/// be held until the run ends.
pub fn check(path: &Path) -> Result<(Target, Option<Claim>), Failure> {
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
            Ok((Target::Directory(path.to_path_buf()), None))
        }
        FileType::BlockDevice => {
            let (maj, min) = (major(st.st_rdev), minor(st.st_rdev));
            if maj != LOOP_MAJOR {
                return Err(failure(
                    Code::Environment,
                    format!(
                        "refusing block device {} ({maj}:{min}): --target takes only loop devices; \
                         build on a real device with --stack SPEC --device DEV --destroy-data-on DEV, \
                         or make a loop device with `losetup --find --show --direct-io=on IMAGE`",
                        path.display()
                    ),
                ));
            }
            // The gate's refusal is the same exit (5) whether the device came as --target or
            // as --device.
            let claim = gate::check(path, &[path.to_path_buf()]).map_err(stack_failure)?;
            Ok((Target::Device(path.to_path_buf()), Some(claim)))
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
