//! LEB128 varints (7 bits a byte, low bits first, the high bit set on every byte but the last),
//! zigzag for signed values, and a bounds-checked cursor over one chunk's payload that turns
//! every shortfall into a [`TraceError`] naming the byte offset in the file.

use super::error::TraceError;

/// Appends `v` as a varint (1 to 10 bytes).
pub fn put_u64(out: &mut Vec<u8>, v: u64) {
    put_u128(out, u128::from(v));
}

/// Appends `v` as a varint (1 to 19 bytes): the tagged offsets and lengths need 65 bits.
pub fn put_u128(out: &mut Vec<u8>, mut v: u128) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Appends a length-prefixed byte string.
pub fn put_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    put_u64(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

/// Maps signed to unsigned so that small magnitudes stay small (0, -1, 1, -2 → 0, 1, 2, 3).
pub fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

/// The inverse of [`zigzag`].
pub fn unzigzag(v: u64) -> i64 {
    ((v >> 1) as i64) ^ -((v & 1) as i64)
}

/// Reads one chunk's payload; `base` is the payload's offset in the file, for messages.
pub struct Cursor<'a> {
    bytes: &'a [u8],
    pos: usize,
    base: u64,
}

impl<'a> Cursor<'a> {
    /// A cursor at the start of `bytes`, which begin at file offset `base`.
    pub fn new(bytes: &'a [u8], base: u64) -> Cursor<'a> {
        Cursor {
            bytes,
            pos: 0,
            base,
        }
    }

    /// The file offset of the next byte.
    pub fn offset(&self) -> u64 {
        self.base + self.pos as u64
    }

    /// Bytes not read yet.
    pub fn remaining(&self) -> usize {
        self.bytes.len() - self.pos
    }

    /// Whether the payload was read to its end.
    pub fn is_empty(&self) -> bool {
        self.remaining() == 0
    }

    /// One byte.
    pub fn u8(&mut self) -> Result<u8, TraceError> {
        let b = *self
            .bytes
            .get(self.pos)
            .ok_or_else(|| self.short("a byte"))?;
        self.pos += 1;
        Ok(b)
    }

    /// A varint that must fit in 64 bits.
    pub fn u64(&mut self) -> Result<u64, TraceError> {
        let at = self.offset();
        let v = self.u128()?;
        u64::try_from(v).map_err(|_| TraceError::malformed(at, "a number over 64 bits"))
    }

    /// A varint that must fit in 32 bits.
    pub fn u32(&mut self) -> Result<u32, TraceError> {
        let at = self.offset();
        let v = self.u64()?;
        u32::try_from(v).map_err(|_| TraceError::malformed(at, "a number over 32 bits"))
    }

    /// A varint of at most 19 bytes (129 bits would not fit: refused).
    pub fn u128(&mut self) -> Result<u128, TraceError> {
        let at = self.offset();
        let mut v: u128 = 0;
        for i in 0..19 {
            let b = self.u8()?;
            let bits = u128::from(b & 0x7f);
            if i == 18 && b > 0x03 {
                return Err(TraceError::malformed(at, "a number over 128 bits"));
            }
            v |= bits << (7 * i);
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(TraceError::malformed(at, "a number over 128 bits"))
    }

    /// A zigzag-coded signed varint.
    pub fn i64(&mut self) -> Result<i64, TraceError> {
        Ok(unzigzag(self.u64()?))
    }

    /// A length-prefixed UTF-8 string of at most `limit` bytes; `what` names it in errors.
    pub fn string(&mut self, what: &'static str, limit: u64) -> Result<String, TraceError> {
        let at = self.offset();
        let len = self.u64()?;
        if len > limit {
            return Err(TraceError::TooLong {
                what,
                len,
                limit,
                offset: at,
            });
        }
        // Checked against what is left before anything is allocated.
        if len > self.remaining() as u64 {
            return Err(self.short(what));
        }
        let bytes = &self.bytes[self.pos..self.pos + len as usize];
        self.pos += len as usize;
        String::from_utf8(bytes.to_vec())
            .map_err(|_| TraceError::malformed(at, &format!("{what} that is not UTF-8")))
    }

    /// The error for a payload that ends before `what`.
    fn short(&self, what: &str) -> TraceError {
        TraceError::malformed(self.offset(), &format!("the chunk ends before {what}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_round_trip_at_their_edges() {
        let values = [
            0,
            1,
            127,
            128,
            16_383,
            16_384,
            u64::from(u32::MAX),
            u64::MAX,
        ];
        let mut out = Vec::new();
        for v in values {
            put_u64(&mut out, v);
        }
        put_u128(&mut out, u128::from(u64::MAX) << 1 | 1);
        let mut c = Cursor::new(&out, 100);
        for v in values {
            assert_eq!(c.u64().unwrap(), v);
        }
        assert_eq!(c.u128().unwrap(), u128::from(u64::MAX) << 1 | 1);
        assert!(c.is_empty());
    }

    #[test]
    fn small_values_take_one_byte() {
        let mut out = Vec::new();
        put_u64(&mut out, 127);
        assert_eq!(out, [127]);
        put_u64(&mut out, 128);
        assert_eq!(out, [127, 0x80, 0x01]);
    }

    #[test]
    fn zigzag_keeps_small_magnitudes_small() {
        for (v, z) in [
            (0, 0),
            (-1, 1),
            (1, 2),
            (-2, 3),
            (i64::MIN, u64::MAX),
            (i64::MAX, u64::MAX - 1),
        ] {
            assert_eq!(zigzag(v), z);
            assert_eq!(unzigzag(z), v);
        }
    }

    #[test]
    fn a_short_or_overlong_number_is_an_error_at_its_offset() {
        let mut c = Cursor::new(&[0x80, 0x80], 40);
        let e = c.u64().unwrap_err().to_string();
        assert!(e.contains("byte 42"), "{e}");
        let too_big = [0xff; 19];
        assert!(Cursor::new(&too_big, 0).u128().is_err());
        let mut out = Vec::new();
        put_u128(&mut out, 1 << 64);
        let e = Cursor::new(&out, 7).u64().unwrap_err().to_string();
        assert!(e.contains("byte 7") && e.contains("64 bits"), "{e}");
    }

    #[test]
    fn strings_are_checked_against_the_limit_and_what_is_left() {
        let mut out = Vec::new();
        put_bytes(&mut out, b"base/16384/2619");
        assert_eq!(
            Cursor::new(&out, 0).string("a path", 4096).unwrap(),
            "base/16384/2619"
        );
        let e = Cursor::new(&out, 0).string("a path", 4).unwrap_err();
        assert!(
            matches!(
                e,
                TraceError::TooLong {
                    len: 15,
                    limit: 4,
                    ..
                }
            ),
            "{e}"
        );
        let mut claim = Vec::new();
        put_u64(&mut claim, 4000);
        assert!(Cursor::new(&claim, 0).string("a path", 4096).is_err());
        let mut bad = Vec::new();
        put_bytes(&mut bad, &[0xff, 0xfe]);
        assert!(Cursor::new(&bad, 0).string("a path", 4096).is_err());
    }
}
