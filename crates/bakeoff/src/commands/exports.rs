//! The files `run` and `compare` export to (hyperfine's `--export-*` convention, `-` for
//! stdout). Each is created before any work, so a bad path fails at once instead of losing a
//! finished run, and written atomically at the end: a temporary file in the same directory,
//! synced, then renamed over the path.

use crate::exit::{clip, failure, Code, Failure};
use bakeoff_report::Exporter;
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use tempfile::NamedTempFile;

/// An export whose file already exists as a temporary file beside its final path.
pub struct Export {
    /// The format to write.
    pub exporter: &'static Exporter,
    flag: &'static str,
    path: PathBuf,
    /// `None` for stdout.
    temp: Option<NamedTempFile>,
}

/// The directory a file is in (`.` for a bare file name).
pub fn directory_of(path: &Path) -> &Path {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    }
}

fn is_stdout(path: &Path) -> bool {
    path == Path::new("-")
}

/// Opens every requested export (`--export-<format>` flags and their paths), or fails before
/// anything runs: two exports to stdout or to the same file are a usage error; a file that
/// cannot be created is an environment error.
pub fn open(requested: &[(&'static Exporter, PathBuf)]) -> Result<Vec<Export>, Failure> {
    for (i, (a, pa)) in requested.iter().enumerate() {
        if let Some((b, _)) = requested[..i].iter().find(|(_, pb)| pb == pa) {
            let target = if is_stdout(pa) {
                "stdout (-)".to_string()
            } else {
                clip(&pa.display().to_string())
            };
            return Err(failure(
                Code::Usage,
                format!(
                    "{} and {} both write to {target}: give one of them another file",
                    b.flag, a.flag
                ),
            ));
        }
    }
    requested
        .iter()
        .map(|(e, p)| Export::create(e, p))
        .collect()
}

/// Prints `human` (to stderr when an export takes stdout, so the export stays clean), then
/// writes each export as `render` gives it.
pub fn deliver(
    human: &str,
    exports: Vec<Export>,
    render: impl Fn(&Exporter) -> String,
) -> Result<(), Failure> {
    if exports.iter().any(|e| e.temp.is_none()) {
        eprint!("{human}");
    } else {
        print!("{human}");
    }
    for export in exports {
        let text = render(export.exporter);
        export.finish(&text)?;
    }
    Ok(())
}

/// A dry run's output: the plan as `human` reads it, and its JSON into `--export-json`
/// (`--json`) if asked for (`-`: stdout, the plan then on stderr). Every other export is
/// removed unwritten: a dry run makes no files but the plan.
pub fn deliver_plan(human: &str, exports: Vec<Export>, json: &str) -> Result<(), Failure> {
    let json_exports = exports
        .into_iter()
        .filter(|e| e.exporter.flag == "--export-json")
        .collect();
    deliver(human, json_exports, |_| json.to_string())
}

impl Export {
    fn create(exporter: &'static Exporter, path: &Path) -> Result<Export, Failure> {
        let flag = exporter.flag;
        let shown = clip(&path.display().to_string());
        if is_stdout(path) {
            return Ok(Export {
                exporter,
                flag,
                path: path.to_path_buf(),
                temp: None,
            });
        }
        if path.is_dir() {
            return Err(failure(
                Code::Usage,
                format!("{flag} {shown} is a directory: give a file name"),
            ));
        }
        let name = path.file_name().ok_or_else(|| {
            failure(
                Code::Usage,
                format!("{flag} {shown} names no file: give a file name"),
            )
        })?;
        let dir = directory_of(path);
        let dir_shown = clip(&dir.display().to_string());
        if !dir.is_dir() {
            // An output path the user wrote that cannot be created is a usage error (exit 2).
            return Err(failure(
                Code::Usage,
                format!("cannot create {flag} {shown}: there is no directory {dir_shown}"),
            ));
        }
        let temp = tempfile::Builder::new()
            .prefix(&format!(".{}.", name.to_string_lossy()))
            .suffix(".tmp")
            // 0644 after the umask, as a plain `File::create` would make it.
            .permissions(std::fs::Permissions::from_mode(0o666))
            .tempfile_in(dir)
            .map_err(|e| {
                // tempfile's message names the temporary file; the user knows only the path.
                let e = std::io::Error::from(e.kind());
                failure(
                    Code::Usage,
                    format!("cannot create {flag} {shown}: {e} (is {dir_shown} writable?)"),
                )
            })?;
        Ok(Export {
            exporter,
            flag,
            path: path.to_path_buf(),
            temp: Some(temp),
        })
    }

    /// Writes `text` to stdout, or into the temporary file and renames it into place.
    pub fn finish(self, text: &str) -> Result<(), Failure> {
        let io = |what: &str, e: std::io::Error| {
            failure(
                Code::Io,
                format!("{what} {} {}: {e}", self.flag, self.path.display()),
            )
        };
        let Some(mut temp) = self.temp else {
            return std::io::stdout()
                .write_all(text.as_bytes())
                .map_err(|e| io("writing", e));
        };
        temp.write_all(text.as_bytes())
            .and_then(|()| temp.as_file().sync_all())
            .map_err(|e| io("writing", e))?;
        temp.persist(&self.path)
            .map_err(|e| io("renaming into place", e.error))?;
        Ok(())
    }
}

/// Writes `text` to `path` so that a crash leaves either the old file or the whole new one.
pub fn write_atomically(path: &Path, text: &str) -> Result<(), Failure> {
    let io = |e: std::io::Error| failure(Code::Io, format!("writing {}: {e}", path.display()));
    let dir = directory_of(path);
    std::fs::create_dir_all(dir).map_err(io)?;
    let tmp = path.with_extension("tmp~");
    let mut f = std::fs::File::create(&tmp).map_err(io)?;
    std::io::Write::write_all(&mut f, text.as_bytes()).map_err(io)?;
    f.sync_all().map_err(io)?;
    std::fs::rename(&tmp, path).map_err(io)?;
    std::fs::File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(io)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(flag: &str, path: &Path) -> (&'static Exporter, PathBuf) {
        let exporter = bakeoff_report::EXPORTERS.iter().find(|e| e.flag == flag);
        (exporter.unwrap(), path.to_path_buf())
    }

    #[test]
    fn files_appear_only_when_finished_and_stdout_twice_is_refused() {
        let d = tempfile::tempdir().unwrap();
        let path = d.path().join("r.json");
        let exports = open(&[req("--export-json", &path)]).unwrap();
        assert!(!path.exists(), "nothing at the path before the end");
        for e in exports {
            e.finish("{}\n").unwrap();
        }
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "{}\n");
        assert_eq!(
            std::fs::read_dir(d.path()).unwrap().count(),
            1,
            "no temp left"
        );

        let dash = Path::new("-");
        let err = open(&[req("--export-json", dash), req("--export-timeseries", dash)])
            .err()
            .unwrap();
        assert_eq!(err.code, Code::Usage);
        assert!(err.error.to_string().contains("both write to stdout"));

        let err = open(&[req("--export-csv", Path::new("/nonexistent/x.csv"))])
            .err()
            .unwrap();
        assert_eq!(
            err.code,
            Code::Usage,
            "an uncreatable output path is a usage error"
        );
        assert!(err.error.to_string().contains("/nonexistent"));
        let dropped = open(&[req("--export-csv", &d.path().join("x.csv"))]);
        drop(dropped);
        assert_eq!(
            std::fs::read_dir(d.path()).unwrap().count(),
            1,
            "an export dropped unfinished leaves nothing"
        );
    }
}
