//! The copy, fill and zero entry points: [`copy`], [`copy_raw`], [`fill`], [`fill_raw`],
//! [`zero`], their `*_with` forms that name a backend, an engine or a flush instruction, the
//! unfenced forms and [`fence`].
//!
//! Each resolves the caller's [`Mode`] for one call and hands the bytes to the active table
//! (`dispatch`) through the one mapping from a store kind to a table entry (`dispatch::store`).
//! They live here rather than in `lib.rs` so that the crate root stays its face (docs, `mod`
//! lines, re-exports) and the layers point one way: the cursors, pages, checksum copies and
//! batches above build on this module (and share its length check, [`len_mismatch`]), and
//! nothing here names them. The small-call paths (`kernel::small` at the call site, the
//! table's temporal entry called from it) are measured in `lab/findings/small-calls.md`; their
//! `#[inline]` attributes are part of that design.

use crate::cpu::FlushOp;
use crate::dispatch::engine::{Backend, Engine};
use crate::dispatch::plan::{self, Plan};
use crate::dispatch::store::{copy_on, copy_unfenced_on, fill_on, fill_unfenced_on, Store};
use crate::dispatch::supported::{Unsupportable, Unsupported};
use crate::dispatch::table::Kernels;
use crate::kernel;
use crate::mode::Mode;

/// The plan a call runs: the published one ([`Via::Published`], every public call), or one the
/// caller holds ([`Via::Plan`], `Plan::copy` and its kin). Inlined, `Published` compiles to the
/// one load of the published pointer a call made before plans existed.
#[derive(Clone, Copy)]
pub(crate) enum Via<'a> {
    /// The published plan.
    Published,
    /// This plan.
    Plan(&'a Plan),
}

impl<'a> Via<'a> {
    /// The plan to read the temporal entry and the bounds from: before the first detection the
    /// published one is the bootstrap plan, whose temporal entries detect (take nothing else
    /// from it).
    #[inline(always)]
    pub(crate) fn hot(self) -> &'a Plan {
        match self {
            Via::Published => plan::current(),
            Via::Plan(p) => p,
        }
    }

    /// Writes back the lines of `dst..dst + len` that the inline path just stored, with the
    /// plan's flush instruction, and (`fenced`) waits: [`flush_inline`], on the published plan
    /// (detecting it) or this one. Out of line either way, so that the inline path holds
    /// nothing in registers for it.
    ///
    /// # Safety
    /// `dst..dst + len` mapped (it was just written).
    #[inline(always)]
    pub(crate) unsafe fn flush_inline(self, dst: *const u8, len: usize, fenced: bool) {
        // SAFETY: forwarded contract.
        unsafe {
            match self {
                Via::Published => flush_inline_published(dst, len, fenced),
                Via::Plan(p) => flush_inline(p, dst, len, fenced),
            }
        }
    }
}

/// [`flush_inline`] on the published plan, detecting it first.
///
/// # Safety
/// As [`flush_inline`].
#[cold]
#[inline(never)]
pub(crate) unsafe fn flush_inline_published(dst: *const u8, len: usize, fenced: bool) {
    // SAFETY: forwarded contract.
    unsafe { flush_inline(plan::active(), dst, len, fenced) }
}

/// `p`, or the detected plan where `p` is the bootstrap plan (a call that found nothing
/// published yet and went out of line).
#[inline(always)]
pub(crate) fn detected(p: &Plan) -> &Plan {
    if plan::is_bootstrap(p) {
        plan::active()
    } else {
        p
    }
}

#[cold]
#[track_caller]
pub(crate) fn len_mismatch(what: &str, dst: usize, src: usize) -> ! {
    panic!("cachecopy::{what}: source length ({src}) does not match destination length ({dst})")
}

/// Copies `src` into `dst` with the cache policy `mode`, on the active [`Backend`].
///
/// # Panics
/// When the lengths differ, with a message naming both (like `copy_from_slice`); nothing is
/// written then.
///
/// ```
/// let mut dst = [0u8; 5];
/// cachecopy::copy(&mut dst, b"hello", cachecopy::Mode::Auto);
/// assert_eq!(&dst, b"hello");
/// ```
#[inline(always)]
#[track_caller]
pub fn copy(dst: &mut [u8], src: &[u8], mode: Mode) {
    if dst.len() != src.len() {
        len_mismatch("copy", dst.len(), src.len());
    }
    // SAFETY: two live slices of equal length; `&mut` cannot overlap `&`.
    unsafe { copy_raw(dst.as_mut_ptr(), src.as_ptr(), src.len(), mode) }
}

/// Copies `len` bytes from `src` to `dst` with the cache policy `mode`.
///
/// # Safety
/// - `src` must be valid for reads and `dst` valid for writes of `len` bytes, each within one
///   allocated object (so `len <= isize::MAX`);
/// - the two ranges must not overlap;
/// - no other thread may access `dst..dst + len` during the call;
/// - when `len == 0` nothing is accessed and any pointers, even null or dangling, are allowed.
///
/// Alignment is never required.
#[inline(always)]
pub unsafe fn copy_raw(dst: *mut u8, src: *const u8, len: usize, mode: Mode) {
    // SAFETY: forwarded contract.
    unsafe { copy_in(Via::Published, dst, src, len, mode) };
}

/// [`copy_raw`] on the plan `via` names.
///
/// # Safety
/// `copy_raw`'s contract.
#[inline(always)]
pub(crate) unsafe fn copy_in(via: Via<'_>, dst: *mut u8, src: *const u8, len: usize, mode: Mode) {
    if len <= kernel::small::MAX {
        // SAFETY: forwarded contract. Below `STREAM_MIN` every mode but FlushCache is ordinary
        // stores, which the inline classes are (`kernel::small`); FlushCache then writes the
        // lines back ([`flush_inline`]).
        unsafe {
            kernel::small::copy(dst, src, len);
            if mode == Mode::FlushCache {
                via.flush_inline(dst, len, true);
            }
        }
        return;
    }
    // SAFETY: forwarded contract.
    unsafe { copy_via_table(via.hot(), dst, src, len, mode) };
}

/// [`copy_raw`] past the inline classes, on the plan `p`. A call that stores temporally at this
/// length (below its mode's bound in the plan) calls the plan's temporal entry from the call
/// site, as a call through the PLT reaches glibc's `memcpy`, with no test
/// for "detected yet" (the bootstrap table's temporal entry detects first); the rest go on to
/// [`copy_table`]. The mode costs one load and one compare, constant or not, and nothing for a
/// constant `Temporal`. Inlined, and the entry `extern "C"` (it cannot unwind, so the caller
/// needs no landing pad): an out-of-line step or a landing pad cost instructions on every call
/// (lab/findings/small-calls.md, "The way into the table"). Nothing here panics on valid input.
///
/// # Safety
/// `copy_raw`'s contract.
#[inline(always)]
unsafe fn copy_via_table(
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
            return (p.kernels.copy_temporal)(dst, src, len, &p.kernels.knobs);
        }
        copy_table(dst, src, len, mode, p)
    }
}

/// [`copy_raw`] past the inline classes in any store kind, detecting the CPU on first use;
/// `extern "C"` so that it cannot unwind and callers need no landing pad around it (`Mode`
/// crosses it between Rust functions of one build only, so its layout is the same on both
/// sides).
///
/// # Safety
/// `copy_raw`'s contract.
#[inline(never)]
#[allow(improper_ctypes_definitions)]
unsafe extern "C" fn copy_table(
    dst: *mut u8,
    src: *const u8,
    len: usize,
    mode: Mode,
    p: &Plan,
) -> *mut u8 {
    let p = detected(p);
    let store = mode.resolve(len, &p.copy_below, p.tuning.flush);
    // SAFETY: forwarded contract; the plan's kernels run on this CPU. `len == 0` touches no
    // memory in any kernel (every move lies inside `0..len`).
    unsafe { copy_on(&p.kernels, dst, src, len, store) };
    dst
}

/// Writes back every line of `dst..dst + len` that a `FlushCache` call of the inline path just
/// stored, with the plan's flush instruction, then (`fenced`) waits for the write-backs: what the
/// table's flush kernels do below `STREAM_MIN`. Out of line and cold, so that the inline path
/// pays one predicted compare after its stores for a mode read at run time, and nothing for a
/// constant one (lab/findings/small-calls.md, "The run-time mode").
///
/// # Safety
/// `dst..dst + len` mapped (it was just written).
#[cold]
#[inline(never)]
pub(crate) unsafe fn flush_inline(p: &Plan, dst: *const u8, len: usize, fenced: bool) {
    let op = p.tuning.flush;
    // SAFETY: `op` runs on this CPU (the plan's); the range was just written, so it is mapped.
    unsafe {
        crate::arch::flush_range(op, dst, len);
        if fenced {
            Store::Flush(op).fence();
        }
    }
}

impl Plan {
    /// [`copy`] on this plan instead of the published one: what a test or a benchmark runs to
    /// try a plan without publishing it.
    ///
    /// # Panics
    /// When the lengths differ, as [`copy`].
    #[inline]
    #[track_caller]
    pub fn copy(&self, dst: &mut [u8], src: &[u8], mode: Mode) {
        if dst.len() != src.len() {
            len_mismatch("Plan::copy", dst.len(), src.len());
        }
        // SAFETY: two live slices of equal length; `&mut` cannot overlap `&`; the plan's kernels
        // run on this CPU (a plan is built only from what it runs).
        unsafe {
            copy_in(
                Via::Plan(self),
                dst.as_mut_ptr(),
                src.as_ptr(),
                src.len(),
                mode,
            )
        }
    }

    /// [`fill`] on this plan instead of the published one.
    #[inline]
    pub fn fill(&self, dst: &mut [u8], byte: u8, mode: Mode) {
        // SAFETY: a live slice; the plan's kernels run on this CPU.
        unsafe { fill_in(Via::Plan(self), dst.as_mut_ptr(), byte, dst.len(), mode) };
    }
}

/// Copies with exactly `backend`, whatever dispatch picked (for tests, benchmarks and
/// comparisons).
///
/// # Errors
/// [`Unsupported`] when this CPU cannot run `backend`; nothing is written then.
///
/// # Panics
/// When the lengths differ.
///
/// ```
/// use cachecopy::Mode;
/// use cachecopy::tune::Backend;
/// use cachecopy::raw::copy_with;
/// let mut dst = [0u8; 3];
/// copy_with(Backend::Generic, &mut dst, b"abc", Mode::NonTemporal).unwrap();
/// assert_eq!(&dst, b"abc");
/// ```
#[inline]
#[track_caller]
pub fn copy_with(
    backend: Backend,
    dst: &mut [u8],
    src: &[u8],
    mode: Mode,
) -> Result<(), Unsupported> {
    copy_checked("copy_with", |p| backend.kernels(p), dst, src, mode)
}

/// [`copy_with`] and [`copy_with_engine`]: the length check (naming `name`), then the table
/// `kernels` finds, then the copy.
#[inline]
#[track_caller]
fn copy_checked(
    name: &str,
    kernels: impl FnOnce(&Plan) -> Result<&'static Kernels, Unsupported>,
    dst: &mut [u8],
    src: &[u8],
    mode: Mode,
) -> Result<(), Unsupported> {
    if dst.len() != src.len() {
        len_mismatch(name, dst.len(), src.len());
    }
    let p = plan::active();
    let k = kernels(p)?;
    let store = mode.resolve(src.len(), &p.copy_below, p.tuning.flush);
    // SAFETY: two live, non-overlapping slices of equal length; `k` runs on this CPU.
    unsafe { copy_on(k, dst.as_mut_ptr(), src.as_ptr(), src.len(), store) };
    Ok(())
}

/// Copies with exactly `engine` (to test or compare engines: see [`Engine::supported`]);
/// otherwise as [`copy_with`].
///
/// # Errors
/// [`Unsupported`] when this CPU cannot run one of `engine`'s backends; nothing is written then.
///
/// # Panics
/// When the lengths differ.
///
/// ```
/// use cachecopy::Mode;
/// use cachecopy::tune::{Backend, Edges, Engine};
/// use cachecopy::raw::copy_with_engine;
/// let mut dst = [0u8; 3];
/// let e = Engine::new(Backend::Generic, Backend::Generic, Edges::Overlap);
/// copy_with_engine(e, &mut dst, b"abc", Mode::NonTemporal).unwrap();
/// assert_eq!(&dst, b"abc");
/// ```
#[inline]
#[track_caller]
pub fn copy_with_engine(
    engine: Engine,
    dst: &mut [u8],
    src: &[u8],
    mode: Mode,
) -> Result<(), Unsupported> {
    copy_checked("copy_with_engine", |p| engine.kernels(p), dst, src, mode)
}

/// A [`Mode::FlushCache`] copy with exactly `backend` and flush instruction `op` (to test or
/// compare the instructions a CPU offers: see [`Cpu::flush_ops`](crate::cpu::Cpu::flush_ops)).
///
/// # Errors
/// [`Unsupported`] when this CPU cannot run `backend` or `op`; nothing is written then.
///
/// # Panics
/// When the lengths differ.
#[track_caller]
pub fn copy_with_flush(
    backend: Backend,
    op: FlushOp,
    dst: &mut [u8],
    src: &[u8],
) -> Result<(), Unsupported> {
    if dst.len() != src.len() {
        len_mismatch("copy_with_flush", dst.len(), src.len());
    }
    let k = backend.kernels(plan::active())?;
    flush_supported(op)?;
    // SAFETY: as `copy_with`, and `op` runs on this CPU.
    unsafe {
        copy_on(
            k,
            dst.as_mut_ptr(),
            src.as_ptr(),
            src.len(),
            Store::Flush(op),
        )
    };
    Ok(())
}

/// Whether this CPU runs `op`.
fn flush_supported(op: FlushOp) -> Result<(), Unsupported> {
    if plan::facts().flush & (1 << op.index()) == 0 {
        return Err(Unsupported(Unsupportable::Flush(op)));
    }
    Ok(())
}

/// Sets every byte of `dst` to `byte` with the cache policy `mode` (for `Auto`, against the
/// plan's `fill_nt`).
///
/// ```
/// let mut page = vec![1u8; 4096];
/// cachecopy::fill(&mut page, 0xa5, cachecopy::Mode::NonTemporal);
/// assert!(page.iter().all(|&b| b == 0xa5));
/// ```
#[inline(always)]
pub fn fill(dst: &mut [u8], byte: u8, mode: Mode) {
    // SAFETY: a live slice.
    unsafe { fill_raw(dst.as_mut_ptr(), byte, dst.len(), mode) }
}

/// Zeroes `dst` with the cache policy `mode`: [`fill`] with `0`.
///
/// ```
/// let mut block = vec![9u8; 4096];
/// cachecopy::zero(&mut block, cachecopy::Mode::Auto);
/// assert!(block.iter().all(|&b| b == 0));
/// ```
#[inline(always)]
pub fn zero(dst: &mut [u8], mode: Mode) {
    fill(dst, 0, mode)
}

/// Sets `len` bytes at `dst` to `byte` with the cache policy `mode`.
///
/// # Safety
/// - `dst` must be valid for writes of `len` bytes within one allocated object;
/// - no other thread may access the range during the call;
/// - when `len == 0` nothing is accessed and `dst` may be null or dangling.
#[inline(always)]
pub unsafe fn fill_raw(dst: *mut u8, byte: u8, len: usize, mode: Mode) {
    // SAFETY: forwarded contract.
    unsafe { memset_raw(dst, byte, len, mode) };
}

/// [`fill_raw`], returning `dst` as C's `memset` does: for C-shaped callers, as
/// [`memmove_raw`](crate::raw::memmove_raw).
///
/// # Safety
/// [`fill_raw`]'s contract.
///
/// ```
/// let mut buf = [0u8; 100];
/// let p = buf.as_mut_ptr();
/// // SAFETY: `p` is valid for 100 bytes.
/// let r = unsafe { cachecopy::raw::memset_raw(p, 7, 100, cachecopy::Mode::Auto) };
/// assert_eq!(r, p);
/// assert!(buf.iter().all(|&b| b == 7));
/// ```
#[inline(always)]
pub unsafe fn memset_raw(dst: *mut u8, byte: u8, len: usize, mode: Mode) -> *mut u8 {
    // SAFETY: forwarded contract.
    unsafe { fill_in(Via::Published, dst, byte, len, mode) }
}

/// [`memset_raw`] on the plan `via` names.
///
/// # Safety
/// `fill_raw`'s contract.
#[inline(always)]
pub(crate) unsafe fn fill_in(
    via: Via<'_>,
    dst: *mut u8,
    byte: u8,
    len: usize,
    mode: Mode,
) -> *mut u8 {
    if len <= kernel::small::MAX {
        // SAFETY: forwarded contract. Every mode stores this few bytes with ordinary stores
        // (streaming starts at `STREAM_MIN`), so inline stores are that mode; FlushCache then
        // writes the lines back ([`flush_inline`]). The plan's small-fill choice is read from
        // the plan as found (the bootstrap plan's is the plain classes).
        unsafe {
            let p = via.hot();
            kernel::small::fill(dst, byte, len, p.small_below, p.small);
            if mode == Mode::FlushCache {
                via.flush_inline(dst, len, true);
            }
        }
        return dst;
    }
    // SAFETY: forwarded contract.
    unsafe { fill_via_table(via.hot(), dst, byte, len, mode) }
}

/// [`fill_raw`] past the inline classes, as [`copy_via_table`] (with the plan's fill bounds).
///
/// # Safety
/// `fill_raw`'s contract.
#[inline(always)]
unsafe fn fill_via_table(p: &Plan, dst: *mut u8, byte: u8, len: usize, mode: Mode) -> *mut u8 {
    // SAFETY: forwarded contract; the plan's temporal entry runs on this CPU (before detection
    // the bootstrap plan's, which detects first).
    unsafe {
        if mode.stores_temporally(len, &p.fill_below) {
            return (p.kernels.fill_temporal)(dst, byte, len, &p.kernels.knobs);
        }
        fill_table(dst, byte, len, mode, p)
    }
}

/// [`fill_raw`] past the inline classes in any store kind, as [`copy_table`].
///
/// # Safety
/// `fill_raw`'s contract.
#[inline(never)]
#[allow(improper_ctypes_definitions)]
unsafe extern "C" fn fill_table(
    dst: *mut u8,
    byte: u8,
    len: usize,
    mode: Mode,
    p: &Plan,
) -> *mut u8 {
    let p = detected(p);
    let store = mode.resolve(len, &p.fill_below, p.tuning.flush);
    // SAFETY: forwarded contract; the plan's kernels run on this CPU.
    unsafe { fill_on(&p.kernels, dst, byte, len, store) };
    dst
}

/// Fills with exactly `backend`.
///
/// # Errors
/// [`Unsupported`] when this CPU cannot run `backend`; nothing is written then.
#[inline]
pub fn fill_with(
    backend: Backend,
    dst: &mut [u8],
    byte: u8,
    mode: Mode,
) -> Result<(), Unsupported> {
    fill_checked(backend.kernels(plan::active())?, dst, byte, mode);
    Ok(())
}

/// [`fill_with`] and [`fill_with_engine`] once their table `k` (which runs on this CPU) is found.
#[inline]
fn fill_checked(k: &'static Kernels, dst: &mut [u8], byte: u8, mode: Mode) {
    let p = plan::active();
    let store = mode.resolve(dst.len(), &p.fill_below, p.tuning.flush);
    // SAFETY: a live slice; `k` runs on this CPU.
    unsafe { fill_on(k, dst.as_mut_ptr(), byte, dst.len(), store) };
}

/// Fills with exactly `engine`; otherwise as [`fill_with`].
///
/// # Errors
/// [`Unsupported`] when this CPU cannot run one of `engine`'s backends; nothing is written then.
#[inline]
pub fn fill_with_engine(
    engine: Engine,
    dst: &mut [u8],
    byte: u8,
    mode: Mode,
) -> Result<(), Unsupported> {
    fill_checked(engine.kernels(plan::active())?, dst, byte, mode);
    Ok(())
}

/// A [`Mode::FlushCache`] fill with exactly `backend` and flush instruction `op`.
///
/// # Errors
/// [`Unsupported`] when this CPU cannot run `backend` or `op`; nothing is written then.
pub fn fill_with_flush(
    backend: Backend,
    op: FlushOp,
    dst: &mut [u8],
    byte: u8,
) -> Result<(), Unsupported> {
    let k = backend.kernels(plan::active())?;
    flush_supported(op)?;
    // SAFETY: a live slice; `k` and `op` run on this CPU.
    unsafe { fill_on(k, dst.as_mut_ptr(), byte, dst.len(), Store::Flush(op)) };
    Ok(())
}

/// [`copy_raw`] without the closing fence, for callers that copy many buffers and fence once
/// with [`fence`] (as Linux leaves the fence of `__copy_user_nocache` to the end of the system
/// call, and PMDK has `PMEM_F_MEM_NODRAIN` + `pmem_drain`). Prefer [`batch`](crate::batch::batch), which fences for
/// you and proves with the borrow checker that nothing reads the destinations before it.
///
/// `Temporal` copies (and `Auto` or `NonTemporal` ones below 1 KiB) are ordinary stores and owe
/// nothing; the others leave weakly ordered streaming stores (and, for `FlushCache`, write-backs)
/// in flight.
///
/// # Safety
/// [`copy_raw`]'s contract, and until this thread calls [`fence`]:
/// - another thread or a device may observe any mix of old and new destination bytes, in any
///   order, even after a `Release` store or a lock release by this thread: atomics and locks
///   do **not** order streaming stores (rust-lang/rust#114582), so publishing the destination
///   before the fence is a data race;
/// - a `FlushCache` destination is not yet guaranteed to be in memory.
///
/// So: call [`fence`] on the **same thread** after the last unfenced store and before the
/// bytes are published in any way (an atomic flag, a lock, a channel, a queue doorbell, a
/// system call handing the memory to a device, returning the buffer to safe code that may send
/// it to another thread). This thread itself always reads its own stores in program order.
///
/// ```
/// let src = vec![3u8; 64 << 10];
/// let mut dst = vec![0u8; 64 << 10];
/// // SAFETY: two live, non-overlapping buffers; nobody else sees `dst` before the fence.
/// unsafe {
///     cachecopy::raw::copy_raw_unfenced(dst.as_mut_ptr(), src.as_ptr(), src.len(), cachecopy::Mode::NonTemporal);
/// }
/// cachecopy::fence();
/// assert_eq!(dst, src);
/// ```
#[inline(always)]
pub unsafe fn copy_raw_unfenced(dst: *mut u8, src: *const u8, len: usize, mode: Mode) {
    if len <= kernel::small::MAX {
        // SAFETY: forwarded contract; ordinary stores owe no fence, FlushCache's write-backs
        // are the caller's to fence.
        unsafe {
            kernel::small::copy(dst, src, len);
            if mode == Mode::FlushCache {
                flush_inline_published(dst, len, false);
            }
        }
        return;
    }
    let p = plan::current();
    // SAFETY: forwarded contract; the plan's temporal entry runs on this CPU (before detection
    // the bootstrap plan's, which detects first); ordinary stores owe no fence, and the caller
    // fences the rest (see above).
    unsafe {
        if mode.stores_temporally(len, &p.copy_below) {
            (p.kernels.copy_temporal)(dst, src, len, &p.kernels.knobs);
            return;
        }
        copy_unfenced_table(dst, src, len, mode, p)
    }
}

/// [`copy_raw_unfenced`] past the inline classes in any store kind, as [`copy_table`].
///
/// # Safety
/// `copy_raw_unfenced`'s contract.
#[inline(never)]
#[allow(improper_ctypes_definitions)]
unsafe extern "C" fn copy_unfenced_table(
    dst: *mut u8,
    src: *const u8,
    len: usize,
    mode: Mode,
    p: &Plan,
) {
    let p = detected(p);
    let store = mode.resolve(len, &p.copy_below, p.tuning.flush);
    // SAFETY: forwarded contract; the caller fences.
    unsafe { copy_unfenced_on(&p.kernels, dst, src, len, store) }
}

/// [`fill_raw`] without the closing fence; see [`copy_raw_unfenced`] for what the caller must
/// do before the bytes are published.
///
/// # Safety
/// [`fill_raw`]'s contract, and [`copy_raw_unfenced`]'s fence obligation.
#[inline(always)]
pub unsafe fn fill_raw_unfenced(dst: *mut u8, byte: u8, len: usize, mode: Mode) {
    let p = plan::current();
    if len <= kernel::small::MAX {
        // SAFETY: forwarded contract; ordinary stores owe no fence, FlushCache's write-backs
        // are the caller's to fence.
        unsafe {
            kernel::small::fill(dst, byte, len, p.small_below, p.small);
            if mode == Mode::FlushCache {
                flush_inline_published(dst, len, false);
            }
        }
        return;
    }
    // SAFETY: forwarded contract; the plan's temporal entry runs on this CPU (before detection
    // the bootstrap plan's, which detects first); ordinary stores owe no fence, and the caller
    // fences the rest.
    unsafe {
        if mode.stores_temporally(len, &p.fill_below) {
            (p.kernels.fill_temporal)(dst, byte, len, &p.kernels.knobs);
            return;
        }
        fill_unfenced_table(dst, byte, len, mode, p)
    }
}

/// [`fill_raw_unfenced`] past the inline classes in any store kind, as [`copy_table`].
///
/// # Safety
/// `fill_raw_unfenced`'s contract.
#[inline(never)]
#[allow(improper_ctypes_definitions)]
unsafe extern "C" fn fill_unfenced_table(dst: *mut u8, byte: u8, len: usize, mode: Mode, p: &Plan) {
    let p = detected(p);
    let store = mode.resolve(len, &p.fill_below, p.tuning.flush);
    // SAFETY: forwarded contract; the caller fences.
    unsafe { fill_unfenced_on(&p.kernels, dst, byte, len, store) }
}

/// Completes every streaming store and cache write-back this thread has issued: after it, the
/// destinations of earlier [`copy_raw_unfenced`] / [`fill_raw_unfenced`] calls are ordered
/// before any later store of this thread and (for `FlushCache`) written back to memory.
///
/// x86_64: `sfence`; aarch64: `dsb sy`; elsewhere a sequentially consistent fence. It costs
/// about as much as a 1-2 KiB copy, so call it once per batch, not once per buffer.
#[inline]
pub fn fence() {
    let op = plan::active().tuning.flush;
    // SAFETY: the plan's flush op runs on this CPU; the strongest fence any mode needs.
    unsafe { Store::Flush(op).fence() }
}
