//! Checksum-and-copy as steps of the cursor engine (Linux `csum_and_copy_from_iter` /
//! `csum_and_copy_to_iter`): the walk is the cursors' own; each piece is one fused
//! checksum-and-copy whose sum joins the running one at its offset (odd offsets byte-swapped).
//! A streaming gather goes through the cursors' line-once writer (`kernel::gather`), summing
//! as it writes.

use crate::backend::Kernels;
use crate::dispatch;
use crate::iter::{Dest, Source};
use crate::mode::Mode;
use crate::policy::Select;
use crate::thresholds::nt_threshold;

use super::csum::csum_block_add;
use crate::iter::{by_kind, gather_lines, Kind};
use crate::mode::Store;

/// Gathers `min(dst.len(), src.count())` bytes from `src` into `dst`, summing them on the way;
/// advances `src` and returns `(bytes copied, partial sum of dst[..bytes])`.
///
/// `mode` is a [`Mode`] or a [`crate::policy`] marker, as for
/// [`copy_from_iter`](crate::iter::copy_from_iter). A streaming call writes through the same
/// line-once writer as `copy_from_iter`: a line that several segments share is assembled in
/// registers and streamed whole, and each byte is summed in the pass that writes it; it fences
/// once, at the end of the call. A temporal call copies and sums segment by segment, a segment
/// below 512 bytes inline in general-purpose registers.
///
/// ```
/// use cachecopy::iter::{IoVec, Source};
/// use cachecopy::net::{csum_and_copy_from_iter, csum_partial};
/// use cachecopy::Mode;
///
/// let segs = [IoVec::new(b"odd"), IoVec::new(b" offsets")];
/// let mut src = Source::iovec(&segs);
/// let mut frame = [0u8; 11];
/// let (n, sum) = csum_and_copy_from_iter(&mut frame, &mut src, Mode::NonTemporal);
/// assert_eq!((n, &frame), (11, b"odd offsets"));
/// assert_eq!(sum, csum_partial(b"odd offsets", 0));
/// ```
pub fn csum_and_copy_from_iter<M: Select>(
    dst: &mut [u8],
    src: &mut Source<'_>,
    mode: M,
) -> (usize, u32) {
    let mode = mode.select(src.mode());
    // SAFETY: an exclusive slice, so it overlaps no source segment.
    unsafe { csum_and_copy_from_iter_raw(dst.as_mut_ptr(), dst.len(), src, mode) }
}

/// [`csum_and_copy_from_iter`] into raw memory, which may be uninitialized.
///
/// # Safety
/// `d..d + cap` writable, not overlapping any of `src`'s segments, not accessed by anything else
/// during the call.
pub(crate) unsafe fn csum_and_copy_from_iter_raw(
    d: *mut u8,
    cap: usize,
    src: &mut Source<'_>,
    mode: Mode,
) -> (usize, u32) {
    // SAFETY: forwarded contract; the store's flush op is dispatch's.
    unsafe {
        let (n, sum, store) =
            csum_and_copy_from_iter_unfenced(dispatch::active(), d, cap, src, mode);
        store.fence();
        (n, sum)
    }
}

/// [`csum_and_copy_from_iter_raw`] without the closing fence: also returns the store kind whose
/// fence the caller owes. One loop per store kind, no per-segment mode branch.
///
/// # Safety
/// As [`csum_and_copy_from_iter_raw`]; the caller runs the returned store's fence before the
/// bytes are published.
pub(crate) unsafe fn csum_and_copy_from_iter_unfenced(
    k: &Kernels,
    d: *mut u8,
    cap: usize,
    src: &mut Source<'_>,
    mode: Mode,
) -> (usize, u32, Store) {
    let len = cap.min(src.count());
    let store = mode.resolve(len, nt_threshold);
    let mut sum = 0;
    let n = by_kind!(store, |K, op| {
        if K::GATHER {
            // Streaming: through the line writer `copy_from_iter` uses, so a line that small
            // segments share is assembled in registers and streamed whole; each byte is summed
            // in the pass that writes it.
            // SAFETY: forwarded contract (`d..d + cap` writable, `len <= cap`); each piece is
            // readable (engine); `k` and the flush op run on this CPU; the caller fences.
            let (n, s) = unsafe { gather_lines::<_, true>(k, K::flush(op), d, len, src) };
            sum = s;
            n
        } else {
            src.iterate(len, |base, n, done| {
                // SAFETY: `base..base + n` is a readable source piece (engine) and lands at
                // `d + done..d + done + n`, inside `d..d + cap` (caller) since the walk moves
                // at most `len <= cap` bytes; `k` runs on this CPU.
                let s = unsafe { K::csum_copy(k, op, d.add(done), base, n) };
                sum = csum_block_add(sum, s, done);
                0
            })
        }
    });
    (n, sum, store)
}

/// Scatters `min(src.len(), dst.count())` bytes of `src` into `dst`'s segments, summing them on
/// the way; advances `dst` and returns `(bytes copied, partial sum of src[..bytes])`.
///
/// ```
/// use cachecopy::iter::{Dest, IoVecMut};
/// use cachecopy::net::{csum_and_copy_to_iter, csum_partial};
/// use cachecopy::Mode;
///
/// let (mut a, mut b) = ([0u8; 3], [0u8; 16]);
/// let mut segs = [IoVecMut::new(&mut a), IoVecMut::new(&mut b)];
/// let mut dst = Dest::iovec(&mut segs);
/// let (n, sum) = csum_and_copy_to_iter(b"received data", &mut dst, Mode::Temporal);
/// assert_eq!(n, 13);
/// assert_eq!(sum, csum_partial(b"received data", 0));
/// assert_eq!((&a, &b[..10]), (b"rec", &b"eived data"[..]));
/// ```
pub fn csum_and_copy_to_iter<M: Select>(src: &[u8], dst: &mut Dest<'_>, mode: M) -> (usize, u32) {
    let mode = mode.select(dst.mode());
    let (n, sum, store) = csum_and_copy_to_iter_unfenced(dispatch::active(), src, dst, mode);
    // SAFETY: the store's flush op is dispatch's, which runs here.
    unsafe { store.fence() };
    (n, sum)
}

/// [`csum_and_copy_to_iter`] without the closing fence: also returns the store kind whose fence
/// the caller owes.
pub(crate) fn csum_and_copy_to_iter_unfenced(
    k: &Kernels,
    src: &[u8],
    dst: &mut Dest<'_>,
    mode: Mode,
) -> (usize, u32, Store) {
    let len = src.len().min(dst.count());
    let store = mode.resolve(len, nt_threshold);
    let s = src.as_ptr();
    let (mut sum, mut summed) = (0, 0);
    let n = by_kind!(store, |K, op| {
        dst.iterate(len, |base, n, done| {
            // SAFETY: `base..base + n` is an exclusive destination piece (engine), so it does
            // not overlap the shared `src`; `done + n <= len <= src.len()`.
            let part = unsafe { K::csum_copy(k, op, base, s.add(done), n) };
            sum = csum_block_add(sum, part, done);
            summed = done + n;
            0
        })
    });
    // A discarding cursor takes the bytes without a step: sum what it took.
    if summed < n {
        sum = csum_block_add(sum, super::csum_partial(&src[summed..n], 0), summed);
    }
    (n, sum, store)
}
