//! C-shaped `memmove` and `memset` of one plan, chosen once ([`c_entries`]): for a caller that
//! binds a function pointer once and calls it many times, as the preload library binds its
//! exported `memcpy`, `memmove` and `memset`.
//!
//! The crate's own calls read the published plan on every call past the inline classes and
//! jump through its table, because a call site cannot know the plan ahead. A C entry is made
//! for one plan variant (the temporal backend, whether the string-move or wide variants are
//! on, the small classes), so it reaches its kernel the way glibc's `memcpy` does once its
//! resolver has picked it: the small classes at the entry, then a direct jump into the kernel,
//! with no load of the plan and no indirect jump below `STREAM_MIN` (1 KiB). From there on each
//! call reads the published plan's `Auto` bound (as glibc's `memcpy` reads its non-temporal
//! threshold for large sizes) and, for the string-move and wide variants, its knobs; at the
//! bound and above it goes the way of [`memmove_raw`](crate::raw::memmove_raw) and
//! [`memset_raw`](crate::raw::memset_raw) in `Auto`.
//!
//! Because the choice is made once, the entries can afford small kernels the inline path
//! cannot (it would test for them on every call of every CPU): masked copies of 0-64 B on the
//! CPUs whose record says so (`entry_copy=masked`, [`EntryCopy`]), and every small-fill variant
//! of the record without the page-offset bound's load.
//!
//! Each backend's entries are instantiated here from the same generic kernels the tables use
//! (`kernel::moves::move_temporal`, `kernel::fill_temporal`), so an entry runs what its plan's
//! table runs.

use core::ffi::{c_int, c_void};

use crate::dispatch::engine::{Backend, Edges};
use crate::dispatch::plan::{self, index, Plan, MASKED_FILL_WINDOWS};
use crate::kernel::small::{self, EntryCopy, Small};
use crate::kernel::{Knobs, STREAM_MIN};
use crate::mode::Mode;
use crate::vector::Vector;

/// C's `memmove` (and `memcpy`, which glibc's x86_64 and aarch64 builds make a `memmove`):
/// copies `n` bytes from `src` to `dst`, the ranges possibly overlapping, and returns `dst`.
pub type MemmoveFn = unsafe extern "C" fn(*mut c_void, *const c_void, usize) -> *mut c_void;

/// C's `memset`: sets `n` bytes at `dst` to `(unsigned char)c` and returns `dst`.
pub type MemsetFn = unsafe extern "C" fn(*mut c_void, c_int, usize) -> *mut c_void;

/// The C-shaped entries of one plan's `Auto` calls: see [`c_entries`].
#[derive(Clone, Copy)]
pub struct CEntries {
    /// `memmove(dst, src, n)`: [`memmove_raw`](crate::raw::memmove_raw) in `Auto`.
    ///
    /// # Safety (of calling it)
    /// `src` readable and `dst` writable for `n` bytes (they may overlap), each within one
    /// allocated object; any pointers when `n == 0`.
    pub memmove: MemmoveFn,
    /// `memset(dst, c, n)`: [`memset_raw`](crate::raw::memset_raw) in `Auto` with `c as u8`.
    ///
    /// # Safety (of calling it)
    /// `dst` writable for `n` bytes within one allocated object; any pointer when `n == 0`.
    pub memset: MemsetFn,
}

impl core::fmt::Debug for CEntries {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("CEntries")
            .field("memmove", &(self.memmove as *const ()))
            .field("memset", &(self.memset as *const ()))
            .finish()
    }
}

/// The C-shaped `memmove` and `memset` of `plan`'s `Auto` calls, chosen once: `plan`'s small
/// classes (its `entry_copy` for copies, its `small` for fills) at the entry, its temporal
/// backend's kernel (with the string-move or wide variant where its record sets one) below the
/// `Auto` bound, and the crate's `Auto` path ([`memmove_raw`](crate::raw::memmove_raw),
/// [`memset_raw`](crate::raw::memset_raw)) from the bound up.
///
/// Below `STREAM_MIN` (1 KiB) an entry reads nothing; from there (and, for the string-move and
/// wide variants, past eight registers) each call reads the **published** plan's `Auto` bound
/// and knobs, as every call of the crate does. So the entries are exactly `plan`'s calls when
/// `plan` is the published one, which is what a caller binding them wants:
/// `c_entries(Plan::current())`, chosen again after [`publish`](crate::tune::publish). With
/// another plan published they still move every byte right, with that plan's thresholds.
///
/// Every entry runs on this CPU: a plan holds only what the CPU runs.
///
/// ```
/// use cachecopy::raw::c_entries;
/// use cachecopy::tune::Plan;
///
/// let e = c_entries(Plan::current());
/// let mut buf = *b"0123456789";
/// let p = buf.as_mut_ptr();
/// // SAFETY: both ranges inside `buf`; overlap is allowed.
/// let r = unsafe { (e.memmove)(p.add(2).cast(), p.cast(), 8) };
/// assert_eq!((r, &buf), (p.wrapping_add(2).cast(), b"0101234567"));
/// // SAFETY: `buf` is writable for 10 bytes.
/// unsafe { (e.memset)(p.cast(), i32::from(b'x'), 10) };
/// assert_eq!(&buf, b"xxxxxxxxxx");
/// ```
pub fn c_entries(plan: &Plan) -> CEntries {
    let t = plan.tuning();
    let set = backend_set(t.engine.temporal, t.engine.edges);
    let copy_sized = usize::from(t.rep_movsb != usize::MAX || t.wide_copy != usize::MAX);
    let fill_sized = usize::from(t.fill_rep != usize::MAX);
    let copies = match t.entry_copy {
        EntryCopy::Masked => COPY_MASKED,
        _ => COPY_PLAIN,
    };
    let fills = match t.small {
        Small::MaskedFills => FILL_MASKED,
        Small::AvxPairs => FILL_PAIRS,
        _ => FILL_PLAIN,
    };
    CEntries {
        memmove: set.memmove[usize::from(copies)][copy_sized],
        memset: set.memset[usize::from(fills)][fill_sized],
    }
}

/// One backend's entries, by small variant and by whether the knobs are read (`SIZED`).
struct Set {
    /// By `EntryCopy` (plain, masked), then `SIZED`.
    memmove: [[MemmoveFn; 2]; 2],
    /// By `Small` (plain, masked fills, AVX pairs), then `SIZED`.
    memset: [[MemsetFn; 2]; 3],
}

/// The entries of the temporal backend `b` with edge store `edges` (which only AVX-512 has two
/// of); the word backend's for a backend this target does not compile.
fn backend_set(b: Backend, edges: Edges) -> &'static Set {
    cfg_if::cfg_if! {
        if #[cfg(all(target_arch = "x86_64", target_feature = "sse2", not(cachecopy_integer_only)))] {
            match (b, edges) {
                (Backend::Sse2, _) => &sse2::SET,
                (Backend::Avx2, _) => &avx2::SET,
                (Backend::Avx512, Edges::Masked) => &avx512::SET,
                (Backend::Avx512, _) => &avx512_overlap::SET,
                _ => &generic::SET,
            }
        } else if #[cfg(all(target_arch = "aarch64", target_feature = "neon", not(cachecopy_integer_only)))] {
            let _ = edges;
            match b {
                Backend::Neon => &neon::SET,
                _ => &generic::SET,
            }
        } else {
            let _ = (b, edges);
            &generic::SET
        }
    }
}

/// The index of each small-copy variant in [`Set::memmove`].
const COPY_PLAIN: u8 = 0;
const COPY_MASKED: u8 = 1;

/// The index of each small-fill variant in [`Set::memset`].
const FILL_PLAIN: u8 = 0;
const FILL_MASKED: u8 = 1;
const FILL_PAIRS: u8 = 2;

/// The small-fill variant `v` (one of the `FILL_*` indices) and its page-offset bound.
const fn fill_variant(v: u8) -> (Small, usize) {
    match v {
        FILL_MASKED => (Small::MaskedFills, MASKED_FILL_WINDOWS),
        FILL_PAIRS => (Small::AvxPairs, 4096),
        _ => (Small::Plain, 0),
    }
}

/// A `memmove` of `n <= small::MAX` bytes with the plain classes.
///
/// # Safety
/// As [`CEntries::memmove`], `n <= small::MAX`.
#[inline(always)]
unsafe fn move_small(d: *mut c_void, s: *const c_void, n: usize) {
    // SAFETY: forwarded contract; every class loads before it stores (`small::move_`).
    unsafe { small::move_(d.cast(), s.cast(), n) }
}

/// A `memmove` of `n <= 64` bytes with one masked load and store where neither 64-byte window
/// leaves its page (a masked-off byte there would not fault, but the CPU resolves the
/// suppressed fault with a slow assist: the masked fills' guard), else the plain classes.
///
/// # Safety
/// As [`CEntries::memmove`], `n <= 64`; the CPU runs the masked class (`Facts::masks`).
#[cfg(all(
    target_arch = "x86_64",
    target_feature = "sse2",
    not(cachecopy_integer_only),
    not(miri)
))]
#[inline(always)]
unsafe fn move_masked(d: *mut c_void, s: *const c_void, n: usize) {
    let inside = |p: usize| (p & 4095) < MASKED_FILL_WINDOWS;
    // SAFETY: forwarded contract; the masked copy loads every byte before it stores any.
    unsafe {
        if inside(d as usize) & inside(s as usize) {
            crate::arch::masked::copy(d.cast(), s.cast(), n)
        } else {
            move_small(d, s, n)
        }
    }
}

/// The past-the-small-classes part of a move entry, when the bytes must go the crate's way
/// (from the `Auto` bound up): [`memmove_raw`](crate::raw::memmove_raw) in `Auto`.
///
/// # Safety
/// As [`CEntries::memmove`].
#[cold]
#[inline(never)]
unsafe extern "C" fn move_far(d: *mut c_void, s: *const c_void, n: usize) -> *mut c_void {
    // SAFETY: forwarded contract.
    unsafe { crate::moves::memmove_raw(d.cast(), s.cast(), n, Mode::Auto).cast() }
}

/// As [`move_far`], for fills.
///
/// # Safety
/// As [`CEntries::memset`].
#[cold]
#[inline(never)]
unsafe extern "C" fn set_far(d: *mut c_void, byte: u8, n: usize) -> *mut c_void {
    // SAFETY: forwarded contract.
    unsafe { crate::copy::memset_raw(d.cast(), byte, n, Mode::Auto).cast() }
}

/// One backend's entries: `backend!(module, register type, "target features")`. Each entry is
/// one function compiled with the backend's features, the small classes first and the kernel
/// inlined after them: a jump from one function of the crate to another may go through the
/// GOT in a shared library, an indirect jump more on the path the entries exist to shorten.
macro_rules! backend {
    ($name:ident, $v:ty $(, $feature:literal)?) => {
        mod $name {
            use super::*;

            /// A move past the small classes: below `STREAM_MIN` the kernel with no load (the
            /// knobs are read only by the sized variant's loop class), from there the published
            /// plan's `Auto` bound.
            ///
            /// # Safety
            /// As [`CEntries::memmove`]; the CPU runs this backend (its plan's).
            #[inline(always)]
            unsafe fn move_big<const SIZED: bool>(
                d: *mut c_void,
                s: *const c_void,
                n: usize,
            ) -> *mut c_void {
                let (dst, src) = (d.cast::<u8>(), s.cast::<u8>());
                // SAFETY: forwarded contract; the backend's features hold (the caller's); the
                // plan's knobs are its own, checked against this CPU when it was built.
                unsafe {
                    if n < STREAM_MIN && (!SIZED || n <= 8 * <$v>::BYTES) {
                        crate::kernel::moves::move_temporal::<$v, false>(dst, src, n, &Knobs::PLAIN);
                        return d;
                    }
                    let p = plan::current();
                    if n < STREAM_MIN || n < p.copy_below[index::AUTO] {
                        crate::kernel::moves::move_temporal::<$v, SIZED>(dst, src, n, &p.kernels.knobs);
                        return d;
                    }
                    move_far(d, s, n)
                }
            }

            /// As [`move_big`], for fills.
            ///
            /// # Safety
            /// As [`CEntries::memset`]; the CPU runs this backend.
            #[inline(always)]
            unsafe fn set_big<const SIZED: bool>(d: *mut c_void, byte: u8, n: usize) -> *mut c_void {
                let dst = d.cast::<u8>();
                // SAFETY: as `move_big`.
                unsafe {
                    if n < STREAM_MIN && (!SIZED || n <= 8 * <$v>::BYTES) {
                        crate::kernel::fill_temporal::<$v, false>(dst, byte, n, &Knobs::PLAIN);
                        return d;
                    }
                    let p = plan::current();
                    if n < STREAM_MIN || n < p.fill_below[index::AUTO] {
                        crate::kernel::fill_temporal::<$v, SIZED>(dst, byte, n, &p.kernels.knobs);
                        return d;
                    }
                    set_far(d, byte, n)
                }
            }

            /// `memmove` with the small copies `C` (`0` plain, `1` masked).
            ///
            /// # Safety
            /// As [`CEntries::memmove`]; the CPU runs this backend and the small copies.
            $(#[target_feature(enable = $feature)])?
            unsafe extern "C" fn memmove_e<const C: u8, const SIZED: bool>(
                d: *mut c_void,
                s: *const c_void,
                n: usize,
            ) -> *mut c_void {
                // SAFETY: forwarded contract; `small::MAX` is 64 where the masked class exists.
                unsafe {
                    if n <= small::MAX {
                        #[cfg(all(
                            target_arch = "x86_64",
                            target_feature = "sse2",
                            not(cachecopy_integer_only),
                            not(miri)
                        ))]
                        if C == COPY_MASKED {
                            move_masked(d, s, n);
                            return d;
                        }
                        move_small(d, s, n);
                        return d;
                    }
                    move_big::<SIZED>(d, s, n)
                }
            }

            /// `memset` with the small-fill variant `V` (a `FILL_*` index).
            ///
            /// # Safety
            /// As [`CEntries::memset`]; the CPU runs this backend and the variant.
            $(#[target_feature(enable = $feature)])?
            unsafe extern "C" fn memset_e<const V: u8, const SIZED: bool>(
                d: *mut c_void,
                c: c_int,
                n: usize,
            ) -> *mut c_void {
                let byte = c as u8;
                // SAFETY: forwarded contract; the variant's bound is the plan's
                // (`Plan::small_below`) for a variant the CPU runs.
                unsafe {
                    if n <= small::MAX {
                        let (variant, below) = const { fill_variant(V) };
                        small::fill(d.cast(), byte, n, below, variant);
                        return d;
                    }
                    set_big::<SIZED>(d, byte, n)
                }
            }

            pub(super) static SET: Set = Set {
                memmove: [
                    [memmove_e::<COPY_PLAIN, false>, memmove_e::<COPY_PLAIN, true>],
                    [memmove_e::<COPY_MASKED, false>, memmove_e::<COPY_MASKED, true>],
                ],
                memset: [
                    [memset_e::<FILL_PLAIN, false>, memset_e::<FILL_PLAIN, true>],
                    [memset_e::<FILL_MASKED, false>, memset_e::<FILL_MASKED, true>],
                    [memset_e::<FILL_PAIRS, false>, memset_e::<FILL_PAIRS, true>],
                ],
            };
        }
    };
}

backend!(generic, crate::arch::Word);

cfg_if::cfg_if! {
    if #[cfg(all(target_arch = "x86_64", target_feature = "sse2", not(cachecopy_integer_only)))] {
        backend!(sse2, crate::arch::Sse2, "sse2");
        backend!(avx2, crate::arch::Avx2, "avx2");
        backend!(avx512, crate::arch::Avx512, "avx512f,avx512bw");
        backend!(avx512_overlap, crate::vector::Overlap<crate::arch::Avx512>, "avx512f,avx512bw");
    } else if #[cfg(all(target_arch = "aarch64", target_feature = "neon", not(cachecopy_integer_only)))] {
        backend!(neon, crate::arch::Neon);
    }
}
