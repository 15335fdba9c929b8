//! Drawing crash states from a log's index, reproducibly from a seed.
//!
//! State 0 is everything the run issued (the images it left), state 1 only what it flushed by
//! its end; the others keep, of the writes pending at a crash point, none (`flushed`), all
//! (`issued`) or a random half-chance subset with torn writes (`subset`, twice as often as each
//! of the others). The crash point is drawn uniformly among the records (after
//! [`CrashOptions::from_record`]), except for every other subset: that one is aimed, just before
//! a flush, the flush drawn in proportion to the bytes pending at it. A database's log is mostly
//! one small write and its flush per commit; the states where a torn page can matter are in the
//! few flushes that end a burst of page writes (a checkpoint's), which uniform points rarely
//! hit. A state equal to one already made is drawn again, up to 20 tries per state asked for:
//! a short log may hold fewer distinct states than asked for, and then fewer are returned.

use super::{CrashOptions, CrashState, ImageState, LogIndex, Part, Persisted, StateKind};
use rand_core::{Rng, SeedableRng};
use rand_xorshift::XorShiftRng;
use std::collections::HashSet;

/// Where a state's crash point is drawn.
#[derive(Clone, Copy)]
enum Aim {
    /// Uniformly among the records.
    Anywhere,
    /// Just before a flush, in proportion to the bytes pending at it.
    BeforeBusyFlush,
}

/// The kinds drawn in turn after the two fixed states, and where their crash points fall.
const TURNS: [(StateKind, Aim); 4] = [
    (StateKind::Subset, Aim::Anywhere),
    (StateKind::Flushed, Aim::Anywhere),
    (StateKind::Subset, Aim::BeforeBusyFlush),
    (StateKind::Issued, Aim::Anywhere),
];

/// Up to `opts.states` distinct crash states of the log behind `index`.
pub fn generate(index: &LogIndex, opts: &CrashOptions) -> Result<Vec<CrashState>, String> {
    opts.check()?;
    let plan = Plan::new(index);
    let total = index.entries.len() as u64;
    let mut rng = XorShiftRng::seed_from_u64(opts.seed);
    let mut seen = HashSet::new();
    let mut states = Vec::new();
    let tries = opts.states.saturating_mul(20).saturating_add(2);
    for attempt in 0..tries {
        if states.len() == opts.states {
            break;
        }
        let (kind, aim) = TURNS[attempt % TURNS.len()];
        let (crash_point, kind) = match attempt {
            0 => (total, StateKind::Issued),
            1 => (total, StateKind::Flushed),
            _ if opts.from_record >= total => (total, kind),
            _ => {
                let aimed = match aim {
                    Aim::BeforeBusyFlush => plan.before_busy_flush(opts.from_record, &mut rng),
                    Aim::Anywhere => None,
                };
                let window = total - opts.from_record;
                let anywhere = || opts.from_record + 1 + rng.next_u64() % window;
                (aimed.unwrap_or_else(anywhere), kind)
            }
        };
        let images = plan.at(crash_point, kind, opts, &mut rng);
        if seen.insert(images.clone()) {
            states.push(CrashState {
                number: states.len(),
                crash_point,
                crash_ns: index.crash_ns(crash_point),
                kind,
                images,
            });
        }
    }
    Ok(states)
}

/// The state at `crash_point` (records `0..crash_point` issued) keeping none (`Flushed`) or
/// all (`Issued`) of the writes pending there: for a chosen moment, as "just after the sync
/// that acknowledged this commit". `Subset` is drawn at random: [`generate`] makes those.
pub fn state_at(index: &LogIndex, crash_point: u64, kind: StateKind) -> Result<CrashState, String> {
    let total = index.entries.len() as u64;
    if crash_point > total {
        return Err(format!(
            "crash point {crash_point}: the log has {total} records"
        ));
    }
    if kind == StateKind::Subset {
        return Err("a subset is drawn at random: generate it from a seed".into());
    }
    let unused = CrashOptions {
        states: 1,
        seed: 0,
        sector_bytes: 512,
        torn: false,
        from_record: 0,
    };
    let mut rng = XorShiftRng::seed_from_u64(0);
    Ok(CrashState {
        number: 0,
        crash_point,
        crash_ns: index.crash_ns(crash_point),
        kind,
        images: Plan::new(index).at(crash_point, kind, &unused, &mut rng),
    })
}

/// Each image's flushes and changes (writes, zeroed ranges), as record numbers in order.
struct Plan<'a> {
    index: &'a LogIndex,
    flushes: Vec<Vec<u64>>,
    changes: Vec<Vec<u64>>,
    /// The flushes with bytes pending on their image, in order: `(record, running total of
    /// the bytes pending at each)`.
    busy_flushes: Vec<(u64, u64)>,
}

impl<'a> Plan<'a> {
    fn new(index: &'a LogIndex) -> Plan<'a> {
        let n = index.images.len();
        let (mut flushes, mut changes) = (vec![Vec::new(); n], vec![Vec::new(); n]);
        let (mut pending, mut busy_flushes, mut running) = (vec![0u64; n], Vec::new(), 0u64);
        for e in &index.entries {
            let image = e.image as usize;
            match LogIndex::range(e) {
                None => {
                    flushes[image].push(e.seq);
                    if pending[image] > 0 {
                        running += std::mem::take(&mut pending[image]);
                        busy_flushes.push((e.seq, running));
                    }
                }
                Some((_, len)) => {
                    changes[image].push(e.seq);
                    pending[image] = pending[image].saturating_add(len);
                }
            }
        }
        Plan {
            index,
            flushes,
            changes,
            busy_flushes,
        }
    }

    /// A crash point just before a flush after record `from_record`, drawn in proportion to the
    /// bytes pending at it; `None` when no such flush had any.
    fn before_busy_flush(&self, from_record: u64, rng: &mut XorShiftRng) -> Option<u64> {
        let flushes = &self.busy_flushes;
        let first = flushes.partition_point(|&(seq, _)| seq <= from_record);
        let below = first.checked_sub(1).map_or(0, |i| flushes[i].1);
        let weight = flushes.last()?.1 - below;
        if first == flushes.len() || weight == 0 {
            return None;
        }
        let drawn = below + rng.next_u64() % weight;
        let at = flushes.partition_point(|&(_, running)| running <= drawn);
        // Records 0..seq were issued: the flush itself was not.
        Some(flushes[at].0)
    }

    /// Every image at crash point `point`, keeping what `kind` says of its pending writes.
    fn at(
        &self,
        point: u64,
        kind: StateKind,
        opts: &CrashOptions,
        rng: &mut XorShiftRng,
    ) -> Vec<ImageState> {
        (0..self.index.images.len())
            .map(|image| {
                let flushes = &self.flushes[image];
                let before = flushes.partition_point(|&s| s < point);
                let durable_through = before.checked_sub(1).map(|i| flushes[i]);
                let changes = &self.changes[image];
                let from = durable_through.map_or(0, |d| changes.partition_point(|&s| s <= d));
                let to = changes.partition_point(|&s| s < point);
                let pending = &changes[from..to];
                let persisted = match kind {
                    StateKind::Flushed => Vec::new(),
                    StateKind::Issued => pending.iter().map(|&seq| whole(seq)).collect(),
                    StateKind::Subset => self.subset(pending, opts, rng),
                };
                ImageState {
                    durable_through,
                    pending: pending.len() as u64,
                    persisted,
                }
            })
            .collect()
    }

    /// Each pending write persisted at even odds; one that did, torn at even odds when it
    /// spans a sector boundary and tearing is on.
    fn subset(
        &self,
        pending: &[u64],
        opts: &CrashOptions,
        rng: &mut XorShiftRng,
    ) -> Vec<Persisted> {
        let mut kept = Vec::new();
        for &seq in pending {
            if rng.next_u32() % 2 == 0 {
                continue;
            }
            let entry = &self.index.entries[seq as usize];
            let torn = match (opts.torn, LogIndex::range(entry)) {
                (true, Some((offset, len))) if rng.next_u32() % 2 == 0 => {
                    tear(offset, len, u64::from(opts.sector_bytes), rng)
                }
                _ => None,
            };
            kept.push(Persisted { seq, torn });
        }
        kept
    }
}

fn whole(seq: u64) -> Persisted {
    Persisted { seq, torn: None }
}

/// The parts of a write of `len` bytes at `offset` that persist when it tears: cut at one to
/// three sector boundaries inside it, each piece kept at even odds, at least one kept and one
/// lost. `None` when it lies within one sector (a sector is atomic).
pub(super) fn tear(offset: u64, len: u64, sector: u64, rng: &mut XorShiftRng) -> Option<Vec<Part>> {
    let end = offset.checked_add(len)?;
    // Boundaries k * sector with offset < k * sector < end.
    let (lo, hi) = (offset / sector + 1, end.checked_sub(1)? / sector);
    if len == 0 || lo > hi {
        return None;
    }
    let n = hi - lo + 1;
    let cuts = 1 + rng.next_u64() % n.min(3);
    let mut at: Vec<u64> = (0..cuts)
        .map(|_| (lo + rng.next_u64() % n) * sector)
        .collect();
    at.sort_unstable();
    at.dedup();
    let bounds: Vec<u64> = std::iter::once(offset).chain(at).chain([end]).collect();
    let mut keep: Vec<bool> = (1..bounds.len()).map(|_| rng.next_u32() % 2 == 1).collect();
    if keep.iter().all(|&k| k == keep[0]) {
        let flip = (rng.next_u64() % keep.len() as u64) as usize;
        keep[flip] = !keep[flip];
    }
    let mut parts: Vec<Part> = Vec::new();
    for (piece, kept) in bounds.windows(2).zip(keep) {
        let (start, stop) = (piece[0], piece[1]);
        match parts.last_mut() {
            _ if !kept => {}
            Some(last) if offset + last.at + last.len == start => last.len += stop - start,
            _ => parts.push(Part {
                at: start - offset,
                len: stop - start,
            }),
        }
    }
    Some(parts)
}
