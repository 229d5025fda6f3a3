//! The one checksum loop: RFC 1071 sum of `src`, optionally copying every byte to a destination
//! as it goes (each source byte is loaded once, summed and stored from the same register).
//!
//! Generic over the register ([`Checksum`], which each leaf implements) and the
//! [`Sink`] (no destination, ordinary stores, streaming stores). Short spans (and plain sums on
//! registers narrower than 32 bytes) go through [`short`]: two carry chains in general-purpose
//! registers (a fused copy: 128-bit accumulators, [`short_stored`]). Shape of a longer span:
//! - the bytes before the first `V::BYTES`-aligned destination address (source address for a
//!   plain sum) and the bytes after the last whole register: [`short`]'s
//!   straight-line steps (AVX-512 with masked edges: one masked register each);
//! - between them, whole registers, four per iteration into four accumulators, merged in
//!   registers and reduced once.
//!
//! The copy kernel's overlapping small-size moves would sum some bytes twice, so nothing here
//! sums a byte twice: every byte is summed exactly once (a short tail reloads the bytes before
//! it only to shift them out) and every access stays inside both buffers.
//! Words are native-endian 16-bit pairs counted from the start of the span; a part that starts at
//! an odd offset is summed on its own and byte-rotated in ([`block_add`], Linux's rule).
//!
//! Streaming copies use the copy kernel's discipline: the partial lines at both ends with ordinary
//! stores, whole lines streamed, never one line both ways, a fence before returning.

use super::STREAM_MIN;
use crate::arch::{self, STREAM_LINE};
use crate::cpu::FlushOp;
use crate::vector::{add64, Checksum, Vector, CSUM_CHUNK};

/// Where the summed bytes go.
pub(crate) trait Sink: Copy {
    /// Whether the sink stores the bytes (false only for [`Discard`]): [`short`] takes its
    /// carry chains only for a plain sum.
    const STORES: bool = true;
    /// The address the register loop aligns to (`None`: none, align the source).
    fn addr(self) -> Option<usize>;
    /// # Safety
    /// `off..off + V::BYTES` inside the destination, `V::BYTES`-aligned there.
    unsafe fn vector<V: Vector>(self, off: usize, v: V);
    /// # Safety
    /// `V::MASKED`, `off..off + n` inside the destination.
    unsafe fn prefix<V: Vector>(self, off: usize, v: V, n: usize);
    /// # Safety
    /// `off..off + size_of::<T>()` inside the destination.
    unsafe fn scalar<T: Copy>(self, off: usize, v: T);
    /// # Safety
    /// `off` within the destination.
    unsafe fn skip(self, off: usize) -> Self;
}

/// Sum only.
#[derive(Clone, Copy)]
pub(crate) struct Discard;

/// Stores to this destination: ordinary ones ([`Plain`]), or streaming stores of whole lines to
/// a line-aligned destination ([`Stream`]). A streamed span is whole lines from a line-aligned
/// address, so it has no partial registers: a `Stream`'s `prefix` and `scalar` exist for the
/// trait, store as `Plain` does, and are never reached.
#[derive(Clone, Copy)]
pub(crate) struct To<const STREAM: bool>(*mut u8);

/// Ordinary stores to this destination.
pub(crate) type Plain = To<false>;

/// Streaming stores of whole lines to this line-aligned destination.
type Stream = To<true>;

impl<const STREAM: bool> To<STREAM> {
    pub(crate) const fn new(dst: *mut u8) -> Self {
        To(dst)
    }
}

impl Sink for Discard {
    const STORES: bool = false;
    fn addr(self) -> Option<usize> {
        None
    }
    #[inline(always)]
    unsafe fn vector<V: Vector>(self, _: usize, _: V) {}
    #[inline(always)]
    unsafe fn prefix<V: Vector>(self, _: usize, _: V, _: usize) {}
    #[inline(always)]
    unsafe fn scalar<T: Copy>(self, _: usize, _: T) {}
    #[inline(always)]
    unsafe fn skip(self, _: usize) -> Self {
        self
    }
}

impl<const STREAM: bool> Sink for To<STREAM> {
    fn addr(self) -> Option<usize> {
        Some(self.0 as usize)
    }
    #[inline(always)]
    unsafe fn vector<V: Vector>(self, off: usize, v: V) {
        // SAFETY: forwarded contract; after streaming stores the caller fences.
        unsafe {
            if STREAM {
                v.stream(self.0.add(off))
            } else {
                v.store_aligned(self.0.add(off))
            }
        }
    }
    #[inline(always)]
    unsafe fn prefix<V: Vector>(self, off: usize, v: V, n: usize) {
        // SAFETY: forwarded contract.
        unsafe { v.store_prefix(self.0.add(off), n) }
    }
    #[inline(always)]
    unsafe fn scalar<T: Copy>(self, off: usize, v: T) {
        // SAFETY: forwarded contract; unaligned write.
        unsafe { self.0.add(off).cast::<T>().write_unaligned(v) }
    }
    #[inline(always)]
    unsafe fn skip(self, off: usize) -> Self {
        // SAFETY: forwarded contract.
        To(unsafe { self.0.add(off) })
    }
}

/// `sum` plus `part`, where `part` is the sum of a span starting `offset` bytes later: an odd
/// offset swaps the bytes of every word of `part`, which modulo 2^16 - 1 is a rotation by 8.
#[inline(always)]
pub(crate) fn block_add(sum: u64, part: u64, offset: usize) -> u64 {
    add64(
        sum,
        if offset & 1 != 0 {
            part.rotate_left(8)
        } else {
            part
        },
    )
}

/// Folds a 64-bit end-around sum to 16 bits (not complemented): 0 only for an all-zero sum, so
/// every backend returns the same value. Each halving adds the value to itself rotated by half
/// its width: the upper half of that is the halves' sum with the carry out of the lower half
/// added back (Linux's `csum_fold` trick), three instructions per halving.
#[inline(always)]
pub(crate) fn fold16(s: u64) -> u32 {
    let s = (s.wrapping_add(s.rotate_right(32)) >> 32) as u32;
    s.wrapping_add(s.rotate_right(16)) >> 16
}

/// `a + b + carry` and the carry out: a run of these is one `adc` chain (`adcs` on aarch64).
/// On x86_64 through the `_addcarry_u64` intrinsic: compiled with AVX-512 enabled (the AVX-512
/// tables, or a caller built for such a CPU), LLVM's vectorizer turned two portable chains into
/// 512-bit compares and mask-register logic, several times slower. `u64::carrying_add` is newer
/// than the crate's minimum Rust.
#[inline(always)]
fn adc(a: u64, b: u64, carry: bool) -> (u64, bool) {
    #[cfg(target_arch = "x86_64")]
    {
        let mut s = 0;
        // A safe function on recent toolchains, an `unsafe fn` on older ones the crate's
        // minimum Rust may cover: hence the allowed unused `unsafe`.
        #[allow(unused_unsafe)]
        // SAFETY: no preconditions: register arithmetic on the baseline x86_64 `adc`.
        let c = unsafe { core::arch::x86_64::_addcarry_u64(carry as u8, a, b, &mut s) };
        (s, c != 0)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let (s, c1) = a.overflowing_add(b);
        let (s, c2) = s.overflowing_add(carry as u64);
        (s, c1 | c2)
    }
}

/// Adds the `N` words at `off` (handing each to the sink) to `*sum` in one carry chain (an `add`,
/// then `adc` from memory: one instruction a word) and returns the chain's carry out, 0 or 1,
/// which the caller counts. The chain starts with a plain add, so two chains in a row depend on
/// each other only through their own sums, and run side by side.
///
/// # Safety
/// `src + off..src + off + 8 * N` readable; the sink valid there.
#[inline(always)]
unsafe fn chain<const N: usize, D: Sink>(src: *const u8, dst: D, off: usize, sum: &mut u64) -> u64 {
    let (mut s, mut c) = (*sum, false);
    let mut i = 0;
    while i < N {
        // SAFETY: `off + 8 * i + 8 <= off + 8 * N`, inside the span (caller).
        let w = unsafe { src.add(off + 8 * i).cast::<u64>().read_unaligned() };
        // SAFETY: as above, for the sink.
        unsafe { dst.scalar(off + 8 * i, w) };
        (s, c) = adc(s, w, c);
        i += 1;
    }
    *sum = s;
    c as u64
}

/// The end-around sum of an IP header's `LEN` bytes (20: IPv4 without options; 40: IPv6) plus
/// `init`, not folded: one straight carry chain (`add`, then `adc` from memory, the 4-byte
/// remainder of 20 as a zero-padded word), no length ladder. Linux special-cases the same two
/// (`csum_partial`'s 40-byte path, `ip_fast_csum`), the calls a stack makes most; through
/// [`short`]'s ladder and a call these lost to a kernel-style loop, inline like this they beat
/// it (lab/findings/checksums.md, "The IP headers").
///
/// # Safety
/// `src..src + LEN` readable; `LEN` is 20 or 40.
#[inline(always)]
pub(crate) unsafe fn header<const LEN: usize>(src: *const u8, init: u64) -> u64 {
    const { assert!(LEN == 20 || LEN == 40) };
    let mut s = init;
    // SAFETY: `LEN / 8` whole words, then 4 bytes at `LEN - 4` when `LEN % 8 == 4`: every read
    // lies in `0..LEN`.
    unsafe {
        if LEN == 40 {
            let c = chain::<5, Discard>(src, Discard, 0, &mut s);
            return add64(s, c);
        }
        let c = chain::<2, Discard>(src, Discard, 0, &mut s) != 0;
        // The word whose memory image is the last 4 bytes then zeros, on either byte order (an
        // even offset, so its 16-bit words are the data's).
        let t = src.add(16).cast::<u32>().read_unaligned() as u64;
        let t = if cfg!(target_endian = "little") {
            t
        } else {
            t << 32
        };
        let (x, c) = adc(s, t, c);
        add64(x, c as u64)
    }
}

/// Below this many bytes [`short`] sums (and copies) in general-purpose registers, inlined at
/// the caller with no table between: `net::csum_partial`, `net::csum_and_copy` and the cursor
/// steps take it before dispatch. Its two carry chains take 16 bytes a cycle on every CPU in
/// lab/machines; the vector loop pays a fixed cost first (the call, the tail, merging and
/// reducing its accumulators), which 32- and 64-byte registers win back at about 512 bytes on
/// every CPU measured, with either engine (lab/findings/checksums.md has the runs on each side of the
/// cut-over).
pub(crate) const SHORT: usize = 512;
// Below `STREAM_MIN` every mode but flush-cache stores temporally, so a short fused copy is an
// ordinary-store copy in every mode the callers take it for.
const _: () = assert!(SHORT <= STREAM_MIN);

/// `p[..k]`, `1 <= k <= 7`, handed to the sink and returned as the native-endian word whose
/// memory image is those bytes followed by zeros, read and written with two overlapping 4- or
/// 2-byte moves (or one byte) that stay inside `k` bytes.
///
/// # Safety
/// `p..p + k` readable and the sink valid for `k` bytes.
#[inline(always)]
unsafe fn short_tail<D: Sink>(p: *const u8, dst: D, k: usize) -> u64 {
    debug_assert!((1..8).contains(&k));
    // SAFETY: each move is used only when `k` is at least its width, so it lies in `0..k`. The
    // two overlapping reads agree on the bytes they share, so OR-ing them at their positions
    // (little-endian numbering) rebuilds the `k` bytes.
    let le = unsafe {
        if k >= 4 {
            let lo = p.cast::<u32>().read_unaligned();
            let hi = p.add(k - 4).cast::<u32>().read_unaligned();
            dst.scalar(0, lo);
            dst.scalar(k - 4, hi);
            u32::from_le(lo) as u64 | (u32::from_le(hi) as u64) << (8 * (k - 4))
        } else if k >= 2 {
            let lo = p.cast::<u16>().read_unaligned();
            let hi = p.add(k - 2).cast::<u16>().read_unaligned();
            dst.scalar(0, lo);
            dst.scalar(k - 2, hi);
            u16::from_le(lo) as u64 | (u16::from_le(hi) as u64) << (8 * (k - 2))
        } else {
            let b = *p;
            dst.scalar(0, b);
            b as u64
        }
    };
    // The word whose bytes in memory are those, on either byte order.
    u64::from_le(le)
}

/// The end-around sum of `len` bytes (any length; meant for `len < SHORT`) plus `init`, in
/// general-purpose registers, each word handed to the sink from the register it was summed
/// from. Not folded.
///
/// Linux's `csum_partial` (`linux/arch/x86/lib/csum-partial_64.c`) in portable code: words are added in
/// carry chains ([`chain`]: `add`, then `adc` from memory on x86_64, `adds`/`adcs` on aarch64,
/// 32-bit add-with-carry pairs on 32-bit targets), each chain's carry out counted on the side.
/// Two chains: the first 32 bytes of every 64-byte block go to one sum, the last 32 to the
/// other. A chain is one instruction a word where the CPU runs `adc` from memory as one
/// operation (AMD), and the two chains take two words a cycle where two `adc` run in parallel
/// (Intel): the former shape, an `add` and an `adc $0` a word into a 128-bit accumulator (two
/// instructions a word), only tied a kernel-style loop (lab/findings/checksums.md, "The short path's
/// shape").
/// Below 64 bytes the length's bits pick straight-line 32-, 16- and 8-byte steps and the last
/// bytes as one shifted word; a 20-byte IPv4 header is two words and one shifted load, with no
/// loop. No vector register is touched, so the word backend runs it too. A sink that stores
/// (the fused copy) takes [`short_stored`], the former shape, instead.
///
/// # Safety
/// `src..src + len` readable; the sink valid for `len` bytes and not overlapping the source.
#[inline(always)]
pub(crate) unsafe fn short<D: Sink>(src: *const u8, dst: D, len: usize, init: u64) -> u64 {
    if D::STORES {
        // SAFETY: forwarded contract.
        return unsafe { short_stored(src, dst, len, init) };
    }
    let (mut a, mut b) = (init, 0u64);
    // Carries out of the chains: fewer than `len / 8`, so no overflow.
    let (mut ca, mut cb) = (0u64, 0u64);
    let mut off = 0;
    let blocks = len & !63;
    // SAFETY: (whole body) every move is at `off..off + size` with `off + size <= len`: the loop
    // leaves fewer than 64 bytes, and each smaller step runs only when its bit of the remainder
    // is set, so the steps cover the remainder exactly once, in order.
    unsafe {
        while off != blocks {
            ca += chain::<4, D>(src, dst, off, &mut a);
            cb += chain::<4, D>(src, dst, off + 32, &mut b);
            off += 64;
        }
        if len & 32 != 0 {
            ca += chain::<4, D>(src, dst, off, &mut a);
            off += 32;
        }
        if len & 16 != 0 {
            cb += chain::<2, D>(src, dst, off, &mut b);
            off += 16;
        }
        if len & 8 != 0 {
            ca += chain::<1, D>(src, dst, off, &mut a);
        }
        if len & 7 != 0 {
            let (x, c) = b.overflowing_add(last_bytes(src, dst, len));
            b = x;
            cb += c as u64;
        }
    }
    let (s, c) = a.overflowing_add(b);
    // 2^64 is 1 modulo 2^16 - 1: each carry counted adds one.
    add64(s, ca + cb + c as u64)
}

/// The last `len & 7` (nonzero) bytes of a short span as one zero-padded word, handed to the
/// sink. They start at an even offset (a multiple of 8), so the word's 16-bit words are the
/// data's, an odd byte padded with zero. From 8 bytes up they are the top of the last 8 bytes,
/// loaded (and stored) again whole: one load and one shift instead of three branches.
///
/// # Safety
/// As [`short`]; `len & 7 != 0`.
#[inline(always)]
unsafe fn last_bytes<D: Sink>(src: *const u8, dst: D, len: usize) -> u64 {
    let k = len & 7;
    // SAFETY: `len - 8..len` (from 8 bytes up) or `0..k` (below: `k == len`) lies in the span,
    // and the sink is valid there (caller).
    unsafe {
        if len >= 8 {
            let w = src.add(len - 8).cast::<u64>().read_unaligned();
            dst.scalar(len - 8, w);
            if cfg!(target_endian = "little") {
                w >> (8 * (8 - k))
            } else {
                w << (8 * (8 - k))
            }
        } else {
            short_tail(src, dst, k)
        }
    }
}

/// [`short`] for a sink that stores: each word added into a 128-bit accumulator (`add` from the
/// register the word is stored from, `adc $0` into the high half on x86_64; `adds`/`adc` on
/// aarch64), two accumulators over 64-byte blocks, the carries counted in the high halves.
/// With a store per word the carry chains' bookkeeping made the fused copy slower at the
/// shortest lengths (lab/findings/checksums.md), so the copy keeps this shape.
///
/// # Safety
/// As [`short`].
#[inline(always)]
unsafe fn short_stored<D: Sink>(src: *const u8, dst: D, len: usize, init: u64) -> u64 {
    let mut acc = init as u128;
    let mut off = 0;
    // SAFETY: (whole body) every move is at `off..off + size` with `off + size <= len`: the loop
    // leaves fewer than 64 bytes, and each smaller step runs only when its bit of the remainder
    // is set, so the steps cover the remainder exactly once, in order.
    unsafe {
        let word = |off: usize| {
            let w = src.add(off).cast::<u64>().read_unaligned();
            dst.scalar(off, w);
            w as u128
        };
        if len >= 64 {
            let mut b = 0u128;
            while len - off >= 64 {
                acc += word(off);
                b += word(off + 8);
                acc += word(off + 16);
                b += word(off + 24);
                acc += word(off + 32);
                b += word(off + 40);
                acc += word(off + 48);
                b += word(off + 56);
                off += 64;
            }
            // Fewer than 2^58 words: neither high half nears 2^63.
            acc += b;
        }
        if len & 32 != 0 {
            acc += word(off) + word(off + 8) + word(off + 16) + word(off + 24);
            off += 32;
        }
        if len & 16 != 0 {
            acc += word(off) + word(off + 8);
            off += 16;
        }
        if len & 8 != 0 {
            acc += word(off);
        }
        if len & 7 != 0 {
            acc += last_bytes(src, dst, len) as u128;
        }
    }
    // 2^64 is 1 modulo 2^16 - 1: each carry counted in the high half adds one.
    add64(acc as u64, (acc >> 64) as u64)
}

/// The bytes before the first aligned register and after the last one (fewer than a
/// register's worth): one masked register where the backend has masked moves, else
/// [`short`]'s straight-line steps in general-purpose registers (below 64 bytes its loop never
/// runs: a 32-, 16- and 8-byte step as the length's bits say, then the last bytes as one shifted
/// word), in two add-with-carry chains that run beside the vector loop.
///
/// # Safety
/// `src..src + len` readable; the sink valid for `len` bytes.
#[inline(always)]
unsafe fn edge<V: Checksum, D: Sink>(src: *const u8, dst: D, len: usize) -> u64 {
    if len == 0 {
        return 0;
    }
    // SAFETY: (whole body) forwarded contract; the masked register moves only `0..len`.
    unsafe {
        if V::MASKED && len < V::BYTES {
            // Masked-off lanes load as zero: they add nothing.
            let v = V::load_prefix(src, len);
            dst.prefix(0, v, len);
            return V::csum_reduce(V::csum_add(V::csum_zero(), v));
        }
        short(src, dst, len, 0)
    }
}

/// Sums `len` bytes (and hands them to the sink): the unaligned edges, then whole registers.
///
/// # Safety
/// `src..src + len` readable, the sink valid for `len` bytes and not overlapping the source, the
/// backend's features present.
#[inline(always)]
unsafe fn span<V: Checksum, D: Sink>(src: *const u8, dst: D, len: usize) -> u64 {
    let w = V::BYTES;
    if len < w {
        // SAFETY: forwarded contract.
        return unsafe { edge::<V, D>(src, dst, len) };
    }
    let head = dst.addr().unwrap_or(src as usize).wrapping_neg() & (w - 1);
    let body_end = head + ((len - head) & !(w - 1));
    // SAFETY: (whole body) `head <= w <= len` and `body_end <= len`; every register in the loop
    // is at `off..off + w` with `off + w <= body_end`, and `sink + off` is `w`-aligned.
    unsafe {
        let mut sum = edge::<V, D>(src, dst, head);
        let mut off = head;
        while off < body_end {
            let chunk_end = body_end.min(off + CSUM_CHUNK);
            let (mut a, mut b, mut c, mut d) = (
                V::csum_zero(),
                V::csum_zero(),
                V::csum_zero(),
                V::csum_zero(),
            );
            while chunk_end - off >= 4 * w {
                let (va, vb) = (V::load(src.add(off)), V::load(src.add(off + w)));
                let (vc, vd) = (V::load(src.add(off + 2 * w)), V::load(src.add(off + 3 * w)));
                dst.vector(off, va);
                dst.vector(off + w, vb);
                dst.vector(off + 2 * w, vc);
                dst.vector(off + 3 * w, vd);
                a = V::csum_add(a, va);
                b = V::csum_add(b, vb);
                c = V::csum_add(c, vc);
                d = V::csum_add(d, vd);
                off += 4 * w;
            }
            while off < chunk_end {
                let v = V::load(src.add(off));
                dst.vector(off, v);
                a = V::csum_add(a, v);
                off += w;
            }
            // The four accumulators merged in registers (an accumulator's lanes added as data:
            // congruent, and each lane gains less than 2^33, as from one more register), then
            // one reduction to a scalar.
            let acc = V::csum_add(V::csum_add(a, b), V::csum_add(c, d));
            // Registers are summed as words from `head`, which may be odd.
            sum = block_add(sum, V::csum_reduce(acc), head);
        }
        let tail = edge::<V, D>(src.add(body_end), dst.skip(body_end), len - body_end);
        block_add(sum, tail, body_end)
    }
}

/// [`short`] below [`SHORT`] bytes, registers above. Not folded.
///
/// # Safety
/// As [`span`].
#[inline(always)]
unsafe fn whole<V: Checksum, D: Sink>(src: *const u8, dst: D, len: usize) -> u64 {
    // SAFETY: forwarded contract.
    unsafe {
        if len < SHORT {
            short(src, dst, len, 0)
        } else {
            span::<V, D>(src, dst, len)
        }
    }
}

/// Whether a plain sum (no copy) on `V` runs the register loop from [`SHORT`] bytes; if not,
/// [`short`] sums every length. The loop pays a fixed cost (the call through the table, the
/// tail, merging four accumulators and reducing one), which it wins back only where it adds
/// many more bytes per instruction than [`short`]'s two carry chains (two bytes an
/// instruction, 16 bytes a cycle): a 32-byte register adds 32 bytes in four instructions (eight
/// a cycle or more), a 64-byte one 64, NEON's pair 32 in two; a 16-byte SSE2 register adds 16
/// in four, the word backend's `add`/`adc` pairs 8 in two, and both lose to [`short`], as
/// measured (lab/findings/checksums.md) and as port counts say they must (SSE2 on Intel: three vector
/// ports, 12 bytes a cycle against the chains' 14).
const fn sum_in_registers(bytes: usize) -> bool {
    bytes >= 32
}

/// The sum of `len` bytes at `src`, folded to 16 bits: [`short`] below [`SHORT`] bytes, and at
/// every length on registers narrower than 32 bytes ([`sum_in_registers`]); else the register
/// loop, its loads aligned after a head of fewer than `V::BYTES` bytes (unaligned loads from an
/// odd source were slower, lab/findings/checksums.md).
///
/// # Safety
/// `src..src + len` readable; the backend's features present.
#[inline(always)]
pub(crate) unsafe fn sum<V: Checksum>(src: *const u8, len: usize) -> u32 {
    // SAFETY: forwarded contract.
    fold16(unsafe {
        if len < SHORT || !sum_in_registers(V::BYTES) {
            short(src, Discard, len, 0)
        } else {
            span::<V, Discard>(src, Discard, len)
        }
    })
}

/// Copies with ordinary stores and returns the sum, folded to 16 bits.
///
/// # Safety
/// `dst..dst + len` writable and not overlapping `src..src + len`, which is readable; the
/// backend's features present.
#[inline(always)]
pub(crate) unsafe fn temporal<V: Checksum>(dst: *mut u8, src: *const u8, len: usize) -> u32 {
    // SAFETY: forwarded contract.
    fold16(unsafe { whole::<V, Plain>(src, Plain::new(dst), len) })
}

/// Streams the whole destination lines while summing; the partial lines at both ends get
/// ordinary stores. Returns `(sum, head, body_end)`: the streamed bytes are `head..body_end`.
///
/// # Safety
/// As [`temporal`], `len >= 2 * STREAM_LINE`; the caller fences.
#[inline(always)]
unsafe fn stream_span<V: Checksum>(
    dst: *mut u8,
    src: *const u8,
    len: usize,
) -> (u64, usize, usize) {
    let head = (dst as usize).wrapping_neg() & (STREAM_LINE - 1);
    let body_end = head + ((len - head) & !(STREAM_LINE - 1));
    // The partial lines prefetched first and written last, as in the copy kernel's
    // `stream_span`.
    super::prefetch_ends(dst, len);
    // SAFETY: `head < STREAM_LINE <= len`, `body_end <= len`; `dst + head` is line-aligned and
    // `body_end - head` whole lines, so the streamed span has no partial register.
    unsafe {
        let body = span::<V, Stream>(src.add(head), Stream::new(dst.add(head)), body_end - head);
        let s = block_add(span::<V, Plain>(src, Plain::new(dst), head), body, head);
        let tail = span::<V, Plain>(
            src.add(body_end),
            Plain::new(dst.add(body_end)),
            len - body_end,
        );
        (block_add(s, tail, body_end), head, body_end)
    }
}

/// Streams the whole destination lines of one piece while summing (ordinary stores below two
/// lines). No fence.
///
/// # Safety
/// As [`temporal`]; the caller fences (`arch::stream_fence`) before the bytes are published.
#[inline(always)]
pub(crate) unsafe fn stream_unfenced<V: Checksum>(dst: *mut u8, src: *const u8, len: usize) -> u32 {
    // SAFETY: forwarded contract; `stream_span` needs two lines.
    unsafe {
        if len < 2 * STREAM_LINE {
            temporal::<V>(dst, src, len)
        } else {
            fold16(stream_span::<V>(dst, src, len).0)
        }
    }
}

/// Streaming copy and sum, then the store fence.
///
/// # Safety
/// As [`temporal`].
#[inline(always)]
pub(crate) unsafe fn nontemporal<V: Checksum>(dst: *mut u8, src: *const u8, len: usize) -> u32 {
    if len < STREAM_MIN {
        // SAFETY: forwarded contract.
        return unsafe { temporal::<V>(dst, src, len) };
    }
    // SAFETY: forwarded contract; the fence follows every streamed store.
    unsafe {
        let s = stream_unfenced::<V>(dst, src, len);
        arch::stream_fence();
        s
    }
}

/// Copy and sum that leaves every destination byte written back to memory once the caller has
/// run `arch::flush_fence(op)`: the copy kernel's `flush_unfenced` with the sum.
///
/// # Safety
/// As [`temporal`], and `op` supported by this CPU; the caller fences.
#[inline(always)]
pub(crate) unsafe fn flush_unfenced<V: Checksum>(
    dst: *mut u8,
    src: *const u8,
    len: usize,
    op: FlushOp,
) -> u32 {
    // SAFETY: forwarded contract; flushing only names lines holding destination bytes.
    unsafe {
        let s = if len < STREAM_MIN {
            let s = whole::<V, Plain>(src, Plain::new(dst), len);
            arch::flush_range(op, dst, len);
            s
        } else {
            let (s, head, body_end) = stream_span::<V>(dst, src, len);
            if V::STREAM_BYPASSES_CACHE {
                arch::flush_range(op, dst, head);
                arch::flush_range(op, dst.add(body_end), len - body_end);
            } else {
                arch::flush_range(op, dst, len);
            }
            s
        };
        fold16(s)
    }
}

/// [`flush_unfenced`], then the completion fence.
///
/// # Safety
/// As [`temporal`], and `op` supported by this CPU.
#[inline(always)]
pub(crate) unsafe fn flush_cache<V: Checksum>(
    dst: *mut u8,
    src: *const u8,
    len: usize,
    op: FlushOp,
) -> u32 {
    // SAFETY: forwarded contract; the fence follows every store and write-back.
    unsafe {
        let s = flush_unfenced::<V>(dst, src, len, op);
        arch::flush_fence(op);
        s
    }
}
