//! A crash state's images on fresh loop devices, mounted (or, for ZFS, its pool imported):
//! every step in the ledger before it happens, undone in reverse on [`MountedState::close`] or
//! on drop (a check that fails midway leaves nothing attached, imported or mounted).

use bakeoff_stack::exec::Exec;
use bakeoff_stack::fs::zfs::state::{self as zfs_state, Imported};
use bakeoff_stack::ledger::Ledger;
use bakeoff_stack::undo::{perform, Undo};
use bakeoff_stack::StackError;
use std::path::{Path, PathBuf};

/// Loop devices over a state's images, and the mount of the first.
pub struct MountedState<'a> {
    ledger: &'a mut Ledger,
    /// The loop devices, in the images' order.
    pub devices: Vec<PathBuf>,
    images: Vec<PathBuf>,
    /// Where the file system is mounted while it is.
    pub mountpoint: PathBuf,
    mounted: bool,
    pool: Option<Imported>,
}

impl<'a> MountedState<'a> {
    /// Attaches a loop device over each image (read-write: mounting replays a journal).
    pub fn attach(
        images: &[PathBuf],
        mountpoint: &Path,
        ledger: &'a mut Ledger,
        exec: &mut Exec,
    ) -> Result<MountedState<'a>, StackError> {
        let mut state = MountedState {
            ledger,
            devices: Vec::new(),
            images: Vec::new(),
            mountpoint: mountpoint.to_path_buf(),
            mounted: false,
            pool: None,
        };
        for image in images {
            state.ledger.record(Undo::DetachLoop {
                backing: image.clone(),
            })?;
            state.images.push(image.clone());
            let path = image.to_string_lossy().into_owned();
            let device = exec.run("losetup", &["--find", "--show", &path])?;
            state.devices.push(PathBuf::from(device.trim()));
        }
        Ok(state)
    }

    /// Mounts the first device as `fs_type`; `Err` with the kernel's words if it refuses
    /// (the file system is damaged beyond what its journal recovers).
    pub fn mount(&mut self, fs_type: &str, exec: &mut Exec) -> Result<(), String> {
        std::fs::create_dir_all(&self.mountpoint).map_err(|e| e.to_string())?;
        (self.ledger)
            .record(Undo::Unmount {
                path: self.mountpoint.clone(),
            })
            .map_err(|e| e.to_string())?;
        let device = self.devices[0].to_string_lossy().into_owned();
        let target = self.mountpoint.to_string_lossy().into_owned();
        exec.run("mount", &["-t", fs_type, &device, &target])
            .map_err(|e| e.to_string())?;
        self.mounted = true;
        Ok(())
    }

    /// Imports the ZFS pool on the devices with the mount point as its alternate root; its
    /// dataset, mounted at `origin` in the run, comes back below it: the path, or `Err` with
    /// why the pool did not come back (damage).
    pub fn import_pool(
        &mut self,
        origin: &Path,
        exec: &mut Exec,
    ) -> Result<Result<PathBuf, String>, StackError> {
        let imported =
            zfs_state::import(&self.devices, &self.mountpoint, origin, self.ledger, exec)?;
        Ok(imported.map(|pool| {
            let mount = pool.mount.clone();
            self.pool = Some(pool);
            mount
        }))
    }

    /// The imported pool's name.
    pub fn pool(&self) -> Option<&str> {
        self.pool.as_ref().map(|p| p.pool.as_str())
    }

    /// Unmounts it.
    pub fn unmount(&mut self, exec: &mut Exec) -> Result<(), StackError> {
        if self.mounted {
            let target = self.mountpoint.to_string_lossy().into_owned();
            exec.run("umount", &[&target])?;
            self.mounted = false;
        }
        Ok(())
    }

    /// Unmounts and detaches; the first failure is the error.
    pub fn close(mut self, exec: &mut Exec) -> Result<(), StackError> {
        self.release(exec)
    }

    fn release(&mut self, exec: &mut Exec) -> Result<(), StackError> {
        let mut failed = None;
        if let Some(pool) = self.pool.take() {
            failed = zfs_state::export(&pool, exec).err().map(|e| e.to_string());
        }
        if self.mounted {
            let undo = Undo::Unmount {
                path: self.mountpoint.clone(),
            };
            if let Err(e) = perform(&undo, exec) {
                failed.get_or_insert(e);
            }
            self.mounted = false;
        }
        for image in self.images.drain(..) {
            if let Err(e) = perform(&Undo::DetachLoop { backing: image }, exec) {
                failed.get_or_insert(e);
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
