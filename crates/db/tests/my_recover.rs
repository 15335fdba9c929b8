//! An instance a crash left behind (`mariadbd` killed, no clean shutdown since its commits):
//! started again from a copy, InnoDB recovers them; `CHECK TABLE` and `innochecksum` find it
//! clean, and `innochecksum` finds a page of the table overwritten afterwards (root and
//! MariaDB; in CI for real).

mod my_common;
use bakeoff_db::mariadb::{check_tablespaces, MyServer};
use bakeoff_db::Conn;
use bakeoff_testkit::command::sh;
use bakeoff_testkit::shared;
use my_common::*;
use std::io::{Seek, SeekFrom, Write};

#[test]
fn a_crashed_instance_recovers_its_commits_and_its_checks_find_a_corrupt_page() {
    if !privileged() {
        return;
    }
    let _turn = shared();
    let (_images, mut stack, server) = tmpfs_server(1024, 4);
    let mut conn = server.connect().unwrap();
    conn.batch(
        "CREATE TABLE t (id bigint PRIMARY KEY, v varchar(200)) ENGINE=InnoDB; \
         INSERT INTO t SELECT seq, repeat('x', 100) FROM seq_1_to_5000",
    )
    .unwrap();
    drop(conn);
    let pid = server.pid();
    sh("kill", &["-9", &pid.to_string()]);
    assert!(wait_gone(pid), "mariadbd {pid} outlived kill -9");

    // The state as the crash left it, copied and started under another name.
    let copy = stack.target.join("mariadb-crashed");
    let from = format!("{}/.", server.data_dir().display());
    sh("cp", &["-a", &from, &copy.to_string_lossy()]);
    let reopen = |stack: &mut bakeoff_stack::Stack| {
        let mut opts = options(stack, 4);
        opts.data_dir = copy.clone();
        opts.name = Some("recover-my".into());
        MyServer::start_existing(stack, opts).unwrap_or_else(|e| panic!("recovering: {e}"))
    };
    let recovered = reopen(&mut stack);
    let log = std::fs::read_to_string(recovered.log_file()).unwrap();
    assert!(
        log.contains("crash recovery") || log.contains("Starting final batch"),
        "no recovery:\n{log}"
    );
    let mut conn = recovered.connect().unwrap();
    let rows = conn.query("SELECT count(*) FROM t", &[]).unwrap();
    assert_eq!(rows[0][0].int(), Some(5000));
    drop(conn);
    let tables = recovered.check_tables().unwrap();
    assert!(tables.clean(), "{tables:?}");
    recovered.stop(&mut stack).unwrap();
    let pages = check_tablespaces(&copy).unwrap();
    assert!(pages.clean(), "{pages:?}");

    // A page of the table (page 3 of its .ibd) overwritten in its middle.
    let ibd = copy.join("bakeoff").join("t.ibd");
    let mut f = std::fs::OpenOptions::new().write(true).open(&ibd).unwrap();
    f.seek(SeekFrom::Start(3 * 16384 + 1000)).unwrap();
    f.write_all(&[0xA5; 64]).unwrap();
    drop(f);
    let pages = check_tablespaces(&copy).unwrap();
    assert_eq!(pages.problems, 1, "{pages:?}");
    assert!(
        pages.first.as_deref().unwrap_or_default().contains("t.ibd"),
        "{pages:?}"
    );
    eprintln!("{pages:?}");
}
