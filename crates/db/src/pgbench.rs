//! The real `pgbench` (from the server's own bindir) against a managed server over its unix
//! socket: `-i -s SCALE` to initialise, then a timed run whose per-transaction log (`-l`) is
//! parsed into bakeoff's latency counts and per-second counts, beside the TPS pgbench printed.
//!
//! The log's format and its parsing are in [`log`].

pub mod log;

pub use log::{parse_log_line, LogLine, LogTally};

use crate::postgres::client::ROLE;
use crate::postgres::settings::PORT;
use crate::postgres::{PgError, PgServer};
use bakeoff_core::dbplan::DbWork;
use bakeoff_core::dbrecord::PgbenchReport;
use bakeoff_core::op::OpKind;
use bakeoff_core::record::OpStats;
use bakeoff_engine::stats::latency;
use bakeoff_stack::exec::{Cmd, Exec, PROBE_TIMEOUT};
use log::tally_logs;
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

/// A pgbench for one server's benchmark database.
#[derive(Clone, Debug)]
pub struct Pgbench {
    program: String,
    connection: Vec<String>,
}

/// A timed run's parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct RunOptions {
    /// Client connections (`-c`).
    pub clients: u32,
    /// Threads (`-j`).
    pub jobs: u32,
    /// Duration (`-T`, whole seconds).
    pub runtime: Duration,
    /// Target rate in transactions per second (`-R`), open loop; `None` runs flat out.
    pub rate: Option<f64>,
    /// Under a rate, transactions that would start later than this are skipped
    /// (`--latency-limit`).
    pub latency_limit: Option<Duration>,
    /// The built-in script (`-b`): `tpcb-like`, `simple-update`, `select-only`.
    pub builtin: String,
    /// Skip pgbench's own start-up vacuum (`--no-vacuum`): the caller did it before its
    /// measured window (see [`VACUUM`]).
    pub no_vacuum: bool,
}

/// What pgbench does before its first transaction unless `--no-vacuum`: each statement on its
/// own (`VACUUM` cannot run in a transaction block).
pub const VACUUM: [&str; 3] = [
    "VACUUM pgbench_branches",
    "VACUUM pgbench_tellers",
    "TRUNCATE pgbench_history",
];

impl Default for RunOptions {
    fn default() -> RunOptions {
        RunOptions {
            clients: 1,
            jobs: 1,
            runtime: Duration::from_secs(10),
            rate: None,
            latency_limit: None,
            builtin: "tpcb-like".into(),
            no_vacuum: false,
        }
    }
}

impl RunOptions {
    /// The options of a planned pgbench run (`DbWork::Pgbench`) of `runtime`; `None` for
    /// another workload.
    pub fn from_plan(work: &DbWork, runtime: Duration) -> Option<RunOptions> {
        match work {
            DbWork::Pgbench {
                clients,
                jobs,
                rate_tps,
                latency_limit,
                ..
            } => Some(RunOptions {
                clients: *clients,
                jobs: *jobs,
                runtime,
                rate: *rate_tps,
                latency_limit: *latency_limit,
                ..RunOptions::default()
            }),
            _ => None,
        }
    }
}

/// What `pgbench -i` did.
#[derive(Clone, Debug, PartialEq)]
pub struct InitReport {
    /// Wall time of the whole command.
    pub wall: Duration,
    /// The time pgbench printed (`done in 0.28 s`), if it did.
    pub printed_s: Option<f64>,
}

/// What a timed run did.
#[derive(Clone, Debug)]
pub struct RunReport {
    /// `pgbench --version`.
    pub version: String,
    /// The TPS pgbench printed (`tps = ... (without initial connection time)`).
    pub tps_printed: f64,
    /// Transactions pgbench says it processed.
    pub processed: u64,
    /// Transactions skipped under `--latency-limit`.
    pub skipped: u64,
    /// Transactions that failed (serialization, deadlock).
    pub failed: u64,
    /// The transactions in the log and their latencies.
    pub log: LogTally,
    /// The command line run.
    pub argv: Vec<String>,
}

impl RunReport {
    /// What pgbench printed, for the run record.
    pub fn printed(&self) -> PgbenchReport {
        PgbenchReport {
            tps: Some(self.tps_printed),
            skipped: self.skipped,
            failed: self.failed,
            version: self.version.clone(),
        }
    }

    /// The run as bakeoff's operation statistics of [`OpKind::Transaction`]: transactions
    /// completed, their rate over the log's window, their latencies (from the scheduled start
    /// under a rate, with the service time beside them).
    pub fn op_stats(&self) -> OpStats {
        let service = self.log.service.as_ref();
        OpStats {
            kind: OpKind::Transaction,
            ops: self.log.completed,
            bytes: 0,
            iops: self.log.rate(),
            mb_s: 0.0,
            lat: latency(&self.log.latency.to_histogram()),
            service: service.and_then(|s| latency(&s.to_histogram())),
        }
    }
}

impl Pgbench {
    /// `pgbench` of the server's binaries, connecting to its benchmark database.
    pub fn for_server(server: &PgServer) -> Pgbench {
        Pgbench::new(
            Path::new(&server.binaries().tool("pgbench")),
            server.socket_dir(),
            server.dbname(),
        )
    }

    /// `program` connecting as `postgres` to `dbname` of the server listening in `socket_dir`
    /// on bakeoff's port: a server started some other way.
    pub fn new(program: &Path, socket_dir: &Path, dbname: &str) -> Pgbench {
        let socket = socket_dir.to_string_lossy();
        let port = PORT.to_string();
        Pgbench {
            program: program.to_string_lossy().into_owned(),
            connection: ["-h", &socket, "-p", &port, "-U", ROLE, dbname]
                .map(str::to_string)
                .to_vec(),
        }
    }

    /// `pgbench --version`.
    pub fn version(&self) -> Result<String, PgError> {
        let cmd = Cmd::new(&self.program, &["--version"]).timeout(PROBE_TIMEOUT);
        Ok(Exec::default().run_cmd(&cmd)?.trim().to_string())
    }

    /// `pgbench -i -s scale`: creates and fills its tables (scale 1 is 100,000 accounts).
    pub fn init(&self, scale: u32) -> Result<InitReport, PgError> {
        let report = self.init_until(scale, &AtomicBool::new(false))?;
        report.ok_or_else(|| PgError::Environment("pgbench -i was stopped".into()))
    }

    /// [`Pgbench::init`], stopped early (and `None`) once `stop` is raised.
    pub fn init_until(&self, scale: u32, stop: &AtomicBool) -> Result<Option<InitReport>, PgError> {
        let mut args = vec!["-i".to_string(), "-s".into(), scale.to_string()];
        args.extend(self.connection.iter().cloned());
        let start = Instant::now();
        let Some(out) = self.run_args(&args, Duration::from_secs(3600), stop)? else {
            return Ok(None);
        };
        Ok(Some(InitReport {
            wall: start.elapsed(),
            printed_s: parse_init_time(&out),
        }))
    }

    /// A timed run with its per-transaction log in a temporary directory.
    pub fn run(&self, opts: &RunOptions) -> Result<RunReport, PgError> {
        let never = AtomicBool::new(false);
        let report = self.run_until(opts, &never)?;
        report.ok_or_else(|| PgError::Environment("pgbench was stopped".into()))
    }

    /// [`Pgbench::run`], stopped early (and `None`) once `stop` is raised: a Ctrl-C ends
    /// pgbench with the run, which records no result.
    pub fn run_until(
        &self,
        opts: &RunOptions,
        stop: &AtomicBool,
    ) -> Result<Option<RunReport>, PgError> {
        let logs = tempfile::tempdir().map_err(PgError::io("creating", "a log directory"))?;
        let prefix = logs.path().join("pgbench_log");
        let mut args: Vec<String> = vec![
            format!("--builtin={}", opts.builtin),
            format!("--client={}", opts.clients),
            format!("--jobs={}", opts.jobs),
            format!("--time={}", opts.runtime.as_secs().max(1)),
            "--log".into(),
            format!("--log-prefix={}", prefix.display()),
        ];
        if let Some(rate) = opts.rate {
            args.push(format!("--rate={rate}"));
        }
        if opts.no_vacuum {
            args.push("--no-vacuum".into());
        }
        if let Some(limit) = opts.latency_limit {
            args.push(format!("--latency-limit={}", limit.as_secs_f64() * 1000.0));
        }
        args.extend(self.connection.iter().cloned());
        let Some(out) = self.run_args(&args, opts.runtime + Duration::from_secs(120), stop)? else {
            return Ok(None);
        };
        let summary = parse_summary(&out).ok_or_else(|| {
            PgError::Environment(format!("pgbench printed no summary (tps = ...):\n{out}"))
        })?;
        Ok(Some(RunReport {
            version: self.version()?,
            tps_printed: summary.tps,
            processed: summary.processed,
            skipped: summary.skipped,
            failed: summary.failed,
            log: tally_logs(logs.path(), opts.rate.is_some())?,
            argv: std::iter::once(self.program.clone()).chain(args).collect(),
        }))
    }

    /// Runs pgbench with `args`; its standard output and error together (`-i` reports on
    /// standard error, a run on standard output); `None` if `stop` ended it.
    fn run_args(
        &self,
        args: &[String],
        limit: Duration,
        stop: &AtomicBool,
    ) -> Result<Option<String>, PgError> {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let cmd = Cmd::new(&self.program, &args).timeout(limit);
        let out = Exec::default().output_until(&cmd, stop)?;
        if out.stopped {
            return Ok(None);
        }
        if !out.success() {
            return Err(PgError::Environment(format!(
                "`{}` failed ({}): {}",
                cmd.argv().join(" "),
                out.describe(),
                out.stderr
            )));
        }
        Ok(Some(format!("{}\n{}", out.stdout, out.stderr)))
    }
}

/// The figures pgbench prints at the end of a run.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Summary {
    /// `tps = ...`.
    pub tps: f64,
    /// `number of transactions actually processed: N` (or `N/M` with `-t`).
    pub processed: u64,
    /// `number of failed transactions: N (...)`.
    pub failed: u64,
    /// `number of transactions skipped: N (...)`.
    pub skipped: u64,
}

/// The summary pgbench printed; `None` without a `tps = ` line.
pub fn parse_summary(out: &str) -> Option<Summary> {
    let mut s = Summary::default();
    let mut tps = None;
    let count = |rest: &str| -> u64 {
        let first = rest.split_whitespace().next().unwrap_or("");
        first.split('/').next().unwrap_or("").parse().unwrap_or(0)
    };
    for line in out.lines().map(str::trim) {
        if let Some(rest) = line.strip_prefix("tps = ") {
            tps = rest.split_whitespace().next().and_then(|t| t.parse().ok());
        } else if let Some(rest) = line.strip_prefix("number of transactions actually processed:") {
            s.processed = count(rest);
        } else if let Some(rest) = line.strip_prefix("number of failed transactions:") {
            s.failed = count(rest);
        } else if let Some(rest) = line.strip_prefix("number of transactions skipped:") {
            s.skipped = count(rest);
        }
    }
    s.tps = tps?;
    Some(s)
}

/// `done in 0.28 s (drop tables 0.00 s, ...)` of `pgbench -i`.
fn parse_init_time(out: &str) -> Option<f64> {
    let rest = out
        .lines()
        .find_map(|l| l.trim().strip_prefix("done in "))?;
    rest.split_whitespace().next()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_printed_summary_and_init_time_are_read() {
        // Captured from pgbench 15.18 with -R and --latency-limit.
        let out = "\
pgbench (15.18 (Debian 15.18-0+deb12u1))
transaction type: <builtin: TPC-B (sort of)>
scaling factor: 2
number of transactions actually processed: 3677
number of failed transactions: 0 (0.000%)
number of transactions skipped: 5174 (58.457%)
number of transactions above the 1.0 ms latency limit: 3290/3677 (89.475%)
latency average = 1.971 ms
initial connection time = 6.121 ms
tps = 1215.942772 (without initial connection time)
";
        let s = parse_summary(out).unwrap();
        assert_eq!(s.processed, 3677);
        assert_eq!(s.skipped, 5174);
        assert_eq!(s.failed, 0);
        assert!((s.tps - 1215.942772).abs() < 1e-9);
        assert_eq!(parse_summary("number of clients: 2").map(|s| s.tps), None);
        let with_t =
            parse_summary("number of transactions actually processed: 1000/1000\ntps = 5.0");
        assert_eq!(with_t.unwrap().processed, 1000);
        let work = DbWork::Pgbench {
            scale: 10,
            clients: 8,
            jobs: 2,
            rate_tps: Some(500.0),
            latency_limit: Some(Duration::from_millis(5)),
        };
        let opts = RunOptions::from_plan(&work, Duration::from_secs(30)).unwrap();
        assert_eq!((opts.clients, opts.jobs, opts.rate), (8, 2, Some(500.0)));
        assert_eq!(opts.latency_limit, Some(Duration::from_millis(5)));
        assert_eq!(opts.runtime, Duration::from_secs(30));
        let init = "creating primary keys...\ndone in 0.28 s (drop tables 0.00 s, vacuum 0.05 s).";
        assert_eq!(parse_init_time(init), Some(0.28));
    }
}
