//! A verified I/O run's files in a crash state (`run <io workload> --set verify=...
//! --crash-states N`): every verified block read back and judged against what the run's
//! journal says it must hold after a power cut at the state's instant
//! (`FilesetJournal::expected_at`). A block older than its newest acknowledged write is an
//! acknowledged write lost; a torn, misplaced or damaged block is corruption (on a file
//! system that overwrites in place, a torn write destroys the acknowledged version it was
//! overwriting too).

use super::StateCheck;
use crate::integrity::PageCheck;
use crate::tpcc::LostCommits;
use bakeoff_core::verify::journal::{FilesetJournal, Journal};
use bakeoff_core::verify::Fault;
use bakeoff_engine::layout::Region;
use bakeoff_engine::verify::{check_file, Mismatch};
use std::path::{Path, PathBuf};

/// The tool name a block check's problems carry in the record.
pub const TOOL: &str = "verify";

/// What the blocks of one state hold, summed over the filesets.
#[derive(Default)]
struct Tally {
    acknowledged: u64,
    lost: u64,
    first_lost: Option<Mismatch>,
    corrupt: u64,
    first_corrupt: Option<Mismatch>,
}

impl Tally {
    fn add(&mut self, m: Mismatch) {
        let stale =
            matches!(m.fault, Fault::Generation { header, min, .. } if header.generation < min);
        let (count, first) = if stale {
            (&mut self.lost, &mut self.first_lost)
        } else {
            (&mut self.corrupt, &mut self.first_corrupt)
        };
        *count += 1;
        first.get_or_insert(m);
    }
}

/// Checks the verified files of `journal`, mounted under `root` (they were under `origin`
/// in the run), as after a crash at `crash_ns`; into `found`.
pub(super) fn check(
    root: &Path,
    origin: &Path,
    journal: &Journal,
    crash_ns: u64,
    found: &mut StateCheck,
) {
    let mut tally = Tally::default();
    for fileset in &journal.filesets {
        if let Err(e) = check_fileset(fileset, root, origin, crash_ns, &mut tally) {
            found.start_error = Some(e);
            return;
        }
    }
    found.lost = Some(LostCommits {
        checked: tally.acknowledged,
        lost: tally.lost,
        first_lost: None,
    });
    found.lost_first = tally
        .first_lost
        .map(|m| format!("acknowledged write lost: {m}"));
    found.integrity.push(PageCheck {
        tool: TOOL,
        problems: tally.corrupt,
        first: tally.first_corrupt.map(|m| m.to_string()),
    });
}

/// Where a file of the run is in the state.
fn in_state(path: &Path, root: &Path, origin: &Path) -> Result<PathBuf, String> {
    let relative = path.strip_prefix(origin).map_err(|_| {
        format!(
            "{} is not under the run's mount point {}: bakeoff cannot find it in the state",
            path.display(),
            origin.display()
        )
    })?;
    Ok(root.join(relative))
}

fn check_fileset(
    fileset: &FilesetJournal,
    root: &Path,
    origin: &Path,
    crash_ns: u64,
    tally: &mut Tally,
) -> Result<(), String> {
    let expected = fileset.expected_at(crash_ns);
    tally.acknowledged += expected.acknowledged.iter().filter(|&&a| a).count() as u64;
    for file in &fileset.files {
        let region = Region {
            path: in_state(&file.path, root, origin)?,
            base: file.base,
            size: file.size,
        };
        let first = file.first as usize;
        let range = |k: u64| expected.ranges.get(first + k as usize).copied();
        let never = || false;
        let checked = check_file(
            &region,
            fileset.grid,
            fileset.algorithm,
            &range,
            usize::MAX,
            &never,
        )
        .map_err(|e| e.to_string())?;
        for mut m in checked.first {
            // Named as the user knows it: the run's file, not the state's mount.
            m.path = file.path.clone();
            tally.add(m);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use bakeoff_core::plan::{Algorithm, BlockGrid};
    use bakeoff_core::verify::journal::{JournalFile, JournalSync, JournalWrite};
    use bakeoff_core::verify::stamp;
    use std::os::unix::fs::FileExt;

    const BS: u64 = 8192;

    /// A file of 4 blocks under `origin/data`: blocks 0, 1 at generation 0, block 2 at 1,
    /// block 3 at 2; the journal: block 2's generation 1 and block 3's generation 2 synced.
    fn scene(dir: &Path) -> Journal {
        let path = dir.join("data");
        let file = std::fs::File::create(&path).unwrap();
        for (k, generation) in [0u64, 0, 1, 2].into_iter().enumerate() {
            let mut block = vec![7u8; BS as usize];
            let offset = k as u64 * BS;
            stamp(&mut block, offset, generation, Algorithm::Crc32c);
            file.write_all_at(&block, offset).unwrap();
        }
        let write = |block, generation, at| JournalWrite {
            block,
            generation,
            started_ns: at,
            completed_ns: at + 5,
            durable: false,
        };
        Journal {
            filesets: vec![FilesetJournal {
                name: "data".into(),
                algorithm: Algorithm::Crc32c,
                grid: BlockGrid {
                    block_bytes: BS,
                    offset: 0,
                },
                files: vec![JournalFile {
                    path,
                    base: 0,
                    size: 4 * BS,
                    first: 0,
                    blocks: 4,
                }],
                writes: vec![write(2, 1, 10), write(3, 1, 20), write(3, 2, 30)],
                syncs: vec![JournalSync {
                    file: 0,
                    called_ns: 40,
                    returned_ns: 50,
                }],
            }],
        }
    }

    fn checked(root: &Path, journal: &Journal, crash_ns: u64) -> StateCheck {
        let mut found = StateCheck::new();
        check(root, root, journal, crash_ns, &mut found);
        found.conclude()
    }

    #[test]
    fn blocks_holding_what_was_acknowledged_are_clean() {
        let dir = tempfile::tempdir().unwrap();
        let journal = scene(dir.path());
        let found = checked(dir.path(), &journal, 60);
        assert_eq!(found.outcome, super::super::Outcome::Clean, "{found:?}");
        let lost = found.lost.unwrap();
        assert_eq!((lost.checked, lost.lost), (2, 0));
    }

    #[test]
    fn a_block_older_than_its_acknowledged_write_is_a_lost_write_named_by_its_offset() {
        let dir = tempfile::tempdir().unwrap();
        let journal = scene(dir.path());
        // Block 3 back at generation 1: its acknowledged generation 2 is lost.
        let mut block = vec![7u8; BS as usize];
        stamp(&mut block, 3 * BS, 1, Algorithm::Crc32c);
        let file = std::fs::OpenOptions::new()
            .write(true)
            .open(dir.path().join("data"))
            .unwrap();
        file.write_all_at(&block, 3 * BS).unwrap();
        let found = checked(dir.path(), &journal, 60);
        assert_eq!(found.outcome, super::super::Outcome::LostCommits);
        assert_eq!(found.lost.as_ref().map(|l| l.lost), Some(1));
        let line = found.lost_first.unwrap();
        assert!(line.contains("offset 24576"), "{line}");
        // Before the sync returned nothing was acknowledged: the same file is clean.
        assert_eq!(
            checked(dir.path(), &journal, 45).outcome,
            super::super::Outcome::Clean
        );
    }

    #[test]
    fn a_flipped_byte_is_corruption_naming_the_offset_and_what_was_expected() {
        let dir = tempfile::tempdir().unwrap();
        let journal = scene(dir.path());
        let file = std::fs::OpenOptions::new()
            .write(true)
            .open(dir.path().join("data"))
            .unwrap();
        file.write_all_at(&[0xff], BS + 100).unwrap();
        let found = checked(dir.path(), &journal, 60);
        assert_eq!(found.outcome, super::super::Outcome::Corrupt);
        let first = found.integrity[0].first.clone().unwrap();
        assert!(first.contains("offset 8192"), "{first}");
        assert!(first.contains("generation 0"), "{first}");
    }

    #[test]
    fn a_file_outside_the_runs_mount_point_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let journal = scene(dir.path());
        let mut found = StateCheck::new();
        check(
            dir.path(),
            Path::new("/elsewhere"),
            &journal,
            60,
            &mut found,
        );
        let e = found.start_error.unwrap();
        assert!(
            e.contains("not under the run's mount point /elsewhere"),
            "{e}"
        );
    }
}
