//! What a managed server's defaults are sized from: the machine's memory, the run's memory
//! limit (the server lives inside it) and the client connections the workload opens. PostgreSQL
//! and MariaDB size their caches and connection limits from the same reading.

use crate::server_files::FileError;
use std::path::Path;

/// What the defaults are sized from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sizing {
    /// The machine's memory (`MemTotal`).
    pub memory_bytes: u64,
    /// The run's memory limit (`--mem-limit`), if any: the server lives inside it.
    pub mem_limit_bytes: Option<u64>,
    /// Client connections the workload opens (terminals, pgbench or sysbench threads).
    pub clients: u32,
}

impl Sizing {
    /// This machine's memory, with the given limit and clients.
    pub fn of_machine(mem_limit_bytes: Option<u64>, clients: u32) -> Result<Sizing, FileError> {
        let path = Path::new("/proc/meminfo");
        let text = std::fs::read_to_string(path).map_err(|source| FileError::Io {
            what: "reading",
            path: path.to_path_buf(),
            source,
        })?;
        let info = bakeoff_probe::parse_meminfo(&text)
            .map_err(|e| FileError::Environment(format!("{}: {e}", path.display())))?;
        Ok(Sizing {
            memory_bytes: info.total,
            mem_limit_bytes,
            clients,
        })
    }

    /// The memory the server may use: the run's limit if lower than the machine's.
    pub fn server_memory(&self) -> u64 {
        self.mem_limit_bytes
            .map_or(self.memory_bytes, |l| l.min(self.memory_bytes))
    }
}
