//! Which MariaDB: Debian's `mariadb-server` package puts the server in `/usr/sbin` and its
//! tools in `/usr/bin`; the version is what `mariadbd --version` prints.

use super::MyError;
use bakeoff_stack::exec::{Cmd, Exec, PROBE_TIMEOUT};
use std::path::{Path, PathBuf};

/// Where Debian puts the server.
pub const SERVER: &str = "/usr/sbin/mariadbd";
/// Where Debian puts the tools (`mariadb-install-db`, `mariadb-admin`).
pub const TOOLS: &str = "/usr/bin";

/// A MariaDB installation's programs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Binaries {
    /// The server, canonical (as `/proc/PID/exe` shows it).
    pub mariadbd: PathBuf,
    /// `mariadb-install-db`, which creates a data directory.
    pub install_db: PathBuf,
    /// `mariadb-admin`, which shuts a server down.
    pub admin: PathBuf,
    /// What `mariadbd --version` prints (`mariadbd  Ver 10.11.14-MariaDB-0+deb12u2 for ...`).
    pub version: String,
}

impl Binaries {
    /// Debian's MariaDB, or an error saying what to install.
    pub fn find() -> Result<Binaries, MyError> {
        Binaries::find_in(Path::new(SERVER), Path::new(TOOLS))
    }

    /// The server `server` and the tools in `tools`.
    pub fn find_in(server: &Path, tools: &Path) -> Result<Binaries, MyError> {
        let install_db = tools.join("mariadb-install-db");
        let admin = tools.join("mariadb-admin");
        for program in [server, &install_db, &admin] {
            if !program.is_file() {
                return Err(MyError::Binaries(format!(
                    "there is no {}: install the Debian package mariadb-server",
                    program.display()
                )));
            }
        }
        let mariadbd = std::fs::canonicalize(server).map_err(MyError::io("resolving", server))?;
        let text = |p: &Path| p.to_string_lossy().into_owned();
        let version = Exec::default()
            .run_cmd(&Cmd::new(&text(&mariadbd), &["--version"]).timeout(PROBE_TIMEOUT))
            .map_err(|e| MyError::Binaries(format!("{e}: is {} MariaDB?", server.display())))?
            .trim()
            .to_string();
        if !version.contains("MariaDB") {
            return Err(MyError::Binaries(format!(
                "{}: `--version` printed {version:?}, not a MariaDB version: install the Debian \
                 package mariadb-server",
                server.display()
            )));
        }
        Ok(Binaries {
            mariadbd,
            install_db,
            admin,
            version,
        })
    }

    /// A program's path as text for a command line.
    pub fn path(program: &Path) -> String {
        program.to_string_lossy().into_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_program_says_what_to_install() {
        let dir = tempfile::tempdir().unwrap();
        let server = dir.path().join("mariadbd");
        std::fs::write(&server, "").unwrap();
        let err = Binaries::find_in(&server, dir.path()).unwrap_err();
        let text = err.to_string();
        assert!(text.contains("mariadb-install-db"), "{text}");
        assert!(
            text.contains("install the Debian package mariadb-server"),
            "{text}"
        );
        let err = Binaries::find_in(&dir.path().join("none"), dir.path()).unwrap_err();
        assert!(err.to_string().contains("none"), "{err}");
    }
}
