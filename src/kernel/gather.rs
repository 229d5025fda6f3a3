//! Unfenced streaming pieces for the scatter-gather cursors, generic over [`Vector`] like the
//! rest of [`crate::kernel`] and stamped into every backend's table by `crate::backend`.
//!
//! A cursor copy stores many pieces and fences once per call, not once per piece: an `sfence`
//! after each 1500-byte segment would serialise the write-combining buffers every segment.
//!
//! Gathering into one contiguous destination goes through [`Gather`], which writes every
//! destination line exactly once, by one kind of store (a line written both ways costs hundreds
//! of nanoseconds: docs/performance.md): a whole line inside one source segment is streamed
//! straight from the source; a line that straddles segments, and the partial lines at the two
//! ends of the destination, get ordinary stores straight from the sources, piece by piece.
//!
//! Nothing is staged on the stack. An earlier design assembled straddling lines in a line
//! buffer and streamed them from there, but a load of bytes just stored by several smaller
//! stores cannot be forwarded: it waits until they commit, and stores commit in order behind
//! every streaming store still queued. On the Intel Xeon VM that stall, once per segment
//! boundary, made a batch of gathered 1.5 KiB frames 2.5x slower than a streaming copy of the
//! same bytes, and slower than a temporal one (docs/performance.md). A straddling line costs an
//! ordinary read-for-ownership instead, which the hardware overlaps. Gathers of tiny segments
//! (many per line) therefore store mostly with ordinary stores.

use super::{stream_span, temporal, ByteSource, Mem};
use crate::arch::{self, STREAM_LINE};
use crate::cpu::FlushOp;
use crate::vector::Vector;

/// A streaming writer into one contiguous destination, fed piece by piece.
pub(crate) struct Gather {
    dst: *mut u8,
    pos: usize,
    /// The write-back instruction of a flush-cache gather: a line written with ordinary stores
    /// in the middle of the destination is written back as soon as it is complete.
    flush: Option<FlushOp>,
}

impl Gather {
    /// A writer that will place bytes at `dst`, `dst + 1`, ..., writing back with `flush`
    /// (flush-cache gathers).
    #[inline(always)]
    pub(crate) fn new(dst: *mut u8, flush: Option<FlushOp>) -> Self {
        Gather { dst, pos: 0, flush }
    }

    /// Bytes appended so far.
    #[inline(always)]
    pub(crate) fn written(&self) -> usize {
        self.pos
    }
}

/// Streams `lines` whole lines from `src` to line-aligned `dst`.
///
/// # Safety
/// `src` readable and `dst` writable for `lines * STREAM_LINE` bytes, `dst` line-aligned, the
/// backend's features present; the caller fences.
#[inline(always)]
unsafe fn stream_lines<V: Vector>(dst: *mut u8, src: *const u8, lines: usize) {
    let mut off = 0;
    let end = lines * STREAM_LINE;
    // SAFETY: every register lies in `0..end`; `V::BYTES` divides the line, so each streamed
    // address is `V::BYTES`-aligned.
    unsafe {
        while off < end {
            let mut i = 0;
            while i < STREAM_LINE {
                V::load(src.add(off + i)).stream(dst.add(off + i));
                i += V::BYTES;
            }
            off += STREAM_LINE;
        }
    }
}

/// Appends `src[..len]` at `w.dst + w.pos`: ordinary stores up to the next line boundary (the
/// line already holds bytes of an earlier piece, or is the destination's partial first line),
/// whole lines streamed, ordinary stores for the rest.
///
/// # Safety
/// `src` readable for `len` bytes; `w.dst + w.pos ..+ len` writable and part of the destination
/// `w` was created for (no other access during the gather); backend features present; the
/// caller calls [`gather_finish`] and then fences.
#[inline(always)]
pub(crate) unsafe fn gather_append<V: Vector>(w: &mut Gather, mut src: *const u8, mut len: usize) {
    const L: usize = STREAM_LINE;
    let at = (w.dst as usize).wrapping_add(w.pos);
    let lo = at & (L - 1);
    // SAFETY: every destination move stays inside `w.dst + w.pos ..+ len`; streamed lines start
    // on a line boundary at or after `w.dst + w.pos`; a flushed line holds destination bytes.
    unsafe {
        if lo != 0 {
            let take = len.min(L - lo);
            temporal::<V, Mem>(at as *mut u8, Mem(src), take);
            let line_start = at - lo;
            if lo + take == L && line_start >= w.dst as usize && V::STREAM_BYPASSES_CACHE {
                if let Some(op) = w.flush {
                    arch::flush_range(op, line_start as *const u8, 1);
                }
            }
            w.pos += take;
            src = src.add(take);
            len -= take;
        }
        let lines = len / L;
        stream_lines::<V>(w.dst.add(w.pos), src, lines);
        let done = lines * L;
        w.pos += done;
        let rest = len - done;
        if rest != 0 {
            temporal::<V, Mem>(w.dst.add(w.pos), Mem(src.add(done)), rest);
            w.pos += rest;
        }
    }
}

/// Ends a gather: with `flush`, writes back the lines at the two ends of the destination,
/// written with ordinary stores (every line where streaming is only a hint). No fence.
///
/// # Safety
/// As [`gather_append`]; `flush` supported by this CPU.
#[inline(always)]
pub(crate) unsafe fn gather_finish<V: Vector>(w: &mut Gather, flush: Option<FlushOp>) {
    const L: usize = STREAM_LINE;
    let end = (w.dst as usize).wrapping_add(w.pos);
    let lo = end & (L - 1);
    // SAFETY: flushes name only lines holding destination bytes.
    unsafe {
        if let Some(op) = flush {
            if V::STREAM_BYPASSES_CACHE {
                if w.pos != 0 {
                    if w.dst as usize & (L - 1) != 0 {
                        arch::flush_range(op, w.dst, 1);
                    }
                    if lo != 0 {
                        arch::flush_range(op, (end - 1) as *const u8, 1);
                    }
                }
            } else {
                arch::flush_range(op, w.dst, w.pos);
            }
        }
    }
}

/// Streams the whole lines of one piece (ordinary stores below two lines). No fence.
///
/// # Safety
/// As [`crate::kernel::temporal`]; the caller fences.
#[inline(always)]
pub(crate) unsafe fn stream_piece<V: Vector, S: ByteSource>(dst: *mut u8, src: S, len: usize) {
    // SAFETY: forwarded contract; `stream` needs two lines.
    unsafe {
        if len < 2 * STREAM_LINE {
            temporal::<V, S>(dst, src, len);
        } else {
            stream_span::<V, S>(dst, src, len);
        }
    }
}
