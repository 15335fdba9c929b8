//! `verify=`: verified runs pass on every engine and workload shape that takes it, and a block
//! damaged on disk between the layout and a read, or the final pass, fails the run naming its
//! offset; the generation rule catches a block put back to an older write.

use bakeoff_core::plan::{Algorithm, BlockGrid, Plan};
use bakeoff_core::record::verify::VerifyRecord;
use bakeoff_core::settings::Settings;
use bakeoff_core::workload::builtin;
use bakeoff_engine::layout::Region;
use bakeoff_engine::verify::check_file;
use bakeoff_engine::{execute, lay_out, Dataset, RunError, RunOutput, Target};
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::atomic::AtomicBool;

fn plan(workload: &str, set: &str) -> Plan {
    builtin(workload)
        .unwrap()
        .plan(&Settings::parse_set(set).unwrap())
        .unwrap()
}

fn laid_out(plan: &Plan) -> (tempfile::TempDir, Dataset) {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let data = lay_out(plan, &Target::Directory(dir.path().into()), &|_, _| true).unwrap();
    (dir, data)
}

fn run(plan: &Plan, data: &Dataset) -> RunOutput {
    execute(plan, data, &AtomicBool::new(false), &mut |_| {}).unwrap()
}

fn section(out: &RunOutput) -> &VerifyRecord {
    out.verify
        .as_ref()
        .expect("a verified run has a verify section")
}

/// Flips one byte of `path` at `at`, through a handle of its own.
fn flip(path: &Path, at: u64) {
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .unwrap();
    let mut byte = [0u8];
    f.read_exact_at(&mut byte, at).unwrap();
    f.write_all_at(&[byte[0] ^ 0x5a], at).unwrap();
    f.sync_all().unwrap();
}

#[test]
fn verified_runs_pass_on_every_engine_and_shape_that_takes_verify() {
    let runtime = "runtime=600ms,ramp_time=0";
    let cases = [
        ("randwrite", "verify=crc32c,bs=8k,size=2m"),
        (
            "randrw",
            "verify=sha256,size=512k,engine=io_uring,iodepth=8,jobs=2",
        ),
        (
            "randwrite",
            "verify=crc32c,rw=randupdate,size=1m,offset=4k,jobs=2",
        ),
        (
            "write",
            "verify=crc32c,bs=4k,size=1m,direct=true,engine=io_uring,iodepth=4",
        ),
        (
            "slob",
            "verify=crc32c,readers=2,writers=2,data_size=2m,redo_size=1m,direct=false",
        ),
        (
            "oltp",
            "verify=crc32c,shadows=4,dbwriters=2,usermode=1000,filesize=1m,nfiles=2,\
             logfilesize=2m",
        ),
    ];
    for (workload, set) in cases {
        let p = plan(workload, &format!("{set},{runtime}"));
        let (_dir, data) = laid_out(&p);
        let out = run(&p, &data);
        assert!(out.error.is_none(), "{workload} {set}: {:?}", out.error);
        let v = section(&out);
        let blocks: u64 = v.filesets.iter().map(|f| f.blocks).sum();
        let pass = v.final_pass.as_ref().expect("the final pass ran");
        assert!(pass.complete, "{workload}");
        assert_eq!(
            pass.blocks_checked, blocks,
            "{workload}: every block read back"
        );
        assert_eq!(v.layout_blocks, blocks);
        assert_eq!(v.mismatches, 0, "{workload}: {:?}", v.first_mismatches);
        assert!(v.blocks_written > 0, "{workload} wrote nothing");
        if !matches!(workload, "write" | "randwrite") || set.contains("randupdate") {
            assert!(v.reads_checked > 0, "{workload}: no read checked ({v:?})");
        }
    }
}

#[test]
fn every_block_on_disk_after_a_run_carries_its_header() {
    let p = plan(
        "randwrite",
        "verify=sha256,bs=4k,size=1m,offset=512,runtime=300ms,ramp_time=0",
    );
    let (_dir, data) = laid_out(&p);
    let out = run(&p, &data);
    assert!(out.error.is_none(), "{:?}", out.error);
    let grid = p.filesets[0].verify.unwrap();
    assert_eq!(grid.offset, 512);
    let region = &data.filesets[0][0];
    let any = |_: u64| Some((0, u64::MAX));
    let c = check_file(region, grid, Algorithm::Sha256, &any, 4, &|| false).unwrap();
    assert_eq!(
        c.blocks_checked,
        (1 << 20) / 4096 - 1,
        "the last block does not fit"
    );
    assert_eq!(c.mismatches, 0, "{:?}", c.first);
    // The newest generation on disk is one the run wrote.
    assert!(section(&out).blocks_written >= 1);
}

#[test]
fn a_byte_flipped_between_layout_and_run_is_caught_by_a_read_naming_its_offset() {
    let p = plan(
        "read",
        "verify=crc32c,bs=4k,size=256k,runtime=400ms,ramp_time=0",
    );
    let (_dir, data) = laid_out(&p);
    let path = data.filesets[0][0].path.clone();
    flip(&path, 5 * 4096 + 100);
    let out = run(&p, &data);
    let Some(RunError::Verify(m)) = &out.error else {
        panic!("expected a verify error, got {:?}", out.error);
    };
    assert_eq!(m.offset, 5 * 4096);
    let text = out.error.as_ref().unwrap().to_string();
    assert!(
        text.contains("offset 20480") && text.contains(&path.display().to_string()),
        "{text}"
    );
    assert!(text.contains("checksum"), "{text}");
    let v = section(&out);
    assert!(v.mismatches >= 1);
    assert_eq!(v.first_mismatches[0].found_by, "run");
    assert_eq!(v.first_mismatches[0].fault, "checksum");
    assert_eq!(v.first_mismatches[0].offset_bytes, 20480);
    assert!(v.final_pass.is_none(), "a failed run has no final pass");
}

#[test]
fn a_damaged_block_no_read_reaches_is_caught_by_the_final_pass() {
    // One sequential reader at 2 reads a second reads the first block or two; the damaged
    // block is the last, which only the final pass reads.
    let p = plan(
        "read",
        "verify=crc32c,bs=4k,size=256k,rate_iops=2,runtime=300ms,ramp_time=0",
    );
    let (_dir, data) = laid_out(&p);
    let last = 63 * 4096;
    flip(&data.filesets[0][0].path, last + 4000);
    let out = run(&p, &data);
    let Some(RunError::Verify(m)) = &out.error else {
        panic!("expected a verify error, got {:?}", out.error);
    };
    assert_eq!(m.offset, last);
    let v = section(&out);
    let pass = v.final_pass.as_ref().unwrap();
    assert_eq!(pass.blocks_checked, 64);
    assert_eq!(v.mismatches, 1);
    let first = &v.first_mismatches[0];
    assert_eq!(
        (first.found_by.as_str(), first.offset_bytes),
        ("final_pass", last)
    );
    assert!(first.computed_checksum.is_some() && first.stored_checksum.is_some());
}

#[test]
fn a_block_put_back_to_an_older_write_or_another_place_is_caught() {
    let p = plan("randwrite", "verify=crc32c,bs=4k,size=64k");
    let (_dir, data) = laid_out(&p);
    let region: &Region = &data.filesets[0][0];
    let grid: BlockGrid = p.filesets[0].verify.unwrap();
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&region.path)
        .unwrap();
    let read = |k: u64| {
        let mut b = vec![0u8; 4096];
        f.read_exact_at(&mut b, k * 4096).unwrap();
        b
    };
    // Block 3 rewritten as generation 1, a write that had the block to itself...
    let old = read(3);
    let mut new = old.clone();
    bakeoff_core::verify::stamp(&mut new, 3 * 4096, 1, Algorithm::Crc32c);
    f.write_all_at(&new, 3 * 4096).unwrap();
    let expected = |k: u64| Some(if k == 3 { (1, 1) } else { (0, 0) });
    let check = || check_file(region, grid, Algorithm::Crc32c, &expected, 8, &|| false).unwrap();
    assert_eq!(check().mismatches, 0);
    // ... then lost: the old block is back.
    f.write_all_at(&old, 3 * 4096).unwrap();
    let c = check();
    assert_eq!(c.mismatches, 1);
    assert_eq!(
        (c.first[0].offset, c.first[0].fault.kind()),
        (3 * 4096, "generation")
    );
    assert!(
        c.first[0].to_string().contains("lost or stale write"),
        "{}",
        c.first[0]
    );
    // Block 7's bytes written over block 9: an intact block of the wrong offset.
    f.write_all_at(&new, 3 * 4096).unwrap();
    f.write_all_at(&read(7), 9 * 4096).unwrap();
    let c = check();
    assert_eq!(
        (c.first[0].offset, c.first[0].fault.kind()),
        (9 * 4096, "offset")
    );
    // A torn write: the first half of a newer block 9 over the old one.
    f.write_all_at(&read(10), 9 * 4096).unwrap();
    let mut newer = read(10);
    newer[3000..3100].fill(0xEE); // a write of other data
    bakeoff_core::verify::stamp(&mut newer, 10 * 4096, 2, Algorithm::Crc32c);
    f.write_all_at(&newer[..2048], 10 * 4096).unwrap();
    let c = check();
    let faults: Vec<(u64, &str)> = c.first.iter().map(|m| (m.offset, m.fault.kind())).collect();
    assert_eq!(faults, [(9 * 4096, "offset"), (10 * 4096, "checksum")]);
}
