//! Exploration (temporary).
use bakeoff_stack::exec::Exec;
use bakeoff_stack::ledger::Ledger;
use bakeoff_stack::writelog::{LogReader, Op, Recorder, RecorderOptions};
use bakeoff_testkit::command::sh;
use bakeoff_testkit::loop_device::{mkfs, Mount};
use bakeoff_testkit::{privileged_turn, scratch_dir};
use std::path::Path;

#[test]
fn explore() {
    let Some(_turn) = privileged_turn() else {
        return;
    };
    let dir = scratch_dir();
    let state = dir.path().join("state");
    let backing = dir.path().join("backing");
    std::fs::create_dir_all(&backing).unwrap();
    std::fs::File::create(backing.join("disk0.img"))
        .unwrap()
        .set_len(256 << 20)
        .unwrap();
    let mut ledger = Ledger::create(&state, "t").unwrap();
    let mut exec = Exec::default();
    let opts = RecorderOptions {
        backing_dir: backing.clone(),
        images: vec!["disk0.img".into()],
        mountpoint: dir.path().join("fuse"),
        log: dir.path().join("w.log"),
    };
    let mut rec = Recorder::start(&opts, &mut ledger).unwrap();
    let lp = rec
        .attach_loop("disk0.img", &mut exec, &mut ledger)
        .unwrap();
    eprintln!("{lp:?}");
    let name = lp.device.trim_start_matches("/dev/");
    for f in [
        "queue/fua",
        "queue/write_cache",
        "queue/logical_block_size",
        "queue/max_sectors_kb",
        "queue/discard_max_bytes",
        "loop/dio",
    ] {
        eprintln!(
            "{f}: {}",
            std::fs::read_to_string(format!("/sys/block/{name}/{f}"))
                .unwrap_or_default()
                .trim()
        );
    }
    eprintln!(
        "{}",
        sh(
            "findmnt",
            &[
                "-n",
                "-o",
                "TARGET,SOURCE,FSTYPE,OPTIONS",
                &opts.mountpoint.to_string_lossy()
            ]
        )
    );
    let t = std::time::Instant::now();
    mkfs("ext4", Path::new(&lp.device));
    eprintln!("mkfs {:?} {:?}", t.elapsed(), rec.overhead());
    {
        let m = Mount::new(Path::new(&lp.device), "defaults");
        for i in 0..20 {
            std::fs::write(m.path().join(format!("f{i}")), vec![i as u8; 1 << 20]).unwrap();
        }
        sh(
            "dd",
            &[
                "if=/dev/urandom",
                &format!("of={}/big", m.target()),
                "bs=1M",
                "count=64",
                "oflag=direct",
                "status=none",
            ],
        );
        sh("sync", &["-f", &m.target()]);
        eprintln!("after writes {:?}", rec.overhead());
    }
    let recording = rec.finish(&mut exec).unwrap();
    eprintln!("{recording:?}");
    let mut r = LogReader::open(&recording.log).unwrap();
    let mut data = Vec::new();
    let (mut w, mut fl, mut z, mut sizes) = (0, 0, 0, std::collections::BTreeMap::new());
    let mut last = String::new();
    let mut seq_kinds = String::new();
    while let Some(e) = r.next(&mut data).unwrap() {
        match e.op {
            Op::Write { len, .. } => {
                w += 1;
                *sizes.entry(len).or_insert(0) += 1;
                seq_kinds.push('w')
            }
            Op::Flush => {
                fl += 1;
                seq_kinds.push('F')
            }
            Op::Zero { .. } => {
                z += 1;
                seq_kinds.push('z')
            }
        }
        last = format!("{e:?}");
    }
    eprintln!("writes {w} flushes {fl} zeroes {z} last {last}");
    eprintln!(
        "sizes {:?}",
        sizes.iter().rev().take(10).collect::<Vec<_>>()
    );
    eprintln!(
        "pattern tail {}",
        &seq_kinds[seq_kinds.len().saturating_sub(400)..]
    );
    assert!(ledger.undo_all(&mut exec).is_empty());
}
