//! Flat filesets: data files or device regions written in parallel pieces of seeded bytes
//! (1 MiB chunks; whole blocks with their headers where `verify=` checks the fileset), then
//! synced and dropped from the page cache.

use super::{io_err, LayoutError, Region, CHUNK};
use crate::buffers::{fill, AlignedBuf};
use bakeoff_core::plan::{Algorithm, BlockGrid, Plan};
use std::fs::{File, OpenOptions};
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc;
use std::time::Duration;

/// The seed of chunk `chunk` of region `region`: content depends only on the plan's seed.
fn chunk_seed(seed: u64, region: usize, chunk: u64) -> u64 {
    let mut x = seed
        ^ (region as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
        ^ chunk.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// Bytes `start..start + len` of region `region`, written at once from one buffer; `key`
/// seeds its bytes. With `blocks`, the piece is whole verified blocks of that grid, each
/// stamped with its header (generation 0).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Piece {
    region: usize,
    start: u64,
    len: u64,
    key: u64,
    blocks: Option<BlockGrid>,
}

/// Plain 1 MiB chunks of `start..end` of region `ri` (the chunks' keys are their indices).
fn plain(ri: usize, start: u64, end: u64, out: &mut Vec<Piece>) {
    let mut at = start;
    while at < end {
        let len = (CHUNK - at % CHUNK).min(end - at);
        out.push(Piece {
            region: ri,
            start: at,
            len,
            key: at / CHUNK,
            blocks: None,
        });
        at += len;
    }
}

/// The pieces of every region: 1 MiB chunks, and where a region has a verified grid, its
/// blocks in pieces of whole blocks (about 1 MiB, or one block if larger).
fn pieces(all: &[&Region], grids: &[Option<BlockGrid>]) -> Vec<Piece> {
    let mut out = Vec::new();
    for (ri, r) in all.iter().enumerate() {
        let Some(grid) = grids.get(ri).copied().flatten() else {
            plain(ri, 0, r.size, &mut out);
            continue;
        };
        let bs = grid.block_bytes;
        let end = grid.offset + grid.blocks_in(r.size) * bs;
        plain(ri, 0, grid.offset, &mut out);
        let step = (CHUNK / bs).max(1) * bs;
        let mut at = grid.offset;
        while at < end {
            let len = step.min(end - at);
            out.push(Piece {
                region: ri,
                start: at,
                len,
                key: at ^ 0x5645_5249_4659_0000,
                blocks: Some(grid),
            });
            at += len;
        }
        plain(ri, end, r.size, &mut out);
    }
    out
}

/// Generator threads fill pieces with their seeded bytes while one writer writes them in
/// order of arrival: generation overlaps writing, and no two threads contend for a file.
/// `grids` gives each region's verified blocks (empty: none is verified).
pub(super) fn write_all(
    plan: &Plan,
    all: &[&Region],
    grids: &[Option<BlockGrid>],
    total: u64,
    progress: &dyn Fn(u64, u64) -> bool,
) -> Result<(), LayoutError> {
    if all.is_empty() {
        return Ok(());
    }
    let pieces = pieces(all, grids);
    let buf_len = pieces
        .iter()
        .map(|p| p.len)
        .max()
        .unwrap_or(CHUNK)
        .max(CHUNK);
    let cpus = std::thread::available_parallelism().map_or(2, |n| n.get());
    let generators = cpus.saturating_sub(1).clamp(1, 3);
    let done = AtomicU64::new(0);
    let abort = AtomicBool::new(false);
    std::thread::scope(|s| {
        let (full_tx, full_rx) = mpsc::sync_channel::<Filled>(2 * generators);
        let mut returns = Vec::new();
        for g in 0..generators {
            let (ret_tx, ret_rx) = mpsc::channel::<AlignedBuf>();
            for _ in 0..2 {
                let _ = ret_tx.send(AlignedBuf::new(buf_len as usize));
            }
            returns.push(ret_tx);
            let (full_tx, mine) = (full_tx.clone(), &pieces);
            s.spawn(move || generate(plan, all, mine, g, generators, &ret_rx, &full_tx));
        }
        drop(full_tx);
        let (done, abort) = (&done, &abort);
        let writer = s.spawn(move || write_chunks(all, full_rx, &returns, done, abort));
        while !writer.is_finished() {
            if !progress(done.load(Ordering::Relaxed), total) {
                abort.store(true, Ordering::Relaxed);
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        writer.join().expect("layout writer panicked")
    })?;
    progress(all.iter().map(|r| r.size).sum(), total);
    sync_and_drop(all)
}

fn open_for_layout(path: &Path) -> Result<File, LayoutError> {
    OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
        .map_err(io_err("creating", path))
}

/// A filled piece: generator, piece, bytes.
type Filled = (usize, Piece, AlignedBuf);

fn generate(
    plan: &Plan,
    all: &[&Region],
    pieces: &[Piece],
    g: usize,
    generators: usize,
    empty: &mpsc::Receiver<AlignedBuf>,
    full: &mpsc::SyncSender<Filled>,
) {
    for &piece in pieces.iter().skip(g).step_by(generators) {
        let Ok(mut buf) = empty.recv() else { return };
        let bytes = &mut buf.as_mut_slice()[..piece.len as usize];
        let mut rng = fastrand::Rng::with_seed(chunk_seed(plan.seed, piece.region, piece.key));
        fill(bytes, &mut rng, plan.compress_pct);
        if let (Some(grid), Some(algorithm)) = (piece.blocks, plan.verify) {
            let at = all[piece.region].base + piece.start;
            stamp_blocks(bytes, at, grid.block_bytes, algorithm);
        }
        if full.send((g, piece, buf)).is_err() {
            return; // the writer stopped
        }
    }
}

/// Stamps every block of `bytes` (whole blocks of `bs`, the first at byte `at` of its file)
/// with its header, generation 0: the layout's.
fn stamp_blocks(bytes: &mut [u8], at: u64, bs: u64, algorithm: Algorithm) {
    for (k, block) in bytes.chunks_exact_mut(bs as usize).enumerate() {
        bakeoff_core::verify::stamp(block, at + k as u64 * bs, 0, algorithm);
    }
}

fn write_chunks(
    all: &[&Region],
    full: mpsc::Receiver<Filled>,
    returns: &[mpsc::Sender<AlignedBuf>],
    done: &AtomicU64,
    abort: &AtomicBool,
) -> Result<(), LayoutError> {
    let mut files: Vec<Option<File>> = (0..all.len()).map(|_| None).collect();
    for (g, piece, buf) in full {
        if abort.load(Ordering::Relaxed) {
            return Err(LayoutError::Interrupted);
        }
        let ri = piece.region;
        let region = all[ri];
        if files[ri].is_none() {
            files[ri] = Some(open_for_layout(&region.path)?);
        }
        let file = files[ri].as_ref().expect("opened above");
        let len = piece.len as usize;
        file.write_all_at(&buf.as_slice()[..len], region.base + piece.start)
            .map_err(|e| {
                if e.raw_os_error() == Some(libc::ENOSPC) {
                    let needed = all.iter().map(|r| r.size).sum();
                    let available = done.load(Ordering::Relaxed);
                    LayoutError::NoSpace {
                        path: region.path.clone(),
                        needed,
                        available,
                    }
                } else {
                    io_err("writing", &region.path)(e)
                }
            })?;
        done.fetch_add(len as u64, Ordering::Relaxed);
        let _ = returns[g].send(buf);
    }
    Ok(())
}

/// Syncs every file and asks the kernel to drop its clean pages, so the run starts cold.
fn sync_and_drop(all: &[&Region]) -> Result<(), LayoutError> {
    let mut seen = std::collections::BTreeSet::new();
    for r in all {
        if !seen.insert(r.path.clone()) {
            continue;
        }
        let f = File::options()
            .write(true)
            .open(&r.path)
            .map_err(io_err("opening", &r.path))?;
        f.sync_data().map_err(io_err("syncing", &r.path))?;
        let _ = rustix::fs::fadvise(&f, 0, None, rustix::fs::Advice::DontNeed);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn region(size: u64) -> Region {
        Region {
            path: "f".into(),
            base: 0,
            size,
        }
    }

    /// Pieces tile each region exactly, in order, without gaps or overlaps.
    fn tiles(pieces: &[Piece], ri: usize, size: u64) {
        let mut at = 0;
        for p in pieces.iter().filter(|p| p.region == ri) {
            assert_eq!(p.start, at, "{pieces:?}");
            at += p.len;
        }
        assert_eq!(at, size);
    }

    #[test]
    fn plain_regions_are_cut_in_the_chunks_they_always_were() {
        let (a, b) = (region(3 * CHUNK + 10), region(100));
        let p = pieces(&[&a, &b], &[]);
        assert_eq!(p.len(), 5);
        assert!(p
            .iter()
            .all(|p| p.blocks.is_none() && p.key == p.start / CHUNK));
        tiles(&p, 0, a.size);
        tiles(&p, 1, b.size);
    }

    #[test]
    fn verified_regions_are_cut_in_whole_blocks_after_their_offset() {
        for (bs, offset) in [(4096, 0), (3000, 4096), (3 * CHUNK, 512)] {
            let grid = BlockGrid {
                block_bytes: bs,
                offset,
            };
            let r = region(offset + 5 * bs + 77 + 2 * CHUNK);
            let p = pieces(&[&r], &[Some(grid)]);
            tiles(&p, 0, r.size);
            let blocks: Vec<&Piece> = p.iter().filter(|p| p.blocks.is_some()).collect();
            assert_eq!(blocks[0].start, offset);
            assert!(blocks
                .iter()
                .all(|p| p.len % bs == 0 && (p.start - offset) % bs == 0));
            let covered: u64 = blocks.iter().map(|p| p.len).sum();
            assert_eq!(covered, grid.blocks_in(r.size) * bs);
        }
    }
}
