//! `bakeoff capture`'s arguments, checked once into typed values before anything is attached:
//! a wrong directory, pid, size or output is exit 2 with nothing started.

use crate::cli::capture::CaptureArgs;
use crate::exit::{clip, failure, Code, Failure};
use bakeoff_core::units::{parse_duration, parse_size};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Whose calls to capture.
#[derive(Debug, PartialEq)]
pub enum Whom {
    /// Running processes and what they start.
    Pids(Vec<u32>),
    /// A cgroup's processes and what they start.
    Cgroup(PathBuf),
    /// A command bakeoff starts, and its children.
    Command(Vec<String>),
}

/// A capture, as checked.
#[derive(Debug)]
pub struct CapturePlan {
    /// Whose calls.
    pub whom: Whom,
    /// The captured trees: (name, canonical directory).
    pub roots: Vec<(String, PathBuf)>,
    /// How long (a running process) or the longest a command may run.
    pub duration: Option<Duration>,
    /// The trace file.
    pub out: PathBuf,
    /// Replace paths.
    pub anonymize: bool,
    /// The ring buffer's size.
    pub buffer_bytes: u64,
    /// No progress output.
    pub quiet: bool,
}

/// The smallest ring buffer accepted: a burst of a few thousand calls.
const MIN_BUFFER: u64 = 64 << 10;

/// Checks every argument; exit 2 names the first that is wrong.
pub fn check(args: CaptureArgs) -> Result<CapturePlan, Failure> {
    let usage = |msg: String| failure(Code::Usage, msg);
    let whom = whom(&args).map_err(usage)?;
    let roots = (args.under.iter())
        .map(|u| root(u))
        .collect::<Result<Vec<_>, _>>()
        .map_err(usage)?;
    distinct_names(&roots).map_err(usage)?;
    let duration = (args.duration.as_deref())
        .map(|d| parse_duration(d).map_err(|e| format!("--duration {}: {e}", clip(d))))
        .transpose()
        .map_err(usage)?;
    let buffer_bytes = buffer(&args.buffer).map_err(usage)?;
    let out = output(&args.out, &roots).map_err(usage)?;
    Ok(CapturePlan {
        whom,
        roots,
        duration,
        out,
        anonymize: args.anonymize,
        buffer_bytes,
        quiet: args.quiet,
    })
}

fn whom(args: &CaptureArgs) -> Result<Whom, String> {
    if !args.command.is_empty() {
        return Ok(Whom::Command(args.command.clone()));
    }
    if let Some(cgroup) = &args.cgroup {
        if !cgroup.join("cgroup.procs").is_file() {
            return Err(format!(
                "--cgroup {}: not a cgroup directory (it has no cgroup.procs)",
                cgroup.display()
            ));
        }
        return Ok(Whom::Cgroup(cgroup.clone()));
    }
    for pid in &args.pid {
        if !Path::new(&format!("/proc/{pid}")).exists() {
            return Err(format!("--pid {pid}: no such process (see `ps -e`)"));
        }
    }
    Ok(Whom::Pids(args.pid.clone()))
}

/// `[NAME=]DIR` into a name and a canonical directory.
fn root(text: &str) -> Result<(String, PathBuf), String> {
    let (name, dir) = match text.split_once('=') {
        Some((name, dir)) if !name.is_empty() && !name.contains('/') => (Some(name), dir),
        _ => (None, text),
    };
    let canonical = std::fs::canonicalize(dir)
        .map_err(|e| format!("--under {}: {e} (give an existing directory)", clip(dir)))?;
    if !canonical.is_dir() {
        return Err(format!("--under {}: not a directory", clip(dir)));
    }
    let name = name.map(str::to_string).unwrap_or_else(|| {
        (canonical.file_name())
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "root".into())
    });
    Ok((name, canonical))
}

fn distinct_names(roots: &[(String, PathBuf)]) -> Result<(), String> {
    for (i, (name, dir)) in roots.iter().enumerate() {
        for (other, other_dir) in &roots[..i] {
            if other == name {
                return Err(format!(
                    "--under: two trees are named {name:?} ({} and {}): name them, as --under data=DIR",
                    other_dir.display(),
                    dir.display()
                ));
            }
            if dir.starts_with(other_dir) || other_dir.starts_with(dir) {
                return Err(format!(
                    "--under {} and {}: one holds the other; give the outer one",
                    other_dir.display(),
                    dir.display()
                ));
            }
        }
    }
    Ok(())
}

fn buffer(text: &str) -> Result<u64, String> {
    let bytes = parse_size(text).map_err(|e| format!("--buffer {}: {e}", clip(text)))?;
    if bytes < MIN_BUFFER || !bytes.is_power_of_two() {
        return Err(format!(
            "--buffer {}: the kernel's ring buffer is a power of two of at least 64k (as 16m, 32m, 64m)",
            clip(text)
        ));
    }
    Ok(bytes)
}

/// The output file: its directory must exist and be writable, and it must not be in a captured
/// tree (the capture would record its own writes).
fn output(out: &Path, roots: &[(String, PathBuf)]) -> Result<PathBuf, String> {
    let file = writable_file("--out", out)?;
    if let Some((_, root)) = roots.iter().find(|(_, root)| file.starts_with(root)) {
        return Err(format!(
            "--out {}: it is under --under {} and the capture would record its own writes: write it elsewhere",
            out.display(),
            root.display()
        ));
    }
    Ok(file)
}

/// The file `out` (given as `flag`) in canonical form, checked writable before anything runs:
/// a file name in an existing directory this process can create files in.
pub fn writable_file(flag: &str, out: &Path) -> Result<PathBuf, String> {
    let parent = match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let dir = std::fs::canonicalize(&parent)
        .map_err(|e| format!("{flag} {}: its directory: {e}", out.display()))?;
    let name = (out.file_name())
        .filter(|_| !out.is_dir())
        .ok_or_else(|| format!("{flag} {}: is a directory; name a file", out.display()))?;
    let probe = tempfile::Builder::new()
        .prefix(".bakeoff-")
        .tempfile_in(&dir);
    probe.map_err(|e| {
        format!(
            "{flag} {}: cannot write in {}: {e}",
            out.display(),
            dir.display()
        )
    })?;
    Ok(dir.join(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_root_is_named_by_its_directory_unless_named() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().to_str().unwrap();
        let (name, canonical) = root(path).unwrap();
        assert_eq!(canonical, std::fs::canonicalize(dir.path()).unwrap());
        assert_eq!(
            Some(name.as_str()),
            canonical.file_name().and_then(|n| n.to_str())
        );
        assert_eq!(root(&format!("data={path}")).unwrap().0, "data");
        assert!(root("/no/such/dir")
            .unwrap_err()
            .contains("--under /no/such/dir"));
    }

    #[test]
    fn nested_or_same_named_trees_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let inner = dir.path().join("inner");
        std::fs::create_dir(&inner).unwrap();
        let a = ("a".to_string(), dir.path().to_path_buf());
        let b = ("b".to_string(), inner);
        assert!(distinct_names(&[a.clone(), b])
            .unwrap_err()
            .contains("holds"));
        let c = ("a".to_string(), PathBuf::from("/elsewhere"));
        assert!(distinct_names(&[a, c]).unwrap_err().contains("named \"a\""));
    }

    #[test]
    fn the_buffer_is_a_power_of_two_of_at_least_64k() {
        assert_eq!(buffer("32m"), Ok(32 << 20));
        assert!(buffer("48m").is_err());
        assert!(buffer("4k").is_err());
        assert!(buffer("lots").unwrap_err().contains("--buffer lots"));
    }

    #[test]
    fn the_output_may_not_be_in_a_captured_tree() {
        let dir = tempfile::tempdir().unwrap();
        let roots = [(
            "data".to_string(),
            std::fs::canonicalize(dir.path()).unwrap(),
        )];
        let inside = dir.path().join("t.trace");
        assert!(output(&inside, &roots)
            .unwrap_err()
            .contains("its own writes"));
        let elsewhere = tempfile::tempdir().unwrap();
        let out = elsewhere.path().join("t.trace");
        assert_eq!(output(&out, &roots).unwrap().file_name(), out.file_name());
        assert!(output(Path::new("/no/such/dir/t.trace"), &roots).is_err());
    }
}
