//! aarch64: NEON `q` registers (`ldp`/`stp`, `stnp`) and `x` register pairs (`ldp`/`stp`,
//! `stnp`); `dmb ishst`; `dc zva`; `dc cvap`/`dc cvac` by the line size of `CTR_EL0`, then
//! `dsb sy`; detection through `std_detect` or the ID registers.

/// The body of a register pair's `stream`: `$insn`, an `stnp` of `$self.0` and `$self.1` (the
/// operands `{a}` and `{b}`, of register class `$class`) to `{p}` = `$dst`; under Miri, which
/// runs no assembly, a plain `store` in its place. Expands to `unsafe` blocks, covered by the
/// caller's `// SAFETY:` comment.
macro_rules! stnp_pair {
    ($self:ident, $dst:ident, $insn:literal, $class:ident) => {
        cfg_if::cfg_if! {
            if #[cfg(miri)] {
                // SAFETY: the caller's (see above).
                unsafe { $self.store($dst) }
            } else {
                // SAFETY: the caller's (see above). Writes memory: no `nomem`/`readonly`.
                unsafe {
                    core::arch::asm!(
                        $insn,
                        p = in(reg) $dst,
                        a = in($class) $self.0,
                        b = in($class) $self.1,
                        options(nostack, preserves_flags),
                    )
                }
            }
        }
    };
}

mod cpu;
mod gpr;
#[cfg(all(target_feature = "neon", not(cachecopy_integer_only)))]
mod neon;

use core::sync::atomic::{AtomicUsize, Ordering};

pub(crate) use self::cpu::detect;
/// Two `x` registers, the `Generic` backend's unit here (see `gpr`).
pub(crate) use self::gpr::XPair as Word;
/// A pair of `q` registers, the NEON backend's unit (see `neon`). Advanced SIMD is mandatory in
/// every arm64 Linux/macOS/Windows ABI; soft-float targets have no vector registers, and
/// `--cfg cachecopy_integer_only` (kernels that have not saved the vector state) asks for none:
/// no NEON backend there.
#[cfg(all(target_feature = "neon", not(cachecopy_integer_only)))]
pub(crate) use self::neon::Pair as Neon;
use crate::cpu::FlushOp;

/// The granularity at which streamed (`stnp`) and ordinary stores are kept apart: 128 bytes.
///
/// It must be a multiple of the real line so that no line receives both kinds of store. Arm's
/// Cortex/Neoverse cores, Ampere and Graviton use 64-byte lines; Apple's M-series cores use
/// 128-byte lines (`hw.cachelinesize` = 128), so 64 would leave a line written both ways at each
/// end of every streamed copy there. 128 costs at most 64 more ordinary-store bytes per end on
/// 64-byte-line cores, which is nothing next to `STREAM_MIN` (1 KiB). (A64FX's 256-byte lines
/// are the one known exception: there the two partial lines mix, which is correct, only not
/// optimal.) The line size *flushing* steps by is read from `CTR_EL0` instead: see [`dcache_line`].
pub(crate) const STREAM_LINE: usize = 128;

/// Runs the barrier `$insn` (counted by the tests' fence counter); under Miri, which runs no
/// assembly, a sequentially consistent fence.
macro_rules! barrier {
    ($insn:literal) => {{
        #[cfg(all(test, feature = "std"))]
        super::count_fence();
        cfg_if::cfg_if! {
            if #[cfg(miri)] {
                core::sync::atomic::fence(Ordering::SeqCst);
            } else {
                // SAFETY: a barrier; touches no memory of its own (no `nomem`: it must not move
                // across the stores and cleans it orders or completes).
                unsafe { core::arch::asm!($insn, options(nostack, preserves_flags)) }
            }
        }
    }};
}

/// Orders every earlier `stnp` before any later store of this thread.
///
/// Arm ARM (DDI 0487), C3.2.9: non-temporal pairs are ordinary accesses for the memory model
/// except that a *load* pair reached by an address dependency may be observed out of order; and
/// B2.3 ("Barrier-ordered-before"): a `DMB` with the `ST` option orders every Memory Write effect
/// before it before every Memory Write effect after it, for all observers in the shareability
/// domain (`ISH`: every core running this process). So `dmb ishst` makes the streamed data
/// visible no later than any flag the caller stores afterwards, relaxed or not, which is what
/// Rust's model needs from a copy returning (rust-lang/rust#114582); a later release store
/// (`stlr`) would order it anyway, but a relaxed one would not.
///
/// # Safety
/// None; `unsafe` for symmetry with other targets.
#[inline(always)]
pub(crate) unsafe fn stream_fence() {
    barrier!("dmb ishst");
}

/// The smallest data-cache line of any core this process can run on, in bytes:
/// `4 << CTR_EL0.DminLine` (bits 19:16, log2 of 4-byte words). Read once and cached, because on
/// systems whose cores disagree Linux traps EL0 reads of `CTR_EL0` and emulates them (reporting
/// the safe minimum), which costs a trap per read. PMDK stepped by a hard-coded 64 and so skipped
/// half the lines on 32-byte-line cores.
pub(crate) fn dcache_line() -> usize {
    static LINE: AtomicUsize = AtomicUsize::new(0);
    let line = LINE.load(Ordering::Relaxed);
    if line != 0 {
        return line;
    }
    let line = cpu::ctr_dminline();
    LINE.store(line, Ordering::Relaxed);
    line
}

/// The block `dc zva` zeroes, in bytes (`4 << DCZID_EL0.BS`), or 0 when `DCZID_EL0.DZP`
/// prohibits the instruction at EL0 (or under Miri). Read once and cached; `DCZID_EL0` is
/// readable at EL0 by definition.
pub(crate) fn zva_block() -> usize {
    const UNREAD: usize = usize::MAX;
    static BLOCK: AtomicUsize = AtomicUsize::new(UNREAD);
    let b = BLOCK.load(Ordering::Relaxed);
    if b != UNREAD {
        return b;
    }
    let b = cpu::dczid_block();
    BLOCK.store(b, Ordering::Relaxed);
    b
}

/// `dc zva` on every block of `p..p + len`: zeroes each block without reading it. Each `dc zva`
/// is an ordinary store of the whole block for the memory model, so no barrier is needed.
///
/// # Safety
/// `p` and `len` multiples of `block`, `block == zva_block() != 0`, the range writable.
#[inline(always)]
pub(crate) unsafe fn zero_blocks(p: *mut u8, len: usize, block: usize) {
    let mut at = p as usize;
    let end = at + len;
    while at < end {
        cfg_if::cfg_if! {
            if #[cfg(miri)] {
                // SAFETY: as the caller guarantees (never reached: `zva_block()` is 0 there).
                unsafe { core::ptr::write_bytes(at as *mut u8, 0, block) };
            } else {
                // SAFETY: the block lies inside the writable range; `DCZID_EL0.DZP` is clear.
                unsafe { core::arch::asm!("dc zva, {0}", in(reg) at, options(nostack, preserves_flags)) };
            }
        }
        at += block;
    }
}

/// Asks for every line holding a byte of `p..p + len` to be brought into the cache for
/// writing (`prfm pstl1keep`), ahead of ordinary stores that will write them, so their fetch
/// overlaps the work in between. A hint: it never faults and changes no memory.
///
/// # Safety
/// None (a prefetch of any address is harmless); `unsafe` for symmetry with `flush_range`.
#[inline(always)]
pub(crate) unsafe fn prefetch_write(p: *const u8, len: usize) {
    // SAFETY: `prfm` never faults, whatever the address; it is base A64.
    each_line!(p, len, dcache_line(), "prfm pstl1keep, [{0}]", readonly);
}

/// [`prefetch_write`] of the one line holding `p`.
///
/// # Safety
/// None (a prefetch of any address is harmless); `unsafe` for symmetry with `flush_range`.
#[inline(always)]
pub(crate) unsafe fn prefetch_line(p: *const u8) {
    // SAFETY: `prfm` never faults, whatever the address; it is base A64.
    #[cfg(not(miri))]
    unsafe {
        core::arch::asm!("prfm pstl1keep, [{0}]", in(reg) p, options(nostack, preserves_flags, readonly))
    };
    #[cfg(miri)]
    let _ = p;
}

/// Cleans every line holding a byte of `p..p + len` with `op`.
///
/// Data-cache maintenance by address is ordered after earlier stores to the same line in
/// program order on Normal memory (Arm ARM, "Ordering and completion of data and
/// instruction cache instructions"), so no barrier is needed before the first `dc`; completion
/// needs [`flush_fence`].
///
/// # Safety
/// `op` must be supported by this CPU; the range must be mapped (a clean of an unmapped line
/// faults). Linux sets `SCTLR_EL1.UCI`, so EL0 may execute `dc cvac`/`dc cvap`.
#[inline(always)]
pub(crate) unsafe fn flush_range(op: FlushOp, p: *const u8, len: usize) {
    if len == 0 {
        return;
    }
    let step = dcache_line();
    // SAFETY (both arms): each line holds a byte of the range, so it is mapped; the caller
    // guarantees the instruction exists. No `nomem`: it must stay after the stores.
    match op {
        // `dc cvap` written as its `sys` alias (op1=3, CRn=c7, CRm=c12, op2=1) so that the
        // assembler does not require the `dpb` (LLVM: `ccpp`) feature for the whole function;
        // the run-time check guards it instead.
        #[cfg(not(miri))]
        FlushOp::DcCvap => each_line!(p, len, step, "sys #3, c7, c12, #1, {0}"),
        #[cfg(not(miri))]
        FlushOp::DcCvac => each_line!(p, len, step, "dc cvac, {0}"),
        _ => {}
    }
}

/// Waits until every clean started by [`flush_range`] has completed (reached the point of
/// persistence or coherency) and orders it before everything after: `dsb sy`, as Linux's
/// `dcache_clean_pop` ends with. A `dmb` would only order the cleans, not wait for them.
///
/// # Safety
/// None; `unsafe` for symmetry with other targets.
#[inline(always)]
pub(crate) unsafe fn flush_fence(_op: FlushOp) {
    barrier!("dsb sy");
}
