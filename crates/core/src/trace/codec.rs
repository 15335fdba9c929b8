//! The format's constants and the compact encoding of one record (docs/trace.md, "Records"),
//! shared by the writer and the reader so that the two cannot drift apart.
//!
//! Each OPS chunk starts afresh: the state below (previous start, handle, length, and each
//! handle's end offset) is reset at the chunk's first record, so a chunk decodes on its own.

use super::error::TraceError;
use super::model::{HandleId, OpCode, Record};
use super::varint::{put_u128, put_u64, zigzag, Cursor};
use std::collections::HashMap;

/// Bytes of the fixed header: magic, major, minor, flags, capture id.
pub const HEADER_LEN: usize = 32;
/// Header flag: paths were anonymized.
pub const FLAG_ANONYMIZED: u32 = 1;
/// Header flag: records carry `cpu_ns`.
pub const FLAG_CPU_NS: u32 = 2;
/// The last 16 bytes of a finished trace: this magic, then the END chunk's offset.
pub const TRAILER_MAGIC: [u8; 8] = *b"BKTEND\0\0";
/// Bytes of the trailer.
pub const TRAILER_LEN: usize = 16;
/// Bytes before a chunk's payload (kind, length) and after it (crc32).
pub const CHUNK_HEAD: usize = 5;
/// Bytes of a chunk's checksum.
pub const CHUNK_CRC: usize = 4;

/// The largest payload of one chunk.
pub const MAX_CHUNK: u64 = 16 << 20;
/// The longest path, comm, mark or call name.
pub const MAX_NAME: u64 = 4096;
/// The most entries of one table (paths, files, handles, threads).
pub const MAX_IDS: u64 = 1 << 24;

/// The kinds of chunk. Unknown kinds (from a later minor version) are skipped by readers.
pub mod kind {
    /// JSON provenance; always the first chunk.
    pub const PROVENANCE: u8 = 0x01;
    /// Paths.
    pub const PATH: u8 = 0x02;
    /// Files.
    pub const FILE: u8 = 0x03;
    /// Handles.
    pub const HANDLE: u8 = 0x04;
    /// Threads.
    pub const THREAD: u8 = 0x05;
    /// One thread's records.
    pub const OPS: u8 = 0x06;
    /// A named instant.
    pub const MARK: u8 = 0x07;
    /// The footer; the last chunk.
    pub const END: u8 = 0x7f;
}

const PREFIX: u8 = 31;
const OP_MASK: u8 = 0x1f;
const SAME_HANDLE: u8 = 0x20;
const SEQ: u8 = 0x40;
const SAME_LEN: u8 = 0x80;
const P_ASYNC: u8 = 0x20;
const P_RESULT: u8 = 0x40;
const P_EXTRA: u8 = 0x80;
// Bits of the EXTRA mask: fields a record carries that its op does not normally have.
const X_HANDLE: u64 = 1;
const X_OFFSET: u64 = 2;
const X_LEN: u64 = 4;
const X_ARG: u64 = 8;
const X_ARG2: u64 = 16;
const X_CPU: u64 = 32;
const X_ALL: u64 = 63;

fn has_offset(op: OpCode) -> bool {
    use OpCode::*;
    matches!(
        op,
        Read | Write | SyncFileRange | Fallocate | Lseek | Fadvise
    )
}

fn has_len(op: OpCode) -> bool {
    use OpCode::*;
    matches!(
        op,
        Read | Write | SyncFileRange | Fallocate | Ftruncate | Fadvise
    )
}

fn has_arg(op: OpCode) -> bool {
    use OpCode::*;
    matches!(
        op,
        Open | SyncFileRange | Fallocate | Lseek | Fadvise | Rename | Unlink | Mkdir | Rmdir
    )
}

/// Whether `arg` (and for rename `arg2`) is a path id, checked against the path table.
pub fn arg_is_path(op: OpCode) -> bool {
    use OpCode::*;
    matches!(op, Open | Rename | Unlink | Mkdir | Rmdir)
}

/// The result a call of this shape returns when it succeeds in full; others take a prefix.
fn expected_result(op: OpCode, offset: u64, len: u64) -> i64 {
    match op {
        OpCode::Read | OpCode::Write => len as i64,
        OpCode::Lseek => offset as i64,
        _ => 0,
    }
}

fn tag(v: u64) -> u128 {
    if v % 512 == 0 {
        u128::from(v >> 9) << 1
    } else {
        u128::from(v) << 1 | 1
    }
}

fn untag(at: u64, t: u128) -> Result<u64, TraceError> {
    let v = t >> 1;
    let v = if t & 1 == 0 { v.saturating_mul(512) } else { v };
    u64::try_from(v).map_err(|_| TraceError::malformed(at, "an offset or length over 64 bits"))
}

/// One thread's state within one OPS chunk.
pub struct OpsState {
    start: u64,
    handle: Option<HandleId>,
    len: u64,
    ends: HashMap<HandleId, u64>,
}

impl OpsState {
    /// The state at a chunk's start, whose first record starts at `base_ns`.
    pub fn new(base_ns: u64) -> OpsState {
        OpsState {
            start: base_ns,
            handle: None,
            len: 0,
            ends: HashMap::new(),
        }
    }

    fn advance(&mut self, op: OpCode, r: &Record) {
        self.start = r.start_ns;
        if op.takes_handle() {
            if let Some(h) = r.handle {
                self.handle = Some(h);
                if has_offset(op) {
                    let len = if has_len(op) { r.len } else { 0 };
                    self.ends.insert(h, r.offset.wrapping_add(len));
                }
            }
        }
        if has_len(op) {
            self.len = r.len;
        }
    }
}

/// The fields of `r` its op does not normally carry, as an EXTRA mask.
fn extras(op: OpCode, r: &Record, cpu: bool) -> u64 {
    let mut mask = 0;
    if op.takes_handle() != r.handle.is_some() {
        mask |= X_HANDLE;
    }
    for (bit, normal, v) in [
        (X_OFFSET, has_offset(op), r.offset),
        (X_LEN, has_len(op), r.len),
        (X_ARG, has_arg(op), r.arg),
        (X_ARG2, op == OpCode::Rename, r.arg2),
        (X_CPU, cpu, r.cpu_ns),
    ] {
        if !normal && v != 0 {
            mask |= bit;
        }
    }
    mask
}

/// Appends `r` to `out`; `cpu` says whether records carry `cpu_ns` (header flag).
///
/// Layout: `[prefix [mask]] op-byte body [extra fields] [result]`. The prefix and its mask come
/// first because the body depends on them (a handle-taking op without a handle); the extra
/// fields come last because which of them follow depends on the op.
pub fn encode(out: &mut Vec<u8>, st: &mut OpsState, r: &Record, cpu: bool) -> std::io::Result<()> {
    let op = r.op.ok_or_else(|| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "a trace record without an op",
        )
    })?;
    let mask = extras(op, r, cpu);
    let unexpected = r.result != expected_result(op, r.offset, r.len);
    if r.is_async || unexpected || mask != 0 {
        let bits = [
            (r.is_async, P_ASYNC),
            (unexpected, P_RESULT),
            (mask != 0, P_EXTRA),
        ];
        out.push(set_bits(PREFIX, &bits));
        if mask != 0 {
            put_u64(out, mask);
        }
    }
    let handle = r.handle.filter(|_| op.takes_handle());
    let same_handle = handle.is_some() && handle == st.handle;
    let seq = has_offset(op) && handle.is_some_and(|h| st.ends.get(&h) == Some(&r.offset));
    let same_len = has_len(op) && r.len == st.len;
    out.push(set_bits(
        op as u8,
        &[(same_handle, SAME_HANDLE), (seq, SEQ), (same_len, SAME_LEN)],
    ));
    put_u64(out, zigzag(r.start_ns.wrapping_sub(st.start) as i64));
    put_u64(out, r.dur_ns);
    if let (Some(h), false) = (handle, same_handle) {
        put_u64(out, u64::from(h));
    }
    if has_offset(op) && !seq {
        put_u128(out, tag(r.offset));
    }
    if has_len(op) && !same_len {
        put_u128(out, tag(r.len));
    }
    if has_arg(op) {
        put_u64(out, r.arg);
    }
    if op == OpCode::Rename {
        put_u64(out, r.arg2);
    }
    if cpu {
        put_u64(out, r.cpu_ns);
    }
    if mask & X_HANDLE != 0 {
        if let Some(h) = r.handle {
            put_u64(out, u64::from(h));
        }
    }
    for (bit, v) in [
        (X_OFFSET, r.offset),
        (X_LEN, r.len),
        (X_ARG, r.arg),
        (X_ARG2, r.arg2),
    ] {
        if mask & bit != 0 {
            put_u64(out, v);
        }
    }
    if mask & X_CPU != 0 {
        put_u64(out, r.cpu_ns);
    }
    if unexpected {
        put_u64(out, zigzag(r.result));
    }
    st.advance(op, r);
    Ok(())
}

fn set_bits(base: u8, bits: &[(bool, u8)]) -> u8 {
    bits.iter()
        .fold(base, |b, (on, bit)| if *on { b | bit } else { b })
}

/// How many entries each table holds so far: what a record may name.
#[derive(Clone, Copy, Debug, Default)]
pub struct Defined {
    /// Paths defined.
    pub paths: u64,
    /// Handles defined.
    pub handles: u64,
}

fn check_id(what: &'static str, id: u64, defined: u64, offset: u64) -> Result<(), TraceError> {
    if id < defined {
        Ok(())
    } else {
        Err(TraceError::Undefined { what, id, offset })
    }
}

/// Reads one record (with its prefix, if any).
pub fn decode(
    c: &mut Cursor,
    st: &mut OpsState,
    cpu: bool,
    defined: Defined,
) -> Result<Record, TraceError> {
    let mut r = Record::default();
    let mut at = c.offset();
    let mut b = c.u8()?;
    let mut prefix = 0;
    let mut mask = 0;
    if b & OP_MASK == PREFIX {
        prefix = b;
        r.is_async = b & P_ASYNC != 0;
        if b & P_EXTRA != 0 {
            let mask_at = c.offset();
            mask = c.u64()?;
            if mask == 0 || mask & !X_ALL != 0 {
                return Err(TraceError::malformed(
                    mask_at,
                    "an unknown field in a record's prefix",
                ));
            }
        }
        at = c.offset();
        b = c.u8()?;
    }
    let op = OpCode::from_u8(b & OP_MASK).ok_or(TraceError::InvalidOp {
        code: b & OP_MASK,
        offset: at,
    })?;
    r.op = Some(op);
    decode_body(c, st, cpu, defined, (at, b), mask, &mut r)?;
    if mask & X_HANDLE != 0 && !op.takes_handle() {
        let h_at = c.offset();
        let h = c.u64()?;
        check_id("handle", h, defined.handles, h_at)?;
        r.handle = Some(h as HandleId);
    }
    for (bit, field) in [
        (X_OFFSET, &mut r.offset),
        (X_LEN, &mut r.len),
        (X_ARG, &mut r.arg),
    ] {
        if mask & bit != 0 {
            *field = c.u64()?;
        }
    }
    for (bit, field) in [(X_ARG2, &mut r.arg2), (X_CPU, &mut r.cpu_ns)] {
        if mask & bit != 0 {
            *field = c.u64()?;
        }
    }
    r.result = match prefix & P_RESULT {
        0 => expected_result(op, r.offset, r.len),
        _ => c.i64()?,
    };
    st.advance(op, &r);
    Ok(r)
}

/// The op byte's flags and the fields every record of its op carries.
fn decode_body(
    c: &mut Cursor,
    st: &OpsState,
    cpu: bool,
    defined: Defined,
    (at, b): (u64, u8),
    mask: u64,
    r: &mut Record,
) -> Result<(), TraceError> {
    let op = r.op.unwrap_or(OpCode::Open);
    let takes = op.takes_handle() && mask & X_HANDLE == 0;
    let bad_flag = (b & SAME_HANDLE != 0 && !takes)
        || (b & SEQ != 0 && !(takes && has_offset(op)))
        || (b & SAME_LEN != 0 && !has_len(op));
    if bad_flag {
        return Err(TraceError::malformed(
            at,
            "a record flag on an op without that field",
        ));
    }
    r.start_ns = st
        .start
        .wrapping_add(super::varint::unzigzag(c.u64()?) as u64);
    r.dur_ns = c.u64()?;
    if takes {
        let h = if b & SAME_HANDLE != 0 {
            st.handle
                .ok_or_else(|| TraceError::malformed(at, "the same handle as no record before"))?
        } else {
            let h_at = c.offset();
            let h = c.u64()?;
            check_id("handle", h, defined.handles, h_at)?;
            h as HandleId
        };
        r.handle = Some(h);
    }
    if has_offset(op) {
        r.offset = if b & SEQ != 0 {
            let h = r.handle.unwrap_or_default();
            *st.ends.get(&h).ok_or_else(|| {
                TraceError::malformed(at, "a sequential record with no previous I/O on its handle")
            })?
        } else {
            let t_at = c.offset();
            let t = c.u128()?;
            untag(t_at, t)?
        };
    }
    if has_len(op) {
        r.len = if b & SAME_LEN != 0 {
            st.len
        } else {
            let t_at = c.offset();
            let t = c.u128()?;
            untag(t_at, t)?
        };
    }
    if has_arg(op) {
        r.arg = read_arg(c, arg_is_path(op), defined)?;
    }
    if op == OpCode::Rename {
        r.arg2 = read_arg(c, true, defined)?;
    }
    if cpu {
        r.cpu_ns = c.u64()?;
    }
    Ok(())
}

fn read_arg(c: &mut Cursor, is_path: bool, defined: Defined) -> Result<u64, TraceError> {
    let at = c.offset();
    let v = c.u64()?;
    if is_path {
        check_id("path", v, defined.paths, at)?;
    }
    Ok(v)
}

#[cfg(test)]
mod tests;
