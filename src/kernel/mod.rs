//! The one copy/fill algorithm, generic over the register ([`Vector`]), the byte source
//! ([`ByteSource`]: memory for copies, a splatted byte for fills) and the store kind (one
//! function per cache mode). Beside it, the two other algorithms written once for every
//! register: the unfenced pieces of the scatter-gather cursors ([`gather`]) and the checksum
//! loop ([`sum`]). `crate::dispatch::table` instantiates all three per register type.
//!
//! Shape, for a register of `W` bytes:
//! - `len < 16`: two overlapping scalar moves (8, 4, 2 or 1 bytes), no byte loop;
//! - `len <= 2W`: two overlapping moves of the widest register that fits (AVX-512: one masked
//!   move below 64 bytes);
//! - `len <= 4W`: four overlapping registers;
//! - larger: the first register unaligned (unless the destination is aligned), a body of `4W`
//!   per iteration with the destination aligned, then the last `4W` bytes as four overlapping
//!   registers.
//!
//! Streaming (non-temporal) copies write the partial lines at either end with ordinary stores and
//! every whole [`STREAM_LINE`] in between with streaming stores, so no line is ever written by both
//! kinds (a line written both ways costs hundreds of nanoseconds per call: lab/findings/performance.md,
//! "The fixed costs of streaming"). Every move stays inside
//! `dst..dst + len` and `src..src + len`: the overlap tricks re-read and re-write bytes of the
//! buffers themselves, never bytes beyond them.

pub(crate) mod gather;
pub(crate) mod moves;
pub(crate) mod small;
pub(crate) mod sum;

use crate::arch::{self, STREAM_LINE};
use crate::cpu::FlushOp;
use crate::vector::{Scalar, Vector};

/// The part of the per-CPU plan the kernels read: from which size a path takes its variant.
/// Every kernel that has such a choice gets the plan's knobs as an argument from the call that
/// reached it (`crate::dispatch::plan`), so a kernel never reads a mutable static and a test can
/// run any knobs by building a plan. `usize::MAX` means never for every size.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(C)]
pub(crate) struct Knobs {
    /// From this many bytes x86 `Temporal` copies use `rep movsb` ([`copy_temporal`]).
    pub(crate) rep_movsb: usize,
    /// From this many bytes x86 `Temporal` fills use `rep stosb` ([`fill_temporal`]).
    pub(crate) fill_rep: usize,
    /// From this many bytes a 256-bit backend's `Temporal` copies run their loop on AVX-512
    /// registers ([`copy_wide`]). Below `usize::MAX` only where the CPU runs AVX-512 F and BW:
    /// the plan's builder refuses any other value, and [`copy_temporal`] relies on it.
    pub(crate) wide_copy: usize,
    /// How many 4 KiB pages of the source a streamed copy reads at once ([`stream_span_paged`]:
    /// 2, 4 or 8; anything else reads them in order).
    pub(crate) pages: usize,
}

impl Knobs {
    /// No variant anywhere: the plain loops, the source read in order.
    pub(crate) const PLAIN: Knobs = Knobs {
        rep_movsb: usize::MAX,
        fill_rep: usize::MAX,
        wide_copy: usize::MAX,
        pages: 1,
    };
}

/// Where the bytes come from: memory (copy) or one repeated byte (fill).
pub(crate) trait ByteSource: Copy {
    /// # Safety
    /// `off..off + V::BYTES` must be inside the source.
    unsafe fn vector<V: Vector>(self, off: usize) -> V;
    /// # Safety
    /// `V::MASKED`, and `off..off + n` inside the source.
    unsafe fn prefix<V: Vector>(self, off: usize, n: usize) -> V;
    /// # Safety
    /// `off..off + T::BYTES` must be inside the source.
    unsafe fn scalar<T: Scalar>(self, off: usize) -> T;
    /// The source advanced by `off` bytes.
    ///
    /// # Safety
    /// `off` is within the source.
    unsafe fn skip(self, off: usize) -> Self;
}

/// Bytes read from memory.
#[derive(Clone, Copy)]
pub(crate) struct Mem(pub(crate) *const u8);

/// One byte, repeated.
#[derive(Clone, Copy)]
pub(crate) struct Splat(pub(crate) u8);

impl ByteSource for Mem {
    #[inline(always)]
    unsafe fn vector<V: Vector>(self, off: usize) -> V {
        // SAFETY: forwarded contract.
        unsafe { V::load(self.0.add(off)) }
    }
    #[inline(always)]
    unsafe fn prefix<V: Vector>(self, off: usize, n: usize) -> V {
        // SAFETY: forwarded contract.
        unsafe { V::load_prefix(self.0.add(off), n) }
    }
    #[inline(always)]
    unsafe fn scalar<T: Scalar>(self, off: usize) -> T {
        // SAFETY: forwarded contract; `read_unaligned` has no alignment requirement.
        unsafe { self.0.add(off).cast::<T>().read_unaligned() }
    }
    #[inline(always)]
    unsafe fn skip(self, off: usize) -> Self {
        // SAFETY: forwarded contract.
        Mem(unsafe { self.0.add(off) })
    }
}

impl ByteSource for Splat {
    #[inline(always)]
    unsafe fn vector<V: Vector>(self, _off: usize) -> V {
        // SAFETY: called only inside the backend's own entry point.
        unsafe { V::splat(self.0) }
    }
    #[inline(always)]
    unsafe fn prefix<V: Vector>(self, _off: usize, _n: usize) -> V {
        // SAFETY: as above.
        unsafe { V::splat(self.0) }
    }
    #[inline(always)]
    unsafe fn scalar<T: Scalar>(self, _off: usize) -> T {
        T::splat(self.0)
    }
    #[inline(always)]
    unsafe fn skip(self, _off: usize) -> Self {
        self
    }
}

/// Stores `T` at `dst + off`, unaligned.
///
/// # Safety
/// `dst + off .. dst + off + T::BYTES` writable.
#[inline(always)]
unsafe fn put<T: Scalar>(dst: *mut u8, off: usize, v: T) {
    // SAFETY: forwarded contract.
    unsafe { dst.add(off).cast::<T>().write_unaligned(v) }
}

/// `T::BYTES <= len <= 2 * T::BYTES`: the first and last `T` of the range.
#[inline(always)]
unsafe fn scalar_pair<T: Scalar, S: ByteSource>(dst: *mut u8, src: S, len: usize) {
    // SAFETY: both moves lie in `0..len` because `T::BYTES <= len`.
    unsafe {
        let (a, b) = (src.scalar::<T>(0), src.scalar::<T>(len - T::BYTES));
        put(dst, 0, a);
        put(dst, len - T::BYTES, b);
    }
}

/// `V::BYTES <= len <= 2 * V::BYTES`: the first and last register of the range.
#[inline(always)]
unsafe fn vector_pair<V: Vector, S: ByteSource>(dst: *mut u8, src: S, len: usize) {
    // SAFETY: both moves lie in `0..len` because `V::BYTES <= len`.
    unsafe {
        let (a, b) = (src.vector::<V>(0), src.vector::<V>(len - V::BYTES));
        a.store(dst);
        b.store(dst.add(len - V::BYTES));
    }
}

/// `len < 16`: overlapping 8/4/2-byte pairs, or one byte.
///
/// # Safety
/// `dst..dst + len` writable, the source readable for `len` bytes.
#[inline(always)]
unsafe fn scalars<S: ByteSource>(dst: *mut u8, src: S, len: usize) {
    // SAFETY: (whole body) each pair is used only when `len` is at least its width.
    unsafe {
        if len >= 8 {
            scalar_pair::<u64, S>(dst, src, len);
        } else if len >= 4 {
            scalar_pair::<u32, S>(dst, src, len);
        } else if len >= 2 {
            scalar_pair::<u16, S>(dst, src, len);
        } else if len == 1 {
            put(dst, 0, src.scalar::<u8>(0));
        }
    }
}

/// `len <= 2 * V::BYTES`.
///
/// # Safety
/// `dst..dst + len` writable, the source readable for `len` bytes, backend supported.
#[inline(always)]
unsafe fn small<V: Vector, S: ByteSource>(dst: *mut u8, src: S, len: usize) {
    // SAFETY: (whole body) every branch only moves bytes in `0..len`.
    unsafe {
        if len >= V::BYTES {
            vector_pair::<V, S>(dst, src, len);
        } else if V::MASKED {
            if len != 0 {
                src.prefix::<V>(0, len).store_prefix(dst, len);
            }
        } else if V::BYTES <= 16 {
            scalars::<S>(dst, src, len);
        } else {
            small::<V::Half, S>(dst, src, len);
        }
    }
}

/// `len <= 4 * H::BYTES` on the half-width register `H` of a 64-byte kernel ([`temporal`]'s
/// classes up to two 64-byte registers): a pair up to two registers, four up to four, every
/// register loaded before the first store. The two stores of each adjacent pair are kept apart
/// by a compiler fence (no instruction): in a function compiled for AVX-512, LLVM merges two
/// adjacent 32-byte stores into one 64-byte store, which made the four `ymm` two `zmm` again.
///
/// # Safety
/// `dst..dst + len` writable, the source readable for `len` bytes, `len <= 4 * H::BYTES`, the
/// backend's features present.
#[inline(always)]
unsafe fn half<H: Vector, S: ByteSource>(dst: *mut u8, src: S, len: usize) {
    let w = H::BYTES;
    debug_assert!(len <= 4 * w);
    // SAFETY: (whole body) the pair lies in `0..len` (`small`); the four registers 0, w,
    // len-2w, len-w lie in `0..len` since `2w < len <= 4w`.
    unsafe {
        if len <= 2 * w {
            return small::<H, S>(dst, src, len);
        }
        let a = src.vector::<H>(0);
        let b = src.vector::<H>(w);
        let c = src.vector::<H>(len - 2 * w);
        let d = src.vector::<H>(len - w);
        a.store(dst);
        core::sync::atomic::compiler_fence(core::sync::atomic::Ordering::SeqCst);
        b.store(dst.add(w));
        c.store(dst.add(len - 2 * w));
        core::sync::atomic::compiler_fence(core::sync::atomic::Ordering::SeqCst);
        d.store(dst.add(len - w));
    }
}

/// Any length, ordinary (temporal) stores.
///
/// # Safety
/// `dst..dst + len` writable and not overlapping the source; the source readable for `len` bytes;
/// the backend's features present.
#[inline(always)]
pub(crate) unsafe fn temporal<V: Vector, S: ByteSource>(dst: *mut u8, src: S, len: usize) {
    let w = V::BYTES;
    // SAFETY: (whole body) each move is inside `0..len`, as argued per branch.
    unsafe {
        // A tree, not a chain: the first compare splits at four registers, so every class up
        // to eight registers is two compares away (as in glibc's `memmove`).
        if len <= 4 * w {
            if len <= 2 * w {
                // A 64-byte register (AVX-512) runs the classes up to two of its width on its
                // 32-byte half: four `ymm` at 65-128 bytes, two at 33-64, as glibc's `evex`
                // `memmove` and `memset` do on Intel's AVX-512 servers (`Prefer_No_AVX512`).
                // The pair of `zmm` lost to glibc's four `ymm` at these sizes where four `zmm`
                // beat its eight `ymm` above them, so the wide register keeps the classes from
                // four registers up (lab/findings/small-calls.md, "64-byte registers"). A masked engine
                // keeps its one masked store below 64 bytes (its own choice, `Edges::Masked`).
                if w == 64 && !(V::MASKED && len < w) {
                    return half::<V::Half, S>(dst, src, len);
                }
                small::<V, S>(dst, src, len);
                return;
            }
            // Four registers: 0, w, len-2w, len-w; all inside since 2w < len.
            let a = src.vector::<V>(0);
            let b = src.vector::<V>(w);
            let c = src.vector::<V>(len - 2 * w);
            let d = src.vector::<V>(len - w);
            a.store(dst);
            b.store(dst.add(w));
            c.store(dst.add(len - 2 * w));
            d.store(dst.add(len - w));
        } else if len <= 8 * w {
            // Eight registers, four from each end (they overlap unless `len == 8w`); no loop.
            let v: [V; 8] = [
                src.vector::<V>(0),
                src.vector::<V>(w),
                src.vector::<V>(2 * w),
                src.vector::<V>(3 * w),
                src.vector::<V>(len - 4 * w),
                src.vector::<V>(len - 3 * w),
                src.vector::<V>(len - 2 * w),
                src.vector::<V>(len - w),
            ];
            // Stored in address order, as glibc does: interleaving the two ends (0, len-4w,
            // w, ...) was slower at a misaligned destination (lab/findings/small-calls.md), where
            // consecutive stores into one line can no longer be combined on their way to L1.
            for (i, r) in v[..4].iter().enumerate() {
                r.store(dst.add(i * w));
            }
            for (i, r) in v[4..].iter().enumerate() {
                r.store(dst.add(len - (4 - i) * w));
            }
        } else {
            // The first register unaligned, unless the destination is aligned; then from the
            // first aligned address, 4w per iteration while a whole block fits before the last
            // 4w bytes; then those 4w bytes. Into an aligned destination the first register is
            // the loop's first store, so it is not stored twice: glibc's `memmove` starts its
            // loop one register in whatever the alignment (a store more than this), and its
            // `memset` stores four unaligned registers first, which was slower than this shape
            // at an odd destination (lab/findings/small-calls.md).
            let first = src.vector::<V>(0);
            let last = len - 4 * w;
            let mis = dst as usize & (w - 1);
            let mut off = if mis == 0 { 0 } else { w - mis };
            while off < last {
                let a = src.vector::<V>(off);
                let b = src.vector::<V>(off + w);
                let c = src.vector::<V>(off + 2 * w);
                let d = src.vector::<V>(off + 3 * w);
                a.store_aligned(dst.add(off));
                b.store_aligned(dst.add(off + w));
                c.store_aligned(dst.add(off + 2 * w));
                d.store_aligned(dst.add(off + 3 * w));
                off += 4 * w;
            }
            // `off >= last` now, so `last..len` covers what the loop left.
            let a = src.vector::<V>(last);
            let b = src.vector::<V>(last + w);
            let c = src.vector::<V>(last + 2 * w);
            let d = src.vector::<V>(last + 3 * w);
            if mis != 0 {
                first.store(dst);
            }
            a.store(dst.add(last));
            b.store(dst.add(last + w));
            c.store(dst.add(last + 2 * w));
            d.store(dst.add(last + 3 * w));
        }
    }
}

/// Below this many bytes a streaming copy is done with ordinary stores: a streamed store plus the
/// fence costs more than a short copy, and streaming lost to cached stores below about 1 KiB
/// even for a cold destination on the machines measured (lab/findings/performance.md, "The fixed costs
/// of streaming"; `benches/copy.rs`). It is at least two lines so that every streamed copy has a
/// body.
pub(crate) const STREAM_MIN: usize = 1024;
const _: () = assert!(STREAM_MIN >= 2 * STREAM_LINE);

/// Asks for the partial lines at the two ends of `dst..dst + len` (those the streamed span
/// writes with ordinary stores) to be fetched now, so that their read-for-ownership overlaps the
/// streaming of the lines between instead of holding up every store queued behind the ordinary
/// ones (stores commit in order).
#[inline(always)]
pub(crate) fn prefetch_ends(dst: *mut u8, len: usize) {
    let (start, end) = (dst as usize, (dst as usize).wrapping_add(len));
    // SAFETY: a prefetch is a hint that never faults and writes nothing.
    unsafe {
        if start & (STREAM_LINE - 1) != 0 {
            arch::prefetch_line(dst);
        }
        if end & (STREAM_LINE - 1) != 0 && len != 0 {
            arch::prefetch_line(dst.wrapping_add(len - 1));
        }
    }
}

/// Streams the whole lines of `dst..dst + len` and writes the partial lines at both ends with
/// ordinary stores. Returns `(head, body_end)`: the streamed bytes are `head..body_end`. No fence.
///
/// The partial lines are prefetched first and written last ([`prefetch_ends`]): an ordinary
/// store into a line that is not cached waits for its read-for-ownership, and every later store
/// waits behind it, the streaming ones included (lab/findings/engine.md, "The frame's store stream").
///
/// # Safety
/// As [`temporal`], and `len >= 2 * STREAM_LINE`. The caller fences before returning.
#[inline(always)]
pub(crate) unsafe fn stream_span<V: Vector, S: ByteSource>(
    dst: *mut u8,
    src: S,
    len: usize,
) -> (usize, usize) {
    // SAFETY: forwarded contract.
    unsafe { stream_span_paged::<V, S>(dst, src, len, 1) }
}

/// The bytes one step of [`stream_span_paged`] reads from each source page.
const PAGE_STEP: usize = 4096;

/// [`stream_span`] reading the source `pages` 4 KiB pages at a time (1, 2, 4 or 8; anything
/// else counts as 1): the body goes in groups of `pages * 4 KiB`, each group a line from every
/// page in turn, so that the memory reads that many streams at once (glibc's `large_memcpy_4x`
/// does the same). Lines left after the last whole group go in order. Which CPUs take it is a
/// rule per CPU (`pages=` in the tuning line, lab/findings/performance.md, "Reading pages at once").
///
/// Every destination line is still written once and every source byte read once; only the
/// order differs, so the source and destination must not overlap (a copy's contract).
///
/// # Safety
/// As [`stream_span`].
#[inline(always)]
pub(crate) unsafe fn stream_span_paged<V: Vector, S: ByteSource>(
    dst: *mut u8,
    src: S,
    len: usize,
    pages: usize,
) -> (usize, usize) {
    let head = (dst as usize).wrapping_neg() & (STREAM_LINE - 1);
    let body_end = head + ((len - head) & !(STREAM_LINE - 1));
    prefetch_ends(dst, len);
    // Streams the line at `off` (line-aligned in `dst`).
    let line = |off: usize| {
        let mut i = 0;
        while i < STREAM_LINE {
            // SAFETY: `off + STREAM_LINE <= body_end <= len` (below); `dst + off` is
            // line-aligned and `V::BYTES` divides the line, so every register is aligned.
            unsafe { src.vector::<V>(off + i).stream(dst.add(off + i)) };
            i += V::BYTES;
        }
    };
    // Whole groups of `P` pages from `off`, a line of each page in turn; returns where they end.
    #[inline(always)]
    fn groups<const P: usize>(mut off: usize, body_end: usize, line: impl Fn(usize)) -> usize {
        while body_end - off >= P * PAGE_STEP {
            let mut o = 0;
            while o < PAGE_STEP {
                for p in 0..P {
                    line(off + p * PAGE_STEP + o);
                }
                o += STREAM_LINE;
            }
            off += P * PAGE_STEP;
        }
        off
    }
    let mut off = match pages {
        2 => groups::<2>(head, body_end, line),
        4 => groups::<4>(head, body_end, line),
        8 => groups::<8>(head, body_end, line),
        _ => head,
    };
    while off < body_end {
        line(off);
        off += STREAM_LINE;
    }
    // SAFETY: `head < STREAM_LINE <= len` and `body_end <= len`.
    unsafe {
        temporal::<V, S>(dst, src, head);
        temporal::<V, S>(dst.add(body_end), src.skip(body_end), len - body_end);
    }
    (head, body_end)
}

/// Streaming stores for whole lines, then the store fence.
///
/// # Safety
/// As [`temporal`].
#[inline(always)]
pub(crate) unsafe fn nontemporal<V: Vector, S: ByteSource>(dst: *mut u8, src: S, len: usize) {
    // SAFETY: forwarded contract; the fence follows every streamed store.
    unsafe {
        if len < STREAM_MIN {
            temporal::<V, S>(dst, src, len);
        } else {
            stream_span::<V, S>(dst, src, len);
            arch::stream_fence();
        }
    }
}

/// A `NonTemporal` copy: as [`nontemporal`], the source read `knobs.pages` pages at a time
/// ([`stream_span_paged`]).
///
/// # Safety
/// As [`temporal`], and the ranges do not overlap.
#[inline(always)]
pub(crate) unsafe fn copy_nontemporal<V: Vector>(
    dst: *mut u8,
    src: *const u8,
    len: usize,
    knobs: &Knobs,
) {
    // SAFETY: forwarded contract; the fence follows every streamed store.
    unsafe {
        if len < STREAM_MIN {
            temporal::<V, Mem>(dst, Mem(src), len);
        } else {
            stream_span_paged::<V, Mem>(dst, Mem(src), len, knobs.pages);
            arch::stream_fence();
        }
    }
}

/// Leaves every destination byte written back to memory: streamed body, then the flush
/// instruction on the lines written with ordinary stores (on all lines where streaming is only a
/// hint), then the completion fence.
///
/// # Safety
/// As [`temporal`], and `op` supported by this CPU.
#[inline(always)]
pub(crate) unsafe fn flush_cache<V: Vector, S: ByteSource>(
    dst: *mut u8,
    src: S,
    len: usize,
    op: FlushOp,
) {
    // SAFETY: forwarded contract; the fence follows every streamed store and write-back.
    unsafe {
        flush_unfenced::<V, S>(dst, src, len, op);
        arch::flush_fence(op);
    }
}

/// [`flush_cache`] without the closing fence, for callers that copy many pieces and fence once.
///
/// # Safety
/// As [`flush_cache`]; the caller runs `arch::flush_fence(op)` before returning to safe code.
#[inline(always)]
pub(crate) unsafe fn flush_unfenced<V: Vector, S: ByteSource>(
    dst: *mut u8,
    src: S,
    len: usize,
    op: FlushOp,
) {
    // SAFETY: forwarded contract; flushing only names lines that hold destination bytes.
    unsafe {
        if len < STREAM_MIN {
            temporal::<V, S>(dst, src, len);
            arch::flush_range(op, dst, len);
        } else {
            let (head, body_end) = stream_span::<V, S>(dst, src, len);
            if V::STREAM_BYPASSES_CACHE {
                arch::flush_range(op, dst, head);
                arch::flush_range(op, dst.add(body_end), len - body_end);
            } else {
                arch::flush_range(op, dst, len);
            }
        }
    }
}

/// Fills of at most this many bytes are done inline by [`fill_inline`] when the mode allows it,
/// without the dispatch call, which costs about as much as the stores themselves. Not 64: four
/// 16-byte stores (the widest without target features) lost to the two 32-byte AVX2 stores
/// behind dispatch into a cold destination, where each store waits in the store buffer for its
/// line (lab/findings/performance.md, "Inline small fills").
pub(crate) const INLINE_FILL: usize = 32;

/// Sets `len <= INLINE_FILL` bytes with overlapping 16/8/4/2/1-byte stores from both ends, in
/// portable code (no target features, so it can be inlined into any caller; 16-byte stores are
/// SSE2 `movups` on x86_64 and `str q` on aarch64). Under `cachecopy_integer_only` the 16-byte
/// `u128` (a vector register on hard-float targets) gives way to the `Generic` backend's word
/// algorithm (`arch::Word`).
///
/// # Safety
/// `dst..dst + len` writable, `len <= INLINE_FILL`.
#[inline(always)]
pub(crate) unsafe fn fill_inline(dst: *mut u8, byte: u8, len: usize) {
    debug_assert!(len <= INLINE_FILL);
    // SAFETY: a 16-byte pair only when `16 <= len <= 32`; below, the scalar ladder; the word
    // algorithm has `temporal`'s contract, which the caller's covers (`Word` needs no feature).
    unsafe {
        if cfg!(cachecopy_integer_only) {
            temporal::<arch::Word, Splat>(dst, Splat(byte), len);
        } else if len >= 16 {
            scalar_pair::<u128, Splat>(dst, Splat(byte), len);
        } else {
            scalars::<Splat>(dst, Splat(byte), len);
        }
    }
}

/// Zeroes `dst..dst + len` with ordinary stores that touch no byte outside it (overlapping
/// 16/8/4/2/1-byte stores up to [`INLINE_FILL`], the word backend's algorithm above), never
/// through the C library's `memset`, which `slice::fill` calls for a length it cannot see: an
/// AVX-512 `memset` writes a short span with one 64-byte masked store, whose register reaches
/// the line after the span. Behind a frame's header that is the line the payload just streamed
/// into, and on AMD Zen 4 such a store waits for that line to reach memory and fetches it back
/// (lab/findings/engine.md, "The frame's store stream").
///
/// # Safety
/// `dst..dst + len` writable.
#[inline]
pub(crate) unsafe fn zero_exact(dst: *mut u8, len: usize) {
    // SAFETY: forwarded contract; both algorithms keep every store inside `0..len`.
    unsafe {
        if len <= INLINE_FILL {
            fill_inline(dst, 0, len);
        } else {
            temporal::<arch::Word, Splat>(dst, Splat(0), len);
        }
    }
}

/// Copies of at most this many bytes within a cursor walk are done inline by [`copy_inline`],
/// without the indirect call into the backend, which costs as much as the copy itself at a
/// 16-byte segment (the cursor's per-segment overhead over a hand loop of `copy_from_slice`).
pub(crate) const INLINE_COPY: usize = 32;

/// Copies `len <= INLINE_COPY` bytes with overlapping 16/8/4/2/1-byte moves from both ends, in
/// portable code ([`fill_inline`]'s shape, with a memory source).
///
/// # Safety
/// `src..src + len` readable, `dst..dst + len` writable, not overlapping; `len <= INLINE_COPY`.
#[inline(always)]
pub(crate) unsafe fn copy_inline(dst: *mut u8, src: *const u8, len: usize) {
    debug_assert!(len <= INLINE_COPY);
    // SAFETY: as `fill_inline`, with `src` readable for the same ranges.
    unsafe {
        if cfg!(cachecopy_integer_only) {
            temporal::<arch::Word, Mem>(dst, Mem(src), len);
        } else if len >= 16 {
            scalar_pair::<u128, Mem>(dst, Mem(src), len);
        } else {
            scalars::<Mem>(dst, Mem(src), len);
        }
    }
}

/// A `Temporal` copy: [`temporal`], except on x86_64 in the loop class (past eight registers):
/// - from `knobs.rep_movsb` bytes (set on Intel CPUs with ERMS, never elsewhere):
///   one ordinary 64-byte store, then `rep movsb` from the first line boundary of the
///   destination. Large string moves write whole lines without first reading them for
///   ownership; the vector loop pays that read for every line not in cache. A destination a few
///   lines ahead of the source modulo 4 KiB keeps the vector loop: the string move's loads would
///   alias its own recent stores ([`aliases_4k`]).
/// - on a 256-bit backend, from `knobs.wide_copy` bytes (set on AMD Zen 4, never elsewhere):
///   the loop on AVX-512 registers ([`copy_wide`]).
///
/// Both are variants a plan selects (`SIZED`): without them (`SIZED == false`, the instance a
/// plan whose knobs say never for both runs) no threshold is read at all.
///
/// Returns `dst`, so that the table's entry, which returns it as C's `memcpy` does, ends in a
/// jump to [`copy_wide`] rather than a call that must keep `dst` across it.
///
/// # Safety
/// As [`temporal`], and `knobs.wide_copy` below `usize::MAX` only where the CPU runs AVX-512 F
/// and BW ([`Knobs::wide_copy`]).
#[inline(always)]
// Builds without vector registers compile the AVX-512 branch out, leaving one `if` in another.
#[cfg_attr(
    any(cachecopy_integer_only, not(target_feature = "sse2")),
    allow(clippy::collapsible_if)
)]
pub(crate) unsafe fn copy_temporal<V: Vector, const SIZED: bool>(
    dst: *mut u8,
    src: *const u8,
    len: usize,
    knobs: &Knobs,
) -> *mut u8 {
    // The knobs are x86_64's only (the string move, the AVX-512 loop).
    #[cfg(not(target_arch = "x86_64"))]
    let _ = knobs;
    // SAFETY: (whole body) every move is inside `dst..dst + len` and `src..src + len`.
    unsafe {
        // Up to four registers first, so that the ladder splits there before anything else (one
        // compare to the two- and four-register classes, one more to the eight-register class);
        // the string move and the AVX-512 loop are for the loop class only (glibc clamps its
        // string move's threshold the same way), so no shorter copy pays their compares.
        if len <= 4 * V::BYTES {
            temporal::<V, Mem>(dst, Mem(src), len);
            return dst;
        }
        #[cfg(target_arch = "x86_64")]
        if SIZED && len > 8 * V::BYTES {
            if len >= 64 && len >= knobs.rep_movsb && !aliases_4k(dst, src) {
                // `head < 64 <= len`: the 64-byte move covers it, then the string move runs
                // from the aligned destination address to the end.
                let head = (dst as usize).wrapping_neg() & 63;
                if head != 0 {
                    temporal::<V, Mem>(dst, Mem(src), 64);
                }
                arch::rep_movsb(dst.add(head), src.add(head), len - head);
                return dst;
            }
            #[cfg(all(target_feature = "sse2", not(cachecopy_integer_only)))]
            if V::BYTES == 32 && len >= knobs.wide_copy {
                // Below `usize::MAX` only where the CPU runs AVX-512 F and BW (the contract).
                return copy_wide(dst, src, len);
            }
        }
        temporal::<V, Mem>(dst, Mem(src), len);
        dst
    }
}

/// A `Temporal` copy on AVX-512 registers, for a 256-bit backend's copies from
/// [`Knobs::wide_copy`] bytes: one 64-byte store per line of the loop where
/// the 256-bit loop makes two, so twice the lines are in flight in the store queue. Into a
/// destination that is not cached each of them waits for its line, and on AMD Zen 4 the 256-bit
/// loop fell behind glibc's 512-bit one from about the L2's size (lab/findings/performance.md,
/// "Large copies on 512-bit registers").
///
/// # Safety
/// As [`temporal`], and the CPU runs AVX-512 F and BW.
#[cfg(all(
    target_arch = "x86_64",
    target_feature = "sse2",
    not(cachecopy_integer_only)
))]
#[inline(never)]
#[target_feature(enable = "avx512f,avx512bw")]
unsafe extern "C" fn copy_wide(dst: *mut u8, src: *const u8, len: usize) -> *mut u8 {
    // SAFETY: forwarded contract; the target features are the caller's to guarantee.
    unsafe { temporal::<crate::vector::Overlap<arch::Avx512>, Mem>(dst, Mem(src), len) };
    dst
}

/// Whether a forward string move from `src` to `dst` would have its loads falsely depend on its
/// own recent stores (4K aliasing): when the destination is a little ahead of the source modulo
/// 4 KiB, a load from `src + i` matches, in its low 12 address bits, a store to `dst + j` issued
/// shortly before (`j < i`). Equal offsets (a distance that is a multiple of 4 KiB, as between
/// two page-aligned buffers) do not alias: each load's match is its own iteration's later store.
/// glibc checks the same distance.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn aliases_4k(dst: *mut u8, src: *const u8) -> bool {
    let ahead = (dst as usize).wrapping_sub(src as usize) & 4095;
    ahead != 0 && ahead < 256
}

/// A `Temporal` fill: [`temporal`] with a splatted byte, except where the ISA has a faster way to
/// write many whole lines with ordinary stores (the string store only in the `SIZED` instance,
/// the one a plan with a `fill_rep` threshold selects):
/// - x86_64, from `knobs.fill_rep` bytes (the plan's `fill_rep`):
///   `rep stosb`, after one ordinary 64-byte store that lets it start on a line boundary. Large
///   string stores skip the read-for-ownership of lines they overwrite whole.
/// - aarch64, zeroing at least `max(256, 2 * block)` bytes where `DCZID_EL0` permits `dc zva`:
///   the ordinary head up to a block boundary, `dc zva` per whole block (it zeroes a block
///   without reading it), the ordinary tail. glibc's and Linux's arm64 `memset` do the same.
///
/// # Safety
/// As [`temporal`].
#[inline(always)]
pub(crate) unsafe fn fill_temporal<V: Vector, const SIZED: bool>(
    dst: *mut u8,
    byte: u8,
    len: usize,
    knobs: &Knobs,
) {
    // The knob is x86_64's only (the string store).
    #[cfg(not(target_arch = "x86_64"))]
    let _ = knobs;
    // SAFETY: (whole body) every store is inside `dst..dst + len`, as argued per branch.
    unsafe {
        // As in `copy_temporal`: the short classes first, the string store for the loop class.
        if len <= 4 * V::BYTES {
            return temporal::<V, Splat>(dst, Splat(byte), len);
        }
        #[cfg(target_arch = "x86_64")]
        if SIZED && len > 8 * V::BYTES && len >= 64 && len >= knobs.fill_rep {
            // `head < 64 <= len`: the 64-byte store covers it, then the string store runs from
            // the aligned address to the end.
            let head = (dst as usize).wrapping_neg() & 63;
            if head != 0 {
                temporal::<V, Splat>(dst, Splat(byte), 64);
            }
            arch::rep_stosb(dst.add(head), byte, len - head);
            return;
        }
        #[cfg(target_arch = "aarch64")]
        if byte == 0 && len >= 256 {
            let block = arch::zva_block();
            if block != 0 && len >= 2 * block {
                // `head < block`, so `len - head > block` and the body holds at least one block;
                // `head + body <= len`.
                let head = (dst as usize).wrapping_neg() & (block - 1);
                let body = (len - head) & !(block - 1);
                // Opaque, or the compiler turns these constant-zero loops into `memset` calls,
                // which under the preload land in its own `memset` (preload/check_calls.py).
                let zero = Splat(core::hint::black_box(0));
                temporal::<V, Splat>(dst, zero, head);
                arch::zero_blocks(dst.add(head), body, block);
                temporal::<V, Splat>(dst.add(head + body), zero, len - head - body);
                return;
            }
        }
        temporal::<V, Splat>(dst, Splat(byte), len)
    }
}

#[cfg(test)]
mod tests {
    /// `zero_exact` zeroes every length a header has (and far beyond) at every offset within a
    /// line, and not a byte either side.
    #[test]
    fn zero_exact_writes_exactly_its_bytes() {
        let lens = if cfg!(miri) { 0..80 } else { 0..300 };
        for len in lens {
            for off in [0usize, 1, 7, 22, 63] {
                let mut buf = [0xeeu8; 300 + 64 + 2];
                // SAFETY: `off + 1 + len <= buf.len()`.
                unsafe { super::zero_exact(buf.as_mut_ptr().add(off + 1), len) };
                let (before, rest) = buf.split_at(off + 1);
                let (span, after) = rest.split_at(len);
                assert!(span.iter().all(|&b| b == 0), "{len} at {off}");
                assert!(
                    before.iter().chain(after).all(|&b| b == 0xee),
                    "{len} at {off}"
                );
            }
        }
    }
}
