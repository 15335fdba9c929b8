//! Reading every block back: [`check_file`] checks the verified blocks of one file or device
//! region against the generations allowed for each, and the final pass of a run calls it for
//! every file of every verified fileset once the measured run is over.

use super::{FoundBy, Mismatch, Verifier, FIRST_KEPT};
use crate::layout::Region;
use crate::shared::RunError;
use bakeoff_core::plan::{Algorithm, BlockGrid};
use bakeoff_core::record::verify::FinalPass;
use bakeoff_core::verify::{check, check_generation};
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

/// Bytes read at once.
const READ_BYTES: u64 = 4 << 20;

/// What a check of one file found.
#[derive(Debug, Default)]
pub struct FileCheck {
    /// Blocks read and checked.
    pub blocks_checked: u64,
    /// Blocks found wrong.
    pub mismatches: u64,
    /// The first of them (as many as asked).
    pub first: Vec<Mismatch>,
    /// False if `stop` ended the check before the last block.
    pub complete: bool,
}

/// A read of the check failed.
#[derive(Debug, thiserror::Error)]
#[error("reading {len} bytes at offset {offset} of {path}: {source}")]
pub struct CheckError {
    /// The file or device.
    pub path: String,
    /// Where the read began.
    pub offset: u64,
    /// Bytes asked for.
    pub len: u64,
    /// What went wrong.
    pub source: std::io::Error,
}

/// Reads every block of `grid` in `region` and checks it: an intact block of its own offset
/// under `algorithm`, of a generation in the range `expected` gives for its index in the file
/// (`None`: the block is not judged). Counts every mismatch and keeps the first `keep`;
/// `stop` returning true ends the check between reads. Reads go through the page cache: to
/// read what the device holds, sync the file and drop its pages first, as the final pass does.
pub fn check_file(
    region: &Region,
    grid: BlockGrid,
    algorithm: Algorithm,
    expected: &dyn Fn(u64) -> Option<(u64, u64)>,
    keep: usize,
    stop: &dyn Fn() -> bool,
) -> Result<FileCheck, CheckError> {
    let fail = |offset: u64, len: u64| {
        let path = region.path.display().to_string();
        move |source| CheckError {
            path,
            offset,
            len,
            source,
        }
    };
    let file = File::open(&region.path).map_err(fail(0, 0))?;
    let bs = grid.block_bytes;
    let blocks = grid.blocks_in(region.size);
    let per_read = (READ_BYTES / bs).max(1);
    let mut buf = vec![0u8; (per_read * bs) as usize];
    let mut out = FileCheck::default();
    let mut k = 0;
    while k < blocks {
        if stop() {
            return Ok(out);
        }
        let n = per_read.min(blocks - k);
        let at = region.base + grid.offset + k * bs;
        let bytes = &mut buf[..(n * bs) as usize];
        file.read_exact_at(bytes, at).map_err(fail(at, n * bs))?;
        for (j, block) in bytes.chunks_exact(bs as usize).enumerate() {
            let index = k + j as u64;
            let Some((min, max)) = expected(index) else {
                continue;
            };
            out.blocks_checked += 1;
            let offset = at + j as u64 * bs;
            let judged =
                check(block, offset, algorithm).and_then(|h| check_generation(&h, min, max));
            if let Err(fault) = judged {
                out.mismatches += 1;
                if out.first.len() < keep {
                    out.first.push(Mismatch {
                        path: region.path.clone(),
                        offset,
                        found_by: FoundBy::Check,
                        algorithm,
                        min_generation: min,
                        max_generation: max,
                        fault,
                    });
                }
            }
        }
        k += n;
    }
    out.complete = true;
    Ok(out)
}

/// Makes the file's writes durable and drops its pages from the page cache (best effort), so
/// that the pass reads what the stack holds rather than what the run left in memory.
fn sync_and_drop(region: &Region) -> Result<(), RunError> {
    let io = |source| RunError::Io {
        op: "sync before the verify pass",
        path: region.path.display().to_string(),
        offset: region.base,
        len: region.size,
        source,
    };
    let file = File::open(&region.path).map_err(io)?;
    file.sync_data().map_err(io)?;
    let len = std::num::NonZeroU64::new(region.size);
    let _ = rustix::fs::fadvise(&file, region.base, len, rustix::fs::Advice::DontNeed);
    Ok(())
}

impl Verifier {
    /// The final pass: every block of every verified fileset read back and checked against
    /// the generations its writes allow, mismatches counted in the tally. Not part of the
    /// measured window; an interrupt stops it (`complete` false).
    pub fn final_pass(&self, interrupt: &AtomicBool) -> Result<FinalPass, RunError> {
        let start = Instant::now();
        let stop = || interrupt.load(Ordering::Relaxed);
        let mut pass = FinalPass {
            complete: true,
            ..FinalPass::default()
        };
        'filesets: for f in self.filesets.iter().flatten() {
            for file in &f.files {
                sync_and_drop(&file.region)?;
                let expected = |k: u64| f.generations.expected(file.first + k as usize);
                let c = check_file(
                    &file.region,
                    f.grid,
                    f.algorithm,
                    &expected,
                    FIRST_KEPT,
                    &stop,
                )
                .map_err(|e| RunError::Io {
                    op: "read (final verify pass)",
                    path: e.path,
                    offset: e.offset,
                    len: e.len,
                    source: e.source,
                })?;
                pass.blocks_checked += c.blocks_checked;
                let kept = c.first.len() as u64;
                for mut m in c.first {
                    m.found_by = FoundBy::FinalPass;
                    self.tally.found(&m);
                }
                self.tally.more_mismatches(c.mismatches - kept);
                if !c.complete {
                    pass.complete = false;
                    break 'filesets;
                }
            }
        }
        pass.elapsed_ns = start.elapsed().as_nanos() as u64;
        Ok(pass)
    }
}
