//! The portable backend: 64-bit words in general-purpose registers, for any target, for
//! soft-float targets and for `cachecopy_integer_only` builds. On x86_64 its streaming store is
//! `movnti` from a general-purpose register, written as inline assembly because the
//! `_mm_stream_si64` intrinsic requires the `sse2` target feature, which soft-float targets
//! (`x86_64-unknown-none`, `x86_64-unknown-uefi`) do not have, although every x86_64 CPU runs
//! `movnti`. Elsewhere a word has no streaming store and `stream` is an ordinary store (aarch64
//! moves words in pairs instead: `arch/aarch64/gpr.rs`). On x86_64 the loads and stores are
//! inline assembly too (see `load`).

use crate::vector::{add64, Checksum, Vector};

// SAFETY: a `u64` load/store touches exactly 8 bytes; `Half = Self` for the narrowest word.
unsafe impl Vector for u64 {
    const BYTES: usize = 8;
    const STREAM_BYPASSES_CACHE: bool = cfg!(all(target_arch = "x86_64", not(miri)));
    type Half = u64;

    #[inline(always)]
    unsafe fn load(src: *const u8) -> Self {
        cfg_if::cfg_if! {
            if #[cfg(all(target_arch = "x86_64", not(miri)))] {
                // General-purpose registers in every build: on hard-float targets LLVM merges
                // adjacent word moves into `movups` (store merging in instruction selection, which
                // no `-C no-vectorize-*` flag stops), and `cachecopy_integer_only` builds must not
                // touch vector registers. Spelled out in every build, so `Backend::Generic` is
                // the same code wherever it runs (and measured as such next to the vector
                // backends).
                let v: u64;
                // SAFETY: the caller guarantees 8 readable bytes; `mov` needs no alignment.
                unsafe {
                    core::arch::asm!(
                        "mov {v}, qword ptr [{p}]",
                        p = in(reg) src,
                        v = out(reg) v,
                        options(nostack, preserves_flags, readonly),
                    )
                };
                v
            } else {
                // SAFETY: the caller guarantees 8 readable bytes; no alignment needed.
                unsafe { src.cast::<u64>().read_unaligned() }
            }
        }
    }
    #[inline(always)]
    unsafe fn splat(byte: u8) -> Self {
        u64::from_ne_bytes([byte; 8])
    }
    #[inline(always)]
    unsafe fn store(self, dst: *mut u8) {
        cfg_if::cfg_if! {
            if #[cfg(all(target_arch = "x86_64", not(miri)))] {
                // SAFETY: the caller guarantees 8 writable bytes; `mov` needs no alignment.
                // Writes memory: no `nomem`/`readonly`. (Why assembly: see `load`.)
                unsafe {
                    core::arch::asm!(
                        "mov qword ptr [{p}], {v}",
                        p = in(reg) dst,
                        v = in(reg) self,
                        options(nostack, preserves_flags),
                    )
                }
            } else {
                // SAFETY: the caller guarantees 8 writable bytes; no alignment needed.
                unsafe { dst.cast::<u64>().write_unaligned(self) }
            }
        }
    }
    #[inline(always)]
    unsafe fn stream(self, dst: *mut u8) {
        cfg_if::cfg_if! {
            if #[cfg(all(target_arch = "x86_64", not(miri)))] {
                // SAFETY: `dst` is 8-aligned and writable; `movnti` (SSE2, baseline on every
                // x86_64 CPU) writes those 8 bytes from a general-purpose register; the kernel
                // fences (`sfence`) before returning. Writes memory: no `nomem`/`readonly`.
                unsafe {
                    core::arch::asm!(
                        "movnti qword ptr [{p}], {v}",
                        p = in(reg) dst,
                        v = in(reg) self,
                        options(nostack, preserves_flags),
                    )
                }
            } else {
                // SAFETY: as `store`; the caller guarantees 8 writable, 8-aligned bytes.
                unsafe { self.store(dst) }
            }
        }
    }
    #[inline(always)]
    unsafe fn from_words(word: impl Fn(usize) -> u64) -> Self {
        word(0)
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
