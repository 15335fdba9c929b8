//! The transaction figures of a database run: rates, the headline latency, and what each
//! transaction cost the machine (CPU by whom, device bytes of the data and log stacks, WAL).

use crate::dbrecord::{DbCounters, InnodbCounters};
use crate::op::{OpClass, OpKind};
use crate::record::{CpuSplit, DeviceStats, RunRecord};
use crate::summary::{percentile_us, ratio, total, Summary};
use serde::{Deserialize, Serialize};

/// Districts one TPC-C Delivery visits (a warehouse's).
const DISTRICTS_PER_DELIVERY: u64 = 10;

/// What InnoDB did per transaction: the writes behind the redo log (`wal_bytes_per_txn`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct InnodbPerTxn {
    /// Data pages written.
    pub pages_written: Option<f64>,
    /// Data pages read.
    pub pages_read: Option<f64>,
    /// Pages written through the doublewrite buffer (each written twice).
    pub dblwr_pages: Option<f64>,
    /// Doublewrite batches.
    pub dblwr_writes: Option<f64>,
    /// Syncs of data files.
    pub data_fsyncs: Option<f64>,
    /// Syncs of the redo log (not counted by MariaDB 10.11).
    pub log_fsyncs: Option<f64>,
}

impl InnodbPerTxn {
    fn of(c: &InnodbCounters, txns: f64) -> InnodbPerTxn {
        let per = |v: Option<u64>| v.map(|v| v as f64 / txns);
        InnodbPerTxn {
            pages_written: per(c.pages_written),
            pages_read: per(c.pages_read),
            dblwr_pages: per(c.dblwr_pages),
            dblwr_writes: per(c.dblwr_writes),
            data_fsyncs: per(c.data_fsyncs),
            log_fsyncs: per(c.log_fsyncs),
        }
    }
}

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
            self.db_cache_hit_pct = w
                .cache_hits
                .zip(w.cache_misses)
                .and_then(|(h, m)| ratio(100.0 * h as f64, (h + m) as f64));
            self.checkpoints = w.checkpoints.map(|c| c as f64);
            self.innodb_per_txn = w.innodb.as_ref().map(|i| InnodbPerTxn::of(i, n));
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
