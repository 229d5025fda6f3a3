//! AVX-512 (F + BW): 64-byte registers, `vmovntdq zmm` streaming stores, and byte-masked moves
//! for everything shorter than one register (a masked-off lane neither faults nor writes, so a
//! 1..63-byte move is one load and one store that never leave the buffers).

use core::arch::x86_64::*;

use crate::vector::{Checksum, Vector};

/// The mask selecting the first `n < 64` bytes.
#[inline(always)]
fn prefix_mask(n: usize) -> __mmask64 {
    debug_assert!(n < 64);
    (1u64 << n) - 1
}

// SAFETY: every method moves exactly 64 bytes (or the masked prefix); `Half = __m256i`. Only
// instantiated inside `#[target_feature(enable = "avx512f,avx512bw")]` entry points.
unsafe impl Vector for __m512i {
    const BYTES: usize = 64;
    const STREAM_BYPASSES_CACHE: bool = true;
    const MASKED: bool = true;
    type Half = __m256i;

    moves!(
        _mm512_loadu_si512,
        _mm512_storeu_si512,
        _mm512_store_si512,
        _mm512_stream_si512
    );
    #[inline(always)]
    unsafe fn splat(byte: u8) -> Self {
        // SAFETY: AVX-512F present (caller).
        unsafe { _mm512_set1_epi8(byte as i8) }
    }
    #[inline(always)]
    unsafe fn load_prefix(src: *const u8, n: usize) -> Self {
        // SAFETY: `n` readable bytes; masked-off lanes are not accessed (no fault, no read).
        unsafe { _mm512_maskz_loadu_epi8(prefix_mask(n), src.cast()) }
    }
    #[inline(always)]
    unsafe fn store_prefix(self, dst: *mut u8, n: usize) {
        // SAFETY: `n` writable bytes; masked-off lanes are not written.
        unsafe { _mm512_mask_storeu_epi8(dst.cast(), prefix_mask(n), self) }
    }
    #[inline(always)]
    unsafe fn from_words(word: impl Fn(usize) -> u64) -> Self {
        // SAFETY: AVX-512F present (caller); register-only.
        unsafe {
            _mm512_set_epi64(
                word(7) as i64,
                word(6) as i64,
                word(5) as i64,
                word(4) as i64,
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
unsafe impl Checksum for __m512i {
    csum_add!(
        _mm512_and_si512,
        _mm512_set1_epi64,
        _mm512_add_epi64,
        _mm512_srli_epi64
    );
    // The halves added plainly (they cannot carry, above), down to one lane: the end-around
    // fold of the eight lanes as scalars was vectorized by LLVM into a serial chain of
    // `vpmaxuq`/compare/subtract steps and mask-register shifts on every call, the likely cause
    // of a checksum loss on the Intel Xeon (lab/findings/checksums.md).
    #[inline(always)]
    unsafe fn csum_reduce(acc: Self) -> u64 {
        // SAFETY: register-only AVX-512F and AVX2 operations (both present, caller).
        unsafe {
            let s = _mm256_add_epi64(
                _mm512_castsi512_si256(acc),
                _mm512_extracti64x4_epi64::<1>(acc),
            );
            let s = _mm_add_epi64(_mm256_castsi256_si128(s), _mm256_extracti128_si256::<1>(s));
            _mm_cvtsi128_si64(_mm_add_epi64(s, _mm_unpackhi_epi64(s, s))) as u64
        }
    }
}
