//! Scatter-gather cursors in the shape of Linux `iov_iter`.
//!
//! A [`Cursor`] walks a list of segments: one buffer (`UBUF`), an array of [`IoVec`]s (`IOVEC`,
//! the layout of `struct iovec`), an array of [`BioVec`]s (`BVEC`: page, offset, length) or, for
//! destinations, a sink that only counts (`DISCARD`). Direction is a type: a [`Source`] reads
//! from shared segments, a [`Dest`] writes into exclusive ones, and copying into a `Source` does
//! not compile:
//!
//! ```compile_fail
//! use cachecopy::iter::{copy_to_iter, Source};
//! use cachecopy::Mode;
//! let buf = [0u8; 4];
//! let mut src = Source::ubuf(&buf);
//! copy_to_iter(b"oops", &mut src, Mode::Temporal); // expected `&mut Dest`, found `&mut Source`
//! ```
//!
//! The operations keep Linux's names: [`copy_from_iter`] (gather into a slice),
//! [`copy_to_iter`] (scatter a slice), [`copy_iter`] (cursor to cursor), [`zero_iter`]
//! (`iov_iter_zero`), the `_full` forms that leave the cursor where it was unless everything
//! fits, and the one-shot [`copy_from_iov`] / [`copy_to_iov`]. The cursor state ones are
//! methods: `advance`, `revert`, `truncate`, `reexpand`, `save_state` / `restore`, `npages`,
//! `alignment`, `gap_alignment`, `is_aligned`.
//!
//! Gather (`sendmsg`: header and payload into one frame, streamed past the cache):
//!
//! ```
//! use cachecopy::iter::{copy_from_iter_full, IoVec, Source};
//! use cachecopy::policy::NonTemporal;
//!
//! let (hdr, payload) = ([0x45u8; 20], vec![7u8; 1480]);
//! let segs = [IoVec::new(&hdr), IoVec::new(&payload)];
//! let mut msg = Source::iovec(&segs);
//! let mut frame = vec![0u8; 1500];
//! copy_from_iter_full(&mut frame, &mut msg, NonTemporal).unwrap();
//! assert_eq!(msg.count(), 0);
//! ```
//!
//! Scatter (`recvmsg`: one received frame into the caller's buffers):
//!
//! ```
//! use cachecopy::iter::{copy_to_iter, Dest, IoVecMut};
//! use cachecopy::Mode;
//!
//! let frame = [1u8; 1500];
//! let (mut head, mut body) = (vec![0u8; 64], vec![0u8; 4096]);
//! let mut bufs = [IoVecMut::new(&mut head), IoVecMut::new(&mut body)];
//! let mut dst = Dest::iovec(&mut bufs);
//! assert_eq!(copy_to_iter(&frame, &mut dst, Mode::Temporal), 1500);
//! assert_eq!(dst.count(), 4160 - 1500);
//! ```
//!
//! # One engine
//! The walk over segments is written once (`Cursor::iterate`, Linux's
//! `iterate_and_advance2`); every operation is a small step that is handed one piece of one
//! segment at a time and returns how many bytes it did *not* process, so a short step ends the
//! walk with the cursor exact. The step is generic over the cache mode, which is chosen once per
//! call (or at compile time with a [`crate::policy`] marker): no branch on the mode per segment,
//! the objection raised against `MSG_NTCOPY`.
//!
//! # Non-temporal gather and scatter
//! A non-temporal gather into one contiguous destination streams every whole destination line,
//! including the lines that straddle source segments (assembled in registers), writes the
//! partial lines at the two ends with ordinary stores, after the streamed lines, and fences once
//! per call. A scatter
//! streams the whole lines inside each destination segment and writes lines shared with another
//! segment, or partially covered, with ordinary stores; again one fence per call. No line is
//! written with both kinds of store in one call. Calls moving fewer than 1 KiB in total use
//! ordinary stores, as [`crate::copy()`] does.
//!
//! # Bad input
//! Advancing past the end, reverting past the start, re-expanding beyond the segments, segments
//! totalling more than `isize::MAX` bytes and restoring a [`State`] saved from a cursor over
//! other segments panic with a message saying so, before anything moves. Empty segments are fine
//! anywhere.
//!
//! # Interop
//! `IoVec::from_io_slices` (Unix, `std`) and `IoVec::from_iovecs` (`libc`, implied by
//! `std`; `unsafe`) view `IoSlice`s and `libc::iovec`s as segments without copying, and so do
//! their `IoVecMut` twins. With `std`, sources implement `std::io::Read` and `BufRead` and
//! destinations `std::io::Write`; with the `bytes` feature, `bytes::Buf` and `BufMut`. These copy
//! in the cursor's own mode ([`Cursor::mode`]).

use core::fmt;
use core::marker::PhantomData;

use crate::mode::Mode;

mod engine;
#[cfg(any(feature = "std", feature = "bytes"))]
mod io;
mod ops;
mod seg;
#[cfg(all(test, feature = "std"))]
mod tests;

pub use ops::{
    copy_from_iov, copy_from_iter, copy_from_iter_full, copy_iter, copy_to_iov, copy_to_iter,
    copy_to_iter_full, zero_iter, Short,
};
pub use seg::{BioVec, BioVecMut, IoVec, IoVecMut};

#[allow(unused_imports)]
pub(crate) use engine::{by_kind, gather, gather_lines, Kind};
#[allow(unused_imports)]
pub(crate) use ops::{
    copy_from_iter_on, copy_from_iter_unfenced, copy_iter_on, copy_iter_unfenced, copy_to_iter_on,
    copy_to_iter_unfenced, full, zero_iter_on, zero_iter_unfenced,
};

use seg::{Bvecs, Iovecs, Table};

mod sealed {
    pub trait Sealed {}
}

/// Which way a cursor moves bytes: [`Reads`] or [`Writes`]. Sealed.
pub trait Direction: sealed::Sealed + 'static {}

/// Marker: the cursor's segments are read ([`Source`]).
#[derive(Debug)]
pub enum Reads {}
/// Marker: the cursor's segments are written ([`Dest`]).
#[derive(Debug)]
pub enum Writes {}
impl sealed::Sealed for Reads {}
impl sealed::Sealed for Writes {}
impl Direction for Reads {}
impl Direction for Writes {}

/// A cursor that reads its segments (Linux `ITER_SOURCE`): what `sendmsg` gathers from.
pub type Source<'a> = Cursor<'a, Reads>;
/// A cursor that writes its segments (Linux `ITER_DEST`): what `recvmsg` scatters into.
pub type Dest<'a> = Cursor<'a, Writes>;

/// The segment list, as raw parts. `Discard` counts as one segment of `total` bytes that no
/// step ever sees.
#[derive(Clone, Copy)]
#[cfg_attr(not(feature = "bytes"), allow(dead_code))]
enum Segs {
    Ubuf(*mut u8, usize),
    Iovec(*const IoVec<'static>),
    Bvec(*const BioVec<'static>),
    /// The bytes are where `bytes::BufMut::chunk_mut` lets callers write what is discarded.
    Discard([u8; 16]),
}

/// A position in a list of segments, with a byte budget (`count`) and a default cache mode.
///
/// Invariants: `(idx, off)` is a position in the segments (`off <= len(idx)`, or `idx == nr`
/// and `off == 0`); `pos` is the number of bytes before it; `count <= total - pos`.
pub struct Cursor<'a, D: Direction> {
    segs: Segs,
    nr: usize,
    idx: usize,
    off: usize,
    count: usize,
    pos: usize,
    total: usize,
    mode: Mode,
    _life: PhantomData<(&'a mut [u8], D)>,
}

// SAFETY: a `Source` is a set of `&[u8]` and a `Dest` a set of `&mut [u8]`; both are `Send` and
// `Sync`, and the cursor's own state is plain data.
unsafe impl<D: Direction> Send for Cursor<'_, D> {}
// SAFETY: as above; `&Cursor` only reads the state and the segment descriptors.
unsafe impl<D: Direction> Sync for Cursor<'_, D> {}

/// A cursor's position, from [`Cursor::save_state`], for [`Cursor::restore`].
///
/// It borrows the segments for `'a`, so it cannot outlive them.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct State<'a> {
    idx: usize,
    off: usize,
    count: usize,
    pos: usize,
    id: (usize, usize, usize, u8),
    _life: PhantomData<&'a [u8]>,
}

impl fmt::Debug for State<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("State")
            .field("pos", &self.pos)
            .field("count", &self.count)
            .finish_non_exhaustive()
    }
}

#[cold]
#[track_caller]
fn too_long() -> ! {
    panic!("cachecopy::iter: the segments total more than isize::MAX bytes")
}

/// Sum of the segment lengths, at most `isize::MAX`.
#[track_caller]
fn total_of<T: Table>(t: T, nr: usize) -> usize {
    let mut total = 0usize;
    for i in 0..nr {
        // SAFETY: `i < nr`.
        let (_, len) = unsafe { t.seg(i) };
        total = match total.checked_add(len) {
            Some(t) if t <= isize::MAX as usize => t,
            _ => too_long(),
        };
    }
    total
}

impl<'a, D: Direction> Cursor<'a, D> {
    #[inline]
    fn with_segs(segs: Segs, nr: usize, total: usize) -> Self {
        Cursor {
            segs,
            nr,
            idx: 0,
            off: 0,
            count: total,
            pos: 0,
            total,
            mode: Mode::Temporal,
            _life: PhantomData,
        }
    }

    #[track_caller]
    fn iovec_raw(ptr: *const IoVec<'static>, nr: usize) -> Self {
        let total = total_of(Iovecs(ptr), nr);
        Self::with_segs(Segs::Iovec(ptr), nr, total)
    }

    #[track_caller]
    fn bvec_raw(ptr: *const BioVec<'static>, nr: usize) -> Self {
        let total = total_of(Bvecs(ptr), nr);
        Self::with_segs(Segs::Bvec(ptr), nr, total)
    }

    /// Bytes left to move (Linux `iov_iter_count`).
    #[inline]
    pub fn count(&self) -> usize {
        self.count
    }

    /// Whether no bytes are left.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The cursor's default cache mode, used with [`crate::policy::CursorDefault`] and by the
    /// `std::io` and `bytes` impls. [`Mode::Temporal`] unless set.
    #[inline]
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// Sets the default cache mode (per socket or queue; each call may still override it).
    #[inline]
    pub fn set_mode(&mut self, mode: Mode) {
        self.mode = mode;
    }

    /// The cursor with default cache mode `mode`.
    #[inline]
    pub fn with_mode(mut self, mode: Mode) -> Self {
        self.mode = mode;
        self
    }

    /// Skips `n` bytes (Linux `iov_iter_advance`).
    ///
    /// # Panics
    /// When `n > self.count()`; the cursor is unchanged then.
    #[inline]
    #[track_caller]
    pub fn advance(&mut self, n: usize) {
        if n > self.count {
            past_end(n, self.count);
        }
        self.iterate(n, |_, _, _| 0);
    }

    /// Steps back `n` bytes (Linux `iov_iter_revert`), growing `count` by `n`.
    ///
    /// # Panics
    /// When `n` exceeds the bytes consumed since the cursor was made; the cursor is unchanged
    /// then.
    #[track_caller]
    pub fn revert(&mut self, n: usize) {
        if n > self.pos {
            past_start(n, self.pos);
        }
        self.pos -= n;
        self.count += n;
        let mut n = n;
        if n <= self.off {
            self.off -= n;
        } else {
            n -= self.off;
            loop {
                // `pos` counts every byte before `(idx, off)`, so the walk stops above segment 0.
                self.idx -= 1;
                let len = self.seg_len(self.idx);
                if n <= len {
                    self.off = len - n;
                    break;
                }
                n -= len;
            }
        }
    }

    /// Limits `count` to at most `n` (Linux `iov_iter_truncate`).
    #[inline]
    pub fn truncate(&mut self, n: usize) {
        self.count = self.count.min(n);
    }

    /// Sets `count` back to `n` after a [`truncate`](Cursor::truncate) (Linux
    /// `iov_iter_reexpand`).
    ///
    /// # Panics
    /// When fewer than `n` bytes remain in the segments after the cursor.
    #[inline]
    #[track_caller]
    pub fn reexpand(&mut self, n: usize) {
        let room = self.total - self.pos;
        if n > room {
            panic!(
                "cachecopy::iter: reexpand to {n} bytes, but only {room} remain in the segments"
            );
        }
        self.count = n;
    }

    /// The position, for [`restore`](Cursor::restore) (Linux `iov_iter_save_state`).
    #[inline]
    pub fn save_state(&self) -> State<'a> {
        State {
            idx: self.idx,
            off: self.off,
            count: self.count,
            pos: self.pos,
            id: self.id(),
            _life: PhantomData,
        }
    }

    /// Goes back (or forward) to a saved position (Linux `iov_iter_restore`). A state saved
    /// from another cursor over the very same segments names the same position and is accepted.
    ///
    /// # Panics
    /// When `state` was saved from a cursor over other segments; the cursor is unchanged then.
    #[inline]
    #[track_caller]
    pub fn restore(&mut self, state: State<'a>) {
        if state.id != self.id() {
            panic!("cachecopy::iter: restore of a State saved from a cursor over other segments");
        }
        self.idx = state.idx;
        self.off = state.off;
        self.count = state.count;
        self.pos = state.pos;
    }

    /// Segments from the current one to the end (Linux `iter->nr_segs`); 0 for a discarding
    /// cursor.
    #[inline]
    pub fn nr_segs(&self) -> usize {
        match self.segs {
            Segs::Discard(_) => 0,
            _ => self.nr - self.idx,
        }
    }

    /// Bytes left in the current segment, at most `count` (Linux `iov_iter_single_seg_count`).
    #[inline]
    pub fn single_seg_count(&self) -> usize {
        if self.idx >= self.nr {
            return 0;
        }
        (self.seg_len(self.idx) - self.off).min(self.count)
    }

    /// Number of base pages ([`page_size`](crate::page::page_size), the OS's) the next `count`
    /// bytes touch, at most `max` (Linux `iov_iter_npages`). 0 for a discarding cursor.
    pub fn npages(&self, max: usize) -> usize {
        if matches!(self.segs, Segs::Discard(_)) {
            return 0;
        }
        let shift = crate::cpu::page::page_shift();
        let mut n = 0usize;
        self.pieces(|base, len| {
            let start = base as usize >> shift;
            let end = (base as usize + len).div_ceil(1 << shift);
            n += end - start;
            n < max
        });
        n.min(max)
    }

    /// OR of the addresses and lengths of the next `count` bytes' pieces: its trailing zero
    /// bits tell the alignment every piece shares (Linux `iov_iter_alignment`). A discarding
    /// cursor reports `count`.
    pub fn alignment(&self) -> usize {
        if matches!(self.segs, Segs::Discard(_)) {
            return self.count;
        }
        let mut res = 0usize;
        self.pieces(|base, len| {
            res |= base as usize | len;
            true
        });
        res
    }

    /// OR of every boundary between consecutive non-empty pieces (the end of one, the start of
    /// the next): zero bits tell how aligned the gaps are, for devices whose segments must
    /// chain on aligned boundaries (Linux `iov_iter_gap_alignment`). 0 for one buffer.
    pub fn gap_alignment(&self) -> usize {
        if matches!(self.segs, Segs::Ubuf(..) | Segs::Discard(_)) {
            return 0;
        }
        let (mut res, mut prev_end) = (0usize, None::<usize>);
        self.pieces(|base, len| {
            if let Some(end) = prev_end {
                res |= base as usize | end;
            }
            prev_end = Some(base as usize + len);
            true
        });
        res
    }

    /// Whether `count` and every piece's start address and length have no bit of `len_mask`
    /// resp. `addr_mask` set (Linux `iov_iter_is_aligned`): e.g. `is_aligned(511, 511)` for
    /// direct I/O on 512-byte sectors.
    pub fn is_aligned(&self, addr_mask: usize, len_mask: usize) -> bool {
        if self.count & len_mask != 0 {
            return false;
        }
        if matches!(self.segs, Segs::Discard(_)) {
            return true;
        }
        let mut ok = true;
        self.pieces(|base, len| {
            ok = base as usize & addr_mask == 0 && len & len_mask == 0;
            ok
        });
        ok
    }

    /// Calls `f(base, len)` for each non-empty piece of the next `count` bytes until it returns
    /// `false`.
    fn pieces(&self, mut f: impl FnMut(*mut u8, usize) -> bool) {
        let mut c = Cursor::<D> { ..*self };
        c.iterate(
            self.count,
            |base, len, _| {
                if len == 0 || f(base, len) {
                    0
                } else {
                    len
                }
            },
        );
    }

    fn id(&self) -> (usize, usize, usize, u8) {
        let (p, k) = match self.segs {
            Segs::Ubuf(p, _) => (p as usize, 0),
            Segs::Iovec(p) => (p as usize, 1),
            Segs::Bvec(p) => (p as usize, 2),
            Segs::Discard(_) => (0, 3),
        };
        (p, self.nr, self.total, k)
    }

    /// Length of segment `i < nr`.
    #[inline(always)]
    fn seg_len(&self, i: usize) -> usize {
        debug_assert!(i < self.nr);
        // SAFETY: `i < nr`, the table's size.
        unsafe {
            match self.segs {
                Segs::Ubuf(_, len) => len,
                Segs::Iovec(p) => Iovecs(p).seg(i).1,
                Segs::Bvec(p) => Bvecs(p).seg(i).1,
                Segs::Discard(_) => self.total,
            }
        }
    }
}

#[cold]
#[track_caller]
fn past_end(n: usize, count: usize) -> ! {
    panic!("cachecopy::iter: advance by {n} bytes past the end (count is {count})")
}

#[cold]
#[track_caller]
fn past_start(n: usize, pos: usize) -> ! {
    panic!("cachecopy::iter: revert by {n} bytes past the start (only {pos} consumed)")
}

impl<'a> Source<'a> {
    /// A cursor over one buffer (Linux `ITER_UBUF`).
    #[inline]
    pub fn ubuf(buf: &'a [u8]) -> Self {
        Self::with_segs(Segs::Ubuf(buf.as_ptr().cast_mut(), buf.len()), 1, buf.len())
    }

    /// A cursor over an array of segments (Linux `ITER_IOVEC`/`ITER_KVEC`).
    ///
    /// # Panics
    /// When the segments total more than `isize::MAX` bytes (possible only with segments that
    /// repeat the same memory).
    #[inline]
    #[track_caller]
    pub fn iovec(segs: &'a [IoVec<'a>]) -> Self {
        Self::iovec_raw(segs.as_ptr().cast(), segs.len())
    }

    /// A cursor over an array of page segments (Linux `ITER_BVEC`).
    ///
    /// # Panics
    /// As [`Source::iovec`].
    #[inline]
    #[track_caller]
    pub fn bvec(segs: &'a [BioVec<'a>]) -> Self {
        Self::bvec_raw(segs.as_ptr().cast(), segs.len())
    }
}

impl Clone for Source<'_> {
    /// An independent cursor at the same position (Linux `dup_iter`); the segments are shared.
    fn clone(&self) -> Self {
        Cursor { ..*self }
    }
}

impl<'a> Dest<'a> {
    /// A cursor over one buffer (Linux `ITER_UBUF`).
    #[inline]
    pub fn ubuf(buf: &'a mut [u8]) -> Self {
        Self::with_segs(Segs::Ubuf(buf.as_mut_ptr(), buf.len()), 1, buf.len())
    }

    /// A cursor over an array of segments (Linux `ITER_IOVEC`/`ITER_KVEC`). The array is
    /// borrowed exclusively: its segments are written through the cursor.
    ///
    /// # Panics
    /// When the segments total more than `isize::MAX` bytes.
    #[inline]
    #[track_caller]
    pub fn iovec<'b: 'a>(segs: &'a mut [IoVecMut<'b>]) -> Self {
        Self::iovec_raw(segs.as_ptr().cast(), segs.len())
    }

    /// A cursor over an array of page segments (Linux `ITER_BVEC`).
    ///
    /// # Panics
    /// As [`Dest::iovec`].
    #[inline]
    #[track_caller]
    pub fn bvec<'b: 'a>(segs: &'a mut [BioVecMut<'b>]) -> Self {
        Self::bvec_raw(segs.as_ptr().cast(), segs.len())
    }

    /// A sink that accepts `count` bytes and stores nothing (Linux `ITER_DISCARD`).
    #[inline]
    pub fn discard(count: usize) -> Self {
        Self::with_segs(Segs::Discard([0; 16]), 1, count)
    }
}

impl<D: Direction> fmt::Debug for Cursor<'_, D> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match self.segs {
            Segs::Ubuf(..) => "ubuf",
            Segs::Iovec(..) => "iovec",
            Segs::Bvec(..) => "bvec",
            Segs::Discard(_) => "discard",
        };
        f.debug_struct("Cursor")
            .field("kind", &kind)
            .field("nr_segs", &self.nr_segs())
            .field("count", &self.count)
            .field("mode", &self.mode)
            .finish_non_exhaustive()
    }
}
