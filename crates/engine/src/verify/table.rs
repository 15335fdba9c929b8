//! The generation table: per block, lock-free, what the writes to it allow it to hold.
//!
//! Each block has two atomic words. `state` packs the newest generation handed out (44 bits)
//! and the writes in flight (20 bits); one `fetch_add` at a write's start takes the next
//! generation and counts the write in flight, one `fetch_sub` at its completion counts it out.
//! `floor` is the newest generation whose write *had the block to itself*: no other write to
//! the block was in flight when it started, and none started before it completed (both seen
//! in `state`: the count was 0 at the start, and at the completion the generation was still
//! its own and the count 1). After such a write completes the block holds its data, and every
//! later write to the block starts after it, with a higher generation.
//!
//! The rule (docs/verify.md): a block must hold a generation from `floor` to the newest handed
//! out. Where writes overlapped, any of them may have landed last, so the floor stays at the
//! last write that did not overlap another: a rule that never accuses the file system of an
//! order it was free to choose.
//!
//! A read is judged the same way when no write to its block was in flight at any time while it
//! ran (`state` unchanged, with no write in flight, from before its submission to after its
//! completion); otherwise it may see parts of two writes, and is counted as raced, unchecked.

use std::sync::atomic::{AtomicU64, Ordering};

/// Bits of `state` counting writes in flight.
const INFLIGHT_BITS: u32 = 20;
/// One write in flight.
const ONE_INFLIGHT: u64 = 1;
/// One more generation.
const ONE_GENERATION: u64 = 1 << INFLIGHT_BITS;
const INFLIGHT_MASK: u64 = ONE_GENERATION - 1;

fn generation(state: u64) -> u64 {
    state >> INFLIGHT_BITS
}

fn inflight(state: u64) -> u64 {
    state & INFLIGHT_MASK
}

/// One block's words.
#[derive(Default)]
struct Block {
    state: AtomicU64,
    floor: AtomicU64,
}

/// A write under way: its generation, and whether it started with the block to itself.
#[derive(Clone, Copy, Debug, Default)]
pub struct WriteTicket {
    /// The generation its header carries.
    pub generation: u64,
    alone: bool,
}

/// A read under way: the block's state and floor before it was submitted.
#[derive(Clone, Copy, Debug, Default)]
pub struct ReadTicket {
    state: u64,
    floor: u64,
}

/// The generations of every block of a fileset (block `i` is [`Generations::index`]'s).
pub struct Generations {
    blocks: Box<[Block]>,
}

impl Generations {
    /// A table of `n` blocks, each at generation 0 (the layout's), none in flight.
    pub fn new(n: usize) -> Generations {
        Generations {
            blocks: (0..n).map(|_| Block::default()).collect(),
        }
    }

    /// Blocks in the table.
    pub fn len(&self) -> usize {
        self.blocks.len()
    }

    /// True if the table has no block.
    pub fn is_empty(&self) -> bool {
        self.blocks.is_empty()
    }

    /// A write to block `i` is about to be submitted: its generation.
    #[inline]
    pub fn start_write(&self, i: usize) -> WriteTicket {
        let before = self.blocks[i]
            .state
            .fetch_add(ONE_GENERATION + ONE_INFLIGHT, Ordering::AcqRel);
        WriteTicket {
            generation: generation(before) + 1,
            alone: inflight(before) == 0,
        }
    }

    /// The write of `ticket` to block `i` completed (successfully).
    #[inline]
    pub fn end_write(&self, i: usize, ticket: WriteTicket) {
        let block = &self.blocks[i];
        let before = block.state.fetch_sub(ONE_INFLIGHT, Ordering::AcqRel);
        if ticket.alone && inflight(before) == 1 && generation(before) == ticket.generation {
            block.floor.fetch_max(ticket.generation, Ordering::AcqRel);
        }
    }

    /// A read of block `i` is about to be submitted.
    #[inline]
    pub fn start_read(&self, i: usize) -> ReadTicket {
        let block = &self.blocks[i];
        let floor = block.floor.load(Ordering::Acquire);
        ReadTicket {
            floor,
            state: block.state.load(Ordering::Acquire),
        }
    }

    /// The read of `ticket` from block `i` completed: the generations the block may have
    /// held, or `None` if a write to it was in flight at some time while it ran.
    #[inline]
    pub fn end_read(&self, i: usize, ticket: ReadTicket) -> Option<(u64, u64)> {
        let now = self.blocks[i].state.load(Ordering::Acquire);
        if inflight(ticket.state) != 0 || now != ticket.state {
            return None;
        }
        Some((ticket.floor, generation(now)))
    }

    /// The generations block `i` may hold now, with no write to it in flight; `None` if some
    /// write is (a thread that failed left it).
    pub fn expected(&self, i: usize) -> Option<(u64, u64)> {
        let block = &self.blocks[i];
        let floor = block.floor.load(Ordering::Acquire);
        let state = block.state.load(Ordering::Acquire);
        (inflight(state) == 0).then_some((floor, generation(state)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_write_alone_raises_the_floor_to_its_generation() {
        let t = Generations::new(2);
        assert_eq!(t.expected(0), Some((0, 0)));
        let w = t.start_write(0);
        assert_eq!(w.generation, 1);
        assert_eq!(t.expected(0), None, "in flight");
        t.end_write(0, w);
        assert_eq!(t.expected(0), Some((1, 1)));
        assert_eq!(t.expected(1), Some((0, 0)), "another block is untouched");
    }

    #[test]
    fn overlapping_writes_leave_the_floor_where_either_may_have_landed() {
        let t = Generations::new(1);
        let first = t.start_write(0);
        let second = t.start_write(0);
        t.end_write(0, first);
        t.end_write(0, second);
        // Generation 1 or 2 may be on disk: the floor stays at the layout's.
        assert_eq!(t.expected(0), Some((0, 2)));
        // A write that starts alone but sees another start before it completes does not count.
        let third = t.start_write(0);
        let fourth = t.start_write(0);
        t.end_write(0, fourth);
        t.end_write(0, third);
        assert_eq!(t.expected(0), Some((0, 4)));
        let fifth = t.start_write(0);
        t.end_write(0, fifth);
        assert_eq!(t.expected(0), Some((5, 5)));
    }

    #[test]
    fn a_read_is_judged_only_when_no_write_overlapped_it() {
        let t = Generations::new(1);
        let w = t.start_write(0);
        t.end_write(0, w);
        let quiet = t.start_read(0);
        assert_eq!(t.end_read(0, quiet), Some((1, 1)));
        let during = t.start_read(0);
        let w = t.start_write(0);
        assert_eq!(t.end_read(0, during), None, "a write started while it ran");
        let while_in_flight = t.start_read(0);
        t.end_write(0, w);
        assert_eq!(
            t.end_read(0, while_in_flight),
            None,
            "began with a write in flight"
        );
    }

    #[test]
    fn concurrent_writers_keep_the_range_sound() {
        let t = std::sync::Arc::new(Generations::new(4));
        let threads: Vec<_> = (0..4)
            .map(|k| {
                let t = t.clone();
                std::thread::spawn(move || {
                    for n in 0..10_000usize {
                        let i = (n + k) % 4;
                        let w = t.start_write(i);
                        t.end_write(i, w);
                    }
                })
            })
            .collect();
        threads.into_iter().for_each(|h| h.join().unwrap());
        let total: u64 = (0..4).map(|i| t.expected(i).unwrap().1).sum();
        assert_eq!(total, 40_000, "every write took one generation");
        for i in 0..4 {
            let (floor, newest) = t.expected(i).unwrap();
            assert!(floor <= newest);
        }
    }
}
