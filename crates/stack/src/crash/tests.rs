//! The crash-state generator and materialiser on synthetic logs, checked against an in-memory
//! model of two small images.

use super::generate::tear;
use super::*;
use crate::writelog::{ImageInfo, LogWriter};
use rand_core::{Rng, SeedableRng};
use rand_xorshift::XorShiftRng;
use std::collections::HashSet;

const IMAGE: u64 = 64 << 10;

/// A log of `records` random writes, zeroed ranges and flushes over two images of [`IMAGE`]
/// bytes; returns its index (the log in `dir`).
fn synthetic(dir: &Path, records: usize, seed: u64) -> LogIndex {
    let path = dir.join(format!("synthetic-{seed}.log"));
    let images: Vec<ImageInfo> = ["data.img", "wal.img"]
        .map(|name| ImageInfo {
            name: name.into(),
            size_bytes: IMAGE,
        })
        .into();
    let file = std::fs::File::create(&path).unwrap();
    let mut w = LogWriter::new(std::io::BufWriter::new(file), &images).unwrap();
    let mut rng = XorShiftRng::seed_from_u64(seed);
    for _ in 0..records {
        let image = rng.next_u32() % 2;
        let offset = (rng.next_u64() % (IMAGE / 512 - 40)) * 512;
        let len = 512 * (1 + rng.next_u64() % 32);
        match rng.next_u32() % 12 {
            0 => w.flush(image).unwrap(),
            1 => w.zero(image, offset, len).unwrap(),
            _ => {
                let byte = rng.next_u32() as u8 | 1;
                w.write(image, offset, &vec![byte; len as usize]).unwrap()
            }
        };
    }
    w.finish().unwrap();
    LogIndex::read(&path).unwrap()
}

fn opts(states: usize, seed: u64, sector_bytes: u32) -> CrashOptions {
    CrashOptions {
        states,
        seed,
        sector_bytes,
        torn: true,
        from_record: 0,
    }
}

/// What `state` should hold, computed in memory: each image's changes up to its last flush,
/// then the persisted writes (or their parts) in order.
fn model(index: &LogIndex, state: &CrashState) -> Vec<Vec<u8>> {
    let mut data = Vec::new();
    let mut log = Vec::new();
    let mut reader = crate::writelog::LogReader::open(&index.path).unwrap();
    while let Some(e) = reader.next(&mut data).unwrap() {
        log.push((e, data.clone()));
    }
    let apply = |img: &mut Vec<u8>, seq: u64, part: Option<Part>| {
        let (entry, bytes) = &log[seq as usize];
        let Some((offset, len)) = LogIndex::range(entry) else {
            return;
        };
        let Part { at, len } = part.unwrap_or(Part { at: 0, len });
        let range = (offset + at) as usize..(offset + at + len) as usize;
        match entry.op {
            Op::Write { .. } => {
                img[range].copy_from_slice(&bytes[at as usize..(at + len) as usize])
            }
            _ => img[range].fill(0),
        }
    };
    let mut images = vec![vec![0u8; IMAGE as usize]; 2];
    for (i, s) in state.images.iter().enumerate() {
        let durable = log.iter().filter(|(e, _)| e.image as usize == i);
        for (e, _) in durable.filter(|(e, _)| Some(e.seq) <= s.durable_through) {
            apply(&mut images[i], e.seq, None);
        }
        for p in &s.persisted {
            match &p.torn {
                None => apply(&mut images[i], p.seq, None),
                Some(parts) => parts
                    .iter()
                    .for_each(|&part| apply(&mut images[i], p.seq, Some(part))),
            }
        }
    }
    images
}

#[test]
fn the_same_seed_gives_the_same_states_and_another_seed_others() {
    let dir = tempfile::tempdir().unwrap();
    let index = synthetic(dir.path(), 400, 1);
    let a = generate(&index, &opts(60, 42, 512)).unwrap();
    let b = generate(&index, &opts(60, 42, 512)).unwrap();
    let c = generate(&index, &opts(60, 43, 512)).unwrap();
    assert_eq!(a, b);
    assert_ne!(
        a[2..],
        c[2..],
        "the first two states are fixed, the others drawn"
    );
    assert_eq!(a[..2], c[..2]);
}

#[test]
fn no_state_drops_a_write_before_the_last_flush_nor_keeps_one_not_issued() {
    let dir = tempfile::tempdir().unwrap();
    let index = synthetic(dir.path(), 400, 2);
    for state in generate(&index, &opts(100, 7, 4096)).unwrap() {
        for (i, s) in state.images.iter().enumerate() {
            let of_image = index.entries.iter().filter(|e| e.image as usize == i);
            let flushes = of_image.clone().filter(|e| e.op == Op::Flush);
            let last_flush = flushes
                .map(|e| e.seq)
                .filter(|&q| q < state.crash_point)
                .max();
            assert_eq!(s.durable_through, last_flush, "state {}", state.number);
            let pending: Vec<u64> = of_image
                .filter(|e| {
                    e.op != Op::Flush && Some(e.seq) > last_flush && e.seq < state.crash_point
                })
                .map(|e| e.seq)
                .collect();
            assert_eq!(s.pending, pending.len() as u64);
            let kept: Vec<u64> = s.persisted.iter().map(|p| p.seq).collect();
            assert!(
                kept.iter().all(|q| pending.contains(q)),
                "only pending writes persist"
            );
            assert!(kept.windows(2).all(|w| w[0] < w[1]), "in the order issued");
            let c = state.crash_point as usize;
            if let Some(first_lost) = index.entries.get(c) {
                assert!(
                    state.crash_ns < first_lost.time_ns,
                    "before the first record lost"
                );
                assert!(c == 0 || state.crash_ns >= index.entries[c - 1].time_ns.saturating_sub(1));
            } else {
                assert_eq!(state.crash_ns, index.end_ns);
            }
            match state.kind {
                StateKind::Flushed => assert!(kept.is_empty()),
                StateKind::Issued => assert_eq!(kept, pending),
                StateKind::Subset => {}
            }
        }
    }
}

#[test]
fn torn_writes_split_at_sector_boundaries_only() {
    let mut rng = XorShiftRng::seed_from_u64(3);
    for sector in [512u64, 4096] {
        for _ in 0..2000 {
            let offset = (rng.next_u64() % 10_000) * 512;
            let len = 512 * (1 + rng.next_u64() % 64);
            let Some(parts) = tear(offset, len, sector, &mut rng) else {
                let (first, last) = (offset / sector, (offset + len - 1) / sector);
                assert_eq!(first, last, "only a write within one sector is never torn");
                continue;
            };
            assert!(!parts.is_empty(), "some of it persisted");
            let kept: u64 = parts.iter().map(|p| p.len).sum();
            assert!(kept < len, "not all of it persisted");
            for p in &parts {
                assert!(p.len > 0 && p.at + p.len <= len);
                let (start, end) = (offset + p.at, offset + p.at + p.len);
                assert!(p.at == 0 || start % sector == 0, "{offset}+{len} {parts:?}");
                assert!(
                    p.at + p.len == len || end % sector == 0,
                    "{offset}+{len} {parts:?}"
                );
            }
            assert!(
                parts.windows(2).all(|w| w[0].at + w[0].len < w[1].at),
                "{parts:?}"
            );
        }
    }
    assert_eq!(tear(1024, 512, 512, &mut rng), None);
    assert_eq!(tear(4096, 4096, 4096, &mut rng), None);
}

#[test]
fn states_are_distinct_and_as_many_as_asked_or_as_the_log_allows() {
    let dir = tempfile::tempdir().unwrap();
    let index = synthetic(dir.path(), 400, 4);
    let states = generate(&index, &opts(80, 5, 512)).unwrap();
    assert_eq!(states.len(), 80);
    let distinct: HashSet<_> = states.iter().map(|s| s.images.clone()).collect();
    assert_eq!(distinct.len(), 80);
    assert!(states.iter().enumerate().all(|(i, s)| s.number == i));
    let end = index.entries.len() as u64;
    assert_eq!(
        (states[0].kind, states[0].crash_point),
        (StateKind::Issued, end)
    );
    assert_eq!(
        (states[1].kind, states[1].crash_point),
        (StateKind::Flushed, end)
    );
    assert!(
        states.iter().any(|s| s.torn() > 0),
        "some states hold torn writes"
    );
    assert!(states
        .iter()
        .any(|s| s.kind == StateKind::Subset && s.persisted() > 0));

    // One sector-sized write, then a flush: three states only (nothing, the write, flushed).
    let path = dir.path().join("tiny.log");
    let images = [ImageInfo {
        name: "d.img".into(),
        size_bytes: IMAGE,
    }];
    let mut w = LogWriter::new(std::fs::File::create(&path).unwrap(), &images).unwrap();
    w.write(0, 512, &[9u8; 512]).unwrap();
    w.flush(0).unwrap();
    w.finish().unwrap();
    let tiny = LogIndex::read(&path).unwrap();
    let states = generate(&tiny, &opts(50, 6, 512)).unwrap();
    let distinct: HashSet<_> = states.iter().map(|s| s.images.clone()).collect();
    assert_eq!((states.len(), distinct.len()), (3, 3), "{states:?}");
}

#[test]
fn materialised_states_hold_what_the_model_says_in_any_order() {
    let dir = tempfile::tempdir().unwrap();
    let index = synthetic(dir.path(), 300, 8);
    let states = generate(&index, &opts(30, 9, 512)).unwrap();
    let scratch = dir.path().join("scratch");
    std::fs::create_dir(&scratch).unwrap();
    let mut m = Materialiser::new(&index, Base::Zeros, &scratch).unwrap();
    // Drawn order (crash points up and down: the working copies are rebuilt when behind).
    for state in &states {
        let out = dir.path().join(format!("state-{}", state.number));
        std::fs::create_dir(&out).unwrap();
        let files = m.materialise(state, &out).unwrap();
        let want = model(&index, state);
        for (file, want) in files.iter().zip(want) {
            assert!(
                std::fs::read(file).unwrap() == want,
                "state {} {}",
                state.number,
                file.display()
            );
        }
        std::fs::remove_dir_all(&out).unwrap();
    }
    drop(m);
    assert_eq!(
        std::fs::read_dir(&scratch).unwrap().count(),
        0,
        "working copies removed"
    );
}

#[test]
fn a_base_directory_is_where_the_states_start() {
    let dir = tempfile::tempdir().unwrap();
    let index = synthetic(dir.path(), 50, 10);
    let base = dir.path().join("base");
    std::fs::create_dir(&base).unwrap();
    for name in ["data.img", "wal.img"] {
        std::fs::write(base.join(name), vec![0xEEu8; IMAGE as usize]).unwrap();
    }
    let state = CrashState {
        number: 0,
        crash_point: 0,
        crash_ns: index.crash_ns(0),
        kind: StateKind::Flushed,
        images: vec![
            ImageState {
                durable_through: None,
                pending: 0,
                persisted: vec![]
            };
            2
        ],
    };
    let scratch = dir.path().join("scratch");
    std::fs::create_dir(&scratch).unwrap();
    let mut m = Materialiser::new(&index, Base::Dir(base.clone()), &scratch).unwrap();
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let files = m.materialise(&state, &out).unwrap();
    assert_eq!(
        std::fs::read(&files[1]).unwrap(),
        vec![0xEEu8; IMAGE as usize]
    );
}

#[test]
fn crash_points_fall_in_the_window_asked_for() {
    let dir = tempfile::tempdir().unwrap();
    let index = synthetic(dir.path(), 300, 12);
    let opts = CrashOptions {
        from_record: 250,
        ..opts(40, 13, 512)
    };
    let states = generate(&index, &opts).unwrap();
    assert!(states.len() > 10);
    assert!(
        states.iter().all(|s| s.crash_point > 250),
        "{:?}",
        states.iter().map(|s| s.crash_point).collect::<Vec<_>>()
    );
    let past = CrashOptions {
        from_record: 10_000,
        ..opts
    };
    let states = generate(&index, &past).unwrap();
    assert!(states
        .iter()
        .all(|s| s.crash_point == index.entries.len() as u64));
}

/// A database's log: `commits` of one 512-byte write and its flush, then a checkpoint's burst
/// of 64 writes of 64 KiB and its flush, then `commits` more; the burst's flush's record.
fn commits_around_a_burst(dir: &Path, commits: usize) -> (LogIndex, u64) {
    let path = dir.join("burst.log");
    let images = [ImageInfo {
        name: "data.img".into(),
        size_bytes: 8 << 20,
    }];
    let file = std::fs::File::create(&path).unwrap();
    let mut w = LogWriter::new(std::io::BufWriter::new(file), &images).unwrap();
    let commit = |w: &mut LogWriter<_>, i: usize| {
        w.write(0, (i as u64 % 1024) * 512, &[7u8; 512]).unwrap();
        w.flush(0).unwrap();
    };
    for i in 0..commits {
        commit(&mut w, i);
    }
    for page in 0..64u64 {
        w.write(0, (1 << 20) + page * (64 << 10), &vec![9u8; 64 << 10])
            .unwrap();
    }
    let burst_flush = w.flush(0).unwrap();
    for i in 0..commits {
        commit(&mut w, i);
    }
    w.finish().unwrap();
    (LogIndex::read(&path).unwrap(), burst_flush)
}

#[test]
fn every_other_subset_is_aimed_before_the_flush_with_the_most_pending() {
    let dir = tempfile::tempdir().unwrap();
    let (index, burst_flush) = commits_around_a_burst(dir.path(), 500);
    assert!(matches!(index.entries[burst_flush as usize].op, Op::Flush));
    let states = generate(&index, &opts(80, 5, 4096)).unwrap();
    let subsets: Vec<&CrashState> = (states.iter())
        .filter(|s| s.kind == StateKind::Subset)
        .collect();
    let in_burst = subsets
        .iter()
        .filter(|s| s.crash_point == burst_flush)
        .count();
    // The burst holds 4 MiB of the 4.5 MiB pending at flushes: aimed points (half the subsets)
    // fall before its flush 8 times in 9; a uniform one, on that one record of 2,065, hardly.
    assert!(
        in_burst * 3 >= subsets.len(),
        "{in_burst} of {} subsets before the burst's flush",
        subsets.len()
    );
    let torn = subsets.iter().filter(|s| s.crash_point == burst_flush);
    assert!(
        torn.map(|s| s.torn()).sum::<usize>() > 0,
        "no torn write in the burst"
    );
}

#[test]
fn bad_options_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let index = synthetic(dir.path(), 10, 11);
    let err = generate(&index, &opts(5, 1, 1000)).unwrap_err();
    assert!(err.contains("512 or 4096"), "{err}");
    assert!(generate(&index, &opts(0, 1, 512)).is_err());
}
