//! The interfaces every ISA leaf implements: [`Vector`] (load, store, stream one register) and
//! [`Checksum`] (the same register as a checksum accumulator).
//!
//! The copy and fill algorithm in [`crate::kernel`] is written once against [`Vector`], the
//! checksum loop against [`Checksum`]; SSE2, AVX2, AVX-512, NEON and the portable word backend
//! only say how to move and add one register. Everything is `#[inline(always)]` so that, once instantiated inside a
//! `#[target_feature]` entry point, the intrinsics inline into straight-line vector code.

/// One SIMD register (or machine word) worth of bytes.
///
/// # Safety
///
/// For implementors: `BYTES` must be the exact number of bytes `load`/`store`/`stream` touch,
/// and must be a power of two no larger than [`crate::arch::STREAM_LINE`]. `Half` must be a vector of `BYTES / 2` bytes
/// (or `Self` for the narrowest word, `BYTES == 8`).
pub(crate) unsafe trait Vector: Copy {
    /// Register width in bytes.
    const BYTES: usize;
    /// Whether a streaming store leaves the line out of every cache once fenced (x86 `movnt*`:
    /// yes; arm64 `stnp` is only a hint, so flush-cache copies must still clean streamed lines).
    const STREAM_BYPASSES_CACHE: bool;
    /// Whether `load_prefix`/`store_prefix` are real (AVX-512 masked moves).
    const MASKED: bool = false;

    /// The vector of half this width, used for the small-size cascade.
    type Half: Vector;

    /// Loads `BYTES` bytes from `src`, which need not be aligned.
    ///
    /// # Safety
    /// `src..src + BYTES` must be readable.
    unsafe fn load(src: *const u8) -> Self;

    /// A vector with every byte equal to `byte`.
    ///
    /// # Safety
    /// The CPU must support this backend (always true inside its `#[target_feature]` entry).
    unsafe fn splat(byte: u8) -> Self;

    /// Stores to `dst`, which need not be aligned.
    ///
    /// # Safety
    /// `dst..dst + BYTES` must be writable.
    unsafe fn store(self, dst: *mut u8);

    /// Stores to `dst`, which is aligned to `BYTES`.
    ///
    /// # Safety
    /// As [`Vector::store`], and `dst` must be `BYTES`-aligned.
    #[inline(always)]
    unsafe fn store_aligned(self, dst: *mut u8) {
        // SAFETY: the caller upholds `store`'s contract, which is weaker.
        unsafe { self.store(dst) }
    }

    /// A streaming (non-temporal) store to `BYTES`-aligned `dst`. The caller fences before
    /// returning to safe code.
    ///
    /// # Safety
    /// As [`Vector::store_aligned`], and a store fence ([`crate::arch::stream_fence`]) must run
    /// before any other thread may read the bytes or the copy returns.
    unsafe fn stream(self, dst: *mut u8);

    /// The register whose `i`-th 8-byte word, in memory order (`u64::from_ne_bytes` of those
    /// bytes), is `word(i)`, for `i` in `0..BYTES / 8`: built in registers, never through memory
    /// (a load of bytes just stored by narrower stores cannot be forwarded and waits for them to
    /// commit, behind every queued streaming store: `kernel::gather`).
    ///
    /// # Safety
    /// The CPU must support this backend.
    unsafe fn from_words(word: impl Fn(usize) -> u64) -> Self;

    /// Loads the first `n < BYTES` bytes from `src` (the rest zero) without touching `src + n..`.
    ///
    /// # Safety
    /// Only called when `MASKED`; `src..src + n` readable.
    #[inline(always)]
    unsafe fn load_prefix(_src: *const u8, _n: usize) -> Self {
        unreachable!("load_prefix on a vector without masked moves")
    }

    /// Stores the first `n < BYTES` bytes to `dst` without touching `dst + n..`.
    ///
    /// # Safety
    /// Only called when `MASKED`; `dst..dst + n` writable.
    #[inline(always)]
    unsafe fn store_prefix(self, _dst: *mut u8, _n: usize) {
        unreachable!("store_prefix on a vector without masked moves")
    }
}

/// A [`Vector`] used as an accumulator of 64-bit lanes for the Internet checksum
/// ([`crate::kernel::sum`]). The defaults spill to memory and add 64-bit words with end-around
/// carry: correct on any register, slow; leaves override them with two adds per register.
///
/// # Safety
///
/// For implementors: the methods keep the congruence documented on [`Checksum::csum_add`].
pub(crate) unsafe trait Checksum: Vector {
    /// An accumulator holding zero.
    ///
    /// # Safety
    /// The CPU must support this backend.
    #[inline(always)]
    unsafe fn csum_zero() -> Self {
        // SAFETY: forwarded contract.
        unsafe { Self::splat(0) }
    }

    /// Adds the bytes of `v` to the accumulator `acc` so that [`Checksum::csum_reduce`] stays
    /// congruent, modulo 2^16 - 1, to the sum of the native-endian 16-bit words of every `v`
    /// added, and is zero only if they all were. Lanes must not wrap for at least
    /// [`CSUM_CHUNK`] bytes of additions.
    ///
    /// # Safety
    /// The CPU must support this backend.
    #[inline(always)]
    unsafe fn csum_add(acc: Self, v: Self) -> Self {
        let (mut a, mut b) = ([0u64; 8], [0u64; 8]);
        // SAFETY: `BYTES <= 64` fits both buffers; `load` reads back what `store` wrote.
        unsafe {
            acc.store(a.as_mut_ptr().cast());
            v.store(b.as_mut_ptr().cast());
            a[0] = b[..Self::BYTES / 8].iter().fold(a[0], |s, &w| add64(s, w));
            Self::load(a.as_ptr().cast())
        }
    }

    /// The accumulator as one 64-bit end-around-carry sum.
    ///
    /// # Safety
    /// The CPU must support this backend.
    #[inline(always)]
    unsafe fn csum_reduce(acc: Self) -> u64 {
        let mut a = [0u64; 8];
        // SAFETY: `BYTES <= 64` fits the buffer.
        unsafe { acc.store(a.as_mut_ptr().cast()) };
        a[..Self::BYTES / 8].iter().fold(0, |s, &w| add64(s, w))
    }
}

/// The most bytes summed into one accumulator before it is reduced: with two 32-bit halves added
/// to a 64-bit lane per register, a lane wraps after 2^31 registers, far beyond 1 GiB.
pub(crate) const CSUM_CHUNK: usize = 1 << 30;

/// One's-complement (end-around carry) 64-bit addition: congruent modulo 2^64 - 1, hence modulo
/// 2^16 - 1, and zero only when both operands are.
#[inline(always)]
pub(crate) fn add64(a: u64, b: u64) -> u64 {
    let (s, carry) = a.overflowing_add(b);
    s + carry as u64
}

/// Scalars used below 16 bytes, where a vector would be wider than the data.
pub(crate) trait Scalar: Copy {
    const BYTES: usize;
    fn splat(byte: u8) -> Self;
}

macro_rules! scalar {
    ($($t:ty),*) => {$(
        impl Scalar for $t {
            const BYTES: usize = core::mem::size_of::<$t>();
            #[inline(always)]
            fn splat(byte: u8) -> Self {
                <$t>::from_ne_bytes([byte; core::mem::size_of::<$t>()])
            }
        }
    )*};
}
scalar!(u8, u16, u32, u64, u128);

/// `V` with its byte-masked moves turned off: copies shorter than one register and the partial
/// lines of streamed copies use overlapping unmasked moves of `V::Half` and narrower instead
/// ([`Edges::Overlap`](crate::tune::Edges::Overlap) on AVX-512; `lab/findings/engine.md` says why). Every
/// other operation is `V`'s own.
#[derive(Clone, Copy)]
#[repr(transparent)]
// Only the AVX-512 backend has masked moves to turn off.
#[cfg_attr(
    not(all(
        target_arch = "x86_64",
        target_feature = "sse2",
        not(cachecopy_integer_only)
    )),
    allow(dead_code)
)]
pub(crate) struct Overlap<V>(V);

// SAFETY: every method is `V`'s, so it moves `V::BYTES` bytes; `MASKED` is false, so the
// masked-move defaults (which panic) are never called; `Half` is `V::Half`.
unsafe impl<V: Vector> Vector for Overlap<V> {
    const BYTES: usize = V::BYTES;
    const STREAM_BYPASSES_CACHE: bool = V::STREAM_BYPASSES_CACHE;
    const MASKED: bool = false;
    type Half = V::Half;

    #[inline(always)]
    unsafe fn load(src: *const u8) -> Self {
        // SAFETY: forwarded contract.
        Overlap(unsafe { V::load(src) })
    }
    #[inline(always)]
    unsafe fn splat(byte: u8) -> Self {
        // SAFETY: forwarded contract.
        Overlap(unsafe { V::splat(byte) })
    }
    #[inline(always)]
    unsafe fn store(self, dst: *mut u8) {
        // SAFETY: forwarded contract.
        unsafe { self.0.store(dst) }
    }
    #[inline(always)]
    unsafe fn store_aligned(self, dst: *mut u8) {
        // SAFETY: forwarded contract.
        unsafe { self.0.store_aligned(dst) }
    }
    #[inline(always)]
    unsafe fn stream(self, dst: *mut u8) {
        // SAFETY: forwarded contract (the caller fences).
        unsafe { self.0.stream(dst) }
    }
    #[inline(always)]
    unsafe fn from_words(word: impl Fn(usize) -> u64) -> Self {
        // SAFETY: forwarded contract.
        Overlap(unsafe { V::from_words(word) })
    }
}

// SAFETY: `V`'s own accumulator operations, which keep the congruence.
unsafe impl<V: Checksum> Checksum for Overlap<V> {
    #[inline(always)]
    unsafe fn csum_zero() -> Self {
        // SAFETY: forwarded contract.
        Overlap(unsafe { V::csum_zero() })
    }
    #[inline(always)]
    unsafe fn csum_add(acc: Self, v: Self) -> Self {
        // SAFETY: forwarded contract.
        Overlap(unsafe { V::csum_add(acc.0, v.0) })
    }
    #[inline(always)]
    unsafe fn csum_reduce(acc: Self) -> u64 {
        // SAFETY: forwarded contract.
        unsafe { V::csum_reduce(acc.0) }
    }
}
