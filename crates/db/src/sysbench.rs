//! The real `sysbench` (Debian's 1.0) against a managed MariaDB server over its unix socket:
//! `prepare` fills its `sbtest1..N` tables, then a timed `run` whose per-second reports,
//! latency histogram and closing statistics are parsed ([`output`]) into bakeoff's operation
//! statistics, beside the TPS sysbench printed.
//!
//! sysbench is a child of bakeoff, so its CPU is the client's; it runs through
//! [`Exec::output_until`], so a Ctrl-C stops it with the run.

pub mod output;

pub use output::{parse_histogram, parse_interval, parse_intervals, parse_summary};
pub use output::{Interval, Summary};

use crate::mariadb::client::USER;
use crate::mariadb::{MyError, MyServer};
use bakeoff_core::dbplan::DbWork;
use bakeoff_core::dbrecord::SysbenchReport;
use bakeoff_core::op::OpKind;
use bakeoff_core::record::OpStats;
use bakeoff_engine::histogram::LatencyCounts;
use bakeoff_engine::stats::latency;
use bakeoff_stack::exec::{Cmd, Exec, PROBE_TIMEOUT};
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

/// Where Debian's package puts sysbench.
pub const PROGRAM: &str = "/usr/bin/sysbench";

/// The OLTP tests bakeoff runs (sysbench's bundled Lua scripts): the plan's `test=` choices.
pub use bakeoff_core::dbplan::SYSBENCH_TESTS as TESTS;

/// A sysbench for one server's benchmark database.
#[derive(Clone, Debug)]
pub struct Sysbench {
    program: String,
    connection: Vec<String>,
}

/// What to prepare and run.
#[derive(Clone, Debug, PartialEq)]
pub struct RunOptions {
    /// The test: one of [`TESTS`].
    pub test: String,
    /// Tables (`--tables`).
    pub tables: u32,
    /// Rows per table (`--table-size`).
    pub table_size: u64,
    /// Client threads, one connection each (`--threads`).
    pub threads: u32,
    /// Duration (`--time`, whole seconds).
    pub runtime: Duration,
    /// Target rate in transactions per second (`--rate`), open loop; `None` runs flat out.
    pub rate: Option<f64>,
}

impl Default for RunOptions {
    fn default() -> RunOptions {
        RunOptions {
            test: "oltp_read_write".into(),
            tables: 4,
            table_size: 100_000,
            threads: 4,
            runtime: Duration::from_secs(10),
            rate: None,
        }
    }
}

impl RunOptions {
    /// The options of a planned sysbench run (`DbWork::Sysbench`) of `runtime`; `None` for
    /// another workload.
    pub fn from_plan(work: &DbWork, runtime: Duration) -> Option<RunOptions> {
        match work {
            DbWork::Sysbench {
                test,
                tables,
                table_size,
                threads,
                rate_tps,
            } => Some(RunOptions {
                test: test.clone(),
                tables: *tables,
                table_size: *table_size,
                threads: *threads,
                runtime,
                rate: *rate_tps,
            }),
            _ => None,
        }
    }
}

/// What `sysbench prepare` did.
#[derive(Clone, Debug, PartialEq)]
pub struct PrepareReport {
    /// Wall time of the whole command.
    pub wall: Duration,
    /// Rows it inserted (`Inserting N records into 'sbtestK'`, summed).
    pub rows: u64,
}

/// What a timed run did.
#[derive(Clone)]
pub struct RunReport {
    /// `sysbench --version`.
    pub version: String,
    /// The closing statistics.
    pub summary: Summary,
    /// The per-second reports.
    pub intervals: Vec<Interval>,
    /// The latency histogram, each count at its bucket's value.
    pub histogram: LatencyCounts,
    /// The command line run.
    pub argv: Vec<String>,
}

impl std::fmt::Debug for RunReport {
    /// The histogram as its count: its buckets are many and mostly empty.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunReport")
            .field("version", &self.version)
            .field("summary", &self.summary)
            .field("intervals", &self.intervals)
            .field("histogram_count", &self.histogram.to_histogram().len())
            .field("argv", &self.argv)
            .finish()
    }
}

impl RunReport {
    /// What sysbench printed, for the run record.
    pub fn printed(&self) -> SysbenchReport {
        let s = &self.summary;
        SysbenchReport {
            tps: s.tps,
            transactions: s.transactions,
            qps: s.qps,
            reads: s.reads,
            writes: s.writes,
            other: s.other,
            ignored_errors: s.ignored_errors,
            reconnects: s.reconnects,
            lat_p99_ms: s.lat_pct_ms,
            per_second_tps: self.intervals.iter().map(|i| i.tps).collect(),
            version: self.version.clone(),
        }
    }

    /// The run as bakeoff's operation statistics of [`OpKind::Transaction`]: the transactions
    /// sysbench counted at the rate it printed, latencies from its histogram.
    pub fn op_stats(&self) -> OpStats {
        OpStats {
            kind: OpKind::Transaction,
            ops: self.summary.transactions,
            bytes: 0,
            iops: self.summary.tps,
            mb_s: 0.0,
            lat: latency(&self.histogram.to_histogram()),
            service: None,
        }
    }
}

impl Sysbench {
    /// Debian's sysbench, connecting to the server's benchmark database.
    pub fn for_server(server: &MyServer) -> Sysbench {
        Sysbench::new(Path::new(PROGRAM), &server.socket(), server.dbname())
    }

    /// `program` connecting as root to `dbname` of the server listening on `socket`: a server
    /// started some other way.
    pub fn new(program: &Path, socket: &Path, dbname: &str) -> Sysbench {
        Sysbench {
            program: program.to_string_lossy().into_owned(),
            connection: vec![
                "--db-driver=mysql".into(),
                format!("--mysql-socket={}", socket.display()),
                format!("--mysql-user={USER}"),
                format!("--mysql-db={dbname}"),
            ],
        }
    }

    /// `sysbench --version`.
    pub fn version(&self) -> Result<String, MyError> {
        let cmd = Cmd::new(&self.program, &["--version"]).timeout(PROBE_TIMEOUT);
        Ok(Exec::default().run_cmd(&cmd)?.trim().to_string())
    }

    /// `sysbench TEST prepare`: creates and fills the tables (in parallel, one per thread);
    /// `None` if `stop` ended it.
    pub fn prepare_until(
        &self,
        opts: &RunOptions,
        stop: &AtomicBool,
    ) -> Result<Option<PrepareReport>, MyError> {
        let threads = opts.threads.min(opts.tables).max(1);
        let args = self.args(opts, threads, &[], "prepare")?;
        let start = Instant::now();
        let Some(out) = self.run_args(&args, Duration::from_secs(3600), stop)? else {
            return Ok(None);
        };
        let rows = (out.lines())
            .filter_map(|l| l.trim().strip_prefix("Inserting "))
            .filter_map(|r| r.split_whitespace().next()?.parse::<u64>().ok())
            .sum();
        Ok(Some(PrepareReport {
            wall: start.elapsed(),
            rows,
        }))
    }

    /// A timed run; `None` if `stop` ended it (a Ctrl-C ends sysbench with the run, which
    /// records no result).
    pub fn run_until(
        &self,
        opts: &RunOptions,
        stop: &AtomicBool,
    ) -> Result<Option<RunReport>, MyError> {
        let mut extra = vec![
            format!("--time={}", opts.runtime.as_secs().max(1)),
            "--report-interval=1".into(),
            "--histogram=on".into(),
            "--percentile=99".into(),
        ];
        if let Some(rate) = opts.rate {
            extra.push(format!("--rate={rate}"));
        }
        let args = self.args(opts, opts.threads, &extra, "run")?;
        let limit = opts.runtime + Duration::from_secs(120);
        let Some(out) = self.run_args(&args, limit, stop)? else {
            return Ok(None);
        };
        let summary = parse_summary(&out).ok_or_else(|| {
            MyError::Environment(format!(
                "sysbench printed no statistics (transactions: ...):\n{out}"
            ))
        })?;
        Ok(Some(RunReport {
            version: self.version()?,
            summary,
            intervals: parse_intervals(&out),
            histogram: parse_histogram(&out),
            argv: std::iter::once(self.program.clone()).chain(args).collect(),
        }))
    }

    /// `TEST --tables --table-size --threads CONNECTION EXTRA COMMAND`, the test checked.
    fn args(
        &self,
        opts: &RunOptions,
        threads: u32,
        extra: &[String],
        command: &str,
    ) -> Result<Vec<String>, MyError> {
        if !TESTS.contains(&opts.test.as_str()) {
            return Err(MyError::Environment(format!(
                "sysbench test {:?}: bakeoff runs {}",
                opts.test,
                TESTS.join(", ")
            )));
        }
        let mut args = vec![
            opts.test.clone(),
            format!("--tables={}", opts.tables),
            format!("--table-size={}", opts.table_size),
            format!("--threads={threads}"),
        ];
        args.extend(self.connection.iter().cloned());
        args.extend(extra.iter().cloned());
        args.push(command.into());
        Ok(args)
    }

    /// Runs sysbench with `args`; its standard output; `None` if `stop` ended it.
    fn run_args(
        &self,
        args: &[String],
        limit: Duration,
        stop: &AtomicBool,
    ) -> Result<Option<String>, MyError> {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let cmd = Cmd::new(&self.program, &args).timeout(limit);
        let out = Exec::default().output_until(&cmd, stop)?;
        if out.stopped {
            return Ok(None);
        }
        if !out.success() {
            return Err(MyError::Environment(format!(
                "`{}` failed ({}): {}{}",
                cmd.argv().join(" "),
                out.describe(),
                out.stderr,
                out.stdout
                    .lines()
                    .rev()
                    .take(5)
                    .collect::<Vec<_>>()
                    .join(" / ")
            )));
        }
        Ok(Some(out.stdout))
    }
}
