//! AVX2: 32-byte registers, `vmovntdq ymm` streaming stores.

use core::arch::x86_64::*;

use crate::vector::{Checksum, Vector};

// SAFETY: every method moves exactly 32 bytes; `Half = __m128i` is the 16-byte register. Only
// instantiated inside `#[target_feature(enable = "avx2")]` entry points.
unsafe impl Vector for __m256i {
    const BYTES: usize = 32;
    const STREAM_BYPASSES_CACHE: bool = true;
    type Half = __m128i;

    moves!(
        _mm256_loadu_si256,
        _mm256_storeu_si256,
        _mm256_store_si256,
        _mm256_stream_si256
    );
    #[inline(always)]
    unsafe fn splat(byte: u8) -> Self {
        // SAFETY: AVX is present (caller runs inside the AVX2 entry point).
        unsafe { _mm256_set1_epi8(byte as i8) }
    }
    #[inline(always)]
    unsafe fn from_words(word: impl Fn(usize) -> u64) -> Self {
        // SAFETY: AVX2 present (caller); register-only.
        unsafe {
            _mm256_set_epi64x(
                word(3) as i64,
                word(2) as i64,
                word(1) as i64,
                word(0) as i64,
            )
        }
    }
}

// SAFETY: each 64-bit lane only ever gains 32-bit halves (less than 2^33 per register added), so
// within `CSUM_CHUNK` (2^30) bytes, at most 2^30 / 8 halves-pairs in all, every lane and even the
// sum of all lanes stays below 2^60: the reduction's plain adds are exact, hence an end-around
// sum, congruent as the contract asks.
unsafe impl Checksum for __m256i {
    csum_add!(
        _mm256_and_si256,
        _mm256_set1_epi64x,
        _mm256_add_epi64,
        _mm256_srli_epi64
    );
    // The halves added plainly (they cannot carry, above), then the 16-byte register's lanes:
    // the end-around fold of the lanes as scalars was vectorized by LLVM into a slow chain of
    // compare-and-subtract steps (lab/findings/checksums.md).
    #[inline(always)]
    unsafe fn csum_reduce(acc: Self) -> u64 {
        // SAFETY: register-only AVX2 operations (AVX2 present, caller).
        unsafe {
            let s = _mm_add_epi64(
                _mm256_castsi256_si128(acc),
                _mm256_extracti128_si256::<1>(acc),
            );
            _mm_cvtsi128_si64(_mm_add_epi64(s, _mm_unpackhi_epi64(s, s))) as u64
        }
    }
}
