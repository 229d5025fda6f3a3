//! The store kind of one call ([`Store`]) and the one mapping from a store kind to the entry
//! of a kernel table that runs it: fenced (the plain copies and fills) or unfenced (batches,
//! cursors, the calibration's frames, whose caller fences once). Every user of a table (the
//! API, batches, checksum copies, calibration) goes through these, so a new store kind or
//! table entry changes one match here.

use super::Kernels;
use crate::arch;
use crate::cpu::FlushOp;

/// How one call stores, once the mode is resolved (`Mode::resolve`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Store {
    /// Ordinary stores.
    Temporal,
    /// Streaming stores for whole lines, then the store fence.
    NonTemporal,
    /// Streaming plus write-back with this instruction, then its fence.
    Flush(FlushOp),
}

impl Store {
    /// Runs the fence that unfenced stores of this kind owe: none for ordinary stores, the
    /// store fence after streaming stores, the completion fence after write-backs.
    ///
    /// # Safety
    /// A `Flush` op must run on this CPU (dispatch's or a checked one).
    #[inline(always)]
    pub(crate) unsafe fn fence(self) {
        // SAFETY: the barriers have no requirement beyond the op's, which the caller upholds.
        unsafe {
            match self {
                Store::Temporal => {}
                Store::NonTemporal => arch::stream_fence(),
                Store::Flush(op) => arch::flush_fence(op),
            }
        }
    }
}

/// Copies with `store`'s entry of `k`, fenced.
///
/// # Safety
/// `copy_raw`'s contract, and `k` runs on this CPU (and `Store::Flush`'s op).
#[inline(always)]
pub(crate) unsafe fn copy_on(k: &Kernels, dst: *mut u8, src: *const u8, len: usize, store: Store) {
    // SAFETY: forwarded contract.
    unsafe {
        match store {
            Store::Temporal => (k.copy_temporal)(dst, src, len),
            Store::NonTemporal => (k.copy_nontemporal)(dst, src, len),
            Store::Flush(op) => (k.copy_flush)(dst, src, len, op),
        }
    }
}

/// Fills with `store`'s entry of `k`, fenced.
///
/// # Safety
/// `fill_raw`'s contract, and `k` runs on this CPU (and `Store::Flush`'s op).
#[inline(always)]
pub(crate) unsafe fn fill_on(k: &Kernels, dst: *mut u8, byte: u8, len: usize, store: Store) {
    // SAFETY: forwarded contract.
    unsafe {
        match store {
            Store::Temporal => (k.fill_temporal)(dst, byte, len),
            Store::NonTemporal => (k.fill_nontemporal)(dst, byte, len),
            Store::Flush(op) => (k.fill_flush)(dst, byte, len, op),
        }
    }
}

/// Copies and sums with `store`'s entry of `k`, fenced; returns the sum folded to 16 bits.
///
/// # Safety
/// `csum_and_copy_raw`'s contract; `k` runs on this CPU (and `Store::Flush`'s op).
#[inline(always)]
pub(crate) unsafe fn csum_copy_on(
    k: &Kernels,
    dst: *mut u8,
    src: *const u8,
    len: usize,
    store: Store,
) -> u32 {
    // SAFETY: forwarded contract.
    unsafe {
        match store {
            Store::Temporal => (k.csum_copy_temporal)(dst, src, len),
            Store::NonTemporal => (k.csum_copy_nontemporal)(dst, src, len),
            Store::Flush(op) => (k.csum_copy_flush)(dst, src, len, op),
        }
    }
}

/// The unfenced form of [`copy_on`]: streamed and flushed stores are left for the caller's
/// [`Store::fence`].
///
/// # Safety
/// As [`copy_on`]; the caller runs `store.fence()` on this thread before the bytes are read by
/// anyone else or the destination is handed to safe code.
#[inline(always)]
pub(crate) unsafe fn copy_unfenced_on(
    k: &Kernels,
    dst: *mut u8,
    src: *const u8,
    len: usize,
    store: Store,
) {
    // SAFETY: forwarded contract.
    unsafe {
        match store {
            Store::Temporal => (k.copy_temporal)(dst, src, len),
            Store::NonTemporal => (k.iter.copy_stream)(dst, src, len),
            Store::Flush(op) => (k.iter.copy_flush)(dst, src, len, op),
        }
    }
}

/// The unfenced form of [`fill_on`].
///
/// # Safety
/// As [`copy_unfenced_on`].
#[inline(always)]
pub(crate) unsafe fn fill_unfenced_on(
    k: &Kernels,
    dst: *mut u8,
    byte: u8,
    len: usize,
    store: Store,
) {
    // SAFETY: forwarded contract.
    unsafe {
        match store {
            Store::Temporal => (k.fill_temporal)(dst, byte, len),
            Store::NonTemporal => (k.iter.fill_stream)(dst, byte, len),
            Store::Flush(op) => (k.iter.fill_flush)(dst, byte, len, op),
        }
    }
}

/// The unfenced form of [`csum_copy_on`].
///
/// # Safety
/// As [`copy_unfenced_on`].
#[inline(always)]
pub(crate) unsafe fn csum_copy_unfenced_on(
    k: &Kernels,
    dst: *mut u8,
    src: *const u8,
    len: usize,
    store: Store,
) -> u32 {
    // SAFETY: forwarded contract.
    unsafe {
        match store {
            Store::Temporal => (k.csum_copy_temporal)(dst, src, len),
            Store::NonTemporal => (k.iter.csum_copy_stream)(dst, src, len),
            Store::Flush(op) => (k.iter.csum_copy_flush)(dst, src, len, op),
        }
    }
}
