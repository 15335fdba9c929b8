//! Tests of the database workloads' keys and plans.

use super::*;

fn plan(name: &str, set: &str) -> Result<DbPlan, SettingError> {
    plan_db(name, &Settings::parse_set(set).unwrap())
}

#[test]
fn tpcc_on_postgres_and_sqlite() {
    let p = plan(
        "tpcc",
        "warehouses=4,terminals=8,runtime=60s,pg.shared_buffers=1GB",
    )
    .unwrap();
    assert_eq!(p.db, Db::Postgres);
    assert_eq!(p.pg["shared_buffers"], "1GB");
    assert!(matches!(
        p.work,
        DbWork::Tpcc {
            warehouses: 4,
            terminals: 8,
            rate_tps: None,
            ..
        }
    ));
    assert_eq!(p.runtime, Duration::from_secs(60));
    let s = plan(
        "tpcc",
        "db=sqlite,sqlite.journal_mode=wal,sqlite.page_size=8k",
    )
    .unwrap();
    use super::sqlite::{JournalMode, Synchronous};
    assert_eq!(
        (
            s.sqlite.journal_mode,
            s.sqlite.page_size,
            s.sqlite.synchronous
        ),
        (Some(JournalMode::Wal), Some(8192), Some(Synchronous::Full))
    );
    assert_eq!(
        s.sqlite.cache_size,
        Some(-2000),
        "the key's documented default"
    );
}

#[test]
fn stored_procedures_are_postgres_default_and_refused_on_sqlite() {
    let procedures = |p: &DbPlan| match p.work {
        DbWork::Tpcc { procedures, .. } => procedures,
        _ => panic!("not TPC-C: {:?}", p.work),
    };
    let pg = plan("tpcc", "").unwrap();
    assert!(procedures(&pg));
    assert_eq!(pg.settings["procedures"], "true");
    let statements = plan("tpcc", "procedures=false").unwrap();
    assert!(!procedures(&statements));
    assert_eq!(statements.settings["procedures"], "false");
    let sqlite = plan("tpcc", "db=sqlite").unwrap();
    assert!(!procedures(&sqlite));
    assert_eq!(sqlite.settings["procedures"], "false");
    assert!(!procedures(
        &plan("tpcc", "db=sqlite,procedures=false").unwrap()
    ));
    let e = plan("tpcc", "db=sqlite,procedures=true")
        .unwrap_err()
        .to_string();
    assert!(e.contains("procedures") && e.contains("db=postgres"), "{e}");
    let e = plan("tpcc", "procedures=maybe").unwrap_err().to_string();
    assert!(e.contains("procedures") && e.contains("boolean"), "{e}");
}

#[test]
fn tpch_takes_a_scale_factor_and_refuses_run_keys() {
    let p = plan("tpch", "").unwrap();
    assert_eq!(
        (p.db, &p.work, p.runtime),
        (
            Db::Postgres,
            &DbWork::Tpch {
                sf: 0.1,
                load_threads: 2
            },
            Duration::ZERO
        )
    );
    assert_eq!(p.settings["sf"], "0.1");
    assert!(!p.settings.contains_key("runtime"), "{:?}", p.settings);
    // About 2.2 GiB per unit of scale: SF 0.1 measured 184 MiB, plus WAL.
    assert_eq!(p.dataset_bytes() >> 20, 225);
    let s = plan("tpch", "db=sqlite,sf=0.01,sqlite.page_size=16k").unwrap();
    assert_eq!((s.db, s.sqlite.page_size), (Db::Sqlite, Some(16384)));
    for key in ["runtime=10s", "ramp_time=5s", "seed=3"] {
        let e = plan("tpch", key).unwrap_err().to_string();
        let name = key.split('=').next().unwrap();
        assert!(e.contains(name) && e.contains("no run keys"), "{e}");
    }
    for bad in ["sf=0", "sf=0.001", "sf=101", "sf=big"] {
        let e = plan("tpch", bad).unwrap_err().to_string();
        assert!(e.contains("sf") && e.contains("0.01 to 100"), "{bad}: {e}");
    }
    let e = plan("tpch", "warehouses=2").unwrap_err().to_string();
    assert!(e.contains("unknown key"), "{e}");
}

#[test]
fn what_does_not_apply_is_refused() {
    let e = plan("tpcc", "warehouse=4").unwrap_err().to_string();
    assert!(e.contains("unknown key") && e.contains("warehouses"), "{e}");
    let e = plan("tpcc", "sqlite.journal_mode=wal")
        .unwrap_err()
        .to_string();
    assert!(e.contains("db=sqlite"), "{e}");
    let e = plan("tpcc", "db=sqlite,pg.work_mem=8MB")
        .unwrap_err()
        .to_string();
    assert!(e.contains("db=postgres"), "{e}");
    let e = plan("tpcc", "db=sqlite,sqlite.page_size=3000")
        .unwrap_err()
        .to_string();
    assert!(e.contains("power of two"), "{e}");
    let e = plan("pgbench", "db=sqlite").unwrap_err().to_string();
    assert!(e.contains("allowed: postgres"), "{e}");
    let e = plan("pgbench", "clients=5,jobs=2").unwrap_err().to_string();
    assert!(e.contains("multiple"), "{e}");
    let e = plan("pgbench", "latency_limit=10ms")
        .unwrap_err()
        .to_string();
    assert!(e.contains("needs -R"), "{e}");
    let e = plan("tpcc", "pg.=1").unwrap_err().to_string();
    assert!(e.contains("setting name"), "{e}");
}

#[test]
fn sysbench_on_mariadb_takes_my_variables_and_its_own_keys() {
    let p = plan(
        "sysbench",
        "test=oltp_write_only,tables=2,table_size=5000,threads=8,rate=200,\
         my.innodb-doublewrite=OFF,my.Innodb_Flush_Log_At_Trx_Commit=2",
    )
    .unwrap();
    assert_eq!(p.db, Db::Mariadb);
    assert_eq!(
        p.work,
        DbWork::Sysbench {
            test: "oltp_write_only".into(),
            tables: 2,
            table_size: 5000,
            threads: 8,
            rate_tps: Some(200.0),
        }
    );
    assert_eq!(p.my["innodb_doublewrite"], "OFF", "dash form in `_` form");
    assert_eq!(p.my["innodb_flush_log_at_trx_commit"], "2", "lower case");
    assert_eq!(p.settings["my.innodb_doublewrite"], "OFF");
    assert!(p.pg.is_empty());
    let defaults = plan("sysbench", "").unwrap();
    assert!(matches!(
        defaults.work,
        DbWork::Sysbench {
            tables: 4,
            table_size: 100_000,
            threads: 4,
            rate_tps: None,
            ..
        }
    ));
    assert_eq!(defaults.settings["test"], "oltp_read_write");
}

#[test]
fn one_databases_settings_are_refused_on_another() {
    let refused = |name: &str, set: &str| plan(name, set).unwrap_err().to_string();
    let e = refused("sysbench", "my.innodb_doublewrite=OFF,pg.fsync=off");
    assert!(e.contains("pg.fsync") && e.contains("db=postgres"), "{e}");
    assert!(e.contains("mariadb"), "{e}");
    let e = refused("tpcc", "db=postgres,my.innodb_doublewrite=OFF");
    assert!(
        e.contains("my.innodb_doublewrite") && e.contains("db=mariadb"),
        "{e}"
    );
    let e = refused("pgbench", "db=mariadb");
    assert!(e.contains("postgres"), "{e}");
    let e = refused("sysbench", "db=postgres");
    assert!(e.contains("mariadb"), "{e}");
    let e = refused("sysbench", "test=oltp_delete");
    assert!(e.contains("oltp_update_index"), "{e}");
    let e = refused("sysbench", "my.=1");
    assert!(e.contains("my.innodb_doublewrite=OFF"), "{e}");
    let e = refused("sysbench", "ramp_time=5s");
    assert!(e.contains("sysbench's printed TPS"), "{e}");
    let e = refused("sysbench", "sqlite.page_size=8k");
    assert!(e.contains("sqlite.page_size"), "{e}");
}

#[test]
fn every_database_a_workload_runs_on_is_a_db() {
    for (name, _, _) in super::DB_WORKLOADS {
        for db in databases_of(name) {
            assert!(
                Db::ALL.iter().any(|d| d.name() == *db),
                "{name}: {db} is not a Db"
            );
            // And db= chooses exactly that database (not a default in its place).
            let p = plan(name, &format!("db={db}")).unwrap();
            assert_eq!(p.db.name(), *db, "{name}");
        }
    }
}
