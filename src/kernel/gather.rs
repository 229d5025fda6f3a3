//! Unfenced streaming pieces for the scatter-gather cursors, generic over [`Vector`] like the
//! rest of [`crate::kernel`] and stamped into every backend's table by `crate::backend`.
//!
//! A cursor copy stores many pieces and fences once per call, not once per piece: an `sfence`
//! after each 1500-byte segment would serialise the write-combining buffers every segment.
//!
//! Gathering into one contiguous destination goes through [`Gather`], which writes every
//! destination line exactly once, by one kind of store (a line written both ways costs hundreds
//! of nanoseconds: docs/performance.md): a whole line inside one source segment is streamed
//! straight from the source; a line that straddles two segments (a frame's header and its
//! payload) is assembled in registers from both and streamed whole ([`stream_joined`]); only
//! the partial lines at the two ends of the destination, and a line that three or more
//! segments share, get ordinary stores straight from the sources.
//!
//! Nothing is staged in memory. An earlier design assembled straddling lines in a line buffer
//! on the stack and streamed them from there, but a load of bytes just stored by several
//! smaller stores cannot be forwarded: it waits until they commit, and stores commit in order
//! behind every streaming store still queued. On the Intel Xeon VM that stall, once per segment
//! boundary, made a batch of gathered 1.5 KiB frames 2.5x slower than a streaming copy of the
//! same bytes (docs/performance.md). The next design wrote a straddling line with ordinary
//! stores, paying a read-for-ownership of a line the CPU never reads. Now the first piece's
//! bytes of such a line stay in their segment (the gather remembers where) until the next
//! piece arrives; then eight 8-byte words are read from the two sources with loads that stay
//! inside them and moved into vector registers without touching memory.
//!
//! The checksumming gather (`csum_and_copy_from_iter`) is the same writer with `SUM`: each
//! streamed register is added to the sum from the register it was loaded into, and the few
//! bytes that go elsewhere (a partial line's ordinary stores, a straddling line's words) are
//! summed in general-purpose registers ([`short`]) as they are read: every source byte is
//! summed once, in the pass that writes it.

use super::sum::{block_add, short, Discard, Plain};
use super::{stream_span, temporal, ByteSource, Mem};
use crate::arch::{self, STREAM_LINE};
use crate::cpu::FlushOp;
use crate::vector::{Checksum, Vector, CSUM_CHUNK};

/// A streaming writer into one contiguous destination, fed piece by piece.
///
/// `repr(C)` with `pend` (set to `dst`, never a constant) between the two counters that start at
/// zero: otherwise LLVM may zero `pos` and `pend_n` together with one 16-byte vector store, and
/// integer-only builds (`--cfg cachecopy_integer_only`) must hold no vector register on the data
/// path (.ci/run's bare-metal check found it in the checksummed gather).
#[repr(C)]
pub(crate) struct Gather {
    dst: *mut u8,
    pos: usize,
    /// The bytes of the current line not yet written: the last `pend_n` bytes appended (so the
    /// line holds `dst + pos - pend_n .. dst + pos`), still in their segment at `pend`. Only
    /// ever the start of a line inside the destination; `pend_n == 0`: none (and `pend` is
    /// then meaningless).
    pend: *const u8,
    pend_n: usize,
    /// The write-back instruction of a flush-cache gather: a line written with ordinary stores
    /// in the middle of the destination is written back as soon as it is complete.
    flush: Option<FlushOp>,
}

impl Gather {
    /// A writer that will place bytes at `dst`, `dst + 1`, ..., writing back with `flush`
    /// (flush-cache gathers).
    #[inline(always)]
    pub(crate) fn new(dst: *mut u8, flush: Option<FlushOp>) -> Self {
        Gather {
            dst,
            pos: 0,
            flush,
            pend: dst.cast_const(),
            pend_n: 0,
        }
    }

    /// Bytes appended so far.
    #[inline(always)]
    pub(crate) fn written(&self) -> usize {
        self.pos
    }
}

/// Streams `lines` whole lines from `src` to line-aligned `dst`; with `SUM`, returns their sum
/// (words counted from `src`; 0 without).
///
/// # Safety
/// `src` readable and `dst` writable for `lines * STREAM_LINE` bytes, `dst` line-aligned, the
/// backend's features present; the caller fences.
#[inline(always)]
unsafe fn stream_lines<V: Checksum, const SUM: bool>(
    dst: *mut u8,
    src: *const u8,
    lines: usize,
) -> u64 {
    let mut off = 0;
    let end = lines * STREAM_LINE;
    let mut sum = 0;
    // SAFETY: every register lies in `0..end`; `V::BYTES` divides the line, so each streamed
    // address is `V::BYTES`-aligned.
    unsafe {
        while off < end {
            // The accumulator is reduced every `CSUM_CHUNK` bytes, before a lane could wrap.
            let chunk_end = end.min(off + CSUM_CHUNK);
            let mut acc = V::csum_zero();
            while off < chunk_end {
                let mut i = 0;
                while i < STREAM_LINE {
                    let v = V::load(src.add(off + i));
                    if SUM {
                        acc = V::csum_add(acc, v);
                    }
                    v.stream(dst.add(off + i));
                    i += V::BYTES;
                }
                off += STREAM_LINE;
            }
            if SUM {
                sum = block_add(sum, V::csum_reduce(acc), 0);
            }
        }
    }
    sum
}

/// The bytes `p[..k]`, `1 <= k <= 7`, as a little-endian number, read with loads that stay in
/// `p..p + k` (two overlapping 4- or 2-byte loads, or one byte).
///
/// # Safety
/// `p..p + k` readable.
#[inline(always)]
unsafe fn partial_word(p: *const u8, k: usize) -> u64 {
    debug_assert!((1..8).contains(&k));
    // SAFETY: each load lies in `p..p + k` because it is used only when `k` is at least its width.
    unsafe {
        if k >= 4 {
            let lo = u32::from_le(p.cast::<u32>().read_unaligned()) as u64;
            let hi = u32::from_le(p.add(k - 4).cast::<u32>().read_unaligned()) as u64;
            lo | hi << (8 * (k - 4))
        } else if k >= 2 {
            let lo = u16::from_le(p.cast::<u16>().read_unaligned()) as u64;
            let hi = u16::from_le(p.add(k - 2).cast::<u16>().read_unaligned()) as u64;
            lo | hi << (8 * (k - 2))
        } else {
            *p as u64
        }
    }
}

/// Streams the line at `line` whose first `n` bytes are `a[..n]` and whose other `L - n` bytes
/// are `b[..L - n]` (`0 < n < L`), built in registers ([`Vector::from_words`]) from 8-byte words
/// read inside the two sources.
///
/// # Safety
/// `a` readable for `n` bytes, `b` for `STREAM_LINE - n`; `line` line-aligned and writable for a
/// line; backend features present; the caller fences.
#[inline(always)]
unsafe fn stream_joined<V: Vector>(line: *mut u8, a: *const u8, n: usize, b: *const u8) {
    const L: usize = STREAM_LINE;
    // Word `i` holds line bytes `8i..8i + 8`: from `a` below `n`, from `b` above.
    let word = |i: usize| -> u64 {
        let at = 8 * i;
        // SAFETY: `a + at ..+ 8` lies in `a..a + n` when `at + 8 <= n`; `b + at - n ..+ 8` in
        // `b..b + L - n` when `at >= n` (and `at + 8 <= L`); a straddling word reads `n - at`
        // bytes at `a + at` and `at + 8 - n` at `b`, both inside.
        let le = unsafe {
            if at + 8 <= n {
                u64::from_le(a.add(at).cast::<u64>().read_unaligned())
            } else if at >= n {
                u64::from_le(b.add(at - n).cast::<u64>().read_unaligned())
            } else {
                let k = n - at;
                partial_word(a.add(at), k) | partial_word(b, 8 - k) << (8 * k)
            }
        };
        // The bytes in memory order, whatever the target's byte order.
        le.to_le()
    };
    // SAFETY: each register covers `line + j ..+ V::BYTES`, inside the line, `V::BYTES`-aligned.
    unsafe {
        let mut j = 0;
        while j < L {
            let first = j / 8;
            V::from_words(|i| word(first + i)).stream(line.add(j));
            j += V::BYTES;
        }
    }
}

/// Appends `src[..len]` at `w.dst + w.pos`. Bytes that start a line in the destination but do not
/// fill it are left in their segment ([`Gather::pend`]); the next piece completes the line in
/// registers and streams it ([`stream_joined`]), or, when it is too short to, they are written
/// with ordinary stores. A line the destination starts inside gets ordinary stores up to its
/// end, then whole lines are streamed straight from the source. With `SUM`, returns the sum of
/// `src[..len]` (words counted from `src`), each byte summed in the pass that reads it; 0
/// without.
///
/// # Safety
/// `src` readable for `len` bytes, and every earlier piece of this gather still readable;
/// `w.dst + w.pos ..+ len` writable and part of the destination `w` was created for (no other
/// access during the gather); backend features present; the caller calls [`gather_finish`]
/// and then fences.
#[inline(always)]
pub(crate) unsafe fn gather_append<V: Checksum, const SUM: bool>(
    w: &mut Gather,
    mut src: *const u8,
    mut len: usize,
) -> u64 {
    const L: usize = STREAM_LINE;
    // Bytes of this piece consumed so far, and their sum.
    let (mut at, mut sum) = (0, 0);
    // SAFETY: every destination move stays inside `w.dst .. w.dst + w.pos + len` (pending bytes
    // sit just below `w.pos`); streamed lines start on a line boundary at or after `w.dst`; a
    // flushed line holds destination bytes; pending bytes are read from their earlier segment;
    // every summed range is inside `src..src + len`.
    unsafe {
        if w.pend_n != 0 {
            let need = L - w.pend_n;
            let line = w.dst.add(w.pos - w.pend_n);
            if len >= need {
                if SUM {
                    sum = short(src, Discard, need, 0);
                }
                stream_joined::<V>(line, w.pend, w.pend_n, src);
                w.pos += need;
                src = src.add(need);
                len -= need;
                at = need;
            } else {
                // A third piece would be needed: ordinary stores for this line, as below.
                temporal::<V, Mem>(line, Mem(w.pend), w.pend_n);
            }
            w.pend_n = 0;
        }
        let dst_at = (w.dst as usize).wrapping_add(w.pos);
        let lo = dst_at & (L - 1);
        if lo != 0 && len != 0 {
            let take = len.min(L - lo);
            if SUM {
                sum = block_add(sum, short(src, Plain(w.dst.add(w.pos)), take, 0), at);
            } else {
                temporal::<V, Mem>(w.dst.add(w.pos), Mem(src), take);
            }
            let line_start = dst_at - lo;
            if lo + take == L && line_start >= w.dst as usize && V::STREAM_BYPASSES_CACHE {
                if let Some(op) = w.flush {
                    arch::flush_range(op, w.dst.add(line_start - w.dst as usize), 1);
                }
            }
            w.pos += take;
            src = src.add(take);
            len -= take;
            at += take;
        }
        let lines = len / L;
        let body = stream_lines::<V, SUM>(w.dst.add(w.pos), src, lines);
        let done = lines * L;
        if SUM {
            sum = block_add(sum, body, at);
        }
        w.pos += done;
        let rest = len - done;
        if rest != 0 {
            if SUM {
                sum = block_add(sum, short(src.add(done), Discard, rest, 0), at + done);
            }
            // `w.dst + w.pos` is a line boundary here: keep the bytes for the next piece.
            w.pend = src.add(done);
            w.pend_n = rest;
            w.pos += rest;
        }
    }
    sum
}

/// Ends a gather: writes the pending bytes of the destination's last partial line with ordinary
/// stores, then, with `flush`, writes back the lines at the two ends of the destination,
/// written with ordinary stores (every line where streaming is only a hint). No fence.
///
/// # Safety
/// As [`gather_append`]; `flush` supported by this CPU.
#[inline(always)]
pub(crate) unsafe fn gather_finish<V: Vector>(w: &mut Gather, flush: Option<FlushOp>) {
    const L: usize = STREAM_LINE;
    let end = (w.dst as usize).wrapping_add(w.pos);
    let lo = end & (L - 1);
    // SAFETY: pending bytes are the destination's last `pend_n` bytes, read from their segment;
    // flushes name only lines holding destination bytes.
    unsafe {
        if w.pend_n != 0 {
            temporal::<V, Mem>(w.dst.add(w.pos - w.pend_n), Mem(w.pend), w.pend_n);
            w.pend_n = 0;
        }
        if let Some(op) = flush {
            if V::STREAM_BYPASSES_CACHE {
                if w.pos != 0 {
                    if w.dst as usize & (L - 1) != 0 {
                        arch::flush_range(op, w.dst, 1);
                    }
                    if lo != 0 {
                        arch::flush_range(op, w.dst.add(w.pos - 1), 1);
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
