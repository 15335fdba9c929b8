//! The kinds of operation a run counts and times, each with its own latency histogram: block
//! I/O, database transactions, and file operations.

use serde::{Deserialize, Serialize};

/// The reporting category of an operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OpKind {
    /// A data read.
    Read,
    /// A data write.
    Write,
    /// A write to a redo/intent log.
    LogWrite,
    /// An `fsync` or `fdatasync`.
    Sync,
    /// A transaction commit: from handing redo to the log writer until it is durable (what a
    /// committing session waits for: the log write and its sync, and any queueing before them).
    Commit,
    /// TPC-C New-Order.
    NewOrder,
    /// TPC-C Payment.
    Payment,
    /// TPC-C Order-Status.
    OrderStatus,
    /// TPC-C Delivery.
    Delivery,
    /// TPC-C Stock-Level.
    StockLevel,
    /// One transaction of a script (pgbench).
    Transaction,
    /// Create a file.
    Create,
    /// Delete a file.
    Delete,
    /// Open a file.
    Open,
    /// Close a file.
    Close,
    /// Stat a file.
    Stat,
    /// List a directory.
    Readdir,
    /// Rename a file.
    Rename,
    /// Append to a file.
    Append,
    /// Read a whole file.
    ReadFile,
    /// Write a whole file.
    WriteFile,
    /// Change a file's attributes (its times: NFS `SETATTR`; a replay's `ftruncate`).
    Setattr,
    /// Start or wait for write-back of a range (a replay's `sync_file_range`).
    Writeback,
    /// Allocate or punch a range (a replay's `fallocate`).
    Allocate,
}

/// What an operation kind counts as.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpClass {
    /// Block I/O and its durability (`read`, `write`, `log_write`, `sync`, `commit`).
    Io,
    /// A database transaction.
    Transaction,
    /// A file-system operation.
    File,
}

impl OpKind {
    /// Every kind, in report order.
    pub const ALL: [OpKind; 24] = [
        OpKind::Read,
        OpKind::Write,
        OpKind::LogWrite,
        OpKind::Sync,
        OpKind::Commit,
        OpKind::NewOrder,
        OpKind::Payment,
        OpKind::OrderStatus,
        OpKind::Delivery,
        OpKind::StockLevel,
        OpKind::Transaction,
        OpKind::Create,
        OpKind::Delete,
        OpKind::Open,
        OpKind::Close,
        OpKind::Stat,
        OpKind::Readdir,
        OpKind::Rename,
        OpKind::Append,
        OpKind::ReadFile,
        OpKind::WriteFile,
        OpKind::Setattr,
        OpKind::Writeback,
        OpKind::Allocate,
    ];

    /// Index into per-kind arrays.
    pub fn index(self) -> usize {
        self as usize
    }

    /// Name used in reports and JSON.
    pub fn name(self) -> &'static str {
        match self {
            OpKind::Read => "read",
            OpKind::Write => "write",
            OpKind::LogWrite => "log_write",
            OpKind::Sync => "sync",
            OpKind::Commit => "commit",
            OpKind::NewOrder => "new_order",
            OpKind::Payment => "payment",
            OpKind::OrderStatus => "order_status",
            OpKind::Delivery => "delivery",
            OpKind::StockLevel => "stock_level",
            OpKind::Transaction => "transaction",
            OpKind::Create => "create",
            OpKind::Delete => "delete",
            OpKind::Open => "open",
            OpKind::Close => "close",
            OpKind::Stat => "stat",
            OpKind::Readdir => "readdir",
            OpKind::Rename => "rename",
            OpKind::Append => "append",
            OpKind::ReadFile => "read_file",
            OpKind::WriteFile => "write_file",
            OpKind::Setattr => "setattr",
            OpKind::Writeback => "writeback",
            OpKind::Allocate => "allocate",
        }
    }

    /// What it counts as.
    pub fn class(self) -> OpClass {
        match self {
            OpKind::Read | OpKind::Write | OpKind::LogWrite | OpKind::Sync | OpKind::Commit => {
                OpClass::Io
            }
            OpKind::NewOrder
            | OpKind::Payment
            | OpKind::OrderStatus
            | OpKind::Delivery
            | OpKind::StockLevel
            | OpKind::Transaction => OpClass::Transaction,
            _ => OpClass::File,
        }
    }

    /// The kind called `name` (as [`OpKind::name`] writes it).
    pub fn from_name(name: &str) -> Option<OpKind> {
        OpKind::ALL.into_iter().find(|k| k.name() == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indices_names_and_serde_agree() {
        for (i, k) in OpKind::ALL.iter().enumerate() {
            assert_eq!(k.index(), i, "{k:?} out of order");
            assert_eq!(OpKind::from_name(k.name()), Some(*k));
            assert_eq!(
                serde_json::to_string(k).unwrap(),
                format!("\"{}\"", k.name())
            );
        }
    }
}
