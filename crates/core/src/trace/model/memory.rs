//! [`Trace`]: a whole trace in memory, and the [`TraceSink`] that fills it.

use super::{
    FileEntry, FileId, Footer, HandleEntry, HandleId, Header, Mark, PathEntry, PathId, Provenance,
    Record, ThreadEntry, ThreadId, TraceSink,
};

/// A whole trace in memory: what the reader returns and a sink the capture's tests use.
#[derive(Clone, Debug, PartialEq)]
pub struct Trace {
    /// Version and capture id.
    pub header: Header,
    /// Where and how it was captured.
    pub provenance: Provenance,
    /// Paths, by [`PathId`].
    pub paths: Vec<PathEntry>,
    /// Files, by [`FileId`].
    pub files: Vec<FileEntry>,
    /// Handles, by [`HandleId`].
    pub handles: Vec<HandleEntry>,
    /// Threads, by [`ThreadId`].
    pub threads: Vec<ThreadEntry>,
    /// Each thread's calls in start order, by [`ThreadId`].
    pub ops: Vec<Vec<Record>>,
    /// Named instants, in time order.
    pub marks: Vec<Mark>,
    /// The counts at the end.
    pub footer: Footer,
}

impl Trace {
    /// An empty trace to fill through [`TraceSink`].
    pub fn new(header: Header, provenance: Provenance) -> Trace {
        Trace {
            header,
            provenance,
            paths: Vec::new(),
            files: Vec::new(),
            handles: Vec::new(),
            threads: Vec::new(),
            ops: Vec::new(),
            marks: Vec::new(),
            footer: Footer::default(),
        }
    }

    /// Every record of every thread.
    pub fn record_count(&self) -> u64 {
        self.ops.iter().map(|t| t.len() as u64).sum()
    }
}

fn next_id(len: usize) -> std::io::Result<u32> {
    u32::try_from(len).map_err(|_| std::io::Error::other("more than 2^32 entries in a trace table"))
}

impl TraceSink for Trace {
    fn path(&mut self, entry: PathEntry) -> std::io::Result<PathId> {
        let id = next_id(self.paths.len())?;
        self.paths.push(entry);
        Ok(id)
    }

    fn file(&mut self, entry: FileEntry) -> std::io::Result<FileId> {
        let id = next_id(self.files.len())?;
        self.files.push(entry);
        Ok(id)
    }

    fn handle(&mut self, entry: HandleEntry) -> std::io::Result<HandleId> {
        let id = next_id(self.handles.len())?;
        self.handles.push(entry);
        Ok(id)
    }

    fn thread(&mut self, entry: ThreadEntry) -> std::io::Result<ThreadId> {
        let id = next_id(self.threads.len())?;
        self.threads.push(entry);
        self.ops.push(Vec::new());
        Ok(id)
    }

    fn op(&mut self, thread: ThreadId, record: &Record) -> std::io::Result<()> {
        let ops = (self.ops.get_mut(thread as usize))
            .ok_or_else(|| std::io::Error::other(format!("record of undefined thread {thread}")))?;
        ops.push(*record);
        Ok(())
    }

    fn mark(&mut self, mark: Mark) -> std::io::Result<()> {
        self.marks.push(mark);
        Ok(())
    }

    fn finish(&mut self, footer: Footer) -> std::io::Result<()> {
        for (file, size) in &footer.end_sizes {
            if let Some(entry) = self.files.get_mut(*file as usize) {
                entry.end_size = *size;
            }
        }
        self.footer = footer;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::*;

    #[test]
    fn op_codes_round_trip_through_their_numbers() {
        for op in OpCode::ALL {
            assert_eq!(OpCode::from_u8(op as u8), Some(op));
        }
        assert_eq!(OpCode::from_u8(0), None);
        assert_eq!(OpCode::from_u8(17), None);
    }

    #[test]
    fn the_memory_sink_numbers_tables_and_keeps_end_sizes() {
        let mut trace = Trace::new(Header::new([7; 16]), Provenance::default());
        let path = (trace.path(PathEntry {
            root: 0,
            path: "base/1".into(),
        }))
        .unwrap();
        let file = (trace.file(FileEntry {
            path,
            kind: FileKind::File,
            start_size: Some(8192),
            end_size: None,
        }))
        .unwrap();
        let thread = (trace.thread(ThreadEntry {
            tid: 9,
            tgid: 9,
            comm: "postgres".into(),
        }))
        .unwrap();
        let write = Record {
            op: Some(OpCode::Write),
            len: 8192,
            result: 8192,
            ..Record::default()
        };
        trace.op(thread, &write).unwrap();
        assert!(trace.op(thread + 1, &write).is_err());
        let footer = Footer {
            ops: 1,
            end_sizes: vec![(file, Some(16384))],
            ..Footer::default()
        };
        trace.finish(footer).unwrap();
        assert_eq!((path, file, thread), (0, 0, 0));
        assert_eq!(trace.files[0].end_size, Some(16384));
        assert_eq!(trace.record_count(), 1);
        assert_eq!(trace.header.capture_id_hex(), "07".repeat(16));
    }
}
