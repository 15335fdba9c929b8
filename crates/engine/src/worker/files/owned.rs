//! Which files of a tree a file worker may pick, and which of them exist, without locks: the
//! tree's paths are built once per run and shared read-only; each thread keeps its own lists.
//! Where some role creates, deletes or renames in a tree, its working-set files are dealt out
//! among the threads that use it (thread k of n owns every n-th), so no two threads ever race
//! for a name; where none does, every thread picks among all of them.

use bakeoff_core::fileop::Tree;
use std::ffi::CString;
use std::path::{Path, PathBuf};

/// A tree fileset as every worker of a run sees it.
pub struct FileTree {
    /// Its root directory.
    pub root: PathBuf,
    /// The absolute path of every file, by file index.
    pub files: Vec<CString>,
    /// The absolute path of every directory.
    pub dirs: Vec<CString>,
    /// Each file's planned size and whether it exists before the run.
    pub tree: Tree,
    /// Threads that use it own disjoint files (some role changes which names exist).
    pub partitioned: bool,
}

/// A path as the kernel takes it: a path from a tree has no NUL byte.
fn c_path(path: &Path) -> CString {
    use std::os::unix::ffi::OsStrExt;
    CString::new(path.as_os_str().as_bytes()).unwrap_or_default()
}

impl FileTree {
    /// The paths of `tree` under `root`.
    pub fn new(root: PathBuf, tree: Tree, partitioned: bool) -> FileTree {
        let files = (0..tree.files.len() as u32)
            .map(|i| c_path(&root.join(tree.file_path(i))))
            .collect();
        let dirs = tree.dirs.iter().map(|d| c_path(&root.join(d))).collect();
        FileTree {
            root,
            files,
            dirs,
            tree,
            partitioned,
        }
    }
}

/// The files of one tree one thread works on.
pub struct Owned {
    /// File index of each local file.
    pub files: Vec<u32>,
    /// Current size of each local file (what this thread knows of it).
    pub sizes: Vec<u64>,
    exists: Vec<bool>,
    /// Position of each local file in `existing` or `free`.
    pos: Vec<u32>,
    existing: Vec<u32>,
    free: Vec<u32>,
}

impl Owned {
    /// The working-set files of `t` that thread `k` of `n` owns (all of them when the tree
    /// is not partitioned).
    pub fn new(t: &FileTree, k: u32, n: u32) -> Owned {
        let ws = t
            .tree
            .files
            .iter()
            .enumerate()
            .filter(|(_, f)| f.in_working_set);
        let mine: Vec<u32> = ws
            .enumerate()
            .filter(|(rank, _)| !t.partitioned || *rank as u32 % n.max(1) == k)
            .map(|(_, (i, _))| i as u32)
            .collect();
        let mut o = Owned {
            sizes: mine
                .iter()
                .map(|&i| t.tree.files[i as usize].size)
                .collect(),
            exists: mine
                .iter()
                .map(|&i| t.tree.files[i as usize].exists)
                .collect(),
            pos: vec![0; mine.len()],
            existing: Vec::with_capacity(mine.len()),
            free: Vec::with_capacity(mine.len()),
            files: mine,
        };
        for l in 0..o.files.len() as u32 {
            let list = if o.exists[l as usize] {
                &mut o.existing
            } else {
                &mut o.free
            };
            o.pos[l as usize] = list.len() as u32;
            list.push(l);
        }
        o
    }

    /// A uniformly random existing local file other than `not` (the open one), if any.
    pub fn pick_existing(&self, rng: &mut fastrand::Rng, not: Option<u32>) -> Option<u32> {
        pick(&self.existing, rng, not)
    }

    /// A uniformly random local file that does not exist, if any.
    pub fn pick_free(&self, rng: &mut fastrand::Rng) -> Option<u32> {
        pick(&self.free, rng, None)
    }

    /// Records that local file `l` now exists (`true`) or not.
    pub fn set_exists(&mut self, l: u32, exists: bool) {
        if self.exists[l as usize] == exists {
            return;
        }
        let (from, to) = if exists {
            (&mut self.free, &mut self.existing)
        } else {
            (&mut self.existing, &mut self.free)
        };
        let at = self.pos[l as usize] as usize;
        from.swap_remove(at);
        if let Some(&moved) = from.get(at) {
            self.pos[moved as usize] = at as u32;
        }
        self.pos[l as usize] = to.len() as u32;
        to.push(l);
        self.exists[l as usize] = exists;
    }

    /// Existing local files.
    #[cfg(test)]
    pub fn existing(&self) -> usize {
        self.existing.len()
    }
}

fn pick(list: &[u32], rng: &mut fastrand::Rng, not: Option<u32>) -> Option<u32> {
    match list.len() {
        0 => None,
        1 if Some(list[0]) == not => None,
        len => {
            let at = rng.usize(0..len);
            let l = list[at];
            Some(if Some(l) == not {
                list[(at + 1) % len]
            } else {
                l
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bakeoff_core::fileop::{SizeDist, TreeSpec};

    fn tree(entries: u32, partitioned: bool) -> FileTree {
        let spec = TreeSpec {
            dirwidth: 10,
            prealloc_pct: 50,
            size_dist: SizeDist::Fixed,
            working_set_pct: 100,
            data_per_ops: None,
            rate_hint: None,
        };
        FileTree::new("/t".into(), Tree::of(&spec, entries, 4096, 3), partitioned)
    }

    #[test]
    fn threads_own_disjoint_files_and_lists_stay_consistent() {
        let t = tree(100, true);
        let owned: Vec<Owned> = (0..3).map(|k| Owned::new(&t, k, 3)).collect();
        let mut all: Vec<u32> = owned.iter().flat_map(|o| o.files.clone()).collect();
        all.sort_unstable();
        assert_eq!(
            all,
            (0..100).collect::<Vec<_>>(),
            "every file owned exactly once"
        );
        let mut o = Owned::new(&t, 0, 1);
        let mut rng = fastrand::Rng::with_seed(1);
        let start = o.existing();
        for _ in 0..1000 {
            if let Some(l) = o.pick_free(&mut rng) {
                o.set_exists(l, true);
            }
            if let Some(l) = o.pick_existing(&mut rng, None) {
                o.set_exists(l, false);
            }
        }
        assert_eq!(o.existing(), start);
        assert_eq!(o.existing.len() + o.free.len(), 100);
        for (i, &l) in o.existing.iter().enumerate() {
            assert!(o.exists[l as usize] && o.pos[l as usize] as usize == i);
        }
        assert!(t.files[5].to_str().unwrap().starts_with("/t/d"));
    }

    #[test]
    fn the_open_file_is_never_picked() {
        let t = tree(2, false);
        let mut o = Owned::new(&t, 0, 1);
        o.set_exists(0, true);
        o.set_exists(1, false);
        let mut rng = fastrand::Rng::with_seed(2);
        assert_eq!(o.pick_existing(&mut rng, Some(0)), None);
        o.set_exists(1, true);
        assert!((0..50).all(|_| o.pick_existing(&mut rng, Some(0)) == Some(1)));
    }
}
