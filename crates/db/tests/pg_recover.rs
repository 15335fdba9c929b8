//! A cluster a crash left behind (every PostgreSQL process killed at once, no checkpoint since
//! its commits): started again from a copy, it recovers them; `pg_amcheck` and
//! `pg_checksums` find it clean, and find a page corrupted afterwards (root and PostgreSQL; in
//! CI for real).

mod pg_common;
use bakeoff_db::postgres::{check_checksums, PgOptions, PgServer};
use bakeoff_db::Conn;
use bakeoff_testkit::command::sh;
use bakeoff_testkit::shared;
use pg_common::*;
use std::io::{Seek, SeekFrom, Write};

/// SIGKILLs the postmaster and every process it started, at once: what a power cut does to
/// the server (its files stay as the kernel had them).
fn crash(server: &PgServer) {
    let pid = server.pid().to_string();
    let children = sh("sh", &["-c", &format!("pgrep -P {pid} || true")]);
    let all: Vec<&str> = std::iter::once(pid.as_str())
        .chain(children.split_whitespace())
        .collect();
    sh("sh", &["-c", &format!("kill -9 {}", all.join(" "))]);
    let gone = |p: &&str| !std::path::Path::new(&format!("/proc/{p}")).exists();
    for _ in 0..100 {
        if all.iter().all(gone) {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    panic!("PostgreSQL's processes {all:?} outlived kill -9");
}

fn count(conn: &mut dyn Conn) -> i64 {
    let rows = conn.query("SELECT count(*) FROM t", &[]).unwrap();
    rows[0][0].int().unwrap()
}

#[test]
fn a_crashed_cluster_recovers_its_commits_and_its_checks_find_a_corrupt_page() {
    if !privileged() {
        return;
    }
    let _turn = shared();
    let images = images_dir();
    let mut stack = tmpfs(images.path(), 512);
    let mut opts = options(&stack, 4);
    opts.data_checksums = true;
    let server = start(&mut stack, opts);
    assert_eq!(server.show_all()["data_checksums"], "on");
    let mut conn = server.connect().unwrap();
    conn.batch(
        "CREATE TABLE t (id bigint PRIMARY KEY, v text); \
         INSERT INTO t SELECT g, repeat('x', 100) FROM generate_series(1, 5000) g",
    )
    .unwrap();
    let file = conn.query("SELECT pg_relation_filepath('t')", &[]).unwrap();
    let file = file[0][0].text().unwrap().to_string();
    drop(conn);
    crash(&server);

    // The state as the crash left it, copied and started under another name: recovery replays
    // the WAL, so the acknowledged rows are there, and both checks find nothing wrong.
    let copy = stack.target.join("pgdata-crashed");
    let from = format!("{}/.", server.data_dir().display());
    sh("cp", &["-a", &from, &copy.to_string_lossy()]);
    let reopen = |stack: &mut bakeoff_stack::Stack| {
        let mut opts = PgOptions::new(&copy);
        opts.name = Some("recover-test".into());
        PgServer::start_existing(stack, opts).unwrap_or_else(|e| panic!("recovering: {e}"))
    };
    let recovered = reopen(&mut stack);
    let log = std::fs::read_to_string(recovered.log_file()).unwrap();
    assert!(
        log.contains("redo done") || log.contains("redo starts"),
        "no crash recovery:\n{log}"
    );
    assert_eq!(count(&mut recovered.connect().unwrap()), 5000);
    let amcheck = recovered.amcheck().unwrap();
    assert!(amcheck.clean(), "{amcheck:?}");
    let (binaries, user) = (recovered.binaries().clone(), recovered.user());
    recovered.stop(&mut stack).unwrap();
    let checksums = check_checksums(&binaries, user, &copy).unwrap();
    assert!(checksums.clean(), "{checksums:?}");

    // A page of the table overwritten in its middle (block 1): pg_checksums names the file
    // and block, and pg_amcheck reports the table.
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .open(copy.join(&file))
        .unwrap();
    f.seek(SeekFrom::Start(8192 + 4000)).unwrap();
    f.write_all(&[0xA5; 64]).unwrap();
    f.sync_all().unwrap();
    let checksums = check_checksums(&binaries, user, &copy).unwrap();
    assert_eq!(checksums.problems, 1, "{checksums:?}");
    let first = checksums.first.unwrap_or_default();
    assert!(
        first.contains(&file) && first.contains("block 1"),
        "{first}"
    );
    let damaged = reopen(&mut stack);
    let amcheck = damaged.amcheck().unwrap();
    assert!(!amcheck.clean(), "{amcheck:?}");
    eprintln!("pg_amcheck on the damaged copy: {amcheck:?}");
    damaged.stop(&mut stack).unwrap();
}
