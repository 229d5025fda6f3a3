//! The small-call path: copies and fills short enough to be done at the call site, with the
//! register every CPU of the target has, before the backend table is consulted.
//!
//! A short `memcpy` is a handful of loads and stores; what it costs beyond them is the way in.
//! glibc reaches its size classes through one indirect jump (the PLT) and a compare ladder; LLVM
//! libc's `inline_memcpy` inlines its classes and reaches no dispatcher at all. Here the classes
//! that need no loop are inlined into the caller on the baseline register, so a short call pays
//! neither the table's indirect call nor the mode's resolution:
//!
//! | target                                                    | register                     | inlined up to |
//! |-----------------------------------------------------------|------------------------------|---------------|
//! | x86_64 (SSE2 is in every x86_64 ABI)                      | `__m128i`                    | 64 B          |
//! | aarch64 with NEON                                         | `uint8x16_t`                 | 64 B          |
//! | `--cfg cachecopy_integer_only`, soft-float, other targets | the word (`u64`, an `x` pair on aarch64) | 4 words |
//!
//! The plain classes ([`classes`]) are built for sizes that change every call: overlapping
//! windows whose offsets are computed from the length rather than picked by compares (four
//! 4-byte words for 4-15 bytes, three bytes below 4, a pair of registers up to `2W`, four up to
//! `4W`), every register loaded before the first store. Where the per-CPU record says so
//! (`dispatch::tune::Small`, an AVX-512 CPU measured to gain from it), fills take one byte-masked
//! store instead, with no compare between lengths at all (`arch::x86_64::masked`, inline
//! assembly, so the call site needs no target feature); copies and moves never do. lab/findings/small-calls.md, "Sizes that change every call", has the runs.
//!
//! The inline path stops at four registers because that is where it stops needing no more
//! stores than the widest register behind the table: past it SSE2 needs twice the stores of
//! AVX2 and glibc, and into a cold destination, where every store waits in the store queue for
//! its line, that lost to them where it won hot. The rule keeps the cold case, which a network
//! stack's transmit buffers and an allocator's fresh blocks are (lab/findings/small-calls.md has the
//! figures).
//!
//! Every mode but `FlushCache` stores this few bytes with ordinary stores (streaming starts at
//! [`STREAM_MIN`], far above [`MAX`]), so the inline path is right for
//! `Temporal`, `NonTemporal` and `Auto` alike and the mode costs no work: `Auto`'s threshold is
//! not even loaded. `FlushCache` must write every line back, which the table does.
//!
//! Only the entry points that dispatch ([`crate::copy_raw`], [`crate::fill_raw`],
//! [`crate::move_raw`] with `copy_within` and `Batch::copy_within`, and their unfenced forms)
//! take this path (moves may, since every class loads before it stores: [`move_`]).
//! `copy_with(backend, ..)`, `copy_with_engine` and `copy_within_with_engine` run exactly the
//! requested backend at every size, so the backends stay comparable.

use core::fmt;

use super::{ByteSource, Mem, Splat, STREAM_MIN};
use crate::vector::Vector;

cfg_if::cfg_if! {
    if #[cfg(all(target_arch = "x86_64", target_feature = "sse2", not(cachecopy_integer_only)))] {
        /// The baseline register: SSE2, in every hard-float x86_64 ABI.
        type Base = crate::arch::Sse2;
    } else if #[cfg(all(target_arch = "aarch64", target_feature = "neon", not(cachecopy_integer_only)))] {
        /// The baseline register: one NEON `q` register, in every arm64 hard-float ABI.
        type Base = core::arch::aarch64::uint8x16_t;
    } else {
        /// No vector register may be used: the `Generic` backend's word.
        type Base = crate::arch::Word;
    }
}

/// How the dispatched entry points fill 0 to 64 bytes at the call site (`fill_raw` and every
/// entry built on it; copies and moves always take the plain classes): see
/// `lab/findings/small-calls.md` for the runs behind each CPU's choice.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Small {
    /// Size classes on the baseline register (SSE2 on x86_64, NEON on aarch64, the word
    /// elsewhere): a few compares pick the class, each then a straight line of loads and
    /// stores.
    Plain,
    /// Fills take one AVX-512 byte-masked store for every length from 0 to 64 bytes (no
    /// compare between those lengths, so nothing to mispredict when the size changes every
    /// call); copies keep the plain classes (a masked load waits for earlier stores into its
    /// page, so a copy out of bytes just written, a header built on the stack, ran slower).
    /// Needs AVX-512 F and BW and BMI2; inline assembly at the call site, so the caller needs
    /// no target feature.
    MaskedFills,
    /// Fills of 33 to 64 bytes take two overlapping 32-byte AVX stores (glibc's AVX2 `memset`
    /// shape) where the plain classes take four 16-byte ones; the others keep the plain
    /// classes, and so do copies and moves. Needs AVX2; inline assembly at the call site.
    AvxPairs,
}

impl Small {
    /// Every choice.
    pub(crate) const ALL: [Small; 3] = [Small::Plain, Small::MaskedFills, Small::AvxPairs];

    /// `"plain"`, `"masked-fills"` or `"avx-pairs"`, as `CACHECOPY_TUNE`'s `small=` spells
    /// them.
    pub fn name(self) -> &'static str {
        match self {
            Small::Plain => "plain",
            Small::MaskedFills => "masked-fills",
            Small::AvxPairs => "avx-pairs",
        }
    }

    /// The choice with this name (ASCII case ignored).
    pub fn from_name(name: &str) -> Option<Small> {
        Small::ALL
            .into_iter()
            .find(|s| s.name().eq_ignore_ascii_case(name))
    }
}

impl fmt::Display for Small {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How the C-shaped entries ([`crate::raw::c_entries`]: the preload library's `memcpy` and
/// `memmove`) copy 0 to 64 bytes. The crate's own calls always take the plain classes: the
/// test that would choose another variant would sit on every call site of every CPU, while the
/// C entries are chosen once per plan (see `lab/findings/small-calls.md`, "Masked copies on
/// Zen 4").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum EntryCopy {
    /// The baseline register's size classes, as every call of the crate.
    Plain,
    /// One AVX-512 byte-masked load and one masked store for every length from 0 to 64 bytes,
    /// where neither 64-byte window leaves its 4 KiB page (else the plain classes). Needs
    /// AVX-512 F and BW and BMI2; inline assembly, so the entry needs no target feature.
    Masked,
}

impl EntryCopy {
    /// Every choice.
    pub(crate) const ALL: [EntryCopy; 2] = [EntryCopy::Plain, EntryCopy::Masked];

    /// `"plain"` or `"masked"`, as `CACHECOPY_TUNE`'s `entry_copy=` spells them.
    pub fn name(self) -> &'static str {
        match self {
            EntryCopy::Plain => "plain",
            EntryCopy::Masked => "masked",
        }
    }

    /// The choice with this name (ASCII case ignored).
    pub fn from_name(name: &str) -> Option<EntryCopy> {
        EntryCopy::ALL
            .into_iter()
            .find(|s| s.name().eq_ignore_ascii_case(name))
    }
}

impl fmt::Display for EntryCopy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The longest copy or fill done at the call site: four baseline registers (see the module
/// documentation for why not eight).
pub(crate) const MAX: usize = 4 * Base::BYTES;
const _: () = assert!(MAX < STREAM_MIN);

/// Whether this fill takes the plan's small-fill variant: one compare of the destination's
/// offset in its 4 KiB page with the plan's bound `below` (`Plan::small_below`), which is 0
/// unless the plan chose a variant this CPU runs (then every fill passes, or for masked fills
/// those whose 64-byte window stays in its page). One load and one compare: this test is on
/// every short fill of every CPU, and the variant itself is read only past it. Only on x86_64
/// builds with vector registers, not under Miri (which runs no assembly).
#[cfg(all(
    target_arch = "x86_64",
    target_feature = "sse2",
    not(cachecopy_integer_only),
    not(miri)
))]
#[inline(always)]
fn variant(dst: *const u8, below: usize) -> bool {
    (dst as usize & 4095) < below
}

/// Copies `len <= MAX` bytes with the baseline register's straight-line classes. Copies never
/// take the masked class: a masked load waits for earlier stores into its page, and the test
/// for it cost every plain copy (lab/findings/small-calls.md, "Fixed sizes and mixes").
///
/// # Safety
/// `src..src + len` readable, `dst..dst + len` writable, the two not overlapping; `len <= MAX`.
#[inline(always)]
pub(crate) unsafe fn copy(dst: *mut u8, src: *const u8, len: usize) {
    debug_assert!(len <= MAX);
    // SAFETY: forwarded contract; `Base` needs no target feature beyond the target's baseline.
    unsafe { classes(dst, Mem(src), len) }
}

/// Moves `len <= MAX` bytes whose ranges may overlap (`memmove`), with the same classes as
/// [`copy`]: each of them loads every byte it moves before its first store (two overlapping
/// scalars, two or four overlapping registers from both ends; one byte is one load and one
/// store), so no overlap, whatever its distance or direction, can make a store overwrite a
/// source byte not yet loaded. That is glibc's `memmove` shape for these sizes; no class needs a
/// move variant. tests/moves.rs runs every length to 1 KiB at every distance up to 256 in both
/// directions through `move_raw`.
///
/// # Safety
/// `src..src + len` readable, `dst..dst + len` writable (they may overlap); `len <= MAX`.
#[inline(always)]
pub(crate) unsafe fn move_(dst: *mut u8, src: *const u8, len: usize) {
    debug_assert!(len <= MAX);
    // SAFETY: as `copy`; overlap is allowed because every class loads before it stores (above).
    unsafe { classes(dst, Mem(src), len) }
}

/// Sets `len <= MAX` bytes to `byte`: the plan's small-fill variant where it has one and
/// `below` admits the destination ([`variant`]): one masked store (`Small::MaskedFills`), or
/// for 33-64 bytes two 32-byte AVX stores (`Small::AvxPairs`); else the baseline register's
/// straight-line classes.
///
/// # Safety
/// `dst..dst + len` writable; `len <= MAX`; `below` and `small` a plan's (`small_below`,
/// `small`): `below` 0 unless the CPU runs `small`, and at most `4096 - 63` for masked fills.
#[inline(always)]
#[allow(unused_variables)] // `below` and `small`, in builds without the variants
pub(crate) unsafe fn fill(dst: *mut u8, byte: u8, len: usize, below: usize, small: Small) {
    debug_assert!(len <= MAX);
    // SAFETY: as `copy`, with a splatted byte for a source; a variant only where the CPU runs
    // it (the plan's), the masked store only where its 64-byte window stays in the
    // destination's page, for `len <= MAX = 64`; the pair for `32 < len <= 64`.
    unsafe {
        #[cfg(all(
            target_arch = "x86_64",
            target_feature = "sse2",
            not(cachecopy_integer_only),
            not(miri)
        ))]
        if variant(dst, below) {
            match small {
                Small::MaskedFills => return crate::arch::masked::fill(dst, byte, len),
                Small::AvxPairs if len > 32 => return crate::arch::pair::fill(dst, byte, len),
                _ => {}
            }
        }
        classes(dst, Splat(byte), len)
    }
}

/// The plain classes for `len <= MAX = 4W` (`W` the baseline register's width), with few
/// compares, so that a size that changes every call has few to mispredict (LLVM libc's and
/// glibc's classes, merged below 16 bytes where one overlapping shape covers several):
/// - `2W..=4W`: four registers at `0`, `W`, `len - 2W` and `len - W`;
/// - `W..=2W`: the first and the last register;
/// - `4..W`: four 4-byte words at `0`, `d`, `len - 4 - d` and `len - 4`, with
///   `d = (len / 8) * 4` computed, not branched on (8- and 4-byte pairs were one compare more,
///   which a fleet's mix of sizes, most of them below 16 bytes, mispredicts);
/// - `1..4`: the bytes at `0`, `len / 2` and `len - 1`;
/// - `0`: nothing.
///
/// The compares in the order that mispredicts least on the fleets' size mixes (most calls below
/// `2W`, few above): `len <= 2W` first, which also leaves the four registers one compare from
/// the entry, then `len >= W`, then the short classes from the smallest up.
///
/// Every byte of `0..len` lies in one of the windows and every window lies in `0..len`; every
/// class loads all it moves before its first store, so overlapping ranges move right too.
/// lab/findings/small-calls.md, "Sizes that change every call" and "Fixed sizes and mixes", has the runs
/// behind each choice.
///
/// # Safety
/// As [`copy`] (overlap allowed), for any [`ByteSource`].
#[inline(always)]
unsafe fn classes<S: ByteSource>(dst: *mut u8, src: S, len: usize) {
    let w = Base::BYTES;
    debug_assert!(len <= 4 * w);
    // SAFETY: (whole body) the four registers lie in `0..len` for `2W < len <= 4W` and cover it
    // since `len - 2W <= 2W`; the pair lies in it for `W <= len <= 2W` and covers it. With
    // `4 <= len < W <= 16`, `d <= len - 4` (`d` is 0 below 8, 4 below 16), so every 4-byte
    // window lies in `0..len`, and `[0, d + 4)` with `[len - 4 - d, len)` covers it since
    // `len - 4 - d <= d + 4`. The bytes at `0`, `len / 2`, `len - 1` lie in `0..len` for
    // `len >= 1` and cover it for `len <= 3`.
    unsafe {
        if len <= 2 * w {
            if len >= w {
                let a = src.vector::<Base>(0);
                let e = src.vector::<Base>(len - w);
                a.store(dst);
                e.store(dst.add(len - w));
            } else if len == 0 {
            } else if len < 4 {
                let a = src.scalar::<u8>(0);
                let b = src.scalar::<u8>(len / 2);
                let c = src.scalar::<u8>(len - 1);
                put(dst, 0, a);
                put(dst, len / 2, b);
                put(dst, len - 1, c);
            } else {
                let d = len / 8 * 4;
                let a = src.scalar::<u32>(0);
                let b = src.scalar::<u32>(d);
                let c = src.scalar::<u32>(len - 4 - d);
                let e = src.scalar::<u32>(len - 4);
                put(dst, 0, a);
                put(dst, d, b);
                put(dst, len - 4 - d, c);
                put(dst, len - 4, e);
            }
        } else {
            let a = src.vector::<Base>(0);
            let b = src.vector::<Base>(w);
            let c = src.vector::<Base>(len - 2 * w);
            let e = src.vector::<Base>(len - w);
            a.store(dst);
            b.store(dst.add(w));
            c.store(dst.add(len - 2 * w));
            e.store(dst.add(len - w));
        }
    }
}

/// Stores `v` at `dst + off`, unaligned.
///
/// # Safety
/// `dst + off .. dst + off + size_of::<T>()` writable.
#[inline(always)]
unsafe fn put<T: Copy>(dst: *mut u8, off: usize, v: T) {
    // SAFETY: forwarded contract.
    unsafe { dst.add(off).cast::<T>().write_unaligned(v) }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every length of the inline path at every offset within a line, against a byte loop;
    /// the bytes either side of the destination stay untouched.
    #[test]
    fn classes_match_a_byte_loop() {
        let offsets: &[usize] = if cfg!(miri) {
            &[0, 5, 15]
        } else {
            &[0, 1, 5, 15, 24, 31, 63]
        };
        let mut src = [0u8; MAX + 64];
        for (i, b) in src.iter_mut().enumerate() {
            *b = (i * 7 + 3) as u8;
        }
        for len in 0..=MAX {
            for &off in offsets {
                let mut dst = [0xeeu8; MAX + 64 + 2];
                // SAFETY: `off + len + 1 <= MAX + 64 + 2` and `off + len <= src.len()`.
                unsafe { copy(dst.as_mut_ptr().add(off + 1), src.as_ptr().add(off), len) };
                assert_eq!(
                    &dst[off + 1..off + 1 + len],
                    &src[off..off + len],
                    "copy {len} at {off}"
                );
                assert!(dst[..off + 1]
                    .iter()
                    .chain(&dst[off + 1 + len..])
                    .all(|&b| b == 0xee));
                let mut dst = [0xeeu8; MAX + 64 + 2];
                // SAFETY: as above.
                unsafe { fill(dst.as_mut_ptr().add(off + 1), 0x5a, len, 0, Small::Plain) };
                assert!(
                    dst[off + 1..off + 1 + len].iter().all(|&b| b == 0x5a),
                    "fill {len} at {off}"
                );
                assert!(dst[..off + 1]
                    .iter()
                    .chain(&dst[off + 1 + len..])
                    .all(|&b| b == 0xee));
            }
        }
    }
}
