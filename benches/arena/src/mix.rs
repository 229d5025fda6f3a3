//! Calls of changing size: sequences of copies, fills and moves whose size, alignment and
//! overlap change from one call to the next, as a program's do, for `cachecopy report`'s
//! "Calls of changing size" section and the `mixes` benches.
//!
//! The sizes come from a published distribution or from a uniform class:
//! - [`Sizes::Fleet`]: the distributions of `memcpy`, `memset` and `memmove` calls over Google's
//!   whole server fleet that Fleetbench publishes (`fleetbench/libc/distributions/*_Fleet.csv`,
//!   Apache-2.0, shipped unchanged in `data/fleetbench/` with its notice): sizes, the
//!   probability that a move's ranges overlap, and the alignment of each address. About 64 % of
//!   the copies are 16 B or less, 89 % 64 B or less, and three quarters of the bytes move in
//!   calls of 1 KiB and more (lab/findings/small-calls.md).
//! - [`Sizes::Uniform`]: every size of a class ([`CLASSES`]: 0-64, 65-256, 257-1024 and
//!   1025-4096 B) equally likely; the addresses aligned as the fleet's are.
//!
//! A [`Sequence`] is drawn up front, deterministically from a seed, so that the generator's cost
//! is never in a timed loop and every variant replays the same calls. Each call's addresses are
//! offsets into the caller's buffer of [`Sequence::region`] bytes; they walk its 64-byte blocks
//! in a scattered order that visits every block once before any again (as Fleetbench's
//! least-recently-used blocks do), so a buffer larger than a cache meets each line cold.

use std::fmt;

/// What a call does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Op {
    /// `memcpy`: a source and a destination that never overlap.
    Copy,
    /// `memset`: a destination.
    Fill,
    /// `memmove`: a source and a destination in one buffer, overlapping as often as the fleet's.
    Move,
}

impl Op {
    /// Every operation.
    pub const ALL: [Op; 3] = [Op::Copy, Op::Fill, Op::Move];

    /// `copy`, `fill`, `move`.
    pub fn name(self) -> &'static str {
        match self {
            Op::Copy => "copy",
            Op::Fill => "fill",
            Op::Move => "move",
        }
    }

    /// The C function of the same job: `memcpy`, `memset`, `memmove`.
    pub fn libc(self) -> &'static str {
        match self {
            Op::Copy => "memcpy",
            Op::Fill => "memset",
            Op::Move => "memmove",
        }
    }

    /// The fleet's distribution of this operation's calls.
    pub fn fleet(self) -> &'static Dist {
        use std::sync::OnceLock;
        static DISTS: [OnceLock<Dist>; 3] = [OnceLock::new(), OnceLock::new(), OnceLock::new()];
        let (i, text) = match self {
            Op::Copy => (0, FLEET_MEMCPY),
            Op::Fill => (1, FLEET_MEMSET),
            Op::Move => (2, FLEET_MEMMOVE),
        };
        DISTS[i].get_or_init(|| Dist::parse(text).expect("the shipped distribution parses"))
    }
}

/// Fleetbench's `Memcpy_Fleet.csv` (see the module docs and `data/fleetbench/NOTICE`).
pub const FLEET_MEMCPY: &str = include_str!("../data/fleetbench/Memcpy_Fleet.csv");
/// Fleetbench's `Memset_Fleet.csv`.
pub const FLEET_MEMSET: &str = include_str!("../data/fleetbench/Memset_Fleet.csv");
/// Fleetbench's `Memmove_Fleet.csv`.
pub const FLEET_MEMMOVE: &str = include_str!("../data/fleetbench/Memmove_Fleet.csv");

/// The uniform size classes, in bytes, both ends included.
pub const CLASSES: [(usize, usize); 4] = [(0, 64), (65, 256), (257, 1024), (1025, 4096)];

/// A distribution of calls in Fleetbench's format: sizes, overlap, alignments.
#[derive(Clone, Debug, PartialEq)]
pub struct Dist {
    /// `(size, cumulative probability)`, sizes ascending, the last probability 1.
    sizes: Vec<(usize, f64)>,
    /// The probability that a move's ranges overlap.
    overlap: f64,
    /// `(alignment, cumulative probability)`: an address is a multiple of the alignment.
    align: Vec<(usize, f64)>,
}

impl Dist {
    /// Parses Fleetbench's three lines of `value:probability` pairs: sizes, overlap (0 or 1),
    /// alignments (powers of two up to 64). The probabilities are normalised (they are rounded
    /// in the files).
    pub fn parse(text: &str) -> Result<Dist, String> {
        let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
        let mut pairs = |what: &str| -> Result<Vec<(usize, f64)>, String> {
            let line = lines.next().ok_or(format!("no {what} line"))?;
            let mut v = Vec::new();
            for item in line.split(',') {
                let (x, p) = item
                    .split_once(':')
                    .ok_or(format!("{what}: {item:?} is not value:probability"))?;
                let x: usize = x.trim().parse().map_err(|_| format!("{what}: {x:?}"))?;
                let p: f64 = p.trim().parse().map_err(|_| format!("{what}: {p:?}"))?;
                if !(p >= 0.0 && p.is_finite()) {
                    return Err(format!("{what}: probability {p}"));
                }
                v.push((x, p));
            }
            Ok(v)
        };
        let sizes = cumulative(pairs("size")?)?;
        let overlap_pairs = pairs("overlap")?;
        let total: f64 = overlap_pairs.iter().map(|p| p.1).sum();
        let overlap = overlap_pairs
            .iter()
            .filter(|p| p.0 == 1)
            .map(|p| p.1)
            .sum::<f64>()
            / total.max(f64::MIN_POSITIVE);
        let align = cumulative(pairs("alignment")?)?;
        if align.iter().any(|&(a, _)| !a.is_power_of_two() || a > 64) {
            return Err("alignment: expected powers of two up to 64".into());
        }
        Ok(Dist {
            sizes,
            overlap,
            align,
        })
    }

    /// The size at cumulative probability `u` (0 to 1).
    fn size_at(&self, u: f64) -> usize {
        pick(&self.sizes, u)
    }

    /// The alignment at cumulative probability `u`.
    fn align_at(&self, u: f64) -> usize {
        pick(&self.align, u)
    }

    /// The probability that a move's ranges overlap.
    pub fn overlap(&self) -> f64 {
        self.overlap
    }

    /// The mean size, in bytes.
    pub fn mean(&self) -> f64 {
        let mut prev = 0.0;
        let mut m = 0.0;
        for &(s, c) in &self.sizes {
            m += s as f64 * (c - prev);
            prev = c;
        }
        m
    }

    /// The share of calls of at most `n` bytes.
    pub fn calls_up_to(&self, n: usize) -> f64 {
        self.sizes
            .iter()
            .take_while(|&&(s, _)| s <= n)
            .last()
            .map_or(0.0, |p| p.1)
    }

    /// The share of all bytes moved by calls of at least `n` bytes.
    pub fn bytes_from(&self, n: usize) -> f64 {
        let mut prev = 0.0;
        let mut part = 0.0;
        for &(s, c) in &self.sizes {
            if s >= n {
                part += s as f64 * (c - prev);
            }
            prev = c;
        }
        part / self.mean().max(f64::MIN_POSITIVE)
    }

    /// The largest size.
    pub fn max(&self) -> usize {
        self.sizes.last().map_or(0, |p| p.0)
    }
}

/// Sorts by value and turns probabilities into cumulative ones ending at 1.
fn cumulative(mut v: Vec<(usize, f64)>) -> Result<Vec<(usize, f64)>, String> {
    v.sort_by_key(|p| p.0);
    let total: f64 = v.iter().map(|p| p.1).sum();
    if total <= 0.0 {
        return Err("probabilities sum to zero".into());
    }
    let mut c = 0.0;
    for p in &mut v {
        c += p.1 / total;
        p.1 = c;
    }
    if let Some(last) = v.last_mut() {
        last.1 = 1.0;
    }
    Ok(v)
}

/// The first value whose cumulative probability reaches `u`.
fn pick(cum: &[(usize, f64)], u: f64) -> usize {
    let i = cum.partition_point(|p| p.1 < u);
    cum[i.min(cum.len() - 1)].0
}

/// Where a sequence's sizes come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Sizes {
    /// The fleet's distribution of the operation ([`Op::fleet`]).
    Fleet,
    /// Every size from `.0` to `.1` bytes (both included) equally likely.
    Uniform(usize, usize),
}

impl Sizes {
    /// The fleet, then every class of [`CLASSES`].
    pub fn all() -> Vec<Sizes> {
        let mut v = vec![Sizes::Fleet];
        v.extend(CLASSES.map(|(lo, hi)| Sizes::Uniform(lo, hi)));
        v
    }
}

impl fmt::Display for Sizes {
    /// `fleet`, `0-64 B`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Sizes::Fleet => f.write_str("fleet"),
            Sizes::Uniform(lo, hi) => write!(f, "{lo}-{hi} B"),
        }
    }
}

/// One call: offsets into the variant's buffer and a length. A fill has no source (`src` is 0).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C)]
pub struct Call {
    /// The destination's offset.
    pub dst: u32,
    /// The source's offset.
    pub src: u32,
    /// Bytes.
    pub len: u32,
}

/// A sequence of calls into a buffer of `region` bytes.
#[derive(Clone, Debug)]
pub struct Sequence {
    /// The calls, in order.
    pub calls: Vec<Call>,
    /// The buffer the offsets point into: every call stays inside `0..region`.
    pub region: usize,
    /// The largest size a call may have in this region (larger draws are cut to it).
    pub max_len: usize,
}

impl Sequence {
    /// `n` calls of `op` with sizes from `sizes` into a buffer of `region` bytes (at least
    /// 1 KiB, below 4 GiB), drawn from `seed`. A copy's destinations lie in the buffer's first
    /// half and its sources in the second; a fill's destinations anywhere; a move's source and
    /// destination anywhere, overlapping with the fleet's probability (the destination then
    /// within a length either side of the source, as Fleetbench draws it). Sizes are cut at a
    /// quarter of the buffer for copies, half for fills and a third less a line for moves (as
    /// Fleetbench cuts them to its buffers).
    pub fn new(op: Op, sizes: Sizes, region: usize, n: usize, seed: u64) -> Sequence {
        assert!(
            (1024..(1 << 32)).contains(&region),
            "a region of 1 KiB to 4 GiB"
        );
        let dist = op.fleet();
        let half = region / 2;
        let max_len = match op {
            Op::Copy => half / 2,
            Op::Fill => region / 2,
            Op::Move => region / 3 - 64,
        };
        let mut rng = Rng(seed ^ 0x6d69_7865_735f_7631);
        let part = if op == Op::Copy { half } else { region };
        let mut dsts = Walk::new(part, rng.next());
        let mut srcs = Walk::new(part, rng.next());
        let src_base = if op == Op::Copy { half } else { 0 };
        let mut calls = Vec::with_capacity(n);
        for _ in 0..n {
            let len = match sizes {
                Sizes::Fleet => dist.size_at(rng.unit()),
                Sizes::Uniform(lo, hi) => lo + (rng.next() % (hi - lo + 1) as u64) as usize,
            }
            .min(max_len);
            let dst_align = dist.align_at(rng.unit());
            let src_align = dist.align_at(rng.unit());
            let (dst, src) = match op {
                Op::Copy => (
                    dsts.place(len, dst_align, &mut rng),
                    src_base + srcs.place(len, src_align, &mut rng),
                ),
                Op::Fill => (dsts.place(len, dst_align, &mut rng), 0),
                Op::Move if rng.unit() < dist.overlap() && len > 0 => {
                    // The destination within a length of the source, either side (not equal
                    // to it: a move onto itself is no move).
                    let delta = (rng.next() % (2 * len as u64 - 1)) as isize - (len as isize - 1);
                    let delta = if delta == 0 { 1 } else { delta };
                    let lo = delta.unsigned_abs();
                    let s = srcs.place(len + lo, src_align, &mut rng);
                    let (s, d) = if delta > 0 { (s, s + lo) } else { (s + lo, s) };
                    (d, s)
                }
                Op::Move => {
                    let s = srcs.place(len, src_align, &mut rng);
                    let mut d = dsts.place(len, dst_align, &mut rng);
                    // Ranges apart: a later block of the walk (each try moves on).
                    while d < s + len && s < d + len {
                        d = dsts.place(len, dst_align, &mut rng);
                    }
                    (d, s)
                }
            };
            calls.push(Call {
                dst: dst as u32,
                src: src as u32,
                len: len as u32,
            });
        }
        Sequence {
            calls,
            region,
            max_len,
        }
    }

    /// The mean length of the calls.
    pub fn mean_len(&self) -> f64 {
        let total: u64 = self.calls.iter().map(|c| u64::from(c.len)).sum();
        total as f64 / self.calls.len().max(1) as f64
    }
}

/// Replays `calls` in the buffer at `base`: `f(dst, src, len)` with each call's addresses, in
/// order. Every variant a measurement compares (cachecopy's, glibc's, LibMem's) runs in this
/// loop, so that each pays the same harness work per call: the loads of the call's offsets and
/// length (the source's only where `f` reads it) and two additions to `base`, held in a
/// register. What `f` captures, it holds by value: a function pointer or a byte stays in a
/// register too, unless `f` reads it through [`per_call`]. Not inlined: each `f` makes a
/// function of its own, so a variant's loop starts at a function boundary and does not move
/// when another variant's code changes (lab/findings/small-calls.md, "Calls of changing size").
#[inline(never)]
pub fn replay<F: FnMut(*mut u8, *const u8, usize)>(base: *mut u8, calls: &[Call], mut f: F) {
    for c in calls {
        f(
            base.wrapping_add(c.dst as usize),
            base.wrapping_add(c.src as usize).cast_const(),
            c.len as usize,
        );
    }
}

/// `*slot`, loaded from memory at every use (a volatile read the compiler can neither fold nor
/// hoist): a value a caller reads per call, as a per-socket policy's mode, at the price of one
/// load and nothing else.
#[inline(always)]
pub fn per_call<T: Copy>(slot: &T) -> T {
    // SAFETY: `slot` is a valid, aligned reference to an initialised `T`.
    unsafe { std::ptr::read_volatile(slot) }
}

/// The 64-byte blocks of a part of a buffer, in a scattered order that visits each once per
/// lap: block `(k * odd) mod 2^m`, skipping those past the part's end.
struct Walk {
    len: usize,
    blocks: u64,
    mask: u64,
    k: u64,
}

/// Multiplying by an odd constant permutes `0..2^m`; this one (2^64 / the golden ratio) puts
/// consecutive blocks far apart.
const SCATTER: u64 = 0x9e37_79b9_7f4a_7c15;

impl Walk {
    fn new(len: usize, start: u64) -> Walk {
        let blocks = (len / 64).max(1) as u64;
        Walk {
            len,
            blocks,
            mask: blocks.next_power_of_two() - 1,
            k: start,
        }
    }

    /// The next block's offset, plus a random offset into it that is a multiple of `align`;
    /// moved back (keeping that alignment) where `len` bytes from it would pass the end.
    fn place(&mut self, len: usize, align: usize, rng: &mut Rng) -> usize {
        let block = loop {
            let b = self.k.wrapping_mul(SCATTER) & self.mask;
            self.k = self.k.wrapping_add(1);
            if b < self.blocks {
                break b as usize;
            }
        };
        let into = (rng.next() % 64) as usize & !(align - 1);
        let at = block * 64 + into;
        if at + len <= self.len {
            at
        } else {
            (self.len - len - into) / 64 * 64 + into
        }
    }
}

/// SplitMix64: small, fast, deterministic.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `[0, 1)`.
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fleet_distributions_are_the_published_ones() {
        let copy = Op::Copy.fleet();
        // The shares the automemcpy paper and Fleetbench describe.
        assert!((0.62..0.66).contains(&copy.calls_up_to(16)), "{copy:?}");
        assert!((0.87..0.90).contains(&copy.calls_up_to(64)));
        assert!((0.70..0.76).contains(&copy.bytes_from(1024)));
        assert!((130.0..140.0).contains(&copy.mean()));
        assert_eq!(copy.max(), 261_126);
        assert!(copy.overlap() < 1e-3);
        assert_eq!(Op::Fill.fleet().overlap(), 0.0);
        assert!((0.008..0.009).contains(&Op::Move.fleet().overlap()));
        for op in Op::ALL {
            let d = op.fleet();
            assert_eq!(d.sizes.last().unwrap().1, 1.0);
            assert_eq!(d.align.last().unwrap().0, 64);
        }
    }

    #[test]
    fn parse_refuses_what_is_not_a_distribution() {
        assert!(Dist::parse("").is_err());
        assert!(Dist::parse("1:0.5,2:0.5\n0:1\n").is_err());
        assert!(Dist::parse("1:x\n0:1\n1:1").is_err());
        assert!(Dist::parse("1:1\n0:1\n3:1").is_err());
        let d = Dist::parse("8:1,16:3\n0:0.5,1:0.5\n1:1,64:1").unwrap();
        assert_eq!((d.size_at(0.2), d.size_at(0.3)), (8, 16));
        assert_eq!(d.overlap(), 0.5);
        assert_eq!(d.mean(), 14.0);
    }

    /// Every call inside its buffer, copies apart and in their halves, moves overlapping at
    /// about the fleet's rate, uniform sizes inside their class; the same seed, the same calls.
    #[test]
    fn sequences_stay_in_their_buffers() {
        for op in Op::ALL {
            for sizes in Sizes::all() {
                for region in [4096, 1 << 20] {
                    let s = Sequence::new(op, sizes, region, 20_000, 7);
                    assert_eq!(s.calls, Sequence::new(op, sizes, region, 20_000, 7).calls);
                    let mut overlapping = 0;
                    for c in &s.calls {
                        let (d, src, n) = (c.dst as usize, c.src as usize, c.len as usize);
                        assert!(n <= s.max_len);
                        assert!(d + n <= region, "{op:?} {sizes} {c:?}");
                        match op {
                            Op::Copy => {
                                assert!(d + n <= region / 2 && src >= region / 2);
                                assert!(src + n <= region);
                            }
                            Op::Fill => assert_eq!(src, 0),
                            Op::Move => {
                                assert!(src + n <= region);
                                if d < src + n && src < d + n {
                                    overlapping += 1;
                                    assert_ne!(d, src);
                                }
                            }
                        }
                        if let Sizes::Uniform(lo, hi) = sizes {
                            assert!(n >= lo.min(s.max_len) && n <= hi, "{sizes} {n}");
                        }
                    }
                    if op == Op::Move && region == 1 << 20 && sizes != Sizes::Uniform(0, 64) {
                        let rate = overlapping as f64 / s.calls.len() as f64;
                        assert!((0.004..0.014).contains(&rate), "{sizes}: {rate}");
                    }
                }
            }
        }
    }

    #[test]
    fn sizes_and_offsets_change_every_call() {
        let s = Sequence::new(Op::Copy, Sizes::Fleet, 1 << 20, 10_000, 1);
        let mean = s.mean_len();
        assert!((60.0..250.0).contains(&mean), "{mean}");
        let repeats = s.calls.windows(2).filter(|w| w[0].len == w[1].len).count();
        assert!(repeats < 1500, "{repeats} of 10000 repeat the size before");
        // Not only line-aligned: the fleet's alignments.
        let aligned = s.calls.iter().filter(|c| c.dst % 64 == 0).count();
        assert!((1000..5000).contains(&aligned), "{aligned}");
        // The walk visits distinct blocks before coming back.
        let mut blocks: Vec<u32> = s.calls[..4000].iter().map(|c| c.dst / 64).collect();
        blocks.sort_unstable();
        blocks.dedup();
        assert!(blocks.len() > 3900, "{}", blocks.len());
        let u = Sequence::new(Op::Fill, Sizes::Uniform(0, 64), 1 << 20, 10_000, 1);
        for n in 0..=64u32 {
            assert!(u.calls.iter().any(|c| c.len == n), "{n} never drawn");
        }
    }

    /// `replay` hands every call's addresses and length to `f`, in order, and nothing else;
    /// `per_call` reads the value it is given.
    #[test]
    fn replay_passes_each_call_in_order() {
        let seq = Sequence::new(Op::Move, Sizes::Fleet, 4096, 300, 9);
        let mut buf = vec![0u8; 4096];
        let base = buf.as_mut_ptr();
        let mut seen = Vec::new();
        replay(base, &seq.calls, |d, s, n| {
            seen.push((d as usize - base as usize, s as usize - base as usize, n));
        });
        let want: Vec<(usize, usize, usize)> = seq
            .calls
            .iter()
            .map(|c| (c.dst as usize, c.src as usize, c.len as usize))
            .collect();
        assert_eq!(seen, want);
        assert_eq!(per_call(&0x5au8), 0x5a);
        assert_eq!(per_call(&Sizes::Uniform(1, 2)), Sizes::Uniform(1, 2));
    }
}
