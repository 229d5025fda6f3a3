//! Moves within one buffer, whose source and destination may overlap, with a cache policy:
//! [`copy_within`] (safe, shaped like [`slice::copy_within`]), [`move_raw`] (`memmove`) and
//! [`move_raw_unfenced`] (for callers that fence once after many).
//!
//! Network buffers slide their live bytes down when they reclaim a consumed front, storage
//! engines compact pages and log segments in place, allocators grow by sliding: `memmove` and
//! `ptr::copy` have no cache policy, and glibc's `memmove` streams only when the ranges do not
//! overlap. Here every [`Mode`] works on overlapping ranges too:
//! - `Temporal`: moves up to four baseline registers (64 B on SSE2 and NEON) are done at the
//!   call site with the copy's inline classes (`kernel::small`), every mode but `FlushCache`;
//!   past them one tail jump into the backend's move kernel, as copies do. Small moves load
//!   every register before storing any; larger ones walk forward
//!   when the destination is below the source and backward when it is above, with the registers
//!   the walk would overwrite before reading loaded first (glibc's shape). Disjoint ranges run
//!   the copy itself.
//! - `NonTemporal`: whole destination lines streamed, walking in the direction that never
//!   overwrites a source byte not yet read, the partial lines at the ends with ordinary stores
//!   (never one line both ways), then the store fence; below 1 KiB a `Temporal` move.
//! - `FlushCache`: as `NonTemporal`, and every destination line written back before return.
//! - `Auto`: `NonTemporal` when both the length and the distance between source and
//!   destination reach the plan's `nt` (the copy's threshold), else `Temporal`. In
//!   a nearer move every destination line was read as source moments before and is still in
//!   cache: a streaming store there saves no read and costs an invalidation (glibc streams a
//!   `memmove` only when the ranges do not overlap, for this reason). Disjoint ranges resolve
//!   as the copy does, on the length alone.
//!
//! `lab/findings/moves.md` has the design and the measurements.

use core::ops::{Bound, RangeBounds};

use crate::copy::{detected, flush_inline_published, Via};
use crate::dispatch::engine::Engine;
use crate::dispatch::plan::{self, Plan};
use crate::dispatch::supported::Unsupported;
use crate::dispatch::table::Kernels;
use crate::kernel::small;
use crate::mode::{Mode, Store};

/// # Safety
/// [`move_raw`]'s contract, and `k` runs on this CPU (and `Store::Flush`'s op).
#[inline(always)]
pub(crate) unsafe fn move_on(k: &Kernels, dst: *mut u8, src: *const u8, len: usize, store: Store) {
    // SAFETY: forwarded contract.
    unsafe {
        match store {
            Store::Temporal => {
                (k.moves.temporal)(dst, src, len, &k.knobs);
            }
            Store::NonTemporal => (k.moves.nontemporal)(dst, src, len, &k.knobs),
            Store::Flush(op) => (k.moves.flush)(dst, src, len, op),
        }
    }
}

/// The unfenced form of [`move_on`]; returns whether a fence is owed.
///
/// # Safety
/// As [`move_on`]; when it returns `true` the caller runs `store.fence()` on this thread before
/// the bytes are read by anyone else or the destination is handed to safe code.
#[inline(always)]
pub(crate) unsafe fn move_unfenced_on(
    k: &Kernels,
    dst: *mut u8,
    src: *const u8,
    len: usize,
    store: Store,
) -> bool {
    // SAFETY: forwarded contract.
    unsafe {
        match store {
            Store::Temporal => {
                (k.moves.temporal)(dst, src, len, &k.knobs);
                false
            }
            Store::NonTemporal => (k.moves.stream)(dst, src, len, &k.knobs),
            Store::Flush(op) => {
                (k.moves.flush_unfenced)(dst, src, len, op);
                true
            }
        }
    }
}

/// `src` as `(start, count)` inside a buffer of `len` bytes, with `dest + count <= len`; panics
/// as [`slice::copy_within`] does (same conditions, in the same order), naming `name`.
#[inline]
#[track_caller]
pub(crate) fn checked_range(
    name: &str,
    src: impl RangeBounds<usize>,
    dest: usize,
    len: usize,
) -> (usize, usize) {
    let start = match src.start_bound() {
        Bound::Included(&s) => s,
        Bound::Excluded(&s) => s
            .checked_add(1)
            .unwrap_or_else(|| bad_range(name, "source range starts after usize::MAX", 0, 0)),
        Bound::Unbounded => 0,
    };
    let end = match src.end_bound() {
        Bound::Included(&e) => e
            .checked_add(1)
            .unwrap_or_else(|| bad_range(name, "source range ends after usize::MAX", 0, 0)),
        Bound::Excluded(&e) => e,
        Bound::Unbounded => len,
    };
    if start > end {
        bad_range(name, "source range starts after its end", start, end);
    }
    if end > len {
        bad_range(name, "source range ends past the buffer", end, len);
    }
    let count = end - start;
    if dest > len - count {
        bad_dest(name, dest, count, len);
    }
    (start, count)
}

#[cold]
#[track_caller]
fn bad_range(name: &str, what: &str, a: usize, b: usize) -> ! {
    if a == 0 && b == 0 {
        panic!("cachecopy::{name}: {what}")
    }
    panic!("cachecopy::{name}: {what} ({a} > {b})")
}

#[cold]
#[track_caller]
fn bad_dest(name: &str, dest: usize, count: usize, len: usize) -> ! {
    panic!(
        "cachecopy::{name}: dest is out of bounds ({dest} + {count} bytes past a buffer of {len})"
    )
}

/// Moves the bytes of `buf[src]` to `buf[dest..]` (the ranges may overlap) with the cache policy
/// `mode`, on the active [`Backend`](crate::tune::Backend): [`slice::copy_within`] with a mode.
///
/// # Panics
/// Under the same conditions as [`slice::copy_within`], with a message naming the bound: the
/// source range starts after its end, ends past the buffer (or a bound overflows `usize`), or
/// `dest + src.len()` is past the buffer. Nothing is written then.
///
/// ```
/// use cachecopy::{copy_within, Mode};
///
/// // A receive buffer reclaims its consumed front: the live bytes slide down.
/// let mut rx = *b"consumed:live bytes";
/// copy_within(&mut rx, 9.., 0, Mode::Temporal);
/// assert_eq!(&rx[..10], b"live bytes");
///
/// // A slide by one page that the CPU will not read soon: streamed past the cache.
/// let mut log = vec![0u8; 16 << 10];
/// log[4096..].fill(7);
/// copy_within(&mut log, 4096.., 0, Mode::NonTemporal);
/// assert_eq!(log[..12 << 10], [7u8; 12 << 10]);
/// ```
#[inline(always)]
#[track_caller]
pub fn copy_within(buf: &mut [u8], src: impl RangeBounds<usize>, dest: usize, mode: Mode) {
    let (start, count) = checked_range("copy_within", src, dest, buf.len());
    let p = buf.as_mut_ptr();
    // SAFETY: `start + count <= len` and `dest + count <= len` (checked above), both inside the
    // live, exclusively borrowed buffer; the move allows overlap.
    unsafe { move_raw(p.add(dest), p.add(start), count, mode) }
}

impl Plan {
    /// [`copy_within`] on this plan instead of the published one.
    ///
    /// # Panics
    /// As [`copy_within`].
    #[inline]
    #[track_caller]
    pub fn copy_within(
        &self,
        buf: &mut [u8],
        src: impl RangeBounds<usize>,
        dest: usize,
        mode: Mode,
    ) {
        let (start, count) = checked_range("Plan::copy_within", src, dest, buf.len());
        let p = buf.as_mut_ptr();
        // SAFETY: as `copy_within`; the plan's kernels run on this CPU.
        unsafe { move_in(Via::Plan(self), p.add(dest), p.add(start), count, mode) };
    }
}

/// [`copy_within`] with exactly `engine` (to test or compare engines: see
/// [`Engine::supported`]); `Backend`s convert with `.into()`.
///
/// # Errors
/// [`Unsupported`] when this CPU cannot run one of `engine`'s backends; nothing is written then.
///
/// # Panics
/// As [`copy_within`] (the range is checked first).
///
/// ```
/// use cachecopy::Mode;
/// use cachecopy::tune::Backend;
/// use cachecopy::raw::copy_within_with_engine;
/// let mut buf = *b"abcdef";
/// copy_within_with_engine(Backend::Generic.into(), &mut buf, ..4, 2, Mode::NonTemporal).unwrap();
/// assert_eq!(&buf, b"ababcd");
/// ```
#[inline]
#[track_caller]
pub fn copy_within_with_engine(
    engine: Engine,
    buf: &mut [u8],
    src: impl RangeBounds<usize>,
    dest: usize,
    mode: Mode,
) -> Result<(), Unsupported> {
    let (start, count) = checked_range("copy_within_with_engine", src, dest, buf.len());
    let k = engine.kernels(plan::active())?;
    let plan = plan::active();
    let p = buf.as_mut_ptr();
    // SAFETY: as `copy_within`; `k` runs on this CPU.
    unsafe {
        let (d, s) = (p.add(dest), p.add(start));
        let store = mode.resolve_move(d, s, count, &plan.copy_below, plan.tuning.flush);
        move_on(k, d, s, count, store)
    };
    Ok(())
}

/// Moves `len` bytes from `src` to `dst` with the cache policy `mode`; the ranges may overlap
/// (`memmove`, `ptr::copy`). On return `dst..dst + len` holds what `src..src + len` held before
/// the call.
///
/// # Safety
/// - `src` must be valid for reads and `dst` valid for writes of `len` bytes, each within one
///   allocated object (so `len <= isize::MAX`); the two ranges **may** overlap;
/// - no other thread may access `dst..dst + len` or `src..src + len` during the call;
/// - when `len == 0` nothing is accessed and any pointers, even null or dangling, are allowed.
///
/// Alignment is never required.
///
/// ```
/// let mut buf = *b"0123456789";
/// let p = buf.as_mut_ptr();
/// // SAFETY: both ranges inside `buf`; overlap is allowed.
/// unsafe { cachecopy::move_raw(p.add(2), p, 8, cachecopy::Mode::Auto) };
/// assert_eq!(&buf, b"0101234567");
/// ```
#[inline(always)]
pub unsafe fn move_raw(dst: *mut u8, src: *const u8, len: usize, mode: Mode) {
    // SAFETY: forwarded contract.
    unsafe { memmove_raw(dst, src, len, mode) };
}

/// [`move_raw`], returning `dst` as C's `memmove` and `memcpy` do: for C-shaped callers (the
/// preload library's exported functions, a C library's). The kernels past the inline classes
/// return the destination themselves, so such a caller's call can end in a jump into the
/// kernel, with nothing held across a call to return.
///
/// # Safety
/// [`move_raw`]'s contract.
///
/// ```
/// let mut buf = *b"0123456789";
/// let p = buf.as_mut_ptr();
/// // SAFETY: both ranges inside `buf`; overlap is allowed.
/// let r = unsafe { cachecopy::raw::memmove_raw(p.add(2), p, 8, cachecopy::Mode::Auto) };
/// assert_eq!((r, &buf), (p.wrapping_add(2), b"0101234567"));
/// ```
#[inline(always)]
pub unsafe fn memmove_raw(dst: *mut u8, src: *const u8, len: usize, mode: Mode) -> *mut u8 {
    // SAFETY: forwarded contract.
    unsafe { move_in(Via::Published, dst, src, len, mode) }
}

/// [`memmove_raw`] on the plan `via` names.
///
/// # Safety
/// [`move_raw`]'s contract.
#[inline(always)]
pub(crate) unsafe fn move_in(
    via: Via<'_>,
    dst: *mut u8,
    src: *const u8,
    len: usize,
    mode: Mode,
) -> *mut u8 {
    if len <= small::MAX {
        // SAFETY: forwarded contract. Below `STREAM_MIN` every mode is ordinary stores, which
        // the inline classes are, and each loads before it stores (`kernel::small::move_`);
        // FlushCache then writes the lines back.
        unsafe {
            small::move_(dst, src, len);
            if mode == Mode::FlushCache {
                via.flush_inline(dst, len, true);
            }
        }
        return dst;
    }
    // SAFETY: forwarded contract.
    unsafe { move_via_table(via.hot(), dst, src, len, mode) }
}

/// [`move_raw`] past the inline classes, as `copy_via_table` is for copies: a move that stores
/// temporally whatever the distance (`Temporal`, or any mode below its bound in the plan `p`)
/// calls the backend's move kernel (`extern "C"`: it cannot unwind, so
/// callers need no landing pad) from the call site, with one load and one compare for the mode
/// (none for a constant `Temporal`); the rest, and the first call, go on to [`move_table`].
/// Nothing here panics on valid input.
///
/// # Safety
/// [`move_raw`]'s contract.
#[inline(always)]
unsafe fn move_via_table(
    p: &Plan,
    dst: *mut u8,
    src: *const u8,
    len: usize,
    mode: Mode,
) -> *mut u8 {
    // SAFETY: forwarded contract; the plan's temporal entry runs on this CPU (before detection
    // the bootstrap plan's, which detects first).
    unsafe {
        if mode.stores_temporally(len, &p.copy_below) {
            return (p.kernels.moves.temporal)(dst, src, len, &p.kernels.knobs);
        }
        move_table(dst, src, len, mode, p)
    }
}

/// [`move_raw`] past its bound in a mode that may stream (from 1 KiB for `NonTemporal`, from
/// the threshold for `Auto`, always for `FlushCache`), detecting the CPU on first use:
/// [`Mode::resolve_move`] decides, with `Auto` on the distance too. `extern "C"` so that it
/// cannot unwind and callers need no landing pad (`Mode` crosses it between Rust functions of
/// one build only, so its layout is the same on both sides).
///
/// # Safety
/// [`move_raw`]'s contract.
#[inline(never)]
#[allow(improper_ctypes_definitions)]
unsafe extern "C" fn move_table(
    dst: *mut u8,
    src: *const u8,
    len: usize,
    mode: Mode,
    p: &Plan,
) -> *mut u8 {
    let p = detected(p);
    let store = mode.resolve_move(dst, src, len, &p.copy_below, p.tuning.flush);
    // SAFETY: forwarded contract; the plan's kernels run on this CPU. `len == 0` touches no
    // memory.
    unsafe { move_on(&p.kernels, dst, src, len, store) };
    dst
}

/// [`move_raw`] without the closing fence, for callers that move many buffers and fence once
/// with [`fence`](crate::fence); the fence obligation is exactly
/// [`copy_raw_unfenced`](crate::raw::copy_raw_unfenced)'s. Inside a [`batch`](crate::batch()),
/// [`Batch::copy_within`](crate::Batch::copy_within) does this with the fence proven by the
/// borrow checker.
///
/// # Safety
/// [`move_raw`]'s contract, and until this thread calls [`fence`](crate::fence): another thread
/// or a device may observe any mix of old and new destination bytes, even after a `Release`
/// store or a lock release by this thread (atomics and locks do **not** order streaming stores,
/// rust-lang/rust#114582), and a `FlushCache` destination is not yet guaranteed to be in memory.
/// So call [`fence`](crate::fence) on the **same thread** after the last unfenced store and
/// before the bytes are published in any way. This thread itself reads its own stores in
/// program order.
///
/// ```
/// let mut ring = vec![0u8; 16 << 10];
/// ring[..4096].fill(9);
/// let p = ring.as_mut_ptr();
/// // SAFETY: both ranges inside `ring`; nobody else sees it before the fence.
/// unsafe { cachecopy::raw::move_raw_unfenced(p.add(4096), p, 8 << 10, cachecopy::Mode::NonTemporal) };
/// cachecopy::fence();
/// assert_eq!(ring[4096..8192], [9u8; 4096]);
/// ```
#[inline(always)]
pub unsafe fn move_raw_unfenced(dst: *mut u8, src: *const u8, len: usize, mode: Mode) {
    if len <= small::MAX {
        // SAFETY: forwarded contract; ordinary stores owe no fence, FlushCache's write-backs
        // are the caller's to fence.
        unsafe {
            small::move_(dst, src, len);
            if mode == Mode::FlushCache {
                flush_inline_published(dst, len, false);
            }
        }
        return;
    }
    let p = plan::current();
    // SAFETY: forwarded contract; the plan's temporal entry runs on this CPU (before detection
    // the bootstrap plan's, which detects first); ordinary stores owe no fence, the caller
    // fences the rest.
    unsafe {
        if mode.stores_temporally(len, &p.copy_below) {
            (p.kernels.moves.temporal)(dst, src, len, &p.kernels.knobs);
            return;
        }
        move_unfenced_table(dst, src, len, mode, p)
    }
}

/// [`move_raw_unfenced`] past its bound, as [`move_table`].
///
/// # Safety
/// [`move_raw_unfenced`]'s contract.
#[inline(never)]
#[allow(improper_ctypes_definitions)]
unsafe extern "C" fn move_unfenced_table(
    dst: *mut u8,
    src: *const u8,
    len: usize,
    mode: Mode,
    p: &Plan,
) {
    let p = detected(p);
    let store = mode.resolve_move(dst, src, len, &p.copy_below, p.tuning.flush);
    // SAFETY: forwarded contract; the caller fences (see `move_raw_unfenced`).
    unsafe { move_unfenced_on(&p.kernels, dst, src, len, store) };
}

#[cfg(all(test, feature = "std"))]
mod tests;
