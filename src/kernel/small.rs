//! The small-call path: copies and fills short enough to be done at the call site, with the
//! register every CPU of the target has, before the backend table is consulted.
//!
//! A short `memcpy` is a handful of loads and stores; what it costs beyond them is the way in.
//! glibc reaches its size classes through one indirect jump (the PLT) and a compare ladder; LLVM
//! libc's `inline_memcpy` inlines its classes and reaches no dispatcher at all. Ours used to pay
//! the load of the active table, its null check, the indirect call and then the kernel's own
//! ladder, plus (for `Auto`) the mode's resolution, at every size. Here the classes that need no
//! loop are inlined into the caller on the baseline register:
//!
//! | target                                                    | register                     | inlined up to |
//! |-----------------------------------------------------------|------------------------------|---------------|
//! | x86_64 (SSE2 is in every x86_64 ABI)                      | `__m128i`                    | 64 B          |
//! | aarch64 with NEON                                         | `uint8x16_t`                 | 64 B          |
//! | `--cfg cachecopy_integer_only`, soft-float, other targets | the word (`u64`, an `x` pair on aarch64) | 4 words |
//!
//! The classes are [`temporal`]'s for that register `W`: below 16 bytes two overlapping scalar
//! moves (8, 4, 2 bytes, or one byte), two overlapping registers up to `2W`, four up to `4W`,
//! every register loaded before the first store. These are glibc's `memmove-vec-unaligned-erms`
//! classes (overlapping pairs for 4-7, 8-15, 16-31 and 32-63 bytes) and LLVM libc's
//! `inline_memcpy` head-and-tail classes. The inline path stops at four registers because that
//! is where it stops needing no more stores than the widest register behind the table: from 65
//! bytes SSE2 needs eight 16-byte stores where AVX2 and glibc need four 32-byte ones, and into
//! a cold destination, where every store waits in the store queue for its line, the eight ran
//! 0.82-0.85x of glibc at 96-128 B (Zen 3) while the table's four ran at 0.98-1.02x. Hot, the
//! inline eight won (1.1-1.2x); the rule keeps the cold case, which a network stack's transmit
//! buffers and an allocator's fresh blocks are. docs/small-calls.md has the figures.
//!
//! Every mode but `FlushCache` stores this few bytes with ordinary stores (streaming starts at
//! [`STREAM_MIN`](super::STREAM_MIN), far above [`MAX`]), so the inline path is right for
//! `Temporal`, `NonTemporal` and `Auto` alike and the mode costs no work: `Auto`'s threshold is
//! not even loaded. `FlushCache` must write every line back, which the table does.
//!
//! Only the entry points that dispatch ([`crate::copy_raw`], [`crate::fill_raw`],
//! [`crate::move_raw`] with `copy_within` and `Batch::copy_within`, and their unfenced forms)
//! take this path (moves may, since every class loads before it stores: [`move_`]).
//! `copy_with(backend, ..)`, `copy_with_engine` and `copy_within_with_engine` run exactly the
//! requested backend at every size, so the backends stay comparable.

use super::{temporal, ByteSource, Mem, Splat, STREAM_MIN};

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

/// The longest copy or fill done at the call site: four baseline registers (see the module
/// documentation for why not eight).
pub(crate) const MAX: usize = 4 * <Base as crate::vector::Vector>::BYTES;
const _: () = assert!(MAX < STREAM_MIN);

/// Copies `len <= MAX` bytes with the baseline register's straight-line classes.
///
/// # Safety
/// `src..src + len` readable, `dst..dst + len` writable, the two not overlapping; `len <= MAX`.
#[inline(always)]
pub(crate) unsafe fn copy(dst: *mut u8, src: *const u8, len: usize) {
    debug_assert!(len <= MAX);
    // SAFETY: forwarded contract; `Base` needs no target feature beyond the target's baseline,
    // and with `len <= 4 * W` `temporal` takes only its loop-free classes.
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

/// Sets `len <= MAX` bytes to `byte` with the baseline register's straight-line classes.
///
/// # Safety
/// `dst..dst + len` writable; `len <= MAX`.
#[inline(always)]
pub(crate) unsafe fn fill(dst: *mut u8, byte: u8, len: usize) {
    debug_assert!(len <= MAX);
    // SAFETY: as `copy`, with a splatted byte for a source.
    unsafe { classes(dst, Splat(byte), len) }
}

/// # Safety
/// As [`copy`], for any [`ByteSource`].
#[inline(always)]
unsafe fn classes<S: ByteSource>(dst: *mut u8, src: S, len: usize) {
    // SAFETY: forwarded contract.
    unsafe { temporal::<Base, S>(dst, src, len) }
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
                unsafe { fill(dst.as_mut_ptr().add(off + 1), 0x5a, len) };
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
