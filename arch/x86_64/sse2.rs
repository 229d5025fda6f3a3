//! SSE2: 16-byte registers, `movntdq` streaming stores. Baseline on every x86_64 CPU.

use core::arch::x86_64::*;

use crate::kernel::kernels;
use crate::vector::Vector;
use crate::Backend;

// SAFETY: every method moves exactly 16 bytes; `Half = u64` is the 8-byte word.
unsafe impl Vector for __m128i {
    const BYTES: usize = 16;
    const STREAM_BYPASSES_CACHE: bool = true;
    type Half = u64;

    #[inline(always)]
    unsafe fn load(src: *const u8) -> Self {
        // SAFETY: 16 readable bytes (caller); `loadu` has no alignment requirement.
        unsafe { _mm_loadu_si128(src.cast()) }
    }
    #[inline(always)]
    unsafe fn splat(byte: u8) -> Self {
        // SAFETY: SSE2 is baseline on x86_64.
        unsafe { _mm_set1_epi8(byte as i8) }
    }
    #[inline(always)]
    unsafe fn store(self, dst: *mut u8) {
        // SAFETY: 16 writable bytes (caller).
        unsafe { _mm_storeu_si128(dst.cast(), self) }
    }
    #[inline(always)]
    unsafe fn store_aligned(self, dst: *mut u8) {
        // SAFETY: 16 writable, 16-aligned bytes (caller).
        unsafe { _mm_store_si128(dst.cast(), self) }
    }
    #[inline(always)]
    unsafe fn stream(self, dst: *mut u8) {
        // SAFETY: 16 writable, 16-aligned bytes; the kernel runs `sfence` before returning.
        unsafe { _mm_stream_si128(dst.cast(), self) }
    }
}

kernels!(pub(crate) static SSE2 = Backend::Sse2, __m128i, "sse2");
