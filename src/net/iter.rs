//! Checksum-and-copy as steps of the cursor engine (Linux `csum_and_copy_from_iter` /
//! `csum_and_copy_to_iter`): the walk is the cursors' own; each piece is one fused
//! checksum-and-copy whose sum joins the running one at its offset (odd offsets byte-swapped).
//! A streaming gather goes through the cursors' line-once writer (`kernel::gather`), summing
//! as it writes.

use crate::dispatch::plan::{self, Plan};
use crate::dispatch::table::Kernels;
use crate::iter::{Dest, Source};
use crate::mode::Mode;
use crate::policy::Select;

use super::csum::csum_block_add;
use crate::arch;
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
    // SAFETY: forwarded contract; the store's flush op is the plan's.
    unsafe {
        let p = plan::active();
        let (n, sum, store) = csum_and_copy_from_iter_unfenced(p, &p.kernels, d, cap, src, mode);
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
    p: &Plan,
    k: &Kernels,
    d: *mut u8,
    cap: usize,
    src: &mut Source<'_>,
    mode: Mode,
) -> (usize, u32, Store) {
    let len = cap.min(src.count());
    let store = mode.resolve(len, &p.copy_below, p.tuning.flush);
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

/// Builds a transmit frame in `frame`: the payload, `min(frame.len() - head, src.count())`
/// bytes gathered from `src` and summed on the way, at `frame[head..]`, and the header in front
/// of it, which `header(header_bytes, payload_len, payload_sum)` writes once the payload's sum
/// is known (into `head` zeroed bytes; the sum is the payload's partial sum, as
/// [`csum_and_copy_from_iter`] returns it). Returns `(payload bytes, payload partial sum)`;
/// `src` is advanced past the payload.
///
/// Why not [`csum_and_copy_from_iter`] into `frame[head..]` and the header after it: when the
/// header does not end on a cache line, the line it ends in holds payload bytes too, and the
/// gather writes them with ordinary stores in the middle of its streaming. That line was last
/// written a ring ago, so the store waits for its read-for-ownership from memory, and every
/// streaming store of the frame queued behind it waits too (stores commit in order). Here the
/// header's lines are prefetched first, the payload past them is streamed through the
/// line-once writer ([`csum_and_copy_from_iter`]'s), and only then do the header and the
/// payload's first bytes go into those lines with ordinary stores, which find them cached: the
/// fetch has overlapped the streaming. A temporal call gathers the payload in place and the
/// header writes `frame[..head]` directly. `FlushCache` writes the header's lines back too.
///
/// The header's bytes are zeroed with stores that write nothing else, not through the C
/// library's `memset` (an AVX-512 `memset` stores a short span as one 64-byte masked register,
/// which reaches the payload's first line, streamed just before; AMD Zen 4 makes such a store
/// wait for that line to reach memory and fetch it back). `header` itself should do likewise:
/// a header written field by field and then summed by reading it back makes each of those
/// loads wait for every streaming store queued before it, once per frame; build it in
/// registers and sum it from them, as `lab/probes/udp_tx.rs` does (lab/findings/engine.md, "The frame's
/// store stream"). In a [`batch`](crate::batch()) of frames spaced evenly (ring slots), the next
/// frame's header and partial lines are fetched while this one streams.
///
/// # Panics
/// If `head > frame.len()`, before anything is written.
///
/// ```
/// use cachecopy::iter::{IoVec, Source};
/// use cachecopy::net::{csum_add, csum_frame_from_iter, csum_partial};
/// use cachecopy::Mode;
///
/// let segs = [IoVec::new(b"payload, "), IoVec::new(b"in two pieces")];
/// let mut frame = [0u8; 8 + 22];
/// let (n, sum) = csum_frame_from_iter(&mut frame, 8, &mut Source::iovec(&segs), Mode::NonTemporal,
///     |hdr, len, sum| {
///         hdr[..2].copy_from_slice(&(len as u16).to_be_bytes());
///         hdr[2..4].copy_from_slice(&(sum as u16).to_ne_bytes());
///     });
/// assert_eq!(n, 22);
/// assert_eq!(&frame[8..], b"payload, in two pieces");
/// assert_eq!(sum, csum_partial(&frame[8..], 0));
/// assert_eq!(frame[..4], [0, 22, (sum as u16).to_ne_bytes()[0], (sum as u16).to_ne_bytes()[1]]);
/// assert_eq!(frame[4..8], [0; 4]);
/// ```
pub fn csum_frame_from_iter<M: Select>(
    frame: &mut [u8],
    head: usize,
    src: &mut Source<'_>,
    mode: M,
    header: impl FnOnce(&mut [u8], usize, u32),
) -> (usize, u32) {
    check_frame_head(frame.len(), head);
    let mode = mode.select(src.mode());
    // SAFETY: an exclusive slice, so it overlaps no source segment; `head <= frame.len()`
    // (checked); the store's fence runs before returning.
    unsafe {
        let p = plan::active();
        let (n, sum, store) = csum_frame_from_iter_unfenced(
            (p, &p.kernels),
            frame.as_mut_ptr(),
            frame.len(),
            head,
            src,
            mode,
            header,
        );
        store.fence();
        (n, sum)
    }
}

/// [`csum_frame_from_iter`]'s panics.
#[track_caller]
pub(crate) fn check_frame_head(len: usize, head: usize) {
    assert!(
        head <= len,
        "csum_frame_from_iter: header of {head} bytes in a frame of {len}"
    );
}

/// [`csum_frame_from_iter`] into raw memory without the closing fence: also returns the store
/// kind whose fence the caller owes.
///
/// # Safety
/// `d..d + cap` writable, not overlapping any of `src`'s segments, not accessed by anything else
/// during the call; `head <= cap`; the caller runs the returned
/// store's fence before the bytes are published.
pub(crate) unsafe fn csum_frame_from_iter_unfenced(
    (p, k): (&Plan, &Kernels),
    d: *mut u8,
    cap: usize,
    head: usize,
    src: &mut Source<'_>,
    mode: Mode,
    header: impl FnOnce(&mut [u8], usize, u32),
) -> (usize, u32, Store) {
    debug_assert!(head <= cap);
    let len = (cap - head).min(src.count());
    let store = mode.resolve(head + len, &p.copy_below, p.tuning.flush);
    let (n, sum) = by_kind!(store, |K, op| {
        if K::GATHER {
            // SAFETY: the header's lines get ordinary stores, the payload `d + head..d + head +
            // len` the line writer; both inside `d..d + cap` (`head + len <= cap`, forwarded
            // contract). Each piece is readable (engine); `k` and the flush op run on this CPU;
            // the caller fences.
            unsafe {
                // Their fetch overlaps the payload's streaming: the stores at the end find the
                // lines in the cache instead of holding up every store queued behind them. The
                // gather does the same for the payload's own partial lines (the one it shares
                // with the header, written before the header, and the last). The plan says in
                // which order ([`FrameBuild`]).
                match p.tuning.frame {
                    FrameBuild::Plain => arch::prefetch_write(d, head),
                    FrameBuild::HeaderDown => {
                        let (last, before) = header_down(d as usize, head);
                        if let Some(line) = last {
                            arch::prefetch_line(line as *const u8);
                        }
                        arch::prefetch_write(d, before);
                    }
                }
                let (n, sum) = gather_lines::<_, true>(k, K::flush(op), d.add(head), len, src);
                crate::kernel::zero_exact(d, head);
                header(core::slice::from_raw_parts_mut(d, head), n, sum);
                if let Some(f) = K::flush(op) {
                    // The lines holding header bytes, the one it shares with the payload too
                    // (the gather wrote that one back before the header went in).
                    arch::flush_range(f, d, head);
                }
                (n, sum)
            }
        } else {
            // SAFETY: `d + head..d + head + len` lies in `d..d + cap` (forwarded contract).
            let (n, s, _) = unsafe {
                csum_and_copy_from_iter_unfenced(p, k, d.add(head), len, src, Mode::Temporal)
            };
            // SAFETY: `head <= cap` bytes at `d`, writable and ours for the call (contract).
            let h = unsafe {
                crate::kernel::zero_exact(d, head);
                core::slice::from_raw_parts_mut(d, head)
            };
            header(h, n, s);
            (n, s)
        }
    });
    (n, sum, store)
}

/// How [`csum_frame_from_iter`] (and [`Batch::csum_frame_from_iter`](crate::Batch)) asks for
/// the lines of a frame's header before the payload streams: the `frame=` field of
/// `CACHECOPY_TUNE`. The bytes written are the same either way; only the order of the
/// prefetches differs. See `lab/findings/checksums.md` ("Zen 2: where the frame's time goes")
/// for the runs behind each CPU's choice.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum FrameBuild {
    /// The header's lines from the first to the last, then the payload's partial lines.
    Plain,
    /// The header's last line first (the one it shares with the payload), then its others
    /// first to last: a header of one line is fetched as [`FrameBuild::Plain`] fetches it, one
    /// of two lines last to first. Fetched first to last, the two lines start a run of
    /// ascending lines that the payload's streamed lines continue, and on AMD Zen 2 such frames
    /// (a 42-byte header crossing a line boundary: the payload 65 to 105 bytes past one, 66
    /// among them) ran far slower than the others.
    HeaderDown,
}

impl FrameBuild {
    /// Every choice.
    pub(crate) const ALL: [FrameBuild; 2] = [FrameBuild::Plain, FrameBuild::HeaderDown];

    /// `"plain"` or `"header-down"`, as `CACHECOPY_TUNE`'s `frame=` spells them.
    pub fn name(self) -> &'static str {
        match self {
            FrameBuild::Plain => "plain",
            FrameBuild::HeaderDown => "header-down",
        }
    }

    /// The choice with this name (ASCII case ignored).
    pub fn from_name(name: &str) -> Option<FrameBuild> {
        FrameBuild::ALL
            .into_iter()
            .find(|f| f.name().eq_ignore_ascii_case(name))
    }
}

impl core::fmt::Display for FrameBuild {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.name())
    }
}

/// Where [`FrameBuild::HeaderDown`] fetches the lines of the header `start..start + len`:
/// `(the line holding its last byte, if other lines come before it; how many bytes from
/// `start` to fetch after it, first to last)`. One line, or none: `(None, len)`.
#[inline(always)]
fn header_down(start: usize, len: usize) -> (Option<usize>, usize) {
    if len == 0 {
        return (None, 0);
    }
    let last = (start + len - 1) & !(arch::STREAM_LINE - 1);
    if last > start {
        (Some(last), last - start)
    } else {
        (None, len)
    }
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
    let p = plan::active();
    let (n, sum, store) = csum_and_copy_to_iter_unfenced(p, &p.kernels, src, dst, mode);
    // SAFETY: the store's flush op is the plan's, which runs here.
    unsafe { store.fence() };
    (n, sum)
}

/// [`csum_and_copy_to_iter`] without the closing fence: also returns the store kind whose fence
/// the caller owes.
pub(crate) fn csum_and_copy_to_iter_unfenced(
    p: &Plan,
    k: &Kernels,
    src: &[u8],
    dst: &mut Dest<'_>,
    mode: Mode,
) -> (usize, u32, Store) {
    let len = src.len().min(dst.count());
    let store = mode.resolve(len, &p.copy_below, p.tuning.flush);
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

#[cfg(test)]
mod tests {
    use super::{header_down, FrameBuild};
    use crate::arch::STREAM_LINE;
    use std::vec::Vec;

    #[test]
    fn header_down_fetches_each_line_once_the_last_first() {
        // What `prefetch_write` fetches: every line holding a byte of the span, first to last.
        let lines = |start: usize, len: usize| -> Vec<usize> {
            let mut v: Vec<usize> = (start..start + len)
                .map(|b| b & !(STREAM_LINE - 1))
                .collect();
            v.dedup();
            v
        };
        // Every start in three lines and every length to three lines and one byte; under Miri
        // (which interprets each byte of the model and checks no unsafe code here) the starts
        // and lengths at and around each line boundary.
        let edge = |k: usize| [k * STREAM_LINE - 1, k * STREAM_LINE, k * STREAM_LINE + 1];
        let (starts, lens): (Vec<usize>, Vec<usize>) = if cfg!(miri) {
            let near: Vec<usize> = [0, 1].into_iter().chain((1..=3).flat_map(edge)).collect();
            (near[..near.len() - 1].to_vec(), near)
        } else {
            (
                (0..=3 * STREAM_LINE).collect(),
                (0..=3 * STREAM_LINE + 1).collect(),
            )
        };
        for &start in &starts {
            for &len in &lens {
                let (last, before) = header_down(start, len);
                let got: Vec<usize> = last.into_iter().chain(lines(start, before)).collect();
                let mut want = lines(start, len);
                if want.len() > 1 {
                    let l = want.pop().unwrap();
                    want.insert(0, l);
                }
                assert_eq!(got, want, "{len} bytes at {start}");
            }
        }
    }

    #[test]
    fn frame_names_read_back() {
        for f in FrameBuild::ALL {
            assert_eq!(FrameBuild::from_name(f.name()), Some(f));
            assert_eq!(FrameBuild::from_name(&f.name().to_uppercase()), Some(f));
        }
        assert_eq!(FrameBuild::from_name("down"), None);
    }
}
