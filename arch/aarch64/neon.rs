//! NEON: 16-byte `q` registers, moved in pairs (`ldp`/`stp q`), streamed with `stnp q, q`.
//!
//! Why the kernel's `Vector` is a *pair* of `q` registers rather than one:
//! - `stnp` (the only non-temporal store; there is no intrinsic) stores two registers at once, so
//!   a 32-byte streaming unit maps one `stream` call to one instruction; a 16-byte unit would need
//!   `stnp d, d` of the two halves and twice the instructions in the streamed body.
//! - `ldp`/`stp q` is what fast arm64 copies are made of (Arm's optimized-routines memcpy, glibc's
//!   `__memcpy_simd`): with `W = 32` the kernel's shape becomes 17–32 B as two overlapping `q`
//!   (the 16-byte `Half`), 33–64 B as two overlapping pairs, 65–128 B as four pairs (eight `q`,
//!   Arm's `copy128` shape), and above that a 128-byte, destination-aligned body of four
//!   `ldp`/`stp` pairs per iteration with a 128-byte overlapping tail. LLVM forms the `ldp`/`stp`
//!   from the two adjacent 16-byte moves itself, so no assembly is needed for the temporal path.

use core::arch::aarch64::{
    uint8x16_t, vaddq_u64, vaddvq_u64, vcombine_u64, vcreate_u64, vdupq_n_u8, vget_high_u8,
    vget_low_u8, vld1q_u8, vpadalq_u32, vreinterpretq_u32_u8, vreinterpretq_u64_u8,
    vreinterpretq_u8_u64, vst1q_u8,
};

use crate::vector::{Checksum, Vector};

/// Two `q` registers: 32 consecutive bytes, the low address in `.0`.
#[derive(Clone, Copy)]
pub(crate) struct Pair(uint8x16_t, uint8x16_t);

// SAFETY: every method moves exactly 16 bytes; `Half = u64` is the 8-byte word. NEON is part of
// every target this module is compiled for (`target_feature = "neon"`).
unsafe impl Vector for uint8x16_t {
    const BYTES: usize = 16;
    /// `stnp` is a hint: the line may still be allocated in a cache (Arm ARM C3.2.9).
    const STREAM_BYPASSES_CACHE: bool = false;
    type Half = u64;

    #[inline(always)]
    unsafe fn load(src: *const u8) -> Self {
        // SAFETY: 16 readable bytes (caller); `ld1`/`ldr q` need no alignment.
        unsafe { vld1q_u8(src) }
    }
    #[inline(always)]
    unsafe fn splat(byte: u8) -> Self {
        // SAFETY: NEON is baseline here.
        unsafe { vdupq_n_u8(byte) }
    }
    #[inline(always)]
    unsafe fn store(self, dst: *mut u8) {
        // SAFETY: 16 writable bytes (caller).
        unsafe { vst1q_u8(dst, self) }
    }
    #[inline(always)]
    unsafe fn stream(self, dst: *mut u8) {
        cfg_if::cfg_if! {
            if #[cfg(miri)] {
                // SAFETY: as `store`.
                unsafe { self.store(dst) }
            } else {
                // Not used by the kernel (it streams `Pair`s); `stnp d, d` of the two halves.
                // SAFETY: 16 writable bytes (caller); `stnp` has no alignment requirement on
                // Normal memory; writes memory, so no `nomem`/`readonly`.
                unsafe {
                    core::arch::asm!(
                        "stnp {lo:d}, {hi:d}, [{p}]",
                        lo = in(vreg) vget_low_u8(self),
                        hi = in(vreg) vget_high_u8(self),
                        p = in(reg) dst,
                        options(nostack, preserves_flags),
                    )
                }
            }
        }
    }
    #[inline(always)]
    unsafe fn from_words(word: impl Fn(usize) -> u64) -> Self {
        // SAFETY: NEON is baseline here; register-only.
        unsafe { vreinterpretq_u8_u64(vcombine_u64(vcreate_u64(word(0)), vcreate_u64(word(1)))) }
    }
}

// SAFETY: each 64-bit lane only ever gains 32-bit halves (less than 2^33 per register added), so
// within `CSUM_CHUNK` (2^30) bytes, at most 2^30 / 8 halves-pairs in all, every lane and even the
// sum of all lanes stays below 2^60: the reduction's plain adds are exact, hence an end-around
// sum, congruent as the contract asks.
unsafe impl Checksum for uint8x16_t {
    // Each 64-bit lane gains its two 32-bit halves (hi + lo is congruent to hi * 2^32 + lo
    // modulo 2^32 - 1, hence modulo 2^16 - 1) in one `uadalp` (pairwise add and accumulate).
    #[inline(always)]
    unsafe fn csum_add(acc: Self, v: Self) -> Self {
        // SAFETY: register-only NEON operations (baseline here).
        unsafe {
            vreinterpretq_u8_u64(vpadalq_u32(
                vreinterpretq_u64_u8(acc),
                vreinterpretq_u32_u8(v),
            ))
        }
    }
    // The lanes added plainly (they cannot carry, above): one `addp`.
    #[inline(always)]
    unsafe fn csum_reduce(acc: Self) -> u64 {
        // SAFETY: register-only NEON operations (baseline here).
        unsafe { vaddvq_u64(vreinterpretq_u64_u8(acc)) }
    }
}

// SAFETY: every method moves exactly 32 bytes (two adjacent 16-byte registers); `Half` is the
// 16-byte register. 32 divides `STREAM_LINE` (128).
unsafe impl Vector for Pair {
    const BYTES: usize = 32;
    /// `stnp` is only a hint (Arm ARM C3.2.9, "non-temporal"): a flush-cache copy still cleans
    /// every line it streamed.
    const STREAM_BYPASSES_CACHE: bool = false;
    type Half = uint8x16_t;

    #[inline(always)]
    unsafe fn load(src: *const u8) -> Self {
        // SAFETY: 32 readable bytes (caller), so both halves are.
        unsafe { Pair(uint8x16_t::load(src), uint8x16_t::load(src.add(16))) }
    }
    #[inline(always)]
    unsafe fn splat(byte: u8) -> Self {
        // SAFETY: NEON is baseline here.
        let v = unsafe { uint8x16_t::splat(byte) };
        Pair(v, v)
    }
    #[inline(always)]
    unsafe fn store(self, dst: *mut u8) {
        // SAFETY: 32 writable bytes (caller), so both halves are.
        unsafe {
            self.0.store(dst);
            self.1.store(dst.add(16));
        }
    }
    #[inline(always)]
    unsafe fn stream(self, dst: *mut u8) {
        // SAFETY: 32 writable, 32-aligned bytes (caller); `stnp q` needs no alignment on Normal
        // memory anyway. The kernel runs `stream_fence` before returning.
        stnp_pair!(self, dst, "stnp {a:q}, {b:q}, [{p}]", vreg);
    }
    #[inline(always)]
    unsafe fn from_words(word: impl Fn(usize) -> u64) -> Self {
        // SAFETY: NEON is baseline here.
        unsafe {
            Pair(
                uint8x16_t::from_words(&word),
                uint8x16_t::from_words(|i| word(i + 2)),
            )
        }
    }
}

// SAFETY: two independent `uint8x16_t` accumulators, each keeping its own congruence; together
// they hold the lanes of at most `CSUM_CHUNK` bytes, so their plain sum cannot carry either.
unsafe impl Checksum for Pair {
    // Two independent accumulators, one per register: two `uadalp` per 32 bytes.
    #[inline(always)]
    unsafe fn csum_add(acc: Self, v: Self) -> Self {
        // SAFETY: as `uint8x16_t::csum_add`.
        unsafe {
            Pair(
                uint8x16_t::csum_add(acc.0, v.0),
                uint8x16_t::csum_add(acc.1, v.1),
            )
        }
    }
    #[inline(always)]
    unsafe fn csum_reduce(acc: Self) -> u64 {
        // SAFETY: register-only NEON operations (baseline here).
        unsafe {
            vaddvq_u64(vaddq_u64(
                vreinterpretq_u64_u8(acc.0),
                vreinterpretq_u64_u8(acc.1),
            ))
        }
    }
}
