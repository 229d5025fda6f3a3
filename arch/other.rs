//! Targets without a SIMD leaf: the word backend only, no cache-maintenance instruction.

use core::sync::atomic::{fence, Ordering};

use crate::cpu::{Caches, Cpu, Features, FlushOp, Text};

/// The general-purpose word: the `Generic` backend's register (`arch/generic.rs`).
pub(crate) type Word = u64;

/// Conservative line size for keeping streamed and ordinary stores apart.
pub(crate) const STREAM_LINE: usize = 64;

/// # Safety
/// None; `unsafe` for symmetry with other targets.
#[inline(always)]
pub(crate) unsafe fn stream_fence() {
    #[cfg(all(test, feature = "std"))]
    super::count_fence();
    fence(Ordering::SeqCst);
}

/// No cache-maintenance instruction is known here: nothing to do.
///
/// # Safety
/// None; `unsafe` for symmetry with other targets.
#[inline(always)]
pub(crate) unsafe fn flush_range(_op: FlushOp, _p: *const u8, _len: usize) {}

/// No prefetch instruction is known here: nothing to do.
///
/// # Safety
/// None; `unsafe` for symmetry with other targets.
#[inline(always)]
pub(crate) unsafe fn prefetch_write(_p: *const u8, _len: usize) {}

/// No prefetch instruction is known here: nothing to do.
///
/// # Safety
/// None; `unsafe` for symmetry with other targets.
#[inline(always)]
pub(crate) unsafe fn prefetch_line(_p: *const u8) {}

/// # Safety
/// None; `unsafe` for symmetry with other targets.
#[inline(always)]
pub(crate) unsafe fn flush_fence(_op: FlushOp) {
    #[cfg(all(test, feature = "std"))]
    super::count_fence();
    fence(Ordering::SeqCst);
}

pub(crate) fn detect() -> Cpu {
    Cpu {
        arch: "generic",
        features: Features::default(),
        caches: Caches {
            line: STREAM_LINE,
            source: "defaults",
            ..Caches::default()
        },
        flush: FlushOp::Fence,
        vendor: Text::EMPTY,
        brand: Text::EMPTY,
        family_model: None,
    }
}
