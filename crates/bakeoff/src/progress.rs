//! Progress where the user can see it: on a terminal a bar redrawn in place (indicatif, at most
//! once a second, so a value is drawn once); otherwise (CI, `nohup`, `| tee`) a status line
//! every `--status-interval` (fio's status lines): elapsed and left, operations and MB/s, p99
//! so far, and an iostat-like figure of the stack's devices; nothing with `--quiet`.

use bakeoff_core::plan::OpKind;
use bakeoff_core::record::{DeviceStats, Sample};
use bakeoff_core::units::{format_bytes, format_nanos, format_rate};
use bakeoff_engine::{Tick, TickKind, Totals};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Duration;

/// The status lines' period in ms (`--status-interval`).
static STATUS_INTERVAL_MS: AtomicU64 = AtomicU64::new(10_000);

/// Sets how often a run prints a status line when stderr is not a terminal.
pub fn set_status_interval(every: Duration) {
    STATUS_INTERVAL_MS.store(every.as_millis().max(1) as u64, Ordering::Relaxed);
}

fn status_interval() -> Duration {
    Duration::from_millis(STATUS_INTERVAL_MS.load(Ordering::Relaxed))
}

/// What the status lines call the run in flight when its workload alone does not say which
/// it is (a study's cell and repetition).
static STATUS_NAME: Mutex<Option<String>> = Mutex::new(None);

/// Names the runs that follow in their status lines (`None`: by their workload).
pub fn name_status_lines(name: Option<String>) {
    *STATUS_NAME.lock().unwrap_or_else(|e| e.into_inner()) = name;
}

fn status_name() -> Option<String> {
    STATUS_NAME
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .clone()
}

/// A progress bar that is hidden unless stderr is a terminal and output is wanted.
pub fn bar(len: u64, template: &str, quiet: bool) -> ProgressBar {
    let bar = ProgressBar::new(len);
    if quiet || !std::io::stderr().is_terminal() {
        bar.set_draw_target(ProgressDrawTarget::hidden());
    }
    bar.set_style(
        ProgressStyle::with_template(template).unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    bar
}

/// Status lines of work counted in bytes (laying out a dataset) when stderr is not a terminal
/// (the terminal has the bar): one every `--status-interval`.
pub struct ByteLines {
    what: &'static str,
    total: u64,
    on: bool,
    started: std::time::Instant,
    next: std::cell::Cell<Duration>,
}

impl ByteLines {
    /// Lines about `what` (e.g. "laying out") of `total` bytes; none on a terminal or if `quiet`.
    pub fn new(what: &'static str, total: u64, quiet: bool) -> ByteLines {
        ByteLines {
            what,
            total,
            on: !quiet && !std::io::stderr().is_terminal(),
            started: std::time::Instant::now(),
            next: std::cell::Cell::new(status_interval()),
        }
    }

    /// `done` bytes are done: prints a line if one is due.
    pub fn update(&self, done: u64) {
        let elapsed = self.started.elapsed();
        if !self.on || elapsed < self.next.get() {
            return;
        }
        let pct = 100.0 * done as f64 / self.total.max(1) as f64;
        eprintln!(
            "bakeoff: {} {} of {} ({pct:.0}%), {} so far",
            self.what,
            format_bytes(done),
            format_bytes(self.total),
            clock(elapsed)
        );
        let mut next = self.next.get();
        while next <= elapsed {
            next += status_interval();
        }
        self.next.set(next);
    }
}

enum Mode {
    Bar(ProgressBar),
    Lines,
    Silent,
}

/// The live progress of one measured window.
pub struct RunProgress {
    mode: Mode,
    label: String,
    planned: Duration,
    every: Duration,
    next_line: Duration,
    /// Elapsed time and totals at the previous status line.
    last: (Duration, Totals),
}

/// What one status line reports.
pub struct Status<'a> {
    /// The workload.
    pub label: &'a str,
    /// Since the run started.
    pub elapsed: Duration,
    /// The run's planned length (warm-up and measured time).
    pub planned: Duration,
    /// Operations and bytes since the previous line.
    pub delta: Totals,
    /// Seconds since the previous line.
    pub secs: f64,
    /// The tick, for the window's latency so far.
    pub tick: &'a Tick,
    /// The stack's devices since the previous line.
    pub devices: &'a [DeviceStats],
    /// Whole-machine busy CPU in the last second.
    pub cpu_pct: Option<f64>,
}

impl RunProgress {
    /// Progress of `label`, planned to take `planned`: a bar on a terminal, status lines
    /// otherwise, nothing when `quiet`.
    pub fn new(label: &str, planned: Duration, quiet: bool) -> RunProgress {
        let mode = if quiet {
            Mode::Silent
        } else if std::io::stderr().is_terminal() {
            // The whole line is the message, set once a second: one draw per second, cut to
            // the terminal's width (a wrapped line cannot be redrawn in place).
            Mode::Bar(bar(1, "{wide_msg}", false))
        } else {
            Mode::Lines
        };
        let every = status_interval();
        RunProgress {
            mode,
            label: status_name().unwrap_or_else(|| label.to_string()),
            planned,
            every,
            next_line: every,
            last: (Duration::ZERO, Totals::default()),
        }
    }

    /// Whether status lines are due at `tick` (the caller then gathers the devices).
    pub fn line_due(&self, tick: &Tick) -> bool {
        matches!(self.mode, Mode::Lines)
            && tick.kind == TickKind::Second
            && tick.elapsed >= self.next_line
    }

    /// Updates the bar with the last second, or prints a status line when one is due.
    pub fn on_tick(&mut self, tick: &Tick, sample: Option<&Sample>, devices: &[DeviceStats]) {
        if tick.kind != TickKind::Second {
            return;
        }
        match &self.mode {
            Mode::Bar(b) => {
                b.set_message(bar_line(&self.label, tick.elapsed, self.planned, sample))
            }
            Mode::Lines if self.line_due(tick) => {
                let (at, totals) = self.last;
                let status = Status {
                    label: &self.label,
                    elapsed: tick.elapsed,
                    planned: self.planned,
                    delta: tick.totals.since(&totals),
                    secs: tick.elapsed.saturating_sub(at).as_secs_f64().max(1e-3),
                    tick,
                    devices,
                    cpu_pct: sample.and_then(|s| s.cpu_busy_pct),
                };
                eprintln!("{}", status_line(&status));
                self.last = (tick.elapsed, tick.totals);
                while self.next_line <= tick.elapsed {
                    self.next_line += self.every;
                }
            }
            Mode::Lines | Mode::Silent => {}
        }
    }

    /// Clears the bar.
    pub fn finish(self) {
        if let Mode::Bar(b) = self.mode {
            b.finish_and_clear();
        }
    }
}

/// "randrw 0:12/1:00 [████░░░░] read 12345/s write 678/s dev r/s 80 w/s 12 cpu 55%".
fn bar_line(label: &str, elapsed: Duration, planned: Duration, s: Option<&Sample>) -> String {
    const WIDTH: usize = 24;
    let fraction = elapsed.as_secs_f64() / planned.as_secs_f64().max(1e-3);
    let done = ((fraction.min(1.0) * WIDTH as f64) as usize).min(WIDTH);
    let rates = s.map_or_else(String::new, |s| {
        let cpu = s
            .cpu_busy_pct
            .map_or_else(String::new, |c| format!(" cpu {c:.0}%"));
        let dev = match (s.device_read_iops, s.device_write_iops) {
            (Some(r), Some(w)) => format!(" dev r/s {} w/s {}", format_rate(r), format_rate(w)),
            _ => String::new(),
        };
        format!(
            " read {}/s write {}/s{dev}{cpu}",
            format_rate(s.read_iops),
            format_rate(s.write_iops)
        )
    });
    format!(
        "{label} {}/{} [{}{}]{rates}",
        clock(elapsed),
        clock(planned),
        "█".repeat(done),
        "░".repeat(WIDTH - done)
    )
}

fn clock(d: Duration) -> String {
    let s = d.as_secs();
    format!("{}:{:02}", s / 60, s % 60)
}

/// One kind group's rate, MB/s and p99 so far, if it ran.
fn kind_part(name: &str, kinds: &[OpKind], s: &Status) -> Option<String> {
    let ops: u64 = kinds.iter().map(|k| s.delta.ops[k.index()]).sum();
    let bytes: u64 = kinds.iter().map(|k| s.delta.bytes[k.index()]).sum();
    let p99 = (kinds.iter())
        .filter_map(|k| s.tick.latency.window[k.index()])
        .map(|l| l.p99_ns)
        .max();
    if ops == 0 && p99.is_none() {
        return None;
    }
    let p99 = p99.map_or_else(String::new, |p| format!(" p99 {}", format_nanos(p as f64)));
    Some(format!(
        "{name} {}/s {} MB/s{p99}",
        format_rate(ops as f64 / s.secs),
        format_rate(bytes as f64 / s.secs / 1e6)
    ))
}

/// iostat's figures of the devices over `secs`, added up (await weighted by operations, util
/// the busiest device's).
fn device_part(devices: &[DeviceStats], secs: f64) -> Option<String> {
    if devices.is_empty() {
        return None;
    }
    let sum = |f: &dyn Fn(&DeviceStats) -> f64| devices.iter().map(f).sum::<f64>();
    let mb_s =
        |bytes: &dyn Fn(&DeviceStats) -> u64| format_rate(sum(&|d| bytes(d) as f64) / secs / 1e6);
    let wait = |ops: &dyn Fn(&DeviceStats) -> u64, us: &dyn Fn(&DeviceStats) -> Option<f64>| {
        let n = sum(&|d| ops(d) as f64);
        let total = sum(&|d| us(d).unwrap_or(0.0) * ops(d) as f64);
        if n > 0.0 {
            format_nanos(total / n * 1e3)
        } else {
            "-".into()
        }
    };
    let util = devices.iter().map(|d| d.util_pct).fold(0.0, f64::max);
    Some(format!(
        "dev r/s {} w/s {} rMB/s {} wMB/s {} r_await {} w_await {} util {util:.0}%",
        format_rate(sum(&|d| d.read_ops as f64) / secs),
        format_rate(sum(&|d| d.write_ops as f64) / secs),
        mb_s(&|d| d.read_bytes),
        mb_s(&|d| d.write_bytes),
        wait(&|d| d.read_ops, &|d| d.avg_read_wait_us),
        wait(&|d| d.write_ops, &|d| d.avg_write_wait_us),
    ))
}

/// "bakeoff: randread 0:20/1:00, 40 s left: read 12345/s 50.6 MB/s p99 1.24 ms; dev r/s ...;
/// cpu 55%".
pub fn status_line(s: &Status) -> String {
    let left = s.planned.saturating_sub(s.elapsed).as_secs_f64().round();
    let mut parts: Vec<String> = [
        kind_part("read", &[OpKind::Read], s),
        kind_part("write", &[OpKind::Write, OpKind::LogWrite], s),
    ]
    .into_iter()
    .flatten()
    .collect();
    let others: u64 = (OpKind::ALL.iter())
        .filter(|k| !matches!(k, OpKind::Read | OpKind::Write | OpKind::LogWrite))
        .map(|k| s.delta.ops[k.index()])
        .sum();
    if others > 0 {
        parts.push(format!(
            "other ops {}/s",
            format_rate(others as f64 / s.secs)
        ));
    }
    parts.extend(device_part(s.devices, s.secs));
    parts.extend(s.cpu_pct.map(|c| format!("cpu {c:.0}%")));
    let what = if parts.is_empty() {
        String::new()
    } else {
        format!(": {}", parts.join("; "))
    };
    if s.planned.is_zero() {
        // Commands (exec, a recipe) run as long as they take.
        return format!("bakeoff: {} {}{what}", s.label, clock(s.elapsed));
    }
    format!(
        "bakeoff: {} {}/{}, {left} s left{what}",
        s.label,
        clock(s.elapsed),
        clock(s.planned)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use bakeoff_engine::{KindLatency, TickLatency};

    #[test]
    fn a_status_line_has_time_left_rates_p99_so_far_and_the_devices() {
        let mut latency = TickLatency::default();
        latency.window[OpKind::Read.index()] = Some(KindLatency {
            count: 10,
            p50_ns: 100_000,
            p99_ns: 1_240_000,
            max_ns: 2_000_000,
        });
        let mut totals = Totals::default();
        totals.ops[OpKind::Read.index()] = 6_364_580;
        totals.bytes[OpKind::Read.index()] = 6_364_580 * 8192;
        let tick = Tick {
            elapsed: Duration::from_secs(20),
            kind: TickKind::Second,
            totals,
            latency,
        };
        let device = DeviceStats {
            name: "loop3".into(),
            role: "stack".into(),
            model: None,
            loop_backing: None,
            loop_dio: None,
            read_ops: 200,
            read_bytes: 200 * 8192,
            write_ops: 0,
            write_bytes: 0,
            flush_ops: None,
            read_iops: 20.0,
            write_iops: 0.0,
            avg_read_size_bytes: None,
            avg_write_size_bytes: None,
            avg_read_wait_us: Some(500.0),
            avg_write_wait_us: None,
            util_pct: 42.0,
            avg_queue_depth: None,
        };
        let s = Status {
            label: "randread",
            elapsed: tick.elapsed,
            planned: Duration::from_secs(60),
            delta: totals,
            secs: 10.0,
            tick: &tick,
            devices: &[device],
            cpu_pct: Some(55.4),
        };
        assert_eq!(
            status_line(&s),
            "bakeoff: randread 0:20/1:00, 40 s left: read 636,458/s 5,214 MB/s p99 1.24 ms; \
             dev r/s 20.0 w/s 0.0 rMB/s 0.2 wMB/s 0.0 r_await 500 µs w_await - util 42%; cpu 55%"
        );
    }

    #[test]
    fn the_bar_line_writes_rates_in_the_one_grammar() {
        let s = Sample {
            read_iops: 636_458.0,
            write_iops: 12.5,
            device_read_iops: Some(12_910.0),
            device_write_iops: Some(0.0),
            cpu_busy_pct: Some(55.4),
            ..Sample::default()
        };
        let line = bar_line(
            "randread",
            Duration::from_secs(30),
            Duration::from_secs(60),
            Some(&s),
        );
        assert!(
            line.ends_with(" read 636,458/s write 12.5/s dev r/s 12,910 w/s 0.0 cpu 55%"),
            "{line}"
        );
    }
}
