//! A crash state's images on fresh loop devices, mounted (or, for ZFS, its pool imported):
//! every step in the ledger before it happens, undone in reverse on [`MountedState::close`] or
//! on drop (a check that fails midway leaves nothing attached, imported or mounted). A state
//! of a run with a log stack has two groups of devices: the data stack's, then the log
//! stack's, each mounted on its own mount point.

use bakeoff_stack::exec::Exec;
use bakeoff_stack::fs::zfs::state::{self as zfs_state, Imported};
use bakeoff_stack::ledger::Ledger;
use bakeoff_stack::undo::{perform, Undo};
use bakeoff_stack::StackError;
use std::path::{Path, PathBuf};

/// One stack's loop devices and where they are mounted.
struct Group {
    devices: Vec<PathBuf>,
    images: Vec<PathBuf>,
    mountpoint: PathBuf,
    mounted: bool,
}

/// Which group of a state: the data stack's is [`DATA`].
pub type GroupId = usize;

/// The data stack's group, attached first.
pub const DATA: GroupId = 0;

/// Loop devices over a state's images, and their mounts.
pub struct MountedState<'a> {
    ledger: &'a mut Ledger,
    groups: Vec<Group>,
    /// The ZFS pools imported, in order.
    pools: Vec<Imported>,
}

impl<'a> MountedState<'a> {
    /// Attaches a loop device over each image (read-write: mounting replays a journal): the
    /// data stack's group, to be mounted at `mountpoint`.
    pub fn attach(
        images: &[PathBuf],
        mountpoint: &Path,
        ledger: &'a mut Ledger,
        exec: &mut Exec,
    ) -> Result<MountedState<'a>, StackError> {
        let mut state = MountedState {
            ledger,
            groups: Vec::new(),
            pools: Vec::new(),
        };
        state.attach_group(images, mountpoint, exec)?;
        Ok(state)
    }

    /// Attaches another stack's images (a log stack's), to be mounted at `mountpoint`.
    pub fn attach_group(
        &mut self,
        images: &[PathBuf],
        mountpoint: &Path,
        exec: &mut Exec,
    ) -> Result<GroupId, StackError> {
        self.groups.push(Group {
            devices: Vec::new(),
            images: Vec::new(),
            mountpoint: mountpoint.to_path_buf(),
            mounted: false,
        });
        let id = self.groups.len() - 1;
        for image in images {
            self.ledger.record(Undo::DetachLoop {
                backing: image.clone(),
            })?;
            self.groups[id].images.push(image.clone());
            let path = image.to_string_lossy().into_owned();
            let device = exec.run("losetup", &["--find", "--show", &path])?;
            self.groups[id].devices.push(PathBuf::from(device.trim()));
        }
        Ok(id)
    }

    /// The group's loop devices, in its images' order.
    pub fn devices(&self, group: GroupId) -> &[PathBuf] {
        &self.groups[group].devices
    }

    /// Where the group is mounted while it is.
    pub fn mountpoint(&self, group: GroupId) -> &Path {
        &self.groups[group].mountpoint
    }

    /// Mounts the group's first device as `fs_type`; `Err` with the kernel's words if it
    /// refuses (the file system is damaged beyond what its journal recovers).
    pub fn mount(&mut self, group: GroupId, fs_type: &str, exec: &mut Exec) -> Result<(), String> {
        let g = &self.groups[group];
        std::fs::create_dir_all(&g.mountpoint).map_err(|e| e.to_string())?;
        let undo = Undo::Unmount {
            path: g.mountpoint.clone(),
        };
        self.ledger.record(undo).map_err(|e| e.to_string())?;
        let device = g.devices[0].to_string_lossy().into_owned();
        let target = g.mountpoint.to_string_lossy().into_owned();
        exec.run("mount", &["-t", fs_type, &device, &target])
            .map_err(|e| e.to_string())?;
        self.groups[group].mounted = true;
        Ok(())
    }

    /// Imports the ZFS pool on the group's devices with the group's mount point as the
    /// alternate root; its dataset, mounted at `origin` in the run, comes back below it: the
    /// path and the pool's name, or `Err` with why the pool did not come back (damage).
    pub fn import_pool(
        &mut self,
        group: GroupId,
        origin: &Path,
        exec: &mut Exec,
    ) -> Result<Result<(PathBuf, String), String>, StackError> {
        let g = &self.groups[group];
        let imported = zfs_state::import(&g.devices, &g.mountpoint, origin, self.ledger, exec)?;
        Ok(imported.map(|pool| {
            let found = (pool.mount.clone(), pool.pool.clone());
            self.pools.push(pool);
            found
        }))
    }

    /// Unmounts the group.
    pub fn unmount(&mut self, group: GroupId, exec: &mut Exec) -> Result<(), StackError> {
        let g = &mut self.groups[group];
        if g.mounted {
            let target = g.mountpoint.to_string_lossy().into_owned();
            exec.run("umount", &[&target])?;
            g.mounted = false;
        }
        Ok(())
    }

    /// Unmounts and detaches everything; the first failure is the error.
    pub fn close(mut self, exec: &mut Exec) -> Result<(), StackError> {
        self.release(exec)
    }

    fn release(&mut self, exec: &mut Exec) -> Result<(), StackError> {
        let mut failed = None;
        while let Some(pool) = self.pools.pop() {
            if let Err(e) = zfs_state::export(&pool, exec) {
                failed.get_or_insert(e.to_string());
            }
        }
        // The log stack's group goes first, in reverse of how they came.
        for g in self.groups.iter_mut().rev() {
            if g.mounted {
                let undo = Undo::Unmount {
                    path: g.mountpoint.clone(),
                };
                if let Err(e) = perform(&undo, exec) {
                    failed.get_or_insert(e);
                }
                g.mounted = false;
            }
            for image in g.images.drain(..) {
                if let Err(e) = perform(&Undo::DetachLoop { backing: image }, exec) {
                    failed.get_or_insert(e);
                }
            }
        }
        match failed {
            None => Ok(()),
            Some(e) => Err(StackError::Environment(e)),
        }
    }
}

impl Drop for MountedState<'_> {
    fn drop(&mut self) {
        if let Err(e) = self.release(&mut Exec::default()) {
            eprintln!("bakeoff: releasing a crash state: {e}");
        }
    }
}
