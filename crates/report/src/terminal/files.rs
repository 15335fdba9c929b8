//! The terminal summary's lines for file serving, client processes and replays: how many
//! clients ran how many threads, whether the dataset was reused, the operations per second over
//! every kind, what each client did with how much CPU, and what a replay made of its trace.

use crate::fmt::{count, group, rate};
use bakeoff_core::record::RunRecord;
use bakeoff_core::units::format_bytes;
use std::fmt::Write;

/// The header's threads and dataset: `4 clients x 2 threads, dataset 12 MiB (reused)`, or
/// under MPI `4 ranks x 2 threads on 2 hosts, ...` (every rank runs the plan's threads;
/// `on 4 hosts sharing 1 kernel` when hosts are namespaces or containers of one machine).
pub fn header_part(r: &RunRecord) -> String {
    let threads = count(u64::from(r.plan.threads()), "thread");
    let workers = match (&r.mpi, r.plan.clients) {
        (Some(mpi), _) => {
            let hosts = mpi.hosts.len() as u64;
            let kernels = u64::from(mpi.totals.kernels);
            // Hosts that are containers or namespaces of fewer machines say so.
            let shared = if kernels > 0 && kernels < hosts {
                format!(" sharing {}", count(kernels, "kernel"))
            } else {
                String::new()
            };
            format!(
                "{} x {threads} on {}{shared}",
                count(u64::from(mpi.ranks), "rank"),
                count(hosts, "host")
            )
        }
        (None, 0) => threads,
        (None, n) => format!("{} x {threads}", count(u64::from(n), "client")),
    };
    let reused = match &r.dataset {
        Some(d) if d.reused => " (reused)",
        _ => "",
    };
    format!(
        "{workers}, dataset {}{reused}",
        format_bytes(r.plan.dataset_bytes())
    )
}

/// The lines after the roles table: every operation per second, and one line per client.
pub fn lines(r: &RunRecord) -> String {
    let mut s = String::new();
    if let Some(ops) = r.summary.file_ops_per_s {
        let _ = writeln!(s, "file ops {}/s, every kind", rate(ops));
    }
    if let Some(p) = &r.replay {
        let _ = writeln!(
            s,
            "replay   {} of the trace's {} calls in {}, {} of them waiting for another thread ({} in all; {} edges)",
            group(p.calls),
            group(p.trace_calls),
            crate::fmt::duration(r.measured_ns as f64),
            group(p.dependency_waits),
            crate::fmt::duration(p.wait_ns as f64),
            group(p.edges),
        );
        if p.syncs_merged > 0 {
            let _ = writeln!(
                s,
                "         {} syncs not made: another thread's sync had made their writes durable (syncs=merge)",
                group(p.syncs_merged),
            );
        }
        if p.probes_found > 0 {
            let _ = writeln!(
                s,
                "         {} opens the capture saw fail (no such file) found the file: a removal the capture missed, or a creation the replay could not order before them (docs/replay.md)",
                group(p.probes_found),
            );
        }
        if p.end_sizes_differ > 0 {
            let _ = writeln!(
                s,
                "         {} of {} files ended at another size than the capture saw (calls the trace does not hold, such as writes through a mapping)",
                group(p.end_sizes_differ),
                group(p.end_sizes_checked),
            );
        } else if p.end_sizes_checked > 0 {
            let _ = writeln!(
                s,
                "         every file ({}) ended at the size the capture saw",
                group(p.end_sizes_checked),
            );
        }
    }
    for (i, c) in r.clients.iter().enumerate() {
        let label = if i == 0 { "clients" } else { "" };
        let ops: u64 = c.ops.iter().map(|o| o.ops).sum();
        let secs = c.measured_ns as f64 / 1e9;
        let per_sec = if secs > 0.0 { ops as f64 / secs } else { 0.0 };
        let _ = writeln!(
            s,
            "{label:<8} {} (pid {}): {} ops ({}/s) in {}, CPU user {} sys {}",
            c.index,
            c.pid,
            group(ops),
            rate(per_sec),
            crate::fmt::duration(c.measured_ns as f64),
            crate::fmt::duration(c.cpu_user_us as f64 * 1e3),
            crate::fmt::duration(c.cpu_system_us as f64 * 1e3),
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use bakeoff_core::plan::OpKind;
    use bakeoff_core::record::{ClientOps, ClientResult, DatasetInfo};

    #[test]
    fn clients_and_a_reused_dataset_are_named() {
        let mut r = crate::fixture::record();
        r.plan.clients = 2;
        r.dataset = Some(DatasetInfo {
            reused: true,
            ..Default::default()
        });
        r.clients = (0..2)
            .map(|i| ClientResult {
                index: i,
                pid: 100 + i,
                measured_ns: 2_000_000_000,
                ops: vec![ClientOps {
                    kind: OpKind::Stat,
                    ops: 3000,
                    bytes: 0,
                }],
                cpu_user_us: 250_000,
                cpu_system_us: 1_500_000,
                ..Default::default()
            })
            .collect();
        let text = crate::terminal::render(&r);
        assert!(text.contains("2 clients x 8 threads, dataset "), "{text}");
        assert!(text.contains("(reused)"), "{text}");
        assert!(
            text.contains(
                "clients  0 (pid 100): 3,000 ops (1,500/s) in 2.00 s, CPU user 250 ms sys 1.50 s"
            ),
            "{text}"
        );
        assert!(text.contains("\n         1 (pid 101): "), "{text}");
    }

    #[test]
    fn mpi_ranks_and_hosts_are_named() {
        let mut r = crate::fixture::record();
        r.mpi = Some(bakeoff_core::mpi::MpiRecord {
            ranks: 4,
            hosts: vec![Default::default(), Default::default()],
            totals: Default::default(),
        });
        let text = crate::terminal::render(&r);
        assert!(
            text.contains("4 ranks x 8 threads on 2 hosts, dataset "),
            "{text}"
        );
        if let Some(mpi) = r.mpi.as_mut() {
            mpi.totals.kernels = 1;
        }
        let text = crate::terminal::render(&r);
        assert!(
            text.contains("4 ranks x 8 threads on 2 hosts sharing 1 kernel, dataset "),
            "{text}"
        );
    }
}
