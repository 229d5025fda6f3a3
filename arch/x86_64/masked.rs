//! The masked small class: a fill of any length from 0 to 64 bytes as one AVX-512 byte-masked
//! store of a broadcast byte, with no compare between lengths.
//!
//! Written as inline assembly so that it runs at a call site compiled for the baseline target:
//! an intrinsic would need the caller to enable `avx512bw`, which a `#[target_feature]` function
//! cannot give an `#[inline(always)]` entry point. Dispatch lets the call site take this path only
//! on a CPU that runs it ([`runs`]; `threshold_cells::MASKED_FILL_BELOW`). The assembly uses
//! `zmm16` and `k1`, both declared clobbered: `zmm16`-`zmm31` are not part of the register
//! state that SSE code shares with AVX (glibc's AVX-512 string functions use them for the same
//! reason), so no `vzeroupper` is owed, and a caller compiled with AVX-512 sees both registers
//! as clobbered like any call's.
//!
//! A masked-off byte is neither written nor faults (the SDM's memory fault suppression), so the
//! 64-byte window may reach past the buffer into an unmapped page. The
//! CPU resolves such a suppressed fault with a microcode assist, far slower than the store, so
//! the caller sends a window that leaves its 4 KiB page to the plain classes instead (as
//! glibc's AVX-512 `memset` does for its masked store; `threshold_cells::MASKED_FILL_BELOW`).

use core::arch::asm;

/// Whether this CPU runs the masked class, given that it runs AVX-512 F and BW with the OS
/// saving their state (the caller's check): BMI2 (`bzhi`) too. Every AVX-512 CPU made has it;
/// a hypervisor might hide it.
pub(crate) fn runs() -> bool {
    #[cfg(feature = "std")]
    {
        std::is_x86_feature_detected!("bmi2")
    }
    #[cfg(not(feature = "std"))]
    {
        raw_cpuid::CpuId::new()
            .get_extended_feature_info()
            .is_some_and(|e| e.has_bmi2())
    }
}

/// Sets `len <= 64` bytes to `byte` with one masked store.
///
/// # Safety
/// `len <= 64`; `dst..dst + len` writable (any pointer when `len == 0`); the CPU runs AVX-512 F
/// and BW and BMI2.
#[inline(always)]
pub(crate) unsafe fn fill(dst: *mut u8, byte: u8, len: usize) {
    debug_assert!(len <= 64);
    // SAFETY: `bzhi` keeps the low `len` bits of all ones (all 64 when `len == 64`), so the
    // store touches exactly `dst..dst + len`, which the caller vouches for; masked-off bytes are
    // not accessed and cannot fault. The CPU runs every instruction (caller). `zmm16` and `k1`
    // are declared clobbered; the flags change (`bzhi`).
    unsafe {
        asm!(
            "vpbroadcastb zmm16, {b:e}",
            "mov {m}, -1",
            "bzhi {m}, {m}, {n}",
            "kmovq k1, {m}",
            "vmovdqu8 zmmword ptr [{d}] {{k1}}, zmm16",
            b = in(reg) u32::from(byte),
            m = out(reg) _,
            n = in(reg) len,
            d = in(reg) dst,
            out("zmm16") _,
            out("k1") _,
            options(nostack),
        );
    }
}

/// Copies `len <= 64` bytes with one masked load and one masked store: every byte is loaded
/// before any is stored, so the ranges may overlap (`memmove`).
///
/// # Safety
/// `len <= 64`; `src..src + len` readable and `dst..dst + len` writable (any pointers when
/// `len == 0`); the CPU runs AVX-512 F and BW and BMI2.
#[inline(always)]
pub(crate) unsafe fn copy(dst: *mut u8, src: *const u8, len: usize) {
    debug_assert!(len <= 64);
    // SAFETY: as `fill`: the mask covers exactly `len` bytes of each window, which the caller
    // vouches for; masked-off bytes are neither read nor written and cannot fault. The load
    // (zeroing the masked-off lanes) completes before the store. `zmm16` and `k1` are declared
    // clobbered; the flags change (`bzhi`).
    unsafe {
        asm!(
            "mov {m}, -1",
            "bzhi {m}, {m}, {n}",
            "kmovq k1, {m}",
            "vmovdqu8 zmm16 {{k1}}{{z}}, zmmword ptr [{s}]",
            "vmovdqu8 zmmword ptr [{d}] {{k1}}, zmm16",
            m = out(reg) _,
            n = in(reg) len,
            s = in(reg) src,
            d = in(reg) dst,
            out("zmm16") _,
            out("k1") _,
            options(nostack),
        );
    }
}
