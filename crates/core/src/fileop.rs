//! File operations as steps, and the directory trees they work on (filebench's filesets with
//! `entries`, `dirwidth`, `prealloc`): what each operation does, and which files exist, where,
//! and how large before a run. Pure: the layout writes what [`Tree::of`] says, and every
//! worker computes the same tree from the plan without asking the file system.

use crate::op::OpKind;
use rand_core::{Rng, SeedableRng};
use rand_distr::{Distribution, Gamma};
use rand_xorshift::XorShiftRng;
use serde::{Deserialize, Serialize};

/// One file operation of a step (`{ file = "create" }`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FileOp {
    /// Create a file that does not exist (`O_CREAT|O_EXCL`); it becomes the open file.
    Create,
    /// Delete (unlink) an existing file that is not open.
    Delete,
    /// Open an existing file; it becomes the open file (an open one is closed first).
    Open,
    /// Close the open file.
    Close,
    /// Stat an existing file by path (NFS `GETATTR`, `LOOKUP`).
    Stat,
    /// Set the times of an existing file by path (NFS `SETATTR`).
    Setattr,
    /// List every entry of one directory of the tree.
    Readdir,
    /// Rename an existing file that is not open to a name that does not exist.
    Rename,
    /// Append `bs` bytes (or, with `random`, 1 to `bs`) at the end of the open file.
    Append,
    /// Read the open file from start to end in `bs` chunks.
    ReadWhole,
    /// Write the open file from start to its planned size in `bs` chunks.
    WriteWhole,
    /// `fsync` the open file.
    Fsync,
    /// Read `bs` bytes at a random offset of the open file.
    Read,
    /// Write `bs` bytes at a random offset of the open file.
    Write,
}

impl FileOp {
    /// Every operation, in the order the docs list them.
    pub const ALL: [FileOp; 14] = [
        FileOp::Create,
        FileOp::Delete,
        FileOp::Open,
        FileOp::Close,
        FileOp::Stat,
        FileOp::Setattr,
        FileOp::Readdir,
        FileOp::Rename,
        FileOp::Append,
        FileOp::ReadWhole,
        FileOp::WriteWhole,
        FileOp::Fsync,
        FileOp::Read,
        FileOp::Write,
    ];

    /// The name written in `{ file = "..." }`.
    pub fn name(self) -> &'static str {
        match self {
            FileOp::Create => "create",
            FileOp::Delete => "delete",
            FileOp::Open => "open",
            FileOp::Close => "close",
            FileOp::Stat => "stat",
            FileOp::Setattr => "setattr",
            FileOp::Readdir => "readdir",
            FileOp::Rename => "rename",
            FileOp::Append => "append",
            FileOp::ReadWhole => "read_whole",
            FileOp::WriteWhole => "write_whole",
            FileOp::Fsync => "fsync",
            FileOp::Read => "read",
            FileOp::Write => "write",
        }
    }

    /// The operation called `name`.
    pub fn from_name(name: &str) -> Option<FileOp> {
        FileOp::ALL.into_iter().find(|o| o.name() == name)
    }

    /// The kind its counts and latencies are reported under.
    pub fn kind(self) -> OpKind {
        match self {
            FileOp::Create => OpKind::Create,
            FileOp::Delete => OpKind::Delete,
            FileOp::Open => OpKind::Open,
            FileOp::Close => OpKind::Close,
            FileOp::Stat => OpKind::Stat,
            FileOp::Setattr => OpKind::Setattr,
            FileOp::Readdir => OpKind::Readdir,
            FileOp::Rename => OpKind::Rename,
            FileOp::Append => OpKind::Append,
            FileOp::ReadWhole => OpKind::ReadFile,
            FileOp::WriteWhole => OpKind::WriteFile,
            FileOp::Fsync => OpKind::Sync,
            FileOp::Read => OpKind::Read,
            FileOp::Write => OpKind::Write,
        }
    }

    /// It changes which files exist (so threads sharing the tree must own disjoint files).
    pub fn changes_names(self) -> bool {
        matches!(self, FileOp::Create | FileOp::Delete | FileOp::Rename)
    }

    /// It writes data.
    pub fn writes(self) -> bool {
        matches!(
            self,
            FileOp::Create | FileOp::Append | FileOp::WriteWhole | FileOp::Fsync | FileOp::Write
        )
    }

    /// It works on the open file of its fileset (see `docs/workloads.md` for what happens when
    /// none is open, and in a mix).
    pub fn needs_open_file(self) -> bool {
        matches!(
            self,
            FileOp::Append
                | FileOp::ReadWhole
                | FileOp::WriteWhole
                | FileOp::Fsync
                | FileOp::Read
                | FileOp::Write
        )
    }
}

/// One file-operation step.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileStep {
    /// What it does.
    pub op: FileOp,
    /// Index of the (tree) fileset it works on.
    pub fileset: usize,
    /// Bytes per read or write call (whole-file chunks; read, write and append sizes).
    pub bs: u64,
    /// An append of a uniformly random size from 1 to `bs` bytes (filebench
    /// `appendfilerand`: a mean of `bs / 2`), instead of exactly `bs`.
    #[serde(default)]
    pub random: bool,
}

/// How the sizes of a tree's files spread around their mean.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum SizeDist {
    /// Every file has the mean size.
    Fixed,
    /// Gamma-distributed with this shape and the mean size (filebench 1.4's filesets: shape
    /// 1.5, its `sizegamma=1500`): many small files and a long tail of large ones.
    Gamma {
        /// Shape k (the scale is mean / k).
        shape: f64,
    },
}

/// A fileset laid out as a directory tree (see the module doc).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TreeSpec {
    /// Entries per directory: files per leaf directory, subdirectories per inner one.
    pub dirwidth: u32,
    /// Share of the files that exist before the run, %; the rest are names to create.
    pub prealloc_pct: u8,
    /// Spread of the file sizes around the fileset's mean `file_size`.
    pub size_dist: SizeDist,
    /// Share of the files the run touches, %: SPECsfs accesses 10 % of its file set.
    pub working_set_pct: u8,
    /// Sized by offered load: dataset bytes per operation per second (SPECsfs: 10 MB);
    /// `entries = data_per_ops x offered ops/s / file_size`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_per_ops: Option<u64>,
    /// The offered ops/s a `data_per_ops` tree is sized for when its roles have no rate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_hint: Option<f64>,
}

/// Most entries of one tree.
pub const MAX_TREE_ENTRIES: u64 = 10_000_000;

impl TreeSpec {
    /// The number of files a `data_per_ops` tree holds at `offered` ops/s (its rate hint when
    /// `None`); `None` for a tree of a fixed number of entries.
    pub fn entries_for(&self, file_size: u64, offered: Option<f64>) -> Option<u32> {
        let per_op = self.data_per_ops? as f64;
        let rate = offered.or(self.rate_hint)?;
        let files = (per_op * rate / file_size.max(1) as f64).ceil();
        Some(files.clamp(1.0, MAX_TREE_ENTRIES as f64) as u32)
    }
}

/// One file of a tree.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TreeFile {
    /// Index of its directory in [`Tree::dirs`].
    pub dir: u32,
    /// Its size when it exists before the run, and what a whole-file write writes.
    pub size: u64,
    /// It exists before the run.
    pub exists: bool,
    /// The run touches it (it is in the working set).
    pub in_working_set: bool,
}

/// A tree's directories and files. File `i` is named `f<i>` in directory `dirs[files[i].dir]`.
#[derive(Clone, Debug, PartialEq)]
pub struct Tree {
    /// Directories relative to the tree's root, parents before children (`""` is the root).
    pub dirs: Vec<String>,
    /// Indices into `dirs` of the leaf directories, which hold the files.
    pub leaves: Vec<u32>,
    /// Every file, existing or not.
    pub files: Vec<TreeFile>,
}

impl Tree {
    /// The tree of a fileset of `entries` files of mean size `mean`, for `seed`: leaf
    /// directories of `dirwidth` files under inner directories of at most `dirwidth`
    /// subdirectories, as shallow as that allows and evenly spread; sizes and which files exist
    /// drawn from `seed`.
    pub fn of(spec: &TreeSpec, entries: u32, mean: u64, seed: u64) -> Tree {
        let width = spec.dirwidth.max(1);
        // Directories per level, from the leaves up to the one root.
        let mut counts = vec![entries.div_ceil(width).max(1)];
        while counts[counts.len() - 1] > 1 {
            let up = counts[counts.len() - 1].div_ceil(width);
            counts.push(up);
        }
        counts.reverse();
        let mut dirs = vec![String::new()];
        let mut level: Vec<u32> = vec![0];
        for pair in counts.windows(2) {
            let (parents, children) = (pair[0] as usize, pair[1] as usize);
            let mut next = Vec::with_capacity(children);
            let mut seen_in_parent = vec![0u32; parents];
            for c in 0..children {
                let parent = c * parents / children;
                let name = format!("d{}", seen_in_parent[parent]);
                seen_in_parent[parent] += 1;
                let path = match dirs[level[parent] as usize].as_str() {
                    "" => name,
                    p => format!("{p}/{name}"),
                };
                next.push(dirs.len() as u32);
                dirs.push(path);
            }
            level = next;
        }
        let leaves = level;
        let mut rng = XorShiftRng::seed_from_u64(seed ^ 0x7EE5_EED5);
        let sizes = Sizes::new(spec.size_dist, mean);
        let files = (0..entries)
            .map(|i| TreeFile {
                dir: leaves[(i / width) as usize],
                size: sizes.draw(&mut rng),
                exists: rng.next_u32() % 100 < u32::from(spec.prealloc_pct),
                in_working_set: i % 100 < u32::from(spec.working_set_pct),
            })
            .collect();
        Tree {
            dirs,
            leaves,
            files,
        }
    }

    /// The path of file `i` relative to the tree's root.
    pub fn file_path(&self, i: u32) -> String {
        match self.dirs[self.files[i as usize].dir as usize].as_str() {
            "" => format!("f{i}"),
            d => format!("{d}/f{i}"),
        }
    }

    /// Bytes of the files that exist before the run.
    pub fn initial_bytes(&self) -> u64 {
        self.files.iter().filter(|f| f.exists).map(|f| f.size).sum()
    }
}

/// Draws file sizes.
struct Sizes {
    mean: u64,
    gamma: Option<Gamma<f64>>,
}

impl Sizes {
    fn new(dist: SizeDist, mean: u64) -> Sizes {
        let gamma = match dist {
            SizeDist::Fixed => None,
            SizeDist::Gamma { shape } => Gamma::new(shape, mean as f64 / shape).ok(),
        };
        Sizes { mean, gamma }
    }

    /// One size, at least one byte.
    fn draw(&self, rng: &mut XorShiftRng) -> u64 {
        match &self.gamma {
            Some(g) => (g.sample(rng).round() as u64).max(1),
            None => self.mean.max(1),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(dirwidth: u32, prealloc_pct: u8, size_dist: SizeDist) -> TreeSpec {
        TreeSpec {
            dirwidth,
            prealloc_pct,
            size_dist,
            working_set_pct: 100,
            data_per_ops: None,
            rate_hint: None,
        }
    }

    #[test]
    fn a_tree_is_as_shallow_as_its_width_allows() {
        let flat = Tree::of(&spec(1_000_000, 100, SizeDist::Fixed), 1000, 16384, 1);
        assert_eq!(flat.dirs, vec![String::new()]);
        assert_eq!(flat.file_path(7), "f7");
        let t = Tree::of(&spec(20, 80, SizeDist::Fixed), 10_000, 4096, 1);
        // 500 leaves of 20 files under 25 directories of 20 under 2 (of 13 and 12) at the root.
        assert_eq!(t.leaves.len(), 500);
        assert_eq!(t.dirs.len(), 1 + 2 + 25 + 500);
        assert_eq!(t.file_path(0), "d0/d0/d0/f0");
        assert_eq!(t.file_path(10_000 - 1), "d1/d11/d19/f9999");
        let per_leaf = t.files.iter().filter(|f| f.dir == t.leaves[3]).count();
        assert_eq!(per_leaf, 20);
        assert!(t.files.iter().all(|f| f.size == 4096));
    }

    #[test]
    fn prealloc_sizes_and_working_set_follow_the_spec_and_the_seed() {
        let s = TreeSpec {
            working_set_pct: 10,
            ..spec(20, 80, SizeDist::Gamma { shape: 1.5 })
        };
        let t = Tree::of(&s, 20_000, 128 << 10, 9);
        let existing = t.files.iter().filter(|f| f.exists).count() as f64;
        assert!((existing / 20_000.0 - 0.8).abs() < 0.02, "{existing}");
        let mean = t.files.iter().map(|f| f.size as f64).sum::<f64>() / 20_000.0;
        assert!(
            (mean / f64::from(128 << 10) - 1.0).abs() < 0.05,
            "mean {mean}"
        );
        assert_eq!(t.files.iter().filter(|f| f.in_working_set).count(), 2000);
        assert_eq!(
            t,
            Tree::of(&s, 20_000, 128 << 10, 9),
            "same seed, same tree"
        );
        assert_ne!(t.files, Tree::of(&s, 20_000, 128 << 10, 10).files);
    }

    #[test]
    fn data_per_ops_sizes_the_tree_by_offered_load() {
        let s = TreeSpec {
            data_per_ops: Some(10 << 20),
            rate_hint: Some(100.0),
            ..spec(20, 100, SizeDist::Fixed)
        };
        // 10 MiB per op/s at 100 op/s in 64 KiB files.
        assert_eq!(s.entries_for(64 << 10, None), Some(16_000));
        assert_eq!(s.entries_for(64 << 10, Some(50.0)), Some(8000));
        assert_eq!(
            spec(20, 100, SizeDist::Fixed).entries_for(1, Some(9.0)),
            None
        );
    }

    #[test]
    fn names_round_trip() {
        for op in FileOp::ALL {
            assert_eq!(FileOp::from_name(op.name()), Some(op));
        }
    }
}
