//! The portable backend: 64-bit words, for any target and for `no_std` builds without SIMD.
//! On x86_64 its streaming store is `movnti` (SSE2 is part of the x86_64 baseline); elsewhere a
//! word has no streaming store and `stream` is an ordinary store.

use crate::vector::{add64, Checksum, Vector};

// SAFETY: a `u64` load/store touches exactly 8 bytes; `Half = Self` for the narrowest word.
unsafe impl Vector for u64 {
    const BYTES: usize = 8;
    const STREAM_BYPASSES_CACHE: bool = cfg!(all(target_arch = "x86_64", not(miri)));
    type Half = u64;

    #[inline(always)]
    unsafe fn load(src: *const u8) -> Self {
        // SAFETY: the caller guarantees 8 readable bytes; no alignment needed.
        unsafe { src.cast::<u64>().read_unaligned() }
    }
    #[inline(always)]
    unsafe fn splat(byte: u8) -> Self {
        u64::from_ne_bytes([byte; 8])
    }
    #[inline(always)]
    unsafe fn store(self, dst: *mut u8) {
        // SAFETY: the caller guarantees 8 writable bytes; no alignment needed.
        unsafe { dst.cast::<u64>().write_unaligned(self) }
    }
    #[inline(always)]
    unsafe fn store_aligned(self, dst: *mut u8) {
        // SAFETY: the caller guarantees 8 writable, 8-aligned bytes.
        unsafe { dst.cast::<u64>().write(self) }
    }
    #[inline(always)]
    unsafe fn stream(self, dst: *mut u8) {
        cfg_if::cfg_if! {
            if #[cfg(all(target_arch = "x86_64", not(miri)))] {
                // SAFETY: `dst` is 8-aligned and writable; `movnti` is baseline on x86_64; the
                // kernel fences before returning.
                unsafe { core::arch::x86_64::_mm_stream_si64(dst.cast::<i64>(), self as i64) }
            } else {
                // SAFETY: as `store_aligned`.
                unsafe { self.store_aligned(dst) }
            }
        }
    }
}

// SAFETY: the accumulator is one end-around-carry 64-bit sum, which never wraps and stays
// congruent modulo 2^16 - 1.
unsafe impl Checksum for u64 {
    #[inline(always)]
    unsafe fn csum_zero() -> Self {
        0
    }
    #[inline(always)]
    unsafe fn csum_add(acc: Self, v: Self) -> Self {
        add64(acc, v)
    }
    #[inline(always)]
    unsafe fn csum_reduce(acc: Self) -> u64 {
        acc
    }
}
