//! pgbench's automatic warm-up (`ramp_time=auto`): pgbench runs unmeasured while bakeoff reads
//! the server's counters once a second (commits, WAL bytes, full-page images); once throughput
//! and both costs per transaction are steady (the criteria of `bakeoff_core::steady`), or at
//! `ramp_max`, the warm-up pgbench is stopped and the measured one starts. pgbench's own
//! `--progress` is not needed: the server counts what every client committed.

use bakeoff_core::steady::{AutoRamp, SeriesSpec, Steadiness, SteadyRecord, WarmupKind, WINDOW_S};
use bakeoff_db::pgbench::{Pgbench, RunOptions};
use bakeoff_db::postgres::{PgConn, PgServer, PgStats};
use bakeoff_db::{Conn, Value};
use bakeoff_engine::RunError;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

fn warmup_error(message: String) -> RunError {
    RunError::Database {
        what: "pgbench warm-up".into(),
        message,
    }
}

/// Runs pgbench with `opts` until it is steady or `auto.max`; what the record says of it.
pub fn warm_up(
    server: &PgServer,
    opts: &RunOptions,
    auto: AutoRamp,
    interrupt: &AtomicBool,
) -> Result<SteadyRecord, RunError> {
    let mut conn = (server.database().connect_pg()).map_err(|e| warmup_error(e.message))?;
    let warm = RunOptions {
        runtime: auto.max + Duration::from_secs(1),
        no_vacuum: false,
        ..opts.clone()
    };
    let stop = AtomicBool::new(false);
    let pgbench = Pgbench::for_server(server);
    let start = Instant::now();
    let (record, ran) = std::thread::scope(|s| {
        let handle = s.spawn(|| pgbench.run_until(&warm, &stop));
        let mut judge = Judge::new(auto, start);
        let mut prev = server.stats_on(&mut conn).ok();
        let mut next = Duration::from_secs(1);
        while !handle.is_finished() {
            if interrupt.load(Ordering::Relaxed) {
                stop.store(true, Ordering::Relaxed);
            }
            if start.elapsed() >= next && !stop.load(Ordering::Relaxed) {
                next += Duration::from_secs(1);
                let now = server.stats_on(&mut conn).ok();
                if judge.second(prev.as_ref(), now.as_ref()) {
                    stop.store(true, Ordering::Relaxed);
                }
                prev = now;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        (judge.finish(), handle.join())
    });
    // The stopped pgbench's backends end as they see it gone: wait (briefly) so that the
    // measured run's "every client connected" counts its own.
    let deadline = Instant::now() + Duration::from_secs(5);
    while pgbench_backends(&mut conn) > 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    match ran {
        Ok(Err(e)) => Err(warmup_error(e.to_string())),
        Err(_) => Err(warmup_error("the pgbench thread panicked".into())),
        Ok(Ok(_)) => Ok(record),
    }
}

/// pgbench's connections to the server (pgbench names itself by default).
pub const CONNECTED: &str =
    "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'pgbench'";

/// How many pgbench connections the server has (0 if it cannot say).
pub fn pgbench_backends(conn: &mut PgConn) -> i64 {
    let rows = conn.query(CONNECTED, &[]).unwrap_or_default();
    match rows.first().and_then(|r| r.first()) {
        Some(Value::Int(n)) => *n,
        _ => 0,
    }
}

/// The per-second decision.
struct Judge {
    auto: AutoRamp,
    start: Instant,
    steadiness: Steadiness,
    at: Instant,
    decided: Option<SteadyRecord>,
}

impl Judge {
    fn new(auto: AutoRamp, start: Instant) -> Judge {
        let specs = vec![
            SeriesSpec::THROUGHPUT,
            SeriesSpec::cost("wal_bytes_per_txn"),
            SeriesSpec::cost("fpi_per_txn"),
        ];
        Judge {
            auto,
            start,
            steadiness: Steadiness::new(WINDOW_S, specs),
            at: start,
            decided: None,
        }
    }

    /// One second's readings; true once decided (steady or the cap).
    fn second(&mut self, prev: Option<&PgStats>, now: Option<&PgStats>) -> bool {
        let secs = self.at.elapsed().as_secs_f64();
        self.at = Instant::now();
        if let (Some(a), Some(b)) = (prev, now) {
            let d = b.since(a);
            let deltas = [d.xact_commit as f64, d.wal_bytes as f64, d.wal_fpi as f64];
            self.steadiness.push(secs, d.xact_commit, &deltas);
        }
        let steady = self.steadiness.steady();
        let capped = steady.is_none() && self.start.elapsed() >= self.auto.max;
        if steady.is_some() || capped {
            self.decided = Some(self.record(steady, capped));
        }
        self.decided.is_some()
    }

    fn record(
        &self,
        steady: Option<Vec<bakeoff_core::steady::Check>>,
        capped: bool,
    ) -> SteadyRecord {
        SteadyRecord {
            warmup: WarmupKind::Auto,
            warmup_s: self.start.elapsed().as_secs_f64(),
            capped,
            checks: steady.unwrap_or_else(|| self.steadiness.checks().unwrap_or_default()),
            stop: None,
        }
    }

    /// The decision, or (pgbench ended or was interrupted first) the state when it ended.
    fn finish(self) -> SteadyRecord {
        match self.decided {
            Some(r) => r,
            None => self.record(None, false),
        }
    }
}
