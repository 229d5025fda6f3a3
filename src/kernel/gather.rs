//! Unfenced streaming pieces for the scatter-gather cursors, generic over [`Vector`] like the
//! rest of [`crate::kernel`] and stamped into every backend's table by `crate::dispatch::table`.
//!
//! A cursor copy stores many pieces and fences once per call, not once per piece: an `sfence`
//! after each 1500-byte segment would serialise the write-combining buffers every segment.
//!
//! Gathering into one contiguous destination goes through [`Gather`], which writes every
//! destination line exactly once, by one kind of store (a line written both ways costs hundreds
//! of nanoseconds: lab/findings/performance.md): a whole line inside one source segment is streamed
//! straight from the source; a line that several segments share (a frame's header and its
//! payload, or the 1200-, 13-, 1- and 258-byte iovecs of a datagram) is assembled in registers
//! from them and streamed whole ([`stream_joined`], [`stream_packed`]); only the partial lines
//! at the two ends of the destination get ordinary stores, and the caller
//! (`iter::gather_lines`) prefetches those two lines first and writes them last, so that their
//! read-for-ownership overlaps the streaming instead of holding up the stores queued behind
//! them (lab/findings/engine.md, "The frame's store stream").
//!
//! Nothing is read back through memory that narrower stores have just written. An earlier
//! design assembled straddling lines in a line buffer on the stack and streamed them from
//! there, but a load of bytes just stored by several smaller stores cannot be forwarded: it
//! waits until they commit, and stores commit in order behind every streaming store still
//! queued. That stall, once per segment boundary, made a batch of gathered frames far slower
//! than a streaming copy of the same bytes (lab/findings/performance.md, "Cursors"). The
//! next design wrote a straddling line with ordinary stores, paying a read-for-ownership of a
//! line the CPU never reads. Now the first piece's bytes of such a line stay in their segment
//! (the gather remembers where) until the next piece arrives; if it completes the line, eight
//! 8-byte words are read from the two sources with loads that stay inside them and moved into
//! vector registers without touching memory. If it does not (a 13-byte iovec), the line's bytes
//! so far are packed into eight words kept beside the writer, each written by one 8-byte store
//! of a value built in registers and read back by loads that store covers (which the CPU
//! forwards from the store queue), until a piece completes the line.
//!
//! The checksumming gather (`csum_and_copy_from_iter`) is the same writer with `SUM`: each
//! streamed register is added to the sum from the register it is streamed from, whether it was
//! loaded from a segment or assembled from several, and the last partial line is summed in
//! general-purpose registers ([`short`]) as it is written. Every line starts a multiple of 64
//! bytes after the writer's start, an even offset, so the lines' sums add as they are: no
//! segment's sum has to be shifted to its offset, and a byte is summed once, in the pass that
//! writes it.

use core::mem::MaybeUninit;

use super::sum::{short, Plain};
use super::{stream_span, temporal, ByteSource, Mem};
use crate::arch::{self, STREAM_LINE};
use crate::cpu::FlushOp;
use crate::vector::{add64, Checksum, Vector, CSUM_CHUNK};

/// A streaming writer into one contiguous destination that starts on a line boundary, fed
/// piece by piece.
///
/// `repr(C)` with no two fields that start at zero side by side (`pos`, `pend_n` and `sum`
/// between pointers that are never constants): otherwise LLVM may zero them together with one
/// 16-byte vector store, and integer-only builds (`--cfg cachecopy_integer_only`) must hold no
/// vector register on the data path (.ci/run's bare-metal check found it in the checksummed
/// gather). `words` is never initialised as a whole, for the same reason.
#[repr(C)]
pub(crate) struct Gather {
    pos: usize,
    dst: *mut u8,
    pend_n: usize,
    /// Where the bytes of the current line not yet written are: the last `pend_n` bytes
    /// appended (so the line holds `dst + pos - pend_n .. dst + pos`, and starts on a line
    /// boundary). Non-null: one piece, still in its segment at `pend`. Null: packed in
    /// `words`. `pend_n == 0`: none (and `pend` is then meaningless).
    pend: *const u8,
    /// A checksumming gather's sum of every line streamed so far, 64-bit end-around: each line
    /// starts a multiple of 64 bytes from `dst`, an even offset, so the lines' sums add as they
    /// are, whatever pieces they came from.
    sum: u64,
    /// The current line's pending bytes when several pieces share it: the line's bytes in
    /// memory order, `pend_n` of them, each word written whole with the bytes past `pend_n`
    /// zero.
    words: [MaybeUninit<u64>; STREAM_LINE / 8],
}

impl Gather {
    /// A writer that will place bytes at `dst`, `dst + 1`, ...; `dst` is on a line boundary
    /// unless nothing is appended.
    #[inline(always)]
    pub(crate) fn new(dst: *mut u8) -> Self {
        Gather {
            pos: 0,
            dst,
            pend_n: 0,
            pend: dst.cast_const(),
            sum: 0,
            words: [MaybeUninit::uninit(); STREAM_LINE / 8],
        }
    }

    /// Bytes appended so far.
    #[inline(always)]
    pub(crate) fn written(&self) -> usize {
        self.pos
    }

    /// The packed words.
    #[inline(always)]
    fn words(&mut self) -> *mut u64 {
        self.words.as_mut_ptr().cast()
    }

    /// Writes the pending bytes (the destination's last partial line) with ordinary stores
    /// and returns the sum of every byte appended: the lines streamed and these. `gather_finish`
    /// then has nothing left to write.
    ///
    /// # Safety
    /// As [`gather_finish`].
    #[inline(always)]
    pub(crate) unsafe fn finish_sum(&mut self) -> u64 {
        let n = self.pend_n;
        if n == 0 {
            return self.sum;
        }
        self.pend_n = 0;
        // SAFETY: the pending bytes are the destination's last `n`, read from their segment or
        // the packed words; their line starts on a line boundary, an even offset from `dst`.
        unsafe {
            let line = self.dst.add(self.pos - n);
            let part = if self.pend.is_null() {
                let words = self.words();
                unpack(line, words, n);
                let mut s = 0;
                for i in 0..n.div_ceil(8) {
                    s = add64(s, word_at(words, i));
                }
                s
            } else {
                short(self.pend, Plain::new(line), n, 0)
            };
            add64(self.sum, part)
        }
    }
}

/// Writes `src[..n]` into the line image `words` at byte `at` (`at + n <= STREAM_LINE`, every
/// byte below `at` already there): each word with one 8-byte store of a value built in
/// registers from loads inside `src`, the bytes above the new ones zero (volatile, as the loads
/// of [`word_at`], so that no loop of them becomes a `memcpy` call). The word the image
/// ends in, if partly filled, is read back with one 8-byte load of what one 8-byte store wrote,
/// which the store queue forwards.
///
/// # Safety
/// `src..src + n` readable; `words` valid for the line; `at + n <= STREAM_LINE`.
#[inline(always)]
unsafe fn pack_bytes(words: *mut u64, at: usize, src: *const u8, n: usize) {
    let (mut i, sh) = (at / 8, at % 8);
    let mut done = 0;
    // SAFETY: each read lies in `src..src + n` (`partial_word` stays inside its bytes); each
    // word index is below `(at + n).div_ceil(8) <= STREAM_LINE / 8`; the word read back holds
    // the bytes below `at`, written earlier.
    unsafe {
        if sh != 0 && n != 0 {
            // Complete (or extend) the word the image ends in.
            let take = (8 - sh).min(n);
            let old = u64::from_le(word_at(words, i));
            words
                .add(i)
                .write_volatile((old | partial_word(src, take) << (8 * sh)).to_le());
            done = take;
            i += 1;
        }
        while n - done >= 8 {
            words
                .add(i)
                .write_volatile(src.add(done).cast::<u64>().read_unaligned());
            done += 8;
            i += 1;
        }
        if done < n {
            words
                .add(i)
                .write_volatile(partial_word(src.add(done), n - done).to_le());
        }
    }
}

/// Writes the first `n` bytes of the line image `words` to `dst` with ordinary stores: whole
/// words with 8-byte stores, the last `n % 8` bytes with two overlapping 4- or 2-byte stores or
/// one byte, from the word in a register (each read is one 8-byte load of what one 8-byte store
/// wrote).
///
/// # Safety
/// `dst..dst + n` writable; `words` holds at least `n` bytes; `n <= STREAM_LINE`.
#[inline(always)]
unsafe fn unpack(dst: *mut u8, words: *const u64, n: usize) {
    // SAFETY: every store lies in `dst..dst + n`: whole words below `n & !7`, the tail's stores
    // inside its `n & 7` bytes.
    unsafe {
        let whole = n / 8;
        for i in 0..whole {
            dst.add(8 * i)
                .cast::<u64>()
                .write_unaligned(word_at(words, i));
        }
        let k = n % 8;
        if k != 0 {
            let w = u64::from_le(word_at(words, whole));
            let d = dst.add(8 * whole);
            if k >= 4 {
                d.cast::<u32>().write_unaligned((w as u32).to_le());
                d.add(k - 4)
                    .cast::<u32>()
                    .write_unaligned(((w >> (8 * (k - 4))) as u32).to_le());
            } else if k >= 2 {
                d.cast::<u16>().write_unaligned((w as u16).to_le());
                d.add(k - 2)
                    .cast::<u16>()
                    .write_unaligned(((w >> (8 * (k - 2))) as u16).to_le());
            } else {
                *d = w as u8;
            }
        }
    }
}

/// A checksumming gather's running sum while it runs: a vector accumulator that every
/// streamed register is added to, reduced into `sum` only every `CSUM_CHUNK` bytes (before a
/// lane could wrap) and at the end of the walk.
struct Acc<V> {
    v: V,
    /// Bytes added to `v` since it was last reduced: below `CSUM_CHUNK` between calls, always
    /// whole lines.
    bytes: usize,
    /// 64-bit end-around sum of what was reduced.
    sum: u64,
}

impl<V: Checksum> Acc<V> {
    /// # Safety
    /// The backend's features present.
    #[inline(always)]
    unsafe fn new(sum: u64) -> Self {
        Acc {
            // SAFETY: forwarded contract.
            v: unsafe { V::csum_zero() },
            bytes: 0,
            sum,
        }
    }

    /// Counts `n` more bytes (whole lines) added to `v`, reducing when the chunk is full.
    ///
    /// # Safety
    /// The backend's features present; `bytes + n <= CSUM_CHUNK`.
    #[inline(always)]
    unsafe fn added(&mut self, n: usize) {
        self.bytes += n;
        if self.bytes == CSUM_CHUNK {
            // SAFETY: forwarded contract.
            unsafe { self.reduce() };
        }
    }

    /// Folds `v` into `sum` and starts it again.
    ///
    /// # Safety
    /// The backend's features present.
    #[inline(always)]
    unsafe fn reduce(&mut self) {
        // SAFETY: forwarded contract.
        unsafe {
            self.sum = add64(self.sum, V::csum_reduce(self.v));
            self.v = V::csum_zero();
        }
        self.bytes = 0;
    }
}

/// Streams `lines` whole lines from `src` to line-aligned `dst`; with `SUM`, adds every register
/// to `acc` from the register it is streamed from.
///
/// # Safety
/// `src` readable and `dst` writable for `lines * STREAM_LINE` bytes, `dst` line-aligned, the
/// backend's features present; the caller fences.
#[inline(always)]
unsafe fn stream_lines<V: Checksum, const SUM: bool>(
    dst: *mut u8,
    src: *const u8,
    lines: usize,
    acc: &mut Acc<V>,
) {
    let mut off = 0;
    let end = lines * STREAM_LINE;
    // SAFETY: every register lies in `0..end`; `V::BYTES` divides the line, so each streamed
    // address is `V::BYTES`-aligned; `acc` counts at most `CSUM_CHUNK` bytes at a time (the
    // chunk ends where the accumulator is full, a whole number of lines since `CSUM_CHUNK`
    // is).
    unsafe {
        while off < end {
            let chunk_end = if SUM {
                end.min(off + (CSUM_CHUNK - acc.bytes))
            } else {
                end
            };
            let start = off;
            while off < chunk_end {
                let mut i = 0;
                while i < STREAM_LINE {
                    let v = V::load(src.add(off + i));
                    if SUM {
                        acc.v = V::csum_add(acc.v, v);
                    }
                    v.stream(dst.add(off + i));
                    i += V::BYTES;
                }
                off += STREAM_LINE;
            }
            if SUM {
                acc.added(off - start);
            }
        }
    }
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

/// Streams the line at `line` whose word `i` (bytes `8i..8i + 8`, as `u64::from_ne_bytes`) is
/// `word(i)`, built in registers ([`Vector::from_words`]); with `SUM`, adds the line to `acc`.
///
/// # Safety
/// `line` line-aligned and writable for a line; backend features present; `word` reads only
/// what its caller may; the caller fences.
#[inline(always)]
unsafe fn stream_line<V: Checksum, const SUM: bool>(
    line: *mut u8,
    word: impl Fn(usize) -> u64,
    acc: &mut Acc<V>,
) {
    // SAFETY: each register covers `line + j ..+ V::BYTES`, inside the line, `V::BYTES`-aligned;
    // the accumulator holds fewer than `CSUM_CHUNK` bytes, a whole number of lines, so one more
    // line does not overfill it.
    unsafe {
        let mut j = 0;
        while j < STREAM_LINE {
            let first = j / 8;
            let v = V::from_words(|i| word(first + i));
            if SUM {
                acc.v = V::csum_add(acc.v, v);
            }
            v.stream(line.add(j));
            j += V::BYTES;
        }
        if SUM {
            acc.added(STREAM_LINE);
        }
    }
}

/// Streams the line at `line` whose first `n` bytes are `a[..n]` and whose other `L - n` bytes
/// are `b[..L - n]` (`0 < n < L`), built in registers from 8-byte words read inside the two
/// sources; with `SUM`, adds the line to `acc`.
///
/// # Safety
/// `a` readable for `n` bytes, `b` for `STREAM_LINE - n`; `line` line-aligned and writable for a
/// line; backend features present; the caller fences.
#[inline(always)]
unsafe fn stream_joined<V: Checksum, const SUM: bool>(
    line: *mut u8,
    a: *const u8,
    n: usize,
    b: *const u8,
    acc: &mut Acc<V>,
) {
    // Word `i` holds line bytes `8i..8i + 8`: from `a` below `n`, from `b` above.
    let word = |i: usize| -> u64 {
        let at = 8 * i;
        // SAFETY: `a + at ..+ 8` lies in `a..a + n` when `at + 8 <= n`; `b + at - n ..+ 8` in
        // `b..b + STREAM_LINE - n` when `at >= n` (and `at + 8 <= L`); a straddling word reads `n - at`
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
    // SAFETY: forwarded contract.
    unsafe { stream_line::<V, SUM>(line, word, acc) }
}

/// Word `i` of the line image `words`, read with one 8-byte load of what one 8-byte store
/// wrote, which the store queue forwards. Volatile so that the compiler neither merges such
/// loads into one wider load (which the queue cannot forward: it would wait until the stores
/// commit, behind every queued streaming store) nor turns a loop of them into a `memcpy` call.
///
/// # Safety
/// Word `i` of `words` written.
#[inline(always)]
unsafe fn word_at(words: *const u64, i: usize) -> u64 {
    // SAFETY: forwarded contract.
    unsafe { words.add(i).read_volatile() }
}

/// Streams the line at `line` whose first `n` bytes are packed in `words` ([`pack_bytes`]) and
/// whose other `L - n` bytes are `b[..L - n]` (`0 < n < L`). The word the two share is
/// completed in the image from `b`'s first bytes; the line is then built in registers from the
/// image's words ([`word_at`]) and 8-byte words read inside `b`. With `SUM`, adds the line to
/// `acc`.
///
/// # Safety
/// `words` holds `n` packed bytes; `b` readable for `STREAM_LINE - n`; `line` line-aligned and
/// writable for a line; backend features present; the caller fences.
#[inline(always)]
unsafe fn stream_packed<V: Checksum, const SUM: bool>(
    line: *mut u8,
    words: *mut u64,
    n: usize,
    b: *const u8,
    acc: &mut Acc<V>,
) {
    // Words `0..k` from the image (the last completed from `b`), the rest from `b + skip`.
    let k = n.div_ceil(8);
    let skip = 8 * k - n;
    // SAFETY: forwarded contract: `skip < 8 <= STREAM_LINE - n` bytes of `b` complete word
    // `k - 1`; word `i >= k` reads `b + skip + 8 (i - k) ..+ 8`, inside `b..b + L - n` because
    // `skip + 8 (i - k) + 8 <= 8 * 8 - n`.
    unsafe {
        if skip != 0 {
            pack_bytes(words, n, b, skip);
        }
        let b = b.add(skip);
        let word = |i: usize| {
            if i < k {
                word_at(words, i)
            } else {
                b.add(8 * (i - k)).cast::<u64>().read_unaligned()
            }
        };
        stream_line::<V, SUM>(line, word, acc)
    }
}

/// One source segment as the gather reads it: the layout of `struct iovec` (and of
/// `iter::IoVec`, which the cursor hands over as these).
#[repr(C)]
#[derive(Clone, Copy)]
pub(crate) struct Seg {
    pub(crate) base: *const u8,
    pub(crate) len: usize,
}

/// Where a walk over [`Seg`]s stands: segment `idx`, `off` bytes into it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct At {
    pub(crate) idx: usize,
    pub(crate) off: usize,
}

/// The writer's state while it runs, in registers: [`Gather`]'s fields but `words`, which stay
/// in memory (they are read back).
struct Run {
    pos: usize,
    pend_n: usize,
    pend: *const u8,
    sum: u64,
}

impl Run {
    #[inline(always)]
    fn load(w: &Gather) -> Run {
        Run {
            pos: w.pos,
            pend_n: w.pend_n,
            pend: w.pend,
            sum: w.sum,
        }
    }

    #[inline(always)]
    fn store(self, w: &mut Gather) {
        w.pos = self.pos;
        w.pend_n = self.pend_n;
        w.pend = self.pend;
        w.sum = self.sum;
    }
}

/// Appends `src[..len]` to the writer at `dst` whose state is `r` and whose packed words are
/// `words`, summing into `acc`. Whole lines are streamed straight from the source; the bytes of a line the piece
/// does not fill are left pending (in their segment, or packed into `words`) until a later
/// piece completes the line in registers and streams it ([`stream_joined`],
/// [`stream_packed`]), or the gather's end writes them as the destination's last partial line.
/// No ordinary store is made here. With `SUM`, every line streamed is added to `acc` from the
/// registers it is streamed from: each byte is summed once, in the pass that writes it.
///
/// # Safety
/// `src` readable for `len` bytes, and every earlier piece of this gather still readable;
/// `dst + r.pos ..+ len` writable and part of the destination the writer was created for (no
/// other access during the gather), `dst` line-aligned; backend features present; the caller
/// ends the gather ([`Gather::finish_sum`] or [`gather_finish`]) and then fences.
#[inline(always)]
unsafe fn append<V: Checksum, const SUM: bool>(
    r: &mut Run,
    acc: &mut Acc<V>,
    dst: *mut u8,
    words: *mut u64,
    mut src: *const u8,
    mut len: usize,
) {
    const L: usize = STREAM_LINE;
    if len == 0 {
        return;
    }
    // SAFETY: every destination move stays inside `dst .. dst + r.pos + len` (pending bytes sit
    // just below `r.pos`, on a line that starts at a line boundary at or after `dst`); pending
    // bytes are read from their earlier segment or the packed words.
    unsafe {
        if r.pend_n != 0 {
            let need = L - r.pend_n;
            if len < need {
                // Too short to complete the line: packed with the bytes before it.
                if !r.pend.is_null() {
                    pack_bytes(words, 0, r.pend, r.pend_n);
                    r.pend = core::ptr::null();
                }
                pack_bytes(words, r.pend_n, src, len);
                r.pend_n += len;
                r.pos += len;
                return;
            }
            let line = dst.add(r.pos - r.pend_n);
            if r.pend.is_null() {
                stream_packed::<V, SUM>(line, words, r.pend_n, src, acc);
            } else {
                stream_joined::<V, SUM>(line, r.pend, r.pend_n, src, acc);
            }
            r.pend_n = 0;
            r.pos += need;
            src = src.add(need);
            len -= need;
        }
        // `dst + r.pos` is on a line boundary here.
        let lines = len / L;
        stream_lines::<V, SUM>(dst.add(r.pos), src, lines, acc);
        let done = lines * L;
        r.pos += done;
        let rest = len - done;
        if rest != 0 {
            // Kept in the segment for the next piece.
            r.pend = src.add(done);
            r.pend_n = rest;
            r.pos += rest;
        }
    }
}

/// Appends up to `len` bytes of the segments `segs[..nr]`, from `at` on, to `w` (as many as
/// [`Gather::written`] grows by); returns where the walk stopped (the cursor engine's walk: a
/// segment whose end is reached is left, so `at.off` is below its length unless the segments
/// ran out first). The whole walk runs here, with the writer's state in registers: one call per
/// gather, not one per segment. (Two words come back in registers: a third, returned through
/// memory, was copied into the cursor with one 16-byte vector move, which integer-only builds
/// must not contain.)
///
/// # Safety
/// `segs[at.idx..nr]` readable descriptors of readable segments, which stay readable until the
/// gather ends; `at.off` within segment `at.idx` (or `at.idx == nr`); otherwise as [`append`]
/// for the `len` bytes appended, `w.dst` line-aligned.
#[inline(always)]
pub(crate) unsafe fn gather_segs<V: Checksum, const SUM: bool>(
    w: &mut Gather,
    segs: *const Seg,
    nr: usize,
    mut at: At,
    len: usize,
) -> At {
    debug_assert!((w.dst as usize).is_multiple_of(STREAM_LINE) || len == 0);
    let mut r = Run::load(w);
    let (dst, words) = (w.dst, w.words());
    let mut done = 0;
    // SAFETY: the backend's features are present (contract).
    let mut acc = unsafe { Acc::<V>::new(r.sum) };
    // SAFETY: `at.idx < nr` when a descriptor is read; each piece lies inside its segment
    // (`at.off <= len(idx)`), and the walk appends at most `len` bytes (forwarded contract).
    unsafe {
        while done < len && at.idx < nr {
            let seg = *segs.add(at.idx);
            let n = (seg.len - at.off).min(len - done);
            append::<V, SUM>(&mut r, &mut acc, dst, words, seg.base.add(at.off), n);
            done += n;
            at.off += n;
            if at.off == seg.len {
                at.idx += 1;
                at.off = 0;
            }
        }
    }
    if SUM {
        // SAFETY: as above.
        unsafe { acc.reduce() };
        r.sum = acc.sum;
    }
    r.store(w);
    at
}

/// Ends a gather: writes the pending bytes of the destination's last partial line with ordinary
/// stores, then, with `flush`, writes back the lines of `whole` (the whole destination, of which
/// the writer's is the end) written with ordinary stores: its first line if `whole` does not
/// start on a line boundary and its last if it does not end on one (every line where streaming
/// is only a hint). No fence.
///
/// # Safety
/// As [`append`]; `whole` ends where the writer's bytes end and holds them; `flush`
/// supported by this CPU.
#[inline(always)]
pub(crate) unsafe fn gather_finish<V: Vector>(
    w: &mut Gather,
    whole: (*mut u8, usize),
    flush: Option<FlushOp>,
) {
    const L: usize = STREAM_LINE;
    // SAFETY: pending bytes are the destination's last `pend_n` bytes, read from their segment
    // or the packed words; flushes name only lines holding destination bytes.
    unsafe {
        if w.pend_n != 0 {
            let line = w.dst.add(w.pos - w.pend_n);
            if w.pend.is_null() {
                let words = w.words();
                unpack(line, words, w.pend_n);
            } else {
                temporal::<V, Mem>(line, Mem(w.pend), w.pend_n);
            }
            w.pend_n = 0;
        }
        let (start, len) = whole;
        if let Some(op) = flush {
            if V::STREAM_BYPASSES_CACHE {
                if len != 0 {
                    if start as usize & (L - 1) != 0 {
                        arch::flush_range(op, start, 1);
                    }
                    if (start as usize).wrapping_add(len) & (L - 1) != 0 {
                        arch::flush_range(op, start.add(len - 1), 1);
                    }
                }
            } else {
                arch::flush_range(op, start, len);
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
