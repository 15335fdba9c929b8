//! The database lines of the terminal summary: what ran where, the transaction rates and what
//! each transaction cost, the database's own counters, the load, and the consistency checks.

use crate::fmt::{bytes, duration, group, rate};
use bakeoff_core::dbrecord::DatabaseRun;
use bakeoff_core::record::RunRecord;
use std::fmt::Write;

/// The header's middle part for a database run: `db sqlite (SQLite 3.46.0), tpcc ...`.
pub fn header_part(r: &RunRecord, db: &DatabaseRun) -> String {
    let get = |k: &str| r.plan.settings.get(k).cloned().unwrap_or_default();
    let work = match r.plan.workload.as_str() {
        "tpcc" => format!(
            "{} warehouse(s), {} terminal(s)",
            get("warehouses"),
            get("terminals")
        ),
        "pgbench" => format!("scale {}, {} client(s)", get("scale"), get("clients")),
        "sysbench" => format!(
            "{}, {} table(s) of {} rows, {} thread(s)",
            get("test"),
            get("tables"),
            get("table_size"),
            get("threads")
        ),
        "tpch" => format!("scale factor {}, {} phases", get("sf"), r.phases.len()),
        _ => String::new(),
    };
    // "PostgreSQL 15.8 (Debian ...) on x86_64 ..., compiled by ...": name and version suffice.
    let version: Vec<&str> = db.version.split_whitespace().take(2).collect();
    format!("db {} ({}), {work}", db.db, version.join(" "))
}

/// The lines after the roles table.
pub fn lines(r: &RunRecord, db: &DatabaseRun) -> String {
    let sm = &r.summary;
    let mut s = String::new();
    if !r.phases.is_empty() {
        // Phases (TPC-H) have no transactions: the load is what the database section adds.
        return load_line(db);
    }
    let opt = |v: Option<f64>| v.map_or("-".to_string(), rate);
    let us = crate::fmt::micros;
    let _ = writeln!(
        s,
        "txns     {} TPM, {} NOPM, {}/s; headline p50 {} p99 {}",
        opt(sm.tpm),
        opt(sm.nopm),
        opt(sm.tps),
        us(sm.txn_lat_p50_us),
        us(sm.txn_lat_p99_us)
    );
    let _ = writeln!(
        s,
        "per txn  CPU {}; data devices read {} written {}; log devices written {}; flushes {}; WAL {}",
        cpu_split(sm),
        bytes(sm.device_read_bytes_per_txn),
        bytes(sm.device_write_bytes_per_txn),
        bytes(sm.log_device_write_bytes_per_txn),
        sm.device_flushes_per_txn.map_or("-".into(), |f| format!("{f:.2}")),
        bytes(sm.wal_bytes_per_txn),
    );
    if sm.client_cpu_share_pct.is_some() {
        let _ = writeln!(
            s,
            "client   is {}",
            if db.db == "sqlite" {
                "bakeoff's terminals, less SQLite's own work on their threads (which is the database's)"
            } else {
                "bakeoff's terminals, pgbench or sysbench; the database is its server's processes"
            }
        );
    }
    let retries: u64 = db.retries.values().sum();
    let _ = write!(
        s,
        "database cache hits {}; checkpoints {}; retried {retries}, rolled back {}",
        sm.db_cache_hit_pct
            .map_or("-".into(), |p| format!("{p:.2}%")),
        sm.checkpoints.map_or("-".into(), |c| format!("{c:.0}")),
        db.rollbacks
    );
    if let Some(pct) = sm.delivery_skipped_pct {
        let _ = write!(
            s,
            "; Delivery skipped {} district(s) ({pct:.2}%)",
            db.delivery_skipped_districts
        );
    }
    s.push('\n');
    s += &load_line(db);
    if let Some(p) = &db.pgbench {
        let _ = writeln!(
            s,
            "pgbench  printed {} tps ({}); skipped {}, failed {}",
            p.tps.map_or("-".into(), |t| format!("{t:.1}")),
            p.version,
            p.skipped,
            p.failed
        );
    }
    if let Some(p) = &db.sysbench {
        let _ = writeln!(
            s,
            "sysbench printed {:.1} tps, {:.1} qps, p99 {:.2} ms ({}); ignored errors {}, \
             reconnects {}",
            p.tps, p.qps, p.lat_p99_ms, p.version, p.ignored_errors, p.reconnects
        );
    }
    if let Some(line) = innodb_line(sm, db) {
        s += &line;
    }
    if !db.consistency.is_empty() {
        let held = db.consistency.iter().filter(|c| c.passed).count();
        let _ = writeln!(
            s,
            "checks   TPC-C consistency conditions: {held} of {} hold",
            db.consistency.len()
        );
    }
    s
}

/// InnoDB's costs per transaction and its gauges at the window's edges, for MariaDB.
fn innodb_line(sm: &bakeoff_core::record::Summary, db: &DatabaseRun) -> Option<String> {
    sm.innodb_data_fsyncs_per_txn
        .or(sm.innodb_pages_read_per_txn)?;
    let gauges = db.window.as_ref().and_then(|w| w.innodb.as_ref());
    let n = |v: Option<f64>| v.map_or("-".into(), |v| format!("{v:.2}"));
    let whole = |v: Option<u64>| v.map_or("-".into(), |v| v.to_string());
    Some(format!(
        "innodb   per txn: pages written {}, read {}; doublewrite pages {} in {} batches; data \
         fsyncs {}; dirty pages {} -> {}, checkpoint age {}\n",
        n(sm.innodb_pages_written_per_txn),
        n(sm.innodb_pages_read_per_txn),
        n(sm.innodb_dblwr_pages_per_txn),
        n(sm.innodb_dblwr_writes_per_txn),
        n(sm.innodb_data_fsyncs_per_txn),
        whole(gauges.and_then(|g| g.dirty_pages_at_start)),
        whole(gauges.and_then(|g| g.dirty_pages)),
        crate::fmt::size(gauges.and_then(|g| g.checkpoint_age).unwrap_or(0)),
    ))
}

/// `959 µs (client 26.6 µs, database 347 µs, kernel for the run 585 µs)`: every
/// part named, so that they add up to the whole.
fn cpu_split(sm: &bakeoff_core::record::Summary) -> String {
    let us = crate::fmt::micros;
    let Some(all) = sm.cpu_us_per_txn else {
        return "-".into();
    };
    match (sm.client_cpu_us_per_txn, sm.server_cpu_us_per_txn) {
        (Some(client), Some(db)) => format!(
            "{} (client {}, database {}, kernel for the run {})",
            us(Some(all)),
            us(Some(client)),
            us(Some(db)),
            us(Some((all - client - db).max(0.0)))
        ),
        _ => us(Some(all)),
    }
}

/// The load: rows, time, rate, the database's size after it, device bytes written.
fn load_line(db: &DatabaseRun) -> String {
    let Some(l) = &db.load else {
        return String::new();
    };
    let rows: u64 = l.rows.values().sum();
    format!(
        "load     {} rows in {} ({}/s), size {}; devices wrote {}\n",
        group(rows),
        duration(l.seconds * 1e9),
        rate(l.rows_per_s),
        bytes(l.size_bytes.map(|b| b as f64)),
        bytes(l.device_write_bytes.map(|b| b as f64)),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use bakeoff_core::dbrecord::DatabaseRun;

    /// A SQLite TPC-C run: bakeoff (terminals and SQLite) 12.5% of the CPU, the client 2% of
    /// the busy CPU.
    fn sqlite_run() -> bakeoff_core::record::RunRecord {
        let mut r = crate::fixture::record();
        r.plan.workload = "tpcc".into();
        r.database = Some(DatabaseRun {
            db: "sqlite".into(),
            ..DatabaseRun::default()
        });
        let sm = &mut r.summary;
        sm.tps = Some(100.0);
        sm.cpu_us_per_txn = Some(959.0);
        sm.client_cpu_us_per_txn = Some(26.6);
        sm.server_cpu_us_per_txn = Some(347.0);
        sm.client_cpu_share_pct = Some(2.0);
        sm.txn_lat_p50_us = Some(2261.0);
        sm.txn_lat_p99_us = Some(310.0);
        r
    }

    #[test]
    fn every_part_of_a_split_is_named_and_the_parts_add_up() {
        let text = crate::terminal::render(&sqlite_run());
        assert!(
            text.contains(
                "per txn  CPU 959 µs (client 26.6 µs, database 347 µs, kernel for the run \
                 585 µs)"
            ),
            "{text}"
        );
        assert!(text.contains("headline p50 2.26 ms p99 310 µs"), "{text}");
        // The CPU by whom names the client and the database as the split does, on one base:
        // 2% of the busy 55.5% is 1.1% of all CPU; bakeoff's other 11.4% is SQLite's.
        assert!(
            text.contains("by whom: client 1.1%, database and stack daemons 11.4%, kernel"),
            "{text}"
        );
        assert!(!text.contains("bakeoff 12.5%"), "{text}");
    }

    #[test]
    fn skipped_delivery_districts_are_printed_with_their_share() {
        let mut r = crate::fixture::record();
        let db = DatabaseRun {
            delivery_skipped_districts: 3,
            ..DatabaseRun::default()
        };
        r.summary.delivery_skipped_pct = Some(0.75);
        let text = lines(&r, &db);
        assert!(
            text.contains("; Delivery skipped 3 district(s) (0.75%)\n"),
            "{text}"
        );
        r.summary.delivery_skipped_pct = None;
        assert!(!lines(&r, &db).contains("Delivery"), "not TPC-C");
    }
}
