//! `verify=`: which plans can verify their blocks, and where each fileset's blocks lie. A plan
//! verifies when every I/O on a fileset moves whole blocks of one size at block-aligned
//! offsets: then every block written carries a header and every read can check one. What
//! cannot is refused here, before anything is built, naming why.

use crate::plan::*;
use crate::settings::SettingError;
use crate::units::format_bytes;
use crate::values::Val;
use crate::verify::HEADER_BYTES;

/// Most blocks the generation table holds (16 bytes each in memory: 1 GiB).
pub(crate) const MAX_VERIFY_BLOCKS: u64 = 1 << 26;

/// Most writes in flight at once to one fileset: the generation table counts a block's writes
/// in flight in 20 bits.
pub(crate) const MAX_WRITE_SLOTS: u64 = (1 << 20) - 1;

/// Sets `plan.verify` and each fileset's block grid, or refuses what cannot be verified.
pub(super) fn plan_verify(
    plan: &mut Plan,
    algorithm: Option<Algorithm>,
    val: &Val,
) -> Result<(), SettingError> {
    let Some(algorithm) = algorithm else {
        return Ok(());
    };
    let refuse = |why: String| val.invalid(format!("{} {why}", val.shown()));
    if plan.clients > 0 {
        return Err(refuse(format!(
            "checks blocks against one table of the writes made to them, kept in one process: \
             it does not take clients={} (run without clients)",
            plan.clients
        )));
    }
    let active: Vec<&RolePlan> = plan.roles.iter().filter(|r| r.threads > 0).collect();
    if let Some(r) = active
        .iter()
        .find(|r| r.engine.unwrap_or(plan.engine) == EngineKind::Null)
    {
        return Err(refuse(format!(
            "needs real I/O, and role '{}' runs on the null engine, which reads and writes \
             nothing (use engine=psync or io_uring)",
            r.name
        )));
    }
    if let Some(r) = active.iter().find(|r| r.does_file_ops()) {
        return Err(refuse(format!(
            "checks blocks written at fixed offsets, and role '{}' does file operations on a \
             directory tree (whole files, appends): verify takes block I/O workloads such as \
             randwrite, randrw, slob or oltp",
            r.name
        )));
    }
    let mut blocks = 0u64;
    for i in 0..plan.filesets.len() {
        let grid = fileset_grid(plan, i, &active).map_err(refuse)?;
        if let Some(g) = grid {
            blocks += u64::from(plan.filesets[i].nrfiles) * g.blocks_in(plan.filesets[i].file_size);
        }
        plan.filesets[i].verify = grid;
    }
    if blocks > MAX_VERIFY_BLOCKS {
        return Err(refuse(format!(
            "keeps 16 bytes of memory per block: {blocks} blocks need {}, more than the {} it \
             allows (raise the block size or lower the dataset's size)",
            format_bytes(blocks.saturating_mul(16)),
            format_bytes(MAX_VERIFY_BLOCKS * 16)
        )));
    }
    plan.verify = Some(algorithm);
    Ok(())
}

/// The block grid of fileset `i` under the roles with threads (`active`): one block size and
/// one offset for every I/O on it, or `None` for a fileset only a log writer writes (redo of
/// any length is not blocks: it is left unverified).
fn fileset_grid(plan: &Plan, i: usize, active: &[&RolePlan]) -> Result<Option<BlockGrid>, String> {
    let users: Vec<&RolePlan> = active.iter().copied().filter(|r| r.fileset == i).collect();
    let name = &plan.filesets[i].name;
    if let Some(log) = users.iter().find(|r| r.log_writer) {
        if let Some(other) = users.iter().find(|r| !r.log_writer) {
            return Err(format!(
                "cannot verify fileset '{name}': role '{}' writes redo of any length over it and \
                 role '{}' reads or writes it in blocks",
                log.name, other.name
            ));
        }
        return Ok(None);
    }
    let mut grid: Option<(BlockGrid, &str)> = None;
    let mut slots = 0u64;
    for r in &users {
        for s in &r.steps {
            let Step::Io(io) = s else { continue };
            let this = BlockGrid {
                block_bytes: io.bs,
                offset: r.offset,
            };
            match grid {
                None => grid = Some((this, &r.name)),
                Some((g, first)) if g != this => {
                    return Err(format!(
                        "needs one block size and offset per fileset, and fileset '{name}' is \
                         used in blocks of {} at offset {} by role '{first}' and of {} at offset \
                         {} by role '{}'",
                        format_bytes(g.block_bytes),
                        g.offset,
                        format_bytes(this.block_bytes),
                        this.offset,
                        r.name
                    ));
                }
                Some(_) => {}
            }
        }
        if r.db_writer || r.steps.iter().any(writes) {
            slots += u64::from(r.threads) * u64::from(r.iodepth.max(1));
        }
    }
    let Some((grid, role)) = grid else {
        return Ok(None);
    };
    if grid.block_bytes < HEADER_BYTES as u64 {
        return Err(format!(
            "writes a {HEADER_BYTES}-byte header in every block, and role '{role}' uses blocks \
             of {} bytes (use bs of at least {HEADER_BYTES})",
            grid.block_bytes
        ));
    }
    if slots > MAX_WRITE_SLOTS {
        return Err(format!(
            "counts at most {MAX_WRITE_SLOTS} writes in flight to fileset '{name}', and its \
             roles have {slots} (threads x iodepth): lower threads or iodepth"
        ));
    }
    Ok(Some(grid))
}

/// A step that writes blocks.
fn writes(s: &Step) -> bool {
    match s {
        Step::Io(io) => io.mix != IoMix::Read,
        Step::Dirty { .. } => true,
        _ => false,
    }
}

/// What `verify` refuses in a workload that is not bakeoff's block I/O (a database, a replay):
/// `why` says what it is.
pub(crate) fn refuse_verify(
    settings: &crate::settings::Settings,
    workload: &str,
    why: &str,
) -> Result<(), SettingError> {
    let Some(s) = settings.get("verify") else {
        return Ok(());
    };
    Err(SettingError::new(
        s.origin.clone(),
        "verify",
        format!(
            "checks the blocks bakeoff's own I/O workloads write (randwrite, randrw, slob, oltp \
             ...); {workload} {why}"
        ),
    ))
}
