//! Destinations for copy and fill measurements, shared by `cachecopy report` and the benches.
//!
//! A *hot* destination is the same bytes every time, so it is cached whenever it fits. A *cold*
//! destination is a different slot of a large [`Arena`] every time, visited in a scattered order,
//! so it is neither cached nor already fetched by a prefetcher. The report and the benches use
//! this one crate so that "cold" means the same in both and their figures can be compared.
//!
//! Beside the arenas it holds the references measurements print next to cachecopy, so the
//! report and the benches compare against the same thing: transmit frames with glibc's
//! `memcpy` and the streaming limit ([`frame`]), and a kernel-style scalar checksum loop
//! ([`csum`]), the sequences of calls of changing size that replay the fleet's published size
//! distributions ([`mix`]), and a peer library loaded at run time (AOCL-LibMem, [`peer`]). On Linux, [`map`] makes mappings on the page size a probe chooses (4 KiB or
//! transparent huge pages), for measurements of cold lines with and without TLB misses.
//!
//! The crate uses std (and libc for [`map`]) and does not depend on `cachecopy`: the ground a
//! measurement stands on must not depend on the code it measures. The caller passes the last-level cache size in.
//!
//! # Sizing rule
//!
//! [`cold_footprint`]: an arena spans **4 x the last-level cache, clamped to
//! [`COLD_FLOOR`] (192 MiB) .. [`COLD_CAP`] (512 MiB), and at least 2 x the largest
//! destination**.
//!
//! - 4 x the cache: between two visits to one slot the walk writes four cache-fulls of other
//!   lines, which evicts the slot under LRU and its approximations, and all but about 2 %
//!   (e^-4) of its lines under random replacement.
//! - At least 192 MiB: the cache size may be unknown, or understated (a virtual machine that
//!   hides part of the topology, a system-level or L4 cache the CPU does not report). 192 MiB
//!   is beyond the last-level cache of most parts, so a slot stays cold even then.
//! - At most 512 MiB: the last-level cache a virtual machine reports can be its host socket's
//!   whole L3 (hundreds of MiB, shared with other tenants). Four times that is over 1 GiB,
//!   pre-faulted for every arena: about a second of page faults on a small shared machine (two
//!   cores), and memory the rest of it needs. The price: with a last-level cache above 128 MiB
//!   a slot comes back after less than 4 x the cache (2 x at 256 MiB, where under random
//!   replacement about e^-2 ≈ 14 % of its lines could survive and flatter a cold figure
//!   slightly). A caller that needs more passes its own length to [`Arena::with_len`].
//! - At least 2 x the largest destination, whatever the cap: at least two slots, so a cold
//!   destination is never the one just written.
//!
//! Every page of an arena is written when it is made, so a cold destination is "not cached",
//! never "not mapped": no timed run takes a page fault.

pub mod csum;
pub mod frame;
#[cfg(target_os = "linux")]
pub mod map;
pub mod mix;
pub mod peer;

use std::hint::black_box;

/// The page size buffers are aligned to and pre-faulted by (4 KiB: the smallest of the targets).
pub const PAGE: usize = 4096;

/// Cold slots start on multiples of this: 128 bytes, the largest cache line among the targets
/// (Apple's), and the pair x86's spatial prefetcher completes, so writing one slot never pulls in
/// a line of another.
pub const SLOT_ALIGN: usize = 128;

/// The smallest cold arena [`cold_footprint`] gives: 192 MiB (see the crate docs).
pub const COLD_FLOOR: usize = 192 << 20;

/// The largest cold arena [`cold_footprint`] derives from the cache size: 512 MiB (see the crate
/// docs); only a destination larger than half of it makes an arena larger.
pub const COLD_CAP: usize = 512 << 20;

/// Multiplying by this odd constant permutes `0..2^k` for every `k` (2^64 / the golden ratio):
/// consecutive cold visits land far apart.
const SCATTER: u64 = 0x9e37_79b9_7f4a_7c15;

/// The sizing rule: bytes an arena needs for cold destinations of up to `largest` bytes, given
/// the last-level cache size `llc` (`None` when unknown). `clamp(4 x llc, COLD_FLOOR, COLD_CAP)`,
/// at least `2 x largest`; the crate docs say why.
pub fn cold_footprint(llc: Option<usize>, largest: usize) -> usize {
    let by_cache = llc.map_or(COLD_FLOOR, |c| c.saturating_mul(4));
    by_cache
        .clamp(COLD_FLOOR, COLD_CAP)
        .max(largest.saturating_mul(2))
}

/// `x`, opaque to the optimiser as [`black_box`] makes it, but kept in a register: `black_box`
/// passes its value through a stack slot, and in a loop of small calls that reload can wait on
/// a store the call just made to a destination byte that matches the slot's address in its low
/// 12 bits (4K aliasing), which moves with where the stack lands. The report's small calls,
/// the benches and the probes use this one; lab/findings/small-calls.md ("The way into the table, the
/// aligned loop, and a steadier harness") has what it changed.
#[inline(always)]
pub fn opaque(mut x: usize) -> usize {
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    // SAFETY: an empty instruction sequence that only claims to change a register.
    unsafe {
        std::arch::asm!("/* {0} */", inout(reg) x, options(nomem, nostack, preserves_flags));
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        x = black_box(x);
    }
    x
}

/// Where a destination lives when an operation starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Dest {
    /// The same bytes every time (the start of the arena): cached whenever they fit and the
    /// operation leaves them cached.
    Hot,
    /// A different slot of the arena every time, in a scattered order: not cached.
    Cold,
}

impl Dest {
    /// Both, hot first (the order tables print them in).
    pub const ALL: [Dest; 2] = [Dest::Hot, Dest::Cold];

    /// `"hot"` or `"cold"`.
    pub fn name(self) -> &'static str {
        match self {
            Dest::Hot => "hot",
            Dest::Cold => "cold",
        }
    }
}

/// A page-aligned, pre-faulted byte buffer: the backing of an [`Arena`], and what sources and
/// other working sets are made of, so that no timed run takes a page fault.
pub struct Buf {
    v: Vec<u8>,
    off: usize,
    len: usize,
}

impl Buf {
    /// `len` bytes of `byte`, starting on a page boundary, every page already written.
    pub fn new(len: usize, byte: u8) -> Buf {
        let mut v = vec![byte; len + PAGE];
        // `vec![0; n]` may come from calloc's untouched zero pages: write every page now.
        // `black_box` keeps the compiler from proving the store redundant.
        for page in v.chunks_mut(PAGE) {
            page[0] = black_box(byte);
        }
        let off = v.as_ptr().align_offset(PAGE);
        Buf { v, off, len }
    }

    /// The length in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the buffer has no bytes.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The bytes.
    pub fn as_slice(&self) -> &[u8] {
        &self.v[self.off..self.off + self.len]
    }

    /// The bytes, writable.
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        &mut self.v[self.off..self.off + self.len]
    }
}

/// Destinations: the start of the buffer for hot runs, a scattered walk over every slot for
/// cold ones. One arena serves every size: the slot layout follows the size asked for.
pub struct Arena {
    buf: Buf,
    /// Cold visits so far; drives the walk.
    cursor: u64,
    /// The cold layout of the last size asked for, kept so that a timed loop asking for the
    /// same size again pays no division: (size, slot stride, slot count - 1).
    layout: (usize, usize, u64),
}

impl Arena {
    /// An arena by the sizing rule ([`cold_footprint`]): hot and cold destinations of up to
    /// `largest` bytes, `llc` the last-level cache size (`None` when unknown).
    pub fn new(llc: Option<usize>, largest: usize) -> Arena {
        Arena::with_len(cold_footprint(llc, largest))
    }

    /// An arena of exactly `len` bytes, whatever the caches: for hot destinations alone, and for
    /// tests and smoke runs that need every code path but no cold figure worth the name.
    pub fn with_len(len: usize) -> Arena {
        Arena {
            buf: Buf::new(len, 0x11),
            cursor: 0,
            layout: (usize::MAX, 0, 0),
        }
    }

    /// The arena's length in bytes.
    pub fn len(&self) -> usize {
        self.buf.len()
    }

    /// Whether the arena has no bytes.
    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }

    /// The hot destination of `size` bytes: the arena's first `size` bytes, every time.
    ///
    /// # Panics
    /// If `size` exceeds [`len`](Self::len).
    pub fn hot(&mut self, size: usize) -> &mut [u8] {
        &mut self.buf.as_mut_slice()[..size]
    }

    /// The next cold destination of `size` bytes. The arena is cut into the largest power of
    /// two of slots of `size` bytes rounded up to [`SLOT_ALIGN`]; successive calls visit slot
    /// `k x SCATTER mod slots`, a permutation that revisits a slot only after every other and
    /// puts consecutive visits far apart, so no prefetcher follows the walk.
    ///
    /// # Panics
    /// If `size` exceeds [`len`](Self::len).
    pub fn cold(&mut self, size: usize) -> &mut [u8] {
        if self.layout.0 != size {
            let stride = size.next_multiple_of(SLOT_ALIGN).max(SLOT_ALIGN);
            let slots = (self.len() / stride).max(1) as u64;
            // The largest power of two ≤ slots: an odd multiplier permutes it.
            let slots = 1u64 << (63 - slots.leading_zeros());
            self.layout = (size, stride, slots - 1);
        }
        let (_, stride, mask) = self.layout;
        self.cursor = self.cursor.wrapping_add(1);
        let at = (self.cursor.wrapping_mul(SCATTER) & mask) as usize * stride;
        &mut self.buf.as_mut_slice()[at..at + size]
    }

    /// [`hot`](Self::hot) or [`cold`](Self::cold), by `dest`.
    ///
    /// # Panics
    /// If `size` exceeds [`len`](Self::len).
    #[inline]
    pub fn dest(&mut self, dest: Dest, size: usize) -> &mut [u8] {
        match dest {
            Dest::Hot => self.hot(size),
            Dest::Cold => self.cold(size),
        }
    }
}

/// Times `f` once per destination of `dsts`; ns per call. Not inlined: each caller's closure
/// makes a function of its own, so the loop a variant is timed in starts at a function boundary
/// and does not move when another variant's code changes (inlined into one function, the
/// report's figures moved from build to build with the copy's own code unchanged:
/// lab/report/README.md). The report's small calls and the probes time their fixed-size calls
/// with it.
#[inline(never)]
pub fn each_dest(dsts: &[*mut u8], mut f: impl FnMut(*mut u8)) -> f64 {
    let t = std::time::Instant::now();
    for &d in dsts {
        f(d);
        opaque(d as usize);
    }
    t.elapsed().as_nanos() as f64 / dsts.len().max(1) as f64
}

/// The order in which round `round` runs `n` interleaved variants (`n > 0`): `0..n` rotated by
/// the round and reversed on odd rounds, so no variant always runs first or always after the
/// same neighbour.
pub fn rotated_order(n: usize, round: usize) -> Vec<usize> {
    let mut order: Vec<usize> = (0..n).collect();
    order.rotate_left(round % n);
    if round % 2 == 1 {
        order.reverse();
    }
    order
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn rotated_orders_turn_and_reverse() {
        assert_eq!(rotated_order(4, 0), [0, 1, 2, 3]);
        assert_eq!(rotated_order(4, 1), [0, 3, 2, 1]);
        assert_eq!(rotated_order(4, 2), [2, 3, 0, 1]);
        assert_eq!(rotated_order(4, 5), [0, 3, 2, 1]);
        assert_eq!(rotated_order(1, 7), [0]);
    }

    const MIB: usize = 1 << 20;

    /// Offset of `d` from the arena's start.
    fn offset(a: &mut Arena, d: *const u8) -> usize {
        d as usize - a.hot(0).as_ptr() as usize
    }

    #[test]
    fn hot_is_the_same_slot_every_time() {
        let mut a = Arena::with_len(MIB);
        let first = a.hot(4096).as_ptr();
        a.cold(4096);
        for size in [1, 4096, MIB] {
            let d = a.dest(Dest::Hot, size);
            assert_eq!((d.as_ptr(), d.len()), (first, size));
        }
        assert_eq!(first as usize % PAGE, 0, "page aligned");
    }

    #[test]
    fn cold_slots_are_distinct_in_bounds_and_aligned() {
        for (len, size) in [(MIB, 4096usize), (MIB, 1000), (MIB + 77, 64), (3 * MIB, 1)] {
            let mut a = Arena::with_len(len);
            let stride = size.next_multiple_of(SLOT_ALIGN);
            let slots = (len / stride).next_power_of_two();
            let slots = if slots > len / stride {
                slots / 2
            } else {
                slots
            };
            let mut seen = HashSet::new();
            for _ in 0..slots {
                let d = a.cold(size);
                assert_eq!(d.len(), size);
                let p = d.as_ptr();
                let at = offset(&mut a, p);
                assert_eq!(at % SLOT_ALIGN, 0, "{len}/{size}: slot at {at}");
                assert!(at + size <= len, "{len}/{size}: slot at {at} overruns");
                assert!(seen.insert(at), "{len}/{size}: slot at {at} twice");
            }
            // Every slot once per period, then the walk starts over.
            assert_eq!(seen.len(), slots);
            let p = a.cold(size).as_ptr();
            assert!(seen.contains(&offset(&mut a, p)));
        }
    }

    #[test]
    fn consecutive_cold_slots_lie_pages_apart() {
        let mut a = Arena::with_len(4 * MIB);
        let p = a.cold(64).as_ptr();
        let mut prev = offset(&mut a, p);
        for _ in 0..1000 {
            let p = a.cold(64).as_ptr();
            let at = offset(&mut a, p);
            assert!(at.abs_diff(prev) >= PAGE, "{prev} then {at}");
            prev = at;
        }
    }

    #[test]
    fn sizes_are_respected_when_they_change() {
        let mut a = Arena::with_len(MIB);
        assert_eq!(a.len(), MIB);
        for size in [64, 4096, 100, MIB, 0, 4096] {
            assert_eq!(a.cold(size).len(), size);
            assert_eq!(a.hot(size).len(), size);
        }
        // A destination as large as the arena is the whole arena.
        let p = a.cold(MIB).as_ptr();
        assert_eq!(offset(&mut a, p), 0);
    }

    #[test]
    #[should_panic]
    fn a_destination_larger_than_the_arena_panics() {
        Arena::with_len(4096).cold(4097);
    }

    #[test]
    fn footprint_follows_the_rule() {
        assert_eq!(cold_footprint(None, 64), COLD_FLOOR);
        assert_eq!(cold_footprint(Some(32 * MIB), 64), COLD_FLOOR);
        assert_eq!(cold_footprint(Some(100 * MIB), 64), 400 * MIB);
        // A VM reporting its host's L3 is capped...
        assert_eq!(cold_footprint(Some(260 * MIB), 64), COLD_CAP);
        assert_eq!(cold_footprint(Some(usize::MAX), 64), COLD_CAP);
        // ...but two slots of the largest destination always fit.
        assert_eq!(cold_footprint(Some(32 * MIB), 256 * MIB), 512 * MIB);
        assert_eq!(cold_footprint(None, 300 * MIB), 600 * MIB);
    }

    #[test]
    fn buffers_are_aligned_and_filled() {
        for byte in [0, 0xa5] {
            let mut b = Buf::new(10_000, byte);
            assert_eq!((b.len(), b.is_empty()), (10_000, false));
            assert_eq!(b.as_slice().as_ptr() as usize % PAGE, 0);
            assert!(b.as_slice().iter().all(|&x| x == byte));
            b.as_mut_slice()[9_999] = 1;
            assert_eq!(b.as_slice()[9_999], 1);
        }
        assert!(Buf::new(0, 1).is_empty());
    }
}
