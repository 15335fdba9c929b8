//! The transaction figures of a database run: rates, the headline latency, and what each
//! transaction cost the machine (CPU by whom, device bytes of the data and log stacks, WAL).

use super::{percentile_us, ratio, total};
use crate::op::{OpClass, OpKind};
use crate::record::database::{DbCounters, InnodbCounters};
use crate::record::Summary;
use crate::record::{CpuSplit, DeviceStats, RunRecord};

/// Districts one TPC-C Delivery visits (a warehouse's).
const DISTRICTS_PER_DELIVERY: u64 = 10;

impl Summary {
    /// Transactions: rates, the headline latency, and what each cost the machine.
    pub(crate) fn add_transactions(&mut self, record: &RunRecord, secs: f64) {
        let ops = &record.ops;
        let (txns, _) = total(ops, |k| k.class() == OpClass::Transaction);
        if txns == 0 || secs <= 0.0 {
            return;
        }
        let n = txns as f64;
        let (new_orders, _) = total(ops, |k| k == OpKind::NewOrder);
        self.tps = Some(n / secs);
        self.tpm = Some(n / secs * 60.0);
        self.nopm = (new_orders > 0).then(|| new_orders as f64 / secs * 60.0);
        let headline = [OpKind::NewOrder, OpKind::Transaction]
            .into_iter()
            .find(|k| ops.iter().any(|o| o.kind == *k && o.ops > 0));
        if let Some(k) = headline {
            self.txn_lat_p50_us = percentile_us(ops, k, 50.0);
            self.txn_lat_p99_us = percentile_us(ops, k, 99.0);
        }
        let split = record.cpu.as_ref().and_then(|c| c.split.as_ref());
        let window = record.database.as_ref().and_then(|d| d.window.as_ref());
        self.add_cpu_split(split, window, n);
        let sum = |role: &str, f: fn(&DeviceStats) -> u64| -> Option<f64> {
            let mut of_role = record.devices.iter().filter(|d| d.role == role).peekable();
            of_role.peek()?;
            Some(of_role.map(f).sum::<u64>() as f64 / n)
        };
        self.device_read_bytes_per_txn = sum("stack", |d| d.read_bytes);
        self.device_write_bytes_per_txn = sum("stack", |d| d.write_bytes);
        self.log_device_write_bytes_per_txn = sum("log", |d| d.write_bytes);
        let flushes: Option<u64> = record
            .devices
            .iter()
            .filter(|d| d.role == "stack" || d.role == "log")
            .map(|d| d.flush_ops)
            .sum();
        self.device_flushes_per_txn = flushes.map(|f| f as f64 / n);
        if let Some(w) = window {
            self.wal_bytes_per_txn = w.wal_bytes.map(|b| b as f64 / n);
            self.wal_syncs_per_txn = w.wal_syncs.map(|s| s as f64 / n);
            self.db_cache_hit_pct = w
                .cache_hits
                .zip(w.cache_misses)
                .and_then(|(h, m)| ratio(100.0 * h as f64, (h + m) as f64));
            self.checkpoints = w.checkpoints.map(|c| c as f64);
            if let Some(i) = &w.innodb {
                self.add_innodb(i, n);
            }
        }
        let (deliveries, _) = total(ops, |k| k == OpKind::Delivery);
        if let Some(db) = record.database.as_ref().filter(|_| deliveries > 0) {
            let districts = deliveries * DISTRICTS_PER_DELIVERY;
            self.delivery_skipped_pct = ratio(
                100.0 * db.delivery_skipped_districts as f64,
                districts as f64,
            );
        }
    }

    /// CPU per transaction, and who spent it: the client, the database (its server's
    /// processes; or, embedded, its calls timed on the client's threads), the kernel.
    fn add_cpu_split(&mut self, split: Option<&CpuSplit>, window: Option<&DbCounters>, n: f64) {
        let Some(x) = split else { return };
        self.cpu_us_per_txn = Some(x.work_us() / n);
        let embedded = window
            .and_then(|w| w.engine_cpu_us)
            .map_or(0.0, |e| e as f64);
        let embedded = embedded.min(x.tool_us);
        let client = x.tool_us - embedded;
        self.client_cpu_us_per_txn = Some(client / n);
        self.server_cpu_us_per_txn = Some((x.daemons_us + embedded) / n);
        let busy = x.tool_us + x.daemons_us + x.kernel_us + x.other_us;
        self.client_cpu_share_pct = ratio(100.0 * client, busy);
    }
}

impl Summary {
    /// InnoDB's own costs per transaction (MariaDB): the writes behind its redo log.
    fn add_innodb(&mut self, c: &InnodbCounters, txns: f64) {
        let per = |v: Option<u64>| v.map(|v| v as f64 / txns);
        self.innodb_pages_written_per_txn = per(c.pages_written);
        self.innodb_pages_read_per_txn = per(c.pages_read);
        self.innodb_dblwr_pages_per_txn = per(c.dblwr_pages);
        self.innodb_dblwr_writes_per_txn = per(c.dblwr_writes);
        self.innodb_data_fsyncs_per_txn = per(c.data_fsyncs);
        self.innodb_log_fsyncs_per_txn = per(c.log_fsyncs);
    }
}
