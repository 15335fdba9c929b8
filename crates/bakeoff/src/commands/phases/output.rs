//! Where a phase's commands write: their standard output and error pass through to bakeoff's
//! own as they are written (as under `time make`), and with an output directory each
//! instance's are kept whole in files named in its record; the last lines of standard error
//! are kept for the record either way.
//!
//! Standard output that only passes through is the command's inherited descriptor (nothing is
//! copied; a terminal stays a terminal). Standard error always goes through a pipe that bakeoff
//! copies chunk by chunk (a progress line without a newline shows at once), because its tail
//! is kept; so is standard output when it also goes to a file.

use std::collections::VecDeque;
use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::AsFd;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

/// Lines of standard error an instance keeps (and a failure shows).
pub const TAIL_LINES: usize = 20;
/// The longest line kept in the tail; a command writing without newlines is cut there.
const LINE_MAX: usize = 4096;

/// Where the commands of a run of phases write.
#[derive(Clone, Debug, Default)]
pub struct CommandOutput {
    /// Their standard output and error go to bakeoff's own as they are written.
    pub pass_through: bool,
    /// Their standard output goes to bakeoff's standard error instead: bakeoff's standard
    /// output carries an export (`--export-json -`).
    pub stdout_to_stderr: bool,
    /// Also keep each instance's standard output and error in files in this directory.
    pub dir: Option<PathBuf>,
}

impl CommandOutput {
    /// Where a run's commands write: through to bakeoff's own streams (their standard output
    /// to its standard error when an export takes its standard output), and into `--output
    /// DIR`, made now (not in a dry run, which only checks that it can be).
    pub fn for_run(
        dir: Option<&Path>,
        exports: &[(&'static bakeoff_report::Exporter, PathBuf)],
        dry_run: bool,
    ) -> Result<CommandOutput, crate::exit::Failure> {
        use crate::exit::{failure, Code};
        let stdout_taken = exports.iter().any(|(_, p)| p == Path::new("-"));
        let mut out = CommandOutput {
            pass_through: true,
            stdout_to_stderr: stdout_taken,
            dir: None,
        };
        let Some(dir) = dir else {
            return Ok(out);
        };
        let bad = |m: String| failure(Code::Usage, format!("--output {}: {m}", dir.display()));
        if dir.exists() && !dir.is_dir() {
            return Err(bad("is not a directory".into()));
        }
        if dry_run {
            let parent = dir.ancestors().skip(1).find(|a| a.exists());
            return match parent {
                Some(p) if !p.as_os_str().is_empty() && !p.is_dir() => {
                    Err(bad(format!("{} is not a directory", p.display())))
                }
                _ => Ok(out),
            };
        }
        std::fs::create_dir_all(dir).map_err(|e| bad(format!("cannot be made: {e}")))?;
        out.dir = Some(std::fs::canonicalize(dir).map_err(|e| bad(e.to_string()))?);
        Ok(out)
    }
}

/// Bakeoff's stream a command's output passes through to.
#[derive(Clone, Copy, Debug)]
enum Stream {
    Stdout,
    Stderr,
}

/// Where one stream of one instance goes.
#[derive(Debug, Default)]
pub struct Sink {
    pass: Option<Stream>,
    file: Option<PathBuf>,
}

/// The sinks of instance `k` (of `parallel`) of phase `index` (0-based) called `name`:
/// `(stdout, stderr)`. Files are `N-NAME.stdout` (`N-NAME.K.stdout` for several instances).
pub fn sinks(out: &CommandOutput, index: usize, name: &str, k: u32, parallel: u32) -> (Sink, Sink) {
    let file = |ext: &str| {
        let stem = match parallel {
            1 => format!("{}-{name}", index + 1),
            _ => format!("{}-{name}.{k}", index + 1),
        };
        out.dir.as_ref().map(|d| d.join(format!("{stem}.{ext}")))
    };
    let stdout = match (out.pass_through, out.stdout_to_stderr) {
        (false, _) => None,
        (true, false) => Some(Stream::Stdout),
        (true, true) => Some(Stream::Stderr),
    };
    let stderr = out.pass_through.then_some(Stream::Stderr);
    (
        Sink {
            pass: stdout,
            file: file("stdout"),
        },
        Sink {
            pass: stderr,
            file: file("stderr"),
        },
    )
}

impl Sink {
    /// The file it keeps, if any.
    pub fn file(&self) -> Option<&Path> {
        self.file.as_deref()
    }

    /// What the command's standard output is given: bakeoff's own stream where nothing is
    /// copied, else a pipe for [`Sink::copy`].
    pub fn stdout_stdio(&self) -> std::io::Result<Stdio> {
        Ok(match (&self.file, self.pass) {
            (Some(_), _) => Stdio::piped(),
            (None, None) => Stdio::null(),
            (None, Some(Stream::Stdout)) => Stdio::inherit(),
            (None, Some(Stream::Stderr)) => {
                Stdio::from(std::io::stderr().as_fd().try_clone_to_owned()?)
            }
        })
    }

    /// Creates its file (before the command starts, so an unwritable directory fails the
    /// launch rather than losing output).
    pub fn open(&self) -> std::io::Result<Option<File>> {
        let Some(path) = &self.file else {
            return Ok(None);
        };
        let named = |e: std::io::Error| {
            std::io::Error::new(e.kind(), format!("creating {}: {e}", path.display()))
        };
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(named)?;
        }
        File::create(path).map(Some).map_err(named)
    }

    /// Copies `from` to its end into the stream and the file, keeping the last lines in
    /// `tail` if given; on a thread of its own.
    pub fn copy(
        &self,
        from: impl Read + Send + 'static,
        file: Option<File>,
        tail: Option<Arc<Mutex<VecDeque<String>>>>,
    ) -> JoinHandle<()> {
        let pass = self.pass;
        std::thread::spawn(move || copy(from, pass, file, tail.as_deref()))
    }
}

fn copy(
    mut from: impl Read,
    pass: Option<Stream>,
    mut file: Option<File>,
    tail: Option<&Mutex<VecDeque<String>>>,
) {
    let mut buf = vec![0u8; 64 << 10];
    let mut line = Vec::new();
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        };
        let chunk = &buf[..n];
        // A closed terminal or a full disk must not stop the command: its output is dropped.
        let _ = match pass {
            Some(Stream::Stdout) => write_all(&mut std::io::stdout().lock(), chunk),
            Some(Stream::Stderr) => write_all(&mut std::io::stderr().lock(), chunk),
            None => Ok(()),
        };
        if let Some(f) = file.as_mut() {
            let _ = f.write_all(chunk);
        }
        if let Some(tail) = tail {
            keep_lines(chunk, &mut line, tail);
        }
    }
    if let Some(tail) = tail.filter(|_| !line.is_empty()) {
        push(tail, &line);
    }
}

fn write_all(to: &mut impl Write, chunk: &[u8]) -> std::io::Result<()> {
    to.write_all(chunk)?;
    to.flush()
}

/// Adds the complete lines of `chunk` (after the partial `line` carried over) to `tail`.
fn keep_lines(chunk: &[u8], line: &mut Vec<u8>, tail: &Mutex<VecDeque<String>>) {
    for piece in chunk.split_inclusive(|b| *b == b'\n') {
        let room = LINE_MAX.saturating_sub(line.len());
        line.extend_from_slice(&piece[..piece.len().min(room)]);
        if piece.ends_with(b"\n") {
            push(tail, line);
            line.clear();
        }
    }
}

fn push(tail: &Mutex<VecDeque<String>>, line: &[u8]) {
    let text = String::from_utf8_lossy(line).trim_end().to_string();
    let mut t = tail.lock().unwrap_or_else(|e| e.into_inner());
    if t.len() == TAIL_LINES {
        t.pop_front();
    }
    t.push_back(text);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tail_is_the_last_lines_across_chunks() {
        let tail = Mutex::new(VecDeque::new());
        let mut line = Vec::new();
        let text: String = (1..=30).map(|i| format!("line{i}\n")).collect();
        for chunk in text.as_bytes().chunks(7) {
            keep_lines(chunk, &mut line, &tail);
        }
        let t = tail.into_inner().unwrap();
        assert_eq!(t.len(), TAIL_LINES);
        assert_eq!(t.front().unwrap(), "line11");
        assert_eq!(t.back().unwrap(), "line30");
    }

    #[test]
    fn files_are_named_by_phase_and_instance() {
        let out = CommandOutput {
            dir: Some("/o".into()),
            ..CommandOutput::default()
        };
        let (o, e) = sinks(&out, 0, "exec", 1, 1);
        assert_eq!(o.file().unwrap(), Path::new("/o/1-exec.stdout"));
        assert_eq!(e.file().unwrap(), Path::new("/o/1-exec.stderr"));
        let (o, _) = sinks(&out, 2, "build", 2, 3);
        assert_eq!(o.file().unwrap(), Path::new("/o/3-build.2.stdout"));
    }
}
