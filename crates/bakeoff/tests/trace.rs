//! `bakeoff trace show` and `bakeoff trace personality` on synthetic traces (no root needed),
//! and every kind of damaged trace: exit 2, a message naming the file, never a panic.

use assert_cmd::Command;
use bakeoff_core::trace::testing::db_like;
use bakeoff_core::trace::write_trace;
use std::path::{Path, PathBuf};

fn bakeoff() -> Command {
    Command::cargo_bin("bakeoff").unwrap()
}

/// A database-like trace of 3 threads written to `dir/name`.
fn write(dir: &Path, name: &str) -> PathBuf {
    let path = dir.join(name);
    let file = std::fs::File::create(&path).unwrap();
    write_trace(&db_like(7, 3, 400), std::io::BufWriter::new(file)).unwrap();
    path
}

#[test]
fn show_prints_the_op_mix_files_threads_and_bytes_per_call() {
    let dir = tempfile::tempdir().unwrap();
    let trace = write(dir.path(), "t.trace");
    let out = bakeoff()
        .args(["trace", "show"])
        .arg(&trace)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for needle in ["read", "fdatasync", "b/call", "thread"] {
        assert!(
            text.to_lowercase().contains(needle),
            "no {needle:?} in:\n{text}"
        );
    }
    let json = bakeoff()
        .args(["trace", "show", "--json"])
        .arg(&trace)
        .output()
        .unwrap();
    assert!(json.status.success());
    let value: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(value["schema_version"], 1);
    assert_eq!(value["totals"]["records"], 1200);
}

#[test]
fn personality_writes_a_workload_that_plans() {
    let dir = tempfile::tempdir().unwrap();
    let trace = write(dir.path(), "mydb.trace");
    let out = bakeoff()
        .args(["trace", "personality"])
        .arg(&trace)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let toml = dir.path().join("mydb.toml");
    std::fs::write(&toml, &out.stdout).unwrap();
    let plan = bakeoff()
        .args(["run", "--target"])
        .arg(dir.path())
        .arg("--job")
        .arg(&toml)
        .arg("--dry-run")
        .output()
        .unwrap();
    assert!(
        plan.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&plan.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
}

#[test]
fn a_damaged_trace_is_exit_2_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let good = std::fs::read(write(dir.path(), "good.trace")).unwrap();
    let mut flipped = good.clone();
    flipped[good.len() / 2] ^= 0x10;
    let mut version = good.clone();
    version[8] = 9;
    let cases: [(&str, Vec<u8>, &str); 5] = [
        ("empty", Vec::new(), "empty"),
        (
            "text",
            b"not a trace at all\n".to_vec(),
            "not a bakeoff trace",
        ),
        ("flipped", flipped, "crc"),
        ("version", version, "version"),
        ("cut", good[..good.len() * 2 / 3].to_vec(), "truncated"),
    ];
    for (name, bytes, says) in cases {
        let path = dir.path().join(format!("{name}.trace"));
        std::fs::write(&path, bytes).unwrap();
        let out = bakeoff()
            .args(["trace", "personality"])
            .arg(&path)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{name}: {err}");
        assert!(err.to_lowercase().contains(says), "{name}: {err}");
        assert!(err.contains(&path.display().to_string()), "{name}: {err}");
        assert!(!err.contains("panicked"), "{name}: {err}");
    }
}

#[test]
fn show_reads_a_killed_capture_up_to_its_last_whole_chunk() {
    let dir = tempfile::tempdir().unwrap();
    let good = std::fs::read(write(dir.path(), "good.trace")).unwrap();
    let cut = dir.path().join("cut.trace");
    std::fs::write(&cut, &good[..good.len() * 2 / 3]).unwrap();
    let out = bakeoff()
        .args(["trace", "show"])
        .arg(&cut)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("the capture was killed"), "{err}");
}

/// `bakeoff trace show t.trace | head -1`: the reader goes away, and bakeoff ends quietly as a
/// Unix tool does (status 141), not with a panic's message.
#[test]
fn a_closed_stdout_ends_quietly() {
    let dir = tempfile::tempdir().unwrap();
    let trace = write(dir.path(), "t.trace");
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("bakeoff"))
        .args(["trace", "show"])
        .arg(&trace)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Closed before bakeoff has read the trace, so its first write fails.
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(out.status.code(), Some(141), "{err}");
}

#[test]
fn a_replay_balloon_that_fills_the_memory_limit_is_exit_2_before_anything_is_built() {
    let dir = tempfile::tempdir().unwrap();
    let trace = write(dir.path(), "mydb.trace");
    let dry = |balloon: &str| {
        bakeoff()
            .args(["run", "--replay"])
            .arg(&trace)
            .args(["--stack", "ext4", "--mem-limit", "1g", "--dry-run", "--set"])
            .arg(format!("balloon={balloon}"))
            .output()
            .unwrap()
    };
    let out = dry("1g");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("balloon=1024 MiB leaves less than 128 MiB of --mem-limit 1024 MiB")
            && err.contains("give balloon at most 896 MiB"),
        "{err}"
    );
    let out = dry("256m");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
