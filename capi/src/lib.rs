//! libcachecopy: the C face of [`cachecopy`].
//!
//! What: `extern "C"` functions over the library's public API (`copy_raw`, `fill_raw`, their
//! unfenced forms and `fence`, the `iter` gathers and scatters, `net`'s checksum copy, the
//! thresholds and the backend name), built by cargo-c into `libcachecopy.so` / `libcachecopy.a`
//! with `cachecopy.pc` and the cbindgen header `cachecopy/cachecopy.h` (docs/capi.md).
//!
//! Why a package of its own: the library stays `no_std`-capable, C-free and without new
//! dependencies; everything that exists only for C lives here.
//!
//! The rules every function keeps (they are the header's too):
//! - the mode arrives as an integer ([`ModeArg`]), not as a Rust enum: a C enum can hold any
//!   value, and an out-of-range discriminant in a Rust enum would be undefined behaviour. Values
//!   outside [`cachecopy_mode`] return `-EINVAL` (or 0 bytes / a 0 sum) with nothing written;
//! - `NULL` with `len == 0` is fine; `NULL` with `len > 0`, or `len > PTRDIFF_MAX`, is refused
//!   the same way;
//! - nothing allocates or locks (the library's allocator-grade guarantee, first call included);
//! - nothing unwinds into C: `extern "C"` functions abort on a panic (Rust >= 1.81), and no
//!   path here panics on input that passed the checks.
#![deny(unsafe_op_in_unsafe_fn, missing_docs)]
#![warn(clippy::undocumented_unsafe_blocks, clippy::missing_safety_doc)]
// The C names are the API: lower-case types and upper-case enumerators.
#![allow(non_camel_case_types)]

use core::ffi::{c_char, c_int, c_uint, c_void, CStr};

use cachecopy::iter::{copy_from_iov, copy_to_iov, IoVec, IoVecMut};
use cachecopy::tune::{self, Backend, Plan};
use cachecopy::Mode;

/// The cache policy of one call.
///
/// The functions read it as a plain integer, so any value a C `cachecopy_mode` variable can
/// hold is accepted and checked (outside the enum: -EINVAL, nothing written).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum cachecopy_mode {
    /// Ordinary stores: the destination ends up in cache. Use when it is read soon.
    CACHECOPY_TEMPORAL = 0,
    /// Streaming stores that bypass the cache for whole lines (short calls store normally).
    /// Use when the CPU will not read the destination soon: transmit buffers, large moves.
    CACHECOPY_NONTEMPORAL = 1,
    /// As CACHECOPY_NONTEMPORAL, and every destination line is written back to memory before
    /// the call returns (after cachecopy_fence() for the unfenced forms). Use for persistent
    /// memory and for buffers a device or another agent reads from memory.
    CACHECOPY_FLUSHCACHE = 2,
    /// CACHECOPY_NONTEMPORAL from cachecopy_nt_threshold() bytes up (fills:
    /// cachecopy_fill_nt_threshold()), CACHECOPY_TEMPORAL below.
    CACHECOPY_AUTO = 3,
}

/// A `cachecopy_mode` as it crosses the ABI: the C enum's underlying integer (an `unsigned
/// int` for an enum without negative values, as GCC and Clang lay it out; passed in the same
/// register as `int`). The header spells it `cachecopy_mode`.
#[repr(transparent)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ModeArg(pub c_uint);

impl ModeArg {
    /// The library mode, or `None` for a value outside the enum.
    #[inline]
    fn mode(self) -> Option<Mode> {
        match self.0 {
            0 => Some(Mode::Temporal),
            1 => Some(Mode::NonTemporal),
            2 => Some(Mode::FlushCache),
            3 => Some(Mode::Auto),
            _ => None,
        }
    }
}

impl From<cachecopy_mode> for ModeArg {
    fn from(m: cachecopy_mode) -> ModeArg {
        ModeArg(m as c_uint)
    }
}

/// `-EINVAL`, the refusal of every `int`-returning function.
const EINVAL: c_int = -libc::EINVAL;

/// Whether `len` bytes at `p` can be a buffer: `len == 0` (any `p`), or `p` non-null and `len`
/// at most `PTRDIFF_MAX` (the largest object size, and what `copy_raw` requires).
#[inline]
fn buffer_ok(p: *const c_void, len: usize) -> bool {
    len == 0 || (!p.is_null() && len <= isize::MAX as usize)
}

/// The mode of a call on the buffers `bufs`, each of `len` bytes, or `None` when the call must
/// be refused with nothing written: `mode` is not a cachecopy_mode (checked first), or one of
/// the buffers fails [`buffer_ok`]. Every function taking buffers and a mode checks here, so they
/// all refuse the same arguments.
#[inline]
fn checked<const N: usize>(mode: ModeArg, len: usize, bufs: [*const c_void; N]) -> Option<Mode> {
    let mode = mode.mode()?;
    bufs.iter().all(|&p| buffer_ok(p, len)).then_some(mode)
}

/// Copies `len` bytes from `src` to `dst` with the cache policy `mode`, as `memcpy`, fenced: when
/// it returns, the bytes are ordered before this thread's later stores (and, for
/// CACHECOPY_FLUSHCACHE, written back to memory), so they may be published at once.
///
/// Returns 0, or -EINVAL with nothing written when `mode` is not a cachecopy_mode, a pointer is
/// NULL with `len > 0`, or `len > PTRDIFF_MAX`. Overlap is undefined, as for memcpy.
///
/// # Safety
/// `src` readable and `dst` writable for `len` bytes, not overlapping, and `dst` not accessed by
/// another thread during the call.
#[no_mangle]
pub unsafe extern "C" fn cachecopy_copy(
    dst: *mut c_void,
    src: *const c_void,
    len: usize,
    mode: ModeArg,
) -> c_int {
    let Some(mode) = checked(mode, len, [dst.cast_const(), src]) else {
        return EINVAL;
    };
    // SAFETY: the caller's contract (readable `src`, writable `dst`, `len` bytes, no overlap, no
    // concurrent access); checked above: non-null and `len <= isize::MAX` when `len > 0`.
    unsafe { cachecopy::copy_raw(dst.cast(), src.cast(), len, mode) };
    0
}

/// Sets `len` bytes at `dst` to `(unsigned char)byte` with the cache policy `mode`, as
/// `memset`, fenced (see cachecopy_copy).
///
/// Returns 0, or -EINVAL with nothing written (as cachecopy_copy).
///
/// # Safety
/// `dst` writable for `len` bytes and not accessed by another thread during the call.
#[no_mangle]
pub unsafe extern "C" fn cachecopy_fill(
    dst: *mut c_void,
    byte: c_int,
    len: usize,
    mode: ModeArg,
) -> c_int {
    let Some(mode) = checked(mode, len, [dst.cast_const()]) else {
        return EINVAL;
    };
    // SAFETY: the caller's contract (writable `dst` for `len` bytes, no concurrent access);
    // checked above. `as u8` is memset's conversion to unsigned char.
    unsafe { cachecopy::fill_raw(dst.cast(), byte as u8, len, mode) };
    0
}

/// cachecopy_copy without the closing fence, for batches: issue many unfenced copies and fills,
/// then call cachecopy_fence() once, on the same thread, before the bytes are published in any
/// way (an atomic flag, a lock, a queue doorbell, a system call handing the memory to a device
/// or another thread). Until then another thread or device may see stale bytes, and a
/// CACHECOPY_FLUSHCACHE destination is not yet in memory. This thread reads its own stores in
/// order regardless.
///
/// Returns 0, or -EINVAL with nothing written (as cachecopy_copy).
///
/// # Safety
/// As `cachecopy_copy`, and the fence obligation above.
#[no_mangle]
pub unsafe extern "C" fn cachecopy_copy_unfenced(
    dst: *mut c_void,
    src: *const c_void,
    len: usize,
    mode: ModeArg,
) -> c_int {
    let Some(mode) = checked(mode, len, [dst.cast_const(), src]) else {
        return EINVAL;
    };
    // SAFETY: as in `cachecopy_copy`; the caller owes the fence (documented above).
    unsafe { cachecopy::raw::copy_raw_unfenced(dst.cast(), src.cast(), len, mode) };
    0
}

/// cachecopy_fill without the closing fence; call cachecopy_fence() before publishing (see
/// cachecopy_copy_unfenced).
///
/// Returns 0, or -EINVAL with nothing written (as cachecopy_copy).
///
/// # Safety
/// As `cachecopy_fill`, and the fence obligation of `cachecopy_copy_unfenced`.
#[no_mangle]
pub unsafe extern "C" fn cachecopy_fill_unfenced(
    dst: *mut c_void,
    byte: c_int,
    len: usize,
    mode: ModeArg,
) -> c_int {
    let Some(mode) = checked(mode, len, [dst.cast_const()]) else {
        return EINVAL;
    };
    // SAFETY: as in `cachecopy_fill`; the caller owes the fence (documented above).
    unsafe { cachecopy::raw::fill_raw_unfenced(dst.cast(), byte as u8, len, mode) };
    0
}

/// Moves `len` bytes from `src` to `dst` with the cache policy `mode`, as `memmove`: the
/// ranges may overlap, and on return `dst` holds what `src` held before the call. Fenced, as
/// cachecopy_copy. CACHECOPY_NONTEMPORAL streams whole destination lines even when the ranges
/// overlap (walking in the direction that never overwrites a source byte not yet read), where
/// glibc's memmove stays temporal.
///
/// Returns 0, or -EINVAL with nothing written (as cachecopy_copy).
///
/// # Safety
/// `src` readable and `dst` writable for `len` bytes (they may overlap), and neither accessed by
/// another thread during the call.
#[no_mangle]
pub unsafe extern "C" fn cachecopy_move(
    dst: *mut c_void,
    src: *const c_void,
    len: usize,
    mode: ModeArg,
) -> c_int {
    let Some(mode) = checked(mode, len, [dst.cast_const(), src]) else {
        return EINVAL;
    };
    // SAFETY: the caller's contract (readable `src`, writable `dst`, `len` bytes, overlap
    // allowed, no concurrent access); checked above: non-null and `len <= isize::MAX` when
    // `len > 0`.
    unsafe { cachecopy::move_raw(dst.cast(), src.cast(), len, mode) };
    0
}

/// cachecopy_move without the closing fence; call cachecopy_fence() before publishing (see
/// cachecopy_copy_unfenced).
///
/// Returns 0, or -EINVAL with nothing written (as cachecopy_copy).
///
/// # Safety
/// As `cachecopy_move`, and the fence obligation of `cachecopy_copy_unfenced`.
#[no_mangle]
pub unsafe extern "C" fn cachecopy_move_unfenced(
    dst: *mut c_void,
    src: *const c_void,
    len: usize,
    mode: ModeArg,
) -> c_int {
    let Some(mode) = checked(mode, len, [dst.cast_const(), src]) else {
        return EINVAL;
    };
    // SAFETY: as in `cachecopy_move`; the caller owes the fence (documented above).
    unsafe { cachecopy::raw::move_raw_unfenced(dst.cast(), src.cast(), len, mode) };
    0
}

/// Completes every streaming store and cache write-back this thread issued: after it, the
/// destinations of earlier unfenced copies and fills may be published. x86_64: `sfence`;
/// aarch64: `dsb sy`. It costs about a 1-2 KiB copy: call it once per batch, not per buffer.
#[no_mangle]
pub extern "C" fn cachecopy_fence() {
    cachecopy::fence();
}

/// The `iovcnt` descriptors at `iov` as a slice, or `None` when they cannot be used: `iov`
/// NULL with `iovcnt > 0`, a NULL `iov_base` with `iov_len > 0`, or a total above PTRDIFF_MAX.
///
/// # Safety
/// `iov` readable for `iovcnt` descriptors when `iovcnt > 0`.
unsafe fn iov_checked<'a>(iov: *const libc::iovec, iovcnt: usize) -> Option<&'a [libc::iovec]> {
    if iovcnt == 0 {
        return Some(&[]);
    }
    if iov.is_null() || iovcnt > isize::MAX as usize / core::mem::size_of::<libc::iovec>() {
        return None;
    }
    // SAFETY: the caller's contract: `iovcnt` readable descriptors at the non-null `iov`, and
    // their count times their size fits in `isize` (checked).
    let segs = unsafe { core::slice::from_raw_parts(iov, iovcnt) };
    let mut total = 0usize;
    for s in segs {
        if s.iov_len > 0 && s.iov_base.is_null() {
            return None;
        }
        total = total.checked_add(s.iov_len)?;
    }
    (total <= isize::MAX as usize).then_some(segs)
}

/// Gathers up to `len` bytes from the `iovcnt` segments at `iov` into `dst`, as Linux's
/// copy_from_iter over an ITER_IOVEC: returns the bytes copied, the smaller of `len` and the
/// segments' total. Fenced, as cachecopy_copy; `mode` applies to the whole call (CACHECOPY_AUTO
/// streams when the call moves at least the threshold).
///
/// Returns 0 and copies nothing when `mode` is not a cachecopy_mode, `dst` is NULL with
/// `len > 0`, `iov` is NULL with `iovcnt > 0`, a segment has a NULL `iov_base` with
/// `iov_len > 0`, or the lengths exceed PTRDIFF_MAX.
///
/// # Safety
/// `iov` readable for `iovcnt` descriptors, each segment readable for its length; `dst`
/// writable for `len` bytes; no segment overlaps `dst`; nobody writes the descriptors or
/// segments, nor accesses `dst`, during the call.
#[no_mangle]
pub unsafe extern "C" fn cachecopy_copy_from_iov(
    dst: *mut c_void,
    len: usize,
    iov: *const libc::iovec,
    iovcnt: usize,
    mode: ModeArg,
) -> usize {
    let Some(mode) = checked(mode, len, [dst.cast_const()]) else {
        return 0;
    };
    // SAFETY: the caller's contract for `iov` and `iovcnt`.
    let Some(raw) = (unsafe { iov_checked(iov, iovcnt) }) else {
        return 0;
    };
    // SAFETY: every descriptor is readable for its length (caller) with a non-null base when
    // the length is non-zero and a total within `isize` (checked by `iov_checked`); `IoVec` has
    // `struct iovec`'s layout (`from_iovecs`'s own guarantee).
    let segs: &[IoVec<'_>] = unsafe { IoVec::from_iovecs(raw) };
    let dst: &mut [u8] = if len == 0 {
        &mut []
    } else {
        // SAFETY: non-null, writable for `len <= isize::MAX` bytes, not overlapping any segment
        // and not accessed by others during the call (caller's contract, checks above).
        unsafe { core::slice::from_raw_parts_mut(dst.cast::<u8>(), len) }
    };
    copy_from_iov(dst, segs, mode)
}

/// Scatters up to `len` bytes from `src` into the `iovcnt` segments at `iov`, as Linux's
/// copy_to_iter: returns the bytes copied, the smaller of `len` and the segments' total. Fenced,
/// as cachecopy_copy; `mode` applies to the whole call. The descriptors are only read.
///
/// Returns 0 and copies nothing in the cases cachecopy_copy_from_iov lists (`src` for `dst`).
///
/// # Safety
/// `iov` readable for `iovcnt` descriptors, each segment writable for its length, no two
/// segments overlapping each other or `src`; `src` readable for `len` bytes; nobody else
/// accesses the segments, nor writes the descriptors or `src`, during the call.
#[no_mangle]
pub unsafe extern "C" fn cachecopy_copy_to_iov(
    iov: *const libc::iovec,
    iovcnt: usize,
    src: *const c_void,
    len: usize,
    mode: ModeArg,
) -> usize {
    let Some(mode) = checked(mode, len, [src]) else {
        return 0;
    };
    // SAFETY: the caller's contract for `iov` and `iovcnt`. The shared view ends here: the
    // segments below are made from `iov` itself, not from this borrow.
    if unsafe { iov_checked(iov, iovcnt) }.is_none() {
        return 0;
    }
    let segs: &mut [IoVecMut<'_>] = if iovcnt == 0 {
        &mut []
    } else {
        // SAFETY: `iov` is non-null and readable for `iovcnt` descriptors (checked, and the
        // caller's contract); `IoVecMut` has `struct iovec`'s layout; each descriptor names a
        // writable segment, none overlapping another or `src`, with a non-null base when its
        // length is non-zero and a total within `isize` (checked). The exclusive borrow of the
        // descriptor array is a type-level claim only: `Dest::iovec` keeps a `*const` to the
        // descriptors and never writes them, and nobody writes them during the call (caller's
        // contract; two threads sharing one array would also share its segments, a data race
        // the contract excludes), so a `const struct iovec *` is never written through. The
        // pointer comes from C, not from a Rust shared reference.
        unsafe { core::slice::from_raw_parts_mut(iov.cast_mut().cast::<IoVecMut<'_>>(), iovcnt) }
    };
    let src: &[u8] = if len == 0 {
        &[]
    } else {
        // SAFETY: non-null, readable for `len <= isize::MAX` bytes, not overlapping any segment
        // and not written during the call (caller's contract, checks above).
        unsafe { core::slice::from_raw_parts(src.cast::<u8>(), len) }
    };
    copy_to_iov(src, segs, mode)
}

/// Copies `len` bytes from `src` to `dst` (as cachecopy_copy, fenced) and returns the RFC 1071
/// 32-bit partial sum of the bytes copied, as Linux's csum_and_copy: the ones'-complement sum of
/// the 16-bit words as loaded in native byte order (an odd last byte padded with zero). Partial
/// sums of consecutive even-length pieces add (with end-around carry); cachecopy_csum_fold turns
/// one into the checksum field.
///
/// Returns 0 and writes nothing when `mode` is not a cachecopy_mode, a pointer is NULL with
/// `len > 0`, or `len > PTRDIFF_MAX` (0 is also the sum of zero bytes: pass valid arguments).
///
/// # Safety
/// As `cachecopy_copy`.
#[no_mangle]
pub unsafe extern "C" fn cachecopy_csum_and_copy(
    dst: *mut c_void,
    src: *const c_void,
    len: usize,
    mode: ModeArg,
) -> u32 {
    let Some(mode) = checked(mode, len, [dst.cast_const(), src]) else {
        return 0;
    };
    // SAFETY: as in `cachecopy_copy`.
    unsafe { cachecopy::net::csum_and_copy_raw(dst.cast(), src.cast(), len, mode) }
}

/// Folds a 32-bit partial sum to 16 bits with end-around carries and complements it, as Linux's
/// csum_fold: the value to store (in native byte order, e.g. with memcpy) in an IP, TCP or UDP
/// checksum field; a header with its checksum in place folds to 0.
#[no_mangle]
pub extern "C" fn cachecopy_csum_fold(sum: u32) -> u16 {
    cachecopy::net::csum_fold(sum)
}

/// The size from which CACHECOPY_AUTO copies stream (the CPU's rule, the nt field of the
/// CACHECOPY_TUNE environment variable, or cachecopy_set_nt_threshold).
#[no_mangle]
pub extern "C" fn cachecopy_nt_threshold() -> usize {
    Plan::current().tuning().nt
}

/// Sets, for the whole process, the size from which CACHECOPY_AUTO copies stream: 0 streams
/// every CACHECOPY_AUTO copy, SIZE_MAX none. Calls in flight finish with the value they
/// started with. Each distinct setting allocates once, the first time (it is never freed):
/// not for a data path.
#[no_mangle]
pub extern "C" fn cachecopy_set_nt_threshold(bytes: usize) {
    // A threshold is any size: the plan always builds.
    let _ = tune::update(|t| t.nt = bytes);
}

/// The size from which CACHECOPY_AUTO fills stream (the fill_nt field of CACHECOPY_TUNE, else
/// the copy rule).
#[no_mangle]
pub extern "C" fn cachecopy_fill_nt_threshold() -> usize {
    Plan::current().tuning().fill_nt
}

/// Sets, for the whole process, the size from which CACHECOPY_AUTO fills stream (SIZE_MAX:
/// never); as cachecopy_set_nt_threshold.
#[no_mangle]
pub extern "C" fn cachecopy_set_fill_nt_threshold(bytes: usize) {
    let _ = tune::update(|t| t.fill_nt = bytes);
}

/// The backend this process runs streamed copies on, as a static NUL-terminated string:
/// "avx512", "avx2", "sse2", "neon" or "generic" (the stream field of CACHECOPY_TUNE overrides
/// the CPU's rule). Never free it.
#[no_mangle]
pub extern "C" fn cachecopy_backend() -> *const c_char {
    backend_name(Plan::current().tuning().engine.stream).as_ptr()
}

/// The static C name of `b`, the same text as [`Backend::name`].
fn backend_name(b: Backend) -> &'static CStr {
    match b {
        Backend::Generic => c"generic",
        Backend::Sse2 => c"sse2",
        Backend::Avx2 => c"avx2",
        Backend::Avx512 => c"avx512",
        Backend::Neon => c"neon",
        // `Backend` is non-exhaustive; a newer library's backend before this list learns it.
        _ => c"unknown",
    }
}

/// The library's version, "MAJOR.MINOR.PATCH", as a static NUL-terminated string.
#[no_mangle]
pub extern "C" fn cachecopy_version() -> *const c_char {
    const V: &CStr =
        match CStr::from_bytes_with_nul(concat!(env!("CARGO_PKG_VERSION"), "\0").as_bytes()) {
            Ok(v) => v,
            Err(_) => panic!("the version has no NUL inside"),
        };
    V.as_ptr()
}

#[cfg(test)]
mod tests;
