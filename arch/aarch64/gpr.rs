//! The `Generic` backend's register on aarch64: two 64-bit general-purpose registers, moved with
//! `ldp`/`stp x` and streamed with `stnp x, x`, as Linux's arm64 `copy_page`/`memcpy` (x-register
//! build) and Arm's optimized-routines `memcpy` without SIMD do.
//!
//! The moves are inline assembly rather than two `u64` reads and writes because on a hard-float
//! target (`aarch64-unknown-none`, with `--cfg cachecopy_integer_only`) LLVM merges adjacent
//! 64-bit moves into one `ldr`/`str q` (store merging in instruction selection, which no
//! `-C no-vectorize-*` flag turns off), and a kernel that has not saved the vector state must
//! not touch `q` registers. With the assembly the copy and fill body uses `x` registers whatever
//! the target. Miri runs no assembly: there plain reads and writes stand in.

use crate::vector::{add64, Checksum, Vector};

/// 16 consecutive bytes in two `x` registers, the low address in `.0`.
#[derive(Clone, Copy)]
pub(crate) struct XPair(u64, u64);

// SAFETY: every method moves exactly 16 bytes; `Half = u64` is the 8-byte word; 16 divides
// `STREAM_LINE` (128).
unsafe impl Vector for XPair {
    const BYTES: usize = 16;
    /// `stnp` is only a hint (Arm ARM C3.2.9): a flush-cache copy still cleans every line.
    const STREAM_BYPASSES_CACHE: bool = false;
    type Half = u64;

    #[inline(always)]
    unsafe fn load(src: *const u8) -> Self {
        cfg_if::cfg_if! {
            if #[cfg(miri)] {
                // SAFETY: 16 readable bytes (caller); unaligned reads.
                unsafe { XPair(src.cast::<u64>().read_unaligned(), src.add(8).cast::<u64>().read_unaligned()) }
            } else {
                let (a, b): (u64, u64);
                // SAFETY: 16 readable bytes (caller); `ldp x` needs no alignment on Normal
                // memory with alignment checking off (as any compiled Rust code assumes).
                unsafe {
                    core::arch::asm!(
                        "ldp {a}, {b}, [{p}]",
                        p = in(reg) src,
                        a = out(reg) a,
                        b = out(reg) b,
                        options(nostack, preserves_flags, readonly),
                    )
                };
                XPair(a, b)
            }
        }
    }
    #[inline(always)]
    unsafe fn splat(byte: u8) -> Self {
        let w = u64::from_ne_bytes([byte; 8]);
        XPair(w, w)
    }
    #[inline(always)]
    unsafe fn store(self, dst: *mut u8) {
        cfg_if::cfg_if! {
            if #[cfg(miri)] {
                // SAFETY: 16 writable bytes (caller); unaligned writes.
                unsafe {
                    dst.cast::<u64>().write_unaligned(self.0);
                    dst.add(8).cast::<u64>().write_unaligned(self.1);
                }
            } else {
                // SAFETY: 16 writable bytes (caller); `stp x` needs no alignment on Normal
                // memory. Writes memory: no `nomem`/`readonly`.
                unsafe {
                    core::arch::asm!(
                        "stp {a}, {b}, [{p}]",
                        p = in(reg) dst,
                        a = in(reg) self.0,
                        b = in(reg) self.1,
                        options(nostack, preserves_flags),
                    )
                }
            }
        }
    }
    #[inline(always)]
    unsafe fn stream(self, dst: *mut u8) {
        // SAFETY: 16 writable, 16-aligned bytes (caller); the kernel runs `stream_fence`
        // (`dmb ishst`) before returning.
        stnp_pair!(self, dst, "stnp {a}, {b}, [{p}]", reg);
    }
    #[inline(always)]
    unsafe fn from_words(word: impl Fn(usize) -> u64) -> Self {
        XPair(word(0), word(1))
    }
}

// SAFETY: two independent end-around-carry 64-bit sums, which never wrap and each stay
// congruent modulo 2^16 - 1; the reduction adds them with end-around carry.
unsafe impl Checksum for XPair {
    #[inline(always)]
    unsafe fn csum_zero() -> Self {
        XPair(0, 0)
    }
    #[inline(always)]
    unsafe fn csum_add(acc: Self, v: Self) -> Self {
        XPair(add64(acc.0, v.0), add64(acc.1, v.1))
    }
    #[inline(always)]
    unsafe fn csum_reduce(acc: Self) -> u64 {
        add64(acc.0, acc.1)
    }
}
