//! Unfenced streaming pieces for the scatter-gather cursors, generic over [`Vector`] like the
//! rest of [`crate::kernel`] and stamped into every backend's table by `crate::backend`.
//!
//! A cursor copy stores many pieces and fences once per call, not once per piece: an `sfence`
//! after each 1500-byte segment would serialise the write-combining buffers every segment.
//!
//! Gathering into one contiguous destination goes through [`Gather`]: whole destination lines
//! are streamed even when they straddle two (or many tiny) source segments, by assembling the
//! straddling line in a line-sized, line-aligned buffer on the stack and streaming it from there.
//! The partial lines at the two ends of the destination are written with ordinary stores. Every
//! destination line is thus written exactly once, by one kind of store (a line written by both
//! kinds costs ~370 ns on Zen3; a per-segment streaming copy of 1500-byte segments pays that on
//! almost every segment boundary).

use super::{stream_span, temporal, ByteSource, Mem};
use crate::arch::{self, STREAM_LINE};
use crate::cpu::FlushOp;
use crate::vector::Vector;

/// A streaming writer into one contiguous destination, fed piece by piece.
///
/// `line` holds the bytes of the destination line that contains `dst + pos` and is not complete
/// yet, at their offsets within the line: `line[i]` belongs at address `(dst + pos) & !(L - 1)
/// + i`. Aligned to the largest `STREAM_LINE` of any target (aarch64: 128).
#[repr(C, align(128))]
pub(crate) struct Gather {
    line: [u8; STREAM_LINE],
    dst: *mut u8,
    pos: usize,
}

const _: () = assert!(core::mem::align_of::<Gather>() >= STREAM_LINE);

impl Gather {
    /// A writer that will place bytes at `dst`, `dst + 1`, ...
    #[inline(always)]
    pub(crate) fn new(dst: *mut u8) -> Self {
        Gather {
            line: [0; STREAM_LINE],
            dst,
            pos: 0,
        }
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

/// Appends `src[..len]` at `w.dst + w.pos`.
///
/// # Safety
/// `src` readable for `len` bytes; `w.dst + w.pos ..+ len` writable and part of the destination
/// `w` was created for (no other access during the gather); backend features present; the
/// caller calls [`gather_finish`] and then fences.
#[inline(always)]
pub(crate) unsafe fn gather_append<V: Vector>(w: &mut Gather, mut src: *const u8, mut len: usize) {
    const L: usize = STREAM_LINE;
    let lo = (w.dst as usize).wrapping_add(w.pos) & (L - 1);
    // SAFETY: `line` moves stay inside `line[lo..L]`; destination moves stay inside
    // `w.dst..w.dst + w.pos + len`, except that a completed line is streamed only when it starts
    // at or after `w.dst`, so it lies entirely in the destination.
    unsafe {
        if lo != 0 {
            let take = len.min(L - lo);
            temporal::<V, Mem>(w.line.as_mut_ptr().add(lo), Mem(src), take);
            w.pos += take;
            src = src.add(take);
            len -= take;
            if lo + take < L {
                return;
            }
            let line_end = w.dst.add(w.pos);
            let line_start = (line_end as usize - L) as *mut u8;
            if line_start as usize >= w.dst as usize {
                stream_lines::<V>(line_start, w.line.as_ptr(), 1);
            } else {
                // The destination's first, partial line: ordinary stores, only its own bytes.
                let head = w.dst as usize & (L - 1);
                temporal::<V, Mem>(w.dst, Mem(w.line.as_ptr().add(head)), L - head);
            }
        }
        let lines = len / L;
        stream_lines::<V>(w.dst.add(w.pos), src, lines);
        let done = lines * L;
        w.pos += done;
        let rest = len - done;
        if rest != 0 {
            temporal::<V, Mem>(w.line.as_mut_ptr(), Mem(src.add(done)), rest);
            w.pos += rest;
        }
    }
}

/// Writes the pending partial last line with ordinary stores; with `flush`, writes back the
/// lines written with ordinary stores (every line where streaming is only a hint). No fence.
///
/// # Safety
/// As [`gather_append`]; `flush` supported by this CPU.
#[inline(always)]
pub(crate) unsafe fn gather_finish<V: Vector>(w: &mut Gather, flush: Option<FlushOp>) {
    const L: usize = STREAM_LINE;
    let end = (w.dst as usize).wrapping_add(w.pos);
    let lo = end & (L - 1);
    // SAFETY: the pending bytes are `line[first..lo]` and belong at `start..end`, inside the
    // destination (`start >= w.dst`); flushes name only destination lines.
    unsafe {
        if lo != 0 {
            let start = (end & !(L - 1)).max(w.dst as usize);
            let first = start & (L - 1);
            temporal::<V, Mem>(
                start as *mut u8,
                Mem(w.line.as_ptr().add(first)),
                lo - first,
            );
        }
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
