//! Copy and fill primitives with a cache policy chosen per call, for network stacks, allocators
//! and storage engines.
//!
//! ```
//! use cachecopy::{copy, Mode};
//!
//! let src = vec![7u8; 1 << 20];
//! let mut dst = vec![0u8; 1 << 20];
//! // A transmit copy the CPU will not read again: stream it past the cache.
//! copy(&mut dst, &src, Mode::NonTemporal);
//! assert_eq!(dst, src);
//! ```
//!
//! # Modes
//! - [`Mode::Temporal`]: `memcpy`. Small sizes with overlapping moves, a vector body.
//! - [`Mode::NonTemporal`]: whole destination lines written with streaming stores
//!   (`movntdq`, `vmovntdq`, `movnti`, `stnp`), the partial lines at the ends with ordinary
//!   stores (never one line both ways), a store fence before returning. Below 1 KiB it is a
//!   temporal copy, so passing it is never a trap.
//! - [`Mode::FlushCache`]: on return every destination byte has been written back to memory
//!   (persistent memory, DMA, another agent): streamed body, `clwb`/`clflushopt`/`clflush` (or
//!   `dc cvap`/`dc cvac`) of the lines written with ordinary stores, then the fence.
//! - [`Mode::Auto`]: `NonTemporal` from [`nt_threshold`] bytes up, `Temporal` below.
//!
//! Every mode also moves bytes within one buffer, the ranges overlapping: [`copy_within`]
//! ([`slice::copy_within`] with a mode) and [`move_raw`] (`memmove`).
//!
//! # Dispatch
//! The first call detects the CPU (CPUID and XGETBV without `std`, `std_detect` with it) and
//! picks the best [`Backend`]; every later call is one indirect call. With `std`,
//! `CACHECOPY_BACKEND=generic|sse2|avx2|avx512|neon` forces a backend and
//! `CACHECOPY_NT_THRESHOLD=bytes` sets the `Auto` thresholds (`CACHECOPY_FILL_NT_THRESHOLD` the
//! fill one alone) and
//! `CACHECOPY_FILL_REP_THRESHOLD=bytes` the size from which x86 `Temporal` fills use `rep stosb`.
//! `CACHECOPY_TUNE=nt=16M,fill_nt=16M,rep_movsb=never,fill_rep=2K` sets them all in one line,
//! the one a [`Calibration`] writes (see [`calibrate`]); an individual variable wins over its
//! field.
//!
//! # Allocators and other callers that must not allocate
//! With `std` on Unix, no data-path call allocates, takes a lock or panics on valid input: not
//! the first call, which detects the CPU and reads the `CACHECOPY_*` variables, and not any later
//! one, however many threads race it and whatever the variables hold (unset, valid or
//! unparsable). The data path is [`copy`], [`copy_raw`], [`copy_with`], [`copy_with_flush`],
//! [`fill`], [`fill_raw`], [`zero`], [`fill_with`], [`fill_with_flush`], the moves
//! ([`copy_within`], [`move_raw`] and their forms), [`batch`], the cursor operations in
//! [`iter`], the checksum copies in [`net`], the threshold getters and setters, and
//! [`Backend::active`] / [`Backend::supported`]. A `#[global_allocator]` may therefore call
//! `fill_raw(p, 0, n, Mode::Auto)` from `alloc_zeroed`. The environment is read with `getenv`
//! and parsed in place; a bad value is reported once per process with one `write(2)` from a
//! stack buffer; `CACHECOPY_NT_THRESHOLD=calibrate` measures on `mmap`'d buffers; without `std`
//! nothing reads the environment; on aarch64 Linux the cache sizes are read from sysfs with
//! `open`/`read` into stack buffers. Not covered: [`cpu()`] (a report) and the `alloc` types
//! such as `net::Frame`. `tests/no_alloc.rs` checks this on x86_64 and aarch64 Linux with a
//! global allocator that aborts on any allocation and, on the racing threads, a seccomp filter
//! (a system-call trace under QEMU) that fails on any `futex` wait, sleep, poll or yield.
//!
//! # Platforms
//! Linux on x86_64 and aarch64 is tested (aarch64 under QEMU), and so are `no_std` builds for
//! bare-metal targets. macOS and the BSDs build the same Unix code but are not tested.
//! **Windows is not supported**: nothing builds or tests it. Where the code does compile there,
//! the environment is read through `std::env::var`, which allocates, so the allocator guarantee
//! above does not hold on Windows.
#![no_std]
#![deny(unsafe_op_in_unsafe_fn, missing_docs)]
#![warn(clippy::undocumented_unsafe_blocks, clippy::missing_safety_doc)]

#[cfg(feature = "alloc")]
extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

// Layers, each using only those above it in this list (docs/layout.md):
// - vocabulary: `vector` (registers), `cpu/` (what the CPU has, and the per-CPU choice: the
//   engine, the built-in rules, the one record `cpu::tune::Tuning` and its parser);
// - the per-ISA leaves (`arch`);
// - the algorithms (`kernel/`);
// - the backend table and the store-kind -> entry mapping (`backend/`);
// - calibration (`calibrate/`): measures on tables and returns a record;
// - dispatch: detects, builds the record, publishes it beside the table, installs a
//   calibration's record;
// - the public API (`mode`, `thresholds`, `policy`, this file, `iter/`, `net/`, `page/`,
//   `batch`). Two arrows inside it are kept on purpose: this file re-exports `batch`'s names
//   (the crate's face), and `iter` counts pages with `page::size` (a leaf kept in `page/` so
//   cursors and page walks share one page size without `iter` depending on the walks).
//   One arrow climbs to it on purpose: `calibrate` builds its frames with `net::layout`, a
//   leaf of three constants that imports nothing, so the frames calibration measures are the
//   ones the API documents to users.
#[path = "../arch/mod.rs"]
mod arch;
mod backend;
mod batch;
#[cfg(all(feature = "std", unix))]
mod calibrate;
mod cpu;
mod dispatch;
pub mod iter;
mod kernel;
mod mode;
mod moves;
pub mod net;
pub mod page;
pub mod policy;
#[cfg(all(test, feature = "std"))]
mod testutil;
mod thresholds;
mod vector;

pub use batch::{batch, batch_with, Batch};
#[cfg(all(feature = "std", unix))]
pub use calibrate::{Calibration, EngineCheck, EngineTrial, Outcome, Point, Sweep};
pub use cpu::engine::{Backend, Edges, Engine};
pub use cpu::rules::default_nt_threshold;
pub use cpu::tune::Tuning;
pub use cpu::{Caches, Cpu, Features, FlushOp};
pub use dispatch::Unsupported;
pub use dispatch::{engine, tuning};
pub use mode::{Mode, UnknownMode};
pub use moves::{copy_within, copy_within_with_engine, move_raw, move_raw_unfenced};
pub use thresholds::{
    fill_nt_threshold, fill_rep_threshold, nt_threshold, rep_movsb_threshold,
    set_fill_nt_threshold, set_fill_rep_threshold, set_nt_threshold, set_rep_movsb_threshold,
};

use backend::store::{copy_on, copy_unfenced_on, fill_on, fill_unfenced_on, Store};
use backend::Kernels;
use dispatch::Unsupportable;

/// Detects the CPU: features (with the OS state they need), cache geometry and the flush
/// instruction.
///
/// This executes CPUID (a VM exit under virtualization, microseconds each) every call; dispatch
/// itself detects once and caches what it needs, so call this for reports, not in a loop.
///
/// ```
/// let cpu = cachecopy::cpu();
/// println!("{} {} line {} B, flush with {}", cpu.vendor(), cpu.brand(), cpu.caches.line, cpu.flush);
/// ```
pub fn cpu() -> Cpu {
    arch::detect()
}

#[cold]
#[track_caller]
fn len_mismatch(what: &str, dst: usize, src: usize) -> ! {
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
#[inline]
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
#[inline]
pub unsafe fn copy_raw(dst: *mut u8, src: *const u8, len: usize, mode: Mode) {
    if len <= kernel::small::MAX && mode != Mode::FlushCache {
        // SAFETY: forwarded contract. Below `STREAM_MIN` every mode but FlushCache is ordinary
        // stores, which the inline classes are (`kernel::small`).
        unsafe { kernel::small::copy(dst, src, len) };
        return;
    }
    // SAFETY: forwarded contract.
    unsafe { copy_via_table(dst, src, len, mode) }
}

/// [`copy_raw`] past the inline classes. Every call that stores temporally at this length
/// (`Temporal`; any mode but `FlushCache` below `STREAM_MIN`; `Auto` below its threshold, read
/// from its atomic, which detection publishes before the table) calls the table's temporal
/// entry from the call site, as a call through the PLT reaches glibc's `memcpy`; the rest, and
/// the first call, go on to [`copy_table`]. Inlined: an out-of-line step in between (one load
/// of the table and a tail jump) cost a call and a return per copy, and `Auto` from
/// `STREAM_MIN` paid the mode's full resolution out of line (docs/small-calls.md, "The way into
/// the table"). The entry is `extern "C"`, so it cannot unwind and the caller needs no landing
/// pad around it (with one, a caller holding a `Vec` saved four more registers). Nothing here
/// panics on valid input.
///
/// # Safety
/// `copy_raw`'s contract.
#[inline(always)]
unsafe fn copy_via_table(dst: *mut u8, src: *const u8, len: usize, mode: Mode) {
    // SAFETY: forwarded contract; the detected backend runs on this CPU.
    unsafe {
        if mode != Mode::FlushCache {
            if let Some(k) = dispatch::detected() {
                if mode.resolves_temporal(len, || {
                    cpu::tune::COPY_NT.load(core::sync::atomic::Ordering::Relaxed)
                }) {
                    return (k.copy_temporal)(dst, src, len);
                }
            }
        }
        copy_table(dst, src, len, mode)
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
unsafe extern "C" fn copy_table(dst: *mut u8, src: *const u8, len: usize, mode: Mode) {
    let k = dispatch::active();
    // SAFETY: forwarded contract; the detected backend runs on this CPU. `len == 0` touches no
    // memory in any kernel (every move lies inside `0..len`).
    unsafe { copy_on(k, dst, src, len, mode.resolve(len, nt_threshold)) }
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
/// use cachecopy::{copy_with, Backend, Mode};
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
    copy_checked("copy_with", || backend.kernels(), dst, src, mode)
}

/// [`copy_with`] and [`copy_with_engine`]: the length check (naming `name`), then the table
/// `kernels` finds, then the copy.
#[inline]
#[track_caller]
fn copy_checked(
    name: &str,
    kernels: impl FnOnce() -> Result<&'static Kernels, Unsupported>,
    dst: &mut [u8],
    src: &[u8],
    mode: Mode,
) -> Result<(), Unsupported> {
    if dst.len() != src.len() {
        len_mismatch(name, dst.len(), src.len());
    }
    let k = kernels()?;
    // SAFETY: two live, non-overlapping slices of equal length; `k` runs on this CPU.
    unsafe {
        copy_on(
            k,
            dst.as_mut_ptr(),
            src.as_ptr(),
            src.len(),
            mode.resolve(src.len(), nt_threshold),
        )
    };
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
/// use cachecopy::{copy_with_engine, Backend, Edges, Engine, Mode};
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
    copy_checked("copy_with_engine", || engine.kernels(), dst, src, mode)
}

/// A [`Mode::FlushCache`] copy with exactly `backend` and flush instruction `op` (to test or
/// compare the instructions a CPU offers: see [`Cpu::flush_ops`]).
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
    let k = backend.kernels()?;
    if !dispatch::flush_supported(op) {
        return Err(Unsupported(Unsupportable::Flush(op)));
    }
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

/// Sets every byte of `dst` to `byte` with the cache policy `mode` (for `Auto`, against
/// [`fill_nt_threshold`]).
///
/// ```
/// let mut page = vec![1u8; 4096];
/// cachecopy::fill(&mut page, 0xa5, cachecopy::Mode::NonTemporal);
/// assert!(page.iter().all(|&b| b == 0xa5));
/// ```
#[inline]
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
#[inline]
pub fn zero(dst: &mut [u8], mode: Mode) {
    fill(dst, 0, mode)
}

/// Sets `len` bytes at `dst` to `byte` with the cache policy `mode`.
///
/// # Safety
/// - `dst` must be valid for writes of `len` bytes within one allocated object;
/// - no other thread may access the range during the call;
/// - when `len == 0` nothing is accessed and `dst` may be null or dangling.
#[inline]
pub unsafe fn fill_raw(dst: *mut u8, byte: u8, len: usize, mode: Mode) {
    if len <= kernel::small::MAX && mode != Mode::FlushCache {
        // SAFETY: forwarded contract. Every mode but FlushCache stores this few bytes with
        // ordinary stores (streaming starts at `STREAM_MIN`), so inline stores are that mode.
        unsafe { kernel::small::fill(dst, byte, len) };
        return;
    }
    // SAFETY: forwarded contract.
    unsafe { fill_via_table(dst, byte, len, mode) }
}

/// [`fill_raw`] past the inline classes, as [`copy_via_table`] (with the fill threshold).
///
/// # Safety
/// `fill_raw`'s contract.
#[inline(always)]
unsafe fn fill_via_table(dst: *mut u8, byte: u8, len: usize, mode: Mode) {
    // SAFETY: forwarded contract; the detected backend runs on this CPU.
    unsafe {
        if mode != Mode::FlushCache {
            if let Some(k) = dispatch::detected() {
                if mode.resolves_temporal(len, || {
                    cpu::tune::FILL_NT.load(core::sync::atomic::Ordering::Relaxed)
                }) {
                    return (k.fill_temporal)(dst, byte, len);
                }
            }
        }
        fill_table(dst, byte, len, mode)
    }
}

/// [`fill_raw`] past the inline classes in any store kind, as [`copy_table`].
///
/// # Safety
/// `fill_raw`'s contract.
#[inline(never)]
#[allow(improper_ctypes_definitions)]
unsafe extern "C" fn fill_table(dst: *mut u8, byte: u8, len: usize, mode: Mode) {
    let k = dispatch::active();
    // SAFETY: forwarded contract; the detected backend runs on this CPU.
    unsafe { fill_on(k, dst, byte, len, mode.resolve(len, fill_nt_threshold)) }
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
    fill_checked(backend.kernels()?, dst, byte, mode);
    Ok(())
}

/// [`fill_with`] and [`fill_with_engine`] once their table `k` (which runs on this CPU) is found.
#[inline]
fn fill_checked(k: &'static Kernels, dst: &mut [u8], byte: u8, mode: Mode) {
    // SAFETY: a live slice; `k` runs on this CPU.
    unsafe {
        fill_on(
            k,
            dst.as_mut_ptr(),
            byte,
            dst.len(),
            mode.resolve(dst.len(), fill_nt_threshold),
        )
    };
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
    fill_checked(engine.kernels()?, dst, byte, mode);
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
    let k = backend.kernels()?;
    if !dispatch::flush_supported(op) {
        return Err(Unsupported(Unsupportable::Flush(op)));
    }
    // SAFETY: a live slice; `k` and `op` run on this CPU.
    unsafe { fill_on(k, dst.as_mut_ptr(), byte, dst.len(), Store::Flush(op)) };
    Ok(())
}

/// [`copy_raw`] without the closing fence, for callers that copy many buffers and fence once
/// with [`fence`] (as Linux leaves the fence of `__copy_user_nocache` to the end of the system
/// call, and PMDK has `PMEM_F_MEM_NODRAIN` + `pmem_drain`). Prefer [`batch`], which fences for
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
///     cachecopy::copy_raw_unfenced(dst.as_mut_ptr(), src.as_ptr(), src.len(), cachecopy::Mode::NonTemporal);
/// }
/// cachecopy::fence();
/// assert_eq!(dst, src);
/// ```
#[inline]
pub unsafe fn copy_raw_unfenced(dst: *mut u8, src: *const u8, len: usize, mode: Mode) {
    if len <= kernel::small::MAX && mode != Mode::FlushCache {
        // SAFETY: forwarded contract; ordinary stores owe no fence.
        unsafe { kernel::small::copy(dst, src, len) };
        return;
    }
    let k = dispatch::active();
    // SAFETY: forwarded contract; the caller fences (see above).
    unsafe { copy_unfenced_on(k, dst, src, len, mode.resolve(len, nt_threshold)) }
}

/// [`fill_raw`] without the closing fence; see [`copy_raw_unfenced`] for what the caller must
/// do before the bytes are published.
///
/// # Safety
/// [`fill_raw`]'s contract, and [`copy_raw_unfenced`]'s fence obligation.
#[inline]
pub unsafe fn fill_raw_unfenced(dst: *mut u8, byte: u8, len: usize, mode: Mode) {
    if len <= kernel::small::MAX && mode != Mode::FlushCache {
        // SAFETY: forwarded contract; ordinary stores owe no fence.
        unsafe { kernel::small::fill(dst, byte, len) };
        return;
    }
    let k = dispatch::active();
    // SAFETY: forwarded contract; the caller fences.
    unsafe { fill_unfenced_on(k, dst, byte, len, mode.resolve(len, fill_nt_threshold)) }
}

/// Completes every streaming store and cache write-back this thread has issued: after it, the
/// destinations of earlier [`copy_raw_unfenced`] / [`fill_raw_unfenced`] calls are ordered
/// before any later store of this thread and (for `FlushCache`) written back to memory.
///
/// x86_64: `sfence`; aarch64: `dsb sy`; elsewhere a sequentially consistent fence. It costs
/// about as much as a 1-2 KiB copy, so call it once per batch, not once per buffer.
#[inline]
pub fn fence() {
    let op = dispatch::flush_op();
    // SAFETY: dispatch's flush op runs on this CPU; the strongest fence any mode needs.
    unsafe { Store::Flush(op).fence() }
}

/// Measures, on this machine, every tunable the built-in rules set: the sizes from which
/// streaming into an already cached destination stops losing to ordinary stores, for copies
/// and for fills (the `Auto` crossovers), and on x86_64 with ERMS the sizes from which
/// `Temporal` copies and fills are no slower with `rep movsb` / `rep stosb` than with the
/// vector loop; within [`Calibration::BUDGET`] (130 ms) of wall time. Returns them with the
/// ratios it saw and the time it took; nothing changes until [`Calibration::apply`].
///
/// The NT sizes run from the L2 size to twice the last-level cache as detected, capped at
/// 32 MiB ([`Calibration::MEMORY_BUDGET`], two buffers of that size are mapped); rounds go to the
/// sizes around the crossover until a sign test settles them. Where that does not happen within
/// the budget, or streaming never wins within the sizes tried, the threshold is `None` and the
/// built-in rule stays ([`Sweep::outcome`] says why). It never picks a size below the one where
/// streaming into a cached destination stops losing, so `Auto` never streams where that costs.
/// Its buffers come from `mmap`: it neither allocates nor locks.
/// `CACHECOPY_NT_THRESHOLD=calibrate` runs it (and applies it) on first use; its `Display` is
/// the `CACHECOPY_TUNE` line that keeps the result without measuring again:
///
/// ```no_run
/// let c = cachecopy::calibrate();
/// println!("copies stream from {:?}, fills from {:?} ({:?})", c.copy, c.fill, c.elapsed);
/// println!("{c}"); // CACHECOPY_TUNE=nt=2M,rep_movsb=4K,fill_rep=2K
/// c.apply();
/// ```
#[cfg(all(feature = "std", unix))]
pub fn calibrate() -> Calibration {
    calibrate::run(dispatch::active(), tuning())
}
