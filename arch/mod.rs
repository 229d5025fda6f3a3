//! Per-ISA leaves: register types with their [`Vector`](crate::vector::Vector) and
//! [`Checksum`](crate::vector::Checksum) impls, fences, cache-maintenance instructions and
//! feature detection. Nothing here knows about modes, backend tables, dispatch or cursors:
//! `src/dispatch/table.rs` instantiates the one algorithm for the registers named here.
//!
//! Each target module provides the same items:
//! - its register types (`Sse2`, `Avx2`, `Avx512` on x86_64, `Neon` on aarch64; the portable
//!   `u64` for every target, in `generic`);
//! - `STREAM_LINE`: the granularity at which streamed and ordinary stores are kept apart;
//! - `stream_fence()`: orders streamed stores before any later store (run before returning);
//! - `flush_range(op, ptr, len)`, `flush_fence(op)`: write lines back to memory, then wait;
//! - `prefetch_write(ptr, len)`, `prefetch_line(ptr)`: a hint to fetch lines (or the one line)
//!   that ordinary stores will write;
//! - `detect() -> Cpu`: what the CPU has.

/// Runs `asm!($insn, in(reg) line, options(nostack, preserves_flags, $opt...))` for the address
/// `line` of every `$step`-byte line holding a byte of `$p..$p + $len` (`$step` a power of two),
/// in address order: the walk of each target's `prefetch_write` and `flush_range`. Miri runs no
/// inline assembly: there the walk is all that remains. Expands to `unsafe` assembly: the
/// caller's `// SAFETY:` comment covers `$insn` on every such line. Only the targets with inline
/// cache instructions (`x86_64`, `aarch64`) have a use for it.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
macro_rules! each_line {
    ($p:expr, $len:expr, $step:expr, $insn:literal $(, $opt:ident)*) => {{
        let step: usize = $step;
        let end = $p as usize + $len;
        let mut line = $p as usize & !(step - 1);
        while line < end {
            #[cfg(not(miri))]
            // SAFETY: the caller's (see above).
            unsafe {
                core::arch::asm!($insn, in(reg) line, options(nostack, preserves_flags $(, $opt)*))
            };
            line += step;
        }
    }};
}

pub(crate) mod generic;

cfg_if::cfg_if! {
    if #[cfg(target_arch = "x86_64")] {
        mod x86_64;
        pub(crate) use self::x86_64::*;
    } else if #[cfg(target_arch = "aarch64")] {
        mod aarch64;
        pub(crate) use self::aarch64::*;
    } else {
        mod other;
        pub(crate) use self::other::*;
    }
}

#[cfg(all(test, feature = "std"))]
std::thread_local! {
    /// Store fences this thread has run (unit-test builds only): lets the batch tests prove
    /// one fence per batch, counted where the instruction is issued.
    static FENCES: core::cell::Cell<usize> = const { core::cell::Cell::new(0) };
}

/// Counts one fence (unit-test builds only).
#[cfg(all(test, feature = "std"))]
pub(crate) fn count_fence() {
    FENCES.with(|f| f.set(f.get() + 1));
}

/// Fences this thread has run so far (unit-test builds only).
#[cfg(all(test, feature = "std"))]
pub(crate) fn fences() -> usize {
    FENCES.with(|f| f.get())
}
