//! Page-aligned I/O buffers (O_DIRECT needs alignment) and their contents.

use std::alloc::{alloc_zeroed, dealloc, Layout};

/// Alignment of every buffer: a page, enough for O_DIRECT on any logical block size.
pub const ALIGN: usize = 4096;

/// One page-aligned, zero-initialised heap buffer.
pub struct AlignedBuf {
    ptr: *mut u8,
    len: usize,
}

// SAFETY: AlignedBuf owns its allocation exclusively, like a Box<[u8]>.
unsafe impl Send for AlignedBuf {}

impl AlignedBuf {
    /// Allocates `len` bytes (rounded up to [`ALIGN`]), zeroed.
    pub fn new(len: usize) -> AlignedBuf {
        let len = len.max(1).div_ceil(ALIGN) * ALIGN;
        let layout = Layout::from_size_align(len, ALIGN).expect("buffer size overflows");
        // SAFETY: layout has non-zero size.
        let ptr = unsafe { alloc_zeroed(layout) };
        if ptr.is_null() {
            std::alloc::handle_alloc_error(layout);
        }
        AlignedBuf { ptr, len }
    }

    /// The buffer as a slice.
    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: ptr is valid for len initialised bytes for the life of self.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }

    /// The buffer as a mutable slice.
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: ptr is valid for len bytes and &mut self guarantees exclusive access.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }

    /// Raw pointer, for engines that hand the buffer to the kernel.
    pub fn as_mut_ptr(&mut self) -> *mut u8 {
        self.ptr
    }

    /// Length in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True if empty (never: buffers are at least one page).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        let layout = Layout::from_size_align(self.len, ALIGN).expect("layout was valid at alloc");
        // SAFETY: ptr was allocated with exactly this layout and is freed once.
        unsafe { dealloc(self.ptr, layout) }
    }
}

/// Fills `buf` with pseudo-random bytes from `rng`, leaving `compress_pct` % of every 4 KiB
/// chunk zero so that compressing file systems see that compressibility (fio's scheme).
pub fn fill(buf: &mut [u8], rng: &mut fastrand::Rng, compress_pct: u8) {
    const CHUNK: usize = 4096;
    let random_len = CHUNK * (100 - usize::from(compress_pct.min(100))) / 100;
    for chunk in buf.chunks_mut(CHUNK) {
        let n = random_len.min(chunk.len());
        let (random, zeros) = chunk.split_at_mut(n);
        rng.fill(random);
        zeros.fill(0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_are_page_aligned() {
        let mut b = AlignedBuf::new(8192 + 1);
        assert_eq!(b.as_mut_ptr() as usize % ALIGN, 0);
        assert_eq!(b.len(), 12288);
        assert!(b.as_slice().iter().all(|&x| x == 0));
    }

    #[test]
    fn fill_is_deterministic_and_honours_compressibility() {
        let (mut a, mut b) = (vec![0u8; 16384], vec![0u8; 16384]);
        fill(&mut a, &mut fastrand::Rng::with_seed(7), 25);
        fill(&mut b, &mut fastrand::Rng::with_seed(7), 25);
        assert_eq!(a, b);
        let zeros = a.iter().filter(|&&x| x == 0).count();
        assert!(
            (4096..4300).contains(&zeros),
            "25% of 16 KiB should be zero, got {zeros}"
        );
    }
}
