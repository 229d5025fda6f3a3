//! x86_64: SSE2, AVX2 and AVX-512 registers; `sfence`; `rep stosb`; `clwb`/`clflushopt`/
//! `clflush`; CPUID.
//!
//! The vector registers exist only where the compiler may use them: not on soft-float targets
//! (`x86_64-unknown-none`, `x86_64-unknown-uefi`: no `sse2` target feature, LLVM cannot even
//! lower a vector move there) and not under `--cfg cachecopy_integer_only` (kernels that have
//! not saved the vector state). Everything else here uses general-purpose registers only.

/// The moves of an x86 register's `Vector` impl, the same on every width: `load` and `store`
/// through the unaligned `$loadu` and `$storeu`, `store_aligned` through `$store`, `stream`
/// through the non-temporal `$stream`. The streaming store is inline assembly in stdarch, which
/// Miri cannot run; there an aligned store stands in (Miri checks the bounds, not the cache
/// policy).
#[cfg(all(target_feature = "sse2", not(cachecopy_integer_only)))]
macro_rules! moves {
    ($loadu:ident, $storeu:ident, $store:ident, $stream:ident) => {
        #[inline(always)]
        unsafe fn load(src: *const u8) -> Self {
            // SAFETY: `Self::BYTES` readable bytes (caller); an unaligned load.
            unsafe { $loadu(src.cast()) }
        }
        #[inline(always)]
        unsafe fn store(self, dst: *mut u8) {
            // SAFETY: `Self::BYTES` writable bytes (caller); an unaligned store.
            unsafe { $storeu(dst.cast(), self) }
        }
        #[inline(always)]
        unsafe fn store_aligned(self, dst: *mut u8) {
            // SAFETY: `Self::BYTES` writable bytes, aligned to `Self::BYTES` (caller).
            unsafe { $store(dst.cast(), self) }
        }
        #[inline(always)]
        unsafe fn stream(self, dst: *mut u8) {
            #[cfg(miri)]
            // SAFETY: `Self::BYTES` writable bytes, aligned to `Self::BYTES` (caller).
            unsafe {
                self.store_aligned(dst)
            }
            #[cfg(not(miri))]
            // SAFETY: `Self::BYTES` writable bytes, aligned to `Self::BYTES` (caller); the
            // kernel runs `sfence` before returning.
            unsafe {
                $stream(dst.cast(), self)
            }
        }
    };
}

/// `Checksum::csum_add` of an x86 register, the same on every width: each 64-bit lane gains its
/// two 32-bit halves (hi + lo is congruent to hi * 2^32 + lo modulo 2^32 - 1, hence modulo
/// 2^16 - 1): two adds (`$add64`), a mask (`$and` with `$set1_64`) and a shift (`$srli64`), no
/// shuffle.
#[cfg(all(target_feature = "sse2", not(cachecopy_integer_only)))]
macro_rules! csum_add {
    ($and:ident, $set1_64:ident, $add64:ident, $srli64:ident) => {
        #[inline(always)]
        unsafe fn csum_add(acc: Self, v: Self) -> Self {
            // SAFETY: register-only operations of the register's own extension, which the
            // caller runs inside its entry point (SSE2: baseline).
            unsafe {
                let lo = $and(v, $set1_64(0xffff_ffff));
                $add64(acc, $add64(lo, $srli64::<32>(v)))
            }
        }
    };
}

#[cfg(all(target_feature = "sse2", not(cachecopy_integer_only)))]
mod avx2;
#[cfg(all(target_feature = "sse2", not(cachecopy_integer_only)))]
mod avx512;
mod cpu;
#[cfg(all(target_feature = "sse2", not(cachecopy_integer_only), not(miri)))]
pub(crate) mod masked;
#[cfg(all(target_feature = "sse2", not(cachecopy_integer_only), not(miri)))]
pub(crate) mod pair;
#[cfg(all(target_feature = "sse2", not(cachecopy_integer_only)))]
mod sse2;

pub(crate) use self::cpu::detect;
#[cfg(all(test, feature = "std", not(miri)))]
pub(crate) use self::cpu::xcr0;
use crate::cpu::FlushOp;

/// The general-purpose word: the `Generic` backend's register (`arch/generic.rs`).
pub(crate) type Word = u64;
/// The SSE2 register (baseline on every hard-float x86_64 target).
#[cfg(all(target_feature = "sse2", not(cachecopy_integer_only)))]
pub(crate) type Sse2 = core::arch::x86_64::__m128i;
/// The AVX2 register.
#[cfg(all(target_feature = "sse2", not(cachecopy_integer_only)))]
pub(crate) type Avx2 = core::arch::x86_64::__m256i;
/// The AVX-512 register (F + BW: byte-masked moves).
#[cfg(all(target_feature = "sse2", not(cachecopy_integer_only)))]
pub(crate) type Avx512 = core::arch::x86_64::__m512i;

/// The cache line size of every x86_64 CPU (CPUID.1:EBX bits 15:8, times 8, report it; `Cpu` shows it).
pub(crate) const STREAM_LINE: usize = 64;

/// Orders every earlier streaming store before any later store. `movnt*` stores are weakly
/// ordered; without this a release store after the copy could become visible first, which Rust
/// treats as unsound (rust-lang/rust#114582).
///
/// Inline assembly rather than `_mm_sfence`, whose `sse` target feature soft-float targets lack
/// (every x86_64 CPU executes `sfence`; it touches no vector register).
///
/// # Safety
/// None beyond running on x86_64; `unsafe` for symmetry with other targets.
#[inline(always)]
pub(crate) unsafe fn stream_fence() {
    #[cfg(all(test, feature = "std"))]
    super::count_fence();
    cfg_if::cfg_if! {
        if #[cfg(miri)] {
            core::sync::atomic::fence(core::sync::atomic::Ordering::SeqCst);
        } else {
            // SAFETY: `sfence` is baseline on x86_64. No `nomem`: it must not move across the
            // stores it orders.
            unsafe { core::arch::asm!("sfence", options(nostack, preserves_flags)) }
        }
    }
}

/// `rep stosb`: sets `len` bytes at `dst` to `byte` with the CPU's string store. Ordinary
/// (temporal, in-order with respect to this thread's other stores) stores, so no fence is
/// needed; with ERMS, large counts write whole lines without reading them first.
///
/// # Safety
/// `dst..dst + len` writable. The direction flag is clear, as the System V and Windows ABIs
/// guarantee at every call.
#[inline(always)]
pub(crate) unsafe fn rep_stosb(dst: *mut u8, byte: u8, len: usize) {
    cfg_if::cfg_if! {
        if #[cfg(miri)] {
            // SAFETY: as the caller guarantees; Miri runs no inline assembly.
            unsafe { core::ptr::write_bytes(dst, byte, len) }
        } else {
            // SAFETY: writes exactly `dst..dst + len` (DF = 0); clobbers rdi/rcx, declared.
            unsafe {
                core::arch::asm!(
                    "rep stosb",
                    inout("rdi") dst => _,
                    inout("rcx") len => _,
                    in("al") byte,
                    options(nostack, preserves_flags)
                )
            }
        }
    }
}

/// `rep movsb`: copies `len` bytes from `src` to `dst` with the CPU's string move. Ordinary
/// (temporal) stores in this thread's order, so no fence is needed; with ERMS, large counts
/// move whole lines without reading the destination first.
///
/// # Safety
/// `src..src + len` readable, `dst..dst + len` writable, the two not overlapping. The direction
/// flag is clear, as the System V and Windows ABIs guarantee at every call.
#[inline(always)]
pub(crate) unsafe fn rep_movsb(dst: *mut u8, src: *const u8, len: usize) {
    cfg_if::cfg_if! {
        if #[cfg(miri)] {
            // SAFETY: as the caller guarantees; Miri runs no inline assembly.
            unsafe { core::ptr::copy_nonoverlapping(src, dst, len) }
        } else {
            // SAFETY: reads exactly `src..src + len` and writes exactly `dst..dst + len`
            // (DF = 0); clobbers rdi/rsi/rcx, declared.
            unsafe {
                core::arch::asm!(
                    "rep movsb",
                    inout("rdi") dst => _,
                    inout("rsi") src => _,
                    inout("rcx") len => _,
                    options(nostack, preserves_flags)
                )
            }
        }
    }
}

/// Asks for every line holding a byte of `p..p + len` to be brought into the cache, ahead of
/// ordinary stores that will write them: their read-for-ownership then overlaps the work in
/// between instead of stalling the store queue when the stores come. A hint: it never faults
/// and changes no memory (`prefetcht0`, baseline on x86_64: a line no other core holds arrives
/// exclusive, so the stores need no second request).
///
/// # Safety
/// None (a prefetch of any address is harmless); `unsafe` for symmetry with `flush_range`.
#[inline(always)]
pub(crate) unsafe fn prefetch_write(p: *const u8, len: usize) {
    // SAFETY: a prefetch never faults, whatever the address, and touches no register but its
    // address (asm, not the SSE intrinsic: soft-float builds enable no SSE feature, and every
    // x86_64 CPU decodes `prefetcht0`).
    each_line!(p, len, STREAM_LINE, "prefetcht0 [{0}]", readonly);
}

/// [`prefetch_write`] of the one line holding `p`.
///
/// # Safety
/// None (a prefetch of any address is harmless); `unsafe` for symmetry with `flush_range`.
#[inline(always)]
pub(crate) unsafe fn prefetch_line(p: *const u8) {
    // SAFETY: a prefetch never faults, whatever the address (see `prefetch_write`).
    #[cfg(not(miri))]
    unsafe {
        core::arch::asm!("prefetcht0 [{0}]", in(reg) p, options(nostack, preserves_flags, readonly))
    };
    #[cfg(miri)]
    let _ = p;
}

/// Writes back every line holding a byte of `p..p + len` with `op`.
///
/// # Safety
/// `op` must be supported by this CPU; the range must be mapped (a flush of an unmapped line
/// faults).
#[inline(always)]
pub(crate) unsafe fn flush_range(op: FlushOp, p: *const u8, len: usize) {
    if len == 0 {
        return;
    }
    // SAFETY (every arm): each line holds a byte of the range, so it is mapped; the caller
    // guarantees the instruction exists. No `nomem`: it must stay after the stores.
    match op {
        FlushOp::Clwb => each_line!(p, len, STREAM_LINE, "clwb [{0}]"),
        FlushOp::Clflushopt => each_line!(p, len, STREAM_LINE, "clflushopt [{0}]"),
        FlushOp::Clflush => each_line!(p, len, STREAM_LINE, "clflush [{0}]"),
        _ => {}
    }
}

/// Waits for the write-backs started by `flush_range` (and any streamed stores): `clwb` and
/// `clflushopt` are ordered only by a fence; `clflush` is ordered with stores but the same
/// `sfence` is cheap and keeps one path.
///
/// # Safety
/// As [`stream_fence`].
#[inline(always)]
pub(crate) unsafe fn flush_fence(_op: FlushOp) {
    // SAFETY: as `stream_fence`.
    unsafe { stream_fence() }
}
