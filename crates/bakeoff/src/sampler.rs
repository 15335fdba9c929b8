//! Turns the engine's ticks into probe snapshots: per-second samples, and the measured window's
//! whole-machine CPU, device and memory figures plus bakeoff's own CPU share.

use bakeoff_core::plan::OpKind;
use bakeoff_core::record::{CpuStats, DeviceStats, MemoryStats, Sample, SampleLatency, ToolUsage};
use bakeoff_core::steady::MIN_SAMPLE_SHARE;
use bakeoff_engine::{KindLatency, Tick, TickKind, Totals};
use bakeoff_probe::{
    backing_share, cpu_split, cpu_stats, processes, rusage_self, ticks_per_second, Probe, ProcStat,
    RunDevices, Snapshot, SplitInputs,
};

/// What the probes measured over the window.
pub struct Measured {
    pub cpu: Option<CpuStats>,
    pub devices: Vec<DeviceStats>,
    pub memory: Option<MemoryStats>,
    pub tool: ToolUsage,
    pub samples: Vec<Sample>,
}

/// A window edge: the snapshot, bakeoff's own (user, system) µs, and the process table.
type Edge = (Snapshot, (u64, u64), Vec<ProcStat>);

/// Collects snapshots at every tick.
pub struct Sampler {
    probe: Probe,
    daemons: Vec<u32>,
    ticks_per_sec: f64,
    prev: Option<(Snapshot, Totals)>,
    /// Where the devices' figures for live progress start: the last call, or the first tick.
    mark: Option<Snapshot>,
    window_start: Option<Edge>,
    window_end: Option<Edge>,
    measuring: bool,
    samples: Vec<Sample>,
    dirty_max: u64,
    writeback_max: u64,
    available_min: u64,
}

fn cpu_us((user, sys, _): (u64, u64, u64)) -> (u64, u64) {
    (user, sys)
}

/// Per kind that finished operations: the interval's latency.
fn sample_latency(per_kind: &[Option<KindLatency>]) -> Vec<SampleLatency> {
    OpKind::ALL
        .into_iter()
        .zip(per_kind)
        .filter_map(|(kind, l)| {
            l.map(|l| SampleLatency {
                kind,
                ops: l.count,
                p50_ns: l.p50_ns,
                p99_ns: l.p99_ns,
                max_ns: l.max_ns,
            })
        })
        .collect()
}

impl Sampler {
    /// A sampler over the probe's devices; `daemons` are the stack's daemon pids, whose CPU
    /// (and their descendants') is the stack's.
    pub fn new(probe: Probe, daemons: Vec<u32>) -> Sampler {
        Sampler {
            probe,
            daemons,
            ticks_per_sec: ticks_per_second(),
            prev: None,
            mark: None,
            window_start: None,
            window_end: None,
            measuring: false,
            samples: Vec::new(),
            dirty_max: 0,
            writeback_max: 0,
            available_min: u64::MAX,
        }
    }

    /// The latest per-second sample, for live progress.
    pub fn last(&self) -> Option<&Sample> {
        self.samples.last()
    }

    /// The stack's (and log stack's) devices since the last call, or since the first tick:
    /// live progress's iostat figures.
    pub fn devices_since_mark(&mut self) -> Vec<DeviceStats> {
        let Some((now, _)) = &self.prev else {
            return Vec::new();
        };
        let stats = match &self.mark {
            Some(mark) => self.probe.device_stats(mark, now),
            None => Vec::new(),
        };
        self.mark = Some(now.clone());
        stats.into_iter().filter(|d| d.role != "backing").collect()
    }

    /// Handles one tick from the engine.
    pub fn on_tick(&mut self, t: &Tick) {
        let edge = matches!(t.kind, TickKind::MeasureStart | TickKind::End);
        let snap = if edge {
            self.probe.edge_snapshot()
        } else {
            self.probe.snapshot()
        };
        if self.mark.is_none() {
            self.mark = Some(snap.clone());
        }
        if let Some(m) = &snap.mem {
            if self.measuring || t.kind == TickKind::MeasureStart {
                self.dirty_max = self.dirty_max.max(m.dirty);
                self.writeback_max = self.writeback_max.max(m.writeback);
                self.available_min = self.available_min.min(m.available);
            }
        }
        if matches!(t.kind, TickKind::Second | TickKind::End) {
            if let Some((prev, prev_totals)) = &self.prev {
                // The run's end leaves a stub after the last whole second: its rate over a few
                // milliseconds is noise (and would enter the steadiness checks), so it goes.
                let span = snap.at.saturating_duration_since(prev.at).as_secs_f64();
                if t.kind == TickKind::Second || span >= MIN_SAMPLE_SHARE {
                    let sample = self.sample(t, prev, prev_totals, &snap);
                    self.samples.push(sample);
                }
            }
        }
        match t.kind {
            TickKind::MeasureStart => {
                self.measuring = true;
                self.window_start = Some((snap.clone(), cpu_us(rusage_self()), processes()));
            }
            TickKind::End => {
                self.window_end = Some((snap.clone(), cpu_us(rusage_self()), processes()))
            }
            _ => {}
        }
        self.prev = Some((snap, t.totals));
    }

    fn sample(&self, t: &Tick, prev: &Snapshot, prev_totals: &Totals, now: &Snapshot) -> Sample {
        let secs = now
            .at
            .saturating_duration_since(prev.at)
            .as_secs_f64()
            .max(1e-9);
        let d = t.totals.since(prev_totals);
        let (r, w, lw) = (
            OpKind::Read.index(),
            OpKind::Write.index(),
            OpKind::LogWrite.index(),
        );
        let cpu = match (&prev.cpu, &now.cpu) {
            (Some(a), Some(b)) => Some(cpu_stats(a, b, self.ticks_per_sec).busy_pct),
            _ => None,
        };
        let devs: Vec<DeviceStats> = self
            .probe
            .device_stats(prev, now)
            .into_iter()
            .filter(|x| x.role == "stack")
            .collect();
        let dev_sum = |f: &dyn Fn(&DeviceStats) -> f64| {
            (!devs.is_empty()).then(|| devs.iter().map(f).sum::<f64>())
        };
        Sample {
            t_s: t.elapsed.as_secs_f64(),
            measured: self.measuring,
            read_iops: d.ops[r] as f64 / secs,
            write_iops: (d.ops[w] + d.ops[lw]) as f64 / secs,
            read_mb_s: d.bytes[r] as f64 / secs / 1e6,
            write_mb_s: (d.bytes[w] + d.bytes[lw]) as f64 / secs / 1e6,
            cpu_busy_pct: cpu,
            device_read_iops: dev_sum(&|x| x.read_iops),
            device_write_iops: dev_sum(&|x| x.write_iops),
            device_read_mb_s: dev_sum(&|x| x.read_bytes as f64 / secs / 1e6),
            device_write_mb_s: dev_sum(&|x| x.write_bytes as f64 / secs / 1e6),
            dirty_bytes: now.mem.as_ref().map(|m| m.dirty),
            cached_bytes: now.mem.as_ref().map(|m| m.cached),
            lat: sample_latency(&t.latency.interval),
        }
    }

    /// The window's figures; empty when the window never started.
    pub fn finish(self) -> Measured {
        let (_, _, max_rss) = rusage_self();
        let mut m = Measured {
            cpu: None,
            devices: Vec::new(),
            memory: None,
            tool: ToolUsage {
                user_us: 0,
                system_us: 0,
                max_rss_bytes: max_rss,
                share_of_busy_pct: None,
            },
            samples: self.samples,
        };
        let (Some((start, ru0, procs0)), Some((end, ru1, procs1))) =
            (&self.window_start, &self.window_end)
        else {
            return m;
        };
        m.devices = self.probe.device_stats(start, end);
        m.tool.user_us = ru1.0.saturating_sub(ru0.0);
        m.tool.system_us = ru1.1.saturating_sub(ru0.1);
        if let (Some(a), Some(b)) = (&start.cpu, &end.cpu) {
            let mut cpu = cpu_stats(a, b, self.ticks_per_sec);
            let tool_us = (m.tool.user_us + m.tool.system_us) as f64;
            m.tool.share_of_busy_pct =
                (cpu.busy_us > 0.0).then(|| (100.0 * tool_us / cpu.busy_us).min(100.0));
            let kernel_work = end.kernel_work_since(start);
            let inputs = SplitInputs {
                machine: (a, b),
                ticks_per_sec: self.ticks_per_sec,
                me: std::process::id(),
                my_us: Some(tool_us),
                daemons: &self.daemons,
                devices: &RunDevices::of(&self.probe.devices),
                kernel_work: kernel_work.as_ref(),
                backing_share: backing_share(&m.devices),
            };
            cpu.split = (!procs1.is_empty()).then(|| cpu_split(procs0, procs1, &inputs));
            m.cpu = Some(cpu);
        }
        if let (Some(a), Some(b)) = (&start.mem, &end.mem) {
            let arc = |f: fn(&bakeoff_probe::ArcCounters) -> Option<u64>| {
                Some(f(end.arc.as_ref()?)?.saturating_sub(f(start.arc.as_ref()?)?))
            };
            let page_cache = |f: fn(&bakeoff_probe::PageCacheCounters) -> u64| {
                Some(f(end.page_cache.as_ref()?).saturating_sub(f(start.page_cache.as_ref()?)))
            };
            m.memory = Some(MemoryStats {
                total_bytes: b.total,
                cached_start_bytes: a.cached,
                cached_end_bytes: b.cached,
                dirty_max_bytes: self.dirty_max,
                dirty_start_bytes: Some(a.dirty),
                dirty_end_bytes: Some(b.dirty),
                writeback_max_bytes: self.writeback_max,
                available_min_bytes: self.available_min.min(b.available),
                arc_size_bytes: end.arc.and_then(|c| c.size),
                arc_hits: arc(|c| c.hits),
                arc_misses: arc(|c| c.misses),
                page_cache_added_pages: page_cache(|c| c.added_pages),
                page_cache_unavailable: self.probe.page_cache_unavailable().map(str::to_string),
            });
        }
        m
    }
}
