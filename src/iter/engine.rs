//! The one iteration engine (Linux `iterate_and_advance2`) and the per-mode store kinds.

use super::seg::{Bvecs, Iovecs, Table, Ubuf};
use super::{Cursor, Direction, Segs};
use crate::arch::STREAM_LINE;
use crate::cpu::FlushOp;
use crate::dispatch::store::{copy_unfenced_on, csum_copy_unfenced_on, fill_unfenced_on, Store};
use crate::dispatch::table::Kernels;
use crate::kernel::gather::{At, Gather, Seg};
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
/// kernel entry runs a piece is `dispatch::store`'s one mapping (its unfenced forms), reached
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
                fold16(short(s, Plain::new(d), n, 0))
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
/// The destination's partial end lines are the only ones written with ordinary stores. Both are
/// prefetched first and written last: the head line's bytes (before the first line boundary)
/// are skipped, the writer streams from that boundary on and ends with the tail line, and then
/// the head line is written from the source again. An ordinary store into a line that is not
/// cached waits for the line, and stores commit in order, so one at the start would hold up the
/// whole destination's streaming stores behind it (lab/findings/engine.md, "The frame's store stream").
///
/// # Safety
/// As [`gather`], with `flush` supported by this CPU, and `len <= src.count()`.
#[inline(always)]
pub(crate) unsafe fn gather_lines<D: Direction, const SUM: bool>(
    k: &Kernels,
    flush: Option<FlushOp>,
    dst: *mut u8,
    len: usize,
    src: &mut Cursor<'_, D>,
) -> (usize, u32) {
    debug_assert!(len <= src.count);
    crate::kernel::prefetch_ends(dst, len);
    // The bytes before the first line boundary, written last: from the current segment when it
    // holds them all (the usual case), else through a copy of the cursor.
    let head = len.min((dst as usize).wrapping_neg() & (STREAM_LINE - 1));
    let mut again = None;
    let mut front = core::ptr::null();
    if head != 0 {
        match src.front(head) {
            Some(p) => front = p,
            None => {
                again = Some(Cursor::<D> { ..*src });
                src.advance(head);
            }
        }
    }
    // SAFETY: `head <= len`, so the writer's range `dst + head..dst + len` is inside the
    // destination and starts on a line boundary (or is empty).
    let mut w = Gather::new(unsafe { dst.add(head) });
    let mut head_done = 0;
    // SAFETY: each piece is readable (engine) and lands at `dst + head + done`, inside `dst..dst
    // + len` because the walk moves at most `len - head` bytes; earlier pieces stay readable
    // until the gather ends, as `gather_append` needs: they are the cursor's segments, borrowed
    // for the cursor's lifetime, which outlives this call. The head's bytes are read from the
    // segment `front` points into or through `again`, a copy of the cursor at the same place.
    let sum = unsafe {
        let rest = len - head;
        let segs = if SUM {
            k.iter.gather_segs_sum
        } else {
            k.iter.gather_segs
        };
        // Where a segment list lies in memory as `struct iovec`s, the writer walks it itself,
        // in one call; page segments are handed over one piece at a time.
        let at = At {
            idx: src.idx,
            off: src.off,
        };
        match src.segs {
            Segs::Ubuf(base, n) => {
                let one = Seg {
                    base: base.cast_const(),
                    len: n,
                };
                let at = segs(&mut w, &one, src.nr, at, rest);
                src.walked(w.written(), at);
            }
            Segs::Iovec(p) => {
                let at = segs(&mut w, p.cast(), src.nr, at, rest);
                src.walked(w.written(), at);
            }
            Segs::Bvec(_) | Segs::Discard(_) => {
                src.iterate(rest, |base, n, _| {
                    let one = Seg { base, len: n };
                    segs(&mut w, &one, 1, At { idx: 0, off: 0 }, n);
                    0
                });
            }
        }
        // The destination's last partial line, then its first.
        let mut sum = if SUM { w.finish_sum() } else { 0 };
        if head != 0 {
            let op = FlushOp::Fence;
            let s = match again {
                None => {
                    head_done = head;
                    if SUM {
                        short(front, Plain::new(dst), head, 0)
                    } else {
                        Temporal::copy(k, op, dst, front, head);
                        0
                    }
                }
                Some(mut again) => {
                    let mut s = 0;
                    head_done = again.iterate(head, |base, n, done| {
                        if SUM {
                            let part = Temporal::csum_copy(k, op, dst.add(done), base, n);
                            s = block_add(s, part as u64, done);
                        } else {
                            Temporal::copy(k, op, dst.add(done), base, n);
                        }
                        0
                    });
                    s
                }
            };
            sum = block_add(s, sum, head);
        }
        (k.iter.gather_finish)(&mut w, dst, len, flush);
        sum
    };
    (head_done + w.written(), fold16(sum))
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

// The writer reads an iovec array as its own `Seg`s.
const _: () = {
    use core::mem::{align_of, offset_of, size_of};
    assert!(size_of::<super::IoVec<'_>>() == size_of::<Seg>());
    assert!(align_of::<super::IoVec<'_>>() == align_of::<Seg>());
    assert!(offset_of!(Seg, len) == size_of::<*const u8>());
};

impl<D: Direction> Cursor<'_, D> {
    /// Moves the cursor to `at`, `done` bytes on, after a walk made outside [`Cursor::iterate`]
    /// over its own segments (the gather writer's).
    #[inline(always)]
    pub(crate) fn walked(&mut self, done: usize, at: At) {
        debug_assert!(done <= self.count && at.idx <= self.nr);
        self.idx = at.idx;
        self.off = at.off;
        self.pos += done;
        self.count -= done;
    }

    /// Where the next `n` bytes are when the current segment holds them all (`n > 0`); the
    /// cursor is then advanced past them. `None` otherwise (also for a discarding cursor), and
    /// the cursor is unchanged.
    #[inline(always)]
    pub(crate) fn front(&mut self, n: usize) -> Option<*const u8> {
        if n > self.count || self.idx >= self.nr {
            return None;
        }
        let (base, len) = match self.segs {
            Segs::Ubuf(p, len) => (p, len),
            // SAFETY: `idx < nr`.
            Segs::Iovec(p) => unsafe { Iovecs(p).seg(self.idx) },
            // SAFETY: `idx < nr`.
            Segs::Bvec(p) => unsafe { Bvecs(p).seg(self.idx) },
            Segs::Discard(_) => return None,
        };
        if len - self.off < n {
            return None;
        }
        let at = base.wrapping_add(self.off).cast_const();
        self.off += n;
        self.pos += n;
        self.count -= n;
        Some(at)
    }

    /// The first non-empty piece of the next `count` bytes (`(dangling, 0)` when none), or for
    /// a discarding cursor its scratch bytes. For the `std::io` and `bytes` impls.
    #[cfg(any(feature = "std", feature = "bytes"))]
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
