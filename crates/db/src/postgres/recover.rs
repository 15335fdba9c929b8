//! A cluster as a power cut left it: started again (PostgreSQL replays its WAL, crash
//! recovery), then its own integrity checks, `pg_amcheck` on the running server (heap and
//! B-tree pages, every index entry against its table) and `pg_checksums --check` on the stopped
//! one (every page's checksum, where the cluster was made with `data_checksums`).

use super::client::ROLE;
use super::options::PgOptions;
use super::settings::{self, PORT};
use super::{Binaries, PgError, PgServer};
use crate::integrity::PageCheck;
use bakeoff_stack::exec::{Cmd, Exec, RunAs};
use bakeoff_stack::Stack;
use std::path::Path;
use std::time::Duration;

/// How long one integrity check may take.
const CHECK_TIMEOUT: Duration = Duration::from_secs(600);

impl PgServer {
    /// Starts the cluster already in `opts.data_dir` (a crash state's copy, mounted on
    /// `stack`; its lock file is removed, since no server runs on a copy): `pg_ctl start` runs
    /// crash recovery first. An error is the database failing to
    /// start from that state, with the end of its log.
    pub fn start_existing(stack: &mut Stack, opts: PgOptions) -> Result<PgServer, PgError> {
        let version = opts.data_dir.join("PG_VERSION");
        if !version.is_file() {
            return Err(PgError::Environment(format!(
                "{} holds no PostgreSQL cluster (no PG_VERSION): nothing to recover",
                opts.data_dir.display()
            )));
        }
        // The lock file names the crashed server's postmaster, whose number may now be
        // another process's (PostgreSQL would then refuse to start): no server runs on a copy.
        let lock = opts.data_dir.join("postmaster.pid");
        match std::fs::remove_file(&lock) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(PgError::io("removing", &lock)(e));
            }
            _ => {}
        }
        let mut server = PgServer::unstarted(stack, opts)?;
        // The copy's settings name the crashed server's socket directory; this server's
        // (its own directory, sized for now), appended, win.
        let auto = server.data_dir().join("postgresql.auto.conf");
        let mut text = std::fs::read_to_string(&auto).map_err(PgError::io("reading", &auto))?;
        text.push_str(&settings::render(server.settings()));
        std::fs::write(&auto, text).map_err(PgError::io("writing", &auto))?;
        server.make_socket_dir(stack)?;
        server.launch(stack)?;
        Ok(server)
    }

    /// `pg_amcheck` over the benchmark database (installing the `amcheck` extension in it):
    /// every table's pages and every B-tree index, with each index entry looked up in its
    /// table (`--heapallindexed`).
    pub fn amcheck(&self) -> Result<PageCheck, PgError> {
        let socket = self.socket_dir().to_string_lossy().into_owned();
        let port = PORT.to_string();
        let args = [
            "-h",
            &socket,
            "-p",
            &port,
            "-U",
            ROLE,
            "--install-missing",
            "--heapallindexed",
            self.dbname(),
        ];
        let cmd = self.as_postgres("pg_amcheck", &args).timeout(CHECK_TIMEOUT);
        let out = Exec::default().output(&cmd)?;
        // 0: nothing found; 2: corruption reported on stdout; anything else: it could not check.
        match out.status {
            Some(0) => Ok(PageCheck {
                tool: "pg_amcheck",
                ..PageCheck::default()
            }),
            Some(2) => Ok(amcheck_report(&out.stdout)),
            _ => Err(PgError::Environment(format!(
                "pg_amcheck on database {} ({}) could not check it: {}",
                self.dbname(),
                out.describe(),
                out.stderr.trim()
            ))),
        }
    }
}

/// What `pg_amcheck` printed when it found corruption: one paragraph per problem, each
/// starting with `heap table` or `btree index` (or `error:` for a relation it could not read).
fn amcheck_report(stdout: &str) -> PageCheck {
    let problems: Vec<&str> = stdout
        .lines()
        .filter(|l| {
            let l = l.trim_start();
            l.starts_with("heap table") || l.starts_with("btree index") || l.contains("error:")
        })
        .collect();
    PageCheck {
        tool: "pg_amcheck",
        problems: problems.len().max(1) as u64,
        first: Some(
            (problems.first().copied())
                .unwrap_or(stdout.trim())
                .trim()
                .to_string(),
        ),
    }
}

/// `pg_checksums --check` on the stopped cluster in `data_dir` (as `user`): every page's
/// checksum. The cluster must have been made with `data_checksums`.
pub fn check_checksums(
    binaries: &Binaries,
    user: RunAs,
    data_dir: &Path,
) -> Result<PageCheck, PgError> {
    let data = data_dir.to_string_lossy().into_owned();
    let cmd = Cmd::new(&binaries.tool("pg_checksums"), &["--check", "-D", &data])
        .user(Some(user))
        .timeout(CHECK_TIMEOUT);
    let out = Exec::default().output(&cmd)?;
    let text = format!("{}\n{}", out.stdout, out.stderr);
    let bad = bad_checksums(&text);
    match (out.status, bad) {
        (Some(0), _) => Ok(PageCheck {
            tool: "pg_checksums",
            ..PageCheck::default()
        }),
        (Some(1), Some(bad)) if bad > 0 => Ok(PageCheck {
            tool: "pg_checksums",
            problems: bad,
            first: (text.lines())
                .find(|l| l.contains("checksum verification failed"))
                .map(|l| l.trim().to_string()),
        }),
        _ => Err(PgError::Environment(format!(
            "pg_checksums --check on {} ({}) could not check it: {} (a cluster made without \
             data_checksums cannot be checked)",
            data_dir.display(),
            out.describe(),
            text.trim()
        ))),
    }
}

/// The count in pg_checksums's `Bad checksums:  N` line.
fn bad_checksums(text: &str) -> Option<u64> {
    text.lines()
        .find_map(|l| l.trim().strip_prefix("Bad checksums:"))
        .and_then(|n| n.trim().parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pg_checksums_bad_count_is_read_from_its_summary() {
        let out = "pg_checksums: error: checksum verification failed in file \"base/5/16384\", \
                   block 3: calculated checksum 1A2B but block contains 3C4D\n\
                   Checksum operation completed\nFiles scanned:   946\nBlocks scanned:  2822\n\
                   Bad checksums:  1\nData checksum version: 1\n";
        assert_eq!(bad_checksums(out), Some(1));
        assert_eq!(bad_checksums("Files scanned: 3\n"), None);
    }

    #[test]
    fn pg_amcheck_problems_are_its_paragraphs() {
        let out = "heap table \"bakeoff.public.orders\", block 4, offset 2:\n    \
                   line pointer redirection to item at offset 9 exceeds maximum offset 8\n\
                   btree index \"bakeoff.public.orders_pkey\":\n    \
                   ERROR:  index tuple size does not equal lp_len\n";
        let check = amcheck_report(out);
        assert_eq!(check.problems, 2);
        assert_eq!(
            check.first.as_deref(),
            Some("heap table \"bakeoff.public.orders\", block 4, offset 2:")
        );
        assert!(!check.clean());
    }
}
