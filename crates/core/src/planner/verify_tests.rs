//! Which plans take `verify=`, where their blocks lie, and what is refused with its reason.

use crate::plan::{Algorithm, BlockGrid, Plan};
use crate::settings::{SettingError, Settings};
use crate::workload::{builtin, Workload};

fn plan(name: &str, set: &str) -> Result<Plan, SettingError> {
    builtin(name)
        .unwrap()
        .plan(&Settings::parse_set(set).unwrap())
}

fn refusal(name: &str, set: &str) -> String {
    plan(name, set).unwrap_err().to_string()
}

fn grid(p: &Plan, fileset: &str) -> Option<BlockGrid> {
    p.filesets
        .iter()
        .find(|f| f.name == fileset)
        .unwrap()
        .verify
}

#[test]
fn plain_jobs_verify_in_blocks_of_bs_from_their_offset() {
    let p = plan("randwrite", "verify=crc32c,bs=8k,offset=4k").unwrap();
    assert_eq!(p.verify, Some(Algorithm::Crc32c));
    let want = BlockGrid {
        block_bytes: 8192,
        offset: 4096,
    };
    assert_eq!(grid(&p, "data"), Some(want));
    for name in ["randread", "randrw", "read", "write"] {
        let p = plan(name, "verify=sha256").unwrap();
        assert_eq!(p.verify, Some(Algorithm::Sha256), "{name}");
    }
    let off = plan("randwrite", "").unwrap();
    assert_eq!((off.verify, grid(&off, "data")), (None, None));
    let update = plan("randwrite", "verify=crc32c,rw=randupdate").unwrap();
    assert!(grid(&update, "data").is_some());
}

#[test]
fn slob_verifies_its_data_and_leaves_the_redo_log_unverified() {
    let p = plan("slob", "verify=crc32c,block=8k").unwrap();
    assert_eq!(grid(&p, "data").map(|g| g.block_bytes), Some(8192));
    assert_eq!(grid(&p, "redo"), None, "redo of any length is not blocks");
    // oltp's log writer writes 256k blocks of its own: both filesets are verified.
    let oltp = plan("oltp", "verify=crc32c,iosize=4k").unwrap();
    assert_eq!(grid(&oltp, "datafiles").map(|g| g.block_bytes), Some(4096));
    assert_eq!(
        grid(&oltp, "logfile").map(|g| g.block_bytes),
        Some(256 << 10)
    );
}

#[test]
fn what_cannot_verify_is_refused_naming_the_key_and_why() {
    let small = refusal("randwrite", "verify=crc32c,bs=32");
    assert!(
        small.starts_with("--set: verify: 'crc32c'") && small.contains("64-byte header"),
        "{small}"
    );
    let null = refusal("randwrite", "verify=crc32c,engine=null");
    assert!(null.contains("null engine"), "{null}");
    let clients = refusal("randwrite", "verify=crc32c,clients=2");
    assert!(clients.contains("clients=2"), "{clients}");
    let tree = refusal("fileserver", "verify=crc32c");
    assert!(tree.contains("file operations"), "{tree}");
    let bad = refusal("randwrite", "verify=md5");
    assert!(bad.contains("'md5' is not a verify mode"), "{bad}");
    let db = crate::dbplan::plan_db("tpcc", &Settings::parse_set("verify=crc32c").unwrap())
        .unwrap_err()
        .to_string();
    assert!(
        db.starts_with("--set: verify:") && db.contains("page checksums"),
        "{db}"
    );
}

#[test]
fn roles_that_disagree_on_a_fileset_s_blocks_are_refused() {
    let text = r#"
[[fileset]]
name = "data"
size = "1m"

[[role]]
name = "small"
fileset = "data"
steps = [{ io = "randread", bs = "4k" }]

[[role]]
name = "large"
fileset = "data"
steps = [{ io = "randwrite", bs = "8k" }]
"#;
    let w = Workload::parse("mixed", text, "mixed.toml").unwrap();
    let set = Settings::parse_set("verify=crc32c").unwrap();
    let e = w.plan(&set).unwrap_err().to_string();
    assert!(
        e.contains("one block size") && e.contains("'small'") && e.contains("'large'"),
        "{e}"
    );
    // Without verify the same workload runs.
    w.plan(&Settings::default()).unwrap();
}

#[test]
fn a_ramp_of_a_verified_plan_is_refused() {
    let p = plan("randwrite", "verify=crc32c").unwrap();
    let e = crate::ramp::point::check_rampable(&p).unwrap_err();
    assert!(e.contains("verify=crc32c"), "{e}");
}
