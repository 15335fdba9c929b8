//! Steady state on real stacks: what a transaction costs the database (its WAL bytes and
//! full-page images) is a property of the workload at one rate and one checkpoint interval, not
//! of the stack, once the warm-up has let the cold start's burst of full-page images pass
//! (root and PostgreSQL; in CI for real).

mod common;
use bakeoff_testkit::serial;
use common::db::*;

/// The offered rate: far below what either stack carries with 4 terminals on 1 warehouse.
const RATE_TPS: &str = "150";

/// WAL bytes and full-page images per transaction of a run record.
fn costs(r: &serde_json::Value) -> (f64, f64) {
    let wal = f(&r["database"]["window"]["wal_bytes"]);
    let fpi = f(&r["database"]["window"]["wal_fpi"]);
    let per_txn = f(&r["summary"]["wal_bytes_per_txn"]);
    assert!(wal > 0.0 && per_txn > 0.0, "{}", r["database"]["window"]);
    let txns = wal / per_txn;
    (per_txn, fpi / txns)
}

/// TPC-C at the same offered rate on tmpfs and on an ext4 loop stack, with the defaults
/// (`ramp_time=auto`): WAL bytes and full-page images per transaction agree within 15 %.
/// `pg.checkpoint_timeout` is set (30 s, PostgreSQL's least) so that the test does not depend
/// on the default checkpoint interval, and the window is one interval long.
///
/// Observed on 2026-11-26 (a shared 2-CPU virtual machine), 150 txn/s offered on both stacks:
/// with `ramp_time=auto` both warm-ups ended after 17.0 s (the full-page images' decay after the
/// restart's checkpoint, which at one rate is the workload's, decided both) and the stacks
/// agreed within 1.1 % (WAL 20,381 / 20,163 bytes per transaction, full-page images 2.04 /
/// 2.02). The same test with `ramp_time=0` (main's default: the window opens on the cold
/// restart) gave 16,335 / 17,661 bytes and 1.47 / 1.65 images per transaction: 8 % and 11 %
/// apart, inside the 15 % bound, so it did not fail at this common rate. Main's bias is largest
/// between stacks at different throughputs (the restart's burst spread over different numbers
/// of transactions), which the `costs_at_different_rates` finding points out.
///
/// Not yet robust: a second run the same afternoon (another helper's tests loading the machine)
/// held tmpfs's warm-up until 53.0 s (ext4: 17.0 s), and the windows then covered different
/// parts of two checkpoint cycles: 16,548 / 20,219 WAL bytes and 1.60 / 2.02 images per
/// transaction, 20 % apart. A window that covers whole checkpoint cycles (issue 19's item 2)
/// removes the dependence on where the warm-up ends.
#[test]
fn postgres_costs_per_transaction_agree_across_stacks_at_one_rate() {
    if !postgres() {
        return;
    }
    let _serial = serial();
    let scene = db_scene();
    let set = format!(
        "db=postgres,warehouses=1,terminals=4,rate_tps={RATE_TPS},runtime=30s,\
         pg.checkpoint_timeout=30s,ramp_max=60s"
    );
    let mut seen = Vec::new();
    for stack in ["tmpfs:size=1g", "ext4"] {
        let r = scene.db_record(scene.db_run("tpcc", stack, &set, &[]));
        assert_eq!(r["status"], "completed", "{stack}");
        let (wal, fpi) = costs(&r);
        let steady = &r["steady"];
        assert_eq!(steady["warmup"], "auto", "{stack}: {steady}");
        assert_eq!(steady["capped"], false, "{stack}: {steady}");
        seen.push((
            stack,
            wal,
            fpi,
            steady["warmup_s"].clone(),
            r["summary"]["tps"].clone(),
        ));
    }
    let [(_, wal_a, fpi_a, ..), (_, wal_b, fpi_b, ..)] = seen[..] else {
        unreachable!()
    };
    let within = |a: f64, b: f64| (a - b).abs() <= 0.15 * a.max(b);
    assert!(
        within(wal_a, wal_b) && within(fpi_a, fpi_b),
        "(stack, WAL bytes/txn, FPI/txn, warm-up s, tps): {seen:?}"
    );
    eprintln!("(stack, WAL bytes/txn, FPI/txn, warm-up s, tps): {seen:?}");
    assert!(
        scene.db_leftovers().is_empty(),
        "{:#?}",
        scene.db_leftovers()
    );
}
