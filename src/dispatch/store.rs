//! The store kind of one call ([`Store`]) and the one mapping from a store kind to the entry
//! of a kernel table that runs it: fenced (the plain copies and fills) or unfenced (batches,
//! cursors, the calibration's frames, whose caller fences once). Every user of a table (the
//! API, batches, checksum copies, calibration) goes through these, so a new store kind or
//! table entry changes one match here.

use super::table::Kernels;
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

/// What an operation returns of its temporal entry's result: nothing for copies, fills and
/// moves (their temporal entries return the destination, for C-shaped callers; the operations
/// here do not), the sum for the checksum copies.
trait Outcome<T> {
    fn outcome(self) -> T;
}

impl Outcome<()> for *mut u8 {
    #[inline(always)]
    fn outcome(self) {}
}

impl Outcome<u32> for u32 {
    #[inline(always)]
    fn outcome(self) -> u32 {
        self
    }
}

/// One function per operation that runs `store`'s entry of a table: `$name(k, args.., store)`
/// calls `k.$temporal`, `k.$stream` or `k.$flush` (the latter with the flush op appended); an
/// entry marked `[knobs]` gets the table's knobs (`k.knobs`) last.
macro_rules! by_store {
    ($(#[$doc:meta])* $name:ident($($arg:ident: $ty:ty),*) $(-> $ret:ty)?
        = $($t:ident).+ [$($tk:ident)?] | $($nt:ident).+ [$($ntk:ident)?] | $($fl:ident).+) => {
        $(#[$doc])*
        #[inline(always)]
        pub(crate) unsafe fn $name(k: &Kernels, $($arg: $ty,)* store: Store) $(-> $ret)? {
            // SAFETY: forwarded contract.
            unsafe {
                match store {
                    Store::Temporal => Outcome::outcome((k.$($t).+)($($arg,)* $(&k.$tk)?)),
                    Store::NonTemporal => (k.$($nt).+)($($arg,)* $(&k.$ntk)?),
                    Store::Flush(op) => (k.$($fl).+)($($arg,)* op),
                }
            }
        }
    };
}

by_store! {
    /// Copies with `store`'s entry of `k`, fenced.
    ///
    /// # Safety
    /// `copy_raw`'s contract, and `k` runs on this CPU (and `Store::Flush`'s op).
    copy_on(dst: *mut u8, src: *const u8, len: usize)
        = copy_temporal[knobs] | copy_nontemporal[knobs] | copy_flush
}

by_store! {
    /// Fills with `store`'s entry of `k`, fenced.
    ///
    /// # Safety
    /// `fill_raw`'s contract, and `k` runs on this CPU (and `Store::Flush`'s op).
    fill_on(dst: *mut u8, byte: u8, len: usize) = fill_temporal[knobs] | fill_nontemporal[] | fill_flush
}

by_store! {
    /// Copies and sums with `store`'s entry of `k`, fenced; returns the sum folded to 16 bits.
    ///
    /// # Safety
    /// `csum_and_copy_raw`'s contract; `k` runs on this CPU (and `Store::Flush`'s op).
    csum_copy_on(dst: *mut u8, src: *const u8, len: usize) -> u32
        = csum_copy_temporal[] | csum_copy_nontemporal[] | csum_copy_flush
}

by_store! {
    /// The unfenced form of [`copy_on`]: streamed and flushed stores are left for the caller's
    /// [`Store::fence`].
    ///
    /// # Safety
    /// As [`copy_on`]; the caller runs `store.fence()` on this thread before the bytes are read
    /// by anyone else or the destination is handed to safe code.
    copy_unfenced_on(dst: *mut u8, src: *const u8, len: usize)
        = copy_temporal[knobs] | iter.copy_stream[] | iter.copy_flush
}

by_store! {
    /// The unfenced form of [`fill_on`].
    ///
    /// # Safety
    /// As [`copy_unfenced_on`].
    fill_unfenced_on(dst: *mut u8, byte: u8, len: usize)
        = fill_temporal[knobs] | iter.fill_stream[] | iter.fill_flush
}

by_store! {
    /// The unfenced form of [`csum_copy_on`].
    ///
    /// # Safety
    /// As [`copy_unfenced_on`].
    csum_copy_unfenced_on(dst: *mut u8, src: *const u8, len: usize) -> u32
        = csum_copy_temporal[] | iter.csum_copy_stream[] | iter.csum_copy_flush
}
