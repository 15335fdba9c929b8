//! Which files are traced and what they are called: an index from `(dev, ino)` to a path
//! relative to one of the roots (`--under`), built by walking the roots once at the start and
//! kept current from the paths that opens, renames, unlinks and mkdirs name. A call on a file
//! the index does not hold is on the same file system but outside the roots: it is dropped.
//!
//! `dev` is the superblock's (`/proc/self/mountinfo`), as the kernel sees it, not `st_dev`
//! (btrfs reports a per-subvolume anonymous dev there).

use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};

/// A file's identity as the kernel gives it.
pub type Inode = (u32, u64);

/// Where a file is: a root and a `/`-separated path below it (`""` is the root itself).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Loc {
    /// Index of the root.
    pub root: u16,
    /// Relative path.
    pub rel: String,
}

/// What the index keeps of a file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Known {
    /// Where it is now.
    pub loc: Loc,
    /// A directory.
    pub is_dir: bool,
    /// Its size when the capture started; `None` when it was created during the capture.
    pub start_size: Option<u64>,
}

/// The index of the traced trees.
#[derive(Debug, Default)]
pub struct PathIndex {
    roots: Vec<(u32, PathBuf)>,
    by_inode: HashMap<Inode, Known>,
    by_loc: HashMap<Loc, Inode>,
}

impl PathIndex {
    /// An empty index of `roots` (each a superblock dev and an absolute, canonical directory).
    pub fn new(roots: Vec<(u32, PathBuf)>) -> PathIndex {
        PathIndex {
            roots,
            ..PathIndex::default()
        }
    }

    /// Walks every root and indexes what is there (symbolic links are not followed; a tree
    /// that crosses into another file system is not entered there).
    pub fn walk(&mut self) -> Result<(), String> {
        for root in 0..self.roots.len() {
            let (dev, dir) = self.roots[root].clone();
            let meta = std::fs::metadata(&dir)
                .map_err(|e| format!("cannot read the traced directory {}: {e}", dir.display()))?;
            let loc = Loc {
                root: root as u16,
                rel: String::new(),
            };
            self.insert((dev, ino_of(&meta)), loc, true, Some(meta.len()));
            self.walk_dir(root as u16, dev, &dir, meta_dev(&meta), "")?;
        }
        Ok(())
    }

    fn walk_dir(
        &mut self,
        root: u16,
        dev: u32,
        dir: &Path,
        st_dev: u64,
        rel: &str,
    ) -> Result<(), String> {
        let entries = std::fs::read_dir(dir)
            .map_err(|e| format!("cannot list the traced directory {}: {e}", dir.display()))?;
        for entry in entries.flatten() {
            let Ok(meta) = entry.metadata() else { continue }; // gone meanwhile
            let name = entry.file_name().to_string_lossy().into_owned();
            let child = join(rel, &name);
            if meta_dev(&meta) != st_dev || !(meta.is_file() || meta.is_dir()) {
                continue;
            }
            let loc = Loc {
                root,
                rel: child.clone(),
            };
            self.insert((dev, ino_of(&meta)), loc, meta.is_dir(), Some(meta.len()));
            if meta.is_dir() {
                self.walk_dir(root, dev, &entry.path(), st_dev, &child)?;
            }
        }
        Ok(())
    }

    /// Records that `inode` is at `loc`.
    pub fn insert(&mut self, inode: Inode, loc: Loc, is_dir: bool, start_size: Option<u64>) {
        // The first size seen is the start size; a file has one place (hard links: the last).
        let start_size = (self.by_inode.get(&inode)).map_or(start_size, |k| k.start_size);
        if let Some(k) = self.by_inode.get(&inode) {
            self.by_loc.remove(&k.loc.clone());
        }
        if let Some(old) = self.by_loc.insert(loc.clone(), inode) {
            if old != inode {
                self.by_inode.remove(&old);
            }
        }
        self.by_inode.insert(
            inode,
            Known {
                loc,
                is_dir,
                start_size,
            },
        );
    }

    /// The superblock dev of root `root` (0 for no such root).
    pub fn root_dev(&self, root: u16) -> u32 {
        self.roots.get(root as usize).map_or(0, |(dev, _)| *dev)
    }

    /// What the index knows of `inode`.
    pub fn get(&self, inode: Inode) -> Option<&Known> {
        self.by_inode.get(&inode)
    }

    /// The inode at `loc`, if the index knows one.
    pub fn inode_at(&self, loc: &Loc) -> Option<Inode> {
        self.by_loc.get(loc).copied()
    }

    /// The absolute path of `loc`.
    pub fn absolute(&self, loc: &Loc) -> Option<PathBuf> {
        let (_, dir) = self.roots.get(loc.root as usize)?;
        Some(if loc.rel.is_empty() {
            dir.clone()
        } else {
            dir.join(&loc.rel)
        })
    }

    /// Where `path` names, given the directory it is relative to (`None` for an absolute
    /// path); `None` when that is outside every root.
    pub fn resolve(&self, base: Option<Inode>, path: &str) -> Option<Loc> {
        if path.starts_with('/') {
            return self.roots.iter().enumerate().find_map(|(i, (_, dir))| {
                let rel = Path::new(path).strip_prefix(dir).ok()?;
                let rel = normalize("", rel.to_str()?)?;
                Some(Loc {
                    root: i as u16,
                    rel,
                })
            });
        }
        let dir = &self.by_inode.get(&base?)?.loc;
        Some(Loc {
            root: dir.root,
            rel: normalize(&dir.rel, path)?,
        })
    }

    /// Forgets what was at `loc`, and below it.
    pub fn remove(&mut self, loc: &Loc) {
        for (old, _) in self.below(loc) {
            if let Some(inode) = self.by_loc.remove(&old) {
                self.by_inode.remove(&inode);
            }
        }
    }

    /// Moves what was at `from` (and below it) to `to`.
    pub fn rename(&mut self, from: &Loc, to: &Loc) {
        self.remove(to);
        for (old, suffix) in self.below(from) {
            let Some(inode) = self.by_loc.remove(&old) else {
                continue;
            };
            let new = Loc {
                root: to.root,
                rel: format!("{}{suffix}", to.rel),
            };
            if let Some(k) = self.by_inode.get_mut(&inode) {
                k.loc = new.clone();
            }
            self.by_loc.insert(new, inode);
        }
    }

    /// `loc` and everything below it, each with its path's part after `loc`.
    fn below(&self, loc: &Loc) -> Vec<(Loc, String)> {
        let prefix = format!("{}/", loc.rel);
        (self.by_loc.keys())
            .filter(|l| l.root == loc.root)
            .filter_map(|l| {
                if l.rel == loc.rel {
                    Some((l.clone(), String::new()))
                } else {
                    let rest = l.rel.strip_prefix(&prefix)?;
                    Some((l.clone(), format!("/{rest}")))
                }
            })
            .collect()
    }
}

fn ino_of(meta: &std::fs::Metadata) -> u64 {
    std::os::unix::fs::MetadataExt::ino(meta)
}

fn meta_dev(meta: &std::fs::Metadata) -> u64 {
    std::os::unix::fs::MetadataExt::dev(meta)
}

fn join(dir: &str, name: &str) -> String {
    if dir.is_empty() {
        name.to_string()
    } else {
        format!("{dir}/{name}")
    }
}

/// `dir` joined with the relative `path`, `.` and `..` applied; `None` when it climbs above the
/// root.
fn normalize(dir: &str, path: &str) -> Option<String> {
    let mut parts: Vec<&str> = dir.split('/').filter(|p| !p.is_empty()).collect();
    for c in Path::new(path).components() {
        match c {
            Component::Normal(name) => parts.push(name.to_str()?),
            Component::ParentDir => {
                parts.pop()?;
            }
            Component::CurDir | Component::RootDir => {}
            Component::Prefix(_) => return None,
        }
    }
    Some(parts.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn index() -> PathIndex {
        let mut ix = PathIndex::new(vec![(8, "/data".into()), (9, "/log".into())]);
        ix.insert(
            (8, 2),
            Loc {
                root: 0,
                rel: String::new(),
            },
            true,
            Some(4096),
        );
        ix.insert(
            (8, 3),
            Loc {
                root: 0,
                rel: "base".into(),
            },
            true,
            Some(4096),
        );
        ix.insert(
            (8, 4),
            Loc {
                root: 0,
                rel: "base/1".into(),
            },
            false,
            Some(8192),
        );
        ix
    }

    #[test]
    fn relative_paths_resolve_from_their_directory() {
        let ix = index();
        let at = |rel: &str| {
            Some(Loc {
                root: 0,
                rel: rel.into(),
            })
        };
        assert_eq!(ix.resolve(Some((8, 3)), "2"), at("base/2"));
        assert_eq!(ix.resolve(Some((8, 2)), "./base/../base/1"), at("base/1"));
        assert_eq!(ix.resolve(Some((8, 2)), ".."), None);
        assert_eq!(ix.resolve(Some((8, 99)), "x"), None);
        assert_eq!(ix.resolve(None, "/data/base/1"), at("base/1"));
        assert_eq!(
            ix.resolve(None, "/log/wal"),
            Some(Loc {
                root: 1,
                rel: "wal".into()
            })
        );
        assert_eq!(ix.resolve(None, "/etc/passwd"), None);
    }

    #[test]
    fn a_renamed_directory_takes_its_files_along() {
        let mut ix = index();
        let base = Loc {
            root: 0,
            rel: "base".into(),
        };
        let moved = Loc {
            root: 0,
            rel: "old".into(),
        };
        ix.rename(&base, &moved);
        assert_eq!(ix.get((8, 4)).unwrap().loc.rel, "old/1");
        assert_eq!(ix.get((8, 3)).unwrap().loc.rel, "old");
        assert_eq!(
            ix.resolve(Some((8, 3)), "1"),
            Some(Loc {
                root: 0,
                rel: "old/1".into()
            })
        );
        ix.remove(&moved);
        assert_eq!(ix.get((8, 4)), None);
        assert_eq!(ix.get((8, 2)).unwrap().start_size, Some(4096));
    }

    #[test]
    fn a_file_renamed_over_another_replaces_it() {
        let mut ix = index();
        ix.insert(
            (8, 5),
            Loc {
                root: 0,
                rel: "base/tmp".into(),
            },
            false,
            None,
        );
        ix.rename(
            &Loc {
                root: 0,
                rel: "base/tmp".into(),
            },
            &Loc {
                root: 0,
                rel: "base/1".into(),
            },
        );
        assert_eq!(ix.get((8, 4)), None);
        let known = ix.get((8, 5)).unwrap();
        assert_eq!((known.loc.rel.as_str(), known.start_size), ("base/1", None));
    }

    #[test]
    fn walking_a_tree_indexes_files_and_directories() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        std::fs::write(dir.path().join("sub/f"), [0u8; 100]).unwrap();
        let ino = ino_of(&std::fs::metadata(dir.path().join("sub/f")).unwrap());
        let mut ix = PathIndex::new(vec![(1, dir.path().canonicalize().unwrap())]);
        ix.walk().unwrap();
        let known = ix.get((1, ino)).unwrap();
        assert_eq!(
            (known.loc.rel.as_str(), known.start_size, known.is_dir),
            ("sub/f", Some(100), false)
        );
    }
}
