//! The one iteration engine (Linux `iterate_and_advance2`) and the per-mode store kinds.

use super::seg::{Bvecs, Iovecs, Table, Ubuf};
use super::{Cursor, Direction, Segs};
use crate::arch::STREAM_LINE;
use crate::backend::store::{copy_unfenced_on, csum_copy_unfenced_on, fill_unfenced_on, Store};
use crate::backend::Kernels;
use crate::cpu::FlushOp;
use crate::kernel::gather::Gather;
use crate::kernel::sum::{block_add, fold16, short, Plain, SHORT};
use crate::kernel::{copy_inline, INLINE_COPY};
use crate::policy::{FlushCache, NonTemporal, Temporal};

impl<D: Direction> Cursor<'_, D> {
    /// Walks up to `len` bytes (at most `count`) from the cursor's position, calling
    /// `step(base, n, done)` for each piece: `n` bytes at `base` inside one segment, `done`
    /// bytes into the walk. `step` returns how many of its `n` bytes it did **not** process; a
    /// nonzero answer ends the walk. The cursor advances by exactly the bytes processed, which
    /// are returned. Empty segments are handed over as empty pieces.
    ///
    /// `base..base + n` is valid for reads, and for a [`Dest`](super::Dest) also for writes,
    /// for the duration of the call, and is not accessed by anything else meanwhile (a
    /// `Source`'s step must not write). A discarding cursor calls no step and processes
    /// everything.
    #[inline(always)]
    pub(crate) fn iterate<F>(&mut self, len: usize, step: F) -> usize
    where
        F: FnMut(*mut u8, usize, usize) -> usize,
    {
        let len = len.min(self.count);
        match self.segs {
            Segs::Ubuf(p, n) => self.walk::<_, _>(Ubuf(p, n), len, step),
            Segs::Iovec(p) => self.walk::<_, _>(Iovecs(p), len, step),
            Segs::Bvec(p) => self.walk::<_, _>(Bvecs(p), len, step),
            Segs::Discard(_) => {
                self.off += len;
                self.pos += len;
                self.count -= len;
                len
            }
        }
    }

    #[inline(always)]
    fn walk<T: Table, F>(&mut self, table: T, len: usize, mut step: F) -> usize
    where
        F: FnMut(*mut u8, usize, usize) -> usize,
    {
        let (nr, mut idx, mut off, mut done) = (self.nr, self.idx, self.off, 0);
        while done < len && idx < nr {
            // SAFETY: `idx < nr`.
            let (base, seg_len) = unsafe { table.seg(idx) };
            let n = (seg_len - off).min(len - done);
            // `off <= seg_len` (invariant), so the piece is inside the segment.
            let left = step(base.wrapping_add(off), n, done);
            debug_assert!(left <= n);
            let did = n - left;
            done += did;
            off += did;
            if left != 0 {
                break;
            }
            if off == seg_len {
                idx += 1;
                off = 0;
            }
        }
        self.idx = idx;
        self.off = off;
        self.pos += done;
        self.count -= done;
        done
    }
}

/// How one call stores, as a type: [`Temporal`], [`NonTemporal`] or [`FlushCache`]. The steps
/// are generic over it, so each mode has its own loop and no per-segment mode branch. Which
/// kernel entry runs a piece is `backend::store`'s one mapping (its unfenced forms), reached
/// through [`Kind::store`], a constant per type once inlined; a kind adds only what a cursor
/// step does differently: which short pieces it does inline, without the table's call.
pub(crate) trait Kind {
    /// Whether a gather into contiguous memory goes through a [`Gather`] line writer.
    const GATHER: bool;
    /// Pieces up to this many bytes are copied inline ([`copy_inline`]; 0: none): the
    /// indirect call would cost as much as the copy.
    const COPY_INLINE: usize;
    /// Checksum-copy pieces shorter than this are summed and copied inline, in general-purpose
    /// registers (0: none).
    const CSUM_INLINE: usize;

    /// The store kind of this type, with `op` as the flush instruction of [`FlushCache`].
    fn store(op: FlushOp) -> Store;

    /// Copies one piece. No fence.
    ///
    /// # Safety
    /// `crate::copy_raw`'s contract; `k` (and `op` for flush) runs on this CPU.
    #[inline(always)]
    unsafe fn copy(k: &Kernels, op: FlushOp, dst: *mut u8, src: *const u8, len: usize) {
        // SAFETY: forwarded contract; the call's owner fences.
        unsafe {
            if Self::COPY_INLINE != 0 && len <= Self::COPY_INLINE {
                copy_inline(dst, src, len)
            } else {
                copy_unfenced_on(k, dst, src, len, Self::store(op))
            }
        }
    }

    /// Fills one piece. No fence.
    ///
    /// # Safety
    /// `crate::fill_raw`'s contract; `k` (and `op`) runs on this CPU.
    #[inline(always)]
    unsafe fn fill(k: &Kernels, op: FlushOp, dst: *mut u8, byte: u8, len: usize) {
        // SAFETY: forwarded contract; the call's owner fences.
        unsafe { fill_unfenced_on(k, dst, byte, len, Self::store(op)) }
    }

    /// Copies one piece and returns its checksum, folded to 16 bits. No fence.
    ///
    /// # Safety
    /// `crate::copy_raw`'s contract; `k` (and `op`) runs on this CPU.
    #[inline(always)]
    unsafe fn csum_copy(k: &Kernels, op: FlushOp, d: *mut u8, s: *const u8, n: usize) -> u32 {
        // SAFETY: forwarded contract; the call's owner fences.
        unsafe {
            if n < Self::CSUM_INLINE {
                fold16(short(s, Plain(d), n, 0))
            } else {
                csum_copy_unfenced_on(k, d, s, n, Self::store(op))
            }
        }
    }

    /// The flush instruction for a [`Gather`] finish, if any.
    #[inline(always)]
    fn flush(op: FlushOp) -> Option<FlushOp> {
        match Self::store(op) {
            Store::Flush(op) => Some(op),
            Store::Temporal | Store::NonTemporal => None,
        }
    }
}

impl Kind for Temporal {
    const GATHER: bool = false;
    const COPY_INLINE: usize = INLINE_COPY;
    // A short piece (a 1- or 13-byte iovec) is not worth the table's call.
    const CSUM_INLINE: usize = SHORT;
    #[inline(always)]
    fn store(_: FlushOp) -> Store {
        Store::Temporal
    }
}

impl Kind for NonTemporal {
    const GATHER: bool = true;
    const COPY_INLINE: usize = 0;
    // Below two lines a streaming piece stores temporally (`stream_unfenced`), so a short one is
    // done inline as for `Temporal`.
    const CSUM_INLINE: usize = 2 * STREAM_LINE;
    #[inline(always)]
    fn store(_: FlushOp) -> Store {
        Store::NonTemporal
    }
}

impl Kind for FlushCache {
    const GATHER: bool = true;
    const COPY_INLINE: usize = 0;
    const CSUM_INLINE: usize = 0;
    #[inline(always)]
    fn store(op: FlushOp) -> Store {
        Store::Flush(op)
    }
}

/// Gathers up to `len` bytes from `src` into `dst..dst + len`; returns the bytes moved. No
/// fence.
///
/// # Safety
/// `dst..dst + len` writable, not overlapping any of `src`'s segments and not accessed by
/// anything else meanwhile; `k`/`op` run on this CPU; the caller runs `K::fence(op)`.
#[inline(always)]
pub(crate) unsafe fn gather<K: Kind, D: Direction>(
    k: &Kernels,
    op: FlushOp,
    dst: *mut u8,
    len: usize,
    src: &mut Cursor<'_, D>,
) -> usize {
    if K::GATHER {
        // SAFETY: forwarded contract.
        unsafe { gather_lines::<D, false>(k, K::flush(op), dst, len, src).0 }
    } else {
        src.iterate(len, |base, n, done| {
            // SAFETY: each piece is readable (engine) and lands at `dst + done`, inside `dst..dst
            // + len` because the walk moves at most `len` bytes.
            unsafe { K::copy(k, op, dst.add(done), base, n) };
            0
        })
    }
}

/// Gathers up to `len` bytes from `src` into `dst..dst + len` through one [`Gather`] line
/// writer (streaming stores; with `flush`, a flush-cache gather). With `SUM`, also returns the
/// checksum of the bytes (folded to 16 bits), summed in the pass that writes them (the writer's
/// `gather_append_sum`); 0 without. Returns `(bytes moved, sum)`. No fence.
///
/// # Safety
/// As [`gather`], with `flush` supported by this CPU.
#[inline(always)]
pub(crate) unsafe fn gather_lines<D: Direction, const SUM: bool>(
    k: &Kernels,
    flush: Option<FlushOp>,
    dst: *mut u8,
    len: usize,
    src: &mut Cursor<'_, D>,
) -> (usize, u32) {
    let mut w = Gather::new(dst, flush);
    let mut sum = 0;
    // SAFETY: each piece is readable (engine) and lands at `dst + done`, inside `dst..dst +
    // len` because the walk moves at most `len` bytes; earlier pieces stay readable until
    // `gather_finish`, as `gather_append` needs: they are the cursor's segments, borrowed for
    // the cursor's lifetime, which outlives this call.
    unsafe {
        src.iterate(len, |base, n, done| {
            if SUM {
                let part = (k.iter.gather_append_sum)(&mut w, base, n);
                sum = block_add(sum, part, done);
            } else {
                (k.iter.gather_append)(&mut w, base, n);
            }
            0
        });
        (k.iter.gather_finish)(&mut w, flush);
    }
    (w.written(), fold16(sum))
}

/// Runs `$body` with `$K` the store kind of `$store` and `$op` its flush instruction: one
/// branch per call, and one monomorphized loop per arm.
macro_rules! by_kind {
    ($store:expr, |$K:ident, $op:ident| $body:expr) => {
        match $store {
            $crate::mode::Store::Temporal => {
                type $K = $crate::policy::Temporal;
                let $op = $crate::cpu::FlushOp::Fence;
                $body
            }
            $crate::mode::Store::NonTemporal => {
                type $K = $crate::policy::NonTemporal;
                let $op = $crate::cpu::FlushOp::Fence;
                $body
            }
            $crate::mode::Store::Flush($op) => {
                type $K = $crate::policy::FlushCache;
                $body
            }
        }
    };
}
pub(crate) use by_kind;

impl<D: Direction> Cursor<'_, D> {
    /// The first non-empty piece of the next `count` bytes (`(dangling, 0)` when none), or for
    /// a discarding cursor its scratch bytes.
    pub(crate) fn current(&mut self) -> (*mut u8, usize) {
        if let Segs::Discard(ref mut scratch) = self.segs {
            return (scratch.as_mut_ptr(), scratch.len().min(self.count));
        }
        let mut out = (core::ptr::NonNull::<u8>::dangling().as_ptr(), 0);
        let mut c = Cursor::<D> { ..*self };
        c.iterate(self.count, |base, n, _| {
            if n != 0 {
                out = (base, n);
            }
            n
        });
        out
    }
}
