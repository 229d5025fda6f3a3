//! SSE2: 16-byte registers, `movntdq` streaming stores. Baseline on every x86_64 CPU.

use core::arch::x86_64::*;

use crate::vector::{Checksum, Vector};

// SAFETY: every method moves exactly 16 bytes; `Half = u64` is the 8-byte word.
unsafe impl Vector for __m128i {
    const BYTES: usize = 16;
    const STREAM_BYPASSES_CACHE: bool = true;
    type Half = u64;

    moves!(
        _mm_loadu_si128,
        _mm_storeu_si128,
        _mm_store_si128,
        _mm_stream_si128
    );
    #[inline(always)]
    unsafe fn splat(byte: u8) -> Self {
        // The byte repeated in a 32-bit word (one multiply), then that word in every lane: one
        // shuffle. `_mm_set1_epi8` lowers to `movd; punpcklbw; pshuflw; pshufd` on SSE2, one
        // instruction more on every fill of 16-64 bytes the call site runs inline.
        let word = u32::from(byte).wrapping_mul(0x0101_0101);
        // SAFETY: SSE2 is baseline on x86_64.
        unsafe { _mm_set1_epi32(word as i32) }
    }
    #[inline(always)]
    unsafe fn from_words(word: impl Fn(usize) -> u64) -> Self {
        // SAFETY: SSE2 present (caller); register-only.
        unsafe { _mm_set_epi64x(word(1) as i64, word(0) as i64) }
    }
}

// SAFETY: each 64-bit lane only ever gains 32-bit halves (less than 2^33 per register added), so
// within `CSUM_CHUNK` (2^30) bytes, at most 2^30 / 8 halves-pairs in all, every lane and even the
// sum of all lanes stays below 2^60: the reduction's plain adds are exact, hence an end-around
// sum, congruent as the contract asks.
unsafe impl Checksum for __m128i {
    csum_add!(
        _mm_and_si128,
        _mm_set1_epi64x,
        _mm_add_epi64,
        _mm_srli_epi64
    );
    // The lanes added plainly (they cannot carry, above), in registers: the end-around fold
    // of the lanes as scalars was vectorized by LLVM into a compare-and-subtract per step.
    #[inline(always)]
    unsafe fn csum_reduce(acc: Self) -> u64 {
        // SAFETY: register-only SSE2 operations (baseline on x86_64).
        unsafe { _mm_cvtsi128_si64(_mm_add_epi64(acc, _mm_unpackhi_epi64(acc, acc))) as u64 }
    }
}
