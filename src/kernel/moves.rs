//! Moves: copies whose source and destination may overlap (`memmove`), in every store kind,
//! written once over [`Vector`] like the copy beside it.
//!
//! Which way the bytes may go depends on how the ranges lie ([`Lie`]):
//! - **disjoint** (the distance is at least the length, or nothing moves), past eight registers:
//!   the copy kernels themselves, untouched;
//! - **the same range**: nothing to move (a `FlushCache` move still writes the range back);
//! - **at most eight registers**, whatever the lie: [`temporal`]'s small shapes, which load every
//!   register before storing any, so no overlap can break them (LLVM libc and glibc move small
//!   sizes the same way), and which the copy runs at these sizes too; checked first, so these
//!   sizes pay no test of the lie. `kernel::small` runs the shapes up to four baseline registers
//!   at the call site, so the table's move kernel is reached only past them (65 B on SSE2 and
//!   NEON);
//! - **larger, destination below the source** ([`Lie::Down`]): forward. A store to destination
//!   offset `o` overwrites source offset `o - d` (`d` the distance), which the forward walk has
//!   already read; only the source's last `4W` bytes can be overwritten before they are read, so
//!   they are loaded first (with the first register, whose store would overwrite bytes the loop
//!   still reads) and stored last: glibc's `memmove` shape;
//! - **larger, destination above the source** ([`Lie::Up`]): the mirror, backward, with the
//!   source's first `4W` bytes and last register loaded first.
//!
//! Streaming moves keep the copy's rule, whole destination lines streamed and the partial lines at
//! both ends written with ordinary stores (never one line both ways), and walk in the direction
//! that never overwrites a source byte not yet read: forward (head partial line, lines ascending,
//! registers ascending within a line, tail partial line) when the destination is below the source,
//! backward (tail, lines descending, registers descending, head) when it is above. Each register
//! is loaded before the store that could overwrite it, whatever the distance, even one byte: in
//! the forward walk a store to `o..o + W` overwrites source offsets `o - d..o + W - d`, below every
//! offset still to be read, and backward the mirror holds. No streamed line is read again by the
//! move, so none is brought back into the cache.

use super::STREAM_MIN;
use super::{copy_temporal, stream_span_paged, temporal, Knobs, Mem};
use crate::arch::{self, STREAM_LINE};
use crate::cpu::FlushOp;
use crate::vector::Vector;

/// How a destination lies against its source.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Lie {
    /// No byte in common (or `len == 0`): a copy.
    Disjoint,
    /// The same range: nothing moves.
    Same,
    /// Overlapping, the destination below the source: walk forward.
    Down,
    /// Overlapping, the destination above the source: walk backward.
    Up,
}

#[inline(always)]
fn lie(dst: *mut u8, src: *const u8, len: usize) -> Lie {
    let below = (src as usize).wrapping_sub(dst as usize);
    let above = (dst as usize).wrapping_sub(src as usize);
    if below >= len && above >= len {
        Lie::Disjoint
    } else if below == 0 {
        Lie::Same
    } else if (dst as usize) < (src as usize) {
        Lie::Down
    } else {
        Lie::Up
    }
}

/// A `Temporal` move of any length, any overlap.
///
/// Disjoint ranges past eight registers go to [`copy_temporal`] with `knobs`.
///
/// # Safety
/// `src..src + len` readable and `dst..dst + len` writable (they may overlap); the backend's
/// features present; `knobs` as [`copy_temporal`] requires.
#[inline(always)]
pub(crate) unsafe fn move_temporal<V: Vector, const SIZED: bool>(
    dst: *mut u8,
    src: *const u8,
    len: usize,
    knobs: &Knobs,
) {
    // SAFETY: (whole body) forwarded contract; each branch is argued at its function.
    unsafe {
        // Every shape of `temporal` up to eight registers loads all of them before the first
        // store (tests/moves.rs runs every distance over these sizes), and it is what the copy
        // runs there too: no need to ask how the ranges lie (glibc's `memmove` does not either).
        if len <= 8 * V::BYTES {
            return temporal::<V, Mem>(dst, Mem(src), len);
        }
        match lie(dst, src, len) {
            Lie::Disjoint => {
                copy_temporal::<V, SIZED>(dst, src, len, knobs);
            }
            Lie::Same => {}
            Lie::Down => forward::<V>(dst, src, len),
            Lie::Up => backward::<V>(dst, src, len),
        }
    }
}

/// `len > 8W`, `dst < src`: the first register and the last four loaded up front, a body of
/// `4W` per iteration to aligned destination addresses walking up, then the five stored (four
/// when the destination is aligned: the loop stored the first).
///
/// # Safety
/// As [`move_temporal`], `len > 8 * V::BYTES`.
#[inline(always)]
unsafe fn forward<V: Vector>(dst: *mut u8, src: *const u8, len: usize) {
    let w = V::BYTES;
    // SAFETY: every load and store lies in `0..len` (`last = len - 4w > 4w`, the loop stores
    // below `last + 4w = len`). An iteration loads its block before storing it and its stores
    // overwrite source bytes below the block's end, all read already; the bytes the loop may
    // overwrite before reading them (the last `4w` and, through the first store, the first `w`)
    // were loaded first.
    unsafe {
        let first = V::load(src);
        let last = len - 4 * w;
        let tail = load4::<V>(src, last);
        // From the destination itself when it is aligned (the first register is then the
        // loop's first store, not stored twice), else from the first aligned offset past it.
        let mis = dst as usize & (w - 1);
        let mut off = if mis == 0 { 0 } else { w - mis };
        while off < last {
            store4::<true, V>(load4(src, off), dst, off);
            off += 4 * w;
        }
        store4::<false, V>(tail, dst, last);
        if mis != 0 {
            first.store(dst);
        }
    }
}

/// `len > 8W`, `dst > src`: [`forward`]'s mirror. The first four registers and the last one
/// loaded up front, a body of `4W` per iteration walking down from the last aligned destination
/// address, then the five stored.
///
/// # Safety
/// As [`move_temporal`], `len > 8 * V::BYTES`.
#[inline(always)]
unsafe fn backward<V: Vector>(dst: *mut u8, src: *const u8, len: usize) {
    let w = V::BYTES;
    // SAFETY: every move lies in `0..len`: `end` starts in `len - w + 1..=len` and the loop runs
    // only while a whole block fits above offset 0. An iteration loads its block before storing
    // it and its stores overwrite source bytes above the block's start, all read already; the
    // bytes it may overwrite before reading them (the first `4w`, and through the tail store the
    // last `w`) were loaded first. The head covers `0..4w` (the loop stops at `end <= 4w`), the
    // tail `len - w..len` (above the first `end`).
    unsafe {
        let head = load4::<V>(src, 0);
        let tail = V::load(src.add(len - w));
        // As `forward`: when the destination's end is aligned the loop's first block ends
        // there, and the last register is not stored twice.
        let mis = (dst as usize).wrapping_add(len) & (w - 1);
        let mut end = len - mis;
        while end > 4 * w {
            end -= 4 * w;
            store4::<true, V>(load4(src, end), dst, end);
        }
        if mis != 0 {
            tail.store(dst.add(len - w));
        }
        store4::<false, V>(head, dst, 0);
    }
}

/// Four consecutive registers at `src + off`, loaded in address order.
///
/// # Safety
/// `src + off..src + off + 4 * V::BYTES` readable; the backend's features present.
#[inline(always)]
unsafe fn load4<V: Vector>(src: *const u8, off: usize) -> [V; 4] {
    let w = V::BYTES;
    // SAFETY: the four loads lie in the readable range (caller).
    unsafe {
        [
            V::load(src.add(off)),
            V::load(src.add(off + w)),
            V::load(src.add(off + 2 * w)),
            V::load(src.add(off + 3 * w)),
        ]
    }
}

/// Stores `v` at `dst + off..dst + off + 4 * V::BYTES` in address order, with aligned stores
/// when `ALIGNED`.
///
/// # Safety
/// That range writable, `dst + off` aligned to `V::BYTES` when `ALIGNED`; the backend's
/// features present.
#[inline(always)]
unsafe fn store4<const ALIGNED: bool, V: Vector>(v: [V; 4], dst: *mut u8, off: usize) {
    for (i, r) in v.into_iter().enumerate() {
        // SAFETY: register `i` lies in the writable range (caller), aligned when `dst + off` is
        // since `V::BYTES` is the alignment.
        unsafe {
            let p = dst.add(off + i * V::BYTES);
            if ALIGNED {
                r.store_aligned(p)
            } else {
                r.store(p)
            }
        }
    }
}

/// The streamed move of overlapping ranges, `len >= 2 * STREAM_LINE`: the partial lines with
/// ordinary stores, the whole lines streamed, walking in `lie`'s direction. Returns the streamed
/// span `(head, body_end)`, as [`stream_span`](super::stream_span). No fence.
///
/// # Safety
/// As [`move_temporal`], `lie` is `Down` or `Up` for these ranges, `len >= 2 * STREAM_LINE`; the
/// caller fences.
#[inline(always)]
unsafe fn stream_move<V: Vector>(
    dst: *mut u8,
    src: *const u8,
    len: usize,
    lie: Lie,
) -> (usize, usize) {
    let w = V::BYTES;
    let head = (dst as usize).wrapping_neg() & (STREAM_LINE - 1);
    let body_end = head + ((len - head) & !(STREAM_LINE - 1));
    // SAFETY: `head < STREAM_LINE <= len`, `body_end <= len`; every streamed register is
    // `w`-aligned since `dst + head` is line-aligned and `w` divides the line. Order, as the
    // module documentation argues: forward, each store overwrites source bytes below every one
    // still to be read; backward, above. The partial-line moves are themselves overlap-safe.
    unsafe {
        if lie == Lie::Down {
            move_temporal::<V, false>(dst, src, head, &Knobs::PLAIN);
            let mut off = head;
            while off < body_end {
                let mut i = 0;
                while i < STREAM_LINE {
                    V::load(src.add(off + i)).stream(dst.add(off + i));
                    i += w;
                }
                off += STREAM_LINE;
            }
            move_temporal::<V, false>(
                dst.add(body_end),
                src.add(body_end),
                len - body_end,
                &Knobs::PLAIN,
            );
        } else {
            move_temporal::<V, false>(
                dst.add(body_end),
                src.add(body_end),
                len - body_end,
                &Knobs::PLAIN,
            );
            let mut off = body_end;
            while off > head {
                off -= STREAM_LINE;
                let mut i = STREAM_LINE;
                while i > 0 {
                    i -= w;
                    V::load(src.add(off + i)).stream(dst.add(off + i));
                }
            }
            move_temporal::<V, false>(dst, src, head, &Knobs::PLAIN);
        }
    }
    (head, body_end)
}

/// A streaming move without its fence (the cursors' and batches' `copy_stream` for moves): whole
/// lines streamed from two lines up, ordinary stores below. Returns whether anything streamed.
///
/// # Safety
/// As [`move_temporal`]; when it returns `true` the caller runs `arch::stream_fence()` before
/// returning to safe code.
#[inline(always)]
pub(crate) unsafe fn move_stream<V: Vector>(
    dst: *mut u8,
    src: *const u8,
    len: usize,
    knobs: &Knobs,
) -> bool {
    if len < 2 * STREAM_LINE {
        // SAFETY: forwarded contract.
        unsafe { move_temporal::<V, false>(dst, src, len, &Knobs::PLAIN) };
        return false;
    }
    // SAFETY: forwarded contract; `len >= 2 * STREAM_LINE` as both spans need.
    unsafe {
        match lie(dst, src, len) {
            Lie::Disjoint => {
                stream_span_paged::<V, Mem>(dst, Mem(src), len, knobs.pages);
            }
            Lie::Same => return false,
            l => {
                stream_move::<V>(dst, src, len, l);
            }
        }
    }
    true
}

/// A `NonTemporal` move: [`move_stream`] from [`STREAM_MIN`] bytes (the copy's cut-over, for the
/// copy's reasons), then the store fence.
///
/// # Safety
/// As [`move_temporal`].
#[inline(always)]
pub(crate) unsafe fn move_nontemporal<V: Vector>(
    dst: *mut u8,
    src: *const u8,
    len: usize,
    knobs: &Knobs,
) {
    // SAFETY: forwarded contract; the fence follows every streamed store.
    unsafe {
        if len < STREAM_MIN {
            move_temporal::<V, false>(dst, src, len, knobs);
        } else if move_stream::<V>(dst, src, len, knobs) {
            arch::stream_fence();
        }
    }
}

/// A `FlushCache` move without its fence: every destination line written back (the whole range
/// when the two are the same and nothing moves).
///
/// # Safety
/// As [`move_temporal`], `op` supported by this CPU; the caller runs `arch::flush_fence(op)`
/// before returning to safe code.
#[inline(always)]
pub(crate) unsafe fn move_flush_unfenced<V: Vector>(
    dst: *mut u8,
    src: *const u8,
    len: usize,
    op: FlushOp,
) {
    // SAFETY: forwarded contract; flushing only names lines that hold destination bytes, after
    // their last store.
    unsafe {
        match lie(dst, src, len) {
            Lie::Disjoint => super::flush_unfenced::<V, Mem>(dst, Mem(src), len, op),
            Lie::Same => arch::flush_range(op, dst, len),
            _ if len < STREAM_MIN => {
                move_temporal::<V, false>(dst, src, len, &Knobs::PLAIN);
                arch::flush_range(op, dst, len);
            }
            l => {
                let (head, body_end) = stream_move::<V>(dst, src, len, l);
                if V::STREAM_BYPASSES_CACHE {
                    arch::flush_range(op, dst, head);
                    arch::flush_range(op, dst.add(body_end), len - body_end);
                } else {
                    arch::flush_range(op, dst, len);
                }
            }
        }
    }
}

/// A `FlushCache` move: [`move_flush_unfenced`], then the completion fence.
///
/// # Safety
/// As [`move_flush_unfenced`] (the fence is run here).
#[inline(always)]
pub(crate) unsafe fn move_flush<V: Vector>(dst: *mut u8, src: *const u8, len: usize, op: FlushOp) {
    // SAFETY: forwarded contract; the fence follows every streamed store and write-back.
    unsafe {
        move_flush_unfenced::<V>(dst, src, len, op);
        arch::flush_fence(op);
    }
}
