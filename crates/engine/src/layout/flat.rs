//! Flat filesets: data files or device regions written in parallel 1 MiB chunks of seeded
//! bytes, then synced and dropped from the page cache.

use super::{io_err, LayoutError, Region, CHUNK};
use crate::buffers::{fill, AlignedBuf};
use bakeoff_core::plan::Plan;
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

/// Generator threads fill chunks with their seeded bytes while one writer writes them in
/// order of arrival: generation overlaps writing, and no two threads contend for a file.
pub(super) fn write_all(
    plan: &Plan,
    all: &[&Region],
    total: u64,
    progress: &dyn Fn(u64, u64) -> bool,
) -> Result<(), LayoutError> {
    if all.is_empty() {
        return Ok(());
    }
    let chunks: Vec<(usize, u64)> = all
        .iter()
        .enumerate()
        .flat_map(|(i, r)| (0..r.size.div_ceil(CHUNK)).map(move |c| (i, c)))
        .collect();
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
                let _ = ret_tx.send(AlignedBuf::new(CHUNK as usize));
            }
            returns.push(ret_tx);
            let (full_tx, mine) = (full_tx.clone(), &chunks);
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

/// A filled chunk: generator, region, chunk index, bytes.
type Filled = (usize, usize, u64, AlignedBuf);

fn generate(
    plan: &Plan,
    all: &[&Region],
    chunks: &[(usize, u64)],
    g: usize,
    generators: usize,
    empty: &mpsc::Receiver<AlignedBuf>,
    full: &mpsc::SyncSender<Filled>,
) {
    for &(ri, c) in chunks.iter().skip(g).step_by(generators) {
        let Ok(mut buf) = empty.recv() else { return };
        let len = CHUNK.min(all[ri].size - c * CHUNK) as usize;
        let mut rng = fastrand::Rng::with_seed(chunk_seed(plan.seed, ri, c));
        fill(&mut buf.as_mut_slice()[..len], &mut rng, plan.compress_pct);
        if full.send((g, ri, c, buf)).is_err() {
            return; // the writer stopped
        }
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
    for (g, ri, c, buf) in full {
        if abort.load(Ordering::Relaxed) {
            return Err(LayoutError::Interrupted);
        }
        let region = all[ri];
        if files[ri].is_none() {
            files[ri] = Some(open_for_layout(&region.path)?);
        }
        let file = files[ri].as_ref().expect("opened above");
        let len = CHUNK.min(region.size - c * CHUNK) as usize;
        file.write_all_at(&buf.as_slice()[..len], region.base + c * CHUNK)
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
