//! Which PostgreSQL: the highest `/usr/lib/postgresql/<major>/bin` (Debian's layout), or the
//! directory the user gives with `pg.bindir`, and the version its `postgres --version` prints.

use super::PgError;
use bakeoff_stack::exec::{Cmd, Exec, PROBE_TIMEOUT};
use std::path::{Path, PathBuf};

/// Where Debian's `postgresql-<major>` packages put their binaries.
pub const DEBIAN_ROOT: &str = "/usr/lib/postgresql";

/// A PostgreSQL installation's binaries.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Binaries {
    /// The directory holding `postgres`, `initdb`, `pg_ctl` and `pgbench`.
    pub dir: PathBuf,
    /// What `postgres --version` prints (`postgres (PostgreSQL) 15.18 (Debian 15.18-0+deb12u1)`).
    pub version: String,
    /// The major version (15).
    pub major: u32,
}

impl Binaries {
    /// The binaries in `bindir`, or the highest Debian version when `None`.
    pub fn find(bindir: Option<&Path>) -> Result<Binaries, PgError> {
        let dir = match bindir {
            Some(dir) => dir.to_path_buf(),
            None => highest_debian(Path::new(DEBIAN_ROOT))?,
        };
        for tool in ["postgres", "initdb", "pg_ctl", "pgbench"] {
            if !dir.join(tool).is_file() {
                return Err(PgError::Binaries(format!(
                    "{} has no `{tool}`: install the Debian package postgresql, or name the \
                     directory of a PostgreSQL's binaries with pg.bindir=DIR",
                    dir.display()
                )));
            }
        }
        let dir = std::fs::canonicalize(&dir).map_err(PgError::io("resolving", &dir))?;
        let version = Exec::default()
            .run_cmd(&Cmd::new(&tool(&dir, "postgres"), &["--version"]).timeout(PROBE_TIMEOUT))
            .map_err(|e| PgError::Binaries(format!("{e}: is {} PostgreSQL?", dir.display())))?
            .trim()
            .to_string();
        let major = major_of(&version).ok_or_else(|| {
            PgError::Binaries(format!(
                "{}: `postgres --version` printed {version:?}, not a PostgreSQL version",
                dir.display()
            ))
        })?;
        Ok(Binaries {
            dir,
            version,
            major,
        })
    }

    /// The path of one of its programs, as text for a command line.
    pub fn tool(&self, name: &str) -> String {
        tool(&self.dir, name)
    }
}

fn tool(dir: &Path, name: &str) -> String {
    dir.join(name).to_string_lossy().into_owned()
}

/// `<root>/<highest major>/bin`.
fn highest_debian(root: &Path) -> Result<PathBuf, PgError> {
    let missing = || {
        PgError::Binaries(format!(
            "no PostgreSQL under {}: install the Debian package postgresql, or name the \
             directory of its binaries with pg.bindir=DIR",
            root.display()
        ))
    };
    let entries = std::fs::read_dir(root).map_err(|_| missing())?;
    entries
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let major: u32 = e.file_name().to_str()?.parse().ok()?;
            let bin = e.path().join("bin");
            bin.join("postgres").is_file().then_some((major, bin))
        })
        .max_by_key(|(major, _)| *major)
        .map(|(_, bin)| bin)
        .ok_or_else(missing)
}

/// 15 from `postgres (PostgreSQL) 15.18 (Debian ...)`, 9 from `... 9.6.24`, 16 from `16beta1`.
pub fn major_of(version: &str) -> Option<u32> {
    let number = version
        .split_whitespace()
        .find(|w| w.chars().next().is_some_and(|c| c.is_ascii_digit()))?;
    let digits: String = number.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_major_version_is_the_first_number() {
        let v = "postgres (PostgreSQL) 15.18 (Debian 15.18-0+deb12u1)";
        assert_eq!(major_of(v), Some(15));
        assert_eq!(major_of("postgres (PostgreSQL) 9.6.24"), Some(9));
        assert_eq!(major_of("pgbench (PostgreSQL) 16beta1"), Some(16));
        assert_eq!(major_of("no version"), None);
    }

    #[test]
    fn the_highest_installed_major_wins_and_a_missing_root_says_what_to_install() {
        let root = tempfile::tempdir().unwrap();
        for major in ["9", "13", "15", "notes"] {
            let bin = root.path().join(major).join("bin");
            std::fs::create_dir_all(&bin).unwrap();
            std::fs::write(bin.join("postgres"), "").unwrap();
        }
        std::fs::create_dir_all(root.path().join("17/bin")).unwrap(); // no server in it
        assert_eq!(
            highest_debian(root.path()).unwrap(),
            root.path().join("15/bin")
        );
        let err = highest_debian(&root.path().join("none")).unwrap_err();
        assert!(err
            .to_string()
            .contains("install the Debian package postgresql"));
        let err = Binaries::find(Some(&root.path().join("13/bin"))).unwrap_err();
        assert!(err.to_string().contains("has no `initdb`"), "{err}");
    }
}
