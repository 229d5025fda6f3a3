//! AVX2: 32-byte registers, `vmovntdq ymm` streaming stores.

use core::arch::x86_64::*;

use crate::kernel::kernels;
use crate::vector::Vector;
use crate::Backend;

// SAFETY: every method moves exactly 32 bytes; `Half = __m128i` is the 16-byte register. Only
// instantiated inside `#[target_feature(enable = "avx2")]` entry points.
unsafe impl Vector for __m256i {
    const BYTES: usize = 32;
    const STREAM_BYPASSES_CACHE: bool = true;
    type Half = __m128i;

    #[inline(always)]
    unsafe fn load(src: *const u8) -> Self {
        // SAFETY: 32 readable bytes (caller); unaligned load.
        unsafe { _mm256_loadu_si256(src.cast()) }
    }
    #[inline(always)]
    unsafe fn splat(byte: u8) -> Self {
        // SAFETY: AVX is present (caller runs inside the AVX2 entry point).
        unsafe { _mm256_set1_epi8(byte as i8) }
    }
    #[inline(always)]
    unsafe fn store(self, dst: *mut u8) {
        // SAFETY: 32 writable bytes (caller).
        unsafe { _mm256_storeu_si256(dst.cast(), self) }
    }
    #[inline(always)]
    unsafe fn store_aligned(self, dst: *mut u8) {
        // SAFETY: 32 writable, 32-aligned bytes (caller).
        unsafe { _mm256_store_si256(dst.cast(), self) }
    }
    #[inline(always)]
    unsafe fn stream(self, dst: *mut u8) {
        // SAFETY: 32 writable, 32-aligned bytes; the kernel runs `sfence` before returning.
        unsafe { _mm256_stream_si256(dst.cast(), self) }
    }
}

kernels!(pub(crate) static AVX2 = Backend::Avx2, __m256i, "avx2");
