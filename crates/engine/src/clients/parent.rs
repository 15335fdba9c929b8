//! The parent side: starts the clients, holds them at a barrier until every one is ready,
//! ticks the sampler on its own clock with the clients' latest counts, stops them together on
//! Ctrl-C or a failure, and adds their exact counts into one result.

use super::launcher;
use super::protocol::{parse_report, Job, Outcome, Report, GO, STOP};
use crate::clock::RunClock;
use crate::harness::{RunOutput, Tick, TickKind};
use crate::layout::Dataset;
use crate::results::{add_copies, copy_ops, RoleCounts};
use crate::shared::RunError;
use crate::stats::Totals;
use bakeoff_core::plan::Plan;
use bakeoff_core::record::ClientResult;
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::Duration;

/// How long clients may take to finish after the run's end (or a stop) before they are killed.
const GRACE: Duration = Duration::from_secs(30);

/// What a client's stdout said.
enum Event {
    Report(Report),
    Unreadable(String),
    Closed,
}

struct Client {
    pid: u32,
    dir: PathBuf,
    child: Child,
    stdin: Option<ChildStdin>,
    /// Its latest cumulative counts.
    totals: Totals,
    ready: bool,
    done: Option<Box<Outcome>>,
}

/// The running clients. Dropping it closes their stdins (they exit) and reaps them, killing
/// any that is still running after [`GRACE`].
struct Fleet {
    clients: Vec<Client>,
    events: mpsc::Receiver<(usize, Event)>,
}

impl Fleet {
    fn spawn(plan: &Plan, dirs: &[PathBuf]) -> Result<Fleet, RunError> {
        let l = launcher().map_err(|e| client_error(0, 0, format!("finding bakeoff: {e}")))?;
        let (tx, events) = mpsc::channel();
        let mut fleet = Fleet {
            clients: Vec::new(),
            events,
        };
        for (i, dir) in dirs.iter().enumerate() {
            let mut child = Command::new(&l.program)
                .args(&l.args)
                .envs(l.env.iter().map(|(k, v)| (k, v)))
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::inherit())
                .spawn()
                .map_err(|e| {
                    let message = format!("starting {}: {e}", l.program.display());
                    client_error(i, 0, message)
                })?;
            let pid = child.id();
            if let Some(out) = child.stdout.take() {
                let tx = tx.clone();
                std::thread::spawn(move || read_reports(i, out, &tx));
            }
            let stdin = child.stdin.take();
            fleet.clients.push(Client {
                pid,
                dir: dir.clone(),
                child,
                stdin,
                totals: Totals::default(),
                ready: false,
                done: None,
            });
            let job = Job {
                index: i as u32,
                plan: plan.client_plan(i as u32),
                dir: dir.clone(),
            };
            let line = serde_json::to_string(&job).expect("a job serialises");
            fleet.say_to(i, &line);
        }
        Ok(fleet)
    }

    /// Writes `line` to client `i`; a client that is gone shows as a closed stdout.
    fn say_to(&mut self, i: usize, line: &str) {
        if let Some(stdin) = self.clients[i].stdin.as_mut() {
            let _ = writeln!(stdin, "{line}").and_then(|()| stdin.flush());
        }
    }

    fn say(&mut self, line: &str) {
        (0..self.clients.len()).for_each(|i| self.say_to(i, line));
    }

    /// How client `i` ended, once its stdout closed (it exited, normally).
    fn status(&mut self, i: usize) -> String {
        let child = &mut self.clients[i].child;
        for _ in 0..100 {
            if let Ok(Some(status)) = child.try_wait() {
                return status.to_string();
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        "its output closed while it runs".into()
    }

    fn totals(&self) -> Totals {
        let mut t = Totals::default();
        self.clients.iter().for_each(|c| t.add(&c.totals));
        t
    }
}

impl Drop for Fleet {
    fn drop(&mut self) {
        self.clients.iter_mut().for_each(|c| drop(c.stdin.take()));
        let deadline = std::time::Instant::now() + GRACE;
        for c in &mut self.clients {
            while matches!(c.child.try_wait(), Ok(None)) && std::time::Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(10));
            }
            if matches!(c.child.try_wait(), Ok(None)) {
                let _ = c.child.kill();
            }
            let _ = c.child.wait();
        }
    }
}

fn client_error(i: usize, pid: u32, message: String) -> RunError {
    RunError::Client {
        index: i as u32,
        pid,
        message,
    }
}

/// Passes client `i`'s reports to the parent; any other line goes to stderr, named.
fn read_reports(i: usize, out: std::process::ChildStdout, tx: &mpsc::Sender<(usize, Event)>) {
    for line in BufReader::new(out).lines() {
        let Ok(line) = line else { break };
        let event = match parse_report(&line) {
            Some(Ok(r)) => Event::Report(r),
            Some(Err(e)) => Event::Unreadable(e),
            None => {
                eprintln!("bakeoff: client {i}: {line}");
                continue;
            }
        };
        if tx.send((i, event)).is_err() {
            return;
        }
    }
    let _ = tx.send((i, Event::Closed));
}

/// Runs `plan` in `plan.clients` client processes on the copies in `dataset.client_dirs`.
pub fn run_clients(
    plan: &Plan,
    dataset: &Dataset,
    interrupt: &AtomicBool,
    on_tick: &mut dyn FnMut(&Tick),
) -> Result<RunOutput, RunError> {
    if dataset.client_dirs.len() != plan.clients as usize {
        return Err(client_error(
            0,
            0,
            format!(
                "the dataset holds copies for {} clients, the plan has {}",
                dataset.client_dirs.len(),
                plan.clients
            ),
        ));
    }
    let plan = &plan.with_fixed_ramp();
    let clock = RunClock::start();
    on_tick(&Tick {
        elapsed: clock.elapsed(),
        kind: TickKind::Start,
        totals: Totals::default(),
        latency: Default::default(),
    });
    let mut fleet = Fleet::spawn(plan, &dataset.client_dirs)?;
    if !barrier(&mut fleet, interrupt)? {
        fleet.say(STOP);
        return Ok(merge(plan, &fleet, None, true));
    }
    fleet.say(GO);
    let (error, interrupted) = drive(plan, &mut fleet, &clock, interrupt, on_tick);
    on_tick(&Tick {
        elapsed: clock.elapsed(),
        kind: TickKind::End,
        totals: fleet.totals(),
        latency: Default::default(),
    });
    Ok(merge(plan, &fleet, error, interrupted))
}

/// Waits until every client is set up: true when all are ready, false on an interrupt.
fn barrier(fleet: &mut Fleet, interrupt: &AtomicBool) -> Result<bool, RunError> {
    while !fleet.clients.iter().all(|c| c.ready) {
        if interrupt.load(Ordering::Relaxed) {
            return Ok(false);
        }
        let Ok((i, event)) = fleet.events.recv_timeout(Duration::from_millis(10)) else {
            continue;
        };
        let pid = fleet.clients[i].pid;
        match event {
            Event::Report(Report::Ready) => fleet.clients[i].ready = true,
            Event::Report(Report::Failed { error }) => return Err(client_error(i, pid, error)),
            Event::Report(_) => {}
            Event::Unreadable(e) => return Err(client_error(i, pid, e)),
            Event::Closed => {
                let how = fleet.status(i);
                return Err(client_error(
                    i,
                    pid,
                    format!("exited before it was ready ({how})"),
                ));
            }
        }
    }
    Ok(true)
}

/// From the go to every client's results: ticks the sampler, stops every client on an
/// interrupt or the first failure. Returns the failure and whether the run was interrupted.
fn drive(
    plan: &Plan,
    fleet: &mut Fleet,
    clock: &RunClock,
    interrupt: &AtomicBool,
    on_tick: &mut dyn FnMut(&Tick),
) -> (Option<RunError>, bool) {
    let go = clock.elapsed();
    let mut deadline = go + plan.ramp_time + plan.runtime + GRACE;
    let (mut window, mut next_second) = (false, Duration::from_secs(1));
    let (mut error, mut interrupted, mut stopped) = (None, false, false);
    while fleet.clients.iter().any(|c| c.done.is_none()) && error.is_none() {
        if interrupt.load(Ordering::Relaxed) && !stopped {
            (interrupted, stopped) = (true, true);
            fleet.say(STOP);
            deadline = clock.elapsed() + GRACE;
        }
        if let Ok((i, event)) = fleet.events.recv_timeout(Duration::from_millis(10)) {
            error = handle(fleet, i, event);
        }
        let now = clock.elapsed();
        let kind = if !window && now >= go + plan.ramp_time {
            window = true;
            TickKind::MeasureStart
        } else if now >= next_second {
            next_second += Duration::from_secs(1);
            TickKind::Second
        } else if now > deadline {
            let late = fleet
                .clients
                .iter()
                .position(|c| c.done.is_none())
                .unwrap_or(0);
            let message = format!("no results {} s after the end: killed", GRACE.as_secs());
            error = Some(client_error(late, fleet.clients[late].pid, message));
            continue;
        } else {
            continue;
        };
        on_tick(&Tick {
            elapsed: now,
            kind,
            totals: fleet.totals(),
            latency: Default::default(),
        });
    }
    if error.is_some() {
        fleet.say(STOP);
    }
    (error, interrupted)
}

/// Takes one event of client `i`; returns the failure it reports, if any.
fn handle(fleet: &mut Fleet, i: usize, event: Event) -> Option<RunError> {
    let pid = fleet.clients[i].pid;
    match event {
        Event::Report(Report::Tick { totals, .. }) => fleet.clients[i].totals = *totals,
        Event::Report(Report::Done(outcome)) => {
            let failed = outcome.error.clone();
            fleet.clients[i].done = Some(outcome);
            return failed.map(|e| client_error(i, pid, e));
        }
        Event::Report(Report::Failed { error }) => return Some(client_error(i, pid, error)),
        Event::Report(Report::Ready) => {}
        Event::Unreadable(e) => return Some(client_error(i, pid, e)),
        Event::Closed if fleet.clients[i].done.is_none() => {
            let how = fleet.status(i);
            let message = format!("exited before reporting its results ({how})");
            return Some(client_error(i, pid, message));
        }
        Event::Closed => {}
    }
    None
}

/// Adds the clients' exact counts into one result; each client's own counts and CPU beside.
fn merge(plan: &Plan, fleet: &Fleet, error: Option<RunError>, interrupted: bool) -> RunOutput {
    let done: Vec<(usize, &Client, &Outcome)> = (fleet.clients.iter().enumerate())
        .filter_map(|(i, c)| c.done.as_deref().map(|o| (i, c, o)))
        .collect();
    let windows: Vec<u64> = done.iter().map(|(_, _, o)| o.measured_ns).collect();
    let mean_ns = windows.iter().sum::<u64>() / (windows.len().max(1) as u64);
    let measured = Duration::from_nanos(mean_ns);
    let each: Vec<&[RoleCounts]> = done.iter().map(|(_, _, o)| o.counts.as_slice()).collect();
    let (results, ops, counts) = add_copies(plan, plan.clients, &each, measured);
    let clients = done
        .iter()
        .map(|&(i, c, o)| client_result(i, c, o))
        .collect();
    // A client stopped by a signal of its own (Ctrl-C reaches the whole process group).
    let stopped_early = done.iter().any(|(_, _, o)| o.interrupted);
    RunOutput {
        roles: results,
        ops,
        measured,
        interrupted: interrupted || stopped_early,
        error,
        counts,
        clients,
        steady: Some(bakeoff_core::steady::SteadyRecord {
            warmup: bakeoff_core::steady::WarmupKind::Fixed,
            warmup_s: plan.ramp_time.as_secs_f64(),
            capped: false,
            checks: Vec::new(),
            stop: None,
        }),
        replay: None,
        verify: None,
    }
}

fn client_result(i: usize, c: &Client, o: &Outcome) -> ClientResult {
    ClientResult {
        index: i as u32,
        pid: c.pid,
        dir: c.dir.display().to_string(),
        measured_ns: o.measured_ns,
        ops: copy_ops(&o.counts),
        cpu_user_us: o.cpu_us.0,
        cpu_system_us: o.cpu_us.1,
        max_rss_bytes: o.max_rss_bytes,
    }
}
