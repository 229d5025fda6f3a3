//! The operations: each is one step handed to the engine, in one loop per store kind.

use core::fmt;

use super::engine::{by_kind, gather, Kind};
use super::{Cursor, Dest, Direction, IoVec, IoVecMut, Segs, Source};
use crate::dispatch::plan::{self, Plan};
use crate::dispatch::table::Kernels;
use crate::mode::Mode;
use crate::mode::Store;
use crate::policy::Select;

/// Returned by the `_full` operations when the cursor holds fewer bytes than asked for. The
/// cursor is where it was and nothing was copied.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Short {
    /// Bytes asked for.
    pub wanted: usize,
    /// Bytes the cursor held.
    pub available: usize,
}

impl fmt::Display for Short {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "cursor holds {} bytes, {} wanted",
            self.available, self.wanted
        )
    }
}

impl core::error::Error for Short {}

/// [`copy_from_iter`] on the kernels `k`, without the closing fence: returns the bytes moved
/// and the store kind whose fence ([`Store::fence`]) the caller owes.
#[inline(always)]
pub(crate) fn copy_from_iter_unfenced<D: Direction>(
    p: &Plan,
    k: &Kernels,
    dst: &mut [u8],
    src: &mut Cursor<'_, D>,
    mode: Mode,
) -> (usize, Store) {
    let len = dst.len().min(src.count);
    let dst = dst.as_mut_ptr();
    let store = mode.resolve(len, &p.copy_below, p.tuning.flush);
    let n = by_kind!(store, |K, op| {
        // SAFETY: `dst` is an exclusive slice of at least `len` bytes, so it overlaps no source
        // segment; `k` comes from dispatch or a checked backend (runs here).
        unsafe { gather::<K, D>(k, op, dst, len, src) }
    });
    (n, store)
}

/// [`copy_from_iter`] on the kernels `k`.
#[inline(always)]
pub(crate) fn copy_from_iter_on<D: Direction>(
    p: &Plan,
    k: &Kernels,
    dst: &mut [u8],
    src: &mut Cursor<'_, D>,
    mode: Mode,
) -> usize {
    let (n, store) = copy_from_iter_unfenced(p, k, dst, src, mode);
    // SAFETY: the store's flush op is the plan's, which runs here.
    unsafe { store.fence() };
    n
}

/// [`copy_to_iter`] on the kernels `k`, without the closing fence (as
/// [`copy_from_iter_unfenced`]).
#[inline(always)]
pub(crate) fn copy_to_iter_unfenced(
    p: &Plan,
    k: &Kernels,
    src: &[u8],
    dst: &mut Dest<'_>,
    mode: Mode,
) -> (usize, Store) {
    let len = src.len().min(dst.count);
    let s = src.as_ptr();
    let store = mode.resolve(len, &p.copy_below, p.tuning.flush);
    let n = by_kind!(store, |K, op| {
        dst.iterate(len, |base, n, done| {
            // SAFETY: `base..base + n` is an exclusive piece of a destination segment (engine),
            // so it does not overlap the shared `src`; `done + n <= len <= src.len()`.
            unsafe { K::copy(k, op, base, s.add(done), n) };
            0
        })
    });
    (n, store)
}

/// [`copy_to_iter`] on the kernels `k`.
#[inline(always)]
pub(crate) fn copy_to_iter_on(
    p: &Plan,
    k: &Kernels,
    src: &[u8],
    dst: &mut Dest<'_>,
    mode: Mode,
) -> usize {
    let (n, store) = copy_to_iter_unfenced(p, k, src, dst, mode);
    // SAFETY: the store's flush op is the plan's, which runs here.
    unsafe { store.fence() };
    n
}

/// [`copy_iter`] on the kernels `k`, without the closing fence (as
/// [`copy_from_iter_unfenced`]).
#[inline(always)]
pub(crate) fn copy_iter_unfenced(
    p: &Plan,
    k: &Kernels,
    dst: &mut Dest<'_>,
    src: &mut Source<'_>,
    len: usize,
    mode: Mode,
) -> (usize, Store) {
    let len = len.min(dst.count).min(src.count);
    if matches!(dst.segs, Segs::Discard(_)) {
        src.advance(len);
        dst.advance(len);
        return (len, Store::Temporal);
    }
    let store = mode.resolve(len, &p.copy_below, p.tuning.flush);
    let n = by_kind!(store, |K, op| {
        // Each destination piece is one contiguous destination: gather into it, so lines that
        // straddle source segments still stream.
        dst.iterate(len, |base, n, _| {
            // SAFETY: `base..base + n` is an exclusive destination piece; `src` has at least
            // `n` bytes left because the walk moves at most `len <= src.count` in total.
            n - unsafe { gather::<K, _>(k, op, base, n, src) }
        })
    });
    (n, store)
}

/// [`copy_iter`] on the kernels `k`.
#[inline(always)]
pub(crate) fn copy_iter_on(
    p: &Plan,
    k: &Kernels,
    dst: &mut Dest<'_>,
    src: &mut Source<'_>,
    len: usize,
    mode: Mode,
) -> usize {
    let (n, store) = copy_iter_unfenced(p, k, dst, src, len, mode);
    // SAFETY: the store's flush op is the plan's, which runs here.
    unsafe { store.fence() };
    n
}

/// [`zero_iter`] on the kernels `k`, without the closing fence (as
/// [`copy_from_iter_unfenced`]).
#[inline(always)]
pub(crate) fn zero_iter_unfenced(
    p: &Plan,
    k: &Kernels,
    dst: &mut Dest<'_>,
    len: usize,
    mode: Mode,
) -> (usize, Store) {
    let len = len.min(dst.count);
    let store = mode.resolve(len, &p.fill_below, p.tuning.flush);
    let n = by_kind!(store, |K, op| {
        dst.iterate(len, |base, n, _| {
            // SAFETY: an exclusive destination piece.
            unsafe { K::fill(k, op, base, 0, n) };
            0
        })
    });
    (n, store)
}

/// [`zero_iter`] on the kernels `k`.
#[inline(always)]
pub(crate) fn zero_iter_on(
    p: &Plan,
    k: &Kernels,
    dst: &mut Dest<'_>,
    len: usize,
    mode: Mode,
) -> usize {
    let (n, store) = zero_iter_unfenced(p, k, dst, len, mode);
    // SAFETY: the store's flush op is the plan's, which runs here.
    unsafe { store.fence() };
    n
}

/// Runs `op` (which moves up to `len` bytes of `it`) only when `it` holds `len` bytes, and
/// reverts it if it still comes up short: the `_full` forms of every operation.
#[inline]
pub(crate) fn full<D: Direction>(
    it: &mut Cursor<'_, D>,
    len: usize,
    op: impl FnOnce(&mut Cursor<'_, D>) -> usize,
) -> Result<(), Short> {
    let available = it.count;
    if available < len {
        return Err(Short {
            wanted: len,
            available,
        });
    }
    let n = op(it);
    if n != len {
        it.revert(n);
        return Err(Short {
            wanted: len,
            available,
        });
    }
    Ok(())
}

/// Gathers `min(dst.len(), src.count())` bytes from `src` into `dst` and advances `src` past
/// them; returns how many (Linux `copy_from_iter`).
///
/// `mode` is a [`Mode`], a [`crate::policy`] marker or
/// [`CursorDefault`](crate::policy::CursorDefault). Non-temporal: see the
/// [module docs](super#non-temporal-gather-and-scatter).
///
/// ```
/// use cachecopy::iter::{copy_from_iter, IoVec, Source};
/// use cachecopy::Mode;
///
/// let (hdr, body) = (*b"HDR:", *b"payload");
/// let segs = [IoVec::new(&hdr), IoVec::new(&body)];
/// let mut src = Source::iovec(&segs);
/// let mut frame = [0u8; 6];
/// assert_eq!(copy_from_iter(&mut frame, &mut src, Mode::NonTemporal), 6);
/// assert_eq!(&frame, b"HDR:pa");
/// assert_eq!(src.count(), 5);
/// ```
#[inline]
pub fn copy_from_iter<M: Select>(dst: &mut [u8], src: &mut Source<'_>, mode: M) -> usize {
    let mode = mode.select(src.mode);
    let p = plan::active();
    copy_from_iter_on(p, &p.kernels, dst, src, mode)
}

/// Scatters `min(src.len(), dst.count())` bytes of `src` into `dst`'s segments and advances
/// `dst` past them; returns how many (Linux `copy_to_iter`).
///
/// ```
/// use cachecopy::iter::{copy_to_iter, Dest, IoVecMut};
/// use cachecopy::policy::Temporal;
///
/// let (mut a, mut b) = ([0u8; 2], [0u8; 8]);
/// let mut segs = [IoVecMut::new(&mut a), IoVecMut::new(&mut b)];
/// let mut dst = Dest::iovec(&mut segs);
/// assert_eq!(copy_to_iter(b"datagram", &mut dst, Temporal), 8);
/// assert_eq!(dst.count(), 2);
/// assert_eq!((&a, &b[..6]), (b"da", &b"tagram"[..]));
/// ```
#[inline]
pub fn copy_to_iter<M: Select>(src: &[u8], dst: &mut Dest<'_>, mode: M) -> usize {
    let mode = mode.select(dst.mode);
    let p = plan::active();
    copy_to_iter_on(p, &p.kernels, src, dst, mode)
}

/// Copies `min(len, dst.count(), src.count())` bytes from cursor to cursor and advances both;
/// returns how many. `CursorDefault` means the destination's default. Each destination segment
/// is gathered into as one contiguous destination, so non-temporal copies stream the lines that
/// straddle source segments too.
///
/// ```
/// use cachecopy::iter::{copy_iter, Dest, IoVec, IoVecMut, Source};
/// use cachecopy::Mode;
///
/// let segs = [IoVec::new(b"ab"), IoVec::new(b"cde")];
/// let (mut x, mut y) = ([0u8; 4], [0u8; 4]);
/// let mut out = [IoVecMut::new(&mut x), IoVecMut::new(&mut y)];
/// let mut dst = Dest::iovec(&mut out);
/// assert_eq!(copy_iter(&mut dst, &mut Source::iovec(&segs), usize::MAX, Mode::Auto), 5);
/// assert_eq!((&x, &y[..1]), (b"abcd", &b"e"[..]));
/// ```
#[inline]
pub fn copy_iter<M: Select>(
    dst: &mut Dest<'_>,
    src: &mut Source<'_>,
    len: usize,
    mode: M,
) -> usize {
    let mode = mode.select(dst.mode);
    let p = plan::active();
    copy_iter_on(p, &p.kernels, dst, src, len, mode)
}

/// Zeroes the next `min(len, dst.count())` bytes of `dst` and advances past them; returns how
/// many (Linux `iov_iter_zero`). Non-temporal zeroing streams whole lines of each segment and
/// fences once; `Auto` compares with the plan's `fill_nt`.
///
/// ```
/// use cachecopy::iter::{zero_iter, Dest};
/// let mut buf = [7u8; 6];
/// let mut dst = Dest::ubuf(&mut buf);
/// dst.advance(2);
/// assert_eq!(zero_iter(&mut dst, 3, cachecopy::Mode::Temporal), 3);
/// assert_eq!(buf, [7, 7, 0, 0, 0, 7]);
/// ```
#[inline]
pub fn zero_iter<M: Select>(dst: &mut Dest<'_>, len: usize, mode: M) -> usize {
    let mode = mode.select(dst.mode);
    let p = plan::active();
    zero_iter_on(p, &p.kernels, dst, len, mode)
}

/// Fills all of `dst` from `src` (Linux `copy_from_iter_full`).
///
/// # Errors
/// [`Short`] when `src` holds fewer than `dst.len()` bytes; then nothing is copied and `src` is
/// where it was.
///
/// ```
/// use cachecopy::iter::{copy_from_iter_full, Source};
/// use cachecopy::Mode;
/// let mut src = Source::ubuf(b"abc");
/// let mut four = [0u8; 4];
/// assert!(copy_from_iter_full(&mut four, &mut src, Mode::Temporal).is_err());
/// assert_eq!(src.count(), 3);
/// ```
#[inline]
pub fn copy_from_iter_full<M: Select>(
    dst: &mut [u8],
    src: &mut Source<'_>,
    mode: M,
) -> Result<(), Short> {
    full(src, dst.len(), |s| copy_from_iter(dst, s, mode))
}

/// Writes all of `src` into `dst` (Linux `copy_to_iter_full`).
///
/// # Errors
/// [`Short`] when `dst` has room for fewer than `src.len()` bytes; then nothing is written and
/// `dst` is where it was.
#[inline]
pub fn copy_to_iter_full<M: Select>(src: &[u8], dst: &mut Dest<'_>, mode: M) -> Result<(), Short> {
    full(dst, src.len(), |d| copy_to_iter(src, d, mode))
}

/// Gathers `iovecs` into `dst` without a cursor; returns the bytes copied (the smaller of
/// `dst.len()` and the segments' total).
///
/// # Panics
/// When the segments total more than `isize::MAX` bytes.
///
/// ```
/// use cachecopy::iter::{copy_from_iov, IoVec};
/// let mut out = [0u8; 8];
/// let n = copy_from_iov(&mut out, &[IoVec::new(b"ab"), IoVec::new(b"cd")], cachecopy::Mode::Auto);
/// assert_eq!(&out[..n], b"abcd");
/// ```
#[inline]
#[track_caller]
pub fn copy_from_iov<M: Select>(dst: &mut [u8], iovecs: &[IoVec<'_>], mode: M) -> usize {
    copy_from_iter(dst, &mut Source::iovec(iovecs), mode)
}

/// Scatters `src` into `iovecs` without a cursor; returns the bytes copied.
///
/// # Panics
/// When the segments total more than `isize::MAX` bytes.
#[inline]
#[track_caller]
pub fn copy_to_iov<M: Select>(src: &[u8], iovecs: &mut [IoVecMut<'_>], mode: M) -> usize {
    copy_to_iter(src, &mut Dest::iovec(iovecs), mode)
}
