//! Fills of 32 to 64 bytes as two overlapping 32-byte AVX stores of a broadcast byte, at the
//! call site: the shape glibc's AVX2 `memset` has for these lengths, where the plain classes
//! store four 16-byte registers. A variant of the small fills a plan selects only on the CPUs
//! whose runs measured it (`Small::AvxPairs`).
//!
//! Inline assembly, as the masked class (`super::masked`), so that a call site compiled for the
//! baseline target runs it without `#[target_feature]`. It ends with `vzeroupper`, which clears
//! the upper halves of every `ymm` register: all sixteen `xmm` registers are declared clobbered,
//! so a caller compiled with AVX keeps no value in any of them across it (the registers are
//! caller-saved in every x86_64 ABI, so a caller without AVX loses nothing it kept).

use core::arch::asm;

/// Sets `32 <= len <= 64` bytes to `byte` with two 32-byte stores, at `dst` and `dst + len - 32`.
///
/// # Safety
/// `32 <= len <= 64`; `dst..dst + len` writable; the CPU runs AVX2.
#[inline(always)]
pub(crate) unsafe fn fill(dst: *mut u8, byte: u8, len: usize) {
    debug_assert!((32..=64).contains(&len));
    // SAFETY: both 32-byte stores lie in `dst..dst + len` for `32 <= len <= 64` (the caller's
    // range); the CPU runs AVX2 (caller). Every register the code writes or `vzeroupper`
    // changes is declared clobbered; the flags are untouched.
    unsafe {
        asm!(
            "vmovd xmm0, {b:e}",
            "vpbroadcastb ymm0, xmm0",
            "vmovdqu ymmword ptr [{d}], ymm0",
            "vmovdqu ymmword ptr [{d} + {n} - 32], ymm0",
            "vzeroupper",
            b = in(reg) u32::from(byte),
            d = in(reg) dst,
            n = in(reg) len,
            out("xmm0") _, out("xmm1") _, out("xmm2") _, out("xmm3") _,
            out("xmm4") _, out("xmm5") _, out("xmm6") _, out("xmm7") _,
            out("xmm8") _, out("xmm9") _, out("xmm10") _, out("xmm11") _,
            out("xmm12") _, out("xmm13") _, out("xmm14") _, out("xmm15") _,
            options(nostack, preserves_flags),
        );
    }
}
